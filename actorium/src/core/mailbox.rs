//! A per-actor mailbox's storage (seed 000: "each actor owns a mailbox"): a spinlock over the
//! *inbox* (a [`CopyQueue`] of envelopes, so a send allocates nothing) and two flags, plus a
//! second copy queue, the *batch*, owned by whichever thread runs the actor's job. The
//! protocol that uses it — send, job, park, retire — is the mailbox executor's
//! (`executor/mailbox`, whose README argues why nothing is lost or run twice).
//!
//! Invariants (upheld by that protocol):
//! - `inbox`, `scheduled` and `sys_ref` are only accessed under `lock`;
//! - `scheduled` is true exactly while a job for the actor exists;
//! - `sys_ref`: the system's reference to the cell is held;
//! - the batch is touched only by the thread running the actor's job (at most one exists), or
//!   by shutdown after every thread has stopped.

use super::copy_queue::CopyQueue;
use crate::runtime::loom::UnsafeCell;
use crate::runtime::signal::{Signal, FINISH};
use crate::runtime::spin::{SpinGuard, SpinLock};
use std::sync::Arc;

/// What the mailbox lock guards.
pub(crate) struct Guarded {
    pub(crate) inbox: CopyQueue,
    pub(crate) scheduled: bool,
    pub(crate) sys_ref: bool,
}

/// The senders' part (lock, inbox) fills the first cache line; the batch, whose head the
/// running job writes at every message, is on the second. Sharing a line, they made every send
/// to a busy actor miss (measured: a producer/consumer pair 3-10x slower, depending on where
/// the allocator happened to put the mailbox).
#[repr(C, align(64))]
pub(crate) struct Mailbox {
    lock: SpinLock,
    guarded: UnsafeCell<Guarded>,
    /// A detached actor's thread waits on this for its jobs.
    signal: Option<Arc<Signal>>,
    batch: BatchLine,
}

/// The batch, on a cache line of its own.
#[repr(align(64))]
struct BatchLine(UnsafeCell<CopyQueue>);

// SAFETY: `guarded` is only accessed under `lock`; `batch` only by the thread running the
// actor's job (at most one exists: module invariants) or by shutdown after all threads stopped.
unsafe impl Sync for Mailbox {}
// SAFETY: as above.
unsafe impl Send for Mailbox {}

/// A mailbox, locked.
pub(crate) struct Locked<'a> {
    mb: &'a Mailbox,
    _guard: SpinGuard<'a>,
}

impl Locked<'_> {
    /// Runs `f` on the guarded part.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut Guarded) -> R) -> R {
        // SAFETY: the lock is held, so no other thread touches `guarded`, and the borrow ends
        // with `f`.
        self.mb.guarded.with_mut(|g| f(unsafe { &mut *g }))
    }
}

impl Drop for Mailbox {
    fn drop(&mut self) {
        // The cell is gone: a detached thread waiting for a respawn can end.
        if let Some(s) = &self.signal {
            s.raise(FINISH);
        }
    }
}

impl Mailbox {
    /// A mailbox for a new actor: scheduled (its start job is made by the spawn), holding the
    /// system reference.
    pub(crate) fn new(signal: Option<Arc<Signal>>) -> Self {
        Self {
            lock: SpinLock::new(),
            guarded: UnsafeCell::new(Guarded {
                inbox: CopyQueue::empty(),
                scheduled: true,
                sys_ref: true,
            }),
            batch: BatchLine(UnsafeCell::new(CopyQueue::empty())),
            signal,
        }
    }

    #[inline]
    pub(crate) fn lock(&self) -> Locked<'_> {
        Locked {
            mb: self,
            _guard: self.lock.lock(),
        }
    }

    /// The batch.
    ///
    /// # Safety
    /// The caller runs the actor's job (or all threads have stopped), and no other reference
    /// to the batch is alive.
    #[allow(clippy::mut_from_ref)]
    #[inline]
    pub(crate) unsafe fn batch(&self) -> &mut CopyQueue {
        // SAFETY: caller contract.
        self.batch.0.with_mut(|b| unsafe { &mut *b })
    }

    /// The detached thread's signal, if the actor is detached.
    pub(crate) fn signal(&self) -> Option<&Arc<Signal>> {
        self.signal.as_ref()
    }
}
