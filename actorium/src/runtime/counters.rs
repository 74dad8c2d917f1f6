//! Per-worker counters: each worker counts the events the layers above report (and the
//! runtime's own: sleeps, wake-ups, steals of tasks) with plain (non-RMW) atomic stores in its
//! row of the worker table, so counting costs no locked instruction; threads outside the pool
//! (senders from `main`, detached actors' threads) use one shared block with `fetch_add`. The
//! core sums them into the public statistics (`core/stats.rs`). Counting is off unless the
//! builder enables it.

use std::sync::atomic::{AtomicU64, Ordering};

macro_rules! counters {
    ($($name:ident),* $(,)?) => {
        /// One worker's (or the outside threads') counters.
        #[derive(Debug, Default)]
        pub(crate) struct Counters { $(pub(crate) $name: Counter,)* }

        /// What a [`Counters`] block holds, read at once.
        #[derive(Debug, Default, Clone, Copy)]
        pub(crate) struct CounterValues { $(pub(crate) $name: u64,)* }

        impl Counters {
            /// The counts now.
            pub(crate) fn values(&self) -> CounterValues {
                CounterValues { $($name: self.$name.get(),)* }
            }

            /// Adds these counts into `other` (any thread; a finished detached thread's
            /// private counters go to the shared block this way).
            pub(crate) fn add_into(&self, other: &Counters) {
                $(other.$name.add(self.$name.get());)*
            }
        }
    };
}
counters!(
    actors_created,
    messages_sent,
    messages_processed,
    dead_letters,
    gulps,
    gulped,
    missed_gulps,
    panics,
    sleeps,
    wakeups,
    steal_attempts,
    steals,
    steal_fail_no_candidate,
    steal_fail_swap,
    empty_steals,
    messages_stolen
);

/// A counter: `bump` from the one thread that owns it, `add` from any thread, `get` from any.
#[derive(Debug, Default)]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    /// Owner-only increment: a load and a store, no locked instruction.
    #[inline]
    pub(crate) fn bump(&self, n: u64) {
        self.0
            .store(self.0.load(Ordering::Relaxed) + n, Ordering::Relaxed);
    }

    /// Increment from any thread.
    #[inline]
    pub(crate) fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}
