//! # actorium
//!
//! An actor runtime for running millions of actors, and the fork/join tasks they spawn, on
//! one machine.
//!
//! An actor is a struct that implements [`Actor`] and, for each message type it accepts,
//! [`Receive`]. You spawn it on an [`ActorSystem`] and get an [`Addr`]: a send is typed,
//! moves the message (inside the envelope, with no allocation per send, when it is at most
//! 32 bytes and aligned to at most 8), and gives the message back if the actor has
//! stopped. A behaviour returns an [`Allocation`]: keep going, or end the actor.
//!
//! ```
//! use actorium::{Actor, ActorSystem, Allocation, Ask, Context, Receive};
//!
//! struct Counter(u64);
//! impl Actor for Counter {}
//!
//! impl Receive<u64> for Counter {
//!     fn receive(&mut self, n: u64, _: &mut Context<'_, Self>) -> Allocation {
//!         self.0 += n;
//!         Allocation::Nodelete // keep receiving
//!     }
//! }
//!
//! // A request: the question and the reply's type.
//! struct Total;
//! impl Receive<Ask<Total, u64>> for Counter {
//!     fn receive(&mut self, q: Ask<Total, u64>, _: &mut Context<'_, Self>) -> Allocation {
//!         q.reply.send(self.0).ok();
//!         Allocation::Nodelete
//!     }
//! }
//!
//! let system = ActorSystem::new().unwrap();
//! let counter = system.spawn(Counter(0));
//! counter.send(2).unwrap();
//! counter.send(3).unwrap();
//! assert_eq!(counter.ask(Total).unwrap().wait(), Ok(5)); // `.await` in async code
//! system.shutdown(); // every actor ends after the mail queued for it
//! ```
//!
//! ## Where things are
//!
//! | you have | you can |
//! |---|---|
//! | [`ActorSystem`] (one per program, or several) | spawn, fork/join from any thread, timers, resize, then [`shutdown`](ActorSystem::shutdown), [`shutdown_timeout`](ActorSystem::shutdown_timeout), [`stop`](ActorSystem::stop) or drop |
//! | [`SystemHandle`] (cheap to clone, for threads and tasks) | what the system does while it runs, and start a graceful shutdown ([`request_shutdown`](SystemHandle::request_shutdown)), but not wait for its end |
//! | [`Context`] (inside a behaviour) | the actor's own address, spawn children, [`ask`](Context::ask) with a continuation, [`when_room`](Context::when_room), [`monitor`](Context::monitor), [`link`](Context::link), [`join`](Context::join) / [`scope`](Context::scope), [`stop`](Context::stop) |
//! | [`Addr`] / [`Recipient`] / [`WeakAddr`] | [`send`](Addr::send), [`ask`](Addr::ask), [`call`](Addr::call), [`monitor`](Addr::monitor), [`respawn`](Addr::respawn); to a bounded actor ([`spawn_bounded`](ActorSystem::spawn_bounded)) [`try_send`](Addr::try_send), [`send_wait`](Addr::send_wait), [`send_async`](Addr::send_async), [`queued`](Addr::queued) |
//! | `remote::Node` (feature `remote`; `ActorSystem::remote`) | `register` an actor under a name, `lookup` a remote one: a [`Recipient`] that sends, asks, monitors and links across processes and machines |
//!
//! ## Guarantees
//!
//! - Messages from one sender to one actor arrive in send order; none is lost or delivered
//!   twice. Messages from different senders have no order between them.
//! - An actor runs one behaviour at a time.
//! - A send to an actor that has ended returns the message in a [`SendError`].
//! - A panic in a behaviour ends that actor only (or its [`Supervisor`] restarts it): the
//!   worker thread survives, and the panic is reported as an [`Event`] (to the hook of
//!   [`ActorSystemBuilder::on_event`] if set, else to `tracing`, else to standard error).
//! - An ask resolves: with the reply, or with an [`AskError`] when no reply can come.
//! - After a graceful end ([`ActorSystem::shutdown`], [`ActorSystem::stop`]) every accepted
//!   message was delivered or reported as a dead letter ([`Event::DeadLetters`]); dropping a
//!   system stops it at once, dropping what is queued.
//!
//! ## Executors
//!
//! By default actors run on the message-centric executor (the Cforall actor system's:
//! over-sharded queues gulped whole, queue stealing). [`ActorSystemBuilder::policy`] switches
//! to the actor-centric executor with one of CAF's scheduling [`policy`] (work stealing, work
//! sharing, deterministic testing). Programs run unchanged on either. The design, with the
//! protocols and why they lose nothing, is in `docs/DESIGN.md` of the repository.
//!
//! ## Features
//!
//! - `tracing` (default): events go to the `tracing` crate when no hook is set.
//! - `unstable-policy`: implement your own scheduling [`policy::Policy`] (its hooks may
//!   still change before 1.0).
//! - `remote`: remote actors on Zenoh (`actorium::remote`, `ActorSystem::remote`).
//! - `remote-tls`: Zenoh's TLS transport with mutual authentication for remote nodes
//!   (`RemoteConfig::tls`).

