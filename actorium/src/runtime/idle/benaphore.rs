//! The three-state flag in front of a worker's [`Parker`] ("Reducing Latency" in the Cforall
//! runtime: Thierry Delisle, PhD thesis, Waterloo 2022, chapter "Scheduling in practice").
//!
//! States: `SEARCH` (the worker announced itself idle and is searching for work), `SLEEP` (it
//! found none and is blocked, or about to block, in the parker), `AWAKE` (it is running, or a
//! notifier already told it to). Transitions:
//!
//! - the idle worker: any → `SEARCH` ([`Benaphore::search`]); `SEARCH` → `SLEEP` and block
//!   ([`Benaphore::sleep`]); `SEARCH` → `AWAKE` when its search found work ([`Benaphore::awake`]);
//! - a notifier: any → `AWAKE` ([`Benaphore::wake`]); it makes the `write` system call only when
//!   it took the state from `SLEEP`.
//!
//! So a notify that lands while the worker is still searching costs no system call on either side,
//! and each `SLEEP` → `AWAKE` transition pairs exactly one `unpark` with one `park`.
//!
//! A sleep may also be bounded ([`Benaphore::sleep_timeout`], the message-centric executor's
//! rescue of work stuck behind a long behaviour): on a time-out the worker itself takes
//! `SLEEP` → `AWAKE` with a compare-exchange, and when that fails a notifier made the
//! transition and its `unpark` is owed, so the worker parks once more to take it.

use super::parker::Parker;
use crate::runtime::loom::sync::atomic::{AtomicU8, Ordering};
use std::io;

pub(crate) const SEARCH: u8 = 0;
pub(crate) const SLEEP: u8 = 1;
pub(crate) const AWAKE: u8 = 2;

#[derive(Debug)]
pub(crate) struct Benaphore {
    state: AtomicU8,
    parker: Parker,
}

impl Benaphore {
    /// A benaphore whose kernel resource is made by [`Self::open`], before its worker first
    /// runs (worker rows are made for the most workers a pool may have).
    pub(crate) fn unopened() -> Self {
        Self {
            state: AtomicU8::new(AWAKE),
            parker: Parker::unopened(),
        }
    }

    #[cfg(all(test, loom))]
    pub(crate) fn new() -> io::Result<Self> {
        let b = Self::unopened();
        b.open()?;
        Ok(b)
    }

    /// Makes the parker's kernel resource (an event fd on Linux), unless it exists.
    pub(crate) fn open(&self) -> io::Result<()> {
        self.parker.open()
    }

    /// Step one of the idle side of the handshake: "I am idle and about to search".
    /// SeqCst orders this store before the loads of the search that follows.
    #[inline]
    pub(crate) fn search(&self) {
        self.state.swap(SEARCH, Ordering::SeqCst);
    }

    /// The search found work: back to running. A notifier may have beaten us to it.
    #[inline]
    pub(crate) fn awake(&self) {
        self.state.swap(AWAKE, Ordering::SeqCst);
    }

    /// The search found nothing: commit to sleep, unless a notifier already set `AWAKE`.
    /// Returns with the state `AWAKE`: the notifier that woke us wrote it.
    pub(crate) fn sleep(&self) {
        // A compare-exchange rather than a swap: if a notifier already wrote AWAKE it saw SEARCH
        // and made no system call, so we must neither block nor overwrite its AWAKE (a SLEEP
        // written here would let a second notifier `unpark` a parker nobody reads).
        if self
            .state
            .compare_exchange(SEARCH, SLEEP, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            self.parker.park();
        }
    }

    /// [`Self::sleep`] for at most `limit`. On a time-out the worker takes itself back from
    /// `SLEEP` to `AWAKE`; if a notifier got there first (it swapped in `AWAKE` and owes the
    /// parker one `unpark`), it parks once more to take that token, which is on its way, so
    /// that every `SLEEP` → `AWAKE` transition by a notifier is still paired with one `park`.
    /// Returns whether a notifier woke the worker (false: the time ran out).
    pub(crate) fn sleep_timeout(&self, limit: std::time::Duration) -> bool {
        if self
            .state
            .compare_exchange(SEARCH, SLEEP, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            return true;
        }
        if self.parker.park_timeout(limit) {
            return true;
        }
        if self
            .state
            .compare_exchange(SLEEP, AWAKE, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return false;
        }
        self.parker.park();
        true
    }

    /// Whether an `unpark` is waiting for a `park` (the loom models check none is left).
    #[cfg(all(test, loom))]
    pub(crate) fn token_pending(&self) -> bool {
        self.parker.token_pending()
    }

    /// Releases the parker's resources (the pool shut down and this worker has exited).
    pub(crate) fn close(&self) {
        self.parker.close();
    }

    /// Cheap pre-check for notifiers: a worker that is running needs no notification.
    #[inline]
    pub(crate) fn is_awake(&self) -> bool {
        self.state.load(Ordering::Relaxed) == AWAKE
    }

    /// Notifier side: make the worker run again. Returns whether a system call was made.
    #[inline]
    pub(crate) fn wake(&self) -> bool {
        if self.state.swap(AWAKE, Ordering::SeqCst) == SLEEP {
            self.parker.unpark();
            true
        } else {
            false
        }
    }
}
