//! The runtime: the lowest layer, which knows nothing of actors or messages.
//!
//! - [`pool`]: the worker pool: the *worker table* (one slot per worker holding everything
//!   kept per worker: its idle-sleep flag, its statistics, and the executor's per-worker data),
//!   the worker threads, and the idle sleep that connects them;
//! - [`worker`]: the loop every worker thread runs, and the one interface through which it
//!   runs work ([`worker::Unit`]): an executor is a kind of unit, so a new kind of work can be
//!   added to the same threads without touching the existing ones;
//! - [`resize`]: the readers-writer lock for live resizing of the Cforall runtime (Thierry
//!   Delisle, PhD thesis, Waterloo 2022, chapter "Scheduling in practice"; the pool resizes
//!   itself under it);
//! - [`idle`]: idle sleep (Delisle's thesis: event fds, benaphores, the sleepers list);
//! - [`life`]: run state and waits shared by the executors of one system;
//! - [`signal`]: a thread's wake-up flag (a detached actor's thread blocks on one);
//! - [`stats`]: per-worker counters and the public [`stats::Stats`];
//! - [`tasks`]: fork/join task deques (split, stolen from under a lock; after Java's fork/join
//!   work stealing: Doug Lea, "A Java Fork/Join Framework", 2000), run by the same loop after
//!   the unit's work;
//! - [`oneshot`]: the one-shot reply slot under request/reply (a thread or a future waits);
//! - [`timer`]: a system's timers (one thread, a heap of deadlines; no CPU while none is due);
//! - [`spin`]: the spinlock of the send paths; [`rng`]: the workers' random choices;
//! - [`loom`]: the loom shims for the model-checked protocols.

pub(crate) mod idle;
pub(crate) mod life;
pub(crate) mod loom;
pub(crate) mod oneshot;
pub(crate) mod pool;
pub(crate) mod resize;
pub(crate) mod rng;
pub(crate) mod signal;
pub(crate) mod spin;
pub(crate) mod stats;
pub(crate) mod tasks;
pub(crate) mod timer;
pub(crate) mod worker;