#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod actor;
mod core;
mod executor;
mod runtime;
mod system;

#[cfg(feature = "remote")]
#[cfg_attr(docsrs, doc(cfg(feature = "remote")))]
pub mod remote;

pub use actor::{
    Actor, ActorExit, ActorRef, Addr, Allocation, Ask, AskError, AskTarget, Context, DeleteMsg,
    DestroyMsg, ExtraWorkers, FinishedMsg, JoinHandle, Pending, Receive, Recipient, ReplyTo,
    Restart, Room, SendError, Strategy, SuperviseError, Supervisor, SystemHandle, Timer,
    TrySendError, WeakAddr, WeakRecipient, DETACHED,
};

pub mod policy {
    //! Scheduling policies of the actor-centric executor (CAF's scheduler design: the C++ Actor
    //! Framework manual, section "Scheduler"), chosen with
    //! [`crate::ActorSystemBuilder::policy`]: [`WorkStealing`] (CAF's default),
    //! [`WorkSharing`] (one shared queue, for a few coarse actors) and the deterministic
    //! [`Testing`] policy (jobs run when the caller steps the system).
    //!
    //! ```
    //! use actorium::policy::{Testing, WorkSharing, WorkStealing};
    //! use actorium::ActorSystem;
    //!
    //! let stealing = ActorSystem::builder().policy(WorkStealing::default()).build()?;
    //! let sharing = ActorSystem::builder().policy(WorkSharing).max_throughput(100).build()?;
    //! let testing = ActorSystem::builder().policy(Testing).build()?; // step with run_once()
    //! for s in [stealing, sharing, testing] {
    //!     s.stop();
    //! }
    //! # Ok::<(), actorium::ConfigError>(())
    //! ```
    //!
    //! With the `unstable-policy` feature you can implement your own [`Policy`], or wrap a
    //! built-in one and use the hooks, for instance to measure how long each actor runs
    //! (`examples/timing_policy.rs`).
    pub use crate::executor::actor_centric::policy::Policy;
    pub use crate::executor::actor_centric::sharing::WorkSharing;
    pub use crate::executor::actor_centric::stealing::WorkStealing;
    pub use crate::executor::actor_centric::testing::Testing;

    #[cfg(feature = "unstable-policy")]
    #[cfg_attr(docsrs, doc(cfg(feature = "unstable-policy")))]
    pub use crate::executor::actor_centric::policy::{Scheduler, WorkerCtx};
    #[cfg(feature = "unstable-policy")]
    #[cfg_attr(docsrs, doc(cfg(feature = "unstable-policy")))]
    pub use crate::executor::actor_centric::sharing::SharedQueue;
    #[cfg(feature = "unstable-policy")]
    #[cfg_attr(docsrs, doc(cfg(feature = "unstable-policy")))]
    pub use crate::executor::mailbox::LONG_JOB_CHECK;
    #[cfg(feature = "unstable-policy")]
    #[cfg_attr(docsrs, doc(cfg(feature = "unstable-policy")))]
    pub use crate::executor::mailbox::{Job, Resumable};

    /// The associated data types of [`WorkStealing`], for a policy that wraps it.
    #[cfg(feature = "unstable-policy")]
    #[cfg_attr(docsrs, doc(cfg(feature = "unstable-policy")))]
    pub mod work_stealing {
        pub use crate::executor::actor_centric::stealing::{Coordinator, Local, Shared};
    }
}
pub use crate::core::stats::Stats;
pub use crate::core::{ActorId, Event, ExitReason};
pub use executor::forkjoin::{join, scope, Forked, Scope};
pub use executor::message_centric::QueueStealing;
pub use runtime::pool::ResizeError;
pub use system::{
    ActorSystem, ActorSystemBuilder, ConfigError, ShutdownTimeout, DEFAULT_MAX_WORKERS, MAX_WORKERS,
};

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
