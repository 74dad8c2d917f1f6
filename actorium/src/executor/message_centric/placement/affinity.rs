//! Affinity: where an actor lives (rules 1, 2 and 5 of `README.md`, "Placement"). A child starts
//! on its parent's worker; actors spawned one after the other from outside share a queue in
//! runs; an actor that other actors keep handing messages one at a time moves into their queue
//! (with the few actors of its old queue). Each is off with [`super::super::tuning::Tuning`]'s
//! `affinity` switch, and every move keeps the invariants of the executor's README.

use super::super::visit::{Local, McWorker};
use super::super::work_queue;
use super::super::{ranges, Executor};
use crate::core::Header;

/// Entries of a worker's table of such runs (6 KiB): [`FOLLOW_WAYS`] entries for each of
/// `FOLLOW_SLOTS / FOLLOW_WAYS` sets, a receiver's set chosen by a hash of its address.
pub(crate) const FOLLOW_SLOTS: usize = 256;

/// Entries a receiver may take in its set. With one (a direct-mapped table), two receivers
/// whose addresses map to one entry restart each other's runs forever, and neither ever moves
/// (in `dictionary`, whose clients each follow the dictionary, the allocator's addresses then
/// decide which clients are left behind).
pub(crate) const FOLLOW_WAYS: usize = 4;

/// The first entry of the set of the receiver at address `to` (Fibonacci hashing: cells are
/// allocated at regular strides, which a plain `to >> 6 % sets` maps onto few sets).
#[inline]
pub(crate) fn follow_set(to: usize) -> usize {
    const SETS: usize = FOLLOW_SLOTS / FOLLOW_WAYS;
    let h = ((to >> 4) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> (64 - SETS.trailing_zeros())) as usize * FOLLOW_WAYS
}

/// An entry of a worker's table of runs of sends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct RunEntry {
    /// The receiver's address (0: an empty entry).
    pub(crate) to: usize,
    /// The sending queues of the last two counted sends, the latest first.
    pub(crate) from: [u32; 2],
    /// Counted sends in the run.
    pub(crate) run: u32,
    /// The visit of the last counted send.
    pub(crate) visit: u32,
}

/// The entry after one more send to `to` from queue `from` during visit `visit` (see
/// [`Local::follow_run`]), and whether the receiver follows into `from` now.
///
/// One send per visit counts: sends within one visit are a flood from one long behaviour (a
/// producer, a factory), not a conversation, and a receiver moved into that visit's queue
/// would wait behind it (`sleeping-barber`'s room would follow its factory into the queue of
/// the factory's one long behaviour).
///
/// Sends from different queues of the worker continue one run: an actor handed messages one
/// at a time by two partners in turn (`logistic-map`'s series, by its master and its computer)
/// follows one of them, and then, every move being downwards, ends with both in one queue.
/// (Were a send from another queue to start a new run, such an actor would never move.) It
/// follows only a queue that also made one of the two counted sends before:
/// a partner, not a queue whose one long visit sent once after a partner's run (the flood
/// above, by another route).
#[inline]
pub(crate) fn extend_run(
    entry: RunEntry,
    to: usize,
    from: u32,
    visit: u32,
    follow_after: u32,
) -> (RunEntry, bool) {
    if entry.to != to {
        let fresh = RunEntry {
            to,
            from: [from, u32::MAX],
            run: 1,
            visit,
        };
        return (fresh, false);
    }
    if entry.visit == visit {
        // Counted already in this visit.
        return (entry, false);
    }
    let follows = entry.run + 1 >= follow_after && entry.from.contains(&from);
    let next = RunEntry {
        to,
        from: [from, entry.from[0]],
        run: (entry.run + 1).min(follow_after),
        visit,
    };
    (next, follows)
}

