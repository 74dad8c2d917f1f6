//! The message-centric executor as a unit of work of the runtime's worker loop
//! ([`crate::runtime::worker::Unit`]): a turn is a pass over the worker's range of queues,
//! visiting each with mail; an idle worker steals now and then, sleeps after the loop's spin,
//! and watches for mail stuck behind a long behaviour (`placement/balance.rs`).

use super::placement::affinity::RunEntry;
use super::placement::affinity::FOLLOW_SLOTS;
use super::ranges;
use super::row::WorkerSlot;
use super::visit::{Local, McWorker, NO_QUEUE};
use super::{Executor, QueueStealing};
use crate::core::copy_queue::{CopyQueue, INITIAL_CAPACITY};
use crate::runtime::compaction;
use crate::runtime::idle::SpinBudget;
use crate::runtime::loom::sync::atomic::{fence, Ordering};
use crate::runtime::pool::Pool;
use crate::runtime::rng::XorShift;
use crate::runtime::worker::{Idleness, Turn, Unit};
use std::cell::{Cell, UnsafeCell};
use std::time::{Duration, Instant};

/// A pass that gulped this many envelopes may have taken long: the compaction controller's
/// window may have ended (`runtime/compaction.rs`; one clock read per such pass).
const TICK_AFTER: usize = 256;

impl Unit for Executor {
    type Slot = WorkerSlot;
    type Local = Local;

    fn pool(&self) -> &Pool<WorkerSlot> {
        &self.pool
    }

    fn owner(&self) -> *const () {
        self.shared.id()
    }

    fn life(&self) -> &crate::runtime::life::Life {
        &self.shared.life
    }

    fn local(&self, index: usize) -> Local {
        // A row can outlive its thread (removed, then added again): the count of envelopes
        // run starts again at 0, and a refusal's mark from the old thread goes with it.
        self.pool
            .data(index)
            .busy
            .no_backlog
            .store(0, std::sync::atomic::Ordering::Relaxed);
        Local {
            batch: UnsafeCell::new(CopyQueue::new()),
            current: Cell::new(NO_QUEUE),
            budget: Cell::new(0),
            rng: Cell::new(XorShift::for_worker(index)),
            stamp: Cell::new(0),
            spawns: Cell::new(0),
            visit_spawns: Cell::new(0),
            visits: Cell::new(0),
            seen: (0..self.pool.capacity())
                .map(|_| Cell::new((u64::MAX, Instant::now())))
                .collect(),
            rescue_wait: Cell::new(self.tuning.rescue_wait_first),
            watching: Cell::new(false),
            owes_pass: Cell::new(false),
            holds: (0..self.queues.len()).map(|_| Cell::new(None)).collect(),
            holding: Cell::new(false),
            row: self.pool.data(index),
            unwaited_visits: (0..self.queues.len()).map(|_| Cell::new(0)).collect(),
            outbox: UnsafeCell::new((0..self.queues.len()).map(|_| CopyQueue::new()).collect()),
            pinned: (0..self.queues.len()).map(|_| Cell::new(false)).collect(),
            pins: UnsafeCell::new(Vec::new()),
            ran: Cell::new(0),
            split_seen: Cell::new(None),
            seen_ran: (0..self.pool.capacity())
                .map(|_| Cell::new((u64::MAX, Instant::now())))
                .collect(),
            follow: (0..FOLLOW_SLOTS)
                .map(|_| Cell::new(RunEntry::default()))
                .collect(),
        }
    }

