//! The per-actor mailbox and the job that drains it (seed 000: "each actor owns a mailbox; a
//! message to an idle actor makes it ready and schedules it once as a job"). Used by every actor
//! of the actor-centric executor and by detached actors on either executor. `README.md` here
//! explains the protocol and why a message is never stranded nor run twice.
//!
//! A mailbox is a spinlock over a [`CopyQueue`] of envelopes (the *inbox*, so a send allocates
//! nothing, as in the message-centric executor) and two flags, plus a second copy queue, the
//! *batch*, owned by whichever thread runs the actor's job. A job *gulps*: it swaps the whole
//! inbox into its batch under the lock and runs the batch without it.
//!
//! Invariants:
//! - `scheduled` is true exactly while a job for the actor exists (queued in a policy, running,
//!   or pending on a detached thread): a send sets it and schedules a job only if it was false;
//!   a job clears it only under the lock after finding the inbox empty. So at most one job
//!   exists per actor, and one behaviour runs at a time;
//! - `sys_ref`: the system's reference to the cell is held (the actor is on the registry). Only
//!   a job releases it, when it parks a terminal actor; a respawn takes a new one if needed;
//! - the batch is touched only by the thread running the actor's job (or by shutdown after every
//!   thread has stopped).

pub(crate) mod detached;

use super::copy_queue::CopyQueue;
use super::envelope::Envelope;
use super::{run_batch, Core, Exec, WorkerRef};
use crate::actor::cell::{Header, Status};
use crate::executor::centric::policy::LONG_JOB_CHECK;
use crate::loom::UnsafeCell;
use crate::runtime::spin::{SpinGuard, SpinLock};
use crate::stats::Counters;
use detached::DetachedUnit;
use std::fmt;
use std::sync::Arc;

/// What a job's run ended with (CAF's `resumable::resume_result`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Resumable {
    /// The actor used its `max_throughput` and has more mail: run it again later.
    ResumeLater,
    /// The mailbox is empty: the actor waits for its next message (it is scheduled again by
    /// the send that brings it).
    AwaitingMessage,
    /// The actor terminated and its last message was processed; the job is gone.
    Done,
    /// A request from the runtime: the worker that ran it must exit.
    ShutdownExecutionUnit,
}

/// A unit of work for a [`crate::policy::Policy`]: an actor that has mail to process, or the
/// runtime's request that the worker taking it shuts down. Policies store jobs and hand them
/// back from `dequeue`; they cannot run them (the worker does).
///
/// A job is only valid while queued or running: after its run returned
/// [`Resumable::Done`], [`Job::id`] may be reused by a new actor.
pub struct Job {
    hdr: *const Header,
    /// The actor's type name, called only when asked (a job is made on every send to an idle
    /// actor).
    type_name: fn() -> &'static str,
}

// SAFETY: a job is a handle to a cell kept alive by the system's reference while the job
// exists (see the module invariants); the cell is `Sync`.
unsafe impl Send for Job {}

impl Job {
    #[inline]
    pub(crate) fn of(hdr: &Header) -> Self {
        Self {
            hdr,
            type_name: hdr.type_name_fn(),
        }
    }

    pub(crate) fn shutdown() -> Self {
        Self {
            hdr: std::ptr::null(),
            type_name: || "<shutdown>",
        }
    }

    /// A number identifying the actor while the job exists (its cell's address), to key
    /// per-actor data in a policy.
    pub fn id(&self) -> usize {
        self.hdr as usize
    }

    /// The actor's type name (`"<shutdown>"` for the runtime's shutdown request).
    pub fn actor_type(&self) -> &'static str {
        (self.type_name)()
    }

    /// Whether this is the runtime's request that the worker taking it exits.
    pub fn is_shutdown(&self) -> bool {
        self.hdr.is_null()
    }

    pub(crate) fn header(&self) -> Option<&Header> {
        // SAFETY: a non-shutdown job's cell is alive while the job exists (module invariants).
        unsafe { self.hdr.as_ref() }
    }
}

