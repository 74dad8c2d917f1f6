//! Executors: where behaviours run and how messages reach them.
//!
//! - [`inverted`]: the message-centric ("inverted") executor of the Cforall actor system
//!   (seed 002): over-sharded message queues, gulping, copy-queue envelopes.
//! - [`centric`]: the actor-centric executor of CAF (seed 000): a mailbox per actor, an actor
//!   with mail is a *job*, and a policy ([`crate::policy::Policy`]) decides where jobs wait and
//!   who runs them.
//! - [`mailbox`]: the per-actor mailbox and the job that drains it, used by the actor-centric
//!   executor and by detached actors (their own thread) on either executor.
//!
//! Shared by all: [`envelope`] (the unit of work), [`copy_queue`] (envelopes by value),
//! [`actor_list`] (live actors, for shutdown), and [`Core`] (life cycle, statistics, detached
//! threads). An actor cell names its executor through [`Exec`]; behaviours run with a
//! [`WorkerRef`] for the thread that runs them.

pub(crate) mod actor_list;
pub(crate) mod centric;
pub(crate) mod copy_queue;
pub(crate) mod envelope;
pub(crate) mod inverted;
pub(crate) mod mailbox;

use crate::actor::cell::{Header, Status};
use crate::runtime::life::Life;
use crate::stats::{Counter, Counters, Stats};
use actor_list::Registry;
use crossbeam_utils::CachePadded;
use envelope::Envelope;
use mailbox::detached::Detached;
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// What every executor has: the life cycle, statistics, the registry of mailbox actors (all
/// actors of the actor-centric executor; detached actors on either) and their threads.
pub(crate) struct Core {
    pub(crate) life: Life,
    pub(crate) registry: Registry,
    pub(crate) detached: Detached,
    pub(crate) stats_on: bool,
    /// One block per worker (written by that worker only), then one for outside threads.
    pub(crate) counters: Box<[CachePadded<Counters>]>,
    pub(crate) external: CachePadded<Counters>,
}

impl Core {
    pub(crate) fn new(workers: usize, stats: bool) -> Self {
        Self {
            life: Life::new(),
            registry: Registry::new(workers * 4),
            detached: Detached::new(),
            stats_on: stats,
            counters: (0..workers)
                .map(|_| CachePadded::new(Counters::default()))
                .collect(),
            external: CachePadded::new(Counters::default()),
        }
    }

    pub(crate) fn workers(&self) -> usize {
        self.counters.len()
    }

    /// Worker `i`'s counters, if statistics are on.
    #[inline]
    pub(crate) fn counters_of(&self, i: usize) -> Option<&Counters> {
        self.stats_on.then(|| &*self.counters[i])
    }

    /// Closes the system to new actors (`drain`: let the live ones finish) and waits out every
    /// spawn that started before: each checks `closed` under a registry shard lock, and each
    /// shard lock is taken once here, after closing.
    pub(crate) fn close(&self, drain: bool) {
        self.life.close(drain);
        self.registry.locked_all();
    }

    /// Counts one event in the counter `pick` chooses, if statistics are on: worker `me()`'s
    /// (single writer, no locked instruction) or, on any other thread, the shared outside block.
    #[inline]
    pub(crate) fn count(
        &self,
        me: impl FnOnce() -> Option<usize>,
        pick: fn(&Counters) -> &Counter,
    ) {
        if self.stats_on {
            match me() {
                Some(i) => pick(&self.counters[i]).bump(1),
                None => pick(&self.external).add(1),
            }
        }
    }

    /// Statistics summed over all workers and outside threads.
    pub(crate) fn stats(&self) -> Option<Stats> {
        if !self.stats_on {
            return None;
        }
        let mut s = Stats {
            workers: self.workers(),
            ..Stats::default()
        };
        for c in self.counters.iter() {
            c.add_to(&mut s);
        }
        self.external.add_to(&mut s);
        Some(s)
    }
}

/// An actor cell's executor.
#[derive(Clone)]
pub(crate) enum Exec {
    Inverted(Arc<inverted::Executor>),
    Centric(Arc<centric::Executor>),
}

impl Exec {
    #[inline]
    pub(crate) fn core(&self) -> &Core {
        match self {
            Exec::Inverted(e) => &e.core,
            Exec::Centric(e) => &e.core,
        }
    }

    /// The index of the calling thread's worker, if it is one of this executor's.
    #[inline]
    pub(crate) fn current_worker(&self) -> Option<usize> {
        match self {
            Exec::Inverted(e) => inverted::worker::current_of(e).map(|w| w.index),
            Exec::Centric(e) => e.current_worker(),
        }
    }

    #[inline]
    pub(crate) fn closed(&self) -> bool {
        self.core().life.closed()
    }

    /// The ticket of a new actor: its message queue (inverted) or registry shard (mailbox).
    #[inline]
    pub(crate) fn next_ticket(&self) -> usize {
        match self {
            Exec::Inverted(e) => e.next_ticket(),
            Exec::Centric(e) => e.next_ticket(),
        }
    }

    /// Whether actors of this executor get a mailbox (every actor of the actor-centric one).
    #[inline]
    pub(crate) fn uses_mailboxes(&self) -> bool {
        matches!(self, Exec::Centric(_))
    }

    pub(crate) fn count_sent(&self) {
        self.core()
            .count(|| self.current_worker(), |c| &c.messages_sent);
    }

    pub(crate) fn count_created(&self) {
        self.core()
            .count(|| self.current_worker(), |c| &c.actors_created);
    }

    /// The message-queue executor, for an actor without a mailbox (only the message-centric
    /// executor has such actors).
    #[inline]
    fn queues(&self) -> &inverted::Executor {
        match self {
            Exec::Inverted(e) => e,
            Exec::Centric(_) => unreachable!("actor-centric actors have mailboxes"),
        }
    }

