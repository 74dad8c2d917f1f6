//! The copy queue (the Cforall actor system: Colby Parsons, MMath thesis, Waterloo 2023, "Copy
//! Queue"): envelopes stored by value in a growable array.
//!
//! Invariants:
//! - elements `[head, len)` are live envelopes; `[0, head)` were moved out by `pop`;
//! - pushes append (amortised O(1), the array doubles like a `Vec`); pops advance `head` (O(1),
//!   no shifting), because the gulping pattern drains a queue without interleaved pushes from
//!   other threads (the only interleaved pushes are the draining worker's own, appended at the
//!   end, which keeps order);
//! - a drained queue is reset to empty in O(1) and keeps its array, so in steady state neither
//!   sends nor gulps allocate.
//!
//! Reclamation. The Cforall actor thesis gives back one slot per gulp when a gulp used less than
//! half the array; that reallocates on every shrinking gulp and returns 48 bytes at a time, so a
//! burst's memory never really comes back. Here a drained gulp that used less than a quarter of the
//! array counts as *quiet*; after [`QUIET_GULPS`] quiet gulps in a row the array is halved (never
//! below [`INITIAL_CAPACITY`]). An array in steady use (at least a quarter full at every gulp) is
//! never shrunk, so steady state allocates nothing, and shrinking never undoes the last growth (the
//! array doubled when it overflowed, so the use that made it grow fills over half of it); an array
//! left over from a burst of `b` envelopes is back to its initial size after at most
//! `QUIET_GULPS × log2(b / 10)` quiet gulps. Queues that go quiet altogether (no more gulps) are
//! released by their owners when they idle (a message-centric worker idle for
//! `runtime::worker::RELEASE_AFTER`; a mailbox job that parks, for arrays of more than 16,384
//! slots): [`CopyQueue::release_if_larger`], or [`CopyQueue::take_if_larger`] to free the array
//! after a lock is released.
//!
//! Arrays that circulate wait longer: [`QUIET_GULPS_CIRCULATING`] (64) quiet gulps, counted
//! by [`CopyQueue::reset_drained_after`]. The message-centric executor's arrays circulate
//! between the queues of a worker (a gulp swaps the queue's array for the worker's drained
//! one), so an array that a burst grew serves quieter queues in between; shrunk sooner, a
//! scatter-gather workload regrows its arrays over and over, copying under queue locks its
//! senders spin on. A mailbox's pair of arrays stays with its actor, and keeps 8: waiting
//! longer leaves the arrays of an actor that keeps up with its producer a few messages at a
//! time large, which slows it.

use super::envelope::Envelope;
use super::report_panic;
use std::alloc::{self, Layout};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

/// Initial capacity of a copy queue (the Cforall actor thesis's value).
pub(crate) const INITIAL_CAPACITY: usize = 10;

/// Consecutive quiet gulps (each using under a quarter of the array) before it is halved.
pub(crate) const QUIET_GULPS: u16 = 8;

/// [`QUIET_GULPS`] for an array that circulates between queues (the message-centric
/// executor's batch: see the module docs).
pub(crate) const QUIET_GULPS_CIRCULATING: u16 = 64;

/// The array of a copy queue: a `Vec<Envelope>`'s pointer, capacity and length, the last two
/// as `u32` so that a queue is 24 bytes (a mailbox holds two, and fits glibc's fastbins only
/// then: `core/mailbox.rs`). It never drops the envelopes it holds (the queue disposes of
/// them): dropping it only frees the array.
///
/// Invariants: `cap == 0` and `ptr` dangling, or `ptr` is an allocation of
/// `Layout::array::<Envelope>(cap)`; `len <= cap`; slots `[0, len)` were written (the queue
/// says which of them still hold live envelopes).
struct Slots {
    ptr: NonNull<Envelope>,
    cap: u32,
    len: u32,
}

impl Slots {
    const fn new() -> Self {
        Self {
            ptr: NonNull::dangling(),
            cap: 0,
            len: 0,
        }
    }

    fn with_capacity(cap: usize) -> Self {
        let mut s = Self::new();
        s.resize(cap);
        s
    }

    #[inline]
    fn len(&self) -> usize {
        self.len as usize
    }

    #[inline]
    fn capacity(&self) -> usize {
        self.cap as usize
    }

    #[inline]
    fn as_ptr(&self) -> *const Envelope {
        self.ptr.as_ptr()
    }

    #[inline]
    fn as_mut_ptr(&mut self) -> *mut Envelope {
        self.ptr.as_ptr()
    }

