//! # actorium
//!
//! A Rust actor runtime for running millions of actors on one machine.
//!
//! Actors run on one of two executors, chosen when the system is built, with the same API:
//!
//! - the **message-centric ("inverted") executor** of the Cforall actor system (seed 002), the
//!   default: `workers × 16` over-sharded message queues; each actor's messages go to the one
//!   queue its *ticket* names (round-robin, then runs of consecutive spawns in one queue, or
//!   next to its spawner; an actor that other actors
//!   keep handing messages one at a time moves into their queue); workers *gulp* whole queues
//!   in O(1) and process the batch with no atomic operation per message; idle workers steal
//!   whole queues, and take mail that waits behind a long behaviour;
//! - the **actor-centric executor** of CAF (seed 000), with
//!   [`ActorSystemBuilder::policy`]: each actor has a mailbox, an actor with mail is a *job*,
//!   and a scheduling [`policy::Policy`] (work stealing, work sharing, deterministic testing,
//!   or your own) decides who runs it.
//!
//! On both, envelopes are stored by value in *copy queues*, so a send allocates nothing in
//! steady state; *detached* actors run on threads of their own; idle workers sleep on a Linux
//! event fd behind a three-state *benaphore* (seed 003), so an idle system uses no CPU.
//!
//! The same workers run fork/join tasks (seed 004): [`join`] and [`scope`] on a worker (in a
//! behaviour, [`Context::join`] and [`Context::scope`]), [`SystemHandle::join`] and
//! [`SystemHandle::scope`] from any thread. Each worker owns a task deque (its own end LIFO;
//! thieves take the oldest public task directly, even while the owner runs a long leaf); a
//! joiner whose half was taken helps only with that half's own subtasks.
//!
//! The workers can be added and removed while everything runs (seed 003, "Manual Resizing"):
//! [`SystemHandle::add_workers`], [`SystemHandle::remove_workers`], and the guard of
//! [`SystemHandle::extra_workers`], under the seed's readers-writer lock (a lock word per
//! worker; a resize takes them all). A removed worker finishes what it runs and hands over
//! what it holds; nothing is lost or run twice.
//!
//! Request/reply: a request is a message [`Ask`]`<M, R>` (the question and a one-shot
//! [`ReplyTo`] port), answered by a `Receive<Ask<M, R>>` behaviour. [`Addr::ask`] returns a
//! [`Pending`] reply: [`Pending::wait`] on a thread, `.await` in async code; inside a behaviour
//! [`Context::ask`] runs a continuation on the asking actor when the reply comes, so a worker
//! never blocks. A reply that cannot come resolves to an [`AskError`]. [`Recipient`] is the
//! type-erased address of any actor that receives a message type; [`WeakAddr`] an address
//! that keeps nothing alive.
//!
//! Monitors ([`Addr::monitor`], [`Context::monitor`]) report why an actor ended
//! ([`ExitReason`]); links ([`Context::link`]) make two actors fail together.
//! A [`Supervisor`] restarts its children (Erlang's strategies, restart types and restart
//! intensity, escalation up a tree) **in place**: a restarted child keeps its address and the
//! mail that waited for it ([`Addr::supervise`]). [`SystemHandle::spawn_with`] builds an
//! actor's state with its own address (cyclic wiring with no set-up message). Panics, dead
//! letters and supervisors' decisions are [`Event`]s, sent to a hook
//! ([`ActorSystemBuilder::on_event`]) or to the `tracing` crate.
//! Timers ([`SystemHandle::send_after`], [`SystemHandle::send_interval`], cancellable
//! [`Timer`]s) run on one thread per system that sleeps until the earliest deadline.
//! [`ActorSystem::shutdown`] asks every actor to end after its queued messages;
//! [`ActorSystem::shutdown_timeout`] bounds the wait and names the actors that did not end.
//!
//! ```
//! use actorium::{Actor, ActorSystem, Allocation, Context, FinishedMsg, Receive};
//!
//! // An actor and its behaviours (seed 002's hello-world).
//! struct MyActor { seen: Vec<String> }
//! impl Actor for MyActor {}
//!
//! struct StrMsg(&'static str);
//! impl Receive<StrMsg> for MyActor {
//!     fn receive(&mut self, msg: StrMsg, _: &mut Context<'_, Self>) -> Allocation {
//!         self.seen.push(format!("string message \"{}\"", msg.0));
//!         Allocation::Nodelete // keep receiving
//!     }
//! }
//! impl Receive<i32> for MyActor {
//!     fn receive(&mut self, msg: i32, _: &mut Context<'_, Self>) -> Allocation {
//!         self.seen.push(format!("integer message {msg}"));
//!         Allocation::Nodelete
//!     }
//! }
//!
//! let system = ActorSystem::new().unwrap(); // start_actor_system()
//! let (actor, handle) = system.spawn_joinable(MyActor { seen: vec![] });
//! actor.send(StrMsg("Hello World")).unwrap();
//! actor.send(42).unwrap();
//! actor.send(42).unwrap();
//! actor.send(FinishedMsg).unwrap(); // poison pill: terminate, keep the final value
//! let actor = handle.join().unwrap();
//! assert_eq!(actor.seen, ["string message \"Hello World\"", "integer message 42", "integer message 42"]);
//! system.stop(); // stop_actor_system(): waits until every actor is terminal
//! ```
//!
//! ## Guarantees
//! - Messages from one sender to one actor arrive in send order; no message is lost or
//!   delivered twice.
//! - An actor runs one behaviour at a time.
//! - Sends are statically typed ([`Receive`]); a send to a terminated actor returns the message
//!   in a [`SendError`].
//! - A panicking behaviour terminates its actor only: the worker survives, the panic is reported
//!   on standard error and counted, and [`ActorSystem::stop`] still returns.
//!
//! [`Allocation`] explains how the seed's four allocation statuses map onto Rust ownership,
//! why messages need none, and how one message goes to many actors.
//!
//! ## Layers
//!
//! Each layer (a folder of `src/`) uses only the layers below it:
//!
//! ```text
//! system.rs    builder, configuration errors, start, stop, drop
//!    |
//! actor/       Actor, Receive, Allocation, Context, Addr, JoinHandle, SystemHandle, cells,
//!    |         poison pills
//! executor/    message_centric/ (message-centric: work queues, queue swap, visiting queues)
//!    |         mailbox/  (mailbox protocol, jobs; detached.rs: a thread per actor)
//!    |         actor_centric/  (actor-centric: policies, built on mailbox/)
//!    |         forkjoin/ (join, scopes, fork handles, latches, the helping rule)
//! core/        envelope, copy queue, actor header and status, mailbox storage, live-actor
//!    |         lists, the Executor trait and ExecRef (what the layers above call)
//! runtime/     worker pool and worker table (resizable; resize.rs: seed 003's
//!              readers-writer lock), the worker loop and its units of work, idle sleep
//!              (idle/), task deques (tasks/), life cycle, signal,
//!              statistics, spinlock, rng, loom shims
//! ```
//!
//! A worker thread runs one loop (`runtime/worker.rs`) through one interface, a *unit of
//! work*: an executor is a kind of unit, so a new kind of work is added to the same threads
//! without touching the others. READMEs next to the code explain the protocols and why they
//! lose nothing: `runtime/idle/` (idle sleep), `executor/message_centric/` (gulping, queue stealing),
//! `executor/mailbox/` (mailboxes and jobs), `executor/actor_centric/` (policies, shutdown,
//! resizing), `runtime/pool.rs` (resizing).

