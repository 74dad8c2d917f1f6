//! Scopes: [`scope`], [`Scope::spawn`] and [`Scope::fork`] with its [`Forked`] handle, and the
//! list through which threads that are no worker of the pool hand a scope their tasks (a
//! trampoline in the common queue runs them).

use super::job::{HeapJob, JobResult, Latch};
use super::*;

/// A scope's tasks spawned from threads that are no worker of its pool (made at the first).
/// Shared with the trampoline in the common queue, which may run after the scope has ended
/// (it then finds the list empty).
#[derive(Default)]
pub(super) struct Outside(std::sync::OnceLock<OutsideList>);

type OutsideList = Arc<OutsideTasks>;

#[derive(Default)]
struct OutsideTasks {
    tasks: Mutex<std::collections::VecDeque<JobRef>>,
    /// A trampoline is in the common queue (at most one: each one left there after the
    /// waiter ran the tasks would show tasks to every waiter of the pool until an idle worker
    /// took it, keeping them from parking).
    queued: std::sync::atomic::AtomicBool,
}

impl Outside {
    fn list(&self) -> OutsideList {
        self.0.get_or_init(OutsideList::default).clone()
    }

    /// The oldest task waiting, if any.
    pub(super) fn pop(&self) -> Option<JobRef> {
        self.0.get().and_then(|l| l.pop())
    }
}

impl OutsideTasks {
    pub(super) fn pop(&self) -> Option<JobRef> {
        self.pop_more().map(|(j, _)| j)
    }

    /// The oldest task waiting, if any, and whether more wait behind it.
    fn pop_more(&self) -> Option<(JobRef, bool)> {
        let mut g = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        g.pop_front().map(|j| (j, !g.is_empty()))
    }
}

/// Puts a trampoline for `list` in `table`'s common queue unless one is there: an idle worker
/// that takes it runs the oldest task of the list (whoever pops a task runs it), after
/// queueing the next trampoline if tasks remain. Tagged as the scope's tasks (`tag`), so that
/// what the task forks on that worker is the scope's waiter's to help with.
fn queue_trampoline(table: &WorkerTable, list: &OutsideList, tag: usize) {
    if list.queued.swap(true, Ordering::AcqRel) {
        return;
    }
    let (l, c) = (list.clone(), TablePtr(table));
    let trampoline = HeapJob::new(
        move || {
            let c = c;
            l.queued.store(false, Ordering::Release);
            let Some((j, more)) = l.pop_more() else {
                return;
            };
            if more {
                // SAFETY: the table outlives the scope, which waits for the task popped above.
                queue_trampoline(unsafe { &*c.0 }, &l, tag);
            }
            // SAFETY: popped from the scope's list: ours alone, unrun.
            unsafe { j.execute() };
        },
        tag,
    );
    tasks::inject(table, trampoline.into_job_ref());
}

/// A pool's address, sendable to a trampoline.
#[derive(Clone, Copy)]
struct TablePtr(*const WorkerTable);
// SAFETY: a `WorkerTable` is `Sync`; the trampoline reads it only while a task of a live scope on it
// is counted (see `queue_trampoline`).
unsafe impl Send for TablePtr {}

// --- Scopes ---

/// A fork/join scope: tasks spawned in it may borrow from outside it, and all have finished
/// when [`scope`] returns. Made by [`scope`], [`crate::SystemHandle::scope`] or
/// [`crate::Context::scope`].
pub struct Scope<'scope> {
    /// The pool the scope's tasks run on (null: the scope runs on a thread outside any pool,
    /// and its tasks run where they are spawned).
    table: *const WorkerTable,
    /// Tasks not finished, plus one for the scope's body.
    pending: AtomicUsize,
    /// Set when `pending` reaches 0; the waiting worker parks on it.
    latch: SpinLatch,
    /// The first panic of a task, resumed when the scope ends.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// Tasks spawned from threads that are no worker of the pool.
    outside: Outside,
    /// `'scope` is invariant, as in `std::thread::scope`.
    marker: PhantomData<&'scope mut &'scope ()>,
}

