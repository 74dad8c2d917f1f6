//! A thread's wake-up signal: flags under a mutex, and a condition variable the thread blocks
//! on. A detached actor's thread waits on one for its next job (CAF's scheduler manual, the
//! C++ Actor Framework manual's section "Scheduler": "a detached actor runs on a private thread
//! that blocks on its own condition variable").

use std::sync::{Condvar, Mutex};

/// Work is pending: run it.
pub(crate) const PENDING: u8 = 1;
/// End once no work is pending.
pub(crate) const FINISH: u8 = 2;
/// End now.
pub(crate) const ABORT: u8 = 4;

/// Flags a waiting thread reads: [`PENDING`], [`FINISH`], [`ABORT`].
#[derive(Debug, Default)]
pub(crate) struct Signal {
    state: Mutex<u8>,
    cv: Condvar,
}

impl Signal {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Raises `flag` and wakes the waiting thread.
    pub(crate) fn raise(&self, flag: u8) {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) |= flag;
        self.cv.notify_one();
    }

    /// Waits until work is pending (clearing [`PENDING`]: true) or the thread must end (false):
    /// [`ABORT`] at once, [`FINISH`] once nothing is pending.
    pub(crate) fn wait(&self) -> bool {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if *s & ABORT != 0 {
                return false;
            }
            if *s & PENDING != 0 {
                *s &= !PENDING;
                return true;
            }
            if *s & FINISH != 0 {
                return false;
            }
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }
}

#[cfg(all(test, not(loom)))]
#[path = "signal_tests.rs"]
mod tests;