    /// A pass over the worker's range; then, if it found nothing, maybe a steal. Inlined into
    /// the runtime's loop: the time of an empty pass is the latency of a hand-off to an idle
    /// worker, and a call per pass lengthens it.
    #[inline(always)]
    fn turn(&self, me: &McWorker<'_>, idle: &Idleness) -> Turn {
        if self.aborting() {
            return Turn::Exit;
        }
        let mut busy_queues = 0u32;
        let mut backlogged = 0u32;
        let mut gulped = 0usize;
        let mut holding = false;
        let maybe_holding = me.local.holding.replace(false);
        // No read section of the resize lock here (one would lengthen every idle pass, the
        // latency of a hand-off): a pass only reads the range and gulps, and a queue a resize
        // moved meanwhile is at worst visited once more by its old owner, which its
        // `being_processed` flag makes harmless, as after a steal. (What a resize must exclude
        // is a steal's swap: see `steal`; a message is never stranded by a stale range: see
        // `after_resize`.)
        for s in me.local.row().range() {
            // The "test" of test-and-gulp, inline: an idle worker polls its queues this way,
            // and the time of an empty pass is the latency of a hand-off to it.
            match self.slot(s) {
                Some(q) if maybe_holding && self.holds(me, q) => holding = true,
                Some(q) if !q.looks_empty() => {
                    if !self.pool.is_active(me.index) {
                        // Deactivated during this pass: the rest of the range is another's
                        // (mail there behind a long behaviour of this worker's could not be
                        // rescued: rescues look at active workers alone).
                        break;
                    }
                    let n = self.visit(me, q);
                    gulped += n;
                    busy_queues += u32::from(n > 0);
                    backlogged += u32::from(n >= self.tuning.wake_thief_backlog);
                }
                _ => {}
            }
        }
        if holding {
            // (A visit of this pass that started a hold set the flag itself.)
            me.local.holding.set(true);
        }
        if busy_queues > 0 {
            if gulped >= TICK_AFTER {
                // A long pass: the runtime's loop looks at the clock only every few dozen
                // turns, and turns like this one may take milliseconds.
                compaction::tick(self, Instant::now());
            }
            // Backlog in more than one queue while another worker is idle: wake it, so it can
            // steal (the general notification of the Cforall actor system: Colby Parsons,
            // MMath thesis, Waterloo 2023; one load when none is idle).
            if backlogged > 1 && self.stealing != QueueStealing::None {
                self.pool.notify_any();
            }
            me.local.rescue_wait.set(self.tuning.rescue_wait_first);
            return Turn::Worked;
        }
        // Two consecutive passes over the range without work (the thesis's 2 × range empty
        // queues), idle for at least `steal_after` (or, for a worker that learned not to spin
        // and was woken with nothing to do, right away: its last chance): try to steal.
        // (A worker holding a queue off, rule 7, has work: it steals nothing meanwhile, but
        // still rescues mail stuck behind another worker's long behaviour, rule 3.)
        if self.stealing != QueueStealing::None
            && idle.passes % 2 == 1
            && (idle.last_chance() || idle.longer_than(self.tuning.steal_after))
            && self.pool.len() > 1
            && self.steal(me, holding)
        {
            me.local.rescue_wait.set(self.tuning.rescue_wait_first);
            self.stop_watching_and_pass_on(me, 2);
            return Turn::Worked;
        }
        if holding {
            Turn::Holding
        } else {
            Turn::Idle
        }
    }

    /// The idle worker's exhaustive search: takes each owned queue's lock, so it is ordered
    /// after the announcement, and every send published before it is seen.
    /// (No read section: a search with a range a resize is changing may miss a queue that
    /// moved here, but the resize then notifies this worker, its owner, if that queue holds
    /// envelopes: see `after_resize`.)
    fn search(&self, me: &McWorker<'_>) -> bool {
        // Ordered after the announcement, as `after_resize`'s notification after its range
        // stores (Dekker, both sides fenced).
        fence(Ordering::SeqCst);
        self.range(me.index)
            .any(|s| self.slot(s).is_some_and(|q| q.lock().len() > 0))
    }

    fn exit_ready(&self) -> bool {
        // Every actor is terminal: dead letters and reclaim envelopes are still disposed of by
        // the turns before the last search.
        self.shared.life.exit_ready()
    }

    fn closed(&self) -> bool {
        self.shared.life.closed()
    }

    fn spin(&self) -> SpinBudget {
        SpinBudget::new(self.tuning.spin, self.tuning.adaptive_spin)
    }

    /// A behaviour (or a task it runs) forks a task thieves may take, finishes a task, or
    /// waits in a join or scope: the outbox is flushed ("Sends into a backlog" in
    /// `README.md`): what was sent before is queued before anything the other tasks send
    /// after, and a thief's respawn does not wait for a pin of this worker while it waits in
    /// the join or scope.
    fn publish_kept(&self, me: &McWorker<'_>) {
        self.flush_outbox(me);
    }

    const RELEASES_MEMORY: bool = true;

    /// About to sleep: the worker stops being a steal victim.
    fn sleeping(&self, me: &McWorker<'_>) {
        me.local.stamp.set(self.stamp_asleep(me.index));
    }

    /// Idle for a while (`runtime::worker::RELEASE_AFTER`): the system is quiet here, so the
    /// arrays a burst left behind (in this worker's batch and in its empty queues) go back to
    /// the allocator.
    fn release_memory(&self, me: &McWorker<'_>) {
        // SAFETY: no behaviour runs: nothing else borrows the batch.
        unsafe { (*me.local.batch.get()).release_if_larger(INITIAL_CAPACITY) };
        for s in self.range(me.index) {
            if let Some(q) = self.slot(s) {
                let freed = q.lock().take_idle_array();
                drop(freed); // outside the lock: senders spin on it
            }
        }
    }

    /// Rescue watch: if another worker's queues hold mail that is not being processed, that
    /// mail may be stuck behind a long behaviour, and nobody would notify this
    /// worker about it (a send to a queue its owner holds notifies nobody). Sleep at most the
    /// rescue wait then, and look again (see `README.md`, "Placement"). The queues are
    /// looked at under their locks, so a send or spawn published before is seen; one
    /// published after sees this worker announced idle and no watch up, and wakes it
    /// (`Executor::pushed_own`).
    fn sleep_limit(&self, me: &McWorker<'_>) -> Option<Duration> {
        if !self.balance {
            return None;
        }
        let l = &me.local;
        // Counted as watching from before the look (so a sender that finds a queue of its own
        // looked at and passed does not wake this worker for nothing), across the time-outs,
        // until the worker begins a visit or a steal (it works again) or decides not to watch,
        // which it decides by a second look after leaving the count (so a sender that comes
        // after that look sees no watcher). Each time-out thus leaves it counted: a watcher
        // that left the count on waking would be woken by every sender to its own queues
        // until it is back.
        if !l.watching.replace(true) {
            self.watching.fetch_add(1, Ordering::SeqCst);
        }
        if !self.mail_elsewhere(me) {
            self.stop_watching(l);
            if !self.mail_elsewhere(me) {
                return None;
            }
            l.watching.set(true);
            self.watching.fetch_add(1, Ordering::SeqCst);
        }
        let wait = l.rescue_wait.get();
        l.rescue_wait
            .set((wait * 2).min(self.tuning.rescue_wait_max));
        Some(wait)
    }

