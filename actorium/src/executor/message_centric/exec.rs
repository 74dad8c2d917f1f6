//! The message-centric executor behind the core's executor interface
//! ([`crate::core::Executor`]): tickets, registration, respawn, the end of an actor, resizing,
//! shutdown and statistics.

use super::placement::affinity::{last_spawn_fed, note_spawn, spawn_queue};
use super::ranges;
use super::row::WorkerSlot;
use super::visit::current_of;
use super::Executor;
use crate::core::envelope::Envelope;
use crate::core::mailbox::Mailbox;
use crate::core::Stats;
use crate::core::{
    ExecRef, Executor as Exec, Header, Placement, Shared, Sibling, Status, Undelivered,
};
use crate::runtime::pool::{join_all, ResizeError};
use std::sync::atomic::Ordering;

/// Where [`Executor::retire`] put an actor's reclaim envelope.
enum Retired {
    /// At the end of the batch this worker holds.
    Local(Envelope),
    /// In the actor's queue.
    Queued,
    /// Parked in its pinned queue, for the last unpin to queue.
    Parked,
}

impl Exec for Executor {
    #[inline]
    fn shared(&self) -> &Shared {
        &self.shared
    }

    fn sibling(&self, p: Placement) -> Sibling {
        self.detached.sibling(p)
    }

    fn attach_detached(&self, d: ExecRef) {
        self.detached.attach(d);
    }

    /// The queue of a new actor. Spawned from outside the workers: the round-robin ticket of
    /// the Cforall actor system (Colby Parsons, MMath thesis, Waterloo 2023),
    /// `fetch_add(next_ticket) % nrqueues`, for the first spawns, one per queue, then runs of
    /// `spawn_run` consecutive spawns per queue, queue after queue, or dealt to the workers'
    /// ranges in turn without queue stealing ([`spawn_queue`]). Spawned on a worker (from a
    /// behaviour or a task) with queue stealing on: round-robin over that worker's own range,
    /// so that a child starts where its parent runs and their first messages cross no cores;
    /// idle workers take whole queues from there as work piles up (stealing), or when it waits
    /// behind a long behaviour (the rescue, `placement/balance.rs`). See `README.md`,
    /// "Placement". (Inline always, inside `spawn_parts`: as a call of its own, it costs every
    /// spawn on one worker a call only to learn that its one queue is queue 0.)
    #[inline(always)]
    fn next_ticket(&self) -> usize {
        let m = self.queues.len();
        if m == 1 {
            // One queue (one worker's default): nothing to choose.
            return 0;
        }
        // (Without queue stealing nothing could move the children elsewhere: the thesis's
        // round-robin then.)
        // SAFETY: used during this call only.
        let me = unsafe { current_of(self) };
        if self.moves {
            if let Some(w) = me {
                if let Some(q) = w.local.next_own_queue(self, w.index) {
                    return q;
                }
            }
        }
        let k = self.ticket.fetch_add(1, Ordering::Relaxed);
        let t = if !self.runs || (self.spreads_fed() && me.is_none() && last_spawn_fed()) {
            k % m
        } else {
            spawn_queue(k, m, self.spread, self.spawn_ranges, self.tuning.spawn_run)
        };
        // Never the queue this worker is processing (there is another, `m > 1`): a child there
        // would wait behind its parent's whole batch, where no other worker can take it.
        match me {
            Some(w) if w.local.is_current(t) => (t + 1) % m,
            _ => t,
        }
    }

    fn new_mailbox(&self) -> Option<Box<Mailbox>> {
        None
    }

    /// Inlined into the cells' send path (`ExecRef::push`).
    #[inline(always)]
    fn push(&self, hdr: &Header, env: Envelope) -> Result<(), Envelope> {
        self.push_envelope(hdr, env)
    }

    /// Registers a newly spawned actor (live count, the queue's actor list) and queues its
    /// `start` envelope, in one critical section. Refused, giving `start` back, once the system
    /// is closed: the check is under the queue lock, so shutdown's cleanup, which takes every
    /// queue lock after closing, either sees the actor or refuses it.
    unsafe fn register(&self, hdr: &Header, start: Envelope) -> Result<(), Envelope> {
        // SAFETY: `me` is used during this call only.
        let me = unsafe { current_of(self) };
        if let Some(w) = me.filter(|w| self.split_asked(w)) {
            self.split_current(w, false);
        }
        // A spawn onto the queue this worker is processing queues `start` on the local batch
        // (within the visit budget), so that messages the spawner sends next (local too) cannot
        // overtake it. Otherwise `start` goes to the shared queue and the actor counts as not
        // installed until it runs, so no send can take the local path ahead of it.
        let local = me.is_some_and(|w| w.local.can_push_local(hdr.queue()));
        if !local {
            hdr.set_installed(false); // not yet published: no other thread can see the cell
        }
        let q = &self.queues[hdr.queue()];
        let start = {
            let g = q.lock();
            if self.shared.refuses_spawn() {
                return Err(start);
            }
            hdr.retain();
            self.shared.life.add_live();
            // SAFETY: the header's link is on no list and stays valid until `retire` unlinks it
            // or shutdown takes it.
            unsafe { g.link(&hdr.link) };
            if local {
                Some(start)
            } else {
                g.push(start);
                None
            }
        };
        match (start, me) {
            // SAFETY: `can_push_local` held, on this thread.
            (Some(start), Some(w)) => unsafe { w.local.push_local(start) },
            _ => self.notify_owner(q, me),
        }
        if self.spreads_fed() && me.is_none() {
            note_spawn(hdr);
        }
        self.count(me, |c| &c.actors_created);
        Ok(())
    }

