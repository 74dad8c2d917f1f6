//! The actor system: builder (`builder.rs`), start and stop. The top layer: it chooses the
//! executors, wires them to one another, and owns their shutdown.

use crate::actor::{
    Actor, Addr, Context, ExtraWorkers, JoinHandle, Recipient, SendError, SystemHandle, Timer,
};
use crate::core::ExecRef;
use crate::core::Stats;
use crate::executor::forkjoin::Scope;
use crate::runtime::context::{must_not_block, runs_for};
use crate::runtime::pool::ResizeError;
use std::fmt;
use std::thread;
use std::time::{Duration, Instant};

/// A deadline far enough to mean "none" (an `Instant` cannot be infinite).
const YEAR: Duration = Duration::from_secs(365 * 24 * 3600);

mod builder;
mod graceful;

pub use builder::{ActorSystemBuilder, ConfigError, DEFAULT_MAX_WORKERS, MAX_WORKERS};

/// A running actor system: worker threads executing behaviours (the Cforall actor thesis's
/// `start_actor_system` / `stop_actor_system`).
///
/// Several systems may run at once or in turn in one process; actors of different systems can
/// message each other.
///
/// **Dropping** a system without calling [`stop`](Self::stop) shuts it down at once instead of
/// waiting for actors: each worker finishes the behaviour it is running (behaviours are never
/// interrupted) and starts no other, then exits; the threads are
/// joined; actors still alive are stopped (their `stopped` hook is *not* run), their states and
/// all queued messages are dropped, and every later send returns [`crate::SendError`]. Nothing
/// is leaked and no thread outlives the drop, but a behaviour that never returns would block it
/// (as it would block `stop`). Two exceptions, both reported on standard error: dropping a
/// system from inside one of its own behaviours is allowed, and the shutdown then completes on
/// a helper thread once that behaviour returns (if no thread can be started for it, the system
/// is left running); and when a scheduling policy has failed, worker threads that do not exit
/// within 2 s are left behind, and the system's actors and resources with them (leaked).
pub struct ActorSystem {
    handle: SystemHandle,
    /// The executor of the system's detached actors.
    detached: ExecRef,
    /// Stopped (or shut down): nothing left for `Drop`.
    done: bool,
}

impl ActorSystem {
    /// A system running on `pooled`, whose detached actors run on `detached` (see
    /// [`ActorSystemBuilder::build`]).
    fn started(pooled: ExecRef, detached: ExecRef) -> Self {
        ActorSystem {
            handle: SystemHandle::from_executor(pooled),
            detached,
            done: false,
        }
    }
}

impl fmt::Debug for ActorSystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ActorSystem")
            .field("workers", &self.workers())
            .field("queues", &self.queues())
            .field("live_actors", &self.handle.live_actors())
            .finish()
    }
}

/// What a system does while it runs, as on its [`SystemHandle`] (which threads and
/// behaviours keep): each method here is that handle's.
impl ActorSystem {
    /// Spawns `actor` ([`SystemHandle::spawn`]).
    pub fn spawn<A: Actor>(&self, actor: A) -> Addr<A> {
        self.handle.spawn(actor)
    }

    /// Spawns an actor whose state is built with its own address ([`SystemHandle::spawn_with`]).
    pub fn spawn_with<A, F>(&self, build: F) -> Addr<A>
    where
        A: Actor,
        F: FnOnce(&mut Context<'_, A>) -> A + Send + 'static,
    {
        self.handle.spawn_with(build)
    }

    /// Spawns `actor`, or gives it back if the system is stopping ([`SystemHandle::try_spawn`]).
    pub fn try_spawn<A: Actor>(&self, actor: A) -> Result<Addr<A>, A> {
        self.handle.try_spawn(actor)
    }

    /// Spawns `actor` with a bounded mailbox of `capacity` messages
    /// ([`SystemHandle::spawn_bounded`]).
    ///
    /// # Panics
    /// If `capacity` is 0.
    pub fn spawn_bounded<A: Actor>(&self, actor: A, capacity: usize) -> Addr<A> {
        self.handle.spawn_bounded(actor, capacity)
    }

    /// Spawns an actor on a thread of its own ([`SystemHandle::spawn_detached`]).
    pub fn spawn_detached<A: Actor>(&self, actor: A) -> Addr<A> {
        self.handle.spawn_detached(actor)
    }

    /// Spawns `actor` with a handle that waits for its end ([`SystemHandle::spawn_joinable`]).
    pub fn spawn_joinable<A: Actor>(&self, actor: A) -> (Addr<A>, JoinHandle<A>) {
        self.handle.spawn_joinable(actor)
    }

    /// Runs `a` and `b` in parallel on the workers ([`SystemHandle::join`]).
    pub fn join<FA, FB, RA, RB>(&self, a: FA, b: FB) -> (RA, RB)
    where
        FA: FnOnce() -> RA + Send,
        FB: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.handle.join(a, b)
    }

