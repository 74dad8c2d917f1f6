//! A worker thread of the inverted executor: cycle through the owned queue range, gulp,
//! process, and sleep when there is nothing to do.
//!
//! Two refinements over the seed's loop, both measured (see the crate README):
//! - **Local fast path.** While a worker processes a gulped batch of queue `q`, a behaviour that
//!   sends to another actor of `q` appends straight to the batch, without the lock: every
//!   message for an actor of `q` is either in that batch or in `q` behind it, so order per pair
//!   and one-behaviour-at-a-time still hold. It is bounded by [`VISIT_BUDGET`] per visit; after
//!   that, sends go to the shared queue and the worker moves on, so one busy queue cannot starve
//!   the others. Once the budget is spent it is not renewed within the visit, so a later local
//!   message can never overtake an earlier one that went to the shared queue.
//! - **Re-gulp.** After a batch, the worker gulps the same queue again while it has messages, up
//!   to the same budget, instead of first testing every other queue of its range.
//!
//! Idle: a worker whose pass over its range finds nothing spins (re-testing its queues) for the
//! configured spin time, because waking a sleeping thread costs about 12 µs here and work often
//! comes back sooner; then it runs the idle-sleep handshake of [`crate::runtime::idle`].

use super::swap::try_swap;
use super::work_queue::{Gulp, WorkQueue};
use super::{Executor, Stealing};
use crate::actor::cell::{Header, Status};
use crate::executor::copy_queue::CopyQueue;
use crate::executor::envelope::Envelope;
use crate::executor::{run_batch, WorkerRef};
use crate::loom::{spin_hint, yield_now};
use crate::runtime::rng::XorShift;
use crate::stats::Counters;
use std::cell::{Cell, UnsafeCell};
use std::ptr;
use std::sync::Arc;
use std::time::Instant;

/// Messages a worker may process in one visit of a queue before moving on, and local sends it
/// may append to the batch during that visit.
pub(crate) const VISIT_BUDGET: u32 = 1024;

const NO_QUEUE: usize = usize::MAX;

/// How long a worker must have been idle before it tries to steal. The seed steals after two
/// empty passes; on a 2-vCPU VM two passes take under a microsecond, so momentary gaps in a
/// saturated workload triggered steals that bounced queues (and their actors' state) between
/// cores. Measured (balance-one / saturated executor, s, 2 workers): 0 µs 0.149 / 0.271;
/// 5 µs 0.144 / 0.260; 20 µs 0.151 / 0.286; 60 µs 0.167 / 0.259; no stealing 0.202 / 0.241.
const STEAL_AFTER: std::time::Duration = std::time::Duration::from_micros(5);

/// Fewest queued messages that make a queue worth stealing. The seed steals any non-empty
/// queue; but a queue holding the single in-flight message of a conversation (ping-pong, a
/// token ring) is better left where its partner runs: stealing it moves every later message
/// across cores (measured, ping-pong 40k: 2.7 ms without stealing, 17.1 ms stealing at 1).
const MIN_STEAL: usize = 4;

/// A pass wakes an idle thief only when at least two of its queues had this many envelopes
/// (real backlog): waking a thief for a token hopping through queues costs the busy worker a
/// system call and finds nothing worth stealing.
const WAKE_THIEF_BACKLOG: usize = 16;

/// While spinning idle, yield the CPU every this many passes over the queue range.
const YIELD_EVERY: u32 = 4;

thread_local! {
    static CURRENT: Cell<*const Worker> = const { Cell::new(ptr::null()) };
}

/// The worker running on this thread, if it belongs to `exec`.
#[inline]
pub(crate) fn current_of(exec: &Executor) -> Option<&Worker> {
    let w = CURRENT.with(Cell::get);
    // SAFETY: CURRENT is non-null only while `Worker::run` executes on this thread, and all code
    // that can reach this function on this thread then runs nested inside `run`, so the worker
    // outlives every use of the returned reference (crate code never stores it).
    let w = unsafe { w.as_ref()? };
    ptr::eq(&*w.exec, exec).then_some(w)
}

pub(crate) struct Worker {
    pub(crate) index: usize,
    exec: Arc<Executor>,
    /// The local queue: the batch being processed (empty between visits).
    batch: UnsafeCell<CopyQueue>,
    /// Ticket of the queue whose batch is being processed, or `NO_QUEUE`.
    current: Cell<usize>,
    /// Local sends left in this visit.
    budget: Cell<u32>,
    /// Victim and slot choice.
    rng: Cell<XorShift>,
}

