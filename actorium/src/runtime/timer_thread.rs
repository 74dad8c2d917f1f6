//! Timers: one thread per system, started at the first timer, holding every pending timer in a
//! binary heap ordered by deadline (ties in creation order). It sleeps on a condition variable
//! until the earliest deadline, or without a timeout when no timer is pending, so a system
//! with no timer due uses no CPU; it is stopped and joined when the system shuts down, and the
//! timers still pending are dropped with it.
//!
//! A timer is a closure that fires (sends a message) and says whether to go on (a periodic
//! timer whose receiver has ended stops). Firing runs outside the lock, caught if it panics
//! (the timer is then dropped). Cancelling is by id: a cancelled timer
//! leaves a stale heap entry behind, skipped when it comes up; the heap is rebuilt when stale
//! entries outnumber live ones.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// What a timer does when it fires; `true`: fire again after its period.
pub(crate) type Fire = Box<dyn FnMut() -> bool + Send>;

struct Task {
    fire: Fire,
    deadline: Instant,
    period: Option<Duration>,
}

#[derive(Default)]
struct State {
    heap: BinaryHeap<Reverse<(Instant, u64)>>,
    tasks: HashMap<u64, Task>,
    next: u64,
    /// The timer firing now (out of `tasks`), and whether it was cancelled meanwhile.
    firing: Option<u64>,
    cancel_firing: bool,
    /// Whether the timer firing now is periodic (a one-shot one is no longer pending).
    firing_periodic: bool,
    started: bool,
    stopped: bool,
}

struct Inner {
    state: Mutex<State>,
    cv: Condvar,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A firing closure runs outside the lock and is caught: no panic poisons it.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The timers of one system.
pub(crate) struct Timers {
    inner: Arc<Inner>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Default for Timers {
    fn default() -> Self {
        Self {
            inner: Arc::new(Inner {
                state: Mutex::new(State::default()),
                cv: Condvar::new(),
            }),
            thread: Mutex::new(None),
        }
    }
}

/// A handle to one timer (to cancel it). Holds nothing alive.
#[derive(Clone)]
pub(crate) struct TimerRef {
    inner: Weak<Inner>,
    id: u64,
}

impl TimerRef {
    /// Cancels the timer; `true` if it was pending (a one-shot timer that fired or is firing,
    /// or a cancelled one, gives `false`).
    pub(crate) fn cancel(&self) -> bool {
        let Some(inner) = self.inner.upgrade() else {
            return false;
        };
        let mut st = inner.lock();
        if let Some(task) = st.tasks.remove(&self.id) {
            compact(&mut st);
            // The task (and the message it holds) is dropped outside the lock: its `Drop`
            // may use the timers.
            drop(st);
            drop(task);
            true
        } else if st.firing == Some(self.id) && st.firing_periodic && !st.cancel_firing {
            st.cancel_firing = true;
            true
        } else {
            false
        }
    }

    /// Whether the timer is still pending.
    pub(crate) fn is_pending(&self) -> bool {
        self.inner.upgrade().is_some_and(|inner| {
            let st = inner.lock();
            st.tasks.contains_key(&self.id)
                || (st.firing == Some(self.id) && st.firing_periodic && !st.cancel_firing)
        })
    }
}

/// Drops a timer that will not fire again, keeping the calling thread (the timer thread, or
/// the shutdown) alive whatever its closure's drop does. (The closures the actor layer makes
/// catch and report a panic of their message's destructor themselves.)
fn drop_task(task: Task) {
    if let Err(p) = catch_unwind(AssertUnwindSafe(|| drop(task))) {
        super::drop_payload(p);
    }
}

/// Rebuilds the heap when stale entries (of cancelled timers) outnumber the live ones.
fn compact(st: &mut State) {
    if st.heap.len() > 2 * st.tasks.len() + 64 {
        st.heap = st
            .tasks
            .iter()
            .map(|(&id, t)| Reverse((t.deadline, id)))
            .collect();
    }
}

impl Timers {
    /// How many timers are pending.
    #[cfg(test)]
    pub(crate) fn pending(&self) -> usize {
        self.inner.lock().tasks.len()
    }

