//! The scheduling policy concept of CAF ("Policies" in CAF's scheduler manual: the C++ Actor
//! Framework manual, section "Scheduler"), as a trait users can implement: see [`Policy`].

use super::Executor as Inner;
use crate::executor::mailbox::{Job, Resumable};
use crate::runtime::counters::Counters;
use crate::runtime::loom::sync::atomic::{fence, Ordering};
use crate::runtime::tasks::{TaskSearch, TaskWorker};

pub(crate) mod sealed {
    /// How the runtime calls a policy's code ([`super::Policy::CALLED`]): a public type in a
    /// private module, so that only this crate's policies can choose `WorkerVisible`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Called {
        /// The worker is hidden while policy code runs: a send it makes is an outside send.
        WorkerHidden,
        /// Called as is (policy code that sends nothing and never asks for its worker).
        WorkerVisible,
    }

    /// Who may implement [`super::Policy`]: this crate's policies; anyone's with the
    /// `unstable-policy` feature (the trait's hooks may still change before 1.0).
    pub trait Implementable {}

    #[cfg(feature = "unstable-policy")]
    impl<T> Implementable for T {}
}

/// A scheduling policy for the actor-centric executor; [`crate::policy`] has the built-in
/// ones and an example.
///
/// The actor-centric executor owns the threads and the jobs' life cycle; a [`Policy`] decides
/// where a job waits and which worker runs it next. Its state is split as in CAF:
/// *coordinator data* (one per scheduler), *worker data* (one per worker, reachable from every
/// thread: what thieves and external enqueues touch) and, Rust's addition, *local data* (one per
/// worker, touched only by its own thread, such as the owner end of a deque).
///
/// The runtime calls:
/// - [`Policy::central_enqueue`] for a job made outside any worker (a spawn or send from `main`,
///   from another system, from a detached actor);
/// - [`Policy::external_enqueue`] to hand a job to one given worker (the runtime uses it for
///   its shutdown requests; policies use it to place central jobs);
/// - [`Policy::internal_enqueue`] for a job made by a behaviour running on a worker;
/// - [`Policy::resume_job_later`] for an actor that used its `max_throughput` and has more mail,
///   or whose worker a resize removed while it ran (the job ends early, for another worker);
/// - [`Policy::dequeue`] for the next job of a worker (blocking is the policy's business);
/// - the hooks [`Policy::before_resume`], [`Policy::after_resume`], [`Policy::after_completion`],
///   and [`Policy::during_resume`] between the messages of a long job;
/// - [`Policy::worker_added`] and [`Policy::worker_removed`] when the system's workers are
///   resized while running ("Manual Resizing" in the Cforall runtime: Thierry Delisle, PhD
///   thesis, Waterloo 2022, chapter "Scheduling in practice"): a policy that keeps jobs per
///   worker must move a removed worker's jobs in `worker_removed`.
///
/// Enqueues run under the read side of the resize lock: a policy's enqueue must not block,
/// and must not send messages (policy code is called with the worker hidden, and a send from
/// it would enter a second read section, which may wait for a resize that waits for this one).
///
/// A policy that blocks in `dequeue` must be woken by its enqueues. [`WorkerCtx::idle_sleep`] and
/// [`Scheduler::notify`] / [`Scheduler::notify_any`] give it the runtime's idle sleep (Delisle's
/// thesis: event fds, benaphores, a handshake that never strands a job); a policy may also use its
/// own mutex and condition variable ([`crate::policy::WorkSharing`] does).
///
/// Implementing it needs the `unstable-policy` feature: its hooks may still change before
/// 1.0. Without it, the built-in policies are the ones a system can use.
pub trait Policy: sealed::Implementable + Send + Sync + Sized + 'static {
    /// State shared by the whole scheduler (CAF's `coordinator_data`).
    type Coordinator: Send + Sync;
    /// Per-worker state that other threads may reach (CAF's `worker_data`).
    type Worker: Send + Sync;
    /// Per-worker state that only the worker's own thread touches.
    type Local: Send;

    /// Builds the coordinator data for `workers` workers.
    fn coordinator(&self, workers: usize) -> Self::Coordinator;

    /// Builds worker `index`'s shared and local data.
    fn worker(&self, coordinator: &Self::Coordinator, index: usize) -> (Self::Worker, Self::Local);

    /// A job made outside the workers (e.g. a send from `main`).
    fn central_enqueue(&self, sched: &Scheduler<'_, Self>, job: Job);

    /// Hands `job` to worker `worker`. Default: [`Self::central_enqueue`] (right for a policy
    /// whose workers all take from one queue: any worker may run it).
    fn external_enqueue(&self, sched: &Scheduler<'_, Self>, _worker: usize, job: Job) {
        self.central_enqueue(sched, job)
    }

    /// A job made by a behaviour running on worker `me`. Default: [`Self::central_enqueue`].
    fn internal_enqueue(&self, me: &mut WorkerCtx<'_, Self>, job: Job) {
        self.central_enqueue(me.scheduler(), job)
    }

    /// `job` used its `max_throughput` and has more mail, or was cut short because a resize
    /// removed worker `me` (then, unless a resize added it back meanwhile,
    /// [`Self::worker_removed`] follows on the same thread: a job put on `me`'s own queues
    /// moves on there). Default: [`Self::central_enqueue`].
    fn resume_job_later(&self, me: &mut WorkerCtx<'_, Self>, job: Job) {
        self.central_enqueue(me.scheduler(), job)
    }

    /// The next job for worker `me`. May block; `None` makes the worker call again at once.
    fn dequeue(&self, me: &mut WorkerCtx<'_, Self>) -> Option<Job>;

    /// Called before a job runs.
    fn before_resume(&self, _me: &mut WorkerCtx<'_, Self>, _job: &Job) {}

    /// Called after a job ran, with how it ended.
    fn after_resume(&self, _me: &mut WorkerCtx<'_, Self>, _job: &Job, _result: Resumable) {}

    /// Called while a long job runs: between two of its messages (never inside a behaviour;
    /// possibly right after its last one), every [`LONG_JOB_CHECK`](crate::executor::mailbox::LONG_JOB_CHECK) messages or so of one
    /// resume (not on a worker a resize removed: its job ends there instead). CAF has no such
    /// hook because its relaxed tier polls every 10 ms, so an idle
    /// worker there eventually steals what waits behind a long job; actorium's idle workers
    /// sleep instead, so a policy that keeps jobs where only their owner looks should wake a
    /// sleeper here when jobs wait behind this one (the built-in work stealing does; a policy
    /// wrapping it must forward this call). It must not block. Default: nothing.
    fn during_resume(&self, _me: &mut WorkerCtx<'_, Self>) {}

    /// Called after a job ran for the last time (its actor terminated). `job.id()` may be
    /// reused from now on — even already: a `Destroyed` actor respawned at once has the same
    /// id, and its new job may be queued before this hook runs.
    fn after_completion(&self, _me: &mut WorkerCtx<'_, Self>, _job: &Job) {}

    /// Worker `index` was added while running ([`crate::SystemHandle::add_workers`]): its
    /// data was built with [`Self::worker`] (or kept from an earlier time the row was used),
    /// and it starts dequeuing now; [`Scheduler::workers`] counts it. Default: nothing.
    fn worker_added(&self, _sched: &Scheduler<'_, Self>, _index: usize) {}

    /// Worker `me` was removed while running ([`crate::SystemHandle::remove_workers`]) and is
    /// about to end, on its own thread. It must move every job it holds — in its local data
    /// and in its worker data — to the remaining workers, e.g. with [`Self::central_enqueue`]:
    /// [`Scheduler::workers`] no longer counts it, and no enqueue puts jobs on it any more (the
    /// runtime runs every enqueue and this hook under a lock that a resize takes for writing:
    /// Delisle's readers-writer lock). Thieves may still take jobs from it meanwhile. A job
    /// left behind would never run, and its actor would hang. A policy whose workers keep no
    /// jobs of their own (one queue for all, as [`crate::policy::WorkSharing`]) needs nothing
    /// here: the default does nothing.
    ///
    /// A policy must also let a removed worker come back to the runtime: the runtime hands it
    /// a job for which [`Job::is_shutdown`] holds, with [`Self::external_enqueue`]; any worker
    /// that takes one must return it from [`Self::dequeue`] (as for a shutdown).
    fn worker_removed(&self, _me: &mut WorkerCtx<'_, Self>) {}

    /// Whether [`Self::internal_enqueue`] and [`Self::resume_job_later`] only ever put the job
    /// on the calling worker's own queues (its local or worker data), as work stealing's do.
    /// The runtime then calls them without the resize lock's read section (one exchange and
    /// one store saved per call): a removed worker makes them only before it hands over its
    /// queues in [`Self::worker_removed`], on the same thread. Answer `true` only if that
    /// holds; the default is `false`.
    fn enqueues_locally(&self) -> bool {
        false
    }

    /// How the runtime calls this policy's code: with the worker hidden (see the trait docs), for
    /// every policy but the built-in [`crate::policy::WorkStealing`] and
    /// [`crate::policy::WorkSharing`], whose code sends nothing and never asks which worker it runs
    /// on, so hiding it would only cost time (five thread-local swaps per job). Its type cannot be
    /// named outside this crate: a policy of yours keeps the default. Panics are caught either way.
    #[doc(hidden)]
    const CALLED: sealed::Called = sealed::Called::WorkerHidden;

    /// Checks the policy's settings when the system is built; an `Err` names what to change
    /// and is returned by [`crate::ActorSystemBuilder::build`].
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }

    /// A policy driven by its caller starts no worker thread: jobs run when the program calls
    /// [`crate::ActorSystem::run_once`] (one worker, index 0, the calling thread), or while it
    /// waits in `stop` or `JoinHandle::join`. [`crate::policy::Testing`] is one.
    fn driven_by_caller(&self) -> bool {
        false
    }

    /// Whether this policy's workers look for fork/join tasks ([`crate::join`],
    /// [`crate::scope`]) when they have no job. They do so whenever `dequeue` returns (with a
    /// job or `None`), and a task pushed while a worker sleeps in [`WorkerCtx::idle_sleep`]
    /// wakes it (`idle_sleep` then returns `None`); so a policy that polls should return `None`
    /// from `dequeue` when [`WorkerCtx::tasks_waiting`] says so, and sleep through `idle_sleep`.
    /// One whose `dequeue` blocks on its own (as [`crate::policy::WorkSharing`]'s condition
    /// variable) should return `false`: its workers then run only the tasks they fork
    /// themselves, and a computation submitted from outside ([`crate::SystemHandle::join`]) runs
    /// on the calling thread.
    fn helps_with_tasks(&self) -> bool {
        true
    }
}

/// The scheduler as a policy sees it: coordinator and worker data, and the idle sleep.
pub struct Scheduler<'a, P: Policy> {
    pub(super) inner: &'a Inner<P>,
}

impl<'a, P: Policy> Scheduler<'a, P> {
    /// The coordinator data.
    pub fn coordinator(&self) -> &'a P::Coordinator {
        &self.inner.coord
    }

    /// Worker `i`'s shared data.
    pub fn worker(&self, i: usize) -> &'a P::Worker {
        &self.inner.pool.data(i).worker
    }

    /// Number of workers.
    pub fn workers(&self) -> usize {
        self.inner.pool.len()
    }

    /// Wakes worker `i` if it sleeps in [`WorkerCtx::idle_sleep`] (or makes its next idle
    /// sleep return at once). Call it after publishing the job `i` must see. Returns whether a
    /// system call was made.
    pub fn notify(&self, i: usize) -> bool {
        // The job was published before; the sleeper publishes its state before searching.
        // With both fences, one of the two sees the other (Dekker), so no job is stranded.
        fence(Ordering::SeqCst);
        self.inner.pool.notify(i)
    }

    /// Wakes one worker sleeping in [`WorkerCtx::idle_sleep`], if any (Delisle's general
    /// notification). Returns whether one was woken.
    pub fn notify_any(&self) -> bool {
        fence(Ordering::SeqCst);
        self.inner.pool.notify_any()
    }

    /// Whether some worker may be asleep in [`WorkerCtx::idle_sleep`] (one load).
    pub fn has_sleepers(&self) -> bool {
        self.inner.pool.has_idle()
    }
}

/// A worker as a policy sees it: its index, its data, the scheduler.
pub struct WorkerCtx<'a, P: Policy> {
    pub(super) sched: Scheduler<'a, P>,
    pub(super) index: usize,
    pub(super) local: &'a mut P::Local,
    pub(super) counters: Option<&'a Counters>,
}

impl<'a, P: Policy> WorkerCtx<'a, P> {
    /// Whether fork/join tasks wait for an idle worker ([`crate::join`], [`crate::scope`]): a
    /// `dequeue` that polls should then return `None`, so that the worker's loop runs them
    /// (one load when no worker shows tasks, a few when one does). While a worker shows tasks
    /// that none can take (its others were stolen while it runs a long one), this says yes
    /// for a short while (100 µs: a fine-grained computation publishes more within
    /// microseconds), then no, and the policy idles and sleeps as it would without tasks.
    pub fn tasks_waiting(&self) -> bool {
        match self.task_worker() {
            Some(t) => t.worth_looking(),
            None => crate::runtime::tasks::to_take(&self.sched.inner.pool, self.index),
        }
    }

    /// This worker's fork/join state, if the calling thread is this worker (not a caller
    /// driving a system by hand).
    fn task_worker(&self) -> Option<&TaskWorker<'_>> {
        let table: &crate::runtime::worker_table::WorkerTable = &self.sched.inner.pool;
        // SAFETY: used during the caller's call only (tied to `&self`), on the calling thread,
        // whose worker loop outlives it.
        unsafe { TaskWorker::current() }
            .filter(|t| std::ptr::eq(t.table(), table) && t.index() == self.index)
    }

    /// This worker's index.
    pub fn index(&self) -> usize {
        self.index
    }

    /// This worker's local data.
    pub fn local(&mut self) -> &mut P::Local {
        self.local
    }

    /// This worker's shared data.
    pub fn data(&self) -> &'a P::Worker {
        self.sched.worker(self.index)
    }

    /// The scheduler.
    pub fn scheduler(&self) -> &Scheduler<'a, P> {
        &self.sched
    }

    /// Idle sleep (Delisle's thesis): announces this worker idle, runs `search` (which must look at
    /// every place a job for this worker could have been published), and blocks in the kernel
    /// if it found nothing, until an enqueue calls [`Scheduler::notify`] for this worker or
    /// [`Scheduler::notify_any`] (or for at most a millisecond while another worker runs
    /// fork/join tasks that it may fork more of). Returns what `search` found, or `None` after
    /// a wake-up (call `dequeue`'s search again).
    pub fn idle_sleep(&mut self, search: impl FnOnce(&mut Self) -> Option<Job>) -> Option<Job> {
        // An emptied deque stops showing tasks first, as in the worker loop's idle sleep (the
        // others would nap beside it).
        if let Some(t) = self.task_worker() {
            t.unshow();
        }
        let pool = &self.sched.inner.pool;
        pool.announce(self.index);
        fence(Ordering::SeqCst);
        if let Some(job) = search(self) {
            pool.retire(self.index);
            return Some(job);
        }
        // Fork/join tasks count as work too: come back without a job, and the worker's loop
        // finds them after this turn (tasks only shown, none public: sleep briefly). So does a
        // removal (ordered by the fence above against the removal's fence before its
        // notification): come back, and the loop leaves.
        let found = self
            .task_worker()
            .map_or(TaskSearch::Nothing, |t| t.search());
        if found == TaskSearch::Tasks || !pool.is_active(self.index) {
            pool.retire(self.index);
            return None;
        }
        let _ = pool.sleep(self.index, found.limit(None));
        pool.retire(self.index);
        None
    }

    pub(crate) fn counters(&self) -> Option<&Counters> {
        self.counters
    }
}
