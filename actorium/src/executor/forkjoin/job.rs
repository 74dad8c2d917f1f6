//! The jobs fork/join makes: a `join`'s second closure on the joiner's stack ([`StackJob`]), a
//! scope's task on the heap ([`HeapJob`]), and what a thread outside the pool submits
//! ([`StackJob`] with a [`LockLatch`]).

use super::latch::{LockLatch, SpinLatch};
use crate::runtime::context::publish_kept;
use crate::runtime::tasks::{JobHeader, JobRef, TaskWorker};
use std::any::Any;
use std::cell::UnsafeCell;
use std::panic::{self, AssertUnwindSafe};

/// What a job left behind.
pub(crate) enum JobResult<R> {
    /// Not run yet.
    None,
    /// It returned this.
    Ok(R),
    /// It panicked with this payload.
    Panic(Box<dyn Any + Send>),
}

impl<R> JobResult<R> {
    /// Runs `f`, catching a panic.
    pub(crate) fn call(f: impl FnOnce() -> R) -> Self {
        match panic::catch_unwind(AssertUnwindSafe(f)) {
            Ok(r) => JobResult::Ok(r),
            Err(p) => JobResult::Panic(p),
        }
    }

    /// The value, or the panic resumed on the calling thread.
    pub(crate) fn into_value(self) -> R {
        match self {
            JobResult::Ok(r) => r,
            JobResult::Panic(p) => panic::resume_unwind(p),
            JobResult::None => unreachable!("a job's result was read before it ran"),
        }
    }
}

/// How a finished job tells its waiter.
pub(crate) trait Latch {
    /// Sets `*this`; the latch may be freed right after.
    ///
    /// # Safety
    /// `this` is live; set once.
    unsafe fn set(this: *const Self);
}

impl Latch for SpinLatch {
    unsafe fn set(this: *const Self) {
        // What the finished job kept back (run by a behaviour's worker while it helps, its
        // sends went to that worker's outbox) is queued before its joiner goes on.
        publish_kept();
        // The setter runs on a worker of the joiner's pool (a job is only handed to workers of
        // the pool whose deque held it), whose worker table outlives the latch.
        // SAFETY: used during this call only.
        match unsafe { TaskWorker::current() } {
            // SAFETY: the caller's contract; the unpark goes through the worker table.
            Some(tw) => unsafe {
                SpinLatch::set(this, |owner| tw.table().slot(owner).row.unpark())
            },
            // Run on a thread outside the pool (the common queue drained by a caller after
            // the workers exited): the joiner wakes at its next nap's end.
            // SAFETY: the caller's contract.
            None => unsafe { SpinLatch::set(this, |_| {}) },
        }
    }
}

impl Latch for LockLatch {
    unsafe fn set(this: *const Self) {
        publish_kept();
        // SAFETY: the caller's contract.
        unsafe { LockLatch::set(this) }
    }
}

/// A job that lives in its waiter's stack frame: the waiter does not return before the latch
/// is set (or before it took the job back and ran it itself).
#[repr(C)]
pub(crate) struct StackJob<F, R, L> {
    header: JobHeader,
    func: UnsafeCell<Option<F>>,
    result: UnsafeCell<JobResult<R>>,
    pub(crate) latch: L,
}

impl<F: FnOnce() -> R + Send, R: Send, L: Latch> StackJob<F, R, L> {
    pub(crate) fn new(func: F, latch: L) -> Self {
        Self {
            header: JobHeader::new(Self::execute, 0),
            func: UnsafeCell::new(Some(func)),
            result: UnsafeCell::new(JobResult::None),
            latch,
        }
    }

    /// A reference to hand out; the job must stay in place until it ran (or was taken back).
    ///
    /// # Safety
    /// As [`JobRef::new`]: `self` stays in place and alive until the job has run or was taken
    /// back with [`Self::run_inline`].
    pub(crate) unsafe fn as_job_ref(&self) -> JobRef {
        // SAFETY: forwarded.
        unsafe { JobRef::new(&self.header) }
    }

    /// The job's header (to learn its thief).
    pub(crate) fn header(&self) -> &JobHeader {
        &self.header
    }

    unsafe fn execute(this: *const JobHeader) {
        let this = this.cast::<Self>();
        // SAFETY: `header` is the first field of this `repr(C)` job, which is live and runs
        // exactly once (the JobRef contract); the waiter reads `result` only after the latch.
        unsafe {
            let f = (*(*this).func.get()).take().expect("a job runs once");
            *(*this).result.get() = JobResult::call(f);
            L::set(&(*this).latch);
        }
    }

    /// Runs the closure on the calling thread (the job was taken back before anyone ran it).
    /// By reference: moving the job out of its frame would copy it, through stores the CPU has
    /// not retired yet, a large part of a join's cost.
    #[inline]
    pub(crate) fn run_inline(&self) -> R {
        // SAFETY: taken back from the deque, so no other thread can reach the job.
        let f = unsafe { (*self.func.get()).take() };
        f.expect("a job runs once")()
    }

    /// The result, after the latch was seen set.
    #[inline]
    pub(crate) fn take_result(&self) -> JobResult<R> {
        // SAFETY: the runner wrote it before setting the latch, which the caller saw set; the
        // job is not touched by anyone else afterwards.
        unsafe { std::mem::replace(&mut *self.result.get(), JobResult::None) }
    }
}

/// A scope's task, boxed: it frees itself when it has run.
#[repr(C)]
pub(crate) struct HeapJob<F> {
    header: JobHeader,
    func: F,
}

impl<F: FnOnce() + Send> HeapJob<F> {
    /// Boxes `func` as a job tagged `tag`.
    pub(crate) fn new(func: F, tag: usize) -> Box<Self> {
        Box::new(Self {
            header: JobHeader::new(Self::execute, tag),
            func,
        })
    }

    /// Leaks the box into a job reference; the job frees it when run.
    pub(crate) fn into_job_ref(self: Box<Self>) -> JobRef {
        let p = Box::into_raw(self);
        // SAFETY: a leaked box stays in place until `execute` frees it, and the caller hands
        // the reference to exactly one runner.
        unsafe { JobRef::new(p.cast::<JobHeader>()) }
    }

    unsafe fn execute(this: *const JobHeader) {
        // SAFETY: `this` came from `into_job_ref` (the header is the first field of this
        // `repr(C)` struct) and runs once, so the box is taken back once.
        let job = unsafe { Box::from_raw(this.cast::<Self>().cast_mut()) };
        // `func` catches its own panics (scope tasks record them in their scope).
        (job.func)();
    }
}
