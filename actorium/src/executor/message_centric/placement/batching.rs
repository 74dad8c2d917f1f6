//! Batching: when to gulp or flush (rule 7 of `README.md`, "Placement", and the outbox, "Sends
//! into a backlog"). A queue that a stream fills while nobody waits for it is held off until
//! its batch has grown; a behaviour's sends into a backlog on another worker wait in its
//! worker's outbox and are queued in bulk. Both are off with
//! [`super::super::tuning::Tuning`]'s `batching` switch.

use super::super::visit::NO_QUEUE;
use super::super::visit::{Local, McWorker};
use super::super::work_queue::{self, WorkQueue};
use super::super::{Executor, Tuning};
use crate::core::envelope::Envelope;
use crate::runtime::context;
use std::cell::Cell;
use std::time::Instant;

/// A queue held off by rule 7: since when, the last look (when, and the length seen), and when
/// a look last saw it grow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hold {
    pub(crate) since: Instant,
    pub(crate) looked: Instant,
    pub(crate) len: usize,
    pub(crate) grew: Instant,
}

impl Hold {
    pub(crate) fn new(now: Instant, len: usize) -> Self {
        Self {
            since: now,
            looked: now,
            len,
            grew: now,
        }
    }

    /// The hold at `now`: itself until the next look is due (the interval since the last one
    /// doubles, from `hold_look` up to `hold_look_max`, and the last look is at `hold_max`);
    /// at a look, `len()` is read and the hold ends (`None`) once the queue holds `hold_batch`
    /// envelopes, has not grown for `hold_stall` (its sender stopped, or waits after all), or
    /// was held for `hold_max`.
    pub(crate) fn next(
        self,
        now: Instant,
        len: impl FnOnce() -> usize,
        t: &Tuning,
    ) -> Option<Self> {
        let interval = self
            .looked
            .duration_since(self.since)
            .clamp(t.hold_look, t.hold_look_max);
        let due = (self.looked + interval).min(self.since + t.hold_max);
        if now < due {
            return Some(self);
        }
        let len = len();
        let grew = if len > self.len { now } else { self.grew };
        if len >= t.hold_batch
            || now.duration_since(grew) >= t.hold_stall
            || now.duration_since(self.since) >= t.hold_max
        {
            return None;
        }
        Some(Self {
            looked: now,
            len,
            grew,
            ..self
        })
    }
}

/// Rule 7's choice at the end of a visit that handed nothing off: hold the queue off if mail
/// kept arriving during the visit (`streamed`), or if the queue is a sink (its last
/// `sink_visits` visits, this one included, handed nothing off: `unwaited_visits`) and
/// mail had gathered for this one (a first gulp of `first >= 2` envelopes).
pub(crate) fn hold_after(
    streamed: bool,
    unwaited_visits: u8,
    first: usize,
    sink_visits: u8,
) -> bool {
    streamed || (unwaited_visits >= sink_visits && first >= 2)
}

impl Executor {
    /// Whether the worker holds `q` off now (placement rule 7). Checked before the queue's
    /// length is read: a holding worker reads the line the sender writes only at its looks.
    #[inline(always)]
    pub(crate) fn holds(&self, me: &McWorker<'_>, q: &WorkQueue) -> bool {
        match me.local.holds[q.id].get() {
            Some(h) => self.still_holds(me, q, h),
            None => false,
        }
    }

    /// The rest of [`Self::holds`]: [`Hold::next`], and the queue's `held` mark cleared when
    /// the hold ends.
    #[inline(never)]
    pub(crate) fn still_holds(&self, me: &McWorker<'_>, q: &WorkQueue, h: Hold) -> bool {
        let next = h.next(Instant::now(), || q.len_hint(), &self.tuning);
        me.local.holds[q.id].set(next);
        if next.is_none() {
            q.set_held(false);
        }
        next.is_some()
    }

