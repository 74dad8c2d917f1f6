//! A worker's visit of a queue (the Cforall actor system: Colby Parsons, MMath thesis, Waterloo
//! 2023, "Queue Gulping"): gulp the whole queue, run the batch, re-gulp while it has mail and
//! the visit's budget lasts; and the local fast path, a behaviour's send to an actor of the
//! held queue appended to the batch with no lock. `README.md` here says why order and mutual
//! exclusion hold. Also the worker's own state ([`Local`]), including what the placement rules
//! keep per worker.
//!
//! Exactly what a visit runs: every batch it takes, each to its end (the first gulp, the
//! local sends appended meanwhile, at most [`VISIT_BUDGET`], and re-gulps), as long as fewer
//! than [`VISIT_BUDGET`] envelopes have run; a system stopping at once (dropped, or a
//! shutdown's deadline passed) is noticed before each envelope, a resize that removed the
//! worker every [`ABORT_CHECK`] envelopes, also in the middle of a batch, and the rest of the
//! batch goes back to the front of its queue ([`WorkQueue::give_back`]).

use super::placement::affinity::RunEntry;
use super::placement::batching::Hold;
use super::row::WorkerSlot;
use super::work_queue::{Gulp, WorkQueue};
use super::Executor;
use crate::core::copy_queue::{CopyQueue, QUIET_GULPS_CIRCULATING};
use crate::core::envelope::Envelope;
use crate::core::{run_batch, Header, Status, WorkerRef};
use crate::runtime::context;
use crate::runtime::rng::XorShift;
use crate::runtime::worker::Worker;
use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Envelopes a worker may run in one visit of a queue before moving on, and local sends it
/// may append to the batch during that visit.
pub(crate) const VISIT_BUDGET: u32 = 1024;

/// Envelopes run between two checks that the worker is still active (and flushes of its
/// outbox).
pub(crate) const ABORT_CHECK: usize = 64;

pub(crate) const NO_QUEUE: usize = usize::MAX;

/// A worker of this executor, as the runtime runs it.
pub(crate) type McWorker<'a> = Worker<'a, Executor>;

/// The worker's own state, on its thread.
pub(crate) struct Local {
    /// The local queue: the batch being processed (empty between visits).
    pub(crate) batch: UnsafeCell<CopyQueue>,
    /// Ticket of the queue whose batch is being processed, or `NO_QUEUE`.
    pub(crate) current: Cell<usize>,
    /// Local sends left in this visit.
    pub(crate) budget: Cell<u32>,
    /// Victim and slot choice.
    pub(crate) rng: Cell<XorShift>,
    /// The steal timestamp to restore when waking (see `Executor::stamp_asleep`).
    pub(crate) stamp: Cell<u64>,
    /// Spawns made on this worker, for the round-robin over its own range.
    pub(crate) spawns: Cell<usize>,
    /// Spawns made in the current visit (see `spread_after`).
    pub(crate) visit_spawns: Cell<u32>,
    /// This worker's visit count as published in its slot (odd: in a visit).
    pub(crate) visits: Cell<u64>,
    /// Per other worker: its visit count when this worker last saw it change, and when.
    pub(crate) seen: Box<[Cell<(u64, Instant)>]>,
    /// The time limit of the next rescue watch (see `rescue_wait_first`).
    pub(crate) rescue_wait: Cell<Duration>,
    /// Runs of counted sends to one actor (see `follows` in `placement/affinity.rs`,
    /// [`RunEntry`]), indexed by the receiver's address.
    pub(crate) follow: Box<[Cell<RunEntry>]>,
    /// Envelopes this worker has run (mirrored in its slot's `busy.ran` while placement is on).
    pub(crate) ran: Cell<u64>,
    /// `ran` at the last split request this worker took, and when (see
    /// `Executor::split_current`).
    pub(crate) split_seen: Cell<Option<(u64, Instant)>>,
    /// Per other worker: its `ran` when this worker last saw it change, and when.
    pub(crate) seen_ran: Box<[Cell<(u64, Instant)>]>,
    /// This worker counts in `Executor::watching` (it is in, or just out of, a rescue watch).
    pub(crate) watching: Cell<bool>,
    /// This worker was announced idle and has not committed to work since (a visit, a steal,
    /// fork/join tasks): then it passes a wake-up on (`Executor::pass_on`).
    pub(crate) owes_pass: Cell<bool>,
    /// The queues this worker holds off until their batches have grown (placement rule 7),
    /// indexed by queue.
    pub(crate) holds: Box<[Cell<Option<Hold>>]>,
    /// Whether a hold may be under way: set when one starts, cleared by a pass over the
    /// range that found none (so a pass looks at the holds only while there may be one: the
    /// look, for each queue of the range, would weigh on every idle pass).
    pub(crate) holding: Cell<bool>,
    /// This worker's row of the pool (`Pool::data`), looked up once: rows, once made, live
    /// as long as the pool, which outlives its workers.
    pub(crate) row: *const WorkerSlot,
    /// Per queue, its visits in a row (up to `sink_visits`) that handed nothing off.
    pub(crate) unwaited_visits: Box<[Cell<u8>]>,
    /// The outbox (`README.md`, "Sends into a backlog"): per queue, the envelopes this
    /// worker's behaviours sent to its actors since the last flush, once the queue held a
    /// backlog; queued by [`Executor::flush_outbox`].
    pub(crate) outbox: UnsafeCell<Box<[CopyQueue]>>,
    /// Per queue, whether this worker pinned it (`WorkQueue::pin`) since the last flush.
    pub(crate) pinned: Box<[Cell<bool>]>,
    /// The queues this worker pinned since the last flush, in the order it pinned them.
    pub(crate) pins: UnsafeCell<Vec<usize>>,
}