    fn found_work(&self, me: &McWorker<'_>) {
        if self.balance {
            self.went_idle(me);
        }
    }

    fn woke(&self, me: &McWorker<'_>) {
        self.stamp_awake(me.index, me.local.stamp.get());
        if self.balance {
            self.went_idle(me);
        }
    }

    /// Some queue holds mail, or some active worker's batch holds mail behind the behaviour
    /// it runs (lock-free looks): the active workers are all busy, so it waits. (A ring's
    /// token waits this way too: the activation it causes does not pay, and the controller's
    /// holdoff makes such tries rare.)
    fn waiting(&self, active: usize) -> bool {
        self.queues.iter().any(|q| q.len_hint() > 0)
            || (0..active.min(self.pool.len())).any(|w| self.pool.data(w).busy.mail_behind())
    }

    fn holds_work(&self, row: usize) -> bool {
        self.pool
            .data_if_made(row)
            .is_some_and(|d| d.busy.mail_behind())
    }

    /// Messages run by every worker (counted while balance is on).
    fn progress(&self) -> Option<u64> {
        self.balance.then(|| {
            (0..self.pool.rows())
                .filter_map(|w| self.pool.data_if_made(w))
                .map(|d| d.busy.messages.load(Ordering::Relaxed))
                .sum()
        })
    }

    /// A removed worker no longer watches, and passes on a wake-up it may have taken.
    fn leave(&self, me: &McWorker<'_>) {
        self.stop_watching(&me.local);
        me.local.owes_pass.set(false);
        if self.balance {
            self.pass_on(me.index, None);
        }
    }

    /// A worker about to run a fork/join task (which may be long) no longer watches, as at the
    /// start of a visit (`begin_visit`).
    fn before_tasks(&self, me: &McWorker<'_>) {
        self.stop_watching_and_pass_on(me, 1);
        // A held queue (rule 7) waits for the tasks like any other queue of this worker;
        // after them, it is gulped at once.
        if me.local.holding.replace(false) {
            for (id, h) in me.local.holds.iter().enumerate() {
                // (A queue that moved away since is its new owner's to mark.)
                if h.take().is_some() && self.queues[id].owner() == me.index {
                    self.queues[id].set_held(false);
                }
            }
        }
    }

    /// Each worker needs a queue: at most M workers (M stays fixed: an actor's ticket changes
    /// only when it moves, never because of a resize; see `README.md`, "Resizing").
    fn max_workers(&self) -> (usize, String) {
        let m = self.queues.len();
        (
            m,
            format!(
                "the message-centric executor has {m} message queues and each worker needs one; \
                 build it with more (`ActorSystemBuilder::queues` or `queues_per_worker`)"
            ),
        )
    }

    /// Re-divides the queue-pointer array over the `new` workers (the thesis's contiguous
    /// ranges), and gives every queue the owner whose range now holds its slot: whole queues
    /// move, as in a steal. No thief is swapping (thieves swap inside read sections), so every
    /// slot holds a queue.
    /// (Allocates nothing: compaction resizes while a program runs.)
    fn resized(&self, _old: usize, new: usize) {
        let m = self.queues.len();
        assert!(new > 0 && m >= new);
        for w in 0..self.pool.capacity() {
            if let Some(d) = self.pool.data_if_made(w) {
                let r = if w < new {
                    ranges::range_of(m, new, w)
                } else {
                    0..0
                };
                d.start.store(r.start, Ordering::Relaxed);
                d.end.store(r.end, Ordering::Relaxed);
            }
        }
        for w in 0..new {
            for s in ranges::range_of(m, new, w) {
                let q = self.slot(s).expect("no swap runs during a resize");
                q.set_owner(w);
            }
        }
    }

    /// A message sent while the resize ran may have notified a queue's old owner: every queue
    /// that holds envelopes now has its (new) owner notified. A sender that publishes after
    /// this check's lock of its queue reads the new owner (stored before, under the write
    /// lock), so either this check or the sender wakes the right worker.
    fn after_resize(&self, _old: usize, _new: usize) {
        // The ranges were stored before; a sleeper's search reads its range after a fence too.
        fence(Ordering::SeqCst);
        for q in self.queues.iter() {
            let g = q.lock();
            let pending = g.len() > 0;
            drop(g);
            if pending {
                self.wake_owner(q.owner());
            }
        }
    }
}
