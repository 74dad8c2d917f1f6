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

use super::copy_queue::CopyQueue;
use super::envelope::Envelope;
use super::work_queue::{Gulp, WorkQueue};
use super::Executor;
use crate::actor::cell::{Header, Status};
use crate::loom::spin_hint;
use crate::stats::Counters;
use std::any::Any;
use std::cell::{Cell, UnsafeCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;
use std::time::Instant;

/// Messages a worker may process in one visit of a queue before moving on, and local sends it
/// may append to the batch during that visit.
pub(crate) const VISIT_BUDGET: u32 = 1024;

const NO_QUEUE: usize = usize::MAX;

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
}

impl Worker {
    pub(crate) fn new(index: usize, exec: Arc<Executor>) -> Self {
        Self {
            index,
            exec,
            batch: UnsafeCell::new(CopyQueue::new()),
            current: Cell::new(NO_QUEUE),
            budget: Cell::new(0),
        }
    }

    #[inline]
    pub(crate) fn executor(&self) -> &Executor {
        &self.exec
    }

    #[inline]
    pub(crate) fn counters(&self) -> Option<&Counters> {
        self.exec.stats_on.then(|| &*self.exec.counters[self.index])
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
            let mut found = false;
            for s in range.clone() {
                found |= self.visit(exec.slot(s));
            }
            if found {
                idle_since = None;
                idle_passes = 0;
                continue;
            }
            if exec.exit_ready() {
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
                    std::thread::yield_now();
                } else {
                    for _ in 0..8 {
                        spin_hint();
                    }
                }
                continue;
            }
            // Idle sleep: announce, search exhaustively (under each queue's lock), then sleep.
            exec.idle.announce(self.index);
            if self.locked_search() || exec.exit_ready() {
                exec.idle.retire(self.index);
                idle_since = None;
                idle_passes = 0;
                continue;
            }
            if let Some(c) = self.counters() {
                c.sleeps.bump(1);
            }
            exec.idle.sleep(self.index);
            exec.idle.retire(self.index);
            idle_since = None;
            idle_passes = 0;
        }
    }

    /// The idle worker's exhaustive search: takes each owned queue's lock, so it is ordered
    /// after the announcement, and every send published before it is seen.
    fn locked_search(&self) -> bool {
        let exec = &*self.exec;
        exec.set
            .range(self.index)
            .any(|s| exec.slot(s).lock().len() > 0)
    }

    /// Gulps `q` and processes it (re-gulping while it has messages, within the budget).
    /// Returns whether any work was done.
    fn visit(&self, q: &WorkQueue) -> bool {
        let exec = &*self.exec;
        // SAFETY: no behaviour is running, so nothing else borrows the batch.
        let n = match q.gulp(unsafe { &mut *self.batch.get() }) {
            Gulp::Empty => return false,
            Gulp::Missed => {
                if let Some(c) = self.counters() {
                    c.missed_gulps.bump(1);
                }
                return false;
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
        true
    }

    /// Runs every envelope of the batch, including those appended while it runs.
    fn drain(&self) -> usize {
        let mut n = 0;
        loop {
            // Behaviour panics are caught per envelope where the actor is known; this catches
            // what is left (a message's or a finished actor's destructor), once per batch.
            let r = catch_unwind(AssertUnwindSafe(|| loop {
                // SAFETY: the borrow of the batch ends with `pop`; behaviours may push after.
                let e = unsafe { (*self.batch.get()).pop() };
                let Some(e) = e else { return };
                n += 1;
                e.run(self);
            }));
            match r {
                Ok(()) => return n,
                Err(p) => {
                    report_panic("a destructor run by the executor", &*p);
                    if let Some(c) = self.counters() {
                        c.panics.bump(1);
                    }
                }
            }
        }
    }
}

/// Reports a caught panic on standard error (the panic hook has printed its message already).
pub(crate) fn report_panic(what: &str, payload: &(dyn Any + Send)) {
    let msg = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("<non-string panic payload>");
    eprintln!("actorium: {what} panicked: {msg}");
}
