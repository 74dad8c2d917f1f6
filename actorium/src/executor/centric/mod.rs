//! The actor-centric executor (seed 000, CAF's scheduler): every actor owns a mailbox
//! ([`crate::executor::mailbox`]); a message to an idle actor makes it a *job*, scheduled once;
//! a worker runs a job for at most `max_throughput` messages, then the job is resumed later,
//! parks until the next message, or is done. Where jobs wait and who runs them is a
//! [`Policy`]'s business: [`stealing`], [`sharing`] and [`testing`] are built in, and users can
//! write their own.
//!
//! Files: [`policy`] (the public trait and the handles it gets), [`worker`] (the worker loop,
//! the shutdown handshake, driving by the caller), one file per built-in policy.

pub(crate) mod policy;
pub(crate) mod sharing;
pub(crate) mod stealing;
pub(crate) mod testing;
pub(crate) mod worker;

use super::mailbox::{self, Job};
use super::Core;
use crate::runtime::idle::IdleSleep;
use crossbeam_utils::CachePadded;
use policy::{Policy, Scheduler, WorkerCtx};
use std::cell::UnsafeCell;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

/// Settings of an actor-centric executor.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) workers: usize,
    pub(crate) stats: bool,
    pub(crate) max_throughput: usize,
}

/// The policy's state, typed. Worker threads hold it typed; the executor holds it as a
/// [`Sched`] trait object.
pub(crate) struct Inner<P: Policy> {
    pub(crate) policy: Arc<P>,
    pub(crate) coord: P::Coordinator,
    pub(crate) workers: Box<[P::Worker]>,
    /// Each worker's local data, touched only by that worker's thread (or the one driving a
    /// caller-driven policy, under `driver`).
    locals: Box<[CachePadded<UnsafeCell<P::Local>>]>,
    pub(crate) idle: IdleSleep,
    /// The worker that took the last shutdown job (CAF's `shutdown_helper`).
    shutdown: Mutex<Option<usize>>,
    shutdown_cv: Condvar,
    /// Serialises callers driving a caller-driven policy; true once the system has stopped
    /// (so a thread still waiting in `join` can no longer run a job during the cleanup).
    driver: Mutex<bool>,
}

// SAFETY: `locals[i]` is only accessed by worker i's thread (or by the caller holding `driver`
// for a caller-driven policy, which has no worker threads); the rest is `Sync` by the trait's
// bounds.
unsafe impl<P: Policy> Sync for Inner<P> {}
// SAFETY: as above; `P::Local: Send`.
unsafe impl<P: Policy> Send for Inner<P> {}

impl<P: Policy> Inner<P> {
    fn new(policy: Arc<P>, workers: usize) -> io::Result<Self> {
        let coord = policy.coordinator(workers);
        let (shared, locals): (Vec<_>, Vec<_>) = (0..workers)
            .map(|i| {
                let (w, l) = policy.worker(&coord, i);
                (w, CachePadded::new(UnsafeCell::new(l)))
            })
            .unzip();
        Ok(Self {
            idle: IdleSleep::new(workers)?,
            policy,
            coord,
            workers: shared.into(),
            locals: locals.into(),
            shutdown: Mutex::new(None),
            shutdown_cv: Condvar::new(),
            driver: Mutex::new(false),
        })
    }

    pub(crate) fn sched(&self) -> Scheduler<'_, P> {
        Scheduler { inner: self }
    }

    /// Worker `index`'s view.
    ///
    /// # Safety
    /// Called on worker `index`'s thread (or by the driver of a caller-driven policy), with no
    /// other `WorkerCtx` of that worker alive.
    pub(crate) unsafe fn ctx<'a>(&'a self, index: usize, core: &'a Core) -> WorkerCtx<'a, P> {
        WorkerCtx {
            sched: self.sched(),
            index,
            // SAFETY: caller contract: this thread is the only one using this worker's local.
            local: unsafe { &mut *self.locals[index].get() },
            counters: core.counters_of(index),
        }
    }
}

/// The type-erased face of [`Inner`] that the executor and cells use.
pub(crate) trait Sched: Send + Sync {
    /// An actor got mail: internal enqueue on one of our workers, central enqueue elsewhere.
    fn schedule(&self, core: &Core, job: Job);
    /// The index of the calling thread's worker, if it is one of ours.
    fn current_worker(&self) -> Option<usize>;
    /// Sends every worker a shutdown job and waits until each has taken one.
    fn stop_workers(&self, started: usize);
    /// Runs one job, one message long (as CAF's test coordinator), on the calling thread
    /// (caller-driven policies); whether there was one.
    fn run_once(&self, core: &Core) -> bool;
    /// Caller-driven: no job runs after this returns (waits for one that is running).
    fn end_driving(&self);
}

