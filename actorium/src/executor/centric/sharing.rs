//! Work sharing (seed 000, "Work Sharing"): one global queue guarded by a mutex, and a
//! condition variable on which idle workers block. No polling; every enqueue and dequeue meets
//! on the one lock, so it suits few workers and coarse jobs.

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

/// The global queue and how many workers wait on it.
#[derive(Debug)]
pub struct SharedQueue {
    state: Mutex<(VecDeque<Job>, usize)>,
    cv: Condvar,
}

impl SharedQueue {
    /// Appends a job and wakes a waiting worker, if any.
    pub fn push(&self, job: Job) {
        let mut g = self.state.lock().unwrap();
        g.0.push_back(job);
        // A notify with no waiter would still cost a system call: skip it.
        let waiting = g.1 > 0;
        drop(g);
        if waiting {
            self.cv.notify_one();
        }
    }
}

impl SharedQueue {
    /// Takes the oldest job, blocking until there is one.
    pub fn pop_blocking(&self) -> Job {
        self.pop(None)
    }

    fn pop(&self, counters: Option<&crate::runtime::stats::Counters>) -> Job {
        let mut g = self.state.lock().unwrap();
        loop {
            if let Some(job) = g.0.pop_front() {
                return job;
            }
            g.1 += 1;
            if let Some(c) = counters {
                c.sleeps.bump(1);
            }
            g = self.cv.wait(g).unwrap();
            g.1 -= 1;
        }
    }
}

impl Policy for WorkSharing {
    type Coordinator = SharedQueue;
    type Worker = ();
    type Local = ();
    // Sends nothing, never asks for its worker: called without hiding it.
    const CALLED: super::policy::sealed::Called = super::policy::sealed::Called::WorkerVisible;

    fn coordinator(&self, _workers: usize) -> SharedQueue {
        SharedQueue {
            state: Mutex::new((VecDeque::new(), 0)),
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
