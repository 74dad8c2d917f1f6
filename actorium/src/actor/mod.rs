//! The actor API: [`Actor`], [`Receive`], [`Allocation`], [`Context`], and addresses.
//!
//! An actor is any `Send + 'static` type implementing [`Actor`]; each message type it accepts is
//! a [`Receive<M>`] implementation, its *behaviour* for `M`. Sends are statically typed, as in
//! the Cforall actor system (Colby Parsons, MMath thesis, Waterloo 2023), "CFA Actor Syntax":
//! [`Addr::send`] only compiles when the actor has a behaviour for the message type, so there is
//! no dynamic type discrimination at run time.

mod addr;
mod ask;
mod ask_from;
#[cfg(test)]
mod ask_timeout_tests;
#[cfg(test)]
mod ask_wanted_tests;
mod bounded;
mod call;
pub(crate) mod cell;
mod dispatch;
mod handle;
mod monitor;
mod poison;
mod supervisor;
mod timer;

#[cfg(feature = "remote")]
pub(crate) use addr::Target;
pub use addr::{ActorExit, Addr, JoinHandle, Recipient, SendError, WeakAddr, WeakRecipient};
pub use ask::{Ask, AskError, Pending, ReplyTo};
pub use ask_from::AskTarget;
pub use bounded::{Room, TrySendError};
pub use handle::{ExtraWorkers, SystemHandle};
pub use monitor::ActorRef;
pub use poison::{DeleteMsg, DestroyMsg, FinishedMsg};
pub use supervisor::{Restart, Strategy, SuperviseError, Supervisor};
pub use timer::Timer;

/// What [`Context::worker_index`] returns on a detached actor's own thread.
pub const DETACHED: usize = crate::core::DETACHED;

use crate::core::{ExitReason, Placement, Status, WorkerRef};
use crate::executor::forkjoin::{self, Scope};
use cell::Cell;

/// What the executor does with an actor after one of its behaviours returns (the Cforall
/// actor thesis, "Actor Behaviours"), mapped onto Rust ownership.
///
/// | status | Cforall | actorium |
/// |---|---|---|
/// | [`Nodelete`](Allocation::Nodelete) | no action | the actor keeps receiving |
/// | [`Delete`](Allocation::Delete) | destructor + free | the actor's state is dropped and its cell is freed as soon as no [`Addr`] refers to it; sends fail from now on |
/// | [`Destroy`](Allocation::Destroy) | destructor, storage kept for reuse | the state is dropped, but the cell — address, queue ticket, storage — is kept for reuse: [`Addr::respawn`] puts a new state in it without a new allocation, and every existing address reaches the new incarnation |
/// | [`Finished`](Allocation::Finished) | marked finished, not destroyed | the actor stops receiving and its final value is kept, not dropped, for its [`JoinHandle`]: `join` returns it. Without a join handle (a plain `spawn`, or the handle was dropped) nobody can take it, and it is dropped at once |
///
/// After any status other than `Nodelete` the actor is *terminal*: sends to it return
/// [`SendError`] with the message inside, and messages already queued for it are dropped unrun
/// (counted as dead letters). [`crate::ActorSystem::stop`] returns once every actor is terminal.
///
/// The Cforall actor thesis also gives each *message* an allocation status, as C cannot tell who
/// owns a message. Rust can: a behaviour receives its message by value, so it is dropped when the
/// behaviour returns unless the behaviour keeps it (stores it, or sends it on). To send one message
/// to many actors, send each a clone, or wrap a large payload in an [`Arc`](std::sync::Arc) and
/// send clones of the `Arc`: the payload is freed when the last receiver drops it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Allocation {
    /// Keep receiving.
    Nodelete,
    /// Terminate; drop the state; free the cell once unreferenced.
    Delete,
    /// Terminate; drop the state; keep the cell for [`Addr::respawn`].
    Destroy,
    /// Terminate; keep the final state for [`JoinHandle::join`] (dropped at once if the actor
    /// has no join handle).
    Finished,
}

