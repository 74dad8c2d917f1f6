//! The send path (the Cforall actor system: Colby Parsons, MMath thesis, Waterloo 2023,
//! "Envelopes"): a behaviour's send to an actor of the queue its worker holds appends to the
//! held batch (the local fast path, `visit.rs`); a send into a backlog on another worker may
//! wait in the worker's outbox (`placement/batching.rs`); every other send takes the queue's
//! lock, follows the actor if it moved, and wakes the queue's owner. Placement looks only at
//! sends into an empty queue and at actors that moved (`push_placing`), out of the common path.

use super::placement::affinity::{follows, note_fed, Moved};
use super::visit::{current_of, McWorker};
use super::work_queue::{self, WorkQueue};
use super::Executor;
use crate::core::envelope::Envelope;
use crate::core::{Header, Status};
use crate::runtime::context;
use crate::runtime::counters::{Counter, Counters};
use std::sync::atomic::Ordering;

impl Executor {
    /// Enqueues `env` for the actor with header `hdr`. Fails, giving the envelope back, when the
    /// actor no longer accepts messages.
    ///
    /// The fast path: a behaviour sending to an actor of the queue its worker is processing
    /// appends to the worker's local batch with no lock (bounded per visit, see `visit.rs`).
    /// Otherwise: lock the queue, check the actor is alive (under the lock, so a send can never
    /// slip in behind the actor's reclaim envelope), append, unlock, and notify the queue's owner
    /// unless it is the calling worker (idle-sleep handshake, step two for the notifier).
    #[inline(always)]
    pub(crate) fn push_envelope(&self, hdr: &Header, env: Envelope) -> Result<(), Envelope> {
        self.push_envelope_with(hdr, || env)
    }

    /// Whether spawns from outside that feed each actor as they spawn it are spread one per
    /// queue (`LAST_SPAWN` in `placement/affinity.rs`): runs are dealt to several ranges (no
    /// queue stealing, more than one worker). Read on the send path of outside threads.
    #[inline(always)]
    pub(crate) fn spreads_fed(&self) -> bool {
        self.spawn_ranges > 1
    }

    /// [`Self::push_envelope`] with the envelope made by `make` only once the path is chosen,
    /// so the local path builds it where it stores it (built first, it goes through the stack,
    /// and its copy stalls on store forwarding).
    #[inline(always)]
    pub(crate) fn push_envelope_with(
        &self,
        hdr: &Header,
        make: impl FnOnce() -> Envelope,
    ) -> Result<(), Envelope> {
        // SAFETY: `me` is used during this call only.
        let me = unsafe { current_of(self) };
        if let Some(w) = me {
            if w.local.try_push_local(hdr) {
                // SAFETY: `try_push_local` checked the local path applies; the envelope moves in.
                unsafe { w.local.push_local(make()) };
                self.count(me, |c| &c.messages_sent);
                return Ok(());
            }
            let t = hdr.queue();
            if w.local.outboxes(t) {
                // Into the outbox (`README.md`, "Sends into a backlog"). The actor's ticket
                // names `t` (none leaves a pinned queue, and it was read after the pin), and
                // its cell stays allocated until the flush (its reclaim envelope is parked
                // while the queue is pinned).
                if hdr.status() != Status::Alive {
                    return Err(make());
                }
                // SAFETY: on this thread, and `outboxes(t)` returned true.
                unsafe { w.local.push_outbox(t, make()) };
                self.outboxed(w, t);
                self.count(me, |c| &c.messages_sent);
                return Ok(());
            }
            // A send for the held queue that goes to the shared queue (budget spent, or the
            // target not yet installed) closes the local path for the rest of the visit, so no
            // later send can overtake it.
            w.local.close_local(t);
        } else if self.spreads_fed() {
            note_fed(hdr);
        }
        self.push_shared(hdr, make, me)
    }

