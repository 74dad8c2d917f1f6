//! A one-shot reply slot: one sender puts at most one value, one receiver takes it, waiting as
//! a blocked thread or as a future. The transport of request/reply (`actor/ask.rs`).
//!
//! One atomic state word and two cells:
//! - `value`: written by the sender before it sets `VALUE`; read by the receiver after it saw
//!   `VALUE` (Acquire), or taken back by the sender if its own `fetch_or` shows the receiver
//!   `GONE`; dropped by the receiver's `GONE` if `VALUE` was already set.
//! - `waiter`: the receiver's thread or waker. Written by the receiver only while `WAITING` is
//!   clear and neither `VALUE` nor `CLOSED` is set (then nobody else reads it); read (never
//!   taken) by the sender after its `fetch_or` of `VALUE` or `CLOSED` found `WAITING` set. To
//!   replace it, the receiver first clears `WAITING` with a compare-exchange that fails if the
//!   sender completed meanwhile (and may be reading it).
//!
//! So each cell has one writer at a time, ordered by the state word: the sender's `fetch_or`
//! (AcqRel) publishes `value` and acquires `waiter`; the receiver's `fetch_or(WAITING)`
//! (AcqRel) publishes `waiter` and, if it finds `VALUE`/`CLOSED`, acquires `value`. A wake-up is
//! never lost: either the sender's `fetch_or` sees `WAITING` (and wakes the waiter), or the
//! receiver's `fetch_or(WAITING)` sees the completion (and does not wait). Checked by the loom
//! models in `oneshot_loom.rs`.

use super::loom::sync::atomic::{AtomicU8, Ordering};
use super::loom::thread::{self, Thread};
use super::loom::UnsafeCell;
use std::task::Waker;

/// The sender stored a value.
const VALUE: u8 = 1;
/// The sender went away without a value.
const CLOSED: u8 = 2;
/// The receiver's waiter is in `waiter`.
const WAITING: u8 = 4;
/// The receiver went away.
const GONE: u8 = 8;
/// Set with `CLOSED`: the sender was lost with the link to another node, not dropped.
const LOST: u8 = 16;
/// Set with `CLOSED`: the sender's actor (on another node) had ended.
const DEAD: u8 = 32;

/// How long a blocking receiver spins before it parks.
#[cfg(not(any(loom, shuttle)))]
const SPIN: std::time::Duration = std::time::Duration::from_micros(20);

/// Who to wake when the slot completes.
#[derive(Debug)]
pub(crate) enum Waiter {
    Thread(Thread),
    Waker(Waker),
}

impl Waiter {
    fn wake(&self) {
        match self {
            Waiter::Thread(t) => t.unpark(),
            Waiter::Waker(w) => w.wake_by_ref(),
        }
    }
}

/// What the receiver found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Taken<T> {
    /// The value.
    Value(T),
    /// The sender went away without one.
    Closed,
    /// Nothing yet.
    Empty,
}

/// The slot (shared by one sender and one receiver through an `Arc`).
#[derive(Debug)]
pub(crate) struct Slot<T> {
    state: AtomicU8,
    value: UnsafeCell<Option<T>>,
    waiter: UnsafeCell<Option<Waiter>>,
}

// SAFETY: the cells are accessed under the protocol of the module documentation (one writer at
// a time, ordered by `state`); the value moves between threads, so `T: Send`.
unsafe impl<T: Send> Sync for Slot<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for Slot<T> {}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Self {
            state: AtomicU8::new(0),
            value: UnsafeCell::new(None),
            waiter: UnsafeCell::new(None),
        }
    }
}

impl<T> Slot<T> {
    /// Sender: stores `v` and wakes the receiver. Gives `v` back if the receiver is gone.
    /// Called at most once, and never after [`Self::close`].
    pub(crate) fn send(&self, v: T) -> Result<(), T> {
        // SAFETY: before VALUE is set only the sender touches `value` (the receiver reads it
        // after seeing VALUE; its GONE path reads it only if VALUE was set).
        self.value.with_mut(|p| unsafe { *p = Some(v) });
        let prev = self.state.fetch_or(VALUE, Ordering::AcqRel);
        if prev & GONE != 0 {
            // SAFETY: the receiver set GONE before our VALUE, so its drop path saw no VALUE
            // and left `value` alone; it never reads it again.
            let v = self.value.with_mut(|p| unsafe { (*p).take() });
            return Err(v.expect("the value stored above"));
        }
        if prev & WAITING != 0 {
            super::context::note_handoff();
            self.wake();
        }
        Ok(())
    }