impl Local {
    /// Counts a send to the actor at address `to` into its empty queue, from queue `from`, a
    /// lower queue this worker processes (the caller passes no other send: sends into a
    /// backlog, or from a higher queue, are neither counted nor end a run), at most one per
    /// visit, whichever of its queues they came from ([`extend_run`]). Returns whether the
    /// actor should move into `from` now: the run reached `follow_after`, and `from` made
    /// one of the two counted sends before this one. The run is then forgotten (the actor
    /// moves, or, if a lock it needs is taken, needs another run). A run ends when the
    /// receiver's entry is evicted from its set by another receiver's.
    #[inline]
    pub(crate) fn follow_run(&self, to: usize, from: usize, follow_after: u32) -> bool {
        let set = &self.follow[follow_set(to)..][..FOLLOW_WAYS];
        let visit = self.visits.get() as u32;
        // The receiver's entry, else the one to replace: the least recently counted (an
        // empty entry has visit 0).
        let slot = set.iter().find(|e| e.get().to == to).unwrap_or_else(|| {
            set.iter()
                .max_by_key(|e| visit.wrapping_sub(e.get().visit))
                .expect("FOLLOW_WAYS > 0")
        });
        let (entry, follows) = extend_run(slot.get(), to, from as u32, visit, follow_after);
        slot.set(if follows { RunEntry::default() } else { entry });
        follows
    }

    /// A queue of worker `index`'s own range for a new actor (round-robin), or `None` if the
    /// range is empty (a removed worker) or the slot is being swapped. Never the queue being
    /// processed while the range has another: a child there would wait behind its parent's
    /// whole batch, where no other worker can take it. The range is read without the resize
    /// lock: a stale one only places the actor elsewhere.
    #[inline]
    pub(crate) fn next_own_queue(&self, exec: &Executor, index: usize) -> Option<usize> {
        let n = self.visit_spawns.get();
        self.visit_spawns.set(n.saturating_add(1));
        let workers = exec.pool.len();
        let mut k = self.spawns.get();
        // The `k`-th spawn's queue in a range: `k` counts spawns over the target ranges.
        let mut nth = k;
        let index = if n >= exec.tuning.spread_after && workers > 1 {
            // A fan-out: its worker is busy with it, so the children go to the others'
            // ranges, in turn (worker `k mod (W − 1)` after this one, then the next queue of
            // its range: every queue of every other range in turn).
            nth = k / (workers - 1);
            (index + 1 + k % (workers - 1)) % workers
        } else {
            index
        };
        let r = exec.range(index);
        if r.is_empty() {
            return None;
        }
        let mut q = exec.slot(r.start + nth % r.len())?.id;
        if q == self.current.get() {
            if r.len() == 1 {
                return None; // the only queue here is the parent's batch: round-robin then
            }
            k += 1;
            q = exec.slot(r.start + (nth + 1) % r.len())?.id;
        }
        self.spawns.set(k.wrapping_add(1));
        Some(q)
    }
}

/// The queue of the `k`-th spawn from outside the workers, among `m` queues split into the
/// ranges of `w` workers (`ranges::partition`): the round-robin of the Cforall actor system
/// (Colby Parsons, MMath thesis, Waterloo 2023), `k mod m`, while `k < m`, so that the first
/// actors of a program, often few and independent, each get a queue of their own that idle
/// workers can take; after that, runs of `spawn_run` consecutive spawns per queue, the runs
/// dealt to the `w` ranges in turn (run `r` to range `r mod w`, the next queue of that range
/// each time it comes round). With `w = 1`, queue after queue.
///
/// Why runs: actors spawned one after the other are usually built to talk to each other (a
/// group, a ring, a pipeline, a server's clients), and those that share a queue exchange
/// messages on the local path of a visit, with no lock, in one batch. Spread one per queue,
/// every message between them takes a queue lock and a separate gulp, and consecutive
/// receivers sit in different batches, far apart in memory (`docs/DESIGN.md`, rule 5). The
/// executor deals runs to the workers in turn only without queue stealing: filled queue
/// after queue, the runs go to worker 0's range first, which stealing evens out as work piles
/// up, but which without it leaves the other workers idle. With stealing, queue after queue
/// keeps more of a group that spans two runs on one worker. Independent actors that share a
/// queue are still parallel: queue stealing takes queues whole, and an actor stuck behind a
/// long behaviour in its queue is split off (placement rule 4).
///
/// With stealing (`w = 1`) the spawns are dealt over `spread` of the `m` queues, evenly
/// spaced (queue `i · m / spread` for the `i`-th): the queues of as many workers as the
/// machine runs at once ([`spread_queues`]). More workers than CPUs (a container whose CPU
/// quota is below its core count, `workers(16)` on 2 CPUs) would otherwise scatter a
/// program's first actors one per queue over queues that no more than the CPUs' worth of
/// workers ever run together, every message between them a lock and a gulp of its own; evenly
/// spaced, they still divide evenly among however many workers are active (the ranges are
/// contiguous).
#[inline]
pub(crate) fn spawn_queue(k: usize, m: usize, spread: usize, w: usize, run_len: usize) -> usize {
    debug_assert!(1 <= spread && spread <= m);
    if w == 1 {
        // Queue after queue (the default, with stealing): one division, not four.
        let i = if k < spread {
            k
        } else {
            (k - spread) / run_len % spread
        };
        return if spread == m { i } else { i * m / spread };
    }
    if k < m {
        return k;
    }
    let run = (k - m) / run_len;
    let range = ranges::range_of(m, w, run % w);
    range.start + run / w % range.len()
}

