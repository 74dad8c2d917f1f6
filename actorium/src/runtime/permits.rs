//! A counting semaphore with a FIFO queue of waiters: the room of a bounded mailbox (tokio's
//! bounded `mpsc` channel works the same way: a permit per queued message, waiters served in
//! order). The runtime gives the permits no meaning; the actor layer takes one per message
//! queued for a bounded actor and gives it back when the message is taken to run.
//!
//! - [`Permits::try_acquire`] takes a permit if one is free and nobody waits (waiters are
//!   served first, so a stream of `try_acquire`s cannot starve them); [`Permits::force`]
//!   takes one even past the capacity (a send that ignores the bound still counts).
//! - [`Permits::wait`] queues a waiter: a parked thread, an async task's waker, or a callback.
//!   A released permit goes to the waiter at the head of the queue ([`Waiter::granted`]),
//!   never back to the pool while someone waits.
//! - [`Permits::close`] wakes every waiter without a permit (the actor ended).
//!
//! No lost wake-up: the count of permits taken and a "someone waits" bit share one atomic
//! word, so a waiter setting the bit and a release returning a permit are ordered by that
//! word's modification order alone. A waiter sets the bit, then tries for a permit: if the
//! release came first, the try sees the returned permit; if it came after, the release sees
//! the bit and serves the queue under its lock. The bit is set and cleared only under that
//! lock, and is set whenever the queue holds a waiter. `permits_loom.rs` checks this;
//! `tests/bounded.rs` stresses it.

use super::loom::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use super::loom::sync::{Arc, Mutex};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::task::Waker;

/// Takes a loom or std mutex's guard, poisoned or not (each change under it is one step).
macro_rules! locked {
    ($m:expr) => {
        $m.lock().unwrap_or_else(|e| e.into_inner())
    };
}

/// A waiter's state: queued.
const WAITING: u8 = 0;
/// Served: it holds a permit.
const GRANTED: u8 = 1;
/// Woken without a permit: the permits were closed.
const CLOSED: u8 = 2;
/// Its owner gave up (after a timeout, or a dropped future), or used its permit.
const DONE: u8 = 3;

/// How a waiter is told it was served or closed.
pub(crate) enum Wake {
    /// A parked thread: unparked. (A std thread even under loom, whose threads cannot park
    /// with a timeout: the loom model waits with a callback.)
    Thread(std::thread::Thread),
    /// An async task: its waker is woken (the latest one its future was polled with).
    Task(Waker),
    /// Called once, with `true` when served (it then owns the permit), `false` when closed.
    Call(Box<dyn FnOnce(bool) + Send>),
    /// Already told.
    Told,
}

/// A waiter, as its owner and the queue hold it (loom's `Arc` under loom).
pub(crate) type WaiterRef = Arc<Waiter>;

/// One waiter in the queue.
pub(crate) struct Waiter {
    state: AtomicU8,
    wake: Mutex<Wake>,
}

impl Waiter {
    /// Whether it was served: it holds a permit (until its owner uses it, or gives it back with
    /// [`Permits::cancel`]).
    pub(crate) fn granted(&self) -> bool {
        self.state.load(Ordering::Acquire) == GRANTED
    }

    /// Whether it was woken without a permit.
    pub(crate) fn closed(&self) -> bool {
        self.state.load(Ordering::Acquire) == CLOSED
    }

    /// Its owner used the permit it was granted (the permit now belongs to a queued message).
    pub(crate) fn used(&self) {
        debug_assert!(self.granted());
        self.state.store(DONE, Ordering::Relaxed);
    }

    /// Replaces a task waiter's waker. Called before the future reads the state, so that a
    /// grant between the two wakes the new waker (the granter stores the state first, then
    /// takes the waker under this lock).
    pub(crate) fn set_waker(&self, waker: &Waker) {
        let mut w = locked!(self.wake);
        if let Wake::Task(old) = &mut *w {
            if !old.will_wake(waker) {
                *old = waker.clone();
            }
        }
    }

    /// Tells the waiter (once), outside the permits' lock. A panic in what that runs (a
    /// waker, a callback) is caught here: the panic hook has reported it, and the other
    /// waiters must still be told.
    fn tell(&self, granted: bool) {
        let how = std::mem::replace(&mut *locked!(self.wake), Wake::Told);
        let told = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || match how {
            Wake::Thread(t) => t.unpark(),
            Wake::Task(w) => w.wake(),
            Wake::Call(f) => f(granted),
            Wake::Told => {}
        }));
        if let Err(p) = told {
            super::drop_payload(p);
        }
    }
}