#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod actor;
mod core;
mod executor;
mod runtime;
mod system;

pub use actor::{
    Actor, ActorExit, Addr, Allocation, Ask, AskError, Context, DeleteMsg, DestroyMsg,
    ExtraWorkers, FinishedMsg, JoinHandle, Pending, Receive, Recipient, ReplyTo, Restart,
    SendError, Strategy, SuperviseError, Supervisor, SystemHandle, Timer, WeakAddr, DETACHED,
};

pub mod policy {
    //! Scheduling policies of the actor-centric executor (seed 000, CAF's scheduler), chosen
    //! with [`crate::ActorSystemBuilder::policy`]: [`WorkStealing`] (CAF's default),
    //! [`WorkSharing`], the deterministic [`Testing`] policy, or your own [`Policy`].
    //!
    //! A custom policy can wrap a built-in one and use the hooks, for instance to measure how
    //! long each actor runs (the full program is `examples/timing_policy.rs`):
    //!
    //! ```
    //! use actorium::policy::{Job, Policy, Resumable, Scheduler, WorkSharing, WorkerCtx};
    //! use std::sync::atomic::{AtomicU64, Ordering};
    //! use std::time::Instant;
    //!
    //! /// Work sharing that counts the jobs run and the time spent in them.
    //! struct Timed {
    //!     inner: WorkSharing,
    //!     jobs: AtomicU64,
    //!     nanos: AtomicU64,
    //! }
    //!
    //! impl Policy for Timed {
    //!     type Coordinator = <WorkSharing as Policy>::Coordinator;
    //!     type Worker = ();
    //!     type Local = Option<Instant>; // when the running job started
    //!
    //!     fn coordinator(&self, n: usize) -> Self::Coordinator { self.inner.coordinator(n) }
    //!     fn worker(&self, _: &Self::Coordinator, _: usize) -> ((), Option<Instant>) { ((), None) }
    //!     // One queue: the other enqueues default to this one.
    //!     fn central_enqueue(&self, s: &Scheduler<'_, Self>, job: Job) {
    //!         s.coordinator().push(job)
    //!     }
    //!     fn dequeue(&self, me: &mut WorkerCtx<'_, Self>) -> Option<Job> {
    //!         Some(me.scheduler().coordinator().pop_blocking())
    //!     }
    //!     fn before_resume(&self, me: &mut WorkerCtx<'_, Self>, _: &Job) {
    //!         *me.local() = Some(Instant::now());
    //!     }
    //!     fn after_resume(&self, me: &mut WorkerCtx<'_, Self>, _: &Job, _: Resumable) {
    //!         let t = me.local().take().unwrap();
    //!         self.jobs.fetch_add(1, Ordering::Relaxed);
    //!         self.nanos.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
    //!     }
    //! }
    //!
    //! let timed = Timed { inner: WorkSharing, jobs: AtomicU64::new(0), nanos: AtomicU64::new(0) };
    //! let system = actorium::ActorSystem::builder().workers(2).policy(timed).build()?;
    //! system.stop();
    //! # Ok::<(), actorium::ConfigError>(())
    //! ```
    pub use crate::executor::actor_centric::policy::{
        Policy, Scheduler, WorkerCtx, LONG_JOB_CHECK,
    };
    pub use crate::executor::actor_centric::sharing::{SharedQueue, WorkSharing};
    pub use crate::executor::actor_centric::stealing::WorkStealing;
    pub mod work_stealing {
        //! The associated data types of [`super::WorkStealing`].
        pub use crate::executor::actor_centric::stealing::{Coordinator, Local, Shared};
    }
    pub use crate::executor::actor_centric::testing::Testing;
    pub use crate::executor::mailbox::{Job, Resumable};
}
pub use crate::core::{Event, ExitReason};
pub use executor::forkjoin::{join, scope, Forked, Scope};
pub use executor::message_centric::QueueStealing;
/// Renamed [`QueueStealing`].
#[deprecated(
    note = "renamed `QueueStealing` (queue stealing of the message-centric executor, \
                     not the `policy::WorkStealing` policy)"
)]
pub type Stealing = QueueStealing;
pub use runtime::pool::ResizeError;
pub use runtime::stats::Stats;
pub use system::{
    ActorSystem, ActorSystemBuilder, ConfigError, ShutdownTimeout, DEFAULT_MAX_WORKERS,
    DEFAULT_QUEUES_PER_WORKER, DEFAULT_SPIN, MAX_QUEUES, MAX_WORKERS,
};

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;