/// How many of `m` queues, made for `workers` workers, spawns from outside are dealt over
/// ([`spawn_queue`]): all of them unless there are more workers than `cpus`, else the share
/// of as many workers as `cpus` run at once (rounded up, at least one queue).
pub(crate) fn spread_queues(m: usize, workers: usize, cpus: usize) -> usize {
    if workers <= cpus {
        return m;
    }
    m.min(m.saturating_mul(cpus.max(1)).div_ceil(workers))
        .max(1)
}

std::thread_local! {
    /// Without queue stealing, on a thread outside the workers: the header address of the
    /// actor this thread spawned last, its low bit set once this thread sent that actor a
    /// message (`note_fed`; headers are aligned to at least 4). Only compared, never read
    /// through: an actor freed and another allocated at its address, or the same thread
    /// spawning on two systems, can only mistake one placement. An actor fed as soon as it is
    /// spawned, before the next spawn, is most often an independent job (a row of `matrix`, a
    /// worker of `fork-join-creation`), not a member of a group that will talk: the next spawn
    /// then takes the thesis's round-robin, one queue after the other across the workers'
    /// ranges, instead of [`spawn_queue`]'s runs. (In a run, the spawning thread pushes into
    /// the queue that its worker is draining and retiring actors from, under the same lock,
    /// actor after actor; and runs deal independent jobs unevenly to the workers.) Groups are
    /// spawned first and wired or started after (`executor`, `repeat`, `balance-*`): they keep
    /// their runs. A group whose members are each sent a message as they are spawned is spread
    /// like jobs (as the thesis places every actor); spawn the group first, then send. Any send
    /// counts, an `ask` or a monitor's request too.
    static LAST_SPAWN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A send from outside the workers to `hdr` (queue stealing off): marks the thread's last
/// spawn fed if `hdr` is that actor. Inline, in the branch of outside sends: made a call
/// (out of line, cold or not), it slows the send sites it is inlined into for every sender,
/// though no worker's send takes the branch. (`try_with`: a send from another thread-local's
/// destructor may come after this one is gone; it then counts for nothing.)
#[inline]
pub(crate) fn note_fed(hdr: &Header) {
    let _ = LAST_SPAWN.try_with(|l| {
        if l.get() == hdr as *const Header as usize {
            l.set(l.get() | 1);
        }
    });
}

/// Whether this thread's last spawn was fed before this one ([`LAST_SPAWN`]).
#[inline]
pub(crate) fn last_spawn_fed() -> bool {
    LAST_SPAWN.try_with(|l| l.get() & 1 == 1).unwrap_or(false)
}

/// Notes `hdr` as this thread's last spawn ([`LAST_SPAWN`]), not fed yet.
#[inline]
pub(crate) fn note_spawn(hdr: &Header) {
    let _ = LAST_SPAWN.try_with(|l| l.set(hdr as *const Header as usize));
}

/// Where [`Executor::move_here`] put an actor.
pub(crate) enum Moved<'q> {
    /// Into the queue whose batch the sender processes: the message goes to the batch.
    Batch,
    /// Into that queue, whose batch takes no more local sends: the message goes to its
    /// shared part (the queue is returned locked).
    To(work_queue::Locked<'q>),
    /// Nowhere.
    No,
}

/// Notes a send from worker `w` to the actor of `hdr`, whose queue is locked as `g`, before
/// its message is queued. Returns true when the actor should move to where the sender runs:
/// this worker made it `follow_after` counted sends, at most one per visit, each from a queue
/// it was processing with a lower index than the actor's, while the actor's queue was empty
/// and not being processed (sends into a backlog, or from a higher queue, are not counted: a
/// busy receiver is parallel work; and they do not end the run, which ends only when another
/// receiver's entry evicts this one from its set), and the queue of this send made one of the
/// two counted sends before it. The actor was then waiting for the sender's actors,
/// message by message: each message crossed from one queue (and often one core) to another, a
/// hand-off (0.03 to 12 µs here) for work that could run where it was sent, through the local
/// fast path. The sends may come from different queues (an actor with two partners, handed
/// messages by each in turn): it moves into the queue of the send that completes the run.
///
/// Only sends from a queue with a lower index count: actors move only down, so moves end. (If
/// every actor could follow its sender, the actors of a ring would each take their
/// predecessor's queue, round after round, forever.)
///
/// The runs are kept by the sending worker, in a small table of its own indexed by the
/// receiver's address (a collision only restarts a run): kept in the receiver's header, the
/// count would be written by every sender into the cache line every sender reads.
///
/// The caller checked that `w` processes queue `from`, whose index is lower, and that the
/// actor's queue is empty.
#[inline]
pub(crate) fn follows(
    g: &work_queue::Locked<'_>,
    hdr: &Header,
    w: &McWorker<'_>,
    from: usize,
) -> bool {
    // (Acquire: if the actor moves, everything its last behaviour did happens before the
    // move, and before this worker reads its `installed` flag or runs it.)
    if g.queue().processed_locked(g) {
        return false;
    }
    w.local.follow_run(
        hdr as *const Header as usize,
        from,
        w.unit.tuning.follow_after,
    )
}

impl Executor {
    /// Moves the actor of `hdr` from its queue (locked as `old`) into the queue whose batch
    /// the sending worker `me` is processing. If that batch still takes local sends this
    /// visit, the caller appends the message to it (`Moved::Batch`), and from then on the two
    /// actors talk through the local fast path; otherwise the message goes to that queue's
    /// shared part (`Moved::To`, returned locked), and the local path stays closed for the
    /// rest of the visit, as for any send to the held queue that goes there. Called when the
    /// sender's actors have been handing this actor messages one at a time ([`follows`]):
    /// `old` is empty and not being processed, so no message for the actor is queued or in a
    /// batch and none of its behaviours runs, and the move changes no order. Gives up
    /// (`Moved::No`) when the held queue's lock is taken (no waiting with `old` held: two
    /// movers could wait for each other). `c` is the queue `me` processes.
    ///
    /// The other actors of `old` come along when there are at most `merge_max` of them
    /// (`README.md`, "Placement", rule 2's merge): they are in the same state (nothing queued
    /// for them, no behaviour running, no outbox holding mail for them, both lists locked), so
    /// moving each is the move above, and a sender that read an old ticket follows it the
    /// same way.
    #[cold]
    #[inline(never)]
    pub(crate) fn move_here<'q>(
        &'q self,
        me: &McWorker<'_>,
        c: usize,
        hdr: &Header,
        old: &work_queue::Locked<'_>,
    ) -> Moved<'q> {
        let l = &me.local;
        if old.pinned() {
            // A worker's outbox may hold mail for the actor, bound for `old`.
            return Moved::No;
        }
        let to = &self.queues[c];
        let Some(g) = to.try_lock() else {
            return Moved::No;
        };
        // SAFETY: the actor is registered (alive), so its link is on `old`'s list; both
        // lists' locks are held.
        unsafe {
            old.unlink(&hdr.link);
            g.link(&hdr.link);
        }
        hdr.move_to_queue(c);
        // The actors left in `old`, if few, come along (rule 2's merge).
        let others = old.move_actors_if_at_most(&g, self.tuning.merge_max, |link| {
            // SAFETY: links on a queue's list are the `link` field of a live cell's header.
            unsafe { Header::from_link(link) }.move_to_queue(c);
        });
        let moved = 1 + others.unwrap_or(0) as u64;
        if self.pool.stats_on() {
            self.pool.data(me.index).busy.moves.bump(moved);
        }
        // The local path stays open only if the held queue's shared part is empty. A moved
        // actor brings its history: what it sent to actors of this queue before the move is
        // in the held batch or in the shared part (its last behaviour's worker flushed its
        // outbox before its visit ended, and its old queue is idle). Sent through the local
        // path, its next messages would run before those still in the shared part.
        if l.can_push_local(c) && hdr.installed() && g.admits_moved_sender() {
            Moved::Batch
        } else {
            l.close_local(c);
            Moved::To(g)
        }
    }
}
