//! A test-and-test-and-set spinlock for the short critical sections of a send (a push onto a
//! message queue or a mailbox, a few flag updates). Uncontended it costs one CAS and one store.
//!
//! Invariant: `locked` is true exactly while one [`SpinGuard`] exists; acquiring it (Acquire)
//! orders everything the previous holder did before releasing it (Release) before the new
//! holder's critical section.

use crate::runtime::loom::sync::atomic::{AtomicBool, Ordering};
use crate::runtime::loom::{spin_hint, yield_now};

#[derive(Debug)]
pub(crate) struct SpinLock {
    locked: AtomicBool,
}

/// The lock, held. Unlocks on drop.
#[must_use]
pub(crate) struct SpinGuard<'a> {
    lock: &'a SpinLock,
}

impl SpinLock {
    pub(crate) fn new() -> Self {
        Self {
            locked: AtomicBool::new(false),
        }
    }

    #[inline]
    pub(crate) fn lock(&self) -> SpinGuard<'_> {
        let mut spins = 0u32;
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            while self.locked.load(Ordering::Relaxed) {
                spins += 1;
                if spins < 64 {
                    spin_hint();
                } else {
                    // On an over-subscribed machine the holder may be descheduled: let it run.
                    spins = 0;
                    yield_now();
                }
            }
        }
        SpinGuard { lock: self }
    }

    /// The lock if it is free now (one CAS), else `None`.
    #[inline]
    pub(crate) fn try_lock(&self) -> Option<SpinGuard<'_>> {
        self.locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
            // `then`, not `then_some`: a guard built and dropped on failure would unlock.
            .then(|| SpinGuard { lock: self })
    }
}

impl Drop for SpinGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        self.lock.locked.store(false, Ordering::Release);
    }
}
