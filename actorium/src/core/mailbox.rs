//! A per-actor mailbox's storage (CAF's scheduler manual, the C++ Actor Framework manual's
//! section "Scheduler": "each actor owns a mailbox"): a spinlock over the *inbox* (a
//! [`CopyQueue`] of envelopes, so a send allocates nothing) and two flags, plus a second copy
//! queue, the *batch*, owned by whichever thread runs the actor's job. The protocol that uses
//! it — send, job, park, retire — is the mailbox executor's
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
use crate::runtime::spinlock::{SpinGuard, SpinLock};
use std::sync::Arc;

/// What the mailbox lock guards, borrowed from a locked mailbox ([`Locked::with`]).
pub(crate) struct Guarded<'a> {
    pub(crate) inbox: &'a mut CopyQueue,
    pub(crate) scheduled: &'a mut bool,
    pub(crate) sys_ref: &'a mut bool,
}

/// The guarded flags, stored next to the lock.
struct Flags {
    scheduled: bool,
    sys_ref: bool,
}

/// Layout: the senders' part (inbox, lock, flags: 27 bytes) first, then the cold `signal`,
/// then padding, then the batch, which the running job reads and writes at every message. No
/// 64-byte cache line of an allocation aligned to 16 bytes holds bytes of both (tested):
/// sharing one made every send to a busy actor miss. With the senders' part within 32 bytes
/// (a copy queue is 24), the batch starts 80 bytes in and a mailbox is 104 bytes, within
/// glibc's fastbins (requests up to 120 bytes): at 128 bytes, every free of a mailbox on a
/// worker other than its allocator's took the arena lock. (Aligning the mailbox to 64 bytes
/// instead takes the allocator's slow aligned path, which spawn-heavy workloads pay for.)
#[repr(C)]
pub(crate) struct Mailbox {
    inbox: UnsafeCell<CopyQueue>,
    lock: SpinLock,
    flags: UnsafeCell<Flags>,
    /// A detached actor's thread waits on this for its jobs.
    signal: Option<Arc<Signal>>,
    _pad: [u8; MAILBOX_PAD],
    batch: UnsafeCell<CopyQueue>,
}

/// Rounds `n` up to a multiple of `align`.
const fn round_up(n: usize, align: usize) -> usize {
    n.div_ceil(align) * align
}
/// Where the senders' part of a mailbox ends (`repr(C)`: computed from the fields' types).
const SENDERS_END: usize = round_up(
    round_up(
        std::mem::size_of::<UnsafeCell<CopyQueue>>(),
        std::mem::align_of::<SpinLock>(),
    ) + std::mem::size_of::<SpinLock>(),
    std::mem::align_of::<UnsafeCell<Flags>>(),
) + std::mem::size_of::<UnsafeCell<Flags>>();
/// The batch starts a cache line past the last 16-aligned line start holding senders' bytes.
const BATCH_AT: usize = (SENDERS_END - 1) / 16 * 16 + 64;
const MAILBOX_PAD: usize = BATCH_AT.saturating_sub(
    round_up(SENDERS_END, std::mem::align_of::<Option<Arc<Signal>>>())
        + std::mem::size_of::<Option<Arc<Signal>>>(),
);

// SAFETY: `inbox` and `flags` are only accessed under `lock`; `batch` only by the thread
// running the actor's job (at most one exists: module invariants) or by shutdown after all
// threads stopped.
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
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut Guarded<'_>) -> R) -> R {
        self.mb.inbox.with_mut(|inbox| {
            self.mb.flags.with_mut(|flags| {
                // SAFETY: the lock is held, so no other thread touches `flags`, and the borrow
                // ends with `f`.
                let flags = unsafe { &mut *flags };
                f(&mut Guarded {
                    // SAFETY: as for `flags`.
                    inbox: unsafe { &mut *inbox },
                    scheduled: &mut flags.scheduled,
                    sys_ref: &mut flags.sys_ref,
                })
            })
        })
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
            inbox: UnsafeCell::new(CopyQueue::empty()),
            lock: SpinLock::new(),
            flags: UnsafeCell::new(Flags {
                scheduled: true,
                sys_ref: true,
            }),
            signal,
            _pad: [0; MAILBOX_PAD],
            batch: UnsafeCell::new(CopyQueue::empty()),
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
        self.batch.with_mut(|b| unsafe { &mut *b })
    }

    /// The detached thread's signal, if the actor is detached.
    pub(crate) fn signal(&self) -> Option<&Arc<Signal>> {
        self.signal.as_ref()
    }
}

#[cfg(test)]
#[path = "mailbox_tests.rs"]
mod tests;
