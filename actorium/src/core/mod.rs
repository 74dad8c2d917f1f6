//! The core of the executors: what every executor is built from, and the interface it offers
//! the layers above.
//!
//! - [`envelope`]: the unit of work a send packages (message inline, static vtable);
//! - [`copy_queue`]: envelopes stored by value (after the Cforall actor system: Colby Parsons,
//!   MMath thesis, Waterloo 2023), with reclamation;
//! - [`header`]: the executor's part of an actor cell, the actor's [`Status`] and the
//!   type-erased cell operations;
//! - [`mailbox`]: the per-actor mailbox storage (a locked inbox and a batch) of the executors
//!   that schedule actors one by one;
//! - [`actor_list`]: the intrusive lists of live actors, for shutdown;
//! - [`monitors`]: the monitors set on an actor, notified once when it ends;
//! - [`events`]: the system's event hook (panics, dead letters, supervisors' decisions);
//! - [`stats`]: the public [`Stats`], summed from the runtime's counters and each
//!   executor's own;
//! - [`Executor`]: the interface through which the actor API and the system use an executor
//!   (spawn/register, push, revive, retire, wait, shut down). Cells hold an
//!   [`exec_ref::ExecRef`] (a counted reference with a hand-written vtable for the send path),
//!   so a new executor needs no change here or above.
//!
//! Layering: this module uses [`crate::runtime`] only.

pub(crate) mod actor_list;
pub(crate) mod copy_queue;
pub(crate) mod envelope;
pub(crate) mod events;
pub(crate) mod exec_ref;
pub(crate) mod header;
pub(crate) mod mailbox;
pub(crate) mod monitors;
pub(crate) mod stats;

use crate::runtime::counters::{Counter, Counters};
use crate::runtime::life::Life;
use crate::runtime::pool::ResizeError;
use crate::runtime::timer_thread::Timers;
use actor_list::Registry;
use crossbeam_utils::CachePadded;
use envelope::Envelope;
pub use events::{ActorId, Event};
pub(crate) use exec_ref::ExecRef;
pub(crate) use header::{Header, Status, HOT_END};
pub use monitors::ExitReason;
use monitors::Monitors;
pub(crate) use stats::Stats;
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// The worker index a detached actor's thread reports (it is no worker of a pool).
pub(crate) const DETACHED: usize = usize::MAX;

/// Where an actor runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// On the system's worker pool.
    Pooled,
    /// On a thread of its own.
    Detached,
}

/// What the executors of one system share: the life cycle (run state, live actors, waits),
/// the registry of mailbox actors, and the statistics of threads that are no pool worker.
pub(crate) struct Shared {
    pub(crate) life: Life,
    /// Live-actor lists of every mailbox actor (actor-centric and detached).
    pub(crate) registry: Registry,
    pub(crate) stats_on: bool,
    /// Counters of threads outside the pool (senders from `main`, detached threads).
    pub(crate) external: CachePadded<Counters>,
    /// Threads of the system were left behind (a failed policy): cleanups free nothing.
    abandoned: AtomicBool,
    /// The system's timers (their thread starts with the first timer).
    pub(crate) timers: Timers,
    /// Who watches which actor's end.
    pub(crate) monitors: Monitors,
    /// A graceful shutdown began: ended actors are not brought back (`respawn` is refused),
    /// so every actor it asked to end stays ended.
    pub(crate) draining: AtomicBool,
    /// A graceful shutdown was requested from a handle (`SystemHandle::request_shutdown`),
    /// and the thread that asks the actors to end (joined when the system stops).
    pub(crate) shutdown_requested: AtomicBool,
    pub(crate) shutdown_helper: std::sync::Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Where events go ([`crate::ActorSystemBuilder::on_event`]); emptied when the system
    /// has stopped (a hook holding an address would keep the executors alive).
    events: std::sync::Mutex<Option<events::EventHook>>,
    /// Whether a hook was set: without one, reports (a dead letter is one) take no lock.
    has_hook: bool,
}

impl Shared {
    pub(crate) fn new(workers: usize, stats_on: bool) -> Self {
        Self {
            life: Life::new(),
            registry: Registry::new(workers * 4),
            stats_on,
            external: CachePadded::new(Counters::default()),
            abandoned: AtomicBool::new(false),
            timers: Timers::default(),
            monitors: Monitors::default(),
            draining: AtomicBool::new(false),
            shutdown_requested: AtomicBool::new(false),
            shutdown_helper: std::sync::Mutex::new(None),
            events: std::sync::Mutex::new(None),
            has_hook: false,
        }
    }