    /// Sender: goes away without a value (wakes the receiver).
    pub(crate) fn close(&self) {
        self.close_with(0);
    }

    /// Sender: goes away without a value because the link to the node that would have
    /// replied was lost ([`Self::lost`]).
    #[cfg_attr(not(feature = "remote"), allow(dead_code))]
    pub(crate) fn close_lost(&self) {
        self.close_with(LOST);
    }

    /// Sender: goes away without a value because the actor that would have replied (on
    /// another node) had ended ([`Self::dead`]).
    #[cfg_attr(not(feature = "remote"), allow(dead_code))]
    pub(crate) fn close_dead(&self) {
        self.close_with(DEAD);
    }

    /// Whether a `Closed` slot was closed by [`Self::close_lost`] (read after `take` saw it
    /// closed: the bit was set by the same read-modify-write as `CLOSED`).
    pub(crate) fn lost(&self) -> bool {
        self.state.load(Ordering::Acquire) & LOST != 0
    }

    /// Whether a `Closed` slot was closed by [`Self::close_dead`] (as [`Self::lost`]).
    pub(crate) fn dead(&self) -> bool {
        self.state.load(Ordering::Acquire) & DEAD != 0
    }

    fn close_with(&self, why: u8) {
        let prev = self.state.fetch_or(CLOSED | why, Ordering::AcqRel);
        // (A receiver that went away left its waiter behind: no need to wake it.)
        if prev & WAITING != 0 && prev & GONE == 0 {
            self.wake();
        }
    }

    fn wake(&self) {
        self.waiter.with(|p| {
            // SAFETY: our fetch_or (AcqRel) found WAITING: the receiver wrote `waiter` before
            // setting it (Release), and will not write it again: its compare-exchange that
            // clears WAITING fails now that VALUE or CLOSED is set. Concurrent reads are fine.
            let waiter = unsafe { &*p };
            if let Some(w) = waiter {
                w.wake();
            }
        });
    }

    /// Whether the slot completed (a value, or the sender gone): [`Self::take`] will not
    /// return `Empty`.
    pub(crate) fn completed(&self) -> bool {
        self.state.load(Ordering::Acquire) & (VALUE | CLOSED) != 0
    }

    /// Whether the receiver is gone (a reply would be dropped).
    pub(crate) fn receiver_gone(&self) -> bool {
        self.state.load(Ordering::Relaxed) & GONE != 0
    }

    /// Receiver: takes the value if the slot completed.
    pub(crate) fn take(&self) -> Taken<T> {
        let s = self.state.load(Ordering::Acquire);
        if s & VALUE != 0 {
            // SAFETY: VALUE was set (Acquire) after the sender wrote `value`; the sender no
            // longer touches it (GONE is not set: we are the receiver), and the receiver is us.
            match self.value.with_mut(|p| unsafe { (*p).take() }) {
                Some(v) => Taken::Value(v),
                None => Taken::Closed, // taken before: treated as done
            }
        } else if s & CLOSED != 0 {
            Taken::Closed
        } else {
            Taken::Empty
        }
    }

    /// Receiver: registers `w` to be woken at completion. Returns `false` if the slot completed
    /// meanwhile (call [`Self::take`] instead of waiting). `same` says whether an already
    /// registered waiter would do (then it is kept).
    pub(crate) fn register(
        &self,
        w: impl FnOnce() -> Waiter,
        same: impl Fn(&Waiter) -> bool,
    ) -> bool {
        let s = self.state.load(Ordering::Acquire);
        if s & (VALUE | CLOSED) != 0 {
            return false;
        }
        if s & WAITING != 0 {
            let kept = self.waiter.with(|p| {
                // SAFETY: WAITING is set and we are the receiver: only the sender may read
                // `waiter` concurrently, and reads may overlap.
                let waiter = unsafe { &*p };
                waiter.as_ref().is_some_and(&same)
            });
            if kept {
                return true;
            }
            // Take back the right to write it: fails if the sender completed meanwhile.
            if self
                .state
                .compare_exchange(s, s & !WAITING, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                return false;
            }
        }
        // SAFETY: WAITING is clear and no completion was seen: the sender reads `waiter` only
        // after a fetch_or that finds WAITING set, which our fetch_or below has not made yet.
        self.waiter.with_mut(|p| unsafe { *p = Some(w()) });
        let prev = self.state.fetch_or(WAITING, Ordering::AcqRel);
        prev & (VALUE | CLOSED) == 0
    }

