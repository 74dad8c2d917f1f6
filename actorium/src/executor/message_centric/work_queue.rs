//! A work queue of the Cforall actor system (Colby Parsons, MMath thesis, Waterloo 2023, "CFA
//! Executor"): one of the M over-sharded message queues.
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
//!   written only by a thief while the queue is in no slot (`swap.rs`), or by a resize under
//!   the write lock, when no swap runs; so once a steal or a resize completes, owner and range
//!   agree;
//! - `being_processed` is set under the lock by the gulp and cleared by the worker with a Release
//!   store once the batch is done; the next gulp reads it with Acquire under the lock, which
//!   orders every effect of the previous batch before the next one;
//! - `pins` counts the workers whose outboxes may hold envelopes for this queue's actors
//!   (`README.md`, "Sends into a backlog"); while it is above zero no actor leaves the queue
//!   and reclaim envelopes (and requests to end an actor) wait in `parked`, which the unpin
//!   that brings it to zero queues behind the outbox's envelopes. Both are guarded by the lock.

use crate::core::actor_list::{ActorList, Link};
use crate::core::copy_queue::CopyQueue;
use crate::core::envelope::Envelope;
use crate::runtime::loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use crate::runtime::loom::UnsafeCell;
use crate::runtime::spinlock::{SpinGuard, SpinLock};
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
/// writes (the copy queue) on the first, the lock on the second (with the lock on the polled
/// line too, a hand-off between two workers takes longer).
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
    /// Workers holding envelopes for this queue's actors in their outboxes (outboxed sends,
    /// `README.md`, "Sends into a backlog"); guarded by `lock`. While it is above zero no
    /// actor leaves the queue (its ticket stays, so an outboxed envelope reaches the queue its
    /// actor is in) and no reclaim envelope or request to end an actor is queued (`parked`
    /// keeps them).
    pins: UnsafeCell<u32>,
    /// Reclaim envelopes of actors that ended while the queue was pinned, and requests to end
    /// an actor made meanwhile: queued by the flush that takes the last pin, behind every
    /// outboxed envelope. Guarded by `lock`.
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

    /// Whether an actor moved into this queue while a worker holds its batch may send through
    /// that worker's local fast path (`Executor::move_here`): only while the shared part is
    /// empty. What the actor sent before the move to this queue's actors is in the held batch
    /// or here, and its next messages must not run before those.
    #[inline]
    pub(crate) fn admits_moved_sender(&self) -> bool {
        self.len() == 0
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
    /// leaves the queue, and no reclaim envelope or request to end an actor is queued, until
    /// [`Self::unpin`].
    #[inline]
    pub(crate) fn pin(&self) {
        // SAFETY: the lock is held.
        self.q.pins.with_mut(|p| unsafe { *p += 1 });
    }

    /// An outbox's envelopes for this queue were queued (before this call): the pin taken by
    /// [`Self::pin`] goes. The last one queues the envelopes parked meanwhile (reclaims,
    /// requests to end), behind them. Returns whether it queued any.
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
    /// leave the queue now (a move or a split waits), and a reclaim envelope or a request to
    /// end an actor is parked.
    #[inline]
    pub(crate) fn pinned(&self) -> bool {
        // SAFETY: the lock is held.
        self.q.pins.with(|p| unsafe { *p > 0 })
    }

    /// Whether an envelope for the actor whose cell is `target` is parked here (its reclaim
    /// envelope: it ended while the queue was pinned; or a request to end it): an outbox may
    /// still hold mail for it.
    pub(crate) fn parks_for(&self, target: *const ()) -> bool {
        self.q.parked.with(|v| {
            // SAFETY: the lock is held.
            unsafe { (*v).iter().any(|e| e.target() == target) }
        })
    }

    /// Whether envelopes wait for the last unpin ([`Self::park`]).
    pub(crate) fn parks(&self) -> bool {
        // SAFETY: the lock is held.
        self.q.parked.with(|v| unsafe { !(*v).is_empty() })
    }

    /// Keeps an envelope that must come behind what the outboxes hold (the reclaim envelope
    /// of an actor that ended while the queue is pinned, a request to end an actor), for the
    /// last [`Self::unpin`] to queue.
    pub(crate) fn park(&self, env: Envelope) {
        debug_assert!(self.pinned());
        // SAFETY: the lock is held.
        self.q.parked.with_mut(|v| unsafe { (*v).push(env) });
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
