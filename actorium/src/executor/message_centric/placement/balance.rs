//! Balance: who runs what (queue stealing's thresholds, and rules 3, 4 and 6 of `README.md`,
//! "Placement"). A thief takes a queue worth taking from a victim that keeps other work; mail
//! stuck behind a long behaviour is rescued (any queue with mail) or split off (the held
//! queue's other actors move to a queue nobody processes); an idle worker keeps a rescue watch
//! while mail waits elsewhere. Each beyond the stealing of the Cforall actor system (Colby
//! Parsons, MMath thesis, Waterloo 2023) is off with [`super::super::tuning::Tuning`]'s
//! `balance` switch.

use super::super::visit::{Local, McWorker, NO_QUEUE, VISIT_BUDGET};
use super::super::work_queue::{self, WorkQueue};
use super::super::Executor;
use crate::core::{Header, Status};
use std::cell::Cell;
use std::ops::Range;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// A split request (`Busy::split`) about a backlog rather than one long behaviour: a thief
/// that found nothing to take saw a visit's worth of envelopes waiting in the victim's batch
/// behind the running behaviour, in a visit of `stuck_after` (a chain of stages, or a group
/// of actors spawned together, whose mail moves through one queue while another worker
/// idles). The victim takes it only between two behaviours, and only if that much still
/// waits in actors that each bring a stream; it moves the first half of the actors with mail
/// (see [`Executor::split_current`]).
pub(crate) const BACKLOG_SPLIT: u64 = u64::MAX;

/// `now`, a count another worker published, and since when `seen` (this worker's last look)
/// has held it unchanged: then, or now if it changed.
pub(crate) fn note_unchanged(seen: &Cell<(u64, Instant)>, now: u64) -> (u64, Instant) {
    match seen.get() {
        (was, since) if was == now => (now, since),
        _ => {
            let t = Instant::now();
            seen.set((now, t));
            (now, t)
        }
    }
}

/// Whether a split request that finds this worker at `ran` envelopes run, at `now`, is about
/// long behaviours, by this worker's own clock, given the last request it took (`seen`: its
/// `ran` then, and when): the one running now, if it was running at that request at least
/// `stuck_after` ago; or, `between` two behaviours, the behaviours run since that request,
/// if they took `stuck_after` each on average (so a worker the OS preempted once in a run
/// of short behaviours is not split).
pub(crate) fn behaviours_long(
    seen: Option<(u64, Instant)>,
    ran: u64,
    now: Instant,
    between: bool,
    stuck_after: Duration,
) -> bool {
    match seen {
        Some((k, t)) if k == ran => now.duration_since(t) >= stuck_after,
        Some((k, t)) if between && k < ran => {
            now.duration_since(t) >= stuck_after * (ran - k).min(1 << 20) as u32
        }
        _ => false,
    }
}

/// Whether the envelopes of a backlog's `look` (their targets, in order) are worth a split:
/// a split pays for actors that each bring a stream, as a stolen queue does. So those for
/// other actors than `running` (the one that just ran) must be at least `per_actor` for each
/// actor met anew (one not among the last four met, so that a few streams interleaved still
/// count as streams). A backlog of only `running`'s stream, or of many actors with a message
/// or two each (a fan-out's requests), is left whole: moving those would cost about what
/// running them does.
fn brings_streams(
    look: impl Iterator<Item = *const ()>,
    running: *const (),
    per_actor: usize,
) -> bool {
    let (mut others, mut new) = (0, 0);
    let mut recent = [std::ptr::null(); 4];
    for t in look.filter(|&t| t != running) {
        others += 1;
        if !recent.contains(&t) {
            recent[new % recent.len()] = t;
            new += 1;
        }
    }
    others > 0 && others >= per_actor * new
}