pub(crate) struct Executor {
    pub(crate) core: Core,
    sched: Arc<dyn Sched>,
    ticket: CachePadded<AtomicUsize>,
    pub(crate) max_throughput: usize,
    /// The policy is driven by its caller (no worker threads).
    manual: bool,
}

impl Executor {
    #[inline]
    pub(crate) fn next_ticket(&self) -> usize {
        self.ticket.fetch_add(1, Ordering::Relaxed)
    }

    #[inline]
    pub(crate) fn schedule(&self, job: Job) {
        self.sched.schedule(&self.core, job);
    }

    #[inline]
    pub(crate) fn current_worker(&self) -> Option<usize> {
        self.sched.current_worker()
    }

    pub(crate) fn manual(&self) -> bool {
        self.manual
    }

    /// Runs one job on the calling thread if the policy is caller-driven.
    pub(crate) fn run_once(&self) -> bool {
        self.manual && self.sched.run_once(&self.core)
    }

    /// Caller-driven: runs jobs until `done()` holds, waiting for outside threads when no job
    /// is ready.
    pub(crate) fn drive_until(&self, done: &mut dyn FnMut() -> bool) {
        while !done() {
            if !self.run_once() {
                self.core.life.wait_a_little(Duration::from_millis(1));
            }
        }
    }

    /// Starts shutting down: no spawn or respawn succeeds afterwards (the closed check is made
    /// under a registry shard lock, each of which is taken once here after closing).
    pub(crate) fn begin_shutdown(&self, drain: bool) {
        self.core.close(drain);
    }

    /// Ends the worker threads (CAF's shutdown handshake) and joins them.
    pub(crate) fn stop_workers(&self, threads: &mut Vec<thread::JoinHandle<()>>) {
        if !threads.is_empty() {
            self.sched.stop_workers(threads.len());
        }
        for t in threads.drain(..) {
            // Workers catch behaviour panics; a join error would be an actorium bug.
            t.join().expect("actorium worker thread panicked");
        }
        if self.manual {
            if !self.core.life.aborting() {
                // Release what terminal actors still hold (their last jobs), as workers would.
                while self.run_once() {}
            }
            self.sched.end_driving();
        }
    }

    /// After every thread stopped: stop live actors, drop their mail, release references.
    pub(crate) fn cleanup(&self) {
        mailbox::cleanup(&self.core);
    }
}

/// Starts an actor-centric executor with `policy`: the executor and its worker threads.
pub(crate) fn start<P: Policy>(
    policy: Arc<P>,
    cfg: &Config,
) -> io::Result<(Arc<Executor>, Vec<thread::JoinHandle<()>>)> {
    let manual = policy.driven_by_caller();
    let workers = if manual { 1 } else { cfg.workers };
    let inner = Arc::new(Inner::new(policy, workers)?);
    let exec = Arc::new(Executor {
        core: Core::new(workers, cfg.stats),
        sched: inner.clone(),
        ticket: CachePadded::new(AtomicUsize::new(0)),
        max_throughput: cfg.max_throughput,
        manual,
    });
    let mut threads = Vec::new();
    if !manual {
        for i in 0..workers {
            let (e, inn) = (exec.clone(), inner.clone());
            match thread::Builder::new()
                .name(format!("actorium-worker-{i}"))
                .spawn(move || worker::run(&e, &inn, i))
            {
                Ok(t) => threads.push(t),
                Err(err) => {
                    exec.begin_shutdown(false);
                    exec.stop_workers(&mut threads);
                    return Err(err);
                }
            }
        }
    }
    Ok((exec, threads))
}

/// A policy ready to start an executor (the builder keeps it type-erased).
pub(crate) trait Starter: Send + Sync {
    fn start(&self, cfg: &Config) -> io::Result<(Arc<Executor>, Vec<thread::JoinHandle<()>>)>;
    fn validate(&self) -> Result<(), String>;
    fn name(&self) -> &'static str;
}

pub(crate) struct PolicyStarter<P>(pub(crate) Arc<P>);

impl<P: Policy> Starter for PolicyStarter<P> {
    fn start(&self, cfg: &Config) -> io::Result<(Arc<Executor>, Vec<thread::JoinHandle<()>>)> {
        start(self.0.clone(), cfg)
    }

    fn validate(&self) -> Result<(), String> {
        self.0.validate()
    }

    fn name(&self) -> &'static str {
        std::any::type_name::<P>()
    }
}
