//! Concurrency primitives, switched to [loom](https://docs.rs/loom)'s model-checked versions when
//! the crate is built with `RUSTFLAGS="--cfg loom"` (as tokio does).
//!
//! The protocols that loom checks — the idle-sleep handshake ([`crate::runtime::idle`]), the
//! spinlock, the gulp and the queue swap of the message-centric executor, queue ownership —
//! take their atomics, cells and locks from here, so no code outside this module and the loom
//! models themselves names loom. Code that loom does not model (statistics counters, the
//! life-cycle waits, a detached thread's signal) uses `std` directly.

#[cfg(not(loom))]
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

/// Thread handles and parking (a joiner waiting for a stolen task parks).
#[cfg(not(loom))]
pub(crate) mod thread {
    #[allow(unused_imports)]
    pub(crate) use std::thread::{current, park, Thread};
}

#[cfg(loom)]
pub(crate) mod thread {
    pub(crate) use loom::thread::{current, park, Thread};
}

/// A busy-wait hint: a CPU pause normally, a yield to the model checker under loom (a spin loop
/// that never yields would make loom explore it forever).
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(not(loom))]
    std::hint::spin_loop();
    #[cfg(loom)]
    loom::thread::yield_now();
}

/// Gives the CPU to another thread (to the model checker's scheduler under loom).
#[inline]
pub(crate) fn yield_now() {
    #[cfg(not(loom))]
    std::thread::yield_now();
    #[cfg(loom)]
    loom::thread::yield_now();
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
