//! A work queue (seed 002, "CFA Executor"): one of the M over-sharded message queues.
//!
//! A spinlock, a [`CopyQueue`] of envelopes, and a `being_processed` flag. Senders append under
//! the lock. A worker *gulps* the queue: a plain emptiness test first (no lock when empty), then,
//! under the lock, the whole copy queue is swapped with the worker's empty local one in O(1); the
//! worker then processes the batch with no atomic operation per message. While a batch is being
//! processed `being_processed` stays set, so no other worker can gulp the same queue: one actor's
//! messages are never run on two threads at once, and their order is kept (see `README.md`).
//!
//! The queue also keeps the list of live actors whose ticket names it (intrusive, through the
//! actor cells, guarded by the same lock), so a system dropped while running can find and drop
//! them.
//!
//! Invariants:
//! - `count` mirrors the copy queue's length; it is written only under the lock and read without
//!   it only as a hint (the "test" of test-and-gulp);
//! - `owner` is the worker whose range of the queue-pointer array holds this queue; it is
//!   written only by a thief while the queue is in no slot (`swap.rs`), so once a steal
//!   completes, owner and range agree;
//! - `being_processed` is set under the lock by the gulp and cleared by the worker with a Release
//!   store once the batch is done; the next gulp reads it with Acquire under the lock, which
//!   orders every effect of the previous batch before the next one;
//! - `pins` counts the workers whose outboxes may hold envelopes for this queue's actors
//!   (`README.md`, "Sends into a backlog"); while it is above zero no actor leaves the queue
//!   and reclaim envelopes wait in `parked`, which the unpin that brings it to zero queues
//!   behind the outbox's envelopes. Both are guarded by the lock.

use crate::core::actor_list::{ActorList, Link};
use crate::core::copy_queue::CopyQueue;
use crate::core::envelope::Envelope;
use crate::runtime::loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use crate::runtime::loom::UnsafeCell;
use crate::runtime::spin::{SpinGuard, SpinLock};
use std::ptr;

/// Outcome of a gulp attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gulp {
    /// The test saw an empty queue: no lock taken.
    Empty,
    /// Another worker is processing this queue (counted as a missed gulp).
    Missed,
    /// The batch now in the worker's local queue holds this many envelopes.
    Got(usize),
}

/// `repr(C)`, two cache lines: what an idle worker polls (the length hint) and what a send
/// writes (the copy queue) on the first, the lock on the second (measured: with the lock on
/// the polled line, ping-pong between two workers took 3-4 % longer).
#[repr(C)]
pub(crate) struct WorkQueue {
    count: AtomicUsize,
    /// Index of the worker that currently owns this queue (changes only when queues are stolen).
    owner: AtomicUsize,
    buf: UnsafeCell<CopyQueue>,
    /// This queue's ticket number (its index among the stable queue objects).
    pub(crate) id: usize,
    lock: SpinLock,
    being_processed: AtomicBool,
    /// Its owner holds it off (placement rule 7): thieves leave it, rescues aside (a hint: set
    /// and cleared by the owner at the end of each visit and when the hold ends, cleared by
    /// `set_owner` when the queue changes owner, by a steal or a resize).
    held: AtomicBool,
    /// The live-actor list; guarded by `lock`.
    actors: ActorList,
    /// Workers holding envelopes for this queue's actors in their outboxes (deferred sends,
    /// `README.md`, "Sends into a backlog"); guarded by `lock`. While it is above zero no
    /// actor leaves the queue (its ticket stays, so a deferred envelope reaches the queue its
    /// actor is in) and no reclaim envelope is queued (`parked` keeps them).
    pins: UnsafeCell<u32>,
    /// Reclaim envelopes of actors that ended while the queue was pinned: queued by the
    /// flush that takes the last pin, behind every deferred envelope. Guarded by `lock`.
    parked: UnsafeCell<Vec<Envelope>>,
}

// SAFETY: `buf`, `actors` (and the `Link`s they reach), `pins` and `parked` are only accessed
// while `lock` is held, or (`buf`'s swapped-out batch) by the single worker that set
// `being_processed` for the batch it owns.
unsafe impl Sync for WorkQueue {}
// SAFETY: as above; the raw pointers are links of cells kept alive by the system's references.
unsafe impl Send for WorkQueue {}

/// The queue, locked. Unlocks on drop.
pub(crate) struct Locked<'a> {
    q: &'a WorkQueue,
    _guard: SpinGuard<'a>,
}

