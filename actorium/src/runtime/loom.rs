//! Concurrency primitives, switched to [loom](https://docs.rs/loom)'s model-checked versions when
//! the crate is built with `RUSTFLAGS="--cfg loom"` (as tokio does), and to
//! [shuttle](https://docs.rs/shuttle)'s randomly scheduled ones with `RUSTFLAGS="--cfg shuttle"`.
//!
//! The protocols that the models check — the idle-sleep handshake ([`crate::runtime::idle`]), the
//! spinlock, the gulp and the queue swap of the message-centric executor, queue ownership, the
//! resize lock, the task deque, the join latch, the ask reply slot, a bounded mailbox's room —
//! take their atomics, cells and locks from here, so no code outside this module and the models
//! themselves names loom or shuttle. Code that the models do not cover (statistics counters,
//! the life-cycle waits, a detached thread's signal) uses `std` directly.
//!
//! # Every model, in one list
//!
//! Loom explores every interleaving of a small scenario (two or three threads, bounded
//! preemptions); shuttle samples schedules of larger ones with its PCT scheduler (several
//! thieves, a sender and a resizer at once), which loom cannot explore. `.ci/run` runs both:
//!
//! ```text
//! LOOM_MAX_PREEMPTIONS=2 RUSTFLAGS="--cfg loom" \
//!     cargo test --release --lib -p actorium --target-dir target/loom -- loom
//! RUSTFLAGS="--cfg shuttle" \
//!     cargo test --release --lib -p actorium --target-dir target/shuttle -- shuttle
//! ```
//!
//! | protocol | loom model | shuttle model |
//! |---|---|---|
//! | idle-sleep handshake, benaphore, parker | `runtime/idle/loom_tests.rs` | `executor/message_centric/tests/shuttle.rs` |
//! | resize lock | `runtime/resize_loom.rs` | `executor/message_centric/tests/shuttle.rs` |
//! | a dormant worker's park against activation, removal, stop (compaction) | `runtime/compaction_loom.rs` | — (stress: `tests/compaction.rs` under `compaction_chaos`) |
//! | task deque (THE protocol, split) | `runtime/tasks/deque_loom.rs` | `runtime/tasks/shuttle_tests.rs` |
//! | join latch | `executor/forkjoin/latch_loom.rs` | — |
//! | ask reply slot (one-shot) | `runtime/oneshot_loom.rs` | — |
//! | a bounded mailbox's room: release against a new waiter, a try, a cancel; the end against a new waiter | `runtime/permits_loom.rs` | — (stress: `tests/bounded.rs`) |
//! | a monitor set while its actor ends | `core/monitors_loom.rs` | — |
//! | gulp vs send, moving an actor | `executor/message_centric/tests/loom_work_queue.rs` | `executor/message_centric/tests/shuttle.rs` |
//! | queue swap | `executor/message_centric/tests/loom_swap.rs` | `executor/message_centric/tests/shuttle.rs` |
//! | queue ownership under steals and resizes | `executor/message_centric/tests/loom_ownership.rs` | `executor/message_centric/tests/shuttle.rs` |
//!
//! The models sit in sibling files of the code they check (they reach its private items); the
//! table above is their index, and every one of them has `loom` (or `shuttle`) in its module
//! path, so the one command runs them all.

#[cfg(not(any(loom, shuttle)))]
#[allow(unused_imports)]
pub(crate) mod sync {
    pub(crate) use std::sync::{Arc, Condvar, Mutex};
    pub(crate) mod atomic {
        pub(crate) use std::sync::atomic::{
            fence, AtomicBool, AtomicPtr, AtomicU8, AtomicUsize, Ordering,
        };
    }
}

#[cfg(loom)]
#[allow(unused_imports)]
pub(crate) mod sync {
    pub(crate) use loom::sync::{Arc, Condvar, Mutex};
    pub(crate) mod atomic {
        pub(crate) use loom::sync::atomic::{
            fence, AtomicBool, AtomicPtr, AtomicU8, AtomicUsize, Ordering,
        };
    }
}

#[cfg(all(shuttle, not(loom)))]
#[allow(unused_imports)]
pub(crate) mod sync {
    pub(crate) use shuttle::sync::{Condvar, Mutex};
    pub(crate) use std::sync::Arc;
    pub(crate) mod atomic {
        pub(crate) use shuttle::sync::atomic::{
            fence, AtomicBool, AtomicPtr, AtomicU8, AtomicUsize, Ordering,
        };
    }
}

/// Thread handles and parking (a joiner waiting for a stolen task parks).
#[cfg(not(any(loom, shuttle)))]
pub(crate) mod thread {
    #[allow(unused_imports)]
    pub(crate) use std::thread::{current, park, Thread};
}

#[cfg(loom)]
pub(crate) mod thread {
    pub(crate) use loom::thread::{current, park, Thread};
}

#[cfg(all(shuttle, not(loom)))]
pub(crate) mod thread {
    pub(crate) use shuttle::thread::{current, park, Thread};
}

/// A busy-wait hint: a CPU pause normally, a yield to the model checker under loom (a spin loop
/// that never yields would make loom explore it forever).
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(not(any(loom, shuttle)))]
    std::hint::spin_loop();
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(all(shuttle, not(loom)))]
    shuttle::thread::yield_now();
}

/// Gives the CPU to another thread (to the model checker's scheduler under loom).
#[inline]
pub(crate) fn yield_now() {
    #[cfg(not(any(loom, shuttle)))]
    std::thread::yield_now();
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(all(shuttle, not(loom)))]
    shuttle::thread::yield_now();
}

/// `UnsafeCell` with loom's closure-based access API, so that loom can check that no two threads
/// touch the contents at once.
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(
    #[cfg(not(loom))] std::cell::UnsafeCell<T>,
    #[cfg(loom)] loom::cell::UnsafeCell<T>,
);

impl<T> UnsafeCell<T> {
    pub(crate) fn new(value: T) -> Self {
        #[cfg(not(loom))]
        return Self(std::cell::UnsafeCell::new(value));
        #[cfg(loom)]
        return Self(loom::cell::UnsafeCell::new(value));
    }

    /// Shared access through a raw pointer; the caller's synchronisation makes it sound.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        #[cfg(not(loom))]
        return f(self.0.get());
        #[cfg(loom)]
        return self.0.with(f);
    }

    /// Exclusive access through a raw pointer; the caller's synchronisation makes it sound.
    #[inline]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        #[cfg(not(loom))]
        return f(self.0.get());
        #[cfg(loom)]
        return self.0.with_mut(f);
    }
}