impl Executor {
    /// The slot of the queue a thief takes from a victim whose range is `vr`, scanning it
    /// once from position `start`: the first one that is not being processed and holds at
    /// least `min` envelopes, and, unless this is a rescue (`min` below `min_steal`), that its
    /// owner does not hold off (rule 7) or that holds a full batch already. Unless this is a
    /// rescue, the victim must keep other work: a visit under way, or another queue with mail
    /// (placement rule 6). Taking a victim's only work gains no parallelism: it would idle
    /// while the thief runs what it would have run, after the queue's actors moved caches (a
    /// hub and its clients in one queue would go back and forth between the workers).
    pub(crate) fn candidate(
        &self,
        vr: Range<usize>,
        start: usize,
        min: usize,
        any: bool,
    ) -> Option<usize> {
        if vr.is_empty() {
            return None;
        }
        let busy = |s: usize| {
            self.slot(s)
                .is_some_and(|q| q.looks_processed() || !q.looks_empty())
        };
        (0..vr.len())
            .map(|k| vr.start + (start + k) % vr.len())
            .find(|&s| {
                self.slot(s).is_some_and(|q| {
                    let len = q.len_hint();
                    !q.looks_processed()
                        && len >= min
                        && (any || !q.looks_held() || len >= self.tuning.hold_batch)
                })
            })
            .filter(|&c| any || vr.clone().any(|s| s != c && busy(s)))
    }