    /// # Safety
    /// `len <= cap`, and slots `[0, len)` were written.
    #[inline]
    unsafe fn set_len(&mut self, len: usize) {
        debug_assert!(len <= self.capacity());
        self.len = len as u32;
    }

    /// The written slots from `from` on.
    fn slice_from(&self, from: usize) -> &[Envelope] {
        let len = self.len();
        assert!(from <= len);
        // SAFETY: slots `[0, len)` were written (invariant) and `from <= len`; for an empty
        // range the dangling pointer is aligned and non-null, as a slice needs.
        unsafe { std::slice::from_raw_parts(self.as_ptr().add(from), len - from) }
    }

    // (Always inlined, as `CopyQueue::push`: a call takes the envelope through memory, and
    // a send that builds it in registers stalls on the store forwarding.)
    #[inline(always)]
    fn push(&mut self, e: Envelope) {
        if self.len == self.cap {
            self.grow();
        }
        // SAFETY: `len < cap` now, so the slot lies inside the allocation.
        unsafe { self.ptr.as_ptr().add(self.len as usize).write(e) };
        self.len += 1;
    }

    /// Doubles the array; 2 slots at first (96 bytes: an actor's start and first message fit,
    /// and the array stays within glibc's fastbins, whose frees from another thread take no
    /// lock: a `Vec`'s first 4 slots, 192 bytes, made spawn-heavy work take the arena lock on
    /// most frees).
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        self.reserve(1);
    }

    /// Makes room for `more` slots past `len`, doubling from 2 slots (the one growth rule: a
    /// push's [`Self::grow`] is `reserve(1)`, so a bulk append leaves the array the size pushes
    /// would have).
    #[inline]
    fn reserve(&mut self, more: usize) {
        let need = self.len() + more;
        if need > self.capacity() {
            let mut cap = self.capacity().max(2);
            while cap < need {
                cap *= 2;
            }
            self.resize(cap);
        }
    }

    /// Shrinks the array to `min` slots, or to `len` if that is more (as `Vec::shrink_to`).
    fn shrink_to(&mut self, min: usize) {
        let to = min.max(self.len());
        if to < self.capacity() {
            self.resize(to);
        }
    }

    /// Reallocates the array to `cap` slots (at least `len`), keeping the written ones.
    fn resize(&mut self, cap: usize) {
        debug_assert!(cap >= self.len());
        let new_cap =
            u32::try_from(cap).expect("a copy queue holds fewer than 2^32 envelopes (192 GiB)");
        let new = Layout::array::<Envelope>(cap).expect("a copy queue's array fits in memory");
        let ptr = if self.cap == 0 {
            // SAFETY: `new` has a non-zero size (`cap > 0` below, envelopes are not empty).
            (cap > 0).then(|| unsafe { alloc::alloc(new) })
        } else {
            let old = Layout::array::<Envelope>(self.capacity()).expect("as allocated");
            if cap == 0 {
                // SAFETY: `ptr` was allocated with `old` (invariant); no slot is kept (`len` is
                // 0 since `cap >= len`).
                unsafe { alloc::dealloc(self.ptr.as_ptr().cast(), old) };
                None
            } else {
                // SAFETY: `ptr` was allocated with `old` (invariant); the new size is non-zero
                // and fits `isize` (`Layout::array` checked it). The first `len` slots are kept.
                Some(unsafe { alloc::realloc(self.ptr.as_ptr().cast(), old, new.size()) })
            }
        };
        self.ptr = match ptr {
            None => NonNull::dangling(),
            Some(p) => match NonNull::new(p.cast::<Envelope>()) {
                Some(p) => p,
                None => alloc::handle_alloc_error(new),
            },
        };
        self.cap = new_cap;
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        // Frees the array only (see the type's docs): whatever it still holds was moved out or
        // disposed of by the queue, or is leaked (never dropped twice).
        if self.cap != 0 {
            // SAFETY: `ptr` was allocated with this layout (invariant), whose size and
            // alignment `Layout::array` checked then.
            unsafe {
                let layout = Layout::from_size_align_unchecked(
                    self.capacity() * std::mem::size_of::<Envelope>(),
                    std::mem::align_of::<Envelope>(),
                );
                alloc::dealloc(self.ptr.as_ptr().cast(), layout);
            }
        }
    }
}

// SAFETY: `Slots` owns its array like a `Vec<Envelope>` (and `Envelope: Send`).
unsafe impl Send for Slots {}