impl Worker {
    pub(crate) fn new(index: usize, exec: Arc<Executor>) -> Self {
        Self {
            index,
            exec,
            batch: UnsafeCell::new(CopyQueue::new()),
            current: Cell::new(NO_QUEUE),
            budget: Cell::new(0),
            rng: Cell::new(XorShift::for_worker(index)),
        }
    }

    #[inline]
    pub(crate) fn counters(&self) -> Option<&Counters> {
        self.exec.core.counters_of(self.index)
    }

    /// Whether a send to `hdr` from this thread can take the local fast path.
    #[inline]
    pub(crate) fn try_push_local(&self, hdr: &Header, _env: &Envelope) -> bool {
        // `installed` of an actor of the held queue changes only on this thread; its status
        // changes on this thread, or under the queue lock from `Destroyed` to `Alive` (respawn),
        // and then `installed` stays false until the `Install` envelope runs here. So an actor
        // that passes both checks has every earlier envelope in the held batch, and a send that
        // fails them goes to the shared queue and closes the local path (`close_local`).
        self.can_push_local(hdr.queue) && hdr.status() == Status::Alive && hdr.installed()
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
    /// `try_push_local` returned true for this envelope's target, on this thread.
    #[inline]
    pub(crate) unsafe fn push_local(&self, env: Envelope) {
        self.budget.set(self.budget.get() - 1);
        // SAFETY: the batch is only touched by this thread, and no reference into it is live
        // across a behaviour (the drain loop re-borrows it for each `pop`).
        unsafe { (*self.batch.get()).push(env) };
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

    /// The worker's thread body.
    pub(crate) fn run(self) {
        struct Reset;
        impl Drop for Reset {
            fn drop(&mut self) {
                CURRENT.with(|c| c.set(ptr::null()));
            }
        }
        CURRENT.with(|c| c.set(&self));
        let _reset = Reset;
        self.main_loop();
    }

    fn main_loop(&self) {
        let exec = &*self.exec;
        let range = exec.set.range(self.index);
        let mut idle_since: Option<Instant> = None;
        let mut idle_passes = 0u32;
        loop {
            if exec.aborting() {
                return;
            }
            let mut busy_queues = 0u32;
            let mut backlogged = 0u32;
            for s in range.clone() {
                if let Some(q) = exec.slot(s) {
                    let n = self.visit(q);
                    busy_queues += u32::from(n > 0);
                    backlogged += u32::from(n >= WAKE_THIEF_BACKLOG);
                }
            }
            if busy_queues > 0 {
                // Backlog in more than one queue while another worker is idle: wake it, so it
                // can steal (the seed's general notification; one load when none is idle).
                if backlogged > 1 && exec.stealing != Stealing::None {
                    exec.idle.notify_any();
                }
                idle_since = None;
                idle_passes = 0;
                continue;
            }
            // Two consecutive passes over the range without work (the seed's 2 × range empty
            // queues): try to steal a queue, then go back to the own range either way.
            if exec.stealing != Stealing::None
                && idle_passes % 2 == 1
                && idle_since.is_some_and(|t| t.elapsed() >= STEAL_AFTER)
                && self.steal()
            {
                idle_since = None;
                idle_passes = 0;
                continue;
            }
            if exec.core.life.exit_ready() {
                // Every actor is terminal: leave once a locked pass finds nothing left (dead
                // letters and reclaim envelopes are still disposed of by the loop above).
                if !self.locked_search() {
                    return;
                }
                continue;
            }
            // Spin for a while: work usually comes back sooner than a wake-up would take.
            idle_passes += 1;
            let since = *idle_since.get_or_insert_with(Instant::now);
            if idle_passes % 16 != 0 || since.elapsed() < exec.spin {
                if idle_passes % YIELD_EVERY == 0 {
                    // Let a worker that shares our CPU run: it may be the one about to hand us
                    // work (measured on a 10k-hop ring when the kernel co-locates both workers:
                    // 12 ms yielding every 64th pass, 2.2 ms every 4th; 0.5-0.8 ms otherwise).
                    yield_now();
                } else {
                    for _ in 0..8 {
                        spin_hint();
                    }
                }
                continue;
            }
            // Idle sleep: announce, search exhaustively (under each queue's lock), then sleep.
            exec.idle.announce(self.index);
            if self.locked_search() || exec.core.life.exit_ready() {
                exec.idle.retire(self.index);
                idle_since = None;
                idle_passes = 0;
                continue;
            }
            if let Some(c) = self.counters() {
                c.sleeps.bump(1);
            }
            let stamp = exec.stamp_asleep(self.index);
            exec.idle.sleep(self.index);
            exec.idle.retire(self.index);
            exec.stamp_awake(self.index, stamp);
            idle_since = None;
            idle_passes = 0;
        }
    }

    fn random(&self, pick: impl FnOnce(&mut XorShift) -> usize) -> usize {
        let mut r = self.rng.get();
        let v = pick(&mut r);
        self.rng.set(r);
        v
    }

    /// One steal attempt (seed 002, "Stealing Mechanism"): choose a victim, scan its range once
    /// from a random index for a candidate queue (non-null, not being processed, non-empty), and
    /// try one wait-free swap with a random slot of our own range. Returns whether a queue was
    /// stolen.
    fn steal(&self) -> bool {
        let exec = &*self.exec;
        let me = self.index;
        let workers = exec.set.len();
        let count = |pick| exec.core.count(|| Some(me), pick);
        count(|c| &c.steal_attempts);
        exec.stamp_steal(me);
        let victim = match exec.stealing {
            Stealing::LongestVictim => exec.longest_victim(me),
            _ => self.random(|r| r.other_than(me, workers)),
        };
        let vr = exec.set.range(victim);
        let start = self.random(|r| r.below(vr.len()));
        let candidate = (0..vr.len())
            .map(|k| vr.start + (start + k) % vr.len())
            .find(|&s| {
                exec.slot(s)
                    .is_some_and(|q| !q.looks_processed() && q.len_hint() >= MIN_STEAL)
            });
        let Some(candidate) = candidate else {
            count(|c| &c.steal_fail_no_candidate);
            return false;
        };
        let own = exec.set.range(me);
        let mine = own.start + self.random(|r| r.below(own.len()));
        let Ok((stolen, given)) = try_swap(exec.slots(), mine, candidate) else {
            count(|c| &c.steal_fail_swap);
            return false;
        };
        // SAFETY: slot pointers always point into the executor's queues.
        let (stolen, given) = unsafe { (&*stolen, &*given) };
        stolen.set_owner(me);
        given.set_owner(victim);
        // The queue given away may have received a message whose sender read the old owner
        // (us, awake, so it did not notify). Its new owner must look: check under the lock
        // (after the owner update, so a later sender sees the new owner) and notify it.
        if given.lock().len() > 0 {
            exec.idle.notify(victim);
        }
        let n = stolen.len_hint() as u64;
        if let Some(c) = self.counters() {
            c.steals.bump(1);
            c.messages_stolen.bump(n);
            if n == 0 {
                c.empty_steals.bump(1);
            }
        }
        true
    }

    /// The idle worker's exhaustive search: takes each owned queue's lock, so it is ordered
    /// after the announcement, and every send published before it is seen.
    fn locked_search(&self) -> bool {
        let exec = &*self.exec;
        exec.set
            .range(self.index)
            .any(|s| exec.slot(s).is_some_and(|q| q.lock().len() > 0))
    }

    /// Gulps `q` and processes it (re-gulping while it has messages, within the budget).
    /// Returns the size of the first gulp (0: nothing was done).
    fn visit(&self, q: &WorkQueue) -> usize {
        let exec = &*self.exec;
        // SAFETY: no behaviour is running, so nothing else borrows the batch.
        let n = match q.gulp(unsafe { &mut *self.batch.get() }) {
            Gulp::Empty => return 0,
            Gulp::Missed => {
                if let Some(c) = self.counters() {
                    c.missed_gulps.bump(1);
                }
                return 0;
            }
            Gulp::Got(n) => n,
        };
        self.current.set(q.id);
        self.budget.set(VISIT_BUDGET);
        let mut gulps = 1;
        let mut gulped = n;
        let mut processed = 0;
        loop {
            processed += self.drain();
            // SAFETY: as above; the batch is drained.
            unsafe { (*self.batch.get()).reset_drained() };
            if processed >= VISIT_BUDGET as usize || exec.aborting() {
                break;
            }
            // SAFETY: as above.
            let n = q.regulp(unsafe { &mut *self.batch.get() });
            if n == 0 {
                break;
            }
            gulps += 1;
            gulped += n;
        }
        self.current.set(NO_QUEUE);
        q.done_processing();
        if let Some(c) = self.counters() {
            c.gulps.bump(gulps);
            c.gulped.bump(gulped as u64);
        }
        n
    }

    /// Runs every envelope of the batch, including those appended while it runs.
    fn drain(&self) -> usize {
        // SAFETY: the borrow of the batch ends with `pop`; behaviours may push after.
        let pop = || unsafe { (*self.batch.get()).pop() };
        run_batch(pop, WorkerRef::Inverted(self), usize::MAX)
    }
}