    /// Sets the event hook (before the system starts).
    pub(crate) fn with_event_hook(self, hook: Option<events::EventHook>) -> Self {
        Self {
            has_hook: hook.is_some(),
            events: std::sync::Mutex::new(hook),
            ..self
        }
    }

    /// Drops the event hook (the system has stopped).
    pub(crate) fn drop_event_hook(&self) {
        let hook = self.events.lock().unwrap_or_else(|e| e.into_inner()).take();
        drop(hook);
    }

    /// Whether a graceful shutdown began (see `draining`).
    pub(crate) fn draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// Whether a new actor is refused: the system is closed, or a graceful shutdown began and
    /// the calling thread runs none of this system's work (its behaviours may still spawn:
    /// their children are asked to end too). Checked again under the lock that registers the
    /// actor, which the shutdown's look at every actor takes after setting `draining`: an
    /// actor from outside is either refused or seen and asked.
    pub(crate) fn refuses_spawn(&self) -> bool {
        self.life.closed() || (self.draining() && !crate::runtime::context::runs_for(self.id()))
    }

    /// Reports `e` to the system's hook, or the default way.
    pub(crate) fn report(&self, e: &Event<'_>) {
        let hook = if self.has_hook {
            self.events
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()
        } else {
            None
        };
        events::report(hook.as_ref(), e);
    }

    /// Reports a panic caught in `what` (of an actor of type `actor`).
    pub(crate) fn report_panic(
        &self,
        actor: Option<&'static str>,
        what: &str,
        payload: &(dyn Any + Send),
    ) {
        self.report(&Event::Panic {
            actor,
            what,
            message: panic_message(payload),
        });
    }

    /// Some of the system's threads could not be stopped and may still touch its actors: the
    /// cleanups leave everything in place (a reported leak).
    pub(crate) fn abandon(&self) {
        self.abandoned.store(true, Ordering::SeqCst);
    }

    /// Whether [`Self::abandon`] was called.
    pub(crate) fn abandoned(&self) -> bool {
        self.abandoned.load(Ordering::SeqCst)
    }

    /// The identity of the system these executors form (for `runtime::context::runs_for`).
    pub(crate) fn id(&self) -> *const () {
        (self as *const Self).cast()
    }

    /// Counts one event in the counter `pick` chooses, if statistics are on: in `mine` (the
    /// calling worker's own block: single writer, no locked instruction) or, when the caller
    /// is no worker, in the shared outside block.
    #[inline]
    pub(crate) fn count(&self, mine: Option<&Counters>, pick: fn(&Counters) -> &Counter) {
        if self.stats_on {
            match mine {
                Some(c) => pick(c).bump(1),
                None => pick(&self.external).add(1),
            }
        }
    }

    /// Undelivered mail a graceful end found queued ([`Undelivered`]): reported as dead
    /// letters, one event per actor type, and counted in the statistics. A dropped system
    /// (aborting) reports nothing: its mail is dropped with it, as documented.
    pub(crate) fn report_undelivered(&self, u: Undelivered) {
        if self.life.aborting() {
            return;
        }
        for (actor, count) in u.0 {
            if self.stats_on {
                self.external.dead_letters.add(count);
            }
            self.report(&Event::DeadLetters { actor, count });
        }
    }

    /// Closes the system to new actors (`drain`: let the live ones finish) and waits out every
    /// mailbox-actor registration that started before: each checks `closed` under a registry
    /// shard lock, and each shard lock is taken once here, after closing.
    pub(crate) fn close(&self, drain: bool) {
        self.life.close(drain);
        self.registry.locked_all();
    }
}