// SAFETY: a scope is shared by its tasks on several workers: `pending`, `latch` and `panic` are
// synchronised; `table` is only compared and read (the pool outlives every scope on it).
unsafe impl Sync for Scope<'_> {}
// SAFETY: as above; a scope is referred to, never moved, while tasks run.
unsafe impl Send for Scope<'_> {}

impl fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("pending", &self.pending.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// Runs `op` with a [`Scope`] in which it can spawn tasks that borrow from the caller's stack,
/// and returns once `op` and every task spawned in the scope have finished.
///
/// On a worker of an actor system, spawned tasks go on the worker's deque, where idle workers
/// may take them; when `op` returns, the worker runs the tasks still in its deque and helps
/// with those taken until all are done. On any other thread the tasks run where they are
/// spawned, one after the other: use [`crate::SystemHandle::scope`] from outside a system.
///
/// A panic in a task is resumed here once every task has finished (the first one, if several
/// panicked).
///
/// ```
/// let system = actorium::ActorSystem::builder().workers(2).build().unwrap();
/// let mut parts = vec![0u64; 4];
/// system.scope(|s| {
///     for (i, p) in parts.iter_mut().enumerate() {
///         s.spawn(move |_| *p = (i as u64 + 1) * 10);
///     }
/// });
/// assert_eq!(parts, [10, 20, 30, 40]);
/// system.stop();
/// ```
pub fn scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    // SAFETY: used during this call only, nested in the worker's loop.
    match unsafe { TaskWorker::current() } {
        Some(w) => scope_on(w, op),
        None => {
            let s = Scope::new(ptr::null(), usize::MAX);
            let r = panic::catch_unwind(AssertUnwindSafe(|| op(&s)));
            s.finish(r)
        }
    }
}

fn scope_on<'scope, OP, R>(w: &TaskWorker<'_>, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    let s = Scope::new(w.table(), w.index());
    let base = w.end();
    let r = panic::catch_unwind(AssertUnwindSafe(|| op(&s)));
    s.complete_one();
    wait_for(w, &s.latch, s.tag(), None, base, Some(&s.outside));
    s.finish(r)
}

impl<'scope> Scope<'scope> {
    fn new(table: *const WorkerTable, owner: usize) -> Self {
        Self {
            table,
            pending: AtomicUsize::new(1),
            latch: SpinLatch::new(owner),
            panic: Mutex::new(None),
            outside: Outside::default(),
            marker: PhantomData,
        }
    }

    /// The tag of this scope's tasks (its address).
    fn tag(&self) -> usize {
        self as *const Self as usize
    }

