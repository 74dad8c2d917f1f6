//! The resize lock: the specialised readers-writer lock of the Cforall runtime (Thierry
//! Delisle, PhD thesis, Waterloo 2022), chapter "Scheduling in practice" ("Manual Resizing",
//! "Readers-Writer Lock", its figure `SpecializedReadersWriterLock`), faithfully.
//!
//! Every reader has a lock of its own, on a cache line of its own: each worker of the pool one
//! (its row's), and threads that are no worker one of [`OUTSIDE_SHARDS`] shared ones, chosen
//! per thread. A reader first waits while a writer is in (so readers cannot starve it), then
//! takes its own lock; so readers never contend with each other, and a read costs one
//! exchange and one store on a line that stays in the reader's cache. The writer (a resize)
//! takes the global lock, then every reader lock in index order; it releases them in the same
//! order, then the global lock. Both sides spin: a resize is rare, and read sections are short
//! (they never block and never run user code but a scheduling policy's enqueue).
//!
//! Invariants:
//! - a reader lock is held by at most one party at a time: its reader (a read section) or the
//!   writer;
//! - while the writer holds the write guard it holds every reader lock, so no read section runs
//!   (mutual exclusion), and every read section that ran before is ordered before it (each
//!   reader's Release unlock, the writer's Acquire exchange), and it before every later one;
//! - read sections do not nest (a reader already inside one never asks again: it would wait for
//!   a writer that waits for it).
//!
//! What the sections protect is the resizable executors' business (see `pool.rs` and the
//! executors' READMEs): the number of workers, the message-centric executor's ranges and queue
//! owners, the placement of a policy's enqueue.

use super::loom::spin_hint;
use super::loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use crossbeam_utils::CachePadded;

/// Reader locks shared by the threads that are no worker of the pool (senders from `main`,
/// other systems, detached actors), each thread always using the same one.
#[cfg(not(any(loom, shuttle)))]
pub(crate) const OUTSIDE_SHARDS: usize = 4;
/// (One under loom: fewer locks for the writer to take, the same protocol.)
#[cfg(any(loom, shuttle))]
pub(crate) const OUTSIDE_SHARDS: usize = 1;

/// The lock (see the module documentation).
#[derive(Debug)]
pub(crate) struct ResizeLock {
    writer: CachePadded<AtomicBool>,
    /// The reader locks: one per worker row, then the outside shards.
    readers: Box<[CachePadded<AtomicBool>]>,
}

/// A read section; unlocks on drop.
#[must_use]
pub(crate) struct ReadGuard<'a>(&'a AtomicBool);

/// The write section: every reader lock is held; unlocks on drop.
#[must_use]
pub(crate) struct WriteGuard<'a>(&'a ResizeLock);

impl ResizeLock {
    /// A lock for a pool of at most `rows` workers.
    pub(crate) fn new(rows: usize) -> Self {
        Self {
            writer: CachePadded::new(AtomicBool::new(false)),
            readers: (0..rows + OUTSIDE_SHARDS)
                .map(|_| CachePadded::new(AtomicBool::new(false)))
                .collect(),
        }
    }

    /// Worker `row`'s read section.
    #[inline]
    pub(crate) fn read(&self, row: usize) -> ReadGuard<'_> {
        self.read_lock(&self.readers[row])
    }

    /// A read section for a thread that is no worker of the pool.
    #[inline]
    pub(crate) fn read_outside(&self) -> ReadGuard<'_> {
        let rows = self.readers.len() - OUTSIDE_SHARDS;
        self.read_lock(&self.readers[rows + outside_shard()])
    }

    #[inline]
    fn read_lock<'a>(&'a self, mine: &'a AtomicBool) -> ReadGuard<'a> {
        loop {
            // Step 1: make sure no writer is in.
            while self.writer.load(Ordering::Relaxed) {
                spin_hint();
            }
            // Step 2: take our own lock (a writer that came in meanwhile holds it, or waits
            // for us to release it).
            if try_lock(mine) {
                return ReadGuard(mine);
            }
            while mine.load(Ordering::Relaxed) {
                spin_hint();
            }
        }
    }

    /// The write section: the global lock, then every reader lock.
    pub(crate) fn write(&self) -> WriteGuard<'_> {
        lock(&self.writer);
        for r in self.readers.iter() {
            lock(r);
        }
        WriteGuard(self)
    }
}

/// One attempt at a lock word (a failed attempt writes nothing: test-and-test-and-set).
#[inline]
fn try_lock(a: &AtomicBool) -> bool {
    a.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
}

/// Spins until it holds the lock word.
fn lock(a: &AtomicBool) {
    while !try_lock(a) {
        while a.load(Ordering::Relaxed) {
            spin_hint();
        }
    }
}

impl Drop for ReadGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        for r in self.0.readers.iter() {
            r.store(false, Ordering::Release);
        }
        self.0.writer.store(false, Ordering::Release);
    }
}

/// The calling thread's outside shard (threads take them round-robin as they first ask).
#[cfg(not(any(loom, shuttle)))]
fn outside_shard() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SHARD: usize = NEXT.fetch_add(1, Ordering::Relaxed) % OUTSIDE_SHARDS;
    }
    SHARD.with(|s| *s)
}

/// Under loom every outside thread shares shard 0 (contention among outside readers is what
/// the model must cover anyway).
#[cfg(any(loom, shuttle))]
fn outside_shard() -> usize {
    let _ = AtomicUsize::new(0); // keeps the import used under both configurations
    0
}

#[cfg(all(test, loom))]
#[path = "resize_loom.rs"]
mod loom_tests;
