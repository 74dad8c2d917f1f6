//! Queue stealing (the Cforall actor system: Colby Parsons, MMath thesis, Waterloo 2023, "Work
//! Stealing"): an idle worker takes a whole queue from a victim by a wait-free swap of two
//! slots of the queue-pointer array ([`super::swap`]), choosing the victim by the
//! longest-victim or random heuristic. Which queue it takes, and when, is policy
//! (`placement/balance.rs`: candidates, rescues).

use super::swap::{try_swap, Moves};
use super::visit::McWorker;
use super::work_queue::WorkQueue;
use super::{Executor, QueueStealing};
use std::sync::atomic::Ordering;

impl Executor {
    /// Records that worker `w` is trying to steal now. The stamps below are kept only for the
    /// longest-victim heuristic, the only reader.
    pub(crate) fn stamp_steal(&self, w: usize) {
        if self.stealing != QueueStealing::LongestVictim {
            return;
        }
        let now = self.epoch.elapsed().as_nanos() as u64;
        self.pool.data(w).last_steal.store(now, Ordering::Relaxed);
    }

    /// Records that worker `w` is going to sleep, returning its steal timestamp (to restore
    /// with [`Self::stamp_awake`]). A sleeping worker has no queue worth stealing (it just
    /// searched its range under the locks and found nothing), so until it wakes it counts as
    /// the most recent thief. Without this the thesis's heuristic, made for workers that never
    /// sleep, picks sleepers (their timestamp ages) over the busy worker whose queues hold the
    /// backlog, and its attempts find no candidate.
    pub(crate) fn stamp_asleep(&self, w: usize) -> u64 {
        if self.stealing != QueueStealing::LongestVictim {
            return 0;
        }
        self.pool
            .data(w)
            .last_steal
            .swap(u64::MAX, Ordering::Relaxed)
    }

    /// Worker `w` woke up: it gets back the timestamp of its last steal attempt (it may wake
    /// to a backlog, and is then a good victim again).
    pub(crate) fn stamp_awake(&self, w: usize, stamp: u64) {
        if self.stealing != QueueStealing::LongestVictim {
            return;
        }
        self.pool.data(w).last_steal.store(stamp, Ordering::Relaxed);
    }

    /// The longest victim: the other worker with the oldest steal timestamp.
    pub(crate) fn longest_victim(&self, me: usize) -> usize {
        longest_victim(
            self.pool
                .iter()
                .map(|s| s.last_steal.load(Ordering::Relaxed)),
            me,
        )
    }

    /// One steal attempt (the thesis, "Stealing Mechanism"): choose a victim by the heuristic,
    /// scan its range once from a random index for a candidate queue (non-null, not being
    /// processed, holding at least `min_steal` envelopes, not held off by its owner; or, in a
    /// rescue, any with mail: see [`Self::candidate`]), and try one wait-free swap with a random
    /// slot of our own range. With `rescue_only` (this worker holds a queue off, rule 7), only a
    /// rescue is tried. Returns whether a queue was stolen.
    pub(crate) fn steal(&self, me: &McWorker<'_>, rescue_only: bool) -> bool {
        // Ranges, victims and the swap inside one read section: a resize never sees a queue
        // out of every slot.
        let _section = self.pool.lock.read(me.index);
        let workers = self.pool.len();
        if workers < 2 || me.index >= workers {
            return false;
        }
        let thief = me.index;
        let l = &me.local;
        let victim = match self.stealing {
            QueueStealing::LongestVictim => self.longest_victim(thief),
            _ => l.random(|r| r.other_than(thief, workers)),
        };
        // A stuck victim (one behaviour for `stuck_after`, or one visit for `stuck_visit`)
        // gives up any queue with mail (rescue).
        // Without balance, the thesis's rule: any queue with mail (and no rescue, below).
        let rescue = self.balance && self.stuck(l, victim);
        let min = if rescue || !self.balance {
            1
        } else {
            self.tuning.min_steal
        };
        if rescue_only && !rescue {
            return false;
        }
        let counters = me.counters();
        self.shared.count(counters, |c| &c.steal_attempts);
        self.stamp_steal(thief);
        let vr = self.range(victim);
        let start = l.random(|r| r.below(vr.len().max(1)));
        let candidate = self.candidate(vr, start, min, rescue || !self.balance);
        // A victim stuck in one behaviour is asked to split its queue; one whose backlog
        // leaves this thief nothing to take, to split the backlog (rule 4).
        if self.balance && (rescue || candidate.is_none()) {
            self.ask_split(l, victim, candidate.is_none());
        }
        let Some(candidate) = candidate else {
            self.shared.count(counters, |c| &c.steal_fail_no_candidate);
            return false;
        };
        let own = self.range(thief);
        let mine = own.start + l.random(|r| r.below(own.len()));
        let Some(stolen) = self.steal_slot(thief, mine, victim, candidate) else {
            self.shared.count(counters, |c| &c.steal_fail_swap);
            return false;
        };
        if rescue && counters.is_some() {
            self.pool.data(thief).busy.rescues.bump(1);
        }
        if let Some(c) = counters {
            c.steals.bump(1);
            c.messages_stolen.bump(stolen as u64);
            if stolen == 0 {
                c.empty_steals.bump(1);
            }
        }
        true
    }