pub(crate) struct CopyQueue {
    buf: Slots,
    /// Index of the first live envelope (a batch never holds 2^32 envelopes: 192 GiB).
    head: u32,
    /// Consecutive quiet gulps so far (at most `QUIET_GULPS`).
    quiet: u16,
}

impl CopyQueue {
    pub(crate) fn new() -> Self {
        Self {
            buf: Slots::with_capacity(INITIAL_CAPACITY),
            head: 0,
            quiet: 0,
        }
    }

    /// An empty queue that allocates on its first push (a per-actor mailbox: most actors
    /// never hold more than a few messages, and many never receive one).
    pub(crate) const fn empty() -> Self {
        Self {
            buf: Slots::new(),
            head: 0,
            quiet: 0,
        }
    }

    #[inline(always)]
    pub(crate) fn push(&mut self, e: Envelope) {
        self.buf.push(e);
    }

    #[inline]
    pub(crate) fn pop(&mut self) -> Option<Envelope> {
        let head = self.head as usize;
        if head < self.buf.len() {
            // SAFETY: `head < len`, so the slot holds a live envelope (invariant 1); advancing
            // `head` past it marks it moved-out, so it is read exactly once.
            let e = unsafe { self.buf.as_ptr().add(head).read() };
            self.head += 1;
            Some(e)
        } else {
            None
        }
    }

    /// Live envelopes that carry messages (not the executor's own start, install or reclaim
    /// envelopes): a pass over the queue, for statistics.
    pub(crate) fn messages(&self) -> usize {
        self.buf
            .slice_from(self.head as usize)
            .iter()
            .filter(|e| e.is_message())
            .count()
    }

    /// Calls `f` with the target of every live envelope that carries a message, front to back.
    pub(crate) fn for_each_message_target(&self, mut f: impl FnMut(*const ())) {
        for e in self.buf.slice_from(self.head as usize) {
            if e.is_message() {
                f(e.target());
            }
        }
    }

    /// The target of the envelope `pop` returned last, while the queue has not been reset
    /// since: during a drain, the envelope running now. `None` if nothing was popped.
    pub(crate) fn last_taken_target(&self) -> Option<*const ()> {
        let head = self.head as usize;
        // SAFETY: slot `head - 1` is below `len`, inside the array's initialised part: it held
        // an envelope that `pop` read out bitwise, which leaves its bytes in place until a
        // reset (pushes and `append_from`'s copy write at `len` and beyond; a growth
        // reallocates the whole block, keeping every byte; `move_picked` writes from `head` on;
        // `append_from`'s compaction sets `head` to 0). Only its target field is read, through a
        // raw pointer: no reference to the moved-out envelope is made.
        (head > 0).then(|| unsafe { Envelope::target_at(self.buf.as_ptr().add(head - 1)) })
    }