    /// Adds a timer firing after `delay`, then every `period` if given (while `fire` returns
    /// `true`). `None` (and `fire` dropped) if the timers were stopped (the system shut down)
    /// or the thread could not start.
    pub(crate) fn add(
        &self,
        delay: Duration,
        period: Option<Duration>,
        fire: Fire,
    ) -> Result<TimerRef, Fire> {
        let deadline = Instant::now()
            .checked_add(delay)
            .unwrap_or_else(|| Instant::now() + Duration::from_secs(100 * 365 * 24 * 3600));
        let mut st = self.inner.lock();
        if st.stopped {
            return Err(fire);
        }
        if !st.started {
            let inner = self.inner.clone();
            let spawned = thread::Builder::new()
                .name("actorium-timer".into())
                .spawn(move || run(&inner));
            match spawned {
                Ok(h) => *self.thread.lock().unwrap_or_else(|p| p.into_inner()) = Some(h),
                Err(e) => {
                    eprintln!("actorium: cannot start the timer thread: {e}");
                    return Err(fire);
                }
            }
            st.started = true;
        }
        let id = st.next;
        st.next += 1;
        let earliest = st.heap.peek().is_none_or(|Reverse((t, _))| deadline < *t);
        st.heap.push(Reverse((deadline, id)));
        st.tasks.insert(
            id,
            Task {
                fire,
                deadline,
                period,
            },
        );
        drop(st);
        if earliest {
            self.inner.cv.notify_one();
        }
        Ok(TimerRef {
            inner: Arc::downgrade(&self.inner),
            id,
        })
    }

    /// Stops the thread and drops every pending timer (system shutdown). Idempotent.
    pub(crate) fn stop(&self) {
        let pending = {
            let mut st = self.inner.lock();
            st.stopped = true;
            st.heap.clear();
            std::mem::take(&mut st.tasks)
        };
        self.inner.cv.notify_one();
        // Their closures (and the messages they hold) are dropped outside the lock, one by
        // one, whatever one's drop does: the shutdown goes on.
        for (_, task) in pending {
            drop_task(task);
        }
        let handle = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(h) = handle {
            if h.thread().id() != thread::current().id() {
                let _ = h.join();
            }
        }
    }
}

/// The timer thread.
fn run(inner: &Inner) {
    // It fires every timer of the system: a send that would wait (to a remote actor over a
    // congested link) must not hold the others back.
    super::context::never_block();
    let mut st = inner.lock();
    loop {
        if st.stopped {
            return;
        }
        let Some(&Reverse((deadline, id))) = st.heap.peek() else {
            st = inner.cv.wait(st).unwrap_or_else(|p| p.into_inner());
            continue;
        };
        let now = Instant::now();
        if deadline > now {
            st = inner
                .cv
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            continue;
        }
        st.heap.pop();
        let Some(mut task) = st.tasks.remove(&id) else {
            continue; // cancelled
        };
        st.firing = Some(id);
        st.cancel_firing = false;
        st.firing_periodic = task.period.is_some();
        drop(st);
        // (The closures the actor layer makes catch and report their own panics; this only
        // keeps the thread alive whatever a closure does. A panicking timer is dropped.)
        let again = catch_unwind(AssertUnwindSafe(|| (task.fire)())).unwrap_or_else(|p| {
            super::drop_payload(p);
            false
        });
        st = inner.lock();
        st.firing = None;
        match task.period {
            Some(period) if again && !st.cancel_firing && !st.stopped => {
                // The next deadline keeps the period's phase; ticks missed while firing late
                // are skipped rather than fired in a burst.
                let mut next = task.deadline + period;
                let now = Instant::now();
                if next <= now {
                    let missed = (now - next).as_nanos() / period.as_nanos().max(1) + 1;
                    let missed = u32::try_from(missed).unwrap_or(u32::MAX);
                    next += period.saturating_mul(missed);
                }
                task.deadline = next;
                st.heap.push(Reverse((next, id)));
                st.tasks.insert(id, task);
            }
            _ => {
                drop(st);
                drop_task(task); // outside the lock: it may hold anything
                st = inner.lock();
            }
        }
    }
}

#[cfg(test)]
#[path = "timer_thread_tests.rs"]
mod tests;
