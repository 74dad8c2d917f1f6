//! An executor's life cycle: running, draining (`stop()`), aborting (dropped while running); the
//! count of live actors; and the waits for actors to terminate (`stop()`, `JoinHandle::join`).
//! Shared by every executor, so the shutdown protocol reads the same everywhere.

use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Accepting actors and messages.
const RUNNING: u8 = 0;
/// `stop()`: every actor is terminal; workers drain what is left and exit.
const DRAINING: u8 = 1;
/// Dropped while running (or failed): workers exit after their current batch or job.
const ABORTING: u8 = 2;

#[derive(Debug)]
pub(crate) struct Life {
    run_state: AtomicU8,
    /// Set when user code that schedules work (a policy) failed: the system aborts.
    failed: AtomicBool,
    /// Actors spawned (or respawned) and not yet terminal.
    live: CachePadded<AtomicUsize>,
    /// Guards waits for `live == 0` and for joinable actors to terminate.
    term: Mutex<()>,
    term_cv: Condvar,
}

impl Life {
    pub(crate) fn new() -> Self {
        Self {
            run_state: AtomicU8::new(RUNNING),
            failed: AtomicBool::new(false),
            live: CachePadded::new(AtomicUsize::new(0)),
            term: Mutex::new(()),
            term_cv: Condvar::new(),
        }
    }

    /// Whether new actors are refused (the system is stopping or gone).
    #[inline]
    pub(crate) fn closed(&self) -> bool {
        self.run_state.load(Ordering::Acquire) != RUNNING
    }

    /// Whether an idle worker may exit: the system is aborting, or draining with no live actor.
    pub(crate) fn exit_ready(&self) -> bool {
        match self.run_state.load(Ordering::Acquire) {
            ABORTING => true,
            DRAINING => self.live.load(Ordering::Acquire) == 0,
            _ => false,
        }
    }

    #[inline]
    pub(crate) fn aborting(&self) -> bool {
        self.run_state.load(Ordering::Acquire) == ABORTING
    }

    pub(crate) fn live(&self) -> usize {
        self.live.load(Ordering::Acquire)
    }

    /// An actor became live (spawn, respawn). Call under the lock that makes the `closed()`
    /// check and the registration one step.
    #[inline]
    pub(crate) fn add_live(&self) {
        self.live.fetch_add(1, Ordering::Relaxed);
    }

    /// An actor reached a terminal status: wake waiters if it was the last one, or joinable.
    pub(crate) fn terminated(&self, joinable: bool) {
        if self.live.fetch_sub(1, Ordering::AcqRel) == 1 || joinable {
            self.notify();
        }
    }

    /// Shutdown stopped a live actor (no waiter needs a wake-up per actor: `notify` follows).
    pub(crate) fn stopped(&self) {
        self.live.fetch_sub(1, Ordering::Relaxed);
    }

    /// Leaves `RUNNING` for draining or aborting (the first call wins), and wakes waiters.
    pub(crate) fn close(&self, drain: bool) {
        let _ = self.run_state.compare_exchange(
            RUNNING,
            if drain { DRAINING } else { ABORTING },
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        self.notify();
    }

    /// The system can no longer keep its guarantees (a policy lost a job): it aborts, as if
    /// dropped, and every wait returns.
    pub(crate) fn fail(&self) {
        // The run state first: whoever sees `failed` sees the abort too.
        self.run_state.store(ABORTING, Ordering::SeqCst);
        self.failed.store(true, Ordering::SeqCst);
        self.notify();
    }

    /// Whether [`Self::fail`] was called.
    pub(crate) fn failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// Wakes every waiter to re-check its condition.
    pub(crate) fn notify(&self) {
        let _g = self.term.lock().unwrap();
        self.term_cv.notify_all();
    }

    /// Blocks until `done()` holds; re-checked each time an actor terminates.
    pub(crate) fn wait_until(&self, mut done: impl FnMut() -> bool) {
        let mut g = self.term.lock().unwrap();
        while !done() {
            g = self.term_cv.wait(g).unwrap();
        }
    }

    /// Waits for a termination event, at most `d` (for callers that also have other work).
    pub(crate) fn wait_a_little(&self, d: Duration) {
        let g = self.term.lock().unwrap();
        drop(self.term_cv.wait_timeout(g, d).unwrap());
    }
}
