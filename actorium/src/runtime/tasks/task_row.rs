//! A worker's fork/join row, shared with thieves: its task deque ([`Deque`]), whether it shows
//! tasks, and its thread (to wake it when a job it joins on completes). One per row of the
//! worker table.
//!
//! `has_tasks` is the hint thieves scan and idle sleep checks (`README.md`, "Idle sleep covers
//! tasks"). Only the owner writes it: `true` when it pushes onto a deque it does not show, and
//! `false` when it finds the deque empty under the deque's lock ([`super::TaskWorker::unshow`]),
//! so nothing can appear in it meanwhile (only the owner adds tasks). Thieves that empty a deque
//! leave the flag set; it is a hint, cleared at the owner's next pop or park.

use super::deque::Deque;
use crate::runtime::loom::sync::atomic::{AtomicBool, Ordering};
use crate::runtime::loom::sync::Mutex;
use crate::runtime::loom::thread::{self, Thread};
use crossbeam_utils::CachePadded;

/// One worker's row of fork/join state.
#[derive(Debug)]
pub(crate) struct TaskRow {
    /// Whether the owner's deque holds tasks (a hint thieves scan; see the module docs).
    has_tasks: CachePadded<AtomicBool>,
    /// The task deque: the owner's end and the thieves' end (`deque.rs`).
    pub(crate) deque: CachePadded<Deque>,
    /// The worker's thread, for waking it when a job it joins on completes.
    /// (A row's worker changes when the pool is resized: the thread is set at each start.)
    thread: Mutex<Option<Thread>>,
}

impl Default for TaskRow {
    fn default() -> Self {
        Self {
            has_tasks: CachePadded::new(AtomicBool::new(false)),
            deque: CachePadded::new(Deque::default()),
            thread: Mutex::new(None),
        }
    }
}

impl TaskRow {
    /// Publishes whether the owner's deque holds tasks (SeqCst: idle sleep's handshake).
    #[inline]
    pub(crate) fn set_has_tasks(&self, yes: bool) {
        self.has_tasks.store(yes, Ordering::SeqCst);
    }

    /// Whether this row's owner shows tasks (a relaxed hint, for scanning victims).
    #[inline]
    pub(crate) fn shows_tasks(&self) -> bool {
        self.has_tasks.load(Ordering::Relaxed)
    }

    /// Whether this row's owner shows tasks, ordered after a preceding SeqCst store or fence
    /// (an idle worker's search).
    #[inline]
    pub(crate) fn shows_tasks_seqcst(&self) -> bool {
        self.has_tasks.load(Ordering::SeqCst)
    }

    // --- Parking a joiner ---

    /// Records the calling thread as this cell's worker (when its loop starts).
    pub(crate) fn register_thread(&self) {
        *self.thread.lock().unwrap_or_else(|e| e.into_inner()) = Some(thread::current());
    }

    /// Forgets the worker's thread (the pool shut down).
    pub(crate) fn forget_thread(&self) {
        *self.thread.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Wakes this cell's worker if it parks (or will park) waiting for a job.
    pub(crate) fn unpark(&self) {
        if let Some(t) = &*self.thread.lock().unwrap_or_else(|e| e.into_inner()) {
            t.unpark();
        }
    }
}