    /// At a steal attempt on a `victim` that has been in one visit for `stuck_after`: if it
    /// has been in one behaviour that long (its count of envelopes run unchanged), ask it to
    /// split the queue it holds (see [`Executor::split_current`]). Else, if this thief found
    /// nothing to take (`found_none`) while a visit's worth of envelopes ([`VISIT_BUDGET`])
    /// waits in the victim's batch behind the running behaviour, ask for a split of that
    /// backlog ([`BACKLOG_SPLIT`]). The thief cannot see the victim's batch; a long visit of
    /// many short behaviours with little behind progresses by itself, and splitting it
    /// scatters groups that talk.
    pub(crate) fn ask_split(&self, l: &Local, victim: usize, found_none: bool) {
        let (v, in_visit) = self.note_visits(l, victim);
        if v % 2 == 0 || in_visit.elapsed() < self.tuning.stuck_after {
            // (The counts below, which the victim writes as it runs, are read only past
            // `stuck_after`, as in `stuck`.)
            return;
        }
        let busy = &self.pool.data(victim).busy;
        let (ran, since) = self.note_ran(l, victim);
        let asked = busy.split.load(Ordering::Relaxed);
        if since.elapsed() >= self.tuning.stuck_after {
            if asked != ran + 1 {
                busy.split.store(ran + 1, Ordering::Relaxed);
            }
        } else if found_none
            && asked == 0
            && busy.no_backlog.load(Ordering::Relaxed) <= ran
            && busy.behind.load(Ordering::Relaxed) >= ran + u64::from(VISIT_BUDGET)
        {
            // (Only over no request: another thief's about one long behaviour stays.)
            let _ =
                busy.split
                    .compare_exchange(0, BACKLOG_SPLIT, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    /// Whether a thief asked worker `w` to split the queue it holds (one relaxed load of its
    /// own row; see [`Executor::split_current`]).
    #[inline]
    pub(crate) fn split_asked(&self, w: &McWorker<'_>) -> bool {
        w.local.row().busy.split.load(Ordering::Relaxed) != 0
    }

    /// Splits the queue this worker holds, asked by a thief that found this worker in one
    /// behaviour for `stuck_after` (README, "Placement", rule 4), if that behaviour is the
    /// one running now or the one that just ended (the request names the envelope count the
    /// thief saw); or asked to split a backlog ([`BACKLOG_SPLIT`]), between two behaviours
    /// only. Called at a spawn or an out-of-line send (`Executor::push_placing`) of the
    /// running behaviour, or between two behaviours (`drain`), with no lock held: the actors
    /// of the held queue with mail among the first `split_scan` envelopes waiting there (in
    /// the batch this worker holds, behind the running behaviour, then in the queue's shared
    /// part) of other actors than the one running now (or that just ran) — between two
    /// behaviours, the later half of them; for a backlog, the first half — move with all
    /// their mail, in order (the batch's before the shared part's), into a queue that no
    /// worker is processing: a vacant one of this worker's range, where an idle worker's
    /// rescue takes it, else an empty one of another worker's.
    ///
    /// Why it is safe (as a move, `Executor::move_here`): an actor moves under the lock of the
    /// queue it leaves and the lock of the one it enters; none of its behaviours runs (only
    /// this worker runs behaviours of the held queue, and it runs another actor's now); its
    /// envelopes in the held batch are this worker's own to take, and they were gulped before
    /// any in the shared part, so its mail keeps its order; and any message sent later follows
    /// the new ticket (a sender re-reads it under the lock). This worker's own later sends to
    /// it take the shared path: its ticket no longer names the held queue.
    #[inline(never)]
    pub(crate) fn split_current(&self, me: &McWorker<'_>, between: bool) {
        let asked = self
            .pool
            .data(me.index)
            .busy
            .split
            .swap(0, Ordering::Relaxed);
        let l = &me.local;
        let cur = l.current.get();
        let ran = l.ran.get();
        let backlog = asked == BACKLOG_SPLIT;
        if cur == NO_QUEUE || !self.balance || (asked != ran + 1 && !backlog) {
            // Not in a visit (a fork/join task: nothing held), or asked about a behaviour
            // that has ended, with others run since: a visit of short behaviours.
            return;
        }
        let now = Instant::now();
        if backlog {
            // A backlog is split between two behaviours only, and only while a visit's worth
            // still waits in the batch. (A spawn or send point drops the request: the thief
            // asks again at its next attempt, and most of a visit's checks are between two
            // behaviours. Kept instead, it would be taken again at every send of a behaviour
            // that sends much.)
            if !between {
                return;
            }
        } else if !behaviours_long(
            // The thief saw no envelope run for `stuck_after`; this worker checks with its own
            // clock that behaviours take that long (the thief cannot tell a long behaviour
            // from a worker the OS preempted): the one running now, seen at two requests at
            // least `stuck_after` apart; or, between two behaviours, those run since the last
            // request it took, `stuck_after` each on average.
            l.split_seen.get(),
            ran,
            now,
            between,
            self.tuning.stuck_after,
        ) {
            if l.split_seen.get().is_none_or(|(k, _)| k != ran) {
                l.split_seen.set(Some((ran, now)));
            }
            return;
        }
        // SAFETY: a behaviour of this visit is running on this thread, inside a send or spawn,
        // or none is (between two, in `drain`); nothing else borrows the batch until this call
        // returns.
        let batch = unsafe { &mut *l.batch.get() };
        let Some(running) = batch.last_taken_target() else {
            return;
        };
        // A backlog is looked at first without any lock, in the batch alone: its first
        // `VISIT_BUDGET` envelopes (see `brings_streams`). Looked at, no thief asks again
        // before as many envelopes have run, whatever comes of it (a look costs at most one
        // read per envelope run; a split that happens halves again after that).
        if backlog {
            if batch.len() < VISIT_BUDGET as usize {
                return;
            }
            self.pool
                .data(me.index)
                .busy
                .no_backlog
                .store(ran + u64::from(VISIT_BUDGET), Ordering::Relaxed);
            let look = batch.targets().take(VISIT_BUDGET as usize);
            if !brings_streams(look, running, self.tuning.min_steal) {
                return;
            }
        }
        // This worker's outbox may hold mail from the actors about to move: queued first,
        // or a mover, run by another worker next, could send to the same actor through the
        // lock ahead of it. (No behaviour runs during the flush, and no lock is held here.)
        self.flush_outbox(me);
        let q = &self.queues[cur];
        let g = q.lock();
        if g.pinned() {
            // A worker's outbox may hold mail for these actors, bound for this queue: no
            // split now (a later request may find the queue unpinned).
            return;
        }
        // The actors with mail among the first `split_scan` envelopes (batch first) not for
        // the running actor, in the order of their first one: the choice hashes a bounded
        // number of envelopes whatever the queue holds (sorting every envelope's target would
        // hold the lock for seconds over a backlog of millions, with a resize and every sender
        // waiting on it).
        let mut seen = std::collections::HashSet::new();
        let mut order: Vec<*const ()> = batch
            .targets()
            .chain(g.targets())
            .filter(|&t| t != running)
            .take(self.tuning.split_scan)
            .filter(|&t| seen.insert(t))
            .collect();
        order.retain(|&t| {
            // SAFETY: envelopes in a work queue target cells kept alive by the system's
            // reference, and a cell starts with its `repr(C)` header.
            let hdr = unsafe { &*t.cast::<Header>() };
            hdr.status() == Status::Alive && hdr.queue() == cur
        });
        // Between behaviours this worker goes on with the batch: the actors whose mail comes
        // later, half of them, move; the others stay (halving, as work stealing does: the
        // thief that takes them splits its half again when it is asked).
        let mut movers = if backlog {
            // A backlog: the actors whose mail comes first, half of them, move. Mail that
            // this visit's behaviours queued (appended behind the gulped part) is for the
            // actors they talk to, a hub's replies say: those stay with the senders.
            order.truncate(order.len().div_ceil(2));
            order
        } else if between && order.len() > 1 {
            order.split_off(order.len() / 2)
        } else {
            order
        };
        // (Sorted, for the look-ups of the moves below.)
        movers.sort_unstable();
        if movers.is_empty() {
            return;
        }
        // Where to: a queue no one processes, tried without waiting (this worker holds a
        // lock): a vacant one of this worker's range (no actor, nothing queued: an idle
        // worker's rescue takes it whole, and nothing else with it), else an empty one of
        // another worker's range. Not processed, checked under its lock (a gulp takes that
        // lock): a worker holding it could otherwise send to a moved actor through its local
        // fast path, into its batch, ahead of the mail moved into the shared part; once the
        // lock is released, the next gulp takes that mail first.
        let workers = self.pool.len();
        fn free(t: &WorkQueue, vacant: bool) -> Option<work_queue::Locked<'_>> {
            let g2 = t.try_lock()?;
            let ok = if vacant {
                g2.is_vacant()
            } else {
                g2.len() == 0
            };
            (ok && !t.processed_locked(&g2)).then_some(g2)
        }
        let mine = self.range(me.index).filter_map(|s| self.slot(s));
        let others = (1..workers)
            .flat_map(|k| self.range((me.index + k) % workers))
            .filter_map(|s| self.slot(s));
        let Some((to, g2)) = mine
            .map(|t| (t, true))
            .chain(others.map(|t| (t, false)))
            .filter(|(t, _)| t.id != cur && !t.looks_processed())
            .find_map(|(t, vacant)| free(t, vacant).map(|g2| (t, g2)))
        else {
            return;
        };
        for &t in &movers {
            // SAFETY: as above (a cell in a work queue, starting with its header).
            let hdr = unsafe { &*t.cast::<Header>() };
            // SAFETY: the actor is alive with ticket `cur`, so its link is on `q`'s list; both
            // lists' locks are held.
            unsafe {
                g.unlink(&hdr.link);
                g2.link(&hdr.link);
            }
            hdr.move_to_queue(to.id);
        }
        let moving = |t: *const ()| movers.binary_search(&t).is_ok();
        g2.take_picked(batch, moving);
        // What is left behind the running behaviour, for idle workers' watch (`behind`), and
        // the split recorded as a request taken: the next one in this behaviour waits
        // `stuck_after` again (a thief asks at every steal attempt).
        self.pool
            .data(me.index)
            .busy
            .behind
            .store(ran + batch.len() as u64, Ordering::Relaxed);
        l.split_seen.set(Some((ran, now)));
        g.move_picked(&g2, moving);
        drop(g2);
        drop(g);
        if self.pool.stats_on() {
            self.pool
                .data(me.index)
                .busy
                .moves
                .bump(movers.len() as u64);
        }
        // Wake the queue's owner; if it is this (busy) worker, have an idle one come for it.
        let owner = to.owner();
        if owner == me.index || !self.pool.notify(owner) {
            self.pushed_own();
        }
    }

    /// Whether another worker's queues hold mail that is not being processed: looked at
    /// under each queue's lock (also those of a worker between visits: the look must
    /// synchronize with any send made after it, see `Executor::pushed_own`). Notes, for each
    /// such worker, when its visit count last changed (for `stuck`).
    pub(crate) fn mail_elsewhere(&self, me: &McWorker<'_>) -> bool {
        let l = &me.local;
        let mut pending = false;
        for w in (0..self.pool.len()).filter(|&w| w != me.index) {
            // Mail in the batch a visit holds, behind the running behaviour: only a split
            // (rule 4) can free it, and only a watcher asks for one.
            let mut waiting = self.pool.data(w).busy.mail_behind();
            for s in self.range(w) {
                if let Some(q) = self.slot(s) {
                    waiting |= q.lock().len() > 0 && !q.looks_processed();
                }
            }
            if waiting {
                // Both counts noted now, so that a steal attempt after the watch's sleep can
                // tell one long behaviour (see `stuck`).
                self.note_visits(l, w);
                self.note_ran(l, w);
                pending = true;
            }
        }
        pending
    }

    /// The worker leaves the count of rescue watchers (it works again, or decided not to
    /// watch, or is removed).
    #[inline]
    pub(crate) fn stop_watching(&self, l: &Local) {
        if l.watching.replace(false) {
            self.watching.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Whether `victim` is stuck, as far as this worker has watched it (it notes when the
    /// victim's visit count and its count of envelopes run last changed): in one visit for at
    /// least `stuck_after` with one behaviour running all that time, or in one visit for
    /// `stuck_visit` whatever its behaviours.
    pub(crate) fn stuck(&self, l: &Local, victim: usize) -> bool {
        self.stuck_at(l, victim, Instant::now())
    }

    /// [`Self::stuck`] by the clock reading `now` (tests pass their own).
    pub(crate) fn stuck_at(&self, l: &Local, victim: usize, now: Instant) -> bool {
        let (v, since) = self.note_visits(l, victim);
        let in_visit = now.saturating_duration_since(since);
        if v % 2 == 0 || in_visit < self.tuning.stuck_after {
            // (The count of envelopes run, which the victim writes for every envelope, is
            // read only past `stuck_after`: polled at every steal attempt, it would make those
            // writes miss the cache; see `Busy::ran`.)
            return false;
        }
        let (_, ran_since) = self.note_ran(l, victim);
        in_visit >= self.tuning.stuck_visit
            || now.saturating_duration_since(ran_since) >= self.tuning.stuck_after
    }

    /// Worker `w`'s count of envelopes run now, and since when this worker has seen it
    /// unchanged.
    pub(crate) fn note_ran(&self, l: &Local, w: usize) -> (u64, Instant) {
        note_unchanged(
            &l.seen_ran[w],
            self.pool.data(w).busy.ran.load(Ordering::Relaxed),
        )
    }

    /// Worker `w`'s visit count now, and since when this worker has seen it unchanged.
    pub(crate) fn note_visits(&self, l: &Local, w: usize) -> (u64, Instant) {
        note_unchanged(
            &l.seen[w],
            self.pool.data(w).busy.visits.load(Ordering::Relaxed),
        )
    }
}
