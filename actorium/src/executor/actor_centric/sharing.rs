//! Work sharing ("Work Sharing" in CAF's scheduler manual: the C++ Actor Framework manual, section
//! "Scheduler"): one global queue guarded by a mutex, and a condition variable on which idle
//! workers block. No polling; every enqueue and dequeue meets on the one lock, so it suits few
//! workers and coarse jobs.

use super::policy::{Policy, Scheduler, WorkerCtx};
use crate::executor::mailbox::Job;
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};

/// CAF's work-sharing policy: one FIFO queue for all workers.
///
/// ```
/// use actorium::{policy::WorkSharing, ActorSystem};
/// let system = ActorSystem::builder().workers(2).policy(WorkSharing).build()?;
/// system.stop();
/// # Ok::<(), actorium::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct WorkSharing;

/// The global queue and the workers waiting on it.
#[derive(Debug)]
pub struct SharedQueue {
    state: Mutex<State>,
    cv: Condvar,
}

/// What the mutex guards.
#[derive(Debug, Default)]
struct State {
    jobs: VecDeque<Job>,
    /// Workers blocked on the condition variable (counted from before they wait until they
    /// hold the mutex again).
    waiting: usize,
    /// Of those, how many a push has notified and that have not woken yet: a push notifies
    /// only while some waiter is not already on its way, since each notify is a system call
    /// and a woken worker takes a job either way.
    notified: usize,
}

impl State {
    /// Queues `job`; returns whether to notify a waiter: only while some waiter is not
    /// already on its way (a notify with no waiter, or only waiters already woken, would
    /// still cost a system call, and a woken worker takes a job either way).
    fn push(&mut self, job: Job) -> bool {
        self.jobs.push_back(job);
        let notify = self.waiting > self.notified;
        if notify {
            self.notified += 1;
        }
        notify
    }

    /// A waiter holds the mutex again, woken by a notify or spuriously: one fewer waiter is
    /// on its way either way. (If a spurious wake takes the place of a notified waiter, the
    /// notify still wakes some waiter blocked at that moment, which finds the queue as this
    /// one leaves it.) Keeps `notified <= waiting`.
    fn woke(&mut self) {
        self.waiting -= 1;
        self.notified = self.notified.saturating_sub(1).min(self.waiting);
    }
}

impl SharedQueue {
    /// Appends a job and wakes a waiting worker, unless every waiting worker was already
    /// notified and has not woken yet (it will take this job, or one before it, in turn).
    pub fn push(&self, job: Job) {
        let notify = self.state.lock().unwrap().push(job);
        if notify {
            self.cv.notify_one();
        }
    }
}

impl SharedQueue {
    /// Takes the oldest job, blocking until there is one.
    pub fn pop_blocking(&self) -> Job {
        self.pop(None)
    }

    fn pop(&self, counters: Option<&crate::runtime::counters::Counters>) -> Job {
        let mut g = self.state.lock().unwrap();
        loop {
            if let Some(job) = g.jobs.pop_front() {
                return job;
            }
            g.waiting += 1;
            if let Some(c) = counters {
                c.sleeps.bump(1);
            }
            g = self.cv.wait(g).unwrap();
            g.woke();
        }
    }
}

#[cfg(not(feature = "unstable-policy"))]
impl super::policy::sealed::Implementable for WorkSharing {}

impl Policy for WorkSharing {
    type Coordinator = SharedQueue;
    type Worker = ();
    type Local = ();
    // Sends nothing, never asks for its worker: called without hiding it.
    const CALLED: super::policy::sealed::Called = super::policy::sealed::Called::WorkerVisible;

    fn coordinator(&self, _workers: usize) -> SharedQueue {
        SharedQueue {
            state: Mutex::new(State::default()),
            cv: Condvar::new(),
        }
    }

    fn worker(&self, _: &SharedQueue, _: usize) -> ((), ()) {
        ((), ())
    }

    /// Every enqueue (the others forward here): the one queue.
    fn central_enqueue(&self, s: &Scheduler<'_, Self>, job: Job) {
        s.coordinator().push(job);
    }

    fn dequeue(&self, me: &mut WorkerCtx<'_, Self>) -> Option<Job> {
        Some(me.scheduler().coordinator().pop(me.counters()))
    }

    /// Idle workers block on the queue's condition variable, so they never look for tasks.
    fn helps_with_tasks(&self) -> bool {
        false
    }
}

#[cfg(all(test, not(loom)))]
#[path = "sharing_tests.rs"]
mod tests;
