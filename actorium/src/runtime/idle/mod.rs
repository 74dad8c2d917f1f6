//! Idle sleep (the Cforall runtime: Thierry Delisle, PhD thesis, Waterloo 2022, chapter
//! "Scheduling in practice", sections "Idle-Sleep" to "Reducing Latency"): a worker with no work
//! blocks in the kernel instead of spinning, and a sender that makes work for it wakes it,
//! without ever leaving a message stranded. See `README.md` in this folder for the protocol and
//! the proof sketch.
//!
//! Pieces, as in Delisle's Figure "Low-latency Idle Sleep Data Structure":
//! - [`parker::Parker`]: one Linux event fd per worker (a mutex + condvar elsewhere and under loom);
//! - [`benaphore::Benaphore`]: the three-state flag (SEARCH / SLEEP / AWAKE) in front of it, so
//!   an early notify costs no system call;
//! - [`IdleSleep`]: the list of idle workers under one lock, plus an atomic "first idle" index
//!   that general notifiers exchange with "none", so a notifier never takes the lock;
//! - [`SpinBudget`]: how long an idle worker spins before it sleeps, learned from what
//!   spinning bought lately.

pub(crate) mod benaphore;
mod parker;
mod spin_budget;

use crate::runtime::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::runtime::loom::sync::Mutex;
pub(crate) use benaphore::Benaphore;
use crossbeam_utils::CachePadded;
pub(crate) use spin_budget::SpinBudget;

/// `first_idle` value meaning "no idle worker published".
const NONE: usize = usize::MAX;

/// The sleepers list of one worker pool. Each worker's [`Benaphore`] lives in its slot of the
/// worker table (`runtime::worker_table`); the operations below take the benaphores they touch.
#[derive(Debug)]
pub(crate) struct IdleSleep {
    /// Idle workers, most recent on top. Only workers entering or leaving idle sleep take it.
    /// A list rather than a stack in Delisle's sense: a worker leaves it from any position.
    /// (On a line of its own: its lock word is written at every sleep and wake, and the
    /// structures around the pool are read on every send.)
    sleepers: CachePadded<Mutex<Vec<usize>>>,
    /// Delisle's atomic pointer to the first idle worker's benaphore (an index here).
    first_idle: CachePadded<AtomicUsize>,
}

impl IdleSleep {
    pub(crate) fn new(workers: usize) -> Self {
        Self {
            sleepers: CachePadded::new(Mutex::new(Vec::with_capacity(workers))),
            first_idle: CachePadded::new(AtomicUsize::new(NONE)),
        }
    }

    /// Idle side, step one: publish worker `i` (whose benaphore is `b`) as idle (benaphore to
    /// SEARCH, push on the list, publish as first idle). The caller must then search
    /// exhaustively, with loads that are ordered after this (it takes each queue's lock, or
    /// issues a SeqCst fence), and call [`Self::retire`] if it finds work or
    /// [`Benaphore::sleep`] if not (then [`Self::retire`]).
    pub(crate) fn announce(&self, i: usize, b: &Benaphore) {
        b.search();
        let mut list = self.sleepers.lock().unwrap();
        list.push(i);
        self.first_idle.store(i, Ordering::SeqCst);
    }

    /// Idle side, last step: worker `i` leaves the list and runs again.
    pub(crate) fn retire(&self, i: usize, b: &Benaphore) {
        let mut list = self.sleepers.lock().unwrap();
        if let Some(pos) = list.iter().rposition(|&w| w == i) {
            list.remove(pos);
        }
        // As Delisle's thesis says, the worker leaving the list updates the atomic pointer.
        self.first_idle
            .store(list.last().copied().unwrap_or(NONE), Ordering::SeqCst);
        drop(list);
        b.awake();
    }

    /// Targeted notification of the worker whose benaphore is `b` (it owns the queue that just
    /// got a message). Costs one relaxed load when the worker is running. Call it after the
    /// work is published under the queue's lock (or after a SeqCst fence). Returns whether a
    /// system call was made.
    #[inline]
    pub(crate) fn notify(b: &Benaphore) -> bool {
        !b.is_awake() && b.wake()
    }

    /// General notification (Delisle's thesis): wake the first idle worker, whichever it is; `of`
    /// finds a worker's benaphore. Notifiers never take the sleepers lock; of concurrent notifiers
    /// only the one that wins the exchange makes a system call. Returns whether a worker was handed
    /// the notification.
    pub(crate) fn notify_any<'a>(&self, of: impl FnOnce(usize) -> &'a Benaphore) -> bool {
        if self.first_idle.load(Ordering::SeqCst) == NONE {
            return false;
        }
        match self.first_idle.swap(NONE, Ordering::SeqCst) {
            NONE => false,
            i => {
                of(i).wake();
                true
            }
        }
    }

    /// Whether a worker is published as the first idle one (a hint: one load).
    #[inline]
    pub(crate) fn has_idle(&self) -> bool {
        self.first_idle.load(Ordering::Relaxed) != NONE
    }

    /// [`Self::has_idle`] as a SeqCst load: ordered after the caller's SeqCst store that
    /// published work, as an idle worker's search is ordered after its announcement.
    #[inline]
    pub(crate) fn has_idle_seqcst(&self) -> bool {
        self.first_idle.load(Ordering::SeqCst) != NONE
    }
}

#[cfg(all(test, loom))]
mod loom_tests;