    /// After a visit of `q` (placement on): whether to hold `q` (rule 7), from whether the
    /// visit was `unwaited`, `streamed`, and its `first` gulp.
    #[inline]
    pub(crate) fn note_hold(
        &self,
        me: &McWorker<'_>,
        q: &WorkQueue,
        unwaited: bool,
        streamed: bool,
        first: usize,
    ) {
        let l = &me.local;
        let runs = &l.unwaited_visits[q.id];
        runs.set(if unwaited {
            (runs.get() + 1).min(self.tuning.sink_visits)
        } else {
            0
        });
        let held = (unwaited && hold_after(streamed, runs.get(), first, self.tuning.sink_visits))
            .then(|| q.len_hint())
            .filter(|&len| len < self.tuning.hold_batch);
        if let Some(len) = held {
            l.holds[q.id].set(Some(Hold::new(Instant::now(), len)));
            l.holding.set(true);
            q.set_held(true);
            if me.counters().is_some() {
                me.local.row().busy.holds.bump(1);
            }
        } else {
            l.holds[q.id].set(None);
            q.set_held(false);
        }
    }

    /// Queues what the outbox holds, queue by queue (one lock each), and takes this worker's
    /// pins. Every [`ABORT_CHECK`](super::super::visit::ABORT_CHECK) envelopes of a drain and
    /// at its end, so before the visit ends (and with it, the senders' queue stops being
    /// processed: they may move after).
    #[inline]
    pub(crate) fn flush_outbox(&self, me: &McWorker<'_>) {
        let l = &me.local;
        // SAFETY: touched only on this thread; no behaviour code runs during the flush (it
        // may be called from inside a behaviour, between two of its calls into the runtime:
        // a split's, a respawn's, a fork's), so nothing else borrows the list meanwhile.
        let pins = unsafe { &mut *l.pins.get() };
        if pins.is_empty() {
            return;
        }
        self.flush_pins(me, pins);
    }

    #[inline(never)]
    pub(crate) fn flush_pins(&self, me: &McWorker<'_>, pins: &mut Vec<usize>) {
        let l = &me.local;
        for t in pins.drain(..) {
            l.pinned[t].set(false);
            let _ = self.queue_kept(me, t, true);
        }
        context::note_kept(false);
    }

    /// Queues the outbox's envelopes for queue `t`, under its lock, and with `unpin` takes
    /// this worker's pin (the parked envelopes, if it was the last, go behind the envelopes
    /// just queued); notifies the queue's owner if anything was queued. Also takes the pin
    /// without `unpin` while envelopes are parked: a request to end an actor waits for the
    /// last unpin, and a behaviour that keeps sending to that actor would otherwise hold it
    /// off until the behaviour ends (for ever, if it sends until the send fails). Returns
    /// whether it took the pin.
    pub(crate) fn queue_kept(&self, me: &McWorker<'_>, t: usize, unpin: bool) -> bool {
        let q = &self.queues[t];
        let (pushed, unpinned) = {
            let g = q.lock();
            let n = me.local.take_outboxed(t, &g);
            self.count_outboxed(me, n);
            let unpin = unpin || g.parks();
            ((unpin && g.unpin()) || n > 0, unpin)
        };
        if pushed {
            self.notify_owner(q, Some(me));
        }
        unpinned
    }

    /// An envelope went to the outbox, for queue `t` (`README.md`, "Sends into a backlog"):
    /// a hand-off (placement rule 7), and the outbox's envelopes for `t` are queued now if
    /// they are `outbox_flush` ([`Self::flush_full`]).
    #[inline(always)]
    pub(crate) fn outboxed(&self, w: &McWorker<'_>, t: usize) {
        context::note_handoff();
        if w.local.outbox_len(t) >= self.tuning.outbox_flush {
            self.flush_full(w, t);
        }
    }

    /// A behaviour's send left a backlog of `outbox_backlog` envelopes or more in queue `q`:
    /// `q` is another worker's: if this worker is in a visit of another queue, pins it
    /// (`README.md`, "Sends into a backlog"), so that this worker's next sends to its actors
    /// go to the outbox until the flush. Under the lock, while the backlog is there. After
    /// the pin no actor leaves the queue, so the tickets this worker reads until its flush
    /// stay true; and no reclaim envelope is queued for its actors, so their cells stay
    /// allocated until the flush.
    #[cold]
    #[inline(never)]
    pub(crate) fn pin(&self, w: &McWorker<'_>, q: &WorkQueue) {
        if !w.local.may_outbox(q.id) || w.local.outboxes(q.id) {
            return;
        }
        let g = q.lock();
        // (Not while a request to end an actor or a reclaim waits for the last unpin: the
        // pins that behaviours flooding the queue from several workers take again after each
        // flush would keep overlapping, and keep it waiting.)
        if g.len() < self.tuning.outbox_backlog || g.parks() {
            return;
        }
        g.pin();
        drop(g);
        w.local.note_pinned(q.id);
    }