/// A counting semaphore of `capacity` permits with a FIFO queue of waiters (module docs).
pub(crate) struct Permits {
    capacity: usize,
    /// Permits taken, times [`ONE`] (none free once they reach `capacity`, which
    /// [`Self::force`] may pass), plus [`WAITERS`] while the queue may hold a waiter.
    state: AtomicUsize,
    queue: Mutex<Queue>,
}

/// The waiters, and whether a thread is telling them their grants ([`Permits::serve`]).
#[derive(Default)]
struct Queue {
    waiters: VecDeque<WaiterRef>,
    serving: bool,
}

impl std::ops::Deref for Queue {
    type Target = VecDeque<WaiterRef>;
    fn deref(&self) -> &Self::Target {
        &self.waiters
    }
}

impl std::ops::DerefMut for Queue {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.waiters
    }
}

// The permits whose queue this thread is serving ([`Permits::serving_here`]); loom's own
// thread-locals under loom, whose threads share one OS thread.
#[cfg(not(loom))]
std::thread_local! {
    static SERVING: RefCell<Vec<*const ()>> = const { RefCell::new(Vec::new()) };
}
#[cfg(loom)]
loom::thread_local! {
    static SERVING: RefCell<Vec<*const ()>> = RefCell::new(Vec::new());
}

/// `state`: the queue holds (or may hold) a waiter. Set and cleared under the queue's lock.
const WAITERS: usize = 1;
/// `state`: one permit taken.
const ONE: usize = 2;