    /// Swaps the thief's slot `mine` with the victim's slot `theirs`, moving each queue's owner
    /// with it (see `swap.rs`), and wakes the victim if the queue it was given holds envelopes
    /// (a sender that read the thief as that queue's owner did not wake anyone: the thief is
    /// awake). Returns the envelopes in the stolen queue (counted under its lock), or `None`
    /// if the swap failed.
    pub(crate) fn steal_slot(
        &self,
        thief: usize,
        mine: usize,
        victim: usize,
        theirs: usize,
    ) -> Option<usize> {
        let owners = Owners { thief, victim };
        let (stolen, given) = try_swap(self.slots(), mine, theirs, &owners).ok()?;
        #[cfg(test)]
        if let Some(mut f) = AFTER_SWAP.with(|h| h.borrow_mut().take()) {
            f()
        }
        // SAFETY: slot pointers always point into the executor's queues.
        let (stolen, given) = unsafe { (&*stolen, &*given) };
        // The owner of `given` was written before it was published, so a sender that locks it
        // after this check reads the victim and notifies it; one that locked it before left a
        // message this check sees.
        if given.lock().len() > 0 {
            self.wake_owner(victim);
        }
        Some(stolen.lock().len())
    }
}

/// The longest victim among `stamps` (one per worker, see `WorkerSlot::last_steal`): the other
/// worker with the oldest steal timestamp; ties go to the lowest index.
pub(crate) fn longest_victim(stamps: impl Iterator<Item = u64>, me: usize) -> usize {
    stamps
        .enumerate()
        .filter(|&(w, _)| w != me)
        .min_by_key(|&(_, s)| s)
        .map(|(w, _)| w)
        .expect("at least two workers")
}

/// A steal's owner updates: each queue learns its new owner while the thief holds it out of
/// every slot.
struct Owners {
    thief: usize,
    victim: usize,
}

impl Moves<WorkQueue> for Owners {
    fn to_victim(&self, q: *mut WorkQueue) {
        // SAFETY: slot pointers always point into the executor's queues.
        let q = unsafe { &*q };
        q.set_owner(self.victim);
    }

    fn to_thief(&self, q: *mut WorkQueue) {
        // SAFETY: as above.
        let q = unsafe { &*q };
        q.set_owner(self.thief);
    }
}

#[cfg(test)]
thread_local! {
    /// Test hook: runs right after a successful swap, before the thief's bookkeeping (where a
    /// late owner update, made after the swap, would land).
    pub(crate) static AFTER_SWAP: std::cell::RefCell<Option<Box<dyn FnMut()>>> =
        const { std::cell::RefCell::new(None) };
}
