//! What the message-centric executor keeps per worker in the runtime's worker table: the
//! worker's range of queue slots, its steal timestamp, and what it publishes as it runs (for
//! thieves and for the statistics).

use crate::runtime::counters::Counter;
use crossbeam_utils::CachePadded;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// What this executor keeps per worker in the worker table.
#[derive(Debug)]
pub(crate) struct WorkerSlot {
    /// The worker's range of the queue-pointer array, `start..end` (re-divided by resizes,
    /// under the resize lock's write side; read by the worker inside its read sections).
    pub(crate) start: AtomicUsize,
    pub(crate) end: AtomicUsize,
    /// When the worker last tried to steal (ns since `epoch`; `u64::MAX` while it sleeps), for
    /// the longest-victim heuristic. Written by its own worker only, when it tries to steal or
    /// goes to sleep or wakes, so a busy worker does no work here.
    pub(crate) last_steal: AtomicU64,
    /// Written by the worker as it runs (on a line of its own: the range above is read on
    /// every pass).
    pub(crate) busy: CachePadded<Busy>,
}

/// What a worker of this executor writes as it runs.
#[derive(Debug, Default)]
pub(crate) struct Busy {
    /// Twice the visits the worker began, plus one while it is in a visit (odd: visiting).
    /// Written by its own worker at the start and end of each visit while placement is on
    /// (with stealing off nobody reads it); read by thieves, which take a queue stuck behind
    /// a long behaviour or a very long visit (`placement/balance.rs`, `stuck`).
    pub(crate) visits: AtomicU64,
    /// `Stats::rescues` and `Stats::moves` of this worker (with statistics on). Here rather
    /// than in the runtime's per-worker counters, which every executor shares: two more
    /// counters there would move the rest of the worker table's row, which slows
    /// message-heavy workloads.
    pub(crate) rescues: Counter,
    pub(crate) moves: Counter,
    /// `Stats::holds` of this worker (placement rule 7), here for the same reason.
    pub(crate) holds: Counter,
    /// `Stats::outboxed` of this worker (its outbox), here for the same reason.
    pub(crate) outboxed: Counter,
    /// Envelopes this worker has run (taken from its batch), written by the worker as it
    /// takes each one while placement is on; read by thieves, which see from it one long
    /// behaviour (`placement/balance.rs`, `stuck` and `ask_split`), only when this worker has
    /// been in one visit for `stuck_after`, and by an idle worker deciding whether to watch.
    /// On a cache line of its own: on the line of `visits`, which thieves read at every steal
    /// attempt, the store made for every envelope would miss the cache.
    pub(crate) ran: CachePadded<AtomicU64>,
    /// The value of `ran` at which the batch this worker last gulped ends (envelopes a
    /// behaviour appends to it not counted), written at each gulp while placement is on: an
    /// idle worker that sees `ran` below it knows mail waits behind the running behaviour,
    /// where no steal can reach it, and keeps a rescue watch (`placement/balance.rs`,
    /// `mail_elsewhere`).
    pub(crate) behind: AtomicU64,
    /// Messages this worker has run (envelopes of sends, not an actor's start, install or
    /// reclaim), published every [`ABORT_CHECK`](super::visit::ABORT_CHECK) envelopes while
    /// placement is on: compaction's units of work (`Unit::progress`), which a placement that
    /// adds bookkeeping envelopes does not inflate.
    pub(crate) messages: AtomicU64,
    /// Set by a thief that found this worker in one behaviour for `stuck_after`: `ran` as the
    /// thief saw it, plus one; or `BACKLOG_SPLIT`, by a thief that found nothing to take
    /// while a backlog waits in this worker's batch (0: no request). The thief cannot see
    /// what the held queue holds; this worker splits it at its next spawn or out-of-line send
    /// in that behaviour, or right after it (a backlog: between two behaviours only)
    /// (`placement/balance.rs`, `ask_split` and `split_current`).
    pub(crate) split: AtomicU64,
    /// The count of envelopes run (`ran`) before which thieves ask for no split of this
    /// worker's backlog: set at each look at the backlog, as many envelopes ahead as it
    /// looked at (`placement/balance.rs`, `split_current`); 0 for a new thread.
    pub(crate) no_backlog: AtomicU64,
}

impl Busy {
    /// Whether the worker is in a visit (counted while balance is on).
    #[inline]
    pub(crate) fn in_visit(&self) -> bool {
        self.visits.load(Ordering::Relaxed) % 2 == 1
    }

    /// Whether mail waits in this worker's batch behind the behaviour it runs (in a visit,
    /// and `ran` below `behind`): no steal can reach it. Counted while balance is on.
    #[inline]
    pub(crate) fn mail_behind(&self) -> bool {
        self.in_visit() && self.behind.load(Ordering::Relaxed) > self.ran.load(Ordering::Relaxed)
    }
}

impl WorkerSlot {
    /// The worker's range of slots (see [`Executor::range`](super::Executor::range)).
    #[inline]
    pub(crate) fn range(&self) -> Range<usize> {
        self.start.load(Ordering::Relaxed)..self.end.load(Ordering::Relaxed)
    }

    pub(crate) fn new(range: Range<usize>) -> Self {
        Self {
            start: AtomicUsize::new(range.start),
            end: AtomicUsize::new(range.end),
            last_steal: AtomicU64::new(0),
            busy: CachePadded::default(),
        }
    }
}