    /// The calling worker, if it is one of this scope's pool.
    fn worker(&self) -> Option<&TaskWorker<'_>> {
        // SAFETY: used during the caller's call only.
        unsafe { TaskWorker::current() }.filter(|w| ptr::eq(w.table(), self.table))
    }

    /// A task finished (or the body returned): the last one sets the latch.
    fn complete_one(&self) {
        // (What the task kept back is queued before the scope's body can go on.)
        publish_kept();
        if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 && !self.table.is_null() {
            // SAFETY: the scope is live (its waiter is blocked on this latch, which this sets
            // once, as `pending` reaches 0 once); nothing touches the scope after.
            unsafe { Latch::set(&self.latch as *const SpinLatch) };
        }
    }

    /// Keeps the first panic's payload. A later one is dropped outside the lock, and a panic
    /// of its `Drop` is swallowed: this runs inside a task, which must not unwind (the task's
    /// completion, and the worker's own bookkeeping, come after it).
    fn record(&self, p: Box<dyn Any + Send>) {
        let extra = {
            let mut g = self.panic.lock().unwrap_or_else(|e| e.into_inner());
            match *g {
                None => {
                    *g = Some(p);
                    None
                }
                Some(_) => Some(p),
            }
        };
        if let Some(p) = extra {
            crate::runtime::drop_payload(p);
        }
    }

    /// After every task: the body's result, or the first panic.
    fn finish<R>(self, r: std::thread::Result<R>) -> R {
        let first = self.panic.into_inner().unwrap_or_else(|e| e.into_inner());
        match (r, first) {
            (Err(p), _) | (Ok(_), Some(p)) => panic::resume_unwind(p),
            (Ok(r), None) => r,
        }
    }

    /// Pushes `jr`, a task of this scope, where it may be stolen: the calling worker's deque,
    /// or the pool's common queue from a thread outside it.
    fn submit(&self, jr: JobRef) {
        publish_kept();
        match self.worker() {
            Some(w) => w.push_public(jr),
            None => {
                // A thread that is no worker of the pool: the task waits in the scope's own list,
                // which the scope's waiter runs from (it takes no unrelated task from the
                // common queue: see the helping rule), and a trampoline in the common queue lets
                // an idle worker run it instead. Whoever pops it runs it. (Put in the common
                // queue itself, with no idle worker that takes tasks, one worker busy with this
                // scope, or work sharing, the scope would wait for it forever.)
                // SAFETY: a non-null table outlives the scope (the scope's body runs on it).
                let table = unsafe { &*self.table };
                let list = self.outside.list();
                list.tasks
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push_back(jr);
                queue_trampoline(table, &list, self.tag());
                // A waiter that parked finds it at once.
                if let Some(owner) = self.latch.parked_owner() {
                    table.slot(owner).row.unpark();
                }
            }
        }
    }

    /// Spawns a task in the scope: it runs, possibly in parallel, before the scope ends. It
    /// gets the scope, to spawn more.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// let system = actorium::ActorSystem::new().unwrap();
    /// let sum = AtomicU64::new(0);
    /// system.scope(|s| {
    ///     for i in 1..=100u64 {
    ///         let sum = &sum;
    ///         s.spawn(move |_| {
    ///             sum.fetch_add(i, Ordering::Relaxed);
    ///         });
    ///     }
    /// });
    /// assert_eq!(sum.into_inner(), 5050);
    /// system.stop();
    /// ```
    pub fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        if self.table.is_null() {
            if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| f(self))) {
                self.record(p);
            }
            return;
        }
        self.pending.fetch_add(1, Ordering::Relaxed);
        let sp = ScopePtr((self as *const Self).cast());
        let job = HeapJob::new(
            move || {
                let sp = sp;
                // SAFETY: the scope waits for this task (`pending`) before it returns, so it is
                // live while the task runs.
                let s = unsafe { &*sp.0.cast::<Scope<'scope>>() };
                if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| f(s))) {
                    s.record(p);
                }
                s.complete_one();
            },
            self.tag(),
        );
        self.submit(job.into_job_ref());
    }

    /// Forks a task and returns its handle (Java's fork/join `fork()`): [`Forked::join`] returns
    /// its result, running it on the spot if nobody has started it. A handle dropped without a join
    /// still runs before the scope ends (its result is dropped before then too), and a panic in it
    /// is resumed when the scope ends, as a spawned task's. As with [`crate::join`], a forked
    /// task may run after its forker on the same worker: never make it wait for the forker.
    ///
    /// ```
    /// fn fib(n: u64) -> u64 {
    ///     if n < 2 {
    ///         return n;
    ///     }
    ///     actorium::scope(|s| {
    ///         let a = s.fork(|| fib(n - 1));
    ///         let b = fib(n - 2);
    ///         a.join() + b
    ///     })
    /// }
    /// let system = actorium::ActorSystem::new().unwrap();
    /// assert_eq!(system.scope(|_| fib(15)), 610);
    /// system.stop();
    /// ```
    ///
    /// The handle borrows the scope (`'s`): it cannot outlive the call that was given the
    /// scope, so it is joined or dropped while the scope waits (a handle dropped after the
    /// scope ended would record a panic in a scope that is gone).
    pub fn fork<'s, F, R>(&'s self, f: F) -> Forked<'s, R>
    where
        F: FnOnce() -> R + Send + 'scope,
        R: Send + 'scope,
    {
        let w = self.worker();
        let Some(w) = w else {
            // Outside the pool: run it now.
            let result = JobResult::call(f);
            return Forked {
                inner: ForkedInner::Done(result),
                marker: PhantomData,
            };
        };
        self.pending.fetch_add(1, Ordering::Relaxed);
        let job = Arc::new(ForkJob {
            header: crate::runtime::tasks::JobHeader::new(ForkJob::<F, R>::execute, 0),
            func: UnsafeCell::new(Some(f)),
            result: UnsafeCell::new(JobResult::None),
            latch: SpinLatch::new(w.index()),
            scope: ScopePtr((self as *const Self).cast()),
            ends: AtomicU8::new(0),
        });
        let base = w.end();
        let raw = Arc::into_raw(job.clone());
        // SAFETY: the Arc reference leaked into `raw` keeps the job in place until `execute`
        // takes it back, which happens once (whoever gets the job runs it).
        let jr = unsafe { JobRef::new(raw.cast()) };
        publish_kept();
        w.push(jr);
        Forked {
            inner: ForkedInner::Pending { job, jr, base },
            marker: PhantomData,
        }
    }
}