    /// Enqueues `env` for the actor with header `hdr`; gives it back if the actor no longer
    /// accepts messages.
    #[inline]
    pub(crate) fn push(&self, hdr: &Header, env: Envelope) -> Result<(), Envelope> {
        match hdr.mailbox() {
            Some(mb) => mailbox::push(self, hdr, mb, env),
            None => self.queues().push(hdr, env),
        }
    }

    /// Registers a fresh cell and queues its start envelope (see the executors' `register`).
    ///
    /// # Safety
    /// `hdr` is a fresh, unpublished cell's header; `take_ref` takes the system reference.
    pub(crate) unsafe fn register(
        &self,
        hdr: &Header,
        start: Envelope,
        take_ref: impl FnOnce(),
    ) -> Result<(), Envelope> {
        // SAFETY: forwarded contract.
        unsafe {
            match hdr.mailbox() {
                Some(mb) => mailbox::register(self, hdr, mb, start, take_ref),
                None => self.queues().register(hdr, start, take_ref),
            }
        }
    }

    /// Brings a `Destroyed` actor back with `install` queued behind its old mail.
    ///
    /// # Safety
    /// `take_ref` takes a new system reference for the cell (called only if one is needed).
    pub(crate) unsafe fn revive(
        &self,
        hdr: &Header,
        install: Envelope,
        take_ref: impl FnOnce(),
    ) -> Result<(), Envelope> {
        // SAFETY: forwarded contract.
        unsafe {
            match hdr.mailbox() {
                Some(mb) => mailbox::revive(self, hdr, mb, install, take_ref),
                None => self.queues().revive(hdr, install, take_ref),
            }
        }
    }

    /// Marks an actor terminal after a behaviour returned `status`, on the thread running it.
    /// `reclaim` builds the envelope that releases the system reference behind the actor's
    /// queued mail (message queues); a mailbox's job releases it itself.
    ///
    /// # Safety
    /// `hdr` is registered and alive; `reclaim` releases its system reference.
    pub(crate) unsafe fn retire(
        &self,
        hdr: &Header,
        status: Status,
        reclaim: impl FnOnce() -> Envelope,
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            match hdr.mailbox() {
                Some(mb) => mailbox::retire(self, hdr, mb, status),
                None => self.queues().retire(hdr, status, reclaim()),
            }
        }
    }

    /// Blocks until `done()` holds; re-checked each time an actor terminates. On a system driven
    /// by its caller (the testing policy) the waiting thread runs jobs meanwhile.
    pub(crate) fn wait_until(&self, mut done: impl FnMut() -> bool) {
        match self {
            Exec::Centric(e) if e.manual() => e.drive_until(&mut done),
            _ => self.core().life.wait_until(done),
        }
    }

    pub(crate) fn aborting(&self) -> bool {
        self.core().life.aborting()
    }

    pub(crate) fn live(&self) -> usize {
        self.core().life.live()
    }

    /// Hands a job to whoever runs it: its detached thread, or the policy.
    #[inline]
    pub(crate) fn schedule(&self, hdr: &Header, mb: &mailbox::Mailbox) {
        if let Some(unit) = mb.detached() {
            unit.wake();
            return;
        }
        match self {
            Exec::Centric(e) => e.schedule(mailbox::Job::of(hdr)),
            Exec::Inverted(_) => {
                unreachable!("mailbox actors of the inverted executor are detached")
            }
        }
    }
}

/// The thread running a behaviour: a worker of the inverted executor, or a mailbox runner (a
/// worker of the actor-centric executor, a detached actor's thread, or a testing driver).
#[derive(Clone, Copy)]
pub(crate) enum WorkerRef<'a> {
    Inverted(&'a inverted::worker::Worker),
    Mailbox(&'a mailbox::Runner<'a>),
}

impl WorkerRef<'_> {
    /// The worker index ([`crate::DETACHED`] on a detached actor's thread).
    #[inline]
    pub(crate) fn index(self) -> usize {
        match self {
            WorkerRef::Inverted(w) => w.index,
            WorkerRef::Mailbox(r) => r.index,
        }
    }

    /// This thread's counters, if statistics are on.
    #[inline]
    pub(crate) fn counters(&self) -> Option<&Counters> {
        match self {
            WorkerRef::Inverted(w) => w.counters(),
            WorkerRef::Mailbox(r) => r.counters,
        }
    }
}

/// Runs envelopes taken with `pop`, on the thread `w`, until `pop` gives `None` or `max` have
/// run; returns how many ran. Behaviour panics are caught per envelope where the actor is known;
/// this catches what is left (a message's or a finished actor's destructor), reports it and
/// goes on with the next envelope.
#[inline]
pub(crate) fn run_batch(
    mut pop: impl FnMut() -> Option<Envelope>,
    w: WorkerRef<'_>,
    max: usize,
) -> usize {
    let mut n = 0;
    loop {
        let r = catch_unwind(AssertUnwindSafe(|| {
            while n < max {
                let Some(e) = pop() else { return };
                n += 1;
                e.run(w);
            }
        }));
        match r {
            Ok(()) => return n,
            Err(p) => {
                report_panic("a destructor run by the executor", &*p);
                if let Some(c) = w.counters() {
                    c.panics.bump(1);
                }
            }
        }
    }
}

/// Reports a caught panic on standard error (the panic hook has printed its message already).
pub(crate) fn report_panic(what: &str, payload: &(dyn Any + Send)) {
    let msg = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("<non-string panic payload>");
    eprintln!("actorium: {what} panicked: {msg}");
}