impl Allocation {
    pub(crate) fn status(self) -> Status {
        match self {
            Allocation::Nodelete => Status::Alive,
            Allocation::Delete => Status::Deleted,
            Allocation::Destroy => Status::Destroyed,
            Allocation::Finished => Status::Finished,
        }
    }
}

/// An actor: state plus behaviours ([`Receive`] implementations).
///
/// Both life-cycle hooks are optional and run on the actor's worker thread.
///
/// ```
/// use actorium::{Actor, ActorSystem, Allocation, Context, Receive};
///
/// struct Counter(u64);
/// impl Actor for Counter {
///     fn started(&mut self, _ctx: &mut Context<'_, Self>) {
///         self.0 = 100; // runs before the first message
///     }
/// }
/// impl Receive<u64> for Counter {
///     fn receive(&mut self, n: u64, _ctx: &mut Context<'_, Self>) -> Allocation {
///         self.0 += n;
///         if n == 0 { Allocation::Finished } else { Allocation::Nodelete }
///     }
/// }
///
/// let system = ActorSystem::builder().workers(2).build().unwrap();
/// let (addr, handle) = system.spawn_joinable(Counter(0));
/// addr.send(5).unwrap();
/// addr.send(0).unwrap();
/// assert_eq!(handle.join().unwrap().0, 105);
/// system.stop();
/// ```
pub trait Actor: Send + Sized + 'static {
    /// Runs on the actor's worker before its first message.
    fn started(&mut self, _ctx: &mut Context<'_, Self>) {}

    /// Runs when the actor ends other than by a panic (a behaviour returns a terminal
    /// [`Allocation`], [`Context::stop`], a poison pill, a linked failure, a supervisor's
    /// decision, a graceful shutdown), before the state is dropped or handed to the join
    /// handle. Not run after a panic, nor when the system stops at once.
    fn stopped(&mut self) {}

    /// Runs on a supervised actor's new incarnation, right after [`Self::started`], when its
    /// supervisor restarted it ([`crate::Supervisor`]): `reason` is how the last incarnation
    /// ended (its panic, or [`ExitReason::Shutdown`] for a sibling that the strategy
    /// restarted with it). Akka's `postRestart`. State that must survive a restart lives
    /// outside the incarnation: the factory gives each one a handle to it (an `Arc`), or the
    /// actor reloads it here.
    ///
    /// ```
    /// use actorium::{Actor, ActorSystem, Allocation, Context, ExitReason, Receive};
    /// use actorium::{Restart, Strategy, Supervisor};
    /// use std::sync::{mpsc, Arc, Mutex};
    ///
    /// /// Counts what it was sent across incarnations (the count lives outside them); panics
    /// /// on 0.
    /// struct Worker {
    ///     seen: Arc<Mutex<u32>>,
    ///     restarts: mpsc::Sender<ExitReason>,
    /// }
    /// impl Actor for Worker {
    ///     fn restarted(&mut self, reason: ExitReason, _: &mut Context<'_, Self>) {
    ///         self.restarts.send(reason).unwrap();
    ///     }
    /// }
    /// impl Receive<u32> for Worker {
    ///     fn receive(&mut self, n: u32, _: &mut Context<'_, Self>) -> Allocation {
    ///         *self.seen.lock().unwrap() += 1;
    ///         assert!(n != 0, "zero");
    ///         Allocation::Nodelete
    ///     }
    /// }
    /// let system = ActorSystem::new()?;
    /// let sup = system.spawn(Supervisor::new(Strategy::OneForOne));
    /// let (tx, restarts) = mpsc::channel();
    /// let seen = Arc::new(Mutex::new(0));
    /// let s = seen.clone();
    /// let w = sup.supervise(Restart::Permanent, move || Worker {
    ///     seen: s.clone(),
    ///     restarts: tx.clone(),
    /// })?;
    /// w.send(1).unwrap();
    /// w.send(0).unwrap(); // a panic: the supervisor restarts it
    /// w.send(2).unwrap(); // waits for the new incarnation, which gets it
    /// assert_eq!(restarts.recv()?, ExitReason::Panicked("zero".into()));
    /// # let t0 = std::time::Instant::now();
    /// # while *seen.lock().unwrap() < 3 { assert!(t0.elapsed().as_secs() < 30); std::thread::yield_now(); }
    /// assert_eq!(*seen.lock().unwrap(), 3); // the count survived
    /// # drop(system);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn restarted(&mut self, _reason: ExitReason, _ctx: &mut Context<'_, Self>) {}

    /// A linked actor ([`Context::link`]) ended with `reason`; runs as one of this actor's
    /// behaviours. The default fails together with it: if the reason is abnormal
    /// ([`ExitReason::is_abnormal`]: a panic, a failure passed on by another link, a
    /// supervisor's escalation, or the loss of a remote actor's node) this
    /// actor ends too, with [`ExitReason::Linked`]; otherwise it goes on. Override it to
    /// handle the notice instead (Erlang's `trap_exit`).
    fn linked_exit(&mut self, reason: ExitReason, ctx: &mut Context<'_, Self>) -> Allocation {
        if reason.is_abnormal() {
            ctx.cause = Cause::Linked;
            Allocation::Delete
        } else {
            Allocation::Nodelete
        }
    }
}