/// A scope's address, sendable to its tasks.
#[derive(Clone, Copy)]
struct ScopePtr(*const ());
// SAFETY: a `Scope` is `Sync`, and outlives its tasks.
unsafe impl Send for ScopePtr {}

/// Disposes of the result of a task whose handle was dropped unjoined: the panic for its
/// scope, the task's or its result's destructor's.
fn unjoined<R>(result: JobResult<R>) -> Option<Box<dyn Any + Send>> {
    match result {
        JobResult::Panic(p) => Some(p),
        other => panic::catch_unwind(AssertUnwindSafe(|| drop(other))).err(),
    }
}

/// A forked task's job: shared by the handle and whoever runs it.
#[repr(C)]
struct ForkJob<F, R> {
    header: crate::runtime::tasks::JobHeader,
    func: UnsafeCell<Option<F>>,
    result: UnsafeCell<JobResult<R>>,
    latch: SpinLatch,
    scope: ScopePtr,
    /// [`RAN`] and [`DROPPED`]: whichever of the runner and a handle dropped unjoined comes
    /// second records a panic of the task in the scope (nobody will join it).
    ends: AtomicU8,
}

/// `ForkJob::ends`: the task has run (its result is written).
const RAN: u8 = 1;
/// `ForkJob::ends`: its handle was dropped without a join.
const DROPPED: u8 = 2;

// SAFETY: `func` is taken by the one runner; `result` is written by it before the latch is set
// and read by the handle after; the closure and result are `Send`.
unsafe impl<F: Send, R: Send> Sync for ForkJob<F, R> {}
// SAFETY: as above.
unsafe impl<F: Send, R: Send> Send for ForkJob<F, R> {}

impl<F: FnOnce() -> R + Send, R: Send> ForkJob<F, R> {
    unsafe fn execute(this: *const crate::runtime::tasks::JobHeader) {
        // SAFETY: `this` came from `Arc::into_raw` in `Scope::fork` (the header is the first
        // field of this `repr(C)` struct), and runs once, so that reference is taken back once.
        let job = unsafe { Arc::from_raw(this.cast::<Self>()) };
        // SAFETY: the scope waits for this task before it ends.
        let scope = unsafe { &*job.scope.0.cast::<Scope<'_>>() };
        // SAFETY: the one runner takes the closure and writes the result before `RAN` and the
        // latch.
        unsafe {
            let f = (*job.func.get()).take().expect("a job runs once");
            *job.result.get() = JobResult::call(f);
        }
        if job.ends.fetch_or(RAN, Ordering::AcqRel) & DROPPED != 0 {
            // Its handle is gone: the result is dropped here, a panic (of the task, or of the
            // result's destructor) is the scope's.
            // SAFETY: the handle, dropped, reads nothing; this thread wrote the result.
            let result = unsafe { std::mem::replace(&mut *job.result.get(), JobResult::None) };
            if let Some(p) = unjoined(result) {
                scope.record(p);
            }
        }
        // SAFETY: `job` (an `Arc`) keeps the latch alive through the call.
        unsafe { Latch::set(&job.latch as *const SpinLatch) };
        // This reference goes before the scope is told: if the handle is gone it is the last,
        // and what the job still holds (which may borrow what the scope's caller owns) is
        // dropped here, not after the scope may have returned; whatever that drop does, the
        // scope is told.
        if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| drop(job))) {
            scope.record(p);
        }
        scope.complete_one();
    }
}

