//! The actor-centric executor (CAF's scheduler manual: the C++ Actor Framework manual, section
//! "Scheduler"): every actor owns a mailbox ([`crate::executor::mailbox`]); a message to an idle
//! actor makes it a *job*, scheduled once; a worker runs a job for at most `max_throughput`
//! messages, then the job is resumed later, parks until the next message, or is done. Where jobs
//! wait and who runs them is a [`Policy`]'s business: [`stealing`], [`sharing`] and [`testing`] are
//! built in, and users can write their own.
//!
//! Files: [`policy`] (the public trait and the handles it gets), [`policy_unit`] (the executor's
//! unit of work on the runtime's worker loop, policy calls and their panics, the shutdown
//! handshake, driving by the caller), one file per built-in policy. This executor uses the
//! mailbox protocol, the core and the runtime.

pub(crate) mod policy;
pub(crate) mod policy_unit;
pub(crate) mod sharing;
pub(crate) mod stealing;
pub(crate) mod testing;

use super::mailbox::{self, Job, JobScheduler};
use crate::core::envelope::Envelope;
use crate::core::mailbox::Mailbox;
use crate::core::Stats;
use crate::core::{
    DetachedLink, ExecRef, Executor as Exec, Header, Placement, Shared, Sibling, Status,
};
use crate::runtime::compaction::Mode;
use crate::runtime::counters::Counters;
use crate::runtime::pool::{Pool, ResizeError};
use crossbeam_utils::CachePadded;
use policy::{Policy, Scheduler, WorkerCtx};
use std::cell::UnsafeCell;
use std::collections::BTreeSet;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Settings of an actor-centric executor.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) workers: usize,
    /// The most workers a resize may give it (rows of the worker table).
    pub(crate) max_workers: usize,
    pub(crate) max_throughput: usize,
}

/// What the executor keeps per worker in the worker table: the policy's worker data, and its
/// local data (touched only by that worker's thread, or by the caller driving a caller-driven
/// policy, under `driver`).
pub(crate) struct WorkerSlot<P: Policy> {
    pub(crate) worker: P::Worker,
    local: UnsafeCell<P::Local>,
}

// SAFETY: `local` is only accessed by its worker's thread (or by the caller holding `driver`
// for a caller-driven policy, which has no worker threads); `P::Worker: Sync`.
unsafe impl<P: Policy> Sync for WorkerSlot<P> {}
// SAFETY: `P::Worker: Send`, `P::Local: Send`.
unsafe impl<P: Policy> Send for WorkerSlot<P> {}

/// The actor-centric executor with policy `P`.
pub(crate) struct Executor<P: Policy> {
    pub(crate) policy: Arc<P>,
    /// On cache lines of its own: a policy's coordinator data is written on every enqueue
    /// (work sharing's queue and lock), the fields around it are read on every send and job
    /// (sharing a line, they slow every send measurably).
    pub(crate) coord: CachePadded<P::Coordinator>,
    pub(crate) pool: Pool<WorkerSlot<P>>,
    pub(crate) shared: Arc<Shared>,
    ticket: CachePadded<AtomicUsize>,
    pub(crate) max_throughput: usize,
    /// The policy keeps the jobs of internal enqueues and resumes on the calling worker
    /// ([`Policy::enqueues_locally`]): those run without the resize lock.
    local_enqueues: bool,
    /// The policy is driven by its caller (no worker threads).
    manual: bool,
    /// Workers that have exited (the shutdown handshake waits on it).
    exited: Mutex<BTreeSet<usize>>,
    /// Panics of `Policy::worker_removed`, caught inside the leaving worker's read section of
    /// the resize lock and handled (reported, the system failed) once it is out of it: the
    /// report runs the user's event hook, which may send, and a send may need that section.
    pub(crate) left_panics: Mutex<Vec<Box<dyn std::any::Any + Send>>>,
    exited_cv: Condvar,
    /// Serialises callers driving a caller-driven policy; true once the system has stopped
    /// (so a thread still waiting in `join` can no longer run a job during the cleanup).
    driver: Mutex<bool>,
    detached: DetachedLink,
}

/// Why an executor could not start.
pub(crate) enum StartError {
    /// The operating system refused a thread or an event fd.
    Os(io::Error),
    /// The policy panicked while building its data (the message says where).
    Policy(String),
}