impl WorkQueue {
    pub(crate) fn new(id: usize, owner: usize) -> Self {
        Self {
            id,
            lock: SpinLock::new(),
            count: AtomicUsize::new(0),
            being_processed: AtomicBool::new(false),
            held: AtomicBool::new(false),
            owner: AtomicUsize::new(owner),
            buf: UnsafeCell::new(CopyQueue::new()),
            actors: ActorList::new(),
            pins: UnsafeCell::new(0),
            parked: UnsafeCell::new(Vec::new()),
        }
    }

    #[inline]
    pub(crate) fn lock(&self) -> Locked<'_> {
        Locked {
            q: self,
            _guard: self.lock.lock(),
        }
    }

    /// The lock, if it is free now.
    #[inline]
    pub(crate) fn try_lock(&self) -> Option<Locked<'_>> {
        Some(Locked {
            q: self,
            _guard: self.lock.try_lock()?,
        })
    }

    /// The non-atomic "test" of test-and-gulp: may be stale, never takes the lock.
    #[inline]
    pub(crate) fn looks_empty(&self) -> bool {
        self.count.load(Ordering::Relaxed) == 0
    }

    /// Whether its owner holds it off (placement rule 7; a hint for thieves).
    #[inline]
    pub(crate) fn looks_held(&self) -> bool {
        self.held.load(Ordering::Relaxed)
    }

    /// Marks the queue held off by its owner, or no longer (only when that changes).
    #[inline]
    pub(crate) fn set_held(&self, held: bool) {
        if self.held.load(Ordering::Relaxed) != held {
            self.held.store(held, Ordering::Relaxed);
        }
    }

    #[inline]
    pub(crate) fn owner(&self) -> usize {
        self.owner.load(Ordering::Relaxed)
    }

    /// The queue moves to worker `w`'s range. Only by a thief that holds the queue out of every
    /// slot (`swap.rs`), before it publishes the queue in its new slot, or by a resize. Its
    /// old owner's hold (rule 7) is not its new owner's: the `held` mark goes.
    pub(crate) fn set_owner(&self, w: usize) {
        self.owner.store(w, Ordering::Relaxed);
        self.set_held(false);
    }

    /// Hint for thieves (and exact under the lock): a worker is processing this queue's
    /// batch.
    #[inline]
    pub(crate) fn looks_processed(&self) -> bool {
        self.being_processed.load(Ordering::Relaxed)
    }

    /// Whether a worker is processing this queue's batch, exactly, for a caller holding the
    /// lock (the flag is set under it); `false` is ordered after everything the last batch
    /// did (the Acquire pairs with [`Self::done_processing`]'s Release), as in a gulp.
    #[inline]
    pub(crate) fn processed_locked(&self, _: &Locked<'_>) -> bool {
        self.being_processed.load(Ordering::Acquire)
    }

    /// Hint: envelopes waiting (may be stale).
    #[inline]
    pub(crate) fn len_hint(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    /// Test-and-gulp. `local` must be empty; on `Got` it holds the batch and this queue is marked
    /// being processed until [`Self::done_processing`].
    #[inline]
    pub(crate) fn gulp(&self, local: &mut CopyQueue) -> Gulp {
        if self.looks_empty() {
            return Gulp::Empty;
        }
        let g = self.lock();
        if self.being_processed.load(Ordering::Acquire) {
            return Gulp::Missed;
        }
        let n = g.swap_out(local);
        if n > 0 {
            self.being_processed.store(true, Ordering::Relaxed);
            Gulp::Got(n)
        } else {
            Gulp::Empty
        }
    }

    /// Gulps again a queue this worker is already processing (`being_processed` stays set).
    #[inline]
    pub(crate) fn regulp(&self, local: &mut CopyQueue) -> Gulp {
        if self.looks_empty() {
            return Gulp::Empty;
        }
        match self.lock().swap_out(local) {
            0 => Gulp::Empty,
            n => Gulp::Got(n),
        }
    }

    /// Hands the unprocessed rest of a batch back, ahead of what was sent since it was gulped,
    /// so the next gulp (by any worker) runs it first: order per actor is kept. Only by the
    /// worker processing this queue (`being_processed` set), before `done_processing`. `rest`
    /// is left empty. Moves the envelopes sent meanwhile (usually few), and the rest only to the
    /// front of its own array, when that costs no more than the slots it frees.
    pub(crate) fn give_back(&self, rest: &mut CopyQueue) {
        let g = self.lock();
        // SAFETY: the lock is held.
        let n = self.buf.with_mut(|b| unsafe {
            let b = &mut *b;
            rest.append_from(b);
            std::mem::swap(b, rest);
            b.len()
        });
        self.count.store(n, Ordering::Relaxed);
        drop(g);
    }

    /// The batch taken by the last successful gulp has been processed.
    #[inline]
    pub(crate) fn done_processing(&self) {
        self.being_processed.store(false, Ordering::Release);
    }
}

