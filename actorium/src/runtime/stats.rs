//! Executor statistics (seed 002, "Safety and Productivity").
//!
//! Counted per worker with plain (non-RMW) atomic stores by the worker itself, so counting costs
//! no locked instruction; sends from threads outside the system go to one shared block with
//! `fetch_add`. [`Stats`] sums them: live with [`crate::ActorSystem::stats`], final at
//! [`crate::ActorSystem::stop`]. Statistics are off unless the builder enables them.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// Summed statistics of an actor system.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Worker threads.
    pub workers: usize,
    /// Actors spawned, by main or by other actors.
    pub actors_created: u64,
    /// Messages sent (accepted by a live actor), poison pills included.
    pub messages_sent: u64,
    /// Messages whose behaviour ran.
    pub messages_processed: u64,
    /// Messages that reached an actor after it had terminated and were dropped unprocessed.
    pub dead_letters: u64,
    /// Gulps: queues swapped out by a worker.
    pub gulps: u64,
    /// Envelopes taken by all gulps (messages plus the executor's own start and reclaim
    /// envelopes); `gulped / gulps` is the average gulp size.
    pub gulped: u64,
    /// Gulps given up because another worker was processing the queue.
    pub missed_gulps: u64,
    /// Behaviours (or lifecycle hooks) that panicked.
    pub panics: u64,
    /// Times a worker went to sleep in the kernel.
    pub sleeps: u64,
    /// Wake-ups that needed a system call.
    pub wakeups: u64,
    /// Times a worker tried to steal a queue (queue stealing enabled).
    pub steal_attempts: u64,
    /// Queues stolen.
    pub steals: u64,
    /// Steal attempts that found no candidate queue at the victim.
    pub steal_fail_no_candidate: u64,
    /// Steal attempts whose wait-free swap failed (another thief raced).
    pub steal_fail_swap: u64,
    /// Steals of a queue that was empty by the time it was swapped.
    pub empty_steals: u64,
    /// Messages in the stolen queues when they were stolen.
    pub messages_stolen: u64,
}

impl Stats {
    /// Average number of messages in a stolen queue.
    pub fn average_steal_size(&self) -> f64 {
        if self.steals == 0 {
            0.0
        } else {
            self.messages_stolen as f64 / self.steals as f64
        }
    }

    /// Average number of envelopes per gulp.
    pub fn average_gulp_size(&self) -> f64 {
        if self.gulps == 0 {
            0.0
        } else {
            self.gulped as f64 / self.gulps as f64
        }
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Actor system statistics ({} workers)", self.workers)?;
        writeln!(f, "  actors created       {}", self.actors_created)?;
        writeln!(f, "  messages sent        {}", self.messages_sent)?;
        writeln!(f, "  messages processed   {}", self.messages_processed)?;
        writeln!(f, "  dead letters         {}", self.dead_letters)?;
        writeln!(f, "  gulps                {}", self.gulps)?;
        writeln!(f, "  average gulp size    {:.2}", self.average_gulp_size())?;
        writeln!(f, "  missed gulps         {}", self.missed_gulps)?;
        writeln!(f, "  panics               {}", self.panics)?;
        writeln!(f, "  sleeps               {}", self.sleeps)?;
        writeln!(f, "  wake-ups (syscalls)  {}", self.wakeups)?;
        writeln!(f, "  steal attempts       {}", self.steal_attempts)?;
        writeln!(f, "  steals               {}", self.steals)?;
        writeln!(
            f,
            "  steal failures (no candidate) {}",
            self.steal_fail_no_candidate
        )?;
        writeln!(
            f,
            "  steal failures (swap)         {}",
            self.steal_fail_swap
        )?;
        writeln!(f, "  empty steals         {}", self.empty_steals)?;
        writeln!(f, "  messages stolen      {}", self.messages_stolen)?;
        write!(f, "  average steal size   {:.2}", self.average_steal_size())
    }
}

macro_rules! counters {
    ($($name:ident),* $(,)?) => {
        /// One worker's (or the outside threads') counters.
        #[derive(Debug, Default)]
        pub(crate) struct Counters { $(pub(crate) $name: Counter,)* }

        impl Counters {
            pub(crate) fn add_to(&self, s: &mut Stats) {
                $(s.$name += self.$name.get();)*
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