    /// Runs `op` with a fork/join scope on the workers ([`SystemHandle::scope`]).
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.handle.scope(op)
    }

    /// Sends `msg` to `to` after `delay` ([`SystemHandle::send_after`]).
    ///
    /// # Errors
    /// As [`SystemHandle::send_after`].
    pub fn send_after<M: Send + 'static>(
        &self,
        to: impl Into<Recipient<M>>,
        msg: M,
        delay: Duration,
    ) -> Result<Timer, SendError<M>> {
        self.handle.send_after(to, msg, delay)
    }

    /// Sends a clone of `msg` to `to` every `period` ([`SystemHandle::send_interval`]).
    ///
    /// # Errors
    /// As [`SystemHandle::send_interval`].
    ///
    /// # Panics
    /// If `period` is zero.
    pub fn send_interval<M: Clone + Send + 'static>(
        &self,
        to: impl Into<Recipient<M>>,
        msg: M,
        period: Duration,
    ) -> Result<Timer, SendError<M>> {
        self.handle.send_interval(to, msg, period)
    }

    /// Actors spawned and not yet terminal ([`SystemHandle::live_actors`]).
    pub fn live_actors(&self) -> usize {
        self.handle.live_actors()
    }

    /// The most worker threads that run ([`SystemHandle::workers`]).
    pub fn workers(&self) -> usize {
        self.handle.workers()
    }

    /// Workers active now ([`SystemHandle::active_workers`]).
    pub fn active_workers(&self) -> usize {
        self.handle.active_workers()
    }

    /// Adds `n` workers while the system runs ([`SystemHandle::add_workers`]).
    ///
    /// # Errors
    /// As [`SystemHandle::add_workers`].
    pub fn add_workers(&self, n: usize) -> Result<usize, ResizeError> {
        self.handle.add_workers(n)
    }

    /// Removes `n` workers while the system runs ([`SystemHandle::remove_workers`]).
    ///
    /// # Errors
    /// As [`SystemHandle::remove_workers`].
    pub fn remove_workers(&self, n: usize) -> Result<usize, ResizeError> {
        self.handle.remove_workers(n)
    }

    /// Adds `n` workers until the returned guard is dropped ([`SystemHandle::extra_workers`]).
    ///
    /// # Errors
    /// As [`SystemHandle::add_workers`].
    pub fn extra_workers(&self, n: usize) -> Result<ExtraWorkers, ResizeError> {
        self.handle.extra_workers(n)
    }
}

impl ActorSystem {
    /// A builder with the defaults.
    pub fn builder() -> ActorSystemBuilder {
        ActorSystemBuilder::default()
    }

    /// Starts a system with the default configuration.
    ///
    /// # Errors
    /// As [`ActorSystemBuilder::build`].
    pub fn new() -> Result<Self, ConfigError> {
        Self::builder().build()
    }

    /// A cloneable spawning handle.
    pub fn handle(&self) -> SystemHandle {
        self.handle.clone()
    }

    fn exec(&self) -> &ExecRef {
        self.handle.executor()
    }

    /// Message queues over all workers (message-centric executor; 0 on the actor-centric
    /// one, where each actor has a mailbox instead).
    #[doc(hidden)]
    // Hidden: a view of the message-centric executor's placement, for the benchmark suite's
    // balance workloads (which load chosen workers, as the Cforall actor thesis's do) and the
    // placement tests; placement may change in any release, so this is no stable interface.
    pub fn queues(&self) -> usize {
        self.exec().queues()
    }

    /// Statistics so far (`None` unless enabled with [`ActorSystemBuilder::stats`]).
    pub fn stats(&self) -> Option<Stats> {
        let shared = self.exec().shared();
        if !shared.stats_on {
            return None;
        }
        let mut s = Stats::default();
        self.exec().add_stats(&mut s);
        s.add(shared.external.values());
        Some(s)
    }