impl<P: Policy> Executor<P> {
    fn new(policy: Arc<P>, cfg: &Config, shared: Arc<Shared>) -> Result<Self, StartError> {
        let manual = policy.driven_by_caller();
        let workers = if manual { 1 } else { cfg.workers };
        let built = catch_unwind(AssertUnwindSafe(|| {
            let coord = policy.coordinator(workers);
            let slots: Vec<_> = (0..workers).map(|i| policy.worker(&coord, i)).collect();
            (
                coord,
                slots,
                (policy.helps_with_tasks(), policy.enqueues_locally()),
            )
        }));
        let (coord, slots, (helps, local_enqueues)) = built.map_err(|p| {
            StartError::Policy(format!(
                "the scheduling policy `{}` panicked while building its data \
                 (`coordinator`, `worker`, `helps_with_tasks` or `enqueues_locally`): {}",
                std::any::type_name::<P>(),
                crate::core::panic_message(&*p)
            ))
        })?;
        let mut slots = slots.into_iter();
        let capacity = if manual { 1 } else { cfg.max_workers };
        // (No compaction here: the CPU count is unused.)
        let pool = Pool::new(workers, capacity, shared.stats_on, Mode::Off, 1, |_| {
            let (worker, local) = slots.next().expect("one per worker");
            WorkerSlot {
                worker,
                local: UnsafeCell::new(local),
            }
        })
        .map_err(StartError::Os)?;
        if manual || !helps {
            pool.no_thieves();
        }
        Ok(Self {
            policy,
            coord: CachePadded::new(coord),
            pool,
            shared,
            ticket: CachePadded::new(AtomicUsize::new(0)),
            max_throughput: cfg.max_throughput,
            local_enqueues,
            manual,
            exited: Mutex::new(BTreeSet::new()),
            left_panics: Mutex::new(Vec::new()),
            exited_cv: Condvar::new(),
            driver: Mutex::new(false),
            detached: DetachedLink::default(),
        })
    }

    /// Builds the executor and starts its worker threads (none for a caller-driven policy).
    pub(crate) fn start(
        policy: Arc<P>,
        cfg: &Config,
        shared: Arc<Shared>,
    ) -> Result<Arc<Self>, StartError> {
        let exec = Arc::new(Self::new(policy, cfg, shared)?);
        if !exec.manual {
            // The pool keeps the body for the workers a resize adds: a weak reference, so the
            // executor does not own itself; each thread holds a strong one while it runs.
            let weak = Arc::downgrade(&exec);
            let body = move |i| {
                if let Some(e) = weak.upgrade() {
                    crate::runtime::worker::run(&*e, i)
                }
            };
            if let Err(err) = exec.pool.spawn(body) {
                exec.shared.close(false);
                exec.begin_shutdown(false);
                exec.join_threads(false);
                exec.cleanup();
                return Err(StartError::Os(err));
            }
        }
        Ok(exec)
    }

    pub(crate) fn sched(&self) -> Scheduler<'_, P> {
        Scheduler { inner: self }
    }

    /// Worker `index`'s view.
    ///
    /// # Safety
    /// Called on worker `index`'s thread (or by the driver of a caller-driven policy), with no
    /// other `WorkerCtx` of that worker alive.
    pub(crate) unsafe fn ctx(&self, index: usize) -> WorkerCtx<'_, P> {
        WorkerCtx {
            sched: self.sched(),
            index,
            // SAFETY: caller contract: this thread is the only one using this worker's local.
            local: unsafe { &mut *self.pool.data(index).local.get() },
            counters: self.pool.counters(index),
        }
    }

    /// The index of the calling thread's worker, if it is one of ours.
    #[inline]
    pub(crate) fn current_worker(&self) -> Option<usize> {
        // SAFETY: only the index is kept.
        unsafe { crate::runtime::context::current::<Self>(&self.pool) }.map(|w| w.index)
    }

    /// Caller-driven: runs jobs until `done()` holds, waiting for outside threads when no job
    /// is ready.
    fn drive_until(&self, done: &mut dyn FnMut() -> bool) {
        while !done() {
            if !self.run_once() {
                self.shared.life.wait_a_little(Duration::from_millis(1));
            }
        }
    }
}

impl<P: Policy> JobScheduler for Executor<P> {
    fn shared(&self) -> &Shared {
        &self.shared
    }

    /// An actor got mail: internal enqueue on one of our workers, central enqueue elsewhere.
    #[inline]
    fn schedule(&self, hdr: &Header) {
        self.schedule_job(Job::of(hdr));
    }

    #[inline]
    fn my_counters(&self) -> Option<&Counters> {
        self.current_worker().and_then(|i| self.pool.counters(i))
    }
}

impl<P: Policy> Exec for Executor<P> {
    fn shared(&self) -> &Shared {
        &self.shared
    }

    fn sibling(&self, p: Placement) -> Sibling {
        self.detached.sibling(p)
    }

    fn attach_detached(&self, d: ExecRef) {
        self.detached.attach(d);
    }

    #[inline]
    fn next_ticket(&self) -> usize {
        self.ticket.fetch_add(1, Ordering::Relaxed)
    }

    fn new_mailbox(&self) -> Option<Box<Mailbox>> {
        Some(Box::new(Mailbox::new(None)))
    }

    fn push(&self, hdr: &Header, env: Envelope) -> Result<(), Envelope> {
        mailbox::push(self, hdr, env)
    }

    fn schedule(&self, hdr: &Header) {
        JobScheduler::schedule(self, hdr)
    }

