//! The spawning handle of a running system.

use super::cell;
use super::{Actor, Addr, JoinHandle};
use crate::core::{ExecRef, Placement};
use crate::executor::forkjoin::{self, Scope};
use std::fmt;

/// A cloneable handle for spawning actors on a running system from anywhere (any thread, or a
/// behaviour through [`crate::Context::system`]).
#[derive(Clone)]
pub struct SystemHandle {
    /// The system's pooled executor.
    exec: ExecRef,
}

impl fmt::Debug for SystemHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SystemHandle")
            .field("live_actors", &self.live_actors())
            .finish()
    }
}

impl SystemHandle {
    pub(crate) fn from_executor(exec: ExecRef) -> Self {
        Self { exec }
    }

    pub(crate) fn executor(&self) -> &ExecRef {
        &self.exec
    }

    /// Runs `a` and `b`, possibly in parallel, on this system's workers, and returns both
    /// results ([`crate::join`]); blocks the calling thread meanwhile. From a thread outside the
    /// system the computation is submitted to the workers' common queue (seed 004) and joins
    /// there; on one of the system's workers (a behaviour, a task) it is [`crate::join`]. On a
    /// system whose workers take no tasks (caller-driven, or a policy that says so with
    /// [`crate::policy::Policy::helps_with_tasks`]) or whose workers have exited, it runs on
    /// the calling thread. A panic in `a` or `b` is resumed here.
    ///
    /// ```
    /// let system = actorium::ActorSystem::builder().workers(2).build().unwrap();
    /// let v: Vec<u64> = (1..=1000).collect();
    /// let (l, r) = v.split_at(500);
    /// let (a, b) = system.join(|| l.iter().sum::<u64>(), || r.iter().sum::<u64>());
    /// assert_eq!(a + b, 500_500);
    /// system.stop();
    /// ```
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.on_workers(|| forkjoin::join(a, b))
    }

    /// Runs `op` with a fork/join [`Scope`] on this system's workers ([`crate::scope`]), and
    /// returns once it and every task spawned in the scope have finished; blocks the calling
    /// thread meanwhile. Where it runs: as [`Self::join`].
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.on_workers(|| forkjoin::scope(op))
    }

    /// Runs `f` on one of this system's workers, blocking the calling thread, when the calling
    /// thread is none of them and the workers take tasks; otherwise on the calling thread.
    fn on_workers<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match self.exec.crew() {
            Some(crew) if crew.has_thieves() && !crew.is_closed() && !forkjoin::on_crew(crew) => {
                forkjoin::run_on(crew, f)
            }
            _ => f(),
        }
    }

    /// Spawns `actor`: it gets the next queue ticket (round-robin over all queues), and its
    /// `started` hook is queued before any message. On a system that is stopping, the actor
    /// is dropped and the returned address is dead (every send fails); use
    /// [`Self::try_spawn`] to get the actor back instead.
    pub fn spawn<A: Actor>(&self, actor: A) -> Addr<A> {
        Addr::from_cell(cell::spawn_or_dead(
            &self.exec,
            actor,
            false,
            Placement::Pooled,
        ))
    }

    /// Spawns `actor`, or gives it back if the system is stopping.
    pub fn try_spawn<A: Actor>(&self, actor: A) -> Result<Addr<A>, A> {
        cell::spawn(&self.exec, actor, false, Placement::Pooled).map(Addr::from_cell)
    }

    /// Spawns a *detached* actor (seed 000): it runs on a thread of its own, so its behaviours
    /// may block (on I/O, a lock, a sleep) without holding up any worker. It is otherwise an
    /// ordinary actor of this system: same API, same addresses, same statuses; the thread ends
    /// when the actor terminates. Works on either executor.
    pub fn spawn_detached<A: Actor>(&self, actor: A) -> Addr<A> {
        Addr::from_cell(cell::spawn_or_dead(
            &self.exec,
            actor,
            false,
            Placement::Detached,
        ))
    }

    /// Spawns `actor` and returns a [`JoinHandle`] that waits for it to terminate and hands
    /// back its final value if it ends with [`crate::Allocation::Finished`].
    pub fn spawn_joinable<A: Actor>(&self, actor: A) -> (Addr<A>, JoinHandle<A>) {
        let cell = cell::spawn_or_dead(&self.exec, actor, true, Placement::Pooled);
        (Addr::from_cell(cell.clone()), JoinHandle::new(cell))
    }

    /// The home worker of message queue `queue` (see [`Addr::queue`]): the worker whose range
    /// of queues it starts in. Queue stealing may move a queue to another worker while the
    /// system runs; this is where placement by ticket puts an actor's work to begin with.
    ///
    /// # Panics
    /// If `queue` is not below the system's number of queues (the actor-centric executor has
    /// none).
    pub fn worker_of_queue(&self, queue: usize) -> usize {
        match self.exec.worker_of_queue(queue) {
            Some(w) => w,
            None if self.exec.is_actor_centric() => panic!(
                "queue {queue} does not exist: the actor-centric executor has a mailbox per \
                 actor, not message queues"
            ),
            None => panic!(
                "queue {queue} does not exist: this system has {} message queues",
                self.exec.queues()
            ),
        }
    }

    /// Actors spawned and not yet terminal.
    pub fn live_actors(&self) -> usize {
        self.exec.shared().life.live()
    }

    /// Whether this system runs the actor-centric executor (built with
    /// [`crate::ActorSystemBuilder::policy`]).
    pub fn is_actor_centric(&self) -> bool {
        self.exec.is_actor_centric()
    }
}