impl Permits {
    /// `capacity` permits, all free. (At least one: a bound of zero would never admit.)
    pub(crate) fn new(capacity: usize) -> Self {
        debug_assert!(capacity > 0);
        Self {
            capacity,
            state: AtomicUsize::new(0),
            queue: Mutex::new(Queue::default()),
        }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Permits taken now (a snapshot).
    pub(crate) fn used(&self) -> usize {
        self.state.load(Ordering::Relaxed) / ONE
    }

    /// Takes a free permit if there is one and nobody waits for one.
    #[inline]
    pub(crate) fn try_acquire(&self) -> bool {
        self.take_free(false)
    }

    /// Takes a permit even if none is free.
    #[inline]
    pub(crate) fn force(&self) {
        self.state.fetch_add(ONE, Ordering::Relaxed);
    }

    /// Gives a permit back; the waiter at the head of the queue, if any, gets it.
    #[inline]
    pub(crate) fn release(&self) {
        if self.state.fetch_sub(ONE, Ordering::AcqRel) & WAITERS != 0 && !self.serving_here() {
            self.serve();
        }
    }

    /// Whether this thread is serving these permits' queue already (a callback told by
    /// [`Self::serve`] gave a permit back): the serving loop looks again after each waiter it
    /// tells, so a nested serve would only deepen the stack, once per waiter.
    fn serving_here(&self) -> bool {
        let me: *const Self = self;
        // (Not during this thread's thread-local destruction: then nothing is served here.)
        SERVING
            .try_with(|s| s.borrow().contains(&me.cast()))
            .unwrap_or(false)
    }

    /// Queues a waiter woken by `wake` once it holds a permit (or the permits close). It may be
    /// served at once, before this returns.
    pub(crate) fn wait(&self, wake: Wake) -> WaiterRef {
        let w = Arc::new(Waiter {
            state: AtomicU8::new(WAITING),
            wake: Mutex::new(wake),
        });
        {
            let mut q = locked!(self.queue);
            q.push_back(w.clone());
            self.state.fetch_or(WAITERS, Ordering::AcqRel);
        }
        self.serve();
        w
    }

    /// The waiter's owner gives up waiting (a thread or a task; never a callback, which owns
    /// its permit once told): it leaves the queue. True if it had been granted a permit
    /// meanwhile: the caller owns that permit (uses it, or gives it back with
    /// [`Self::release`]).
    pub(crate) fn cancel(&self, w: &WaiterRef) -> bool {
        let granted = {
            let mut q = locked!(self.queue);
            match w.state.load(Ordering::Acquire) {
                WAITING => {
                    if let Some(i) = q.iter().position(|x| Arc::ptr_eq(x, w)) {
                        q.remove(i);
                    }
                    if q.is_empty() {
                        self.state.fetch_and(!WAITERS, Ordering::AcqRel);
                    }
                    w.state.store(DONE, Ordering::Relaxed);
                    false
                }
                GRANTED => {
                    w.state.store(DONE, Ordering::Relaxed);
                    true
                }
                _ => false,
            }
        };
        // Not told: its owner is the caller.
        *locked!(w.wake) = Wake::Told;
        granted
    }

    /// Tells one waiter it was closed, if it still waits (its owner found, after queuing it,
    /// that the permits' owner had ended). Other waiters are left alone: the owner may have
    /// come back since (a respawn).
    pub(crate) fn close_one(&self, w: &WaiterRef) {
        {
            let mut q = locked!(self.queue);
            if w.state.load(Ordering::Acquire) != WAITING {
                return;
            }
            if let Some(i) = q.iter().position(|x| Arc::ptr_eq(x, w)) {
                q.remove(i);
            }
            if q.is_empty() {
                self.state.fetch_and(!WAITERS, Ordering::AcqRel);
            }
            w.state.store(CLOSED, Ordering::Release);
        }
        w.tell(false);
    }

    /// Wakes every waiter without a permit (the permits' owner ended). Waiters queued later
    /// are served as usual: whoever queues one checks, after queuing it, that the owner still
    /// lives.
    pub(crate) fn close(&self) {
        let all: Vec<WaiterRef> = {
            let mut q = locked!(self.queue);
            self.state.fetch_and(!WAITERS, Ordering::AcqRel);
            q.drain(..)
                .inspect(|w| w.state.store(CLOSED, Ordering::Release))
                .collect()
        };
        for w in all {
            w.tell(false);
        }
    }

    /// Gives free permits to the waiters at the head of the queue, one at a time, each told
    /// outside the lock (a callback may release a permit itself). One thread serves at a
    /// time, so waiters are told in the order they were granted (two `when_room` callbacks of
    /// one actor, told by two releasing threads at once, queued its continuations in either
    /// order); a thread that finds another serving leaves the permit it released to it. No
    /// permit is left behind: the server decides to stop under the lock, so a release that
    /// found it serving came before that decision, which sees the permit.
    fn serve(&self) {
        /// Marks this thread as serving `p` while alive.
        struct Serving(*const ());
        impl Drop for Serving {
            fn drop(&mut self) {
                let _ = SERVING.try_with(|s| {
                    let mut s = s.borrow_mut();
                    if let Some(i) = s.iter().rposition(|&p| p == self.0) {
                        s.swap_remove(i);
                    }
                });
            }
        }
        let me: *const Self = self;
        // (During thread-local destruction the mark is skipped: a nested serve then recurses,
        // which is only deeper, never wrong.)
        let _ = SERVING.try_with(|s| s.borrow_mut().push(me.cast()));
        let _serving = Serving(me.cast());
        {
            let mut q = locked!(self.queue);
            if q.serving {
                return;
            }
            q.serving = true;
        }
        // (Cleared on every way out, an unwind included, under the lock.)
        struct Server<'a>(&'a Mutex<Queue>);
        impl Drop for Server<'_> {
            fn drop(&mut self) {
                locked!(self.0).serving = false;
            }
        }
        let server = Server(&self.queue);
        loop {
            let w = {
                let mut q = locked!(self.queue);
                if q.is_empty() || !self.take_free(true) {
                    q.serving = false;
                    drop(q);
                    std::mem::forget(server);
                    return;
                }
                let w = q.pop_front().expect("checked non-empty");
                if q.is_empty() {
                    self.state.fetch_and(!WAITERS, Ordering::AcqRel);
                }
                w.state.store(GRANTED, Ordering::Release);
                w
            };
            w.tell(true);
        }
    }

    /// Takes a free permit, if any (and, unless `for_waiter`, only if nobody waits).
    #[inline]
    fn take_free(&self, for_waiter: bool) -> bool {
        let mut s = self.state.load(Ordering::Acquire);
        loop {
            if s / ONE >= self.capacity || (!for_waiter && s & WAITERS != 0) {
                return false;
            }
            match self
                .state
                .compare_exchange_weak(s, s + ONE, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
    }
}

#[cfg(all(test, not(loom), not(shuttle)))]
#[path = "permits_tests.rs"]
mod tests;

#[cfg(all(test, loom))]
#[path = "permits_loom.rs"]
mod loom_tests;