impl fmt::Debug for Job {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Job")
            .field("actor", &self.actor_type())
            .field("id", &self.hdr)
            .finish()
    }
}

/// The thread running a mailbox actor's job, as behaviours see it.
pub(crate) struct Runner<'a> {
    /// The worker index, or [`crate::DETACHED`] on a detached actor's thread.
    pub(crate) index: usize,
    /// This thread's counters (its own, written by it alone), if statistics are on.
    pub(crate) counters: Option<&'a Counters>,
    /// Called between two messages of a long job, every [`LONG_JOB_CHECK`] messages (the
    /// policy's `during_resume`); `None` on threads that no other job waits for.
    pub(crate) during: Option<&'a dyn Fn()>,
}

struct Guarded {
    inbox: CopyQueue,
    scheduled: bool,
    sys_ref: bool,
}

pub(crate) struct Mailbox {
    lock: SpinLock,
    guarded: UnsafeCell<Guarded>,
    batch: UnsafeCell<CopyQueue>,
    detached: Option<Arc<DetachedUnit>>,
}

// SAFETY: `guarded` is only accessed under `lock`; `batch` only by the thread running the
// actor's job (at most one exists: module invariants) or by shutdown after all threads stopped.
unsafe impl Sync for Mailbox {}
// SAFETY: as above.
unsafe impl Send for Mailbox {}

/// A mailbox, locked.
struct Locked<'a> {
    mb: &'a Mailbox,
    _guard: SpinGuard<'a>,
}

impl Locked<'_> {
    #[inline]
    fn with<R>(&self, f: impl FnOnce(&mut Guarded) -> R) -> R {
        // SAFETY: the lock is held, so no other thread touches `guarded`.
        self.mb.guarded.with_mut(|g| f(unsafe { &mut *g }))
    }
}

impl Drop for Mailbox {
    fn drop(&mut self) {
        // The cell is gone: a detached thread waiting for a respawn can end.
        if let Some(unit) = &self.detached {
            unit.finish();
        }
    }
}

impl Mailbox {
    /// A mailbox for a new actor: scheduled (its start job is made by the spawn), holding the
    /// system reference.
    pub(crate) fn new(detached: Option<Arc<DetachedUnit>>) -> Self {
        Self {
            lock: SpinLock::new(),
            guarded: UnsafeCell::new(Guarded {
                inbox: CopyQueue::empty(),
                scheduled: true,
                sys_ref: true,
            }),
            batch: UnsafeCell::new(CopyQueue::empty()),
            detached,
        }
    }

    #[inline]
    fn lock(&self) -> Locked<'_> {
        Locked {
            mb: self,
            _guard: self.lock.lock(),
        }
    }

    pub(crate) fn detached(&self) -> Option<&DetachedUnit> {
        self.detached.as_deref()
    }
}

/// A send: append under the lock unless the actor is terminal; schedule a job if none exists.
#[inline]
pub(crate) fn push(exec: &Exec, hdr: &Header, mb: &Mailbox, env: Envelope) -> Result<(), Envelope> {
    let schedule = {
        let g = mb.lock();
        if hdr.status() != Status::Alive {
            return Err(env);
        }
        g.with(|s| {
            s.inbox.push(env);
            !std::mem::replace(&mut s.scheduled, true)
        })
    };
    if schedule {
        exec.schedule(hdr, mb);
    }
    Ok(())
}