/// The worker of `exec` running on this thread, if any.
///
/// # Safety
/// As [`context::current`]: the reference is used only during the caller's call.
#[inline]
pub(crate) unsafe fn current_of(exec: &Executor) -> Option<&McWorker<'_>> {
    // SAFETY: forwarded contract.
    unsafe { context::current::<Executor>(&exec.pool) }
}

impl Local {
    /// This worker's row of the pool (its `busy` line, its range).
    #[inline(always)]
    pub(crate) fn row(&self) -> &WorkerSlot {
        // SAFETY: `row` was taken from `Pool::data` when the worker started; a made row is
        // never dropped or moved while the pool lives, and the pool outlives the worker's
        // `Local`.
        unsafe { &*self.row }
    }

    /// Whether this worker holds queue `ticket` and may still append to its batch this visit.
    #[inline]
    pub(crate) fn can_push_local(&self, ticket: usize) -> bool {
        self.current.get() == ticket && self.budget.get() > 0
    }

    /// A send for queue `ticket` went to its shared queue: if this worker holds that queue,
    /// no later send may be appended to the batch in this visit (it would overtake).
    #[inline]
    pub(crate) fn close_local(&self, ticket: usize) {
        if self.current.get() == ticket {
            self.budget.set(0);
        }
    }

    /// Appends to the batch being processed.
    ///
    /// # Safety
    /// `try_push_local` (or `can_push_local` for a start envelope) returned true for this
    /// envelope's target, on this thread.
    #[inline(always)]
    pub(crate) unsafe fn push_local(&self, env: Envelope) {
        self.budget.set(self.budget.get() - 1);
        // SAFETY: the batch is only touched by this thread, and no reference into it is live
        // across a behaviour (the drain loop re-borrows it for each `pop`).
        unsafe { (*self.batch.get()).push(env) };
    }

    /// Whether a send to `hdr` from this thread can take the local fast path.
    #[inline(always)]
    pub(crate) fn try_push_local(&self, hdr: &Header) -> bool {
        // `installed` of an actor of the held queue changes only on this thread; its status
        // changes on this thread, or under the queue lock from `Destroyed` to `Alive` (respawn),
        // and then `installed` stays false until the `Install` envelope runs here. So an actor
        // that passes both checks has every earlier envelope in the held batch, and a send that
        // fails them goes to the shared queue and closes the local path (`close_local`).
        self.can_push_local(hdr.queue()) && hdr.status() == Status::Alive && hdr.installed()
    }

    /// The queue whose batch this worker is processing, or `usize::MAX` (above every queue).
    #[inline]
    pub(crate) fn current_or_max(&self) -> usize {
        self.current.get()
    }

    /// Whether this worker is processing queue `ticket`'s batch right now.
    #[inline]
    pub(crate) fn is_current(&self, ticket: usize) -> bool {
        self.current.get() == ticket
    }

    /// Appends to the batch being processed without spending budget (a reclaim envelope, which
    /// creates no further work).
    ///
    /// # Safety
    /// `is_current` holds for the envelope target's queue, on this thread.
    #[inline]
    pub(crate) unsafe fn push_local_unbudgeted(&self, env: Envelope) {
        // SAFETY: as for `push_local`.
        unsafe { (*self.batch.get()).push(env) };
    }

