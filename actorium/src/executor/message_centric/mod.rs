//! The message-centric executor (the Cforall actor system: Colby Parsons, MMath thesis,
//! Waterloo 2023, chapter "Actors": "CFA Executor", "Envelopes", "Queue Gulping", "Work
//! Stealing").
//!
//! M = workers × queues-per-worker message queues. Every actor gets a queue *ticket* when
//! spawned, and all its messages go to that queue, so messages between a pair of actors keep
//! their order and an actor never runs two behaviours at once; the ticket changes only when
//! the actor moves, while none of its behaviours runs, with what is queued for it. Worker `i`
//! owns a contiguous range of the queue-pointer array and cycles through it, gulping whole
//! queues. Senders use the stable queue objects (indexed by ticket), workers the
//! queue-pointer array, whose entries queue stealing swaps without senders noticing.
//! `README.md` here explains the protocols and why they lose nothing.
//!
//! Mechanism, which must never break:
//! - [`work_queue`]: a queue's lock, the gulp and `being_processed`, the pin and parked
//!   reclaims;
//! - [`visit`]: a visit of a queue (gulp, run, re-gulp) and the local fast path;
//! - [`send`]: the send path through a queue's lock;
//! - [`steal`] and [`swap`]: queue stealing by a wait-free swap of two slots;
//! - [`ranges`]: how the slots are divided among the workers; [`row`]: what each worker
//!   publishes in the worker table;
//! - [`unit`](mod@unit): the executor as a unit of work of the runtime's worker loop; [`exec`]: the
//!   executor interface the actor layer calls.
//!
//! Policy, behind the hooks those call ([`placement`]): affinity (where an actor lives),
//! balance (who runs what), batching (when to gulp or flush), each with its switch and its
//! settings in [`tuning::Tuning`].

mod exec;
pub(crate) mod placement;
pub(crate) mod ranges;
pub(crate) mod row;
mod send;
pub(crate) mod steal;
pub(crate) mod swap;
pub(crate) mod tuning;

mod unit;
pub(crate) mod visit;
pub(crate) mod work_queue;

#[cfg(test)]
mod tests;

pub(crate) use tuning::Tuning;
pub(crate) use visit::VISIT_BUDGET;

use crate::core::exec_ref::{ops_of, ExecOps};
use crate::core::{DetachedLink, ExecRef, Executor as Exec, Shared};
use crate::runtime::compaction::Mode;
use crate::runtime::loom::sync::atomic::AtomicPtr;
use crate::runtime::pool::Pool;
use crossbeam_utils::CachePadded;
use row::WorkerSlot;
use std::io;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;
use work_queue::WorkQueue;

/// This executor's table of operations, as a named static: its address tells the actor layer
/// that a cell belongs to this executor, whose send it then calls directly, inlined.
pub(crate) static OPS: ExecOps = ops_of::<Executor>();

/// Queue stealing (the Cforall actor system: Colby Parsons, MMath thesis, Waterloo 2023, "Work
/// Stealing"): which victim an idle worker steals a queue from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum QueueStealing {
    /// No stealing: a worker only ever runs the queues it was given.
    None,
    /// A victim chosen uniformly at random among the other workers.
    Random,
    /// The worker that has gone longest without trying to steal (the busiest, most likely),
    /// by per-worker timestamps updated on every steal attempt.
    #[default]
    LongestVictim,
}

#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) workers: usize,
    /// The most workers a resize may give it (rows of the worker table).
    pub(crate) max_workers: usize,
    pub(crate) queues: usize,
    pub(crate) stealing: QueueStealing,
    /// Placement, stealing and idle spin settings (`tuning.rs`).
    pub(crate) tuning: Tuning,
    /// Whether the number of active workers follows the load (`runtime/compaction.rs`).
    pub(crate) compaction: Mode,
}

pub(crate) struct Executor {
    /// Stable queue objects, indexed by ticket: what senders use.
    pub(crate) queues: Box<[CachePadded<WorkQueue>]>,
    /// The queue-pointer array: what workers cycle through (and thieves swap).
    pub(crate) slots: Box<[AtomicPtr<WorkQueue>]>,
    pub(crate) pool: Pool<WorkerSlot>,
    pub(crate) ticket: CachePadded<AtomicUsize>,
    /// The ranges [`spawn_queue`](placement::affinity::spawn_queue) deals runs of spawns to:
    /// the workers the queues were first split among without queue stealing, else one (queue
    /// after queue).
    pub(crate) spawn_ranges: usize,
    /// The queues spawns from outside are dealt over with queue stealing
    /// ([`spread_queues`](placement::affinity::spread_queues)): all of them unless the system
    /// was built with more workers than CPUs (set at build: workers added later do not change
    /// it).
    pub(crate) spread: usize,
    /// Workers in a rescue watch (a time-limited sleep, see `unit.rs`, `sleep_limit`).
    pub(crate) watching: CachePadded<AtomicUsize>,
    pub(crate) shared: Arc<Shared>,
    pub(crate) stealing: QueueStealing,
    /// Placement, stealing and idle spin settings (`tuning.rs`).
    pub(crate) tuning: Tuning,
    /// Children next to their parent and moves (rules 1 and 2): affinity, with stealing.
    pub(crate) moves: bool,
    /// Runs of spawns from outside (rule 5): affinity.
    pub(crate) runs: bool,
    /// Rescues, splits, candidates worth stealing (rules 3, 4, 6): balance, with stealing.
    pub(crate) balance: bool,
    /// Queues held off while a stream fills them (rule 7): batching, with stealing.
    pub(crate) holds: bool,
    /// The outbox: batching.
    pub(crate) outbox: bool,
    /// `moves || balance`: a send into an empty queue, or to an actor that moved, looks at
    /// placement (`send.rs`, `push_placing`). A flag of its own, read on the send path.
    pub(crate) placing: bool,
    pub(crate) epoch: Instant,
    /// The system's executor for detached actors (set once, right after start).
    pub(crate) detached: DetachedLink,
}