/// Registers a new mailbox actor: counts it live and puts it on the registry (refused once the
/// system is closed: the check is under the registry shard's lock, which shutdown takes after
/// closing), queues `start` first in its inbox and schedules its first job.
///
/// # Safety
/// `hdr` is a fresh, unpublished cell's header with a `Mailbox::new` mailbox; `take_ref` takes
/// the system reference.
pub(crate) unsafe fn register(
    exec: &Exec,
    hdr: &Header,
    mb: &Mailbox,
    start: Envelope,
    take_ref: impl FnOnce(),
) -> Result<(), Envelope> {
    // SAFETY: a fresh cell's link is on no list; `take_ref` takes the system reference.
    if !unsafe { enroll(exec.core(), hdr, true, take_ref) } {
        return Err(start);
    }
    // Not yet published: the lock only orders this with the job that will run it.
    mb.lock().with(|s| s.inbox.push(start));
    exec.schedule(hdr, mb);
    Ok(())
}

/// Under the actor's registry shard lock: refuses (false) once the system is closed — shutdown
/// takes every shard lock after closing, so no actor slips in unseen — otherwise counts the actor
/// live and, with `link`, takes the system reference and puts the actor on the registry.
///
/// # Safety
/// With `link`: the header's link is on no list, and `take_ref` takes the system reference that
/// keeps it valid until the job that releases it unlinks it, or shutdown takes it.
unsafe fn enroll(core: &Core, hdr: &Header, link: bool, take_ref: impl FnOnce()) -> bool {
    core.registry.locked(hdr.queue, |list| {
        if core.life.closed() {
            return false;
        }
        core.life.add_live();
        if link {
            take_ref();
            // SAFETY: caller contract.
            unsafe { list.link(&hdr.link) };
        }
        true
    })
}

/// Brings a `Destroyed` mailbox actor back: alive, `install` queued behind its old mail (which
/// the job drops as dead letters), a new system reference if the old one was released.
///
/// # Safety
/// `take_ref` takes a new system reference for the cell.
pub(crate) unsafe fn revive(
    exec: &Exec,
    hdr: &Header,
    mb: &Mailbox,
    install: Envelope,
    take_ref: impl FnOnce(),
) -> Result<(), Envelope> {
    let schedule = {
        let g = mb.lock();
        if hdr.status() != Status::Destroyed {
            return Err(install);
        }
        let need_ref = g.with(|s| !s.sys_ref);
        // SAFETY: with `sys_ref` false the link is on no list (it is unlinked under this
        // mailbox's lock, which we hold, before the reference is released).
        if !unsafe { enroll(exec.core(), hdr, need_ref, take_ref) } {
            return Err(install);
        }
        hdr.set_status(Status::Alive);
        g.with(|s| {
            s.sys_ref = true;
            s.inbox.push(install);
            !std::mem::replace(&mut s.scheduled, true)
        })
    };
    if schedule {
        exec.schedule(hdr, mb);
    }
    Ok(())
}

/// A behaviour ended its actor: the status is set under the lock, so every later send fails;
/// the job running now releases the system reference once its mail is drained.
///
/// # Safety
/// Called on the thread running the actor's job, for a live actor.
pub(crate) unsafe fn retire(exec: &Exec, hdr: &Header, mb: &Mailbox, status: Status) {
    mb.lock().with(|_| hdr.set_status(status));
    exec.core().life.terminated(hdr.joinable());
}