enum ForkedInner<'scope, R> {
    /// Forked on a worker.
    Pending {
        job: Arc<dyn ForkedJob<R> + 'scope>,
        jr: JobRef,
        base: usize,
    },
    /// Run at once (forked outside the pool).
    Done(JobResult<R>),
}

/// What a handle needs of its job, whatever the closure's type.
trait ForkedJob<R>: Send + Sync {
    fn latch(&self) -> &SpinLatch;
    fn thief(&self) -> Option<usize>;
    /// The handle is dropped without a join: if the task has run and panicked, the panic
    /// goes to the scope now (else the runner does it when it has run).
    fn abandon(&self);
    /// The result, once the latch is set.
    ///
    /// # Safety
    /// The latch is set and nobody else reads the result.
    unsafe fn take(&self) -> JobResult<R>;
}

impl<F: FnOnce() -> R + Send, R: Send> ForkedJob<R> for ForkJob<F, R> {
    fn latch(&self) -> &SpinLatch {
        &self.latch
    }
    fn thief(&self) -> Option<usize> {
        self.header.thief()
    }
    fn abandon(&self) {
        if self.ends.fetch_or(DROPPED, Ordering::AcqRel) & RAN != 0 {
            // SAFETY: `RAN` (Acquire) orders the runner's write of the result before this
            // read, and the runner no longer touches it; the handle is the only other reader,
            // and it is being dropped.
            let result = unsafe { std::mem::replace(&mut *self.result.get(), JobResult::None) };
            // (This may run while the body unwinds: `unjoined` catches.)
            if let Some(p) = unjoined(result) {
                // SAFETY: the scope waits for this task, which has not told it yet or has,
                // while the handle (borrowed from inside the scope) is still alive.
                unsafe { &*self.scope.0.cast::<Scope<'_>>() }.record(p);
            }
        }
    }
    unsafe fn take(&self) -> JobResult<R> {
        // SAFETY: the caller's contract.
        unsafe { std::mem::replace(&mut *self.result.get(), JobResult::None) }
    }
}

/// The handle of a task made by [`Scope::fork`]. Join it on the thread that forked it.
pub struct Forked<'scope, R> {
    inner: ForkedInner<'scope, R>,
    /// Not `Send`: the joiner parks on a latch that wakes the forking worker.
    marker: PhantomData<(&'scope (), *const ())>,
}

impl<R> fmt::Debug for Forked<'_, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Forked").finish_non_exhaustive()
    }
}

impl<R> Drop for Forked<'_, R> {
    /// Dropped without a join: the task still runs before the scope ends, and a panic in it
    /// is resumed when the scope ends (as a spawned task's).
    fn drop(&mut self) {
        // (Forked outside the pool, the task ran at once, and its result goes with the
        // handle, as before.)
        if let ForkedInner::Pending { job, .. } = &self.inner {
            job.abandon();
        }
    }
}

impl<R> Forked<'_, R> {
    /// Waits for the task and returns its result (Java's fork/join `join()`): runs it here if it
    /// has not started (after the tasks forked after it, which are above it in the deque and are
    /// run on the way: their handles then find them done); if another worker took it, helps that
    /// worker with the task's own subtasks until it is done. A panic in the task is resumed here.
    pub fn join(mut self) -> R {
        // (Joined: the handle's drop has nothing left to do.)
        match std::mem::replace(&mut self.inner, ForkedInner::Done(JobResult::None)) {
            ForkedInner::Done(r) => r.into_value(),
            ForkedInner::Pending { job, jr, base } => {
                // SAFETY: used during this call only.
                let w = unsafe { TaskWorker::current() }
                    .expect("a Forked handle is joined on the worker that forked it");
                if take_back(w, jr, base) {
                    // SAFETY: popped from our deque: ours alone, unrun.
                    unsafe { jr.execute() };
                } else {
                    wait_for(w, job.latch(), jr.header().tag(), job.thief(), base, None);
                }
                debug_assert!(job.latch().probe());
                // SAFETY: the latch is set, and the handle is the only reader.
                unsafe { job.take() }.into_value()
            }
        }
    }
}
