//! The message-centric ("inverted") executor (seed 002, "CFA Executor", "Envelopes").
//!
//! M = workers × queues-per-worker message queues; every actor gets a queue *ticket* round-robin
//! when spawned, and all its messages go to that queue, so messages between a pair of actors
//! keep their order and an actor never runs two behaviours at once. Worker `i` owns a contiguous
//! range of the queue-pointer array and cycles through it, gulping queues (`README.md` here
//! explains the gulp and why it is safe).
//!
//! Two arrays, as the seed prescribes: senders use the stable [`WorkQueue`] objects (indexed by
//! ticket), workers use `slots`, an array of pointers to them. Queue stealing swaps entries of
//! `slots` between workers without senders noticing.
//!
//! Files: [`envelope`] (the unit of work), [`copy_queue`] (envelopes by value), [`work_queue`]
//! (lock, gulp, `being_processed`), [`worker`] (the loop, idle sleep, the local fast path).

pub(crate) mod swap;
pub(crate) mod work_queue;
pub(crate) mod worker;

use super::envelope::Envelope;
use super::Core;
use crate::actor::cell::{Header, Status};
use crate::loom::sync::atomic::AtomicPtr;
use crate::runtime::idle::IdleSleep;
use crate::runtime::workers::WorkerSet;
use crossbeam_utils::CachePadded;
use std::io;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use work_queue::WorkQueue;

/// Queue stealing (seed 002, "Work Stealing"): which victim an idle worker steals a queue from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Stealing {
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
    pub(crate) queues: usize,
    pub(crate) stats: bool,
    pub(crate) spin: Duration,
    pub(crate) stealing: Stealing,
}

pub(crate) struct Executor {
    /// Stable queue objects, indexed by ticket: what senders use.
    queues: Box<[CachePadded<WorkQueue>]>,
    /// The queue-pointer array: what workers cycle through (and thieves swap).
    slots: Box<[AtomicPtr<WorkQueue>]>,
    pub(crate) set: WorkerSet,
    pub(crate) idle: IdleSleep,
    ticket: CachePadded<AtomicUsize>,
    pub(crate) core: Core,
    pub(crate) spin: Duration,
    pub(crate) stealing: Stealing,
    /// Per worker: when it last tried to steal (ns since `epoch`; `u64::MAX` while it sleeps),
    /// for the longest-victim heuristic. Written by its own worker only, when it tries to steal
    /// or goes to sleep or wakes, so a busy worker does no work here.
    last_steal: Box<[CachePadded<AtomicU64>]>,
    epoch: Instant,
}

impl Executor {
    pub(crate) fn new(cfg: &Config) -> io::Result<Self> {
        let set = WorkerSet::partition(cfg.queues, cfg.workers);
        let queues: Box<[_]> = (0..cfg.queues)
            .map(|q| CachePadded::new(WorkQueue::new(q, set.owner_of(q))))
            .collect();
        let slots = queues
            .iter()
            .map(|q| AtomicPtr::new(&**q as *const WorkQueue as *mut WorkQueue))
            .collect();
        Ok(Self {
            idle: IdleSleep::new(cfg.workers)?,
            queues,
            slots,
            set,
            ticket: CachePadded::new(AtomicUsize::new(0)),
            core: Core::new(cfg.workers, cfg.stats),
            spin: cfg.spin,
            stealing: if cfg.workers > 1 {
                cfg.stealing
            } else {
                Stealing::None
            },
            last_steal: (0..cfg.workers)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
            epoch: Instant::now(),
        })
    }