    /// Brings a `Destroyed` actor back: alive again, registered, `install` queued behind its old
    /// mail (which is therefore dropped as dead letters, never delivered to the new state).
    /// The new system reference is released by the actor's eventual reclaim (or shutdown).
    unsafe fn revive(&self, hdr: &Header, install: Envelope) -> Result<(), Envelope> {
        // SAFETY: used during this call only.
        let me = unsafe { current_of(self) };
        // (The actor may have moved, by placement, before it was destroyed: followed; a
        // destroyed actor moves no more.)
        let (mut q, mut g) = self.lock_queue_of(hdr);
        loop {
            if self.shared.life.closed() || hdr.status() != Status::Destroyed {
                return Err(install);
            }
            // Its reclaim is parked: a worker's outbox may still hold mail for the old
            // incarnation ("Sends into a backlog" in `README.md`), which must be queued ahead
            // of `install` (and dropped as dead letters). Wait for the flushes that take the
            // pins (this worker's own first; another's when the behaviour that pinned returns,
            // or after 64 more sends to the queue).
            if !g.parks_for((hdr as *const Header).cast()) {
                break;
            }
            drop(g);
            if let Some(w) = me {
                self.flush_outbox(w);
            }
            crate::runtime::loom::yield_now();
            (q, g) = self.lock_queue_of(hdr);
        }
        hdr.retain();
        // A new incarnation, numbered before anyone sees it alive (a link made from now on is
        // with it).
        hdr.next_incarnation();
        hdr.set_status(Status::Alive);
        self.shared.life.add_live();
        // SAFETY: a destroyed actor was unlinked by `retire`; the new reference keeps it.
        unsafe { g.link(&hdr.link) };
        g.push(install);
        drop(g);
        // SAFETY: used during this call only.
        self.notify_owner(q, unsafe { current_of(self) });
        Ok(())
    }

    /// Marks an actor terminal and schedules the release of the system's reference behind every
    /// envelope already queued for it (a reclaim envelope). Runs on the worker processing the
    /// actor's queue.
    unsafe fn retire(&self, hdr: &Header, status: Status) {
        let q = &self.queues[hdr.queue()];
        // SAFETY: `me` is used during this call only.
        let me = unsafe { current_of(self) };
        let reclaim = hdr.reclaim_envelope();
        let local = {
            let g = q.lock();
            hdr.set_status(status);
            // SAFETY: caller contract: the actor is registered, so its link is on this queue's
            // list.
            unsafe { g.unlink(&hdr.link) };
            if g.pinned() {
                // A worker's outbox may hold envelopes for the actor: the reclaim waits for
                // the last of them (`WorkQueue::unpin` queues it, and notifies).
                g.park(reclaim);
                Retired::Parked
            } else if g.len() == 0 && me.is_some_and(|w| w.local.is_current(hdr.queue())) {
                // This worker holds the queue and nothing is queued behind its batch: every
                // envelope for the actor is in the batch (later sends fail on the status), so
                // the reclaim can go to the end of the batch and save a gulp.
                Retired::Local(reclaim)
            } else {
                g.push(reclaim);
                Retired::Queued
            }
        };
        match (local, me) {
            // SAFETY: `is_current` held under the lock, on this thread.
            (Retired::Local(reclaim), Some(w)) => unsafe { w.local.push_local_unbudgeted(reclaim) },
            (Retired::Parked, _) => {}
            _ => self.notify_owner(q, me),
        }
        self.shared.life.terminated(hdr.joinable());
    }

    fn workers(&self) -> usize {
        self.pool.limit()
    }

    fn table(&self) -> Option<&crate::runtime::worker_table::WorkerTable> {
        Some(self.pool.table())
    }

    fn queues(&self) -> usize {
        self.queues.len()
    }