impl<'a> Locked<'a> {
    /// The queue this is the lock of.
    #[inline]
    pub(crate) fn queue(&self) -> &'a WorkQueue {
        self.q
    }

    /// Appends an envelope; returns how many are queued now.
    #[inline]
    pub(crate) fn push_counted(&self, e: Envelope) -> usize {
        // SAFETY: the lock is held, so no other thread touches the buffer.
        let n = self.q.buf.with_mut(|b| unsafe {
            (*b).push(e);
            (*b).len()
        });
        self.q.count.store(n, Ordering::Relaxed);
        n
    }

    /// Appends every envelope of `from`, in order, leaving it drained. Returns how many.
    pub(crate) fn append(&self, from: &mut CopyQueue) -> usize {
        let moved = from.len();
        if moved == 0 {
            return 0;
        }
        // SAFETY: the lock is held, so no other thread touches the buffer.
        let n = self.q.buf.with_mut(|b| unsafe {
            (*b).append_from(from);
            (*b).len()
        });
        self.q.count.store(n, Ordering::Relaxed);
        moved
    }

    /// Appends an envelope.
    #[inline]
    pub(crate) fn push(&self, e: Envelope) {
        self.push_counted(e);
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        // SAFETY: the lock is held.
        self.q.buf.with(|b| unsafe { (*b).len() })
    }

    /// Swaps the (possibly empty) contents out into the empty `local`, returning how many.
    #[inline]
    fn swap_out(&self, local: &mut CopyQueue) -> usize {
        debug_assert!(local.is_empty());
        // SAFETY: the lock is held.
        let n = self.q.buf.with_mut(|b| unsafe {
            ptr::swap(b, local);
            local.len()
        });
        self.q.count.store(0, Ordering::Relaxed);
        n
    }

    /// Takes every envelope out and releases the array (shutdown).
    pub(crate) fn take_all(&self) -> CopyQueue {
        let mut out = CopyQueue::empty();
        self.swap_out(&mut out);
        out
    }

    /// An empty queue whose array grew past its initial size hands it over, to be freed once
    /// the lock is released (its worker has been idle for `runtime::worker::RELEASE_AFTER`: a
    /// burst's memory returns once the system is quiet). The queue allocates again on its next
    /// push.
    pub(crate) fn take_idle_array(&self) -> Option<CopyQueue> {
        // SAFETY: the lock is held.
        self.q
            .buf
            .with_mut(|b| unsafe { (*b).take_if_larger(crate::core::copy_queue::INITIAL_CAPACITY) })
    }

    /// Adds a live actor's links to this queue's list.
    ///
    /// # Safety
    /// As [`ActorList::link`] (the lock is held by `self`).
    pub(crate) unsafe fn link(&self, link: *const Link) {
        // SAFETY: we hold the queue lock that guards the list; the rest is forwarded.
        unsafe { self.q.actors.link(link) }
    }

    /// Removes an actor's links from this queue's list.
    ///
    /// # Safety
    /// `link` is on this queue's list.
    pub(crate) unsafe fn unlink(&self, link: *const Link) {
        // SAFETY: we hold the queue lock; forwarded contract.
        unsafe { self.q.actors.unlink(link) }
    }

    /// A worker's outbox holds (or is about to hold) envelopes for this queue's actors: none
    /// leaves the queue and no reclaim envelope is queued until [`Self::unpin`].
    #[inline]
    pub(crate) fn pin(&self) {
        // SAFETY: the lock is held.
        self.q.pins.with_mut(|p| unsafe { *p += 1 });
    }

    /// An outbox's envelopes for this queue were queued (before this call): the pin taken by
    /// [`Self::pin`] goes. The last one queues the reclaim envelopes parked meanwhile, behind
    /// them. Returns whether it queued any.
    #[inline]
    pub(crate) fn unpin(&self) -> bool {
        // SAFETY: the lock is held.
        let left = self.q.pins.with_mut(|p| unsafe {
            debug_assert!(*p > 0, "unpin without a pin");
            *p -= 1;
            *p
        });
        if left > 0 {
            return false;
        }
        let parked = self.q.parked.with_mut(|v| {
            // SAFETY: the lock is held; the vector is touched only under it.
            unsafe { std::mem::take(&mut *v) }
        });
        if parked.is_empty() {
            return false;
        }
        for e in parked {
            self.push(e);
        }
        true
    }

    /// Whether some worker's outbox may hold envelopes for this queue's actors: none may
    /// leave the queue now (a move or a split waits), and a reclaim envelope is parked.
    #[inline]
    pub(crate) fn pinned(&self) -> bool {
        // SAFETY: the lock is held.
        self.q.pins.with(|p| unsafe { *p > 0 })
    }

    /// Whether the reclaim envelope of the actor whose cell is `target` is parked here: it
    /// ended while the queue was pinned, and an outbox may still hold mail for it.
    pub(crate) fn parks_reclaim_of(&self, target: *const ()) -> bool {
        // SAFETY: the lock is held.
        self.q
            .parked
            .with(|v| unsafe { (*v).iter().any(|e| e.target() == target) })
    }

    /// Keeps the reclaim envelope of an actor that ended while the queue is pinned, for the
    /// last [`Self::unpin`] to queue.
    pub(crate) fn park(&self, reclaim: Envelope) {
        debug_assert!(self.pinned());
        // SAFETY: the lock is held.
        self.q.parked.with_mut(|v| unsafe { (*v).push(reclaim) });
    }

    /// Whether no live actor has this queue's ticket and nothing is queued.
    pub(crate) fn is_vacant(&self) -> bool {
        self.q.actors.is_empty() && self.len() == 0
    }

    /// The targets of the envelopes queued here (the shared part), oldest first.
    pub(crate) fn targets(&self) -> impl Iterator<Item = *const ()> + '_ {
        // SAFETY: the lock is held for as long as `self` (and so the iterator) lives, and only
        // the lock holder touches the buffer.
        self.q.buf.with(|b| unsafe { (*b).targets() })
    }

    /// Appends the live envelopes of `from` (a batch its worker holds) whose target satisfies
    /// `pick` to this queue, in order; the others stay in `from`, in order.
    pub(crate) fn take_picked(&self, from: &mut CopyQueue, pick: impl FnMut(*const ()) -> bool) {
        // SAFETY: the lock is held.
        let n = self.q.buf.with_mut(|b| unsafe {
            from.move_picked(&mut *b, pick);
            (*b).len()
        });
        self.q.count.store(n, Ordering::Relaxed);
    }

    /// Moves the queued envelopes whose target satisfies `pick` to the end of `to`'s, in
    /// order (both locks held). Returns how many moved.
    pub(crate) fn move_picked(
        &self,
        to: &Locked<'_>,
        pick: impl FnMut(*const ()) -> bool,
    ) -> usize {
        // SAFETY: both locks are held, and the queues are different (a queue's lock is not
        // reentrant), so the two buffers are distinct and touched by no one else.
        let (moved, left, now) = self.q.buf.with_mut(|b| {
            // SAFETY: as just said; `b` and `t` are the two distinct locked buffers.
            to.q.buf.with_mut(|t| unsafe {
                let m = (*b).move_picked(&mut *t, pick);
                (m, (*b).len(), (*t).len())
            })
        });
        self.q.count.store(left, Ordering::Relaxed);
        to.q.count.store(now, Ordering::Relaxed);
        moved
    }

    /// Calls `f` with each live actor listed on this queue.
    pub(crate) fn for_each_actor(&self, f: impl FnMut(*const Link)) {
        self.q.actors.for_each(f)
    }

    /// Moves every actor listed here onto `to`'s list if there are at most `max`, calling `f`
    /// with each; returns how many, or `None` (both lists unchanged) if there are more.
    pub(crate) fn move_actors_if_at_most(
        &self,
        to: &Locked<'_>,
        max: usize,
        f: impl FnMut(*const Link),
    ) -> Option<usize> {
        // SAFETY: both locks are held (`self` and `to`), and the queues are different (a
        // queue's lock is not reentrant), so the lists are distinct.
        unsafe { self.q.actors.move_all_if_at_most(&to.q.actors, max, f) }
    }

    /// Empties the live-actor list, returning its members.
    pub(crate) fn take_actors(&self) -> Vec<*const Link> {
        self.q.actors.take()
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    //! A gulp racing sends: every envelope is taken exactly once, in send order, and no two
    //! workers hold the same queue's batch at once.
    use super::*;
    use crate::core::envelope::{EnvelopeVTable, Payload};
    use crate::runtime::loom::sync::Arc;
    use loom::thread;

    unsafe fn run(_: *const (), _: *mut Payload, _: crate::core::WorkerRef<'_>) {
        unreachable!()
    }
    unsafe fn discard(_: *const (), p: *mut Payload) {
        // SAFETY: the model packs u64 payloads.
        unsafe { Payload::unpack::<u64>(p) };
    }
    static VT: EnvelopeVTable = EnvelopeVTable {
        run,
        discard,
        message: true,
    };

    fn env(v: u64) -> Envelope {
        Envelope::new(std::ptr::null(), &VT, Payload::pack(v))
    }

    fn drain(local: &mut CopyQueue, out: &mut Vec<u64>) {
        while let Some(e) = local.pop() {
            // SAFETY: packed as u64.
            out.push(unsafe { e.into_message::<u64>() });
        }
        local.reset_drained();
    }

    /// A send by the ticket protocol (`Executor::push_shared`): read the actor's ticket, lock
    /// that queue, read the ticket again under the lock, and follow it if it changed.
    fn send_by_ticket(
        qs: &[WorkQueue; 2],
        ticket: &crate::runtime::loom::sync::atomic::AtomicUsize,
        v: u64,
    ) {
        loop {
            let t = ticket.load(Ordering::Relaxed);
            let g = qs[t].lock();
            if ticket.load(Ordering::Relaxed) == t {
                g.push(env(v));
                return;
            }
        }
    }

    /// A mover (`Executor::move_here`): under queue 1's lock, if it is empty and not
    /// processed, and queue 0's (tried), every actor of `tickets` moves from 1 to 0, and the
    /// mover queues its own message 100 there. Returns whether they moved.
    fn spawn_mover<const N: usize>(
        qs: &Arc<[WorkQueue; 2]>,
        tickets: &Arc<[crate::runtime::loom::sync::atomic::AtomicUsize; N]>,
    ) -> thread::JoinHandle<bool> {
        let (qs, tickets) = (qs.clone(), tickets.clone());
        thread::spawn(move || {
            let old = qs[1].lock();
            if old.len() == 0 && !qs[1].processed_locked(&old) {
                if let Some(new) = qs[0].try_lock() {
                    for t in tickets.iter() {
                        t.store(0, Ordering::Relaxed);
                    }
                    new.push(env(100));
                    return true;
                }
            }
            false
        })
    }

    /// What queues 1 (the old) and 0 (the new) hold, gulped and drained, in that order.
    fn gulp_both(qs: &[WorkQueue; 2]) -> (Vec<u64>, Vec<u64>) {
        let mut local = CopyQueue::new();
        let (mut old, mut new) = (Vec::new(), Vec::new());
        if let Gulp::Got(_) = qs[1].gulp(&mut local) {
            drain(&mut local, &mut old);
        }
        if let Gulp::Got(_) = qs[0].gulp(&mut local) {
            drain(&mut local, &mut new);
        }
        (old, new)
    }

    #[test]
    fn gulp_racing_send_loses_and_duplicates_nothing() {
        loom::model(|| {
            let q = Arc::new(WorkQueue::new(0, 0));
            let sender = {
                let q = q.clone();
                thread::spawn(move || {
                    for v in 1..=2 {
                        q.lock().push(env(v));
                    }
                })
            };
            let mut local = CopyQueue::new();
            let mut got = Vec::new();
            for _ in 0..2 {
                if let Gulp::Got(_) = q.gulp(&mut local) {
                    drain(&mut local, &mut got);
                    q.done_processing();
                }
            }
            sender.join().unwrap();
            // Whatever the race left behind is still there, in order.
            if let Gulp::Got(_) = q.gulp(&mut local) {
                drain(&mut local, &mut got);
                q.done_processing();
            }
            assert_eq!(got, vec![1, 2]);
        });
    }

    /// Moving an actor to another queue (`Executor::move_here`, placement) racing a sender.
    /// The mover changes the actor's ticket only
    /// under the old queue's lock, when that queue is empty and not being processed, and only
    /// while it also holds the new queue's lock (taken with `try_lock`); the sender reads the
    /// ticket, locks that queue, and reads the ticket again under the lock, retrying if it
    /// changed (`Executor::push_shared`). No message for the actor may land in its old queue
    /// after the move (the old queue's worker would run it, possibly at the same time as, or
    /// after, later messages in the new queue). Removing the sender's second read fails it.
    #[test]
    fn a_moved_actor_gets_no_message_in_its_old_queue() {
        use crate::runtime::loom::sync::atomic::AtomicUsize;
        loom::model(|| {
            let qs = Arc::new([WorkQueue::new(0, 0), WorkQueue::new(1, 0)]);
            let tickets = Arc::new([AtomicUsize::new(1)]);
            let mover = spawn_mover(&qs, &tickets);
            for v in 1..=2 {
                send_by_ticket(&qs, &tickets[0], v);
            }
            let moved = mover.join().unwrap();
            let (old_rest, new_all) = gulp_both(&qs);
            if moved {
                assert!(
                    old_rest.is_empty(),
                    "a message went to the old queue after the move"
                );
            }
            // Every message once, each queue in send order.
            let mut sent = old_rest.clone();
            assert!(
                sent.windows(2).all(|w| w[0] < w[1]),
                "out of order: {sent:?}"
            );
            let new_sent: Vec<u64> = new_all.iter().copied().filter(|&v| v != 100).collect();
            assert!(new_sent.windows(2).all(|w| w[0] < w[1]), "out of order");
            sent.extend(new_sent);
            sent.sort_unstable();
            assert_eq!(sent, vec![1, 2], "lost or duplicated");
        });
    }

    /// Rule 2's merge (`Executor::move_here`): the actor that follows (ticket `a`) takes the
    /// other actor of its queue (ticket `b`) along, both tickets changed in one critical
    /// section of both locks, while another thread sends each of them two messages in turn
    /// (a 1, b 11, a 2, b 12) with the ticket protocol. None lands in the old queue after the
    /// merge, and each actor's arrive once, in order.
    #[test]
    fn merged_actors_get_no_message_in_their_old_queue() {
        use crate::runtime::loom::sync::atomic::AtomicUsize;
        loom::model(|| {
            let qs = Arc::new([WorkQueue::new(0, 0), WorkQueue::new(1, 0)]);
            let tickets = Arc::new([AtomicUsize::new(1), AtomicUsize::new(1)]);
            let mover = spawn_mover(&qs, &tickets);
            for v in [1, 11, 2, 12] {
                send_by_ticket(&qs, &tickets[usize::from(v > 10)], v);
            }
            let moved = mover.join().unwrap();
            let (old_rest, mut new_all) = gulp_both(&qs);
            new_all.retain(|&v| v != 100);
            if moved {
                assert!(old_rest.is_empty(), "a message went to the old queue");
            }
            // Per actor: what is left in the old queue comes first, then the new queue's.
            for actor in [[1, 2], [11, 12]] {
                let got: Vec<u64> = old_rest
                    .iter()
                    .chain(&new_all)
                    .copied()
                    .filter(|v| actor.contains(v))
                    .collect();
                assert_eq!(got, actor, "lost, duplicated or out of order");
            }
        });
    }

    /// A split (`Executor::split_current`) racing a sender: the worker holding the actor's
    /// queue (its batch holds the actor's message 0, the queue's shared part message 1) moves
    /// the actor to a vacant queue, taking both, while another thread sends messages 2 and 3
    /// with the ticket protocol. Every message arrives once, in order, and none lands in the
    /// old queue after the split.
    #[test]
    fn a_split_actor_keeps_its_mail_in_order() {
        use crate::runtime::loom::sync::atomic::AtomicUsize;
        loom::model(|| {
            let qs = Arc::new([WorkQueue::new(0, 0), WorkQueue::new(1, 0)]);
            let ticket = Arc::new(AtomicUsize::new(1));
            let mut batch = CopyQueue::new();
            batch.push(env(0));
            qs[1].lock().push(env(1));
            let splitter = {
                let (qs, ticket) = (qs.clone(), ticket.clone());
                thread::spawn(move || {
                    let old = qs[1].lock();
                    let Some(new) = qs[0]
                        .try_lock()
                        .filter(|g| g.is_vacant() && !qs[0].processed_locked(g))
                    else {
                        return (false, batch);
                    };
                    ticket.store(0, Ordering::Relaxed);
                    new.take_picked(&mut batch, |_| true);
                    old.move_picked(&new, |_| true);
                    (true, batch)
                })
            };
            for v in 2..=3 {
                loop {
                    let t = ticket.load(Ordering::Relaxed);
                    let g = qs[t].lock();
                    if ticket.load(Ordering::Relaxed) != t {
                        continue;
                    }
                    g.push(env(v));
                    break;
                }
            }
            let (split, mut batch) = splitter.join().unwrap();
            let mut local = CopyQueue::new();
            let (mut held, mut old_rest, mut new_all) = (Vec::new(), Vec::new(), Vec::new());
            drain(&mut batch, &mut held);
            if let Gulp::Got(_) = qs[1].gulp(&mut local) {
                drain(&mut local, &mut old_rest);
            }
            if let Gulp::Got(_) = qs[0].gulp(&mut local) {
                drain(&mut local, &mut new_all);
            }
            if split {
                assert!(held.is_empty() && old_rest.is_empty(), "mail left behind");
                assert_eq!(new_all, vec![0, 1, 2, 3], "lost, duplicated or reordered");
            } else {
                held.extend(old_rest);
                assert_eq!(held, vec![0, 1, 2, 3]);
                assert!(new_all.is_empty());
            }
        });
    }

    /// A sender moved into a held queue (`Executor::move_here`, placement rule 2 and its
    /// merge) keeps its order. Worker A runs actor S (queue 1): S sends message 1 to actor R
    /// of queue 0, through the lock or through A's outbox (kept, then flushed before the visit
    /// ends), and A's visit of queue 1 ends. Worker B meanwhile holds queue 0's batch, and a
    /// behaviour there sends to S: if queue 1 is empty and not processed, S moves into queue 0,
    /// and S, run from B's batch, sends message 2 to R, through B's local fast path if the
    /// move left it open, else through the lock. R must get 1 before 2. The local path stays
    /// open only while the held queue's shared part is empty at the move: without that check
    /// (message 1 pushed after B's gulp, S moved, 2 appended to the batch) it fails.
    #[test]
    fn a_sender_moved_into_a_held_queue_keeps_its_order() {
        use crate::runtime::loom::sync::atomic::AtomicUsize;
        const S_RUNS: u64 = 50;
        const HELD: u64 = 60;
        for through_outbox in [false, true] {
            loom::model(move || {
                let qs = Arc::new([WorkQueue::new(0, 1), WorkQueue::new(1, 0)]);
                let ticket = Arc::new(AtomicUsize::new(1));
                // B holds queue 0's batch (gulped before S sends anything).
                qs[0].lock().push(env(HELD));
                let mut batch = CopyQueue::new();
                assert!(matches!(qs[0].gulp(&mut batch), Gulp::Got(1)));
                // S has a message waiting in queue 1, for A.
                qs[1].lock().push(env(S_RUNS));
                let a = {
                    let qs = qs.clone();
                    thread::spawn(move || {
                        let mut local = CopyQueue::new();
                        if !matches!(qs[1].gulp(&mut local), Gulp::Got(_)) {
                            return;
                        }
                        let mut ran = Vec::new();
                        drain(&mut local, &mut ran);
                        // S's behaviour sends 1 to R (queue 0, which B processes).
                        if through_outbox {
                            let mut outbox = CopyQueue::new();
                            outbox.push(env(1));
                            // The flush, before the visit ends (`Executor::drain`).
                            qs[0].lock().append(&mut outbox);
                        } else {
                            qs[0].lock().push(env(1));
                        }
                        qs[1].done_processing();
                    })
                };
                // B runs its batch: a behaviour sends to S, which may move here.
                let mut r = Vec::new();
                let mut local_open = true;
                let moved = {
                    let old = qs[1].lock();
                    if old.len() == 0 && !qs[1].processed_locked(&old) {
                        qs[0].try_lock().map(|new| {
                            ticket.store(0, Ordering::Relaxed);
                            // The rule under test (`move_here`).
                            local_open = new.len() == 0;
                        })
                    } else {
                        None
                    }
                }
                .is_some();
                if moved {
                    // S runs from B's batch (its message went there, or to the shared part
                    // behind message 1 with the local path closed: either way after 1 if
                    // that is queued), and sends 2 to R.
                    if local_open {
                        batch.push(env(2));
                    } else {
                        qs[0].lock().push(env(2));
                    }
                }
                drain(&mut batch, &mut r);
                while let Gulp::Got(_) = qs[0].regulp(&mut batch) {
                    drain(&mut batch, &mut r);
                }
                qs[0].done_processing();
                a.join().unwrap();
                if let Gulp::Got(_) = qs[0].gulp(&mut batch) {
                    drain(&mut batch, &mut r);
                    qs[0].done_processing();
                }
                r.retain(|&v| v != HELD);
                if moved {
                    assert_eq!(r, vec![1, 2], "S's second message overtook its first");
                } else {
                    assert_eq!(r, vec![1]);
                }
            });
        }
    }

    #[test]
    fn two_gulpers_never_hold_one_queue_at_once() {
        loom::model(|| {
            let q = Arc::new(WorkQueue::new(0, 0));
            let busy = Arc::new(AtomicBool::new(false));
            q.lock().push(env(1));
            let gulp_once = |q: &WorkQueue, busy: &AtomicBool| {
                let mut local = CopyQueue::new();
                let mut got = Vec::new();
                if let Gulp::Got(_) = q.gulp(&mut local) {
                    assert!(
                        !busy.swap(true, Ordering::SeqCst),
                        "two batches of one queue"
                    );
                    drain(&mut local, &mut got);
                    busy.store(false, Ordering::SeqCst);
                    q.done_processing();
                }
                got
            };
            let t = {
                let (q, busy) = (q.clone(), busy.clone());
                thread::spawn(move || gulp_once(&q, &busy))
            };
            // A second message arrives while the other thread may hold the first batch.
            q.lock().push(env(2));
            let mine = gulp_once(&q, &busy);
            let theirs = t.join().unwrap();
            let rest = gulp_once(&q, &busy);
            let mut all: Vec<u64> = theirs.iter().chain(&mine).chain(&rest).copied().collect();
            all.sort_unstable();
            assert_eq!(all, vec![1, 2], "lost or duplicated");
        });
    }

    /// A deferred send (the outbox, `README.md`, "Sends into a backlog") racing the end of its
    /// actor. The sender pins the queue under its lock, then reads the actor's status and,
    /// if it is alive, keeps an envelope for the flush; the actor's worker ends it under the
    /// same lock, parking the reclaim envelope if the queue is pinned and queueing it
    /// otherwise; the flush queues what was kept, then unpins, which queues the parked
    /// reclaims. So a kept envelope is queued before the reclaim (its cell is still allocated
    /// when it runs), and the reclaim is queued exactly once. Queueing the reclaim whatever
    /// the pin fails it.
    #[test]
    fn a_deferred_envelope_is_queued_before_its_actors_reclaim() {
        use crate::runtime::loom::sync::atomic::AtomicBool;
        const RECLAIM: u64 = 99;
        loom::model(|| {
            let q = Arc::new(WorkQueue::new(0, 0));
            let alive = Arc::new(AtomicBool::new(true));
            let ender = {
                let (q, alive) = (q.clone(), alive.clone());
                thread::spawn(move || {
                    let g = q.lock();
                    alive.store(false, Ordering::Relaxed);
                    if g.pinned() {
                        g.park(env(RECLAIM));
                    } else {
                        g.push(env(RECLAIM));
                    }
                })
            };
            q.lock().pin();
            let mut outbox = CopyQueue::new();
            let kept = alive.load(Ordering::Relaxed);
            if kept {
                outbox.push(env(1));
            }
            {
                let g = q.lock();
                g.append(&mut outbox);
                g.unpin();
            }
            ender.join().unwrap();
            let mut local = CopyQueue::new();
            let mut got = Vec::new();
            if let Gulp::Got(_) = q.gulp(&mut local) {
                drain(&mut local, &mut got);
            }
            let want = if kept {
                vec![1, RECLAIM]
            } else {
                vec![RECLAIM]
            };
            assert_eq!(
                got, want,
                "a kept envelope behind the reclaim, or no reclaim"
            );
        });
    }

    /// A deferred send racing a move of its actor out of the pinned queue (placement): the
    /// mover changes the ticket only under the old queue's lock, and not while the queue is
    /// pinned; the sender reads the ticket after its pin. So an envelope kept for the queue
    /// the ticket named still names the actor's queue at the flush (no message lands in a
    /// queue the actor left). Moving whatever the pin fails it.
    #[test]
    fn a_pinned_queue_keeps_its_actors_until_the_flush() {
        use crate::runtime::loom::sync::atomic::AtomicUsize;
        loom::model(|| {
            let qs = Arc::new([WorkQueue::new(0, 0), WorkQueue::new(1, 1)]);
            let ticket = Arc::new(AtomicUsize::new(1));
            let mover = {
                let (qs, ticket) = (qs.clone(), ticket.clone());
                thread::spawn(move || {
                    let old = qs[1].lock();
                    if old.len() == 0 && !old.pinned() {
                        if let Some(_new) = qs[0].try_lock() {
                            ticket.store(0, Ordering::Relaxed);
                        }
                    }
                })
            };
            qs[1].lock().pin();
            let kept = ticket.load(Ordering::Relaxed) == 1;
            {
                let g = qs[1].lock();
                if kept {
                    assert_eq!(
                        ticket.load(Ordering::Relaxed),
                        1,
                        "the actor left the pinned queue before the flush"
                    );
                    g.push(env(1));
                }
                g.unpin();
            }
            mover.join().unwrap();
            // (The envelope queued is dropped with the queue.)
        });
    }
}
