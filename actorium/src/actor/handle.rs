//! The spawning handle of a running system.

use super::cell;
use super::{Actor, Addr, Context, JoinHandle};
use crate::core::{ExecRef, Placement};
use crate::executor::forkjoin::{self, Scope};
use crate::runtime::pool::ResizeError;
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
    /// Reports `e` as the system reports its own events (its hook, or the default way).
    #[cfg(feature = "remote")]
    pub(crate) fn report(&self, e: &crate::Event<'_>) {
        self.exec.shared().report(e);
    }

    pub(crate) fn from_executor(exec: ExecRef) -> Self {
        Self { exec }
    }

    pub(crate) fn executor(&self) -> &ExecRef {
        &self.exec
    }

    /// Runs `a` and `b`, possibly in parallel, on this system's workers, and returns both
    /// results ([`crate::join`]); blocks the calling thread meanwhile. From a thread outside the
    /// system the computation is submitted to the workers' common queue (as in Java's
    /// fork/join work stealing: Doug Lea, "A Java Fork/Join Framework", 2000) and joins
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
        match self.exec.table() {
            Some(table)
                if table.has_thieves() && !table.is_closed() && !forkjoin::on_table(table) =>
            {
                forkjoin::run_on(table, f)
            }
            _ => f(),
        }
    }

    /// Spawns `actor`: it gets a queue by the executor's placement (spread over the queues;
    /// the actor-centric executor gives it a mailbox instead), and its
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

    /// Spawns an actor whose state is built, by `build`, with its own context: its address
    /// ([`Context::address`]) exists before its state, so actors that need each other's
    /// addresses (a ring, a ping-pong pair, a parent and its children) are wired without a
    /// set-up message (actix's `Actor::create`). `build` runs on the actor's worker as its
    /// first envelope, before its `started` hook and before any message (messages sent to the
    /// returned address meanwhile wait). If `build` panics, the actor ends as panicked. On a
    /// stopping system, `build` is dropped unrun and every send to the address fails.
    ///
    /// ```
    /// use actorium::{Actor, ActorSystem, Addr, Allocation, Context, Receive, WeakAddr};
    /// use std::sync::mpsc;
    ///
    /// // A ring of three: each holds the next; the last holds the first.
    /// struct Node { next: Option<Addr<Node>>, first: WeakAddr<Node>, done: mpsc::Sender<u32> }
    /// impl Actor for Node {}
    /// impl Receive<u32> for Node {
    ///     fn receive(&mut self, hops: u32, _: &mut Context<'_, Self>) -> Allocation {
    ///         match (&self.next, hops) {
    ///             (_, 6) => self.done.send(hops).unwrap(),
    ///             (Some(n), _) => n.send(hops + 1).unwrap(),
    ///             (None, _) => self.first.upgrade().unwrap().send(hops + 1).unwrap(),
    ///         }
    ///         Allocation::Nodelete
    ///     }
    /// }
    /// let system = ActorSystem::new()?;
    /// let (tx, rx) = mpsc::channel();
    /// let ring = system.spawn_with(move |ctx| {
    ///     let first = ctx.address().downgrade(); // no cycle of strong addresses
    ///     let last = ctx.spawn(Node { next: None, first: first.clone(), done: tx.clone() });
    ///     let middle = ctx.spawn(Node { next: Some(last), first: first.clone(), done: tx.clone() });
    ///     Node { next: Some(middle), first, done: tx }
    /// });
    /// ring.send(0).unwrap(); // may arrive before the state is built: it waits
    /// assert_eq!(rx.recv().unwrap(), 6);
    /// # drop(system);
    /// # Ok::<(), actorium::ConfigError>(())
    /// ```
    pub fn spawn_with<A, F>(&self, build: F) -> Addr<A>
    where
        A: Actor,
        F: FnOnce(&mut Context<'_, A>) -> A + Send + 'static,
    {
        Addr::from_cell(cell::spawn_with(&self.exec, Box::new(build)))
    }

    /// Spawns `actor`, or gives it back if the system is stopping.
    pub fn try_spawn<A: Actor>(&self, actor: A) -> Result<Addr<A>, A> {
        cell::spawn(&self.exec, actor, false, Placement::Pooled).map(Addr::from_cell)
    }

    /// Spawns a *detached* actor (CAF's scheduler manual: the C++ Actor Framework manual,
    /// section "Scheduler"): it runs on a thread of its own, so its behaviours may block (on
    /// I/O, a lock, a sleep) without holding up any worker. It is otherwise an ordinary actor
    /// of this system: same API, same addresses, same statuses; the thread ends when the actor
    /// terminates. Works on either executor.
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
    #[doc(hidden)]
    // Hidden: a view of the message-centric executor's placement, for the benchmark suite's
    // balance workloads (which load chosen workers, as the Cforall actor thesis's do) and the
    // placement tests; placement may change in any release, so this is no stable interface.
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

    /// The queue that the `k`-th spawn from outside the workers gets (counting from 0, on a
    /// fresh message-centric system where nothing else spawns): round-robin over the queues
    /// for the first [`crate::ActorSystem::queues`] spawns, one actor per queue, then runs of 64
    /// consecutive spawns per queue (consecutive actors usually talk to each other, and those
    /// in one queue do so without locks: see the README, "Placement"), the queues in turn
    /// (with queue stealing and more workers than CPUs, over the queues of as many workers as
    /// there are CPUs, evenly spaced among all: the first spawns as many, then the runs); with
    /// queue stealing off, which could not even them out, the runs are dealt to the workers'
    /// ranges of queues in turn. That is what this function returns. One exception it cannot
    /// see: with queue stealing off and more than one worker, a thread that sent the actor it
    /// spawned last a message before spawning again (independent jobs, fed as they are
    /// spawned) gets plain round-robin, `k mod queues` (as in the Cforall actor system: Colby
    /// Parsons, MMath thesis, Waterloo 2023), for that spawn instead. Actors spawned by
    /// behaviours start in their spawner's worker's queues.
    ///
    /// ```
    /// let system = actorium::ActorSystem::builder()
    ///     .workers(2)
    /// #   .tune("cpus=2").unwrap() // (the layout of a host with a CPU per worker)
    ///     .build()?;
    /// assert_eq!(system.queues(), 32);
    /// assert_eq!(system.handle().queue_of_spawn(5), 5);
    /// assert_eq!(system.handle().queue_of_spawn(32), 0);
    /// assert_eq!(system.handle().queue_of_spawn(32 + 63), 0);
    /// assert_eq!(system.handle().queue_of_spawn(32 + 64), 1);
    /// let seed = actorium::ActorSystem::builder()
    ///     .workers(2)
    ///     .queue_stealing(actorium::QueueStealing::None)
    ///     .build()?;
    /// assert_eq!(seed.handle().queue_of_spawn(32 + 64), 16); // worker 1's first queue
    /// assert_eq!(seed.handle().queue_of_spawn(32 + 2 * 64), 1); // worker 0's second
    /// # Ok::<(), actorium::ConfigError>(())
    /// ```
    ///
    /// # Panics
    /// On the actor-centric executor, which has no message queues.
    #[doc(hidden)]
    // Hidden: a view of the message-centric executor's placement, for the benchmark suite's
    // balance workloads (which load chosen workers, as the Cforall actor thesis's do) and the
    // placement tests; placement may change in any release, so this is no stable interface.
    pub fn queue_of_spawn(&self, k: usize) -> usize {
        self.exec
            .queue_of_spawn(k)
            .expect("the actor-centric executor has a mailbox per actor, not message queues")
    }

    /// Actors spawned and not yet terminal.
    pub fn live_actors(&self) -> usize {
        self.exec.shared().life.live()
    }

    /// Whether this system runs the actor-centric executor (built with
    /// [`crate::ActorSystemBuilder::policy`]).
    #[doc(hidden)]
    // Hidden: which executor a system runs, for the benchmark suite; no stable interface.
    pub fn is_actor_centric(&self) -> bool {
        self.exec.is_actor_centric()
    }

    /// The most worker threads that run: [`crate::ActorSystemBuilder::workers`], changed by
    /// [`Self::add_workers`] and [`Self::remove_workers`] (1 for a caller-driven policy: the
    /// calling thread). With compaction on ([`crate::ActorSystemBuilder::compaction`]) fewer
    /// may be active: [`Self::active_workers`].
    pub fn workers(&self) -> usize {
        self.exec.workers()
    }

    /// Workers active now: [`Self::workers`], less those compaction deactivated because they
    /// would not pay for themselves (their threads park until the load needs them).
    pub fn active_workers(&self) -> usize {
        self.exec
            .table()
            .map_or_else(|| self.exec.workers(), |t| t.len())
    }

    /// Adds `n` worker threads while the system runs (and makes every worker active: compaction
    /// may deactivate some again) ("Manual Resizing" in the Cforall runtime:
    /// Thierry Delisle, PhD thesis, Waterloo 2022, chapter "Scheduling in practice"), on either
    /// executor; returns the new number of workers. Callable from any thread, including a
    /// behaviour. The new workers take part at once: the message-centric executor re-divides
    /// its queues over the workers (whole queues move, as in a steal), the actor-centric one
    /// gives them jobs through its policy, and fork/join tasks are stolen by them.
    ///
    /// # Errors
    /// [`ResizeError::TooMany`] beyond [`crate::ActorSystemBuilder::max_workers`] (or, on the
    /// message-centric executor, beyond its number of message queues), saying how many there
    /// are; [`ResizeError::Stopped`] once the system is stopping. Nothing changes then.
    ///
    /// ```
    /// let system = actorium::ActorSystem::builder().workers(1).queues(8).build()?;
    /// assert_eq!(system.add_workers(3)?, 4);
    /// assert_eq!(system.workers(), 4);
    /// assert_eq!(system.remove_workers(2)?, 2);
    /// system.stop();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_workers(&self, n: usize) -> Result<usize, ResizeError> {
        if self.exec.shared().life.closed() {
            return Err(ResizeError::Stopped);
        }
        self.exec.add_workers(n)
    }

    /// Removes `n` worker threads while the system runs; returns the new number of workers.
    /// Each removed worker finishes the behaviour (or task) it is running, hands what it holds
    /// to the remaining workers (nothing is lost or run twice), and ends. Called from outside
    /// the system it waits for those threads to end; from a thread of the system (a behaviour,
    /// a fork/join task, a detached actor) it does not (the caller may be one of them).
    ///
    /// # Errors
    /// [`ResizeError::TooFew`] when that would leave no worker (saying how many there are);
    /// [`ResizeError::Stopped`] once the system is stopping. Nothing changes then.
    ///
    /// ```
    /// let system = actorium::ActorSystem::builder().workers(2).build()?;
    /// let err = system.remove_workers(2).unwrap_err();
    /// assert!(err.to_string().contains("the system has 2"));
    /// assert_eq!(system.workers(), 2);
    /// system.stop();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn remove_workers(&self, n: usize) -> Result<usize, ResizeError> {
        if self.exec.shared().life.closed() {
            return Err(ResizeError::Stopped);
        }
        self.exec.remove_workers(n)
    }

    /// Adds `n` workers for as long as the returned guard lives: dropping it removes as many
    /// (Cforall's `processor p[n]` block, or its heap-allocated processors when the guard is
    /// boxed or moved elsewhere; it may move between threads).
    ///
    /// # Errors
    /// As [`Self::add_workers`].
    ///
    /// ```
    /// let system = actorium::ActorSystem::builder().workers(1).queues(8).build()?;
    /// {
    ///     let _extra = system.extra_workers(3)?;
    ///     assert_eq!(system.workers(), 4);
    /// }
    /// assert_eq!(system.workers(), 1);
    /// system.stop();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn extra_workers(&self, n: usize) -> Result<ExtraWorkers, ResizeError> {
        self.add_workers(n)?;
        Ok(ExtraWorkers {
            system: self.clone(),
            n,
        })
    }
}

/// Workers added by [`SystemHandle::extra_workers`], removed when this is dropped (if the
/// system still runs; a failed removal is ignored, as a drop cannot report it: use
/// [`ExtraWorkers::release`] to see it).
#[derive(Debug)]
#[must_use = "dropping it removes the workers it added"]
pub struct ExtraWorkers {
    system: SystemHandle,
    n: usize,
}

impl ExtraWorkers {
    /// How many workers this guard added.
    pub fn count(&self) -> usize {
        self.n
    }

    /// Removes the workers now; the new number of workers.
    ///
    /// # Errors
    /// As [`SystemHandle::remove_workers`].
    pub fn release(mut self) -> Result<usize, ResizeError> {
        let n = std::mem::take(&mut self.n);
        self.system.remove_workers(n)
    }
}

impl Drop for ExtraWorkers {
    fn drop(&mut self) {
        if self.n > 0 {
            let _ = self.system.remove_workers(self.n);
        }
    }
}