/// The behaviour of actor `Self` for messages of type `M`.
///
/// Sending an `M` to an actor without this implementation does not compile:
///
/// ```compile_fail
/// use actorium::{Actor, ActorSystem};
/// struct Silent;
/// impl Actor for Silent {}
/// let system = ActorSystem::new().unwrap();
/// system.spawn(Silent).send(42u32); // error: `Silent` has no behaviour for `u32`
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no behaviour for messages of type `{M}`",
    label = "`{Self}` cannot receive `{M}`",
    note = "implement `actorium::Receive<{M}>` for `{Self}` to give it a behaviour for `{M}`"
)]
pub trait Receive<M: Send + 'static>: Actor {
    /// Handles one message. The returned [`Allocation`] says whether the actor goes on.
    fn receive(&mut self, msg: M, ctx: &mut Context<'_, Self>) -> Allocation;
}

/// What a behaviour can do besides changing its actor's state: learn its own address, spawn
/// actors, reach the system.
pub struct Context<'a, A: Actor> {
    cell: &'a Cell<A>,
    worker: WorkerRef<'a>,
    cause: Cause,
}

/// Why a behaviour's actor is ending, beyond the [`Allocation`] it returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cause {
    /// Nothing beyond the allocation.
    None,
    /// [`Context::stop`].
    Stop,
    /// A poison pill.
    Pill,
    /// A linked actor failed.
    Linked,
    /// A supervisor gave up (its restart intensity was exceeded).
    Escalated,
}

impl<'a, A: Actor> Context<'a, A> {
    pub(crate) fn new(cell: &'a Cell<A>, worker: WorkerRef<'a>) -> Self {
        Self {
            cell,
            worker,
            cause: Cause::None,
        }
    }

    /// Ends this actor when the running behaviour returns, as if it returned
    /// [`Allocation::Delete`] (a terminal status it returns instead wins): its `stopped` hook
    /// runs, its state is dropped, and messages still queued for it are dead letters.
    ///
    /// ```
    /// use actorium::{Actor, ActorSystem, Allocation, Context, Receive};
    /// struct Once;
    /// impl Actor for Once {}
    /// impl Receive<u8> for Once {
    ///     fn receive(&mut self, _: u8, ctx: &mut Context<'_, Self>) -> Allocation {
    ///         ctx.stop();
    ///         Allocation::Nodelete
    ///     }
    /// }
    /// let system = actorium::ActorSystem::new()?;
    /// let once = system.spawn(Once);
    /// once.send(1).unwrap();
    /// system.stop(); // returns: the actor ended itself
    /// assert!(once.send(2).is_err());
    /// # Ok::<(), actorium::ConfigError>(())
    /// ```
    pub fn stop(&mut self) {
        if self.cause == Cause::None {
            self.cause = Cause::Stop;
        }
    }

    /// Whether the actor ends after this behaviour even if it returns `Nodelete`.
    pub(crate) fn stopping(&self) -> bool {
        self.cause != Cause::None
    }