    fn queue_of_spawn(&self, k: usize) -> Option<usize> {
        Some(spawn_queue(
            k,
            self.queues.len(),
            self.spread,
            self.spawn_ranges,
            self.tuning.spawn_run,
        ))
    }

    fn worker_of_queue(&self, q: usize) -> Option<usize> {
        if q >= self.queues.len() {
            return None;
        }
        let _r = self.pool.lock.read_outside();
        let ranges: Vec<_> = (0..self.pool.len()).map(|w| self.range(w)).collect();
        Some(ranges::owner_of(&ranges, q))
    }

    fn add_workers(&self, k: usize) -> Result<usize, ResizeError> {
        self.pool.add(self, k, |_| Ok(WorkerSlot::new(0..0)))
    }

    fn remove_workers(&self, k: usize) -> Result<usize, ResizeError> {
        self.pool.remove(self, k)
    }

    /// Afterwards no spawn or respawn can succeed: a `register` or `revive` that passed its
    /// `closed()` check did so under a queue lock that this function takes once after the
    /// system was closed, so it has counted itself in `live` by the time this returns. Wakes
    /// every worker.
    fn begin_shutdown(&self, _drain: bool) {
        for q in self.queues.iter() {
            drop(q.lock());
        }
        self.pool.wake_all();
    }

    fn join_threads(&self, drain: bool) {
        self.pool.wake_all();
        if !drain {
            self.pool.unpark_all();
        }
        join_all(self.pool.take_threads());
        self.pool.workers_exited();
    }

    fn for_each_queued_actor(&self, f: &mut dyn FnMut(&Header)) {
        for q in self.queues.iter() {
            q.lock().for_each_actor(|link| {
                // SAFETY: links on a queue's list are the `link` field of a live cell's header,
                // kept alive while listed (we hold the queue's lock).
                let hdr = unsafe { Header::from_link(link) };
                f(hdr)
            });
        }
    }

    fn cleanup(&self) {
        self.cleanup_queues();
        self.pool.close();
    }

    fn add_stats(&self, s: &mut Stats) {
        s.add_pool(self.pool.counter_values());
        for w in 0..self.pool.capacity() {
            if let Some(d) = self.pool.data_if_made(w) {
                s.rescues += d.busy.rescues.get();
                s.moves += d.busy.moves.get();
                s.holds += d.busy.holds.get();
                s.outboxed += d.busy.outboxed.get();
            }
        }
    }
}

impl Executor {
    /// After the workers have exited: stop every actor still alive, dispose of every envelope
    /// still queued, release every system reference. Single-threaded.
    pub(crate) fn cleanup_queues(&self) {
        // 1. Actors still alive stop accepting messages (sends now fail), in one pass.
        let mut stopped = Vec::new();
        for q in self.queues.iter() {
            let g = q.lock();
            for link in g.take_actors() {
                // SAFETY: links on a queue's list are the `link` field of a live cell's header.
                let hdr = unsafe { Header::from_link(link) };
                hdr.set_status(Status::Stopped);
                stopped.push(hdr as *const Header);
            }
        }
        // 2. Queued envelopes are discarded (message drops may run user code; no lock is held),
        //    the messages among them reported as dead letters after a graceful end.
        let mut undelivered = Undelivered::default();
        self.discard_queued(Some(&mut undelivered));
        // 3. The stopped actors' states are dropped and the system's references released.
        for hdr in stopped {
            // SAFETY: each was taken off a list above, exactly once, and its system reference is
            // still held (its reclaim envelope was never queued: it was not retired).
            unsafe { Header::shutdown(hdr) };
            self.shared.life.stopped();
        }
        // 4. Every actor is terminal now, so nothing new can be queued; this pass is a guard
        //    for envelopes that step 3's user destructors might have produced.
        self.discard_queued(None);
        self.shared.report_undelivered(undelivered);
    }

    /// Disposes of every queued envelope, counting the messages in `undelivered` if given.
    pub(crate) fn discard_queued(&self, mut undelivered: Option<&mut Undelivered>) {
        loop {
            let mut any = false;
            for q in self.queues.iter() {
                let g = q.lock();
                // Every worker flushed its outbox (and took its pins) before it exited.
                debug_assert!(!g.pinned(), "a queue is still pinned at shutdown");
                let mut batch = g.take_all();
                drop(g);
                any |= !batch.is_empty();
                if let Some(u) = undelivered.as_deref_mut() {
                    // SAFETY: a queued envelope's cell is alive until its reclaim envelope,
                    // queued behind its messages, is disposed of (below, in order), or until
                    // step 3 for the actors stopped here.
                    unsafe { u.count(&batch) };
                }
                batch.discard_all();
            }
            if !any {
                break;
            }
        }
    }
}