    /// The send path through the queue's lock (every send but a local one). The envelope is
    /// made where it goes, as on the local path (made first, it would go through the stack
    /// before each path took it). Placement (`README.md`, "Placement") looks only at sends
    /// into an empty queue, and at actors that moved: out of line, so that a send into a
    /// backlog (a saturated workload) costs two loads more than without placement.
    #[inline(always)]
    pub(crate) fn push_shared(
        &self,
        hdr: &Header,
        make: impl FnOnce() -> Envelope,
        me: Option<&McWorker<'_>>,
    ) -> Result<(), Envelope> {
        let q = &self.queues[hdr.queue()];
        let g = q.lock();
        if hdr.status() != Status::Alive {
            return Err(make());
        }
        // (`count` is exact under the lock; the ticket changes only under this lock.)
        if self.placing && (q.looks_empty() || hdr.queue() != q.id) {
            return self.push_placing(q, g, hdr, make(), me);
        }
        let n = g.push_counted(make());
        drop(g);
        context::note_handoff();
        let owner = q.owner();
        if me.is_none_or(|w| w.index != owner) {
            // Into another worker's backlog, from a behaviour: maybe pin the queue.
            if let Some(w) = me.filter(|_| self.outbox && n >= self.tuning.outbox_backlog) {
                self.pin(w, q);
            }
            if self.pool.notify(owner) {
                self.count(me, |c| &c.wakeups);
            }
        }
        self.count(me, |c| &c.messages_sent);
        Ok(())
    }

