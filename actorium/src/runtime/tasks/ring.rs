//! The owner-private task deque: a ring buffer indexed by absolute positions.
//!
//! Invariants:
//! - the tasks are at positions `[bottom, end)`; position `p` lives in slot `p & mask`;
//! - the owner pushes and pops at `end` (LIFO); the front, `bottom`, advances only when the
//!   owner hands the oldest task to a thief (FIFO stealing);
//! - positions are never reused while a task may refer to one: `end` only falls back over popped
//!   tasks, and `bottom` only grows, so a position noted before a fork ([`Ring::end`]) tells
//!   later whether that task is still here (it is, exactly while `end` is past it);
//! - only the owning thread touches a ring (no atomics: thieves ask, see `handoff.rs`).
//!
//! Why not `VecDeque`: its wrap-around arithmetic and separate head and length cost a join
//! several instructions more (measured on `fib`: the whole join is about forty).

use super::JobRef;

/// A growable ring of job references.
pub(crate) struct Ring {
    buf: Box<[Option<JobRef>]>,
    mask: usize,
    bottom: usize,
    end: usize,
}

impl Ring {
    pub(crate) fn new() -> Self {
        Self::with_capacity(64)
    }

    fn with_capacity(cap: usize) -> Self {
        debug_assert!(cap.is_power_of_two());
        Self {
            buf: vec![None; cap].into_boxed_slice(),
            mask: cap - 1,
            bottom: 0,
            end: 0,
        }
    }

    /// Tasks held.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.end - self.bottom
    }

    /// The position the next push gets.
    #[inline]
    pub(crate) fn end(&self) -> usize {
        self.end
    }

    /// Pushes at the owner's end; returns the new length.
    #[inline]
    pub(crate) fn push(&mut self, job: JobRef) -> usize {
        if self.len() == self.buf.len() {
            self.grow();
        }
        self.buf[self.end & self.mask] = Some(job);
        self.end += 1;
        self.len()
    }

    /// Pops the owner's end.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<JobRef> {
        if self.end == self.bottom {
            return None;
        }
        self.end -= 1;
        self.buf[self.end & self.mask]
    }

    /// Takes the oldest task (for a thief).
    pub(crate) fn take_oldest(&mut self) -> Option<JobRef> {
        if self.end == self.bottom {
            return None;
        }
        let job = self.buf[self.bottom & self.mask];
        self.bottom += 1;
        job
    }

    #[cold]
    fn grow(&mut self) {
        let mut bigger = Self::with_capacity(self.buf.len() * 2);
        bigger.bottom = self.bottom;
        bigger.end = self.bottom;
        for p in self.bottom..self.end {
            bigger.buf[p & bigger.mask] = self.buf[p & self.mask];
            bigger.end += 1;
        }
        *self = bigger;
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::runtime::tasks::JobHeader;

    unsafe fn nothing(_: *const JobHeader) {}

    #[test]
    fn behaves_as_a_deque_with_stable_positions() {
        let headers: Vec<JobHeader> = (0..64).map(|_| JobHeader::new(nothing, 1)).collect();
        // SAFETY: the headers outlive the refs, which are never executed.
        let refs: Vec<JobRef> = headers.iter().map(|h| unsafe { JobRef::new(h) }).collect();
        let mut ring = Ring::new();
        let mut model = std::collections::VecDeque::new();
        let mut taken = 0usize;
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for step in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match x % 5 {
                // Pushes win, so the ring grows past its first capacity.
                0..=2 => {
                    let j = refs[step % refs.len()];
                    assert_eq!(ring.push(j), model.len() + 1);
                    model.push_back(j);
                }
                3 => assert_eq!(ring.pop(), model.pop_back()),
                _ => {
                    let got = ring.take_oldest();
                    assert_eq!(got, model.pop_front());
                    taken += usize::from(got.is_some());
                }
            }
            assert_eq!(ring.len(), model.len());
            assert_eq!(ring.end(), taken + model.len());
        }
        assert!(ring.buf.len() > 64, "the ring grew");
    }
}