    /// The outbox holds `outbox_flush` envelopes for queue `t`: they are queued now, in the
    /// middle of the behaviour (a long behaviour that floods a queue feeds it as it goes, and
    /// the outbox stays small). The pin stays, unless envelopes wait for it to go
    /// ([`Self::queue_kept`]): then this worker's next sends to the queue take its lock, until
    /// a backlog pins it again. Also a point where this worker may split the queue it holds,
    /// if asked, as at a send into an empty queue.
    #[cold]
    #[inline(never)]
    pub(crate) fn flush_full(&self, w: &McWorker<'_>, t: usize) {
        if self.queue_kept(w, t, false) {
            w.local.forget_pin(t);
        }
        if self.split_asked(w) {
            self.split_current(w, false);
        }
    }

    /// Counts `n` envelopes queued from `w`'s outbox, if statistics are on.
    #[inline]
    pub(crate) fn count_outboxed(&self, w: &McWorker<'_>, n: usize) {
        if self.pool.stats_on() {
            w.local.row().busy.outboxed.bump(n as u64);
        }
    }
}

impl Local {
    /// Whether this worker pinned queue `ticket` since its last flush (so it is in a visit,
    /// and `ticket` is not the held queue): its sends there go to the outbox.
    #[inline(always)]
    pub(crate) fn outboxes(&self, ticket: usize) -> bool {
        // (No index that can panic: on the send path, a bounds check's panic path, taken
        // while the message is live, has the compiler keep the message on the stack on every
        // path of the send, and a local send stalls on its store forwarding.)
        self.pinned.get(ticket).is_some_and(Cell::get)
    }

    /// Whether a send to queue `ticket` may pin it: this worker is in a visit (its drain
    /// flushes) of another queue.
    #[inline(always)]
    pub(crate) fn may_outbox(&self, ticket: usize) -> bool {
        let c = self.current.get();
        c != NO_QUEUE && c != ticket
    }

    /// This worker pinned queue `ticket`: its sends there go to the outbox until the flush.
    #[inline]
    pub(crate) fn note_pinned(&self, ticket: usize) {
        self.pinned[ticket].set(true);
        context::note_kept(true);
        // SAFETY: `pins` is touched only on this thread, and no reference to it outlives a
        // call.
        unsafe { (*self.pins.get()).push(ticket) };
    }

    /// This worker's pin of queue `ticket` was taken (its outbox for it is empty): its sends
    /// there take the lock again.
    #[cold]
    pub(crate) fn forget_pin(&self, ticket: usize) {
        self.pinned[ticket].set(false);
        // SAFETY: `pins` is touched only on this thread, and no reference to it outlives a
        // call (this one runs on the send path, never inside a flush's borrow).
        let pins = unsafe { &mut *self.pins.get() };
        pins.retain(|&p| p != ticket);
        if pins.is_empty() {
            context::note_kept(false);
        }
    }

    /// Adds an envelope for an actor of queue `ticket` to the outbox.
    ///
    /// # Safety
    /// On this thread, and `outboxes(ticket)` returned true.
    #[inline(always)]
    pub(crate) unsafe fn push_outbox(&self, ticket: usize, env: Envelope) {
        debug_assert!(self.outboxes(ticket));
        // SAFETY: `outboxes(ticket)` found an entry, so `ticket` is below the number of
        // queues, which is the outbox's length (unchecked, for the reason in `outboxes`);
        // only this thread touches the outbox, and the borrow ends here.
        unsafe {
            (&mut *self.outbox.get())
                .get_unchecked_mut(ticket)
                .push(env)
        };
    }

    /// How many envelopes the outbox holds for queue `ticket`.
    #[inline(always)]
    pub(crate) fn outbox_len(&self, ticket: usize) -> usize {
        // SAFETY: only this thread touches the outbox; the borrow ends here.
        unsafe { (&*self.outbox.get())[ticket].len() }
    }

    /// Queues the outbox's envelopes for queue `ticket` in `to` (that queue, locked), in
    /// order. Returns how many.
    #[inline]
    pub(crate) fn take_outboxed(&self, ticket: usize, to: &work_queue::Locked<'_>) -> usize {
        // SAFETY: only this thread touches the outbox; the borrow ends here.
        to.append(unsafe { &mut (&mut *self.outbox.get())[ticket] })
    }
}