    /// With a caller-driven policy ([`crate::policy::Testing`]): runs the next job — one
    /// message of one actor, or its `started` hook — on the calling thread, and returns
    /// whether there was one. On a system with worker threads it does nothing and returns
    /// `false`: the workers run jobs.
    pub fn run_once(&self) -> bool {
        self.exec().run_once()
    }

    /// With a caller-driven policy: runs jobs until none is ready; returns how many ran
    /// (0 on a system with worker threads).
    pub fn run(&self) -> usize {
        let mut n = 0;
        while self.run_once() {
            n += 1;
        }
        n
    }

    /// Graceful shutdown: asks every live actor to end (a stop request queued behind the mail
    /// already sent to it, so those messages are **delivered** first, then its `stopped`
    /// hook runs and it ends with [`crate::ExitReason::Shutdown`]; supervisors restart
    /// nothing), waits until every actor has ended (actors its behaviours spawn
    /// meanwhile are asked too; a spawn from a thread outside the system is refused from the
    /// start, as after `stop`, so that no acceptor thread keeps the shutdown going), then
    /// stops the system as [`Self::stop`] does. Messages sent to an actor
    /// after its stop request are refused ([`crate::SendError`] gives them back) or, if they
    /// were already queued behind it, counted as dead letters. See
    /// [`Self::shutdown_timeout`] to bound the wait.
    ///
    /// ```
    /// use actorium::{Actor, ActorSystem, Allocation, Context, Receive};
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    ///
    /// struct Server(Arc<AtomicUsize>);
    /// impl Actor for Server {
    ///     fn stopped(&mut self) {
    ///         self.0.fetch_add(1, Ordering::SeqCst);
    ///     }
    /// }
    /// impl Receive<u32> for Server {
    ///     fn receive(&mut self, _: u32, _: &mut Context<'_, Self>) -> Allocation {
    ///         Allocation::Nodelete // never ends by itself
    ///     }
    /// }
    /// let system = ActorSystem::new()?;
    /// let stopped = Arc::new(AtomicUsize::new(0));
    /// for _ in 0..10 {
    ///     system.spawn(Server(stopped.clone())).send(1).unwrap();
    /// }
    /// system.shutdown(); // `stop()` would wait for ever here
    /// assert_eq!(stopped.load(Ordering::SeqCst), 10);
    /// # Ok::<(), actorium::ConfigError>(())
    /// ```
    ///
    /// # Panics
    /// When called from inside one of this system's behaviours (it would wait for itself), or
    /// on a thread that must never block (a remote node's callback).
    pub fn shutdown(self) -> Option<Stats> {
        match self.graceful(None) {
            Ok(stats) => stats,
            Err(_) => unreachable!("no deadline"),
        }
    }

    /// [`Self::shutdown`], waiting at most `timeout` for the actors to end. If some have not
    /// ended by then (a behaviour that blocks, a long queue), the system is stopped at once
    /// (as when dropped: the remaining actors' states are dropped, their queued messages are
    /// dead letters, their `stopped` hooks do not run), and the error says which actors they
    /// were. The deadline holds: the call waits at most 10 ms between its looks at it and,
    /// once it has passed, stops the system at once, so no queued behaviour starts after
    /// that and the call returns soon after `timeout` plus the behaviours running then
    /// (which are never interrupted). (A thread the machine stalls looks late: behaviours may
    /// start until it does.)
    ///
    /// # Errors
    /// [`ShutdownTimeout`] naming the actors that had not ended.
    ///
    /// # Panics
    /// When called from inside one of this system's behaviours (it would wait for itself), or
    /// on a thread that must never block (a remote node's callback).
    pub fn shutdown_timeout(self, timeout: Duration) -> Result<Option<Stats>, ShutdownTimeout> {
        let deadline = Instant::now().checked_add(timeout);
        self.graceful(Some(deadline.unwrap_or_else(|| Instant::now() + YEAR)))
    }

    fn graceful(self, deadline: Option<Instant>) -> Result<Option<Stats>, ShutdownTimeout> {
        let exec = self.exec().clone();
        assert!(
            !runs_for(exec.shared().id()),
            "`ActorSystem::shutdown` was called from inside a behaviour of that system (or on \
             one of its threads): it would wait for itself to finish (a deadlock). Shut it \
             down from a thread outside the system; to end the system from inside, call \
             `SystemHandle::request_shutdown`"
        );
        assert!(
            !must_not_block(),
            "`ActorSystem::shutdown` was called on a thread that must never block (a remote \
             node's callback, on one of Zenoh's threads): call \
             `SystemHandle::request_shutdown` there"
        );
        if let Err(late) = graceful::end_every_actor(&exec, deadline, true) {
            drop(self); // stop now
            return Err(late);
        }
        Ok(self.stop())
    }

