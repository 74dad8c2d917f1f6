//! The copy queue (seed 002, "Copy Queue"): envelopes stored by value in a growable array.
//!
//! Invariants:
//! - elements `[head, len)` are live envelopes; `[0, head)` were moved out by `pop`;
//! - pushes append (amortised O(1), the array doubles like a `Vec`); pops advance `head` (O(1),
//!   no shifting), because the gulping pattern drains a queue without interleaved pushes from
//!   other threads (the only interleaved pushes are the draining worker's own, appended at the
//!   end, which keeps order);
//! - a drained queue is reset to empty in O(1) and keeps its array, so in steady state neither
//!   sends nor gulps allocate;
//! - reclamation: after a drained gulp, if the array is larger than the initial capacity and that
//!   gulp used less than half of it, the array gives back one slot (the seed's rule: shrinking
//!   only below half utilisation keeps the high-water mark from doubling).

use super::envelope::Envelope;
use super::report_panic;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Initial capacity of a copy queue (the seed's value).
pub(crate) const INITIAL_CAPACITY: usize = 10;

pub(crate) struct CopyQueue {
    buf: Vec<Envelope>,
    head: usize,
}

impl CopyQueue {
    pub(crate) fn new() -> Self {
        Self {
            buf: Vec::with_capacity(INITIAL_CAPACITY),
            head: 0,
        }
    }

    /// An empty queue that allocates on its first push (a per-actor mailbox: most actors
    /// never hold more than a few messages, and many never receive one).
    pub(crate) const fn empty() -> Self {
        Self {
            buf: Vec::new(),
            head: 0,
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, e: Envelope) {
        self.buf.push(e);
    }

    #[inline]
    pub(crate) fn pop(&mut self) -> Option<Envelope> {
        if self.head < self.buf.len() {
            // SAFETY: `head < len`, so the slot holds a live envelope (invariant 1); advancing
            // `head` past it marks it moved-out, so it is read exactly once.
            let e = unsafe { self.buf.as_ptr().add(self.head).read() };
            self.head += 1;
            Some(e)
        } else {
            None
        }
    }

    /// Live envelopes.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.buf.len() - self.head
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[cfg(all(test, not(loom)))]
    pub(crate) fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Resets a fully drained queue and applies the reclamation rule (once per use: a queue
    /// already reset and not used since is left alone, so a second reset cannot shrink it).
    #[inline]
    pub(crate) fn reset_drained(&mut self) {
        debug_assert!(self.is_empty());
        if self.head == 0 {
            return;
        }
        let used = self.buf.len();
        // SAFETY: every element in [0, len) was moved out by `pop` (the queue is drained), so
        // forgetting them leaks nothing and drops nothing twice.
        unsafe { self.buf.set_len(0) };
        self.head = 0;
        let cap = self.buf.capacity();
        if cap > INITIAL_CAPACITY && used < cap / 2 {
            self.buf.shrink_to(cap - 1);
        }
    }

    /// Disposes of every live envelope without running it (shutdown). A destructor that
    /// panics is reported and the rest are still disposed of.
    pub(crate) fn discard_all(&mut self) {
        while let Some(e) = self.pop() {
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| e.discard())) {
                report_panic("a destructor run at shutdown", &*p);
            }
        }
        self.reset_drained();
    }
}

impl Drop for CopyQueue {
    fn drop(&mut self) {
        self.discard_all();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::executor::envelope::{EnvelopeVTable, Payload};
    use std::sync::atomic::{AtomicUsize, Ordering};

    static DISCARDED: AtomicUsize = AtomicUsize::new(0);

    unsafe fn run(_: *const (), _: *mut Payload, _: crate::executor::WorkerRef<'_>) {
        unreachable!()
    }
    unsafe fn discard(_: *const (), p: *mut Payload) {
        // SAFETY: the tests pack u64 payloads.
        let v = unsafe { Payload::unpack::<u64>(p) };
        DISCARDED.fetch_add(v as usize, Ordering::Relaxed);
    }
    static VT: EnvelopeVTable = EnvelopeVTable { run, discard };

    fn env(v: u64) -> Envelope {
        Envelope::new(std::ptr::null(), &VT, Payload::pack(v))
    }

    #[test]
    fn fifo_and_reuse_without_growth() {
        let mut q = CopyQueue::new();
        for round in 0..3u64 {
            for i in 0..8 {
                q.push(env(round * 100 + i));
            }
            for i in 0..8 {
                // SAFETY: pushed as u64.
                let v = unsafe { q.pop().unwrap().into_message::<u64>() };
                assert_eq!(v, round * 100 + i);
            }
            assert!(q.pop().is_none());
            q.reset_drained();
            assert_eq!(q.capacity(), INITIAL_CAPACITY);
        }
    }

    #[test]
    fn reclaims_one_slot_per_gulp_only_below_half() {
        let mut q = CopyQueue::new();
        for i in 0..40 {
            q.push(env(i));
        }
        let grown = q.capacity();
        assert!(grown >= 40);
        while let Some(e) = q.pop() {
            e.discard();
        }
        q.reset_drained(); // used 40 of >= 40: at least half, no shrink
        assert_eq!(q.capacity(), grown);
        // Now gulps of 3: each one below half utilisation gives back one slot...
        for _ in 0..5 {
            for i in 0..3 {
                q.push(env(i));
            }
            while let Some(e) = q.pop() {
                e.discard();
            }
            q.reset_drained();
        }
        assert!(q.capacity() < grown && q.capacity() >= grown - 5);
        // ...but never below the initial capacity.
        for _ in 0..200 {
            q.push(env(0));
            q.pop().unwrap().discard();
            q.reset_drained();
        }
        assert_eq!(q.capacity(), INITIAL_CAPACITY);
    }

    #[test]
    fn drop_discards_live_envelopes() {
        DISCARDED.store(0, Ordering::Relaxed);
        let mut q = CopyQueue::new();
        q.push(env(5));
        q.push(env(7));
        q.pop().unwrap().discard();
        drop(q);
        assert_eq!(DISCARDED.load(Ordering::Relaxed), 12);
    }
}