    /// Why the actor ends, if this behaviour ends it.
    pub(crate) fn exit_reason(&self) -> ExitReason {
        match self.cause {
            Cause::None | Cause::Stop => ExitReason::Normal,
            Cause::Pill => ExitReason::PoisonPill,
            Cause::Linked => ExitReason::Linked,
            Cause::Escalated => ExitReason::Escalated,
        }
    }

    /// This actor's address.
    pub fn address(&self) -> Addr<A> {
        // The cell is alive: the system reference is held while a behaviour runs.
        Addr::from_cell(cell::arc_of(self.cell))
    }

    /// Spawns an actor on this actor's system. See [`SystemHandle::spawn`].
    pub fn spawn<B: Actor>(&self, actor: B) -> Addr<B> {
        let exec = &self.cell.header.exec;
        Addr::from_cell(cell::spawn_or_dead(exec, actor, false, Placement::Pooled))
    }

    /// Spawns an actor whose state `build` makes with its own context (its address before its
    /// state). See [`SystemHandle::spawn_with`].
    pub fn spawn_with<B, F>(&self, build: F) -> Addr<B>
    where
        B: Actor,
        F: FnOnce(&mut Context<'_, B>) -> B + Send + 'static,
    {
        Addr::from_cell(cell::spawn_with(&self.cell.header.exec, Box::new(build)))
    }

    /// Spawns a detached actor (its own thread) on this actor's system. See
    /// [`SystemHandle::spawn_detached`].
    pub fn spawn_detached<B: Actor>(&self, actor: B) -> Addr<B> {
        let exec = &self.cell.header.exec;
        Addr::from_cell(cell::spawn_or_dead(exec, actor, false, Placement::Detached))
    }

    /// A handle to this actor's system.
    pub fn system(&self) -> SystemHandle {
        let pooled = cell::executor_for(&self.cell.header.exec, Placement::Pooled)
            .expect("a behaviour runs while its system does");
        SystemHandle::from_executor(pooled)
    }

    /// Runs `a` and `b`, possibly in parallel, on this system's workers, and returns both
    /// results: [`crate::join`] on a worker (the worker helps with tasks until both are done;
    /// the other actors of the queue or job it holds wait, as for any long behaviour: see
    /// `executor/forkjoin/README.md`), [`SystemHandle::join`] on a detached actor's thread.
    ///
    /// ```
    /// use actorium::{Actor, ActorSystem, Allocation, Context, DeleteMsg, Receive};
    /// use std::sync::mpsc;
    ///
    /// struct Summer(mpsc::Sender<u64>);
    /// impl Actor for Summer {}
    /// impl Receive<Vec<u64>> for Summer {
    ///     fn receive(&mut self, v: Vec<u64>, ctx: &mut Context<'_, Self>) -> Allocation {
    ///         let (l, r) = v.split_at(v.len() / 2);
    ///         let (a, b) = ctx.join(|| l.iter().sum::<u64>(), || r.iter().sum::<u64>());
    ///         self.0.send(a + b).unwrap();
    ///         Allocation::Nodelete
    ///     }
    /// }
    /// let system = ActorSystem::new().unwrap();
    /// let (tx, rx) = mpsc::channel();
    /// let summer = system.spawn(Summer(tx));
    /// summer.send((1..=100).collect::<Vec<u64>>()).unwrap();
    /// assert_eq!(rx.recv().unwrap(), 5050);
    /// summer.send(DeleteMsg).unwrap();
    /// system.stop();
    /// ```
    pub fn join<FA, FB, RA, RB>(&self, a: FA, b: FB) -> (RA, RB)
    where
        FA: FnOnce() -> RA + Send,
        FB: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        if forkjoin::on_worker() {
            forkjoin::join(a, b)
        } else {
            self.system().join(a, b)
        }
    }

    /// Runs `op` with a fork/join [`Scope`] on this system's workers: [`crate::scope`] on a
    /// worker, [`SystemHandle::scope`] on a detached actor's thread.
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        if forkjoin::on_worker() {
            forkjoin::scope(op)
        } else {
            self.system().scope(op)
        }
    }

    /// Index of the worker thread running this behaviour; [`DETACHED`] on a detached
    /// actor's own thread.
    pub fn worker_index(&self) -> usize {
        self.worker.index
    }
}