    /// The rest of [`Self::push_shared`] when placement is on and the actor's queue (locked as
    /// `g`) was empty, or the actor moved since its ticket was read: follows the actor to its
    /// queue (its ticket changes only under the lock of the queue it leaves), moves it here if
    /// it follows this sender ([`follows`], [`Self::move_here`]), queues the envelope, and
    /// notifies (including the rescue watch of [`Self::pushed_own`]).
    #[inline(never)]
    pub(crate) fn push_placing<'q>(
        &'q self,
        mut q: &'q WorkQueue,
        mut g: work_queue::Locked<'q>,
        hdr: &Header,
        env: Envelope,
        me: Option<&McWorker<'_>>,
    ) -> Result<(), Envelope> {
        // A point where this worker may split the queue it holds, if asked (out of the common
        // send path: a send into an empty queue, or to an actor that moved). The lock taken
        // for this send is released first, and the ticket re-read after.
        if let Some(w) = me.filter(|w| self.split_asked(w)) {
            drop(g);
            self.split_current(w, false);
            g = q.lock();
            if hdr.status() != Status::Alive {
                return Err(env);
            }
        }
        while hdr.queue() != q.id {
            drop(g);
            q = &self.queues[hdr.queue()];
            g = q.lock();
            if hdr.status() != Status::Alive {
                return Err(env);
            }
        }
        if let Some(w) = me.filter(|_| self.moves) {
            let from = w.local.current_or_max();
            if from < q.id && q.looks_empty() && follows(&g, hdr, w, from) {
                match self.move_here(w, from, hdr, &g) {
                    Moved::Batch => {
                        drop(g);
                        // SAFETY: `move_here` checked the local path applies (the held queue
                        // is now the actor's, it is installed, budget is left).
                        unsafe { w.local.push_local(env) };
                        self.count(me, |c| &c.messages_sent);
                        return Ok(());
                    }
                    Moved::To(g2) => {
                        drop(g);
                        g2.push(env);
                        let to = g2.queue();
                        drop(g2);
                        self.notify_owner(to, me);
                        self.count(me, |c| &c.messages_sent);
                        return Ok(());
                    }
                    Moved::No => {}
                }
            }
        }
        g.push(env);
        drop(g);
        self.notify_owner(q, me);
        self.count(me, |c| &c.messages_sent);
        Ok(())
    }

    /// Enqueues `env` for the actor `hdr` behind every message accepted for it so far, by
    /// any sender: a graceful shutdown's request to end asks the actor to end after the mail
    /// already sent to it. A behaviour's send into another worker's backlog is accepted into
    /// its worker's outbox and queued at the flush (`README.md`, "Sends into a backlog"), so
    /// while the actor's queue is pinned `env` is parked with the queue's reclaim envelopes,
    /// and the last unpin queues it behind what the outboxes kept. (A plain send would go
    /// ahead of those: the actor ended before mail a behaviour had sent it, which became dead
    /// letters.) Fails, giving `env` back, when the actor no longer accepts messages.
    pub(crate) fn push_last(&self, hdr: &Header, env: Envelope) -> Result<(), Envelope> {
        // SAFETY: `me` is used during this call only.
        let me = unsafe { current_of(self) };
        let (q, g) = self.lock_queue_of(hdr);
        if hdr.status() != Status::Alive {
            return Err(env);
        }
        if let Some(w) = me {
            // Into the shared queue: no later send of this visit may go ahead of it.
            w.local.close_local(q.id);
        }
        if g.pinned() {
            // Queued, and its owner woken, by the flush that takes the last pin.
            g.park(env);
            drop(g);
        } else {
            g.push(env);
            drop(g);
            self.notify_owner(q, me);
        }
        self.count(me, |c| &c.messages_sent);
        Ok(())
    }

    /// The queue of the actor `hdr`, locked. The actor may move between the read of its ticket
    /// and the lock: followed, as its ticket changes only under the lock of the queue it
    /// leaves.
    pub(crate) fn lock_queue_of(&self, hdr: &Header) -> (&WorkQueue, work_queue::Locked<'_>) {
        let mut q = &self.queues[hdr.queue()];
        let mut g = q.lock();
        while hdr.queue() != q.id {
            drop(g);
            q = &self.queues[hdr.queue()];
            g = q.lock();
        }
        (q, g)
    }

    /// Counts one event, if statistics are on, in the calling worker's counters (`me`) or the
    /// shared outside block.
    #[inline]
    pub(crate) fn count(&self, me: Option<&McWorker<'_>>, pick: fn(&Counters) -> &Counter) {
        if self.pool.stats_on() {
            self.shared.count(me.and_then(|w| w.counters()), pick);
        }
    }

    /// Step two of the notifier's side of the idle-sleep handshake, after an envelope was
    /// published under `q`'s lock: wake `q`'s owner unless it is the calling worker (which is
    /// running, and will reach `q` before it could sleep).
    ///
    /// A send or spawn by the owner itself notifies nobody, and a notification finds a busy
    /// owner awake and does nothing; either way the owner may be in a long behaviour: see
    /// [`Self::pushed_own`].
    #[inline(always)]
    pub(crate) fn notify_owner(&self, q: &WorkQueue, me: Option<&McWorker<'_>>) {
        context::note_handoff();
        let owner = q.owner();
        match me {
            Some(w) if w.index == owner => {
                if self.balance && !w.local.is_current(q.id) {
                    self.pushed_own()
                }
            }
            _ => {
                if self.wake_owner(owner) {
                    self.count(me, |c| &c.wakeups);
                }
            }
        }
    }

    /// A worker that was announced idle works again (it woke from its sleep, or its search
    /// before sleeping found work; it has retired from the sleepers' list). A general
    /// notification picks the first worker listed idle, which may be this one (notified
    /// already, or about to find other work in its search), and hides the other sleepers until
    /// it retires: a wake-up meant for mail behind a running worker may have been spent here.
    /// With two or more of its own queues holding mail (it runs one first, maybe a long
    /// behaviour), it wakes one sleeper now, as [`Self::pushed_own`] would. For mail behind
    /// another worker it passes a wake-up on once it commits to work
    /// ([`Self::stop_watching_and_pass_on`]), not now: woken for that mail, it may take it
    /// itself, and each sleeper woken in turn would wake the next for the same mail. (tokio's
    /// searcher that finds work wakes the next for the same reason.)
    pub(crate) fn went_idle(&self, me: &McWorker<'_>) {
        me.local.owes_pass.set(true);
        if self.pool.has_idle() && self.others_watching(me) == 0 {
            self.pass_on_own(me.index);
        }
    }

    /// Rescue watchers other than `me` (a watcher stays counted across its wake-ups).
    #[inline]
    fn others_watching(&self, me: &McWorker<'_>) -> usize {
        self.watching
            .load(Ordering::Relaxed)
            .saturating_sub(usize::from(me.local.watching.get()))
    }

    /// [`Self::went_idle`]'s look at the own queues, out of line.
    #[cold]
    #[inline(never)]
    fn pass_on_own(&self, me: usize) {
        if self.own_mail(me, 2) {
            self.pool.notify_any();
        }
    }

    /// Whether at least `n` (>= 1) of worker `me`'s own queues hold mail.
    fn own_mail(&self, me: usize, n: usize) -> bool {
        me < self.pool.len() && self.with_mail(me, me).nth(n - 1).is_some()
    }

    /// The queues of worker `w`'s range that hold mail, seen from worker `me` (another
    /// worker's queue being processed is its owner's to run).
    fn with_mail(&self, w: usize, me: usize) -> impl Iterator<Item = &WorkQueue> + '_ {
        self.range(w)
            .filter_map(|s| self.slot(s))
            .filter(move |q| q.len_hint() > 0 && (w == me || !q.looks_processed()))
    }

    /// A worker commits to work (a visit, a steal, fork/join tasks) after it went idle
    /// ([`Self::went_idle`]) or stopped a rescue watch, or leaves (removed or deactivated): if
    /// mail may wait behind a running worker while some worker sleeps and none keeps a rescue
    /// watch, wake one. Such mail is a queue with mail, not being processed, of another worker
    /// in a visit, or mail behind the behaviour that worker runs; or, with `Some(n)`, at
    /// least `n` of this worker's own queues with mail (they wait for what it takes now).
    /// Lock-free looks at the queues' counts, only on these paths.
    #[cold]
    #[inline(never)]
    pub(crate) fn pass_on(&self, me: usize, own: Option<usize>) {
        if !self.pool.has_idle() || self.watching.load(Ordering::Relaxed) != 0 {
            return;
        }
        let own_stuck = || own.is_some_and(|n| self.own_mail(me, n));
        let stuck = || {
            (0..self.pool.len()).filter(|&w| w != me).any(|w| {
                let busy = &self.pool.data(w).busy;
                busy.in_visit() && (busy.mail_behind() || self.with_mail(w, me).next().is_some())
            })
        };
        if own_stuck() || stuck() {
            self.pool.notify_any();
        }
    }

    /// [`Self::stop_watching`], then [`Self::pass_on`] if this worker was a rescue watcher
    /// (then its own queues are looked at too, `own` (>= 1) of them with mail: while it watched,
    /// senders into them saw a watcher and woke nobody) or went idle since it last worked
    /// ([`Self::went_idle`], which looked at them then). A load and a store of this
    /// worker's own cells when neither.
    #[inline]
    pub(crate) fn stop_watching_and_pass_on(&self, me: &McWorker<'_>, own: usize) {
        let owed = me.local.owes_pass.replace(false);
        if me.local.watching.get() {
            self.stop_watching(&me.local);
            self.pass_on(me.index, Some(own));
        } else if owed {
            self.pass_on(me.index, None);
        }
    }

    /// Wakes worker `owner` for mail in one of its queues; if it was awake, it may be inside
    /// a long behaviour: an idle worker is woken to watch for that mail ([`Self::pushed_own`]).
    /// Whether a system call was made.
    pub(crate) fn wake_owner(&self, owner: usize) -> bool {
        let woke = self.pool.notify(owner);
        if !woke && self.balance {
            self.pushed_own();
        }
        woke
    }

    /// Mail was published in a queue whose owner is running: the caller itself (a send or
    /// spawn into one of its own queues but the one it processes), or a worker the
    /// notification found awake. The mail waits behind whatever the owner runs now, which may
    /// be a long behaviour: if some worker is idle and none is watching for that (a rescue
    /// watch, `unit.rs`, `sleep_limit`), wake one so that it does. Two loads when no worker is
    /// idle. No mail is missed: an idle worker's look before a watch takes every queue's lock;
    /// if it took `q`'s after this push it saw the mail, and if before, this push (its lock
    /// acquired after that release) sees the worker announced idle and its watch count.
    #[inline]
    pub(crate) fn pushed_own(&self) {
        if self.pool.has_idle() && self.watching.load(Ordering::Relaxed) == 0 {
            self.pool.notify_any();
        }
    }
}
