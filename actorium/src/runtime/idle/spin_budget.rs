//! Adaptive spin before sleep: how long an idle worker keeps looking for work before it
//! announces itself idle and sleeps ("Reducing Latency" in the Cforall runtime: Thierry
//! Delisle, PhD thesis, Waterloo 2022, chapter "Scheduling in practice"; made to learn here).
//!
//! Spinning pays when work comes back sooner than a wake-up takes (about 12 µs here), and
//! only then. When it does not, it costs twice: the CPU it burns, and the next wake-up. The
//! second cost is the scheduler's: under Linux's EEVDF a woken thread preempts the thread
//! that woke it only if it has used less CPU lately; a worker that spun for 10 µs or more
//! after each message waits until the sender blocks.
//!
//! So the spin window is learned per worker, from what spinning bought it:
//! - a spin that found work, or a sleep shorter than the full window (a full spin would have
//!   found the work): the window goes back to full at once;
//! - a sleep longer than the full window (spinning would not have helped): the window halves,
//!   and after [`MAX_SHIFT`] halvings in a row it is zero, so a worker that keeps being woken
//!   after long gaps sleeps at once and wakes fast.
//!
//! Invariants: the window is `full >> shift` for `shift < MAX_SHIFT`, and zero at
//! `MAX_SHIFT`; it never exceeds `full`. The state is the worker's own (no atomics).

use std::time::Duration;

/// Halvings after which the window is zero (100 µs: 50, 25, 12.5, 6.25, then 0).
pub(crate) const MAX_SHIFT: u32 = 5;

/// One worker's spin window (see the module documentation).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SpinBudget {
    full: Duration,
    shift: u32,
    /// `full >> shift` (zero at `MAX_SHIFT`), kept: it is read on every idle pass.
    window: Duration,
    adaptive: bool,
}

impl SpinBudget {
    /// A window of `full`, learned if `adaptive`, fixed otherwise.
    pub(crate) fn new(full: Duration, adaptive: bool) -> Self {
        Self {
            full,
            shift: 0,
            window: full,
            adaptive,
        }
    }

    fn set_shift(&mut self, shift: u32) {
        self.shift = shift;
        self.window = if shift >= MAX_SHIFT {
            Duration::ZERO
        } else {
            self.full / (1 << shift)
        };
    }

    /// How long to spin now.
    #[inline]
    pub(crate) fn window(&self) -> Duration {
        self.window
    }

    /// `n` polls scaled like the window (for policies that poll a number of times).
    #[inline]
    pub(crate) fn scale(&self, n: usize) -> usize {
        if self.shift >= MAX_SHIFT {
            0
        } else {
            n >> self.shift
        }
    }

    /// Spinning found work: back to the full window.
    #[inline]
    pub(crate) fn paid(&mut self) {
        if self.shift != 0 {
            self.set_shift(0);
        }
    }

    /// The worker slept for `slept` after spinning: back to full if a full spin would have
    /// caught the work, otherwise half the window.
    pub(crate) fn slept(&mut self, slept: Duration) {
        if !self.adaptive {
            return;
        }
        if slept < self.full {
            self.set_shift(0);
        } else if self.shift < MAX_SHIFT {
            self.set_shift(self.shift + 1);
        }
    }
}

#[cfg(test)]
#[path = "spin_budget_tests.rs"]
mod tests;