/// Messages found queued when a system's executors clean up, by actor type (in the order
/// first seen), for [`Shared::report_undelivered`]: a graceful end (`stop`, `shutdown`)
/// reports every accepted message it did not deliver. Some can be left: an actor-centric
/// policy may hand a worker its shutdown job before an ended actor's job that still holds
/// mail (a job that used up its `max_throughput` goes back behind it).
#[derive(Default)]
pub(crate) struct Undelivered(Vec<(&'static str, u64)>);

impl Undelivered {
    /// Counts the messages of `q`, taken by its executor from a queue or mailbox at cleanup.
    ///
    /// # Safety
    /// Every envelope of `q` targets a live cell (its system reference is held while the
    /// envelope is queued, as at every point of the cleanup before the envelopes are
    /// disposed of).
    pub(crate) unsafe fn count(&mut self, q: &copy_queue::CopyQueue) {
        q.for_each_message_target(|t| {
            // SAFETY: a cell is `repr(C)` with its header first (`actor/cell/mod.rs`), and the
            // caller's contract keeps it alive.
            let name = (unsafe { &*t.cast::<Header>() }.type_name_fn())();
            match self.0.iter_mut().find(|(n, _)| std::ptr::eq(*n, name)) {
                Some((_, c)) => *c += 1,
                None => self.0.push((name, 1)),
            }
        });
    }
}

/// A pooled executor's link to its system's detached executor: what both pooled executors
/// answer for [`Executor::sibling`] and [`Executor::attach_detached`].
#[derive(Default)]
pub(crate) struct DetachedLink(OnceLock<ExecRef>);

impl DetachedLink {
    pub(crate) fn attach(&self, d: ExecRef) {
        let _ = self.0.set(d);
    }

    /// The sibling of a pooled executor for placement `p`.
    pub(crate) fn sibling(&self, p: Placement) -> Sibling {
        match p {
            Placement::Pooled => Sibling::This,
            Placement::Detached => match self.0.get() {
                Some(d) => Sibling::Other(d.clone()),
                None => Sibling::Gone,
            },
        }
    }
}

/// The executor of another placement on the same system, as [`Executor::sibling`] gives it.
pub(crate) enum Sibling {
    /// The executor asked is that one.
    This,
    Other(ExecRef),
    /// It is gone (the system was dropped).
    Gone,
}

/// What a new actor's header takes from its executor ([`Executor::spawn_parts`]).
pub(crate) struct SpawnParts {
    /// The system counts statistics.
    pub(crate) stats_on: bool,
    /// [`Executor::next_ticket`].
    pub(crate) ticket: usize,
    /// [`Executor::new_mailbox`].
    pub(crate) mbox: Option<Box<mailbox::Mailbox>>,
}

/// What an executor offers the actor API and the system. The actor API calls the first group
/// (on any thread); the system calls the second (from the thread that stops or drops it, or a
/// helper thread when it is dropped from inside).
pub(crate) trait Executor: Send + Sync + 'static {
    /// The state shared with the other executors of the system.
    fn shared(&self) -> &Shared;

    /// The executor for actors placed `p` on this system.
    fn sibling(&self, p: Placement) -> Sibling;

    /// Tells the pooled executor which executor runs the system's detached actors (once, when
    /// the system starts). The detached executor ignores it.
    fn attach_detached(&self, _detached: ExecRef) {}

    /// The ticket of a new actor: its message queue, or its registry shard.
    fn next_ticket(&self) -> usize;

    /// The mailbox of a new actor, if this executor schedules actors by mailbox.
    fn new_mailbox(&self) -> Option<Box<mailbox::Mailbox>>;

    /// What a spawn needs before the cell exists, in one call: `None` once the system is
    /// closed, or from outside it once a graceful shutdown began. (Through a trait object this is one call through the table where the four it
    /// makes would be four; and inline always: the default executor's direct spawn made it a
    /// call of its own.)
    #[inline(always)]
    fn spawn_parts(&self) -> Option<SpawnParts> {
        let shared = self.shared();
        if shared.refuses_spawn() {
            return None;
        }
        Some(SpawnParts {
            stats_on: shared.stats_on,
            ticket: self.next_ticket(),
            mbox: self.new_mailbox(),
        })
    }

    /// Enqueues `env` for the actor `hdr`; gives it back if the actor no longer accepts
    /// messages. Counts the send.
    ///
    /// An actor with a mailbox (one from [`Self::new_mailbox`]) is sent to by the mailbox
    /// protocol of `executor/mailbox` whatever its executor, which then only makes the job
    /// ([`Self::schedule`]): a mailbox executor's `push` must be that protocol.
    fn push(&self, hdr: &Header, env: Envelope) -> Result<(), Envelope>;

    /// Mailbox executors: the mailbox actor `hdr` got mail while idle; make its job.
    fn schedule(&self, _hdr: &Header) {
        unreachable!("only executors that make mailboxes schedule jobs")
    }

    /// The calling thread's own counters (a worker's of this executor), if statistics are on.
    fn my_counters(&self) -> Option<&Counters> {
        None
    }

    /// Registers a fresh cell (live count, live-actor list, the system reference through
    /// [`Header::retain`]) and queues its `start` envelope; refused, giving `start` back, once
    /// the system is closed. Counts the actor.
    ///
    /// # Safety
    /// `hdr` is a fresh, unpublished cell's header, made with this executor's mailbox (if any).
    unsafe fn register(&self, hdr: &Header, start: Envelope) -> Result<(), Envelope>;

    /// Brings a `Destroyed` actor back with `install` queued behind its old mail; refused if the
    /// actor is not `Destroyed` or the system is closed.
    ///
    /// # Safety
    /// `hdr` belongs to a cell of this executor, kept alive by the caller.
    unsafe fn revive(&self, hdr: &Header, install: Envelope) -> Result<(), Envelope>;

    /// Marks an actor terminal after a behaviour returned `status`, on the thread running it,
    /// and arranges for the system reference to be released behind its queued mail.
    ///
    /// # Safety
    /// Called on the thread running the actor's behaviour; the actor is registered and alive.
    unsafe fn retire(&self, hdr: &Header, status: Status);

    /// Blocks until `done()` holds; re-checked each time an actor terminates. A caller-driven
    /// system runs jobs on the waiting thread meanwhile.
    fn wait_until(&self, done: &mut dyn FnMut() -> bool) {
        self.shared().life.wait_until(done)
    }

    // --- For the system ---

    /// Worker threads.
    fn workers(&self) -> usize;

    /// Adds `k` workers while running ("Manual Resizing" in the Cforall runtime: Thierry
    /// Delisle, PhD thesis, Waterloo 2022, chapter "Scheduling in practice"); the new count.
    fn add_workers(&self, _k: usize) -> Result<usize, ResizeError> {
        Err(ResizeError::Unsupported("this executor has no worker pool"))
    }

    /// Removes `k` workers while running; the new count. Waits for their threads to end,
    /// unless called on one of this executor's workers.
    fn remove_workers(&self, _k: usize) -> Result<usize, ResizeError> {
        Err(ResizeError::Unsupported("this executor has no worker pool"))
    }

    /// Message queues (0 where actors have mailboxes instead).
    fn queues(&self) -> usize {
        0
    }

    /// The home worker of message queue `q`, if this executor has message queues and `q`
    /// exists.
    fn worker_of_queue(&self, _q: usize) -> Option<usize> {
        None
    }

    /// The queue of the `k`-th spawn from outside the workers on a fresh system, if this
    /// executor has message queues.
    fn queue_of_spawn(&self, _k: usize) -> Option<usize> {
        None
    }

    /// Whether actors are scheduled one by one from mailboxes (the actor-centric executor).
    fn is_actor_centric(&self) -> bool {
        false
    }

    /// Calls `f`, under the lock of the list that holds it, with each live actor this
    /// executor lists itself (the message-centric executor lists actors on their queues;
    /// mailbox actors are on [`Shared::registry`], which the caller visits once).
    fn for_each_queued_actor(&self, _f: &mut dyn FnMut(&Header)) {}

    /// Whether jobs run only when the caller drives the system (`run_once`): a blocking wait
    /// must then drive it ([`Self::wait_until`] does).
    fn driven_by_caller(&self) -> bool {
        false
    }

    /// The worker pool's runtime half, where fork/join tasks run (none: no pool).
    fn table(&self) -> Option<&crate::runtime::worker_table::WorkerTable> {
        None
    }

    /// Caller-driven systems: runs one job on the calling thread; whether there was one.
    fn run_once(&self) -> bool {
        false
    }

    /// Starts shutting down (after [`Shared::close`]): wakes what must see it.
    fn begin_shutdown(&self, drain: bool);

    /// Ends this executor's threads and joins them (`drain`: after the work left).
    fn join_threads(&self, drain: bool);

    /// After every thread of the system stopped: stops the actors still alive, disposes of
    /// every queued envelope, releases every system reference and kernel resource.
    fn cleanup(&self);

    /// Adds this executor's statistics (its workers' counters) into `s`.
    fn add_stats(&self, _s: &mut Stats) {}
}

/// The thread running a behaviour, as behaviours and envelopes see it.
#[derive(Clone, Copy)]
pub(crate) struct WorkerRef<'a> {
    /// The worker index, or [`DETACHED`] on a detached actor's thread.
    pub(crate) index: usize,
    /// This thread's counters (its own, written by it alone), if statistics are on.
    pub(crate) counters: Option<&'a Counters>,
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
                drop_payload(p);
                if let Some(c) = w.counters {
                    c.panics.bump(1);
                }
            }
        }
    }
}

/// Reports a caught panic where no system's hook is at hand (the default way: see
/// [`events`]).
pub(crate) fn report_panic(what: &str, payload: &(dyn Any + Send)) {
    events::report(
        None,
        &Event::Panic {
            actor: None,
            what,
            message: panic_message(payload),
        },
    );
}

pub(crate) use crate::runtime::drop_payload;

/// The message of a panic payload.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("<non-string panic payload>")
}