    /// Receiver: spins up to [`SPIN`] for the value before parking: a reply from an actor on
    /// a running worker comes in about a microsecond, while parking costs a wake-up on a
    /// sleeping CPU (about 16 µs a round trip here; see the ask benchmark).
    #[cfg(not(any(loom, shuttle)))]
    fn spin(&self) -> Taken<T> {
        let t0 = std::time::Instant::now();
        let mut i = 0u32;
        loop {
            match self.take() {
                Taken::Empty => {}
                done => return done,
            }
            i = i.wrapping_add(1);
            if i % 16 == 0 && t0.elapsed() >= SPIN {
                return Taken::Empty;
            }
            if i % 64 == 0 {
                // Let a thread that shares our CPU (the replier, perhaps) run.
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }

    #[cfg(any(loom, shuttle))]
    fn spin(&self) -> Taken<T> {
        Taken::Empty
    }

    /// Receiver: blocks the calling thread until the slot completes.
    #[cfg(test)]
    pub(crate) fn wait(&self) -> Taken<T> {
        self.block(None, || false)
    }

    /// Receiver: `wait` until `deadline`; `Taken::Empty` if it passed first. (Under
    /// loom, which has no timed park, it waits as `wait`.)
    pub(crate) fn wait_until(&self, deadline: std::time::Instant) -> Taken<T> {
        self.block(Some(deadline), || false)
    }

    /// Receiver: `wait`, or until `deadline` if any, giving up (`Taken::Closed`, as if
    /// no value will come) once `give_up` holds: it is checked before each park, and after
    /// each wake-up, so whoever makes it hold then unparks the waiting thread.
    pub(crate) fn wait_or_give_up(
        &self,
        deadline: Option<std::time::Instant>,
        give_up: impl Fn() -> bool,
    ) -> Taken<T> {
        self.block(deadline, give_up)
    }

    /// Spins, then parks until the slot completes, `deadline` (if any) passes, or `give_up`
    /// holds.
    fn block(&self, deadline: Option<std::time::Instant>, give_up: impl Fn() -> bool) -> Taken<T> {
        match self.spin() {
            Taken::Empty => {}
            done => return done,
        }
        loop {
            match self.take() {
                Taken::Empty => {}
                done => return done,
            }
            let now = std::time::Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return Taken::Empty;
            }
            if give_up() {
                // (A value that came meanwhile is still taken.)
                return match self.take() {
                    Taken::Empty => Taken::Closed,
                    done => done,
                };
            }
            let me = thread::current();
            if self.register(
                || Waiter::Thread(me.clone()),
                |w| matches!(w, Waiter::Thread(t) if t.id() == me.id()),
            ) {
                #[cfg(not(any(loom, shuttle)))]
                match deadline {
                    Some(d) => std::thread::park_timeout(d - now),
                    None => thread::park(),
                }
                #[cfg(any(loom, shuttle))]
                thread::park();
            }
        }
    }

    /// Receiver: goes away (a value already stored is dropped here).
    pub(crate) fn drop_receiver(&self) {
        let prev = self.state.fetch_or(GONE, Ordering::AcqRel);
        if prev & VALUE != 0 {
            // SAFETY: VALUE was set before our GONE (acquired by the AcqRel): the sender is
            // done with `value`, and we are its only reader.
            drop(self.value.with_mut(|p| unsafe { (*p).take() }));
        }
    }
}

#[cfg(all(test, loom))]
#[path = "oneshot_loom.rs"]
mod loom_tests;

#[cfg(all(test, not(loom)))]
#[path = "oneshot_tests.rs"]
mod tests;