    /// Blocks until every actor has reached a terminal status, then drains the queues (dead
    /// letters) and joins every worker thread. Returns the final statistics if enabled.
    /// Long-lived actors must be told to end first (a poison pill such as
    /// [`crate::DeleteMsg`]); [`Self::shutdown`] does that for every actor, and
    /// [`Self::shutdown_timeout`] bounds the wait. Dropping the system stops it at once.
    ///
    /// If the system failed meanwhile (a scheduling policy panicked where it may have lost a
    /// job; reported on standard error), it shuts down as if dropped, and `stop` returns.
    ///
    /// # Panics
    /// When called from inside one of this system's behaviours (it would wait for itself), or
    /// on a thread that must never block (a remote node's callback).
    pub fn stop(mut self) -> Option<Stats> {
        let exec = self.exec().clone();
        let life = &exec.shared().life;
        assert!(
            !runs_for(exec.shared().id()),
            "`ActorSystem::stop` was called from inside a behaviour of that system (or on one \
             of its threads): it would wait for itself to finish (a deadlock). Stop it from a \
             thread outside the system; to end the system from inside, drop it instead"
        );
        assert!(
            !must_not_block(),
            "`ActorSystem::stop` was called on a thread that must never block (a remote \
             node's callback, on one of Zenoh's threads): stop it from another thread"
        );
        let settled = || life.live() == 0 || life.aborting();
        exec.wait_until(&mut { settled });
        self.begin_shutdown(true);
        // An actor spawned (from a handle on another thread) between the wait and the close
        // is counted in `live` by now: wait for it too, then let the workers see `live == 0`.
        exec.wait_until(&mut { settled });
        let drain = !life.aborting();
        shutdown(&exec, &self.detached, drain);
        self.done = true;
        self.stats()
    }

    fn begin_shutdown(&self, drain: bool) {
        self.exec().shared().close(drain);
        self.exec().begin_shutdown(drain);
        self.detached.begin_shutdown(drain);
    }
}

/// A graceful shutdown that gave up ([`ActorSystem::shutdown_timeout`]): these actors had
/// not ended in time (the system was then stopped at once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShutdownTimeout {
    /// Actors still alive when the time ran out (those started during the shutdown included).
    pub remaining: usize,
    /// The type names of the live actors known to the shutdown, sorted.
    pub actors: Vec<&'static str>,
}

impl fmt::Display for ShutdownTimeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "graceful shutdown timed out with {} actor(s) still alive",
            self.remaining
        )?;
        let mut i = 0;
        let mut sep = ": ";
        while i < self.actors.len() {
            let n = self.actors[i..]
                .iter()
                .take_while(|a| **a == self.actors[i])
                .count();
            write!(f, "{sep}{n} x `{}`", self.actors[i])?;
            sep = ", ";
            i += n;
        }
        f.write_str("; they were stopped at once (their stopped hooks did not run)")
    }
}

impl std::error::Error for ShutdownTimeout {}

/// Ends the threads of both executors, then cleans up: stops live actors, disposes of queued
/// envelopes, releases references and kernel resources.
fn shutdown(pooled: &ExecRef, detached: &ExecRef, drain: bool) {
    // A requested shutdown's thread ends now (every actor has ended, or the system stops at
    // once): no thread outlives the system.
    graceful::join_helper(pooled.shared());
    // No timer fires from now on; the pending ones (and their messages) are dropped.
    pooled.shared().timers.stop();
    pooled.join_threads(drain);
    detached.join_threads(drain);
    pooled.cleanup();
    detached.cleanup();
    // A hook that holds an address would otherwise keep the system's executors alive.
    pooled.shared().drop_event_hook();
}

impl Drop for ActorSystem {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        self.begin_shutdown(false);
        let (pooled, detached) = (self.exec().clone(), self.detached.clone());
        if runs_for(pooled.shared().id()) {
            // Dropped from inside one of its behaviours: this thread must return to its loop
            // (and see the abort) before it can be joined, so a helper thread finishes.
            let helper = thread::Builder::new()
                .name("actorium-shutdown".into())
                .spawn(move || shutdown(&pooled, &detached, false));
            if let Err(e) = helper {
                eprintln!("actorium: cannot start the shutdown thread: {e}");
            }
        } else {
            shutdown(&pooled, &detached, false);
        }
    }
}