    pub(crate) fn random(&self, pick: impl FnOnce(&mut XorShift) -> usize) -> usize {
        let mut r = self.rng.get();
        let v = pick(&mut r);
        self.rng.set(r);
        v
    }
}

/// The messages in the batch just gulped, for the statistics (0 when they are off: the count
/// costs a pass over the batch, so it is made only when asked for).
pub(crate) fn messages_in(l: &Local, me: &McWorker<'_>) -> u64 {
    if me.counters().is_none() {
        return 0;
    }
    // SAFETY: no behaviour is running, so nothing else borrows the batch.
    unsafe { (*l.batch.get()).messages() as u64 }
}

impl Executor {
    /// A visit begins: published for thieves watching for stuck visits. The worker is no
    /// longer a rescue watcher, from before its first behaviour (counted while it runs, it
    /// would keep itself from waking anyone for the mail its behaviours queue in its own
    /// queues: `Executor::pushed_own`).
    #[inline]
    pub(crate) fn begin_visit(&self, me: &McWorker<'_>) {
        // Busy from now, for compaction (a long behaviour is work, though its turn has not
        // returned).
        me.at_work();
        // (The queue it visits now was gulped: any other of its queues with mail waits.)
        self.stop_watching_and_pass_on(me, 1);
        me.local.visit_spawns.set(0);
        if !self.balance {
            // Nobody watches for stuck visits (rules 3 and 4 are off).
            return;
        }
        let v = me.local.visits.get() + 1;
        me.local.visits.set(v);
        me.local.row().busy.visits.store(v, Ordering::Relaxed);
    }

    /// A visit ended: published for thieves watching for stuck visits.
    #[inline]
    pub(crate) fn end_visit(&self, me: &McWorker<'_>) {
        if !self.balance {
            return;
        }
        let l = &me.local;
        // A split asked about this visit's last behaviour has nothing left to split, and the
        // next visit's behaviours are timed from its own requests (idle time between visits
        // would count as behaviour time).
        let busy = &l.row().busy;
        if busy.split.load(Ordering::Relaxed) != 0 {
            busy.split.store(0, Ordering::Relaxed);
        }
        l.split_seen.set(None);
        let v = l.visits.get() + 1;
        l.visits.set(v);
        l.row().busy.visits.store(v, Ordering::Relaxed);
    }

    /// A gulp of `n` envelopes: publishes where the batch ends (`Busy::behind`).
    #[inline]
    pub(crate) fn note_behind(&self, me: &McWorker<'_>, n: usize) {
        if self.balance {
            let busy = &me.local.row().busy;
            busy.behind
                .store(me.local.ran.get() + n as u64, Ordering::Relaxed);
        }
    }

