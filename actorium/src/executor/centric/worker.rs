//! The actor-centric worker loop, the shutdown handshake, and driving by the caller.
//!
//! A worker asks its policy for a job, runs it for at most `max_throughput` messages, and tells
//! the policy how it ended (hooks, `resume_job_later`). It exits when it takes a shutdown job.
//!
//! Shutdown (CAF's `shutdown_helper`): the coordinator hands one shutdown job to a worker that
//! has not exited yet, through the policy's `external_enqueue`, and waits until *some* worker
//! took it (with stealing it need not be the one it was given to); that worker exits, and the
//! coordinator repeats with the next. So it works with any policy that eventually hands every
//! job to some worker. On a dropped system (aborting) workers skip ordinary jobs; the shutdown's
//! cleanup owns their actors.

use super::{Inner, Sched};
use crate::executor::mailbox::{self, Job, Resumable, Runner};
use crate::executor::Core;
use crate::policy::Policy;
use std::cell::Cell;
use std::collections::BTreeSet;
use std::ptr;
use std::sync::Arc;

thread_local! {
    /// The scheduler (an `Inner<P>`, erased) and worker index of the calling thread.
    static CURRENT: Cell<(*const (), usize)> = const { Cell::new((ptr::null(), 0)) };
}

/// Sets CURRENT for a scope, restoring the previous value (a caller-driven system may be
/// driven from inside a behaviour of another system).
struct Enter((*const (), usize));

impl Enter {
    fn new(inner: *const (), index: usize) -> Self {
        Enter(CURRENT.with(|c| c.replace((inner, index))))
    }
}

impl Drop for Enter {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.0));
    }
}

/// Worker `index`'s thread body.
pub(crate) fn run<P: Policy>(exec: &super::Executor, inner: &Arc<Inner<P>>, index: usize) {
    let _enter = Enter::new(Arc::as_ptr(inner).cast(), index);
    let core = &exec.core;
    let p = &*inner.policy;
    let during = || {
        policy_call(|| {
            // SAFETY: called by the job's thread between two behaviours, when no other context
            // of this worker is alive (see `step`).
            let mut me = unsafe { inner.ctx(index, core) };
            p.during_resume(&mut me)
        })
    };
    let runner = Runner {
        index,
        counters: core.counters_of(index),
        during: Some(&during),
    };
    loop {
        // SAFETY: this is worker `index`'s thread, and no other context of it is alive.
        let job = policy_call(|| inner.policy.dequeue(&mut unsafe { inner.ctx(index, core) }));
        let Some(job) = job else { continue };
        if job.is_shutdown() {
            *inner.shutdown.lock().unwrap() = Some(index);
            inner.shutdown_cv.notify_all();
            return;
        }
        if core.life.aborting() {
            continue;
        }
        // SAFETY: as above.
        unsafe { step(inner, core, &runner, job, exec.max_throughput) };
    }
}

/// Runs one job with the policy's hooks around it.
///
/// # Safety
/// On worker `runner.index`'s thread (or the driver's), for a job the policy handed to it.
unsafe fn step<P: Policy>(
    inner: &Inner<P>,
    core: &Core,
    runner: &Runner<'_>,
    job: Job,
    max_throughput: usize,
) {
    let index = runner.index;
    let p = &*inner.policy;
    // The contexts below never overlap: each ends before the next is made, none lives across
    // the job (whose behaviours may make their own for internal enqueues, and whose runner makes
    // one between behaviours for `during_resume`), and policy code runs outside CURRENT, so a
    // send it makes cannot make another.
    policy_call(|| {
        // SAFETY: as just said; this is worker `index`'s thread (caller contract).
        let mut me = unsafe { inner.ctx(index, core) };
        p.before_resume(&mut me, &job)
    });
    // SAFETY: the policy handed this job to this thread only (caller contract).
    let (r, _) = unsafe { mailbox::resume(&job, runner, max_throughput) };
    policy_call(|| {
        // SAFETY: as above.
        let mut me = unsafe { inner.ctx(index, core) };
        p.after_resume(&mut me, &job, r);
        match r {
            Resumable::ResumeLater => p.resume_job_later(&mut me, job),
            Resumable::Done => p.after_completion(&mut me, &job),
            Resumable::AwaitingMessage | Resumable::ShutdownExecutionUnit => {}
        }
    });
}

/// Runs policy code with CURRENT cleared: a send it makes (or a destructor it runs) is a
/// central enqueue, never a second context of this worker.
#[inline]
fn policy_call<R>(f: impl FnOnce() -> R) -> R {
    let _outside = Enter::new(ptr::null(), 0);
    f()
}

impl<P: Policy> Sched for Inner<P> {
    #[inline]
    fn schedule(&self, core: &Core, job: Job) {
        match self.current_worker() {
            Some(i) => policy_call(|| {
                // SAFETY: we are inside a behaviour run by worker `i`'s thread (CURRENT), whose
                // loop holds no context across the job.
                let mut me = unsafe { self.ctx(i, core) };
                self.policy.internal_enqueue(&mut me, job)
            }),
            None => self.policy.central_enqueue(&self.sched(), job),
        }
    }

    #[inline]
    fn current_worker(&self) -> Option<usize> {
        let (inner, i) = CURRENT.with(Cell::get);
        ptr::eq(inner, (self as *const Self).cast()).then_some(i)
    }

    fn stop_workers(&self, started: usize) {
        let mut alive: BTreeSet<usize> = (0..started).collect();
        while let Some(&w) = alive.iter().next() {
            self.policy
                .external_enqueue(&self.sched(), w, Job::shutdown());
            // With stealing, another worker may take it: wait for whoever did.
            let mut g = self.shutdown.lock().unwrap();
            loop {
                if let Some(t) = g.take() {
                    alive.remove(&t);
                    break;
                }
                g = self.shutdown_cv.wait(g).unwrap();
            }
        }
    }

    fn run_once(&self, core: &Core) -> bool {
        assert!(
            self.current_worker().is_none(),
            "a behaviour of a caller-driven (testing) system waited for that system \
             (`JoinHandle::join`, `stop`, `run_once`): it would wait for itself"
        );
        let g = self.driver.lock().unwrap_or_else(|e| e.into_inner());
        if *g || core.life.aborting() {
            return false; // stopped: nothing runs any more
        }
        let _enter = Enter::new((self as *const Self).cast(), 0);
        // SAFETY: caller-driven: no worker threads; `driver` serialises the callers.
        let job = policy_call(|| self.policy.dequeue(&mut unsafe { self.ctx(0, core) }));
        let Some(job) = job else { return false };
        if job.is_shutdown() {
            return true;
        }
        let runner = Runner {
            index: 0,
            counters: core.counters_of(0),
            during: None, // one message per step: never a long job
        };
        // One message per step, as CAF's test coordinator runs them.
        // SAFETY: as above.
        unsafe { step(self, core, &runner, job, 1) };
        true
    }

    fn end_driving(&self) {
        *self.driver.lock().unwrap_or_else(|e| e.into_inner()) = true;
    }
}