    fn my_counters(&self) -> Option<&Counters> {
        JobScheduler::my_counters(self)
    }

    unsafe fn register(&self, hdr: &Header, start: Envelope) -> Result<(), Envelope> {
        // SAFETY: forwarded contract.
        unsafe { mailbox::register(self, hdr, start) }
    }

    unsafe fn revive(&self, hdr: &Header, install: Envelope) -> Result<(), Envelope> {
        // SAFETY: forwarded contract.
        unsafe { mailbox::revive(self, hdr, install) }
    }

    unsafe fn retire(&self, hdr: &Header, status: Status) {
        // SAFETY: forwarded contract.
        unsafe { mailbox::retire(&self.shared, hdr, status) }
    }

    /// On a system driven by its caller (the testing policy) the waiting thread runs jobs.
    fn driven_by_caller(&self) -> bool {
        self.manual
    }

    fn wait_until(&self, done: &mut dyn FnMut() -> bool) {
        if self.manual {
            self.drive_until(done)
        } else {
            self.shared.life.wait_until(done)
        }
    }

    fn workers(&self) -> usize {
        self.pool.limit()
    }

    fn table(&self) -> Option<&crate::runtime::worker_table::WorkerTable> {
        Some(self.pool.table())
    }

    fn add_workers(&self, k: usize) -> Result<usize, ResizeError> {
        if self.manual {
            return Err(ResizeError::Unsupported(
                "a caller-driven policy runs its jobs on the calling thread, and has no workers",
            ));
        }
        self.pool.add(self, k, |i| {
            let p = &*self.policy;
            catch_unwind(AssertUnwindSafe(|| p.worker(&self.coord, i)))
                .map(|(worker, local)| WorkerSlot {
                    worker,
                    local: UnsafeCell::new(local),
                })
                .map_err(|e| {
                    ResizeError::Policy(format!(
                        "the scheduling policy `{}` panicked while building worker {i}'s data \
                         (`worker`): {}",
                        std::any::type_name::<P>(),
                        crate::core::panic_message(&*e)
                    ))
                })
        })
    }

    fn remove_workers(&self, k: usize) -> Result<usize, ResizeError> {
        if self.manual {
            return Err(ResizeError::Unsupported(
                "a caller-driven policy runs its jobs on the calling thread, and has no workers",
            ));
        }
        self.pool.remove(self, k)
    }

    fn is_actor_centric(&self) -> bool {
        true
    }

    fn run_once(&self) -> bool {
        self.manual && self.run_one_job()
    }

    /// A dropped system: wake the sleeping workers so they see it and exit (a stopping one
    /// keeps working until each takes its shutdown job).
    fn begin_shutdown(&self, drain: bool) {
        if !drain {
            self.pool.wake_all();
        }
    }

    /// Ends the worker threads (CAF's shutdown handshake) and joins them.
    fn join_threads(&self, drain: bool) {
        if !drain {
            self.pool.unpark_all();
        }
        let threads = self.pool.take_threads();
        if !threads.is_empty() {
            self.stop_workers(threads);
        }
        if self.manual {
            if drain && !self.shared.life.aborting() {
                // Release what terminal actors still hold (their last jobs), as workers would.
                while self.run_once() {}
            }
            *self.driver.lock().unwrap_or_else(|e| e.into_inner()) = true;
        }
        // (Threads left behind in a failed policy may still take tasks.)
        if !self.shared.abandoned() {
            self.pool.workers_exited();
        }
    }

    fn cleanup(&self) {
        // Threads left behind in a failed policy may still run jobs and park: free nothing.
        if self.shared.abandoned() {
            return;
        }
        mailbox::cleanup(&self.shared);
        self.pool.close();
    }

    fn add_stats(&self, s: &mut Stats) {
        s.add_pool(self.pool.counter_values());
    }
}

/// A policy ready to start an executor (the builder keeps it type-erased).
pub(crate) trait Starter: Send + Sync {
    fn start(&self, cfg: &Config, shared: Arc<Shared>) -> Result<ExecRef, StartError>;
    fn validate(&self) -> Result<(), String>;
    fn name(&self) -> &'static str;
}

pub(crate) struct PolicyStarter<P>(pub(crate) Arc<P>);

impl<P: Policy> Starter for PolicyStarter<P> {
    fn start(&self, cfg: &Config, shared: Arc<Shared>) -> Result<ExecRef, StartError> {
        Ok(ExecRef::from_arc(Executor::start(
            self.0.clone(),
            cfg,
            shared,
        )?))
    }

    fn validate(&self) -> Result<(), String> {
        catch_unwind(AssertUnwindSafe(|| self.0.validate())).unwrap_or_else(|p| {
            Err(format!(
                "the scheduling policy `{}` panicked in `validate`: {}",
                self.name(),
                crate::core::panic_message(&*p)
            ))
        })
    }

    fn name(&self) -> &'static str {
        std::any::type_name::<P>()
    }
}