impl Executor {
    /// The executor and its worker table; no thread runs yet ([`Self::start`] starts them).
    pub(crate) fn new(cfg: &Config, shared: Arc<Shared>) -> io::Result<Self> {
        // The queues are divided among the workers that start active (`runtime/compaction.rs`);
        // the others get a range when they are activated.
        let active = crate::runtime::compaction::starting(cfg.compaction, cfg.workers);
        let ranges = ranges::partition(cfg.queues, active);
        let stealing = cfg.stealing != QueueStealing::None;
        let queues: Box<[_]> = (0..cfg.queues)
            .map(|q| CachePadded::new(WorkQueue::new(q, ranges::owner_of(&ranges, q))))
            .collect();
        let slots = queues
            .iter()
            .map(|q| AtomicPtr::new(&**q as *const WorkQueue as *mut WorkQueue))
            .collect();
        let cpus = cfg
            .tuning
            .cpus
            .unwrap_or_else(crate::runtime::compaction::available_cpus);
        let pool = Pool::new(
            cfg.workers,
            cfg.max_workers,
            shared.stats_on,
            cfg.compaction,
            cpus,
            |i| WorkerSlot::new(ranges.get(i).cloned().unwrap_or(0..0)),
        )?;
        Ok(Self {
            queues,
            slots,
            pool,
            ticket: CachePadded::new(AtomicUsize::new(0)),
            // Runs dealt to the workers in turn only where nothing can move them.
            spawn_ranges: if cfg.stealing == QueueStealing::None {
                cfg.workers
            } else {
                1
            },
            spread: placement::affinity::spread_queues(cfg.queues, cfg.workers, cpus),
            watching: CachePadded::new(AtomicUsize::new(0)),
            shared,
            stealing: cfg.stealing,
            tuning: cfg.tuning.clone(),
            moves: stealing && cfg.tuning.affinity,
            runs: cfg.tuning.affinity,
            balance: stealing && cfg.tuning.balance,
            holds: stealing && cfg.tuning.batching,
            outbox: cfg.tuning.batching,
            placing: stealing && (cfg.tuning.affinity || cfg.tuning.balance),
            epoch: Instant::now(),
            detached: DetachedLink::default(),
        })
    }

    /// Builds the executor and starts its worker threads; cells reach it through the returned
    /// reference, whose table is [`OPS`].
    pub(crate) fn start_ref(cfg: &Config, shared: Arc<Shared>) -> io::Result<ExecRef> {
        let exec = Self::start(cfg, shared)?;
        // SAFETY: `OPS` is `ops_of::<Executor>()`.
        Ok(unsafe { ExecRef::from_arc_with(exec, &OPS) })
    }

    /// Builds the executor and starts its worker threads.
    pub(crate) fn start(cfg: &Config, shared: Arc<Shared>) -> io::Result<Arc<Self>> {
        let exec = Arc::new(Self::new(cfg, shared)?);
        // The pool keeps the body for the workers a resize adds: a weak reference, so the
        // executor does not own itself; each thread holds a strong one while it runs.
        let weak = Arc::downgrade(&exec);
        let body = move |i| {
            if let Some(e) = weak.upgrade() {
                crate::runtime::worker::run(&*e, i)
            }
        };
        if let Err(err) = exec.pool.spawn(body) {
            exec.shared.close(false);
            exec.begin_shutdown(false);
            exec.join_threads(false);
            exec.cleanup();
            return Err(err);
        }
        Ok(exec)
    }

    /// The queue in worker slot `slot`, or `None` while a thief is swapping it.
    #[inline]
    pub(crate) fn slot(&self, slot: usize) -> Option<&WorkQueue> {
        // SAFETY: non-null slots always point into `self.queues`, which lives as long as `self`.
        unsafe { self.slots[slot].load(Ordering::Acquire).as_ref() }
    }

    pub(crate) fn slots(&self) -> &[AtomicPtr<WorkQueue>] {
        &self.slots
    }

    /// Worker `w`'s range of slots. Written by a resize in its write section; read without a
    /// lock by the worker's passes and searches (a range read while a resize runs may be
    /// stale, or mixed, which costs at most a wasted look: see `unit.rs`), and inside read
    /// sections by thieves.
    #[inline]
    pub(crate) fn range(&self, w: usize) -> Range<usize> {
        self.pool.data(w).range()
    }

    #[inline]
    pub(crate) fn aborting(&self) -> bool {
        self.shared.life.aborting()
    }
}