    /// Gulps `q` and processes it, re-gulping while it has messages and fewer than
    /// [`VISIT_BUDGET`] envelopes have run (each batch runs whole; see the module docs). On
    /// abort or removal, hands back what is left. Returns the size of the first gulp (0:
    /// nothing was done).
    ///
    /// Placement rule 7: while the visit hands nothing off (no message into another queue, no
    /// reply that wakes a waiter) and every send to `q` took the local path, mail in `q`'s
    /// shared part came from other threads that do not wait for this visit. A re-gulp of
    /// fewer than `hold_batch` envelopes then ends the visit instead, and the worker holds `q`
    /// off (see [`Self::holds`]) so that its next batch is larger. So does a visit of a sink
    /// (a queue whose last `sink_visits` visits handed nothing off) that found mail gathered
    /// ([`hold_after`](super::placement::batching::hold_after)). Each queue has its own hold;
    /// a held queue is marked for thieves, who leave it to its owner (rescues aside).
    pub(crate) fn visit(&self, me: &McWorker<'_>, q: &WorkQueue) -> usize {
        let l = &me.local;
        // SAFETY: no behaviour is running, so nothing else borrows the batch; each borrow
        // ends before the next behaviour runs (this holds for every `batch` borrow below).
        let (first, messages) = match q.gulp(unsafe { &mut *l.batch.get() }) {
            Gulp::Empty => return 0,
            Gulp::Missed => {
                if let Some(c) = me.counters() {
                    c.missed_gulps.bump(1);
                }
                return 0;
            }
            Gulp::Got(n) => {
                self.note_behind(me, n);
                (n, messages_in(l, me))
            }
        };
        self.begin_visit(me);
        l.current.set(q.id);
        l.budget.set(VISIT_BUDGET);
        let handoffs = context::handoffs();
        // Nobody waits for this visit, and mail in `q`'s shared part came from elsewhere.
        let unwaited = || self.holds && l.budget.get() > 0 && context::handoffs() == handoffs;
        let mut streamed = false;
        let mut gave_back = false;
        let mut gulps = u64::from(messages > 0);
        let mut gulped = messages;
        let mut processed = 0;
        loop {
            processed += self.drain(me);
            // SAFETY: as above.
            let batch = unsafe { &mut *l.batch.get() };
            if !batch.is_empty() {
                // The system is being dropped, or this worker was removed: the rest goes back
                // to the front of the queue, before `being_processed` is cleared (so it runs
                // before anything sent since), for shutdown to dispose of or for the queue's
                // new owner, which is told.
                q.give_back(batch);
                gave_back = true;
                break;
            }
            // (Arrays circulate between this worker's queues: they wait longer to shrink.)
            batch.reset_drained_after(QUIET_GULPS_CIRCULATING);
            if processed >= VISIT_BUDGET as usize || self.aborting() {
                break;
            }
            // (The queue's count, a line its senders write, is read only when it matters.)
            if unwaited() && (1..self.tuning.hold_batch).contains(&q.len_hint()) {
                streamed = true;
                break;
            }
            match q.regulp(batch) {
                Gulp::Got(n) => {
                    self.note_behind(me, n);
                    streamed = true;
                    let messages = messages_in(l, me);
                    gulps += u64::from(messages > 0);
                    gulped += messages;
                }
                _ => break,
            }
        }
        l.current.set(NO_QUEUE);
        q.done_processing();
        self.end_visit(me);
        if gave_back && !self.aborting() {
            // Removed mid-batch (a resize moved `q` to another worker): wake its owner, as a
            // sender would. (If the resize's `after_resize` looked at `q` before the
            // hand-back, the hand-back's lock acquisition came after that look, and this reads
            // the owner the resize stored; if after, the look saw the mail and notified that
            // owner itself.)
            self.wake_owner(q.owner());
        }
        if self.holds {
            self.note_hold(me, q, !gave_back && unwaited(), streamed, first);
        }
        if let Some(c) = me.counters() {
            c.gulps.bump(gulps);
            c.gulped.bump(gulped);
        }
        first
    }

    /// Runs envelopes of the batch (including those appended while it runs) until it is empty,
    /// the system stops at once (checked before each envelope) or this worker was removed
    /// (checked every [`ABORT_CHECK`]). Returns how many ran.
    pub(crate) fn drain(&self, me: &McWorker<'_>) -> usize {
        let l = &me.local;
        let busy = &l.row().busy;
        let messages = Cell::new(0u64);
        let mut pop = || {
            if self.balance {
                // Between two behaviours: a split asked about the one that just ended
                // (placement rule 4), then the count thieves watch for one long behaviour.
                if busy.split.load(Ordering::Relaxed) != 0 {
                    self.split_current(me, true);
                }
                let ran = l.ran.get() + 1;
                l.ran.set(ran);
                busy.ran.store(ran, Ordering::Relaxed);
            }
            if self.aborting() {
                // Stopping at once (a shutdown's deadline passed, or the system was dropped):
                // no queued behaviour starts; the rest goes back to the queue.
                return None;
            }
            // SAFETY: the borrow of the batch ends with `pop`; behaviours may push after.
            let e = unsafe { (*l.batch.get()).pop() };
            if let Some(e) = &e {
                messages.set(messages.get() + u64::from(e.is_message()));
            }
            e
        };
        let w = WorkerRef {
            index: me.index,
            counters: me.counters(),
        };
        let mut n = 0;
        loop {
            let ran = run_batch(&mut pop, w, ABORT_CHECK);
            n += ran;
            if self.balance {
                let m = busy.messages.load(Ordering::Relaxed) + messages.take();
                busy.messages.store(m, Ordering::Relaxed);
            }
            self.flush_outbox(me);
            // (A removed worker leaves within ABORT_CHECK envelopes, not after the whole
            // batch: a batch can be a backlog of millions, and a resize waits for it.)
            // (An abort ended the chunk early: `pop` checks it.)
            if ran < ABORT_CHECK || !self.pool.is_active(me.index) {
                return n;
            }
        }
    }
}