/// Runs a job: up to `max` messages (behaviours, starts, installs, dead letters), gulping the
/// inbox whenever the batch is empty. Also tells whether a `Done` actor was `Destroyed` (it may
/// be respawned: a detached actor's thread then waits for the respawn instead of ending).
///
/// # Safety
/// `job` is an actor job dequeued by the calling thread (so it is the only one running it).
pub(crate) unsafe fn resume(job: &Job, runner: &Runner<'_>, max: usize) -> (Resumable, bool) {
    let hdr = job.header().expect("an actor job");
    let mb = hdr.mailbox().expect("a mailbox actor");
    let mut n = 0usize;
    let mut next_check = LONG_JOB_CHECK;
    loop {
        // In chunks, so a long job lets the policy look around (`during_resume`) even while
        // it works through one big batch.
        n += drain(mb, runner, (max - n).min(LONG_JOB_CHECK));
        if n >= next_check {
            next_check = n + LONG_JOB_CHECK;
            if let Some(f) = runner.during {
                f();
            }
        }
        // SAFETY: this thread runs the job (caller contract), and no behaviour is running.
        let batch = mb.batch.with_mut(|b| unsafe { &mut *b });
        // A dropped system: stop at the next chunk boundary (an actor that keeps sending
        // itself messages would otherwise never end its job); shutdown's cleanup owns the rest.
        if hdr.exec.aborting() || (!batch.is_empty() && n >= max) {
            return (Resumable::ResumeLater, false);
        }
        if !batch.is_empty() {
            continue;
        }
        batch.reset_drained();
        let g = mb.lock();
        let parked = g.with(|s| {
            if !s.inbox.is_empty() {
                std::mem::swap(&mut s.inbox, batch);
                return None;
            }
            s.scheduled = false;
            let status = hdr.status();
            let release = status != Status::Alive && std::mem::replace(&mut s.sys_ref, false);
            Some((release, status == Status::Destroyed))
        });
        match parked {
            None => {
                drop(g);
                if let Some(c) = runner.counters {
                    c.gulps.bump(1);
                    c.gulped.bump(batch.len() as u64);
                }
                if n >= max {
                    return (Resumable::ResumeLater, false);
                }
            }
            Some((false, _)) => return (Resumable::AwaitingMessage, false),
            Some((true, destroyed)) => {
                // Unlinked under the mailbox lock, so a respawn (which links again under it)
                // cannot interleave. Then the reference goes; the cell may be freed with it.
                let registry = &hdr.exec.core().registry;
                registry.locked(hdr.queue, |list| {
                    // SAFETY: `sys_ref` was true, so the link is on the registry shard `queue`.
                    unsafe { list.unlink(&hdr.link) }
                });
                drop(g);
                // SAFETY: releases the system reference this mailbox held (`sys_ref`).
                unsafe { Header::release(hdr) };
                return (Resumable::Done, destroyed);
            }
        }
    }
}

/// Runs up to `max` envelopes of the batch; returns how many ran.
fn drain(mb: &Mailbox, runner: &Runner<'_>, max: usize) -> usize {
    // SAFETY: the borrow of the batch ends with `pop`; behaviours may not touch it (sends go
    // to the inbox).
    let pop = || mb.batch.with_mut(|b| unsafe { (*b).pop() });
    run_batch(pop, WorkerRef::Mailbox(runner), max)
}

/// After every worker and detached thread has stopped: stop the mailbox actors still alive,
/// dispose of their mail, release the system's references. Single-threaded.
pub(crate) fn cleanup(core: &Core) {
    let mut taken = Vec::new();
    for link in core.registry.take_all() {
        // SAFETY: links on the registry are the first field of a cell header whose system
        // reference is held (module invariants).
        let hdr = unsafe { Header::from_link(link) };
        let mb = hdr.mailbox().expect("registry holds mailbox actors");
        let (alive, inbox) = {
            let g = mb.lock();
            let alive = hdr.status() == Status::Alive;
            if alive {
                hdr.set_status(Status::Stopped);
            }
            let inbox = g.with(|s| {
                s.sys_ref = false;
                std::mem::replace(&mut s.inbox, CopyQueue::empty())
            });
            (alive, inbox)
        };
        drop(inbox); // disposes of the mail (`CopyQueue`'s drop discards what is left)
                     // SAFETY: no thread runs jobs any more.
        mb.batch.with_mut(|b| unsafe { (*b).discard_all() });
        taken.push((hdr as *const Header, alive));
    }
    for (hdr, alive) in taken {
        if alive {
            // SAFETY: taken off the registry once; its system reference is still held.
            unsafe { Header::shutdown(hdr) };
            core.life.stopped();
        } else {
            // SAFETY: as above; a terminal actor's state was dropped (or is kept for `join`).
            unsafe { Header::release(hdr) };
        }
    }
    core.life.notify();
}
