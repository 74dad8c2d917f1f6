//! The runtime: the lowest layer, which knows nothing of actors or messages.
//!
//! - [`pool`]: the worker pool: the worker threads, live resizing, and the executor's column of
//!   the worker table; [`worker_table`]: the runtime's columns (one row per worker: its
//!   idle-sleep flag, its counters, its task deque, its life-cycle state);
//! - [`worker`]: the loop every worker thread runs, and the one interface through which it
//!   runs work ([`worker::Unit`]): an executor is a kind of unit, so a new kind of work can be
//!   added to the same threads without touching the existing ones;
//! - [`compaction`]: as many active workers as pay for themselves (a controller that
//!   deactivates and activates workers through the pool's resizing);
//! - [`resize`]: the readers-writer lock for live resizing of the Cforall runtime (Thierry
//!   Delisle, PhD thesis, Waterloo 2022, chapter "Scheduling in practice"; the pool resizes
//!   itself under it);
//! - [`idle`]: idle sleep (Delisle's thesis: event fds, benaphores, the sleepers list);
//! - [`life`]: run state and waits shared by the executors of one system;
//! - [`signal`]: a thread's wake-up flag (a detached actor's thread blocks on one);
//! - [`context`]: which pool, worker and system the calling thread runs work for;
//! - [`counters`]: per-worker counters (summed into the public statistics by the core);
//! - [`tasks`]: fork/join task deques (split, stolen from under a lock; after Java's fork/join
//!   work stealing: Doug Lea, "A Java Fork/Join Framework", 2000), run by the same loop after
//!   the unit's work;
//! - [`oneshot`]: the one-shot reply slot under request/reply (a thread or a future waits);
//! - [`permits`]: a counting semaphore with a FIFO queue of waiters (a bounded mailbox's room);
//! - [`timer_thread`]: a system's timers (one thread, a heap of deadlines; no CPU while none
//!   is due);
//! - [`spinlock`]: the spinlock of the send paths; [`rng`]: the workers' random choices;
//! - [`loom`]: the loom shims for the model-checked protocols.

pub(crate) mod compaction;
pub(crate) mod context;
pub(crate) mod counters;
pub(crate) mod idle;
pub(crate) mod life;
pub(crate) mod loom;
pub(crate) mod oneshot;
pub(crate) mod permits;
pub(crate) mod pool;
pub(crate) mod resize;
pub(crate) mod rng;
pub(crate) mod signal;
pub(crate) mod spinlock;
pub(crate) mod tasks;
pub(crate) mod timer_thread;
pub(crate) mod worker;
pub(crate) mod worker_table;

/// Drops a caught panic's payload; one whose destructor panics in turn is leaked (with the
/// second payload), never unwound into the caller: a worker, or a drop already unwinding.
pub(crate) fn drop_payload(payload: Box<dyn std::any::Any + Send>) {
    if let Err(again) =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(payload)))
    {
        std::mem::forget(again);
    }
}

/// A std mutex's guard, poisoned or not: its users keep the data consistent across a panic
/// (each change is one step), so a panic elsewhere must not make the data unreachable.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