    pub(crate) fn queue_count(&self) -> usize {
        self.queues.len()
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

    /// Records that worker `w` is trying to steal now. The stamps below are kept only for the
    /// longest-victim heuristic, the only reader.
    pub(crate) fn stamp_steal(&self, w: usize) {
        if self.stealing != Stealing::LongestVictim {
            return;
        }
        self.last_steal[w].store(self.epoch.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    /// Records that worker `w` is going to sleep, returning its steal timestamp (to restore
    /// with [`Self::stamp_awake`]). A sleeping worker has no queue worth stealing (it just
    /// searched its range under the locks and found nothing), so until it wakes it counts as
    /// the most recent thief. Without this the seed's heuristic, made for workers that never
    /// sleep, picks sleepers (their timestamp ages) over the busy worker whose queues hold the
    /// backlog (seen in `stolen_queues_keep_every_guarantee`: 81 attempts with 3 workers, none
    /// finding a candidate).
    pub(crate) fn stamp_asleep(&self, w: usize) -> u64 {
        if self.stealing != Stealing::LongestVictim {
            return 0;
        }
        self.last_steal[w].swap(u64::MAX, Ordering::Relaxed)
    }

    /// Worker `w` woke up: it gets back the timestamp of its last steal attempt (it may wake
    /// to a backlog, and is then a good victim again).
    pub(crate) fn stamp_awake(&self, w: usize, stamp: u64) {
        if self.stealing != Stealing::LongestVictim {
            return;
        }
        self.last_steal[w].store(stamp, Ordering::Relaxed);
    }

    /// The longest victim: the other worker with the oldest steal timestamp.
    pub(crate) fn longest_victim(&self, me: usize) -> usize {
        longest_victim(&self.last_steal, me)
    }

    /// The next queue ticket, round-robin (seed: `fetch_add(next_ticket) % nrqueues`).
    #[inline]
    pub(crate) fn next_ticket(&self) -> usize {
        self.ticket.fetch_add(1, Ordering::Relaxed) % self.queues.len()
    }

    /// Whether new actors are refused (the system is stopping or gone).
    #[inline]
    pub(crate) fn closed(&self) -> bool {
        self.core.life.closed()
    }

    #[inline]
    pub(crate) fn aborting(&self) -> bool {
        self.core.life.aborting()
    }

    /// Enqueues `env` for the actor with header `hdr`. Fails, giving the envelope back, when the
    /// actor no longer accepts messages.
    ///
    /// The fast path: a behaviour sending to an actor of the queue its worker is processing
    /// appends to the worker's local batch with no lock (bounded per visit, see `worker`).
    /// Otherwise: lock the queue, check the actor is alive (under the lock, so a send can never
    /// slip in behind the actor's reclaim envelope), append, unlock, and notify the queue's owner
    /// unless it is the calling worker (idle-sleep handshake, step two for the notifier).
    #[inline]
    pub(crate) fn push(&self, hdr: &Header, env: Envelope) -> Result<(), Envelope> {
        let me = worker::current_of(self);
        if let Some(w) = me {
            if w.try_push_local(hdr, &env) {
                // SAFETY: `try_push_local` checked the local path applies; the envelope moves in.
                unsafe { w.push_local(env) };
                return Ok(());
            }
            // A send for the held queue that goes to the shared queue (budget spent, or the
            // target not yet installed) closes the local path for the rest of the visit, so no
            // later send can overtake it.
            w.close_local(hdr.queue);
        }
        let q = &self.queues[hdr.queue];
        {
            let g = q.lock();
            if hdr.status() != Status::Alive {
                return Err(env);
            }
            g.push(env);
        }
        self.notify_owner(q, me);
        Ok(())
    }

    /// Step two of the notifier's side of the idle-sleep handshake, after an envelope was
    /// published under `q`'s lock: wake `q`'s owner unless it is the calling worker (which is
    /// running, and will reach `q` before it could sleep).
    #[inline]
    fn notify_owner(&self, q: &WorkQueue, me: Option<&worker::Worker>) {
        let owner = q.owner();
        if me.is_none_or(|w| w.index != owner) && self.idle.notify(owner) {
            self.core.count(|| me.map(|w| w.index), |c| &c.wakeups);
        }
    }

    /// Registers a newly spawned actor (live count, the queue's actor list) and queues its
    /// `start` envelope, in one critical section. Refused, giving `start` back, once the system
    /// is closed: the check is under the queue lock, so shutdown's cleanup, which takes every
    /// queue lock after closing, either sees the actor or refuses it.
    ///
    /// # Safety
    /// `hdr` is a fresh cell's header; `take_ref` takes the system reference that keeps it alive
    /// until its reclaim envelope runs.
    pub(crate) unsafe fn register(
        &self,
        hdr: &Header,
        start: Envelope,
        take_ref: impl FnOnce(),
    ) -> Result<(), Envelope> {
        let me = worker::current_of(self);
        // A spawn onto the queue this worker is processing queues `start` on the local batch
        // (within the visit budget), so that messages the spawner sends next (local too) cannot
        // overtake it. Otherwise `start` goes to the shared queue and the actor counts as not
        // installed until it runs, so no send can take the local path ahead of it.
        let local = me.is_some_and(|w| w.can_push_local(hdr.queue));
        if !local {
            hdr.set_installed(false); // not yet published: no other thread can see the cell
        }
        let q = &self.queues[hdr.queue];
        let start = {
            let g = q.lock();
            if self.closed() {
                return Err(start);
            }
            take_ref();
            self.core.life.add_live();
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
            (Some(start), Some(w)) => unsafe { w.push_local(start) },
            _ => self.notify_owner(q, me),
        }
        Ok(())
    }

    /// Brings a `Destroyed` actor back: alive again, registered, `install` queued behind its old
    /// mail (which is therefore dropped as dead letters, never delivered to the new state).
    ///
    /// # Safety
    /// `hdr` is a cell's header; `take_ref` takes a new system reference, which `install` (or
    /// shutdown) releases with the actor's eventual reclaim.
    pub(crate) unsafe fn revive(
        &self,
        hdr: &Header,
        install: Envelope,
        take_ref: impl FnOnce(),
    ) -> Result<(), Envelope> {
        let q = &self.queues[hdr.queue];
        {
            let g = q.lock();
            if self.closed() || hdr.status() != Status::Destroyed {
                return Err(install);
            }
            take_ref();
            hdr.set_status(Status::Alive);
            self.core.life.add_live();
            // SAFETY: a destroyed actor was unlinked by `retire`; the new reference keeps it.
            unsafe { g.link(&hdr.link) };
            g.push(install);
        }
        self.notify_owner(q, worker::current_of(self));
        Ok(())
    }

    /// Marks an actor terminal and schedules the release of the system's reference behind every
    /// envelope already queued for it. Runs on the worker processing the actor's queue.
    ///
    /// # Safety
    /// `hdr` is registered (on its queue's list) and `reclaim` releases its system reference.
    pub(crate) unsafe fn retire(&self, hdr: &Header, status: Status, reclaim: Envelope) {
        let q = &self.queues[hdr.queue];
        let me = worker::current_of(self);
        let local = {
            let g = q.lock();
            hdr.set_status(status);
            // SAFETY: caller contract: the link is on this queue's list.
            unsafe { g.unlink(&hdr.link) };
            // If this worker holds the queue and nothing is queued behind its batch, every
            // envelope for the actor is in the batch (later sends fail on the status): the
            // reclaim can go to the end of the batch and save a gulp.
            if g.len() == 0 && me.is_some_and(|w| w.is_current(hdr.queue)) {
                Some(reclaim)
            } else {
                g.push(reclaim);
                None
            }
        };
        match (local, me) {
            // SAFETY: `is_current` held under the lock, on this thread.
            (Some(reclaim), Some(w)) => unsafe { w.push_local_unbudgeted(reclaim) },
            _ => self.notify_owner(q, me),
        }
        self.core.life.terminated(hdr.joinable());
    }

    /// Starts shutting down: graceful (`drain`) or not. Afterwards no spawn or respawn can
    /// succeed: a `register` or `revive` that passed its `closed()` check did so under a queue
    /// lock that this function takes once after closing, so it has counted itself in `live`
    /// by the time this returns. Wakes every worker.
    pub(crate) fn begin_shutdown(&self, drain: bool) {
        self.core.close(drain);
        for q in self.queues.iter() {
            drop(q.lock());
        }
        self.idle.wake_all();
    }

    /// After the workers have exited: stop every actor still alive, dispose of every envelope
    /// still queued, release every system reference. Single-threaded.
    pub(crate) fn cleanup(&self) {
        // 1. Actors still alive stop accepting messages (sends now fail), in one pass.
        let mut stopped = Vec::new();
        for q in self.queues.iter() {
            let g = q.lock();
            for link in g.take_actors() {
                // SAFETY: links on a queue's list are the first field of a live cell's header.
                let hdr = unsafe { Header::from_link(link) };
                hdr.set_status(Status::Stopped);
                stopped.push(hdr as *const Header);
            }
        }
        // 2. Queued envelopes are discarded (message drops may run user code; no lock is held).
        self.discard_queued();
        // 3. The stopped actors' states are dropped and the system's references released.
        for hdr in stopped {
            // SAFETY: each was taken off a list above, exactly once, and its system reference is
            // still held (its reclaim envelope was never queued: it was not retired).
            unsafe { Header::shutdown(hdr) };
            self.core.life.stopped();
        }
        // 4. Every actor is terminal now, so nothing new can be queued; this pass is a guard
        //    for envelopes that step 3's user destructors might have produced.
        self.discard_queued();
        // 5. Detached actors (mailboxes) go the same way.
        super::mailbox::cleanup(&self.core);
    }

    fn discard_queued(&self) {
        loop {
            let mut any = false;
            for q in self.queues.iter() {
                let mut batch = q.lock().take_all();
                any |= !batch.is_empty();
                batch.discard_all();
            }
            if !any {
                break;
            }
        }
    }
}

/// The longest victim among `stamps` (one per worker, see `Executor::last_steal`): the other
/// worker with the oldest steal timestamp; ties go to the lowest index.
fn longest_victim(stamps: &[CachePadded<AtomicU64>], me: usize) -> usize {
    (0..stamps.len())
        .filter(|&w| w != me)
        .min_by_key(|&w| stamps[w].load(Ordering::Relaxed))
        .expect("at least two workers")
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn stamps(v: &[u64]) -> Box<[CachePadded<AtomicU64>]> {
        v.iter()
            .map(|&s| CachePadded::new(AtomicU64::new(s)))
            .collect()
    }

    #[test]
    fn the_longest_victim_is_the_oldest_thief_and_never_a_sleeper() {
        // Worker 0 busy since the start (stamp 0), worker 1 stole recently.
        assert_eq!(longest_victim(&stamps(&[0, 50, 90]), 2), 0);
        assert_eq!(longest_victim(&stamps(&[70, 50, 90]), 2), 1);
        // Worker 1 asleep (stamp_asleep): worker 0 is chosen although its stamp is newer
        // than the sleeper's was.
        assert_eq!(longest_victim(&stamps(&[70, u64::MAX, 90]), 2), 0);
        // Every other worker asleep: one of them (a steal there finds nothing; harmless).
        assert_eq!(longest_victim(&stamps(&[u64::MAX, u64::MAX, 90]), 2), 0);
    }
}