    /// The targets of the live envelopes, oldest first.
    pub(crate) fn targets(&self) -> impl Iterator<Item = *const ()> + '_ {
        self.buf
            .slice_from(self.head as usize)
            .iter()
            .map(Envelope::target)
    }

    /// Moves the live envelopes whose target satisfies `pick` to the end of `to`, in order;
    /// the others stay, in order, in place from `head` on (the slots before `head`, and so
    /// [`Self::last_taken_target`], are left as they were). Returns
    /// how many moved. `pick` must not panic.
    pub(crate) fn move_picked(
        &mut self,
        to: &mut CopyQueue,
        mut pick: impl FnMut(*const ()) -> bool,
    ) -> usize {
        let (head, len) = (self.head as usize, self.buf.len());
        let mut kept = head;
        // SAFETY: `[head, len)` are the live envelopes (invariant 1). The length is set to
        // `head` first, so that nothing is dropped twice whatever happens; each live envelope
        // is then read exactly once, and either pushed to `to` or written back at `kept`,
        // which never passes the slot being read (`kept <= r`), so no live envelope is
        // overwritten before it is read. Afterwards `[head, kept)` are the kept ones, in order.
        unsafe {
            self.buf.set_len(head);
            let p = self.buf.as_mut_ptr();
            for r in head..len {
                let e = p.add(r).read();
                if pick(e.target()) {
                    to.buf.push(e);
                } else {
                    p.add(kept).write(e);
                    kept += 1;
                }
            }
            self.buf.set_len(kept);
        }
        len - kept
    }

    /// Live envelopes.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.buf.len() - self.head as usize
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Envelope slots allocated.
    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Appends every live envelope of `other` behind this queue's, in order, leaving `other`
    /// drained (a worker handing back the unprocessed rest of a batch: `other` holds what
    /// was sent meanwhile, which comes after the rest).
    /// Before appending, the live part is moved to the front of the array when that costs no
    /// more than the slots it frees (`len <= head`: amortised O(1) per envelope consumed), so a
    /// batch handed back again and again does not creep towards the end of a growing array.
    pub(crate) fn append_from(&mut self, other: &mut CopyQueue) {
        let head = self.head as usize;
        let live = self.len();
        if head > 0 && live <= head {
            // SAFETY: `[head, head + live)` are the live envelopes; they are moved (bitwise,
            // non-overlapping since `live <= head`) to `[0, live)`, whose old contents were moved
            // out by `pop`; afterwards exactly `[0, live)` is live, as `set_len` and `head` say.
            unsafe {
                let p = self.buf.as_mut_ptr();
                std::ptr::copy_nonoverlapping(p.add(head), p, live);
                self.buf.set_len(live);
            }
            self.head = 0;
        }
        // One copy of the whole live part, not a pop and a push per envelope: a flush appends
        // under the target queue's lock, which the queue's owner and its senders wait for.
        let (from, n) = (other.head as usize, other.len());
        if n > 0 {
            self.buf.reserve(n);
            let len = self.buf.len();
            // The envelopes move bitwise: `set_len` makes them live here, and advancing
            // `other.head` past them marks them moved out there, so each is live exactly once.
            // SAFETY: `other`'s `[from, from + n)` are its live envelopes (invariant 1);
            // `reserve` made this array's `[len, len + n)` allocated and unused; the arrays
            // are distinct allocations (`&mut` to both), so the ranges do not overlap.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    other.buf.as_ptr().add(from),
                    self.buf.as_mut_ptr().add(len),
                    n,
                );
                self.buf.set_len(len + n);
            }
            other.head += n as u32;
        }
        other.reset_drained();
    }

    /// Resets a fully drained queue and applies the reclamation rule (once per use: a queue
    /// already reset and not used since is left alone, so a second reset counts no gulp).
    #[inline]
    pub(crate) fn reset_drained(&mut self) {
        self.reset_drained_after(QUIET_GULPS);
    }

    /// [`Self::reset_drained`], the array halved after `quiet_gulps` quiet gulps in a row.
    #[inline]
    pub(crate) fn reset_drained_after(&mut self, quiet_gulps: u16) {
        debug_assert!(self.is_empty());
        let used = self.buf.len();
        if used == 0 {
            return;
        }
        // SAFETY: every element in [0, len) was moved out by `pop` (the queue is drained), so
        // forgetting them leaks nothing and drops nothing twice.
        unsafe { self.buf.set_len(0) };
        self.head = 0;
        let cap = self.buf.capacity();
        if cap > INITIAL_CAPACITY && used < cap / 4 {
            self.quiet += 1;
            if self.quiet >= quiet_gulps {
                self.quiet = 0;
                self.buf.shrink_to((cap / 2).max(INITIAL_CAPACITY));
            }
        } else {
            self.quiet = 0;
        }
    }

    /// An empty queue whose array holds more than `keep` slots gives it back: shrunk to
    /// `keep` slots (`keep == 0`: no array at all). Returns whether it shrank.
    pub(crate) fn release_if_larger(&mut self, keep: usize) -> bool {
        if !self.is_empty() || self.buf.capacity() <= keep {
            return false;
        }
        self.reset_drained();
        self.buf.shrink_to(keep);
        self.quiet = 0;
        true
    }

    /// An empty queue whose array holds more than `keep` slots hands it over (to be freed
    /// where no lock is held) and is left with none.
    pub(crate) fn take_if_larger(&mut self, keep: usize) -> Option<CopyQueue> {
        (self.is_empty() && self.buf.capacity() > keep)
            .then(|| std::mem::replace(self, CopyQueue::empty()))
    }

    /// Disposes of every live envelope without running it (shutdown). A destructor that
    /// panics is reported and the rest are still disposed of.
    pub(crate) fn discard_all(&mut self) {
        while let Some(e) = self.pop() {
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| e.discard())) {
                report_panic("a destructor run at shutdown", &*p);
                super::drop_payload(p);
            }
        }
        self.reset_drained();
    }
}

impl Drop for CopyQueue {
    fn drop(&mut self) {
        // (An empty queue, the common case, only frees its array: a mailbox drops two.)
        if !self.is_empty() {
            self.discard_all();
        }
    }
}

#[cfg(all(test, not(loom)))]
#[path = "copy_queue_tests.rs"]
mod tests;
