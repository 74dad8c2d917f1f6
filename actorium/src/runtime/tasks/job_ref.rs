//! A fork/join task as the runtime sees it: a type-erased pointer to a job whose first field is
//! a [`JobHeader`] (as rayon-core's `JobRef`, in one word so that it fits one atomic).
//!
//! The runtime never knows what a job is: it moves [`JobRef`]s between workers and calls
//! [`JobRef::execute`]. The fork/join executor (`executor/forkjoin`) makes them, keeps the
//! memory they point to alive until they have run, and catches their panics.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The first field of every job (`#[repr(C)]` structs start with it).
#[derive(Debug)]
#[repr(C)]
pub(crate) struct JobHeader {
    /// Runs the job whose header this is. Must not unwind.
    run: unsafe fn(*const JobHeader),
    /// What the job belongs to, for the helping rule: a waiter may run, while it waits for the
    /// job or scope whose tag is `t`, only work forked under a job tagged `t` (see
    /// `runtime/tasks/README.md`). An address: the job's own for a `join`'s job, its scope's for
    /// a scope's task.
    tag: usize,
    /// Set by the thief that takes the job, under the victim deque's lock: its index (so the
    /// joiner knows whom to help). Read by the owner only, after its pop found the job gone
    /// (which took that lock).
    thief: AtomicUsize,
}

impl JobHeader {
    /// A header running `run`, tagged `tag` (0: tag with the job's own address, which is not
    /// known until the job is in place; see [`JobRef::new`]).
    pub(crate) const fn new(run: unsafe fn(*const JobHeader), tag: usize) -> Self {
        Self {
            run,
            tag,
            thief: AtomicUsize::new(usize::MAX),
        }
    }

    /// The index of the thief this job was handed to, if it was.
    pub(crate) fn thief(&self) -> Option<usize> {
        match self.thief.load(Ordering::Relaxed) {
            usize::MAX => None,
            t => Some(t),
        }
    }

    pub(crate) fn set_thief(&self, t: usize) {
        self.thief.store(t, Ordering::Relaxed);
    }

    /// The job's tag (see the field).
    pub(crate) fn tag(&self) -> usize {
        self.tag
    }
}

/// A pointer to a job, sendable between workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct JobRef(NonNull<JobHeader>);

// SAFETY: a job is made to be run on another thread: the executor that makes one requires its
// closure and result to be `Send`, and keeps its memory alive until it has run.
unsafe impl Send for JobRef {}

impl JobRef {
    /// A reference to the job whose header is `*h`; a tag of 0 becomes the header's address.
    ///
    /// # Safety
    /// `h` points to a live header at the start of a job that stays in place (and alive) until
    /// [`Self::execute`] has returned, and that is executed exactly once.
    pub(crate) unsafe fn new(h: *const JobHeader) -> Self {
        // SAFETY: the caller's contract: `h` is live and not yet shared, so writing its tag
        // races with nothing.
        unsafe {
            let h = h as *mut JobHeader;
            if (*h).tag == 0 {
                (*h).tag = h as usize;
            }
            Self(NonNull::new_unchecked(h))
        }
    }

    /// The job's header.
    pub(crate) fn header(&self) -> &JobHeader {
        // SAFETY: `new`'s contract keeps the header alive while any `JobRef` to it may be used.
        unsafe { self.0.as_ref() }
    }

    /// Runs the job.
    ///
    /// # Safety
    /// At most once per job (see [`Self::new`]); afterwards the job's memory may be gone.
    pub(crate) unsafe fn execute(self) {
        // SAFETY: live until it has run (`new`'s contract); `run` is the job's own function.
        unsafe { ((*self.0.as_ptr()).run)(self.0.as_ptr()) }
    }

    /// The raw pointer (for a deque slot).
    pub(crate) fn as_ptr(self) -> *mut JobHeader {
        self.0.as_ptr()
    }

    /// Back from [`Self::as_ptr`].
    ///
    /// # Safety
    /// `p` came from [`Self::as_ptr`] of a job not yet executed.
    pub(crate) unsafe fn from_ptr(p: *mut JobHeader) -> Self {
        // SAFETY: non-null, as it came from a `JobRef`.
        Self(unsafe { NonNull::new_unchecked(p) })
    }
}
