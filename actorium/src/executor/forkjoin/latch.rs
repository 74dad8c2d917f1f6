//! Latches: how a joiner learns that a job it waits for has finished (rayon-core's `latch`).
//!
//! - [`SpinLatch`]: the joiner is a worker of the pool. It probes the latch between helping
//!   steps, and parks its thread only after a while (state `SLEEPY`); the setter, always a worker
//!   of the same pool, swaps in `SET` and unparks the joiner only if it saw `SLEEPY`. The swap
//!   is the setter's last touch of the latch's memory (which the joiner frees as soon as it sees
//!   `SET`): the thread to unpark is found through the pool's worker table, which outlives both.
//!   No lost wake-up: the joiner publishes `SLEEPY` with a compare-and-swap from `UNSET`, so
//!   either the setter's swap comes first (the compare-and-swap fails and the joiner sees `SET`)
//!   or it returns `SLEEPY` and the setter unparks; `park` keeps an unpark that comes before it
//!   (a token), so the joiner cannot sleep through it. Model-checked in `latch_loom.rs`.
//! - [`LockLatch`]: the joiner is a thread outside the pool (`ActorSystem::join`): a mutex and
//!   a condition variable, set and notified under the lock, so the joiner (which frees the latch)
//!   cannot return before the setter has released the lock.

use crate::runtime::loom::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Condvar, Mutex};

const UNSET: u8 = 0;
const SLEEPY: u8 = 1;
const SET: u8 = 2;

/// A latch a worker joins on (see the module documentation).
#[derive(Debug)]
pub(crate) struct SpinLatch {
    state: AtomicU8,
    /// The joining worker's index, to unpark it.
    owner: usize,
}

impl SpinLatch {
    pub(crate) fn new(owner: usize) -> Self {
        Self {
            state: AtomicU8::new(UNSET),
            owner,
        }
    }

    /// Whether the latch is set (the job finished, its result is readable).
    #[inline]
    pub(crate) fn probe(&self) -> bool {
        self.state.load(Ordering::Acquire) == SET
    }

    /// The joining worker's index, if it may be parked (it said it is about to).
    pub(crate) fn parked_owner(&self) -> Option<usize> {
        (self.state.load(Ordering::Acquire) == SLEEPY).then_some(self.owner)
    }

    /// The joiner is about to park: false if the latch is already set (then it must not).
    pub(crate) fn sleepy(&self) -> bool {
        match self
            .state
            .compare_exchange(UNSET, SLEEPY, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => true,
            Err(s) => s != SET,
        }
    }

    /// Sets the latch, then wakes the joiner with `unpark(owner)` if it may be parked.
    ///
    /// # Safety
    /// `this` points to a live latch, set once; after this call it may be freed, and `unpark`
    /// must not reach it.
    pub(crate) unsafe fn set(this: *const Self, unpark: impl FnOnce(usize)) {
        // SAFETY: live until the swap below publishes `SET` (the caller's contract).
        let owner = unsafe { (*this).owner };
        // SAFETY: as above; nothing touches `*this` after the swap.
        if unsafe { (*this).state.swap(SET, Ordering::AcqRel) } == SLEEPY {
            unpark(owner);
        }
    }
}

/// A latch a thread outside the pool blocks on.
#[derive(Debug, Default)]
pub(crate) struct LockLatch {
    set: Mutex<bool>,
    cv: Condvar,
}

impl LockLatch {
    /// Sets the latch and wakes the waiter.
    ///
    /// # Safety
    /// `this` points to a live latch, set once; it may be freed once the waiter sees it set.
    pub(crate) unsafe fn set(this: *const Self) {
        // SAFETY: the waiter cannot see `true` (and free the latch) before the guard is
        // dropped, which is the last use of `*this` (the condvar is notified under the lock).
        let l = unsafe { &*this };
        let mut g = l.set.lock().unwrap_or_else(|e| e.into_inner());
        *g = true;
        l.cv.notify_all();
        drop(g);
    }

    /// Blocks until the latch is set or `d` has passed: whether it is set.
    pub(crate) fn wait_for(&self, d: std::time::Duration) -> bool {
        let g = self.set.lock().unwrap_or_else(|e| e.into_inner());
        let (g, _) = self
            .cv
            .wait_timeout_while(g, d, |set| !*set)
            .unwrap_or_else(|e| e.into_inner());
        *g
    }
}

#[cfg(all(test, loom))]
#[path = "latch_loom.rs"]
mod loom_tests;
