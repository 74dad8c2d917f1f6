//! The mailbox protocol and the job that drains a mailbox (CAF's scheduler manual, the C++ Actor
//! Framework manual's section "Scheduler": "each actor owns a mailbox; a message to an idle actor
//! makes it ready and schedules it once as a job"). Used by the actor-centric executor
//! (`executor/actor_centric`, which schedules jobs through a policy) and by the detached executor
//! ([`detached`]: one thread per actor, on either system). `README.md` here explains the protocol
//! and why a message is never stranded nor run twice.
//!
//! The storage is [`crate::core::mailbox::Mailbox`]: a spinlock over the *inbox* copy queue
//! and the `scheduled` / `sys_ref` flags, plus the *batch* owned by the job's thread. A job
//! *gulps*: it swaps the whole inbox into its batch under the lock and runs the batch without
//! it.
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

use crate::core::copy_queue::CopyQueue;
use crate::core::envelope::Envelope;
use crate::core::mailbox::Mailbox;
use crate::core::{run_batch, ExecRef, Header, Shared, Status, Undelivered, WorkerRef};
use crate::runtime::context::{local_sink, set_local_sink, LocalSink};
use crate::runtime::counters::Counters;
use crate::runtime::life::Life;
use std::fmt;
use std::ptr;

/// A job calls its policy's `during_resume` once it has run this many messages in one resume,
/// and again after each further `LONG_JOB_CHECK` or more (the check falls on the boundary of a
/// chunk of at most 64, so two calls are 256 to 319 messages apart). There a job on a worker
/// that a resize removed ends instead (see `Runner::during`).
pub const LONG_JOB_CHECK: usize = 256;

/// Envelopes a job runs between two checks for a dropped system.
const ABORT_CHECK: usize = 64;

/// A mailbox copy queue holding more slots than this (768 KiB) is released when its job parks:
/// a burst is over. Smaller ones are kept: an actor that catches up with a busy producer parks
/// often, and releasing at every park would make it regrow its arrays every time.
const KEEP_WHEN_PARKED: usize = 1 << 14;

/// What the mailbox protocol needs from the executor that runs mailbox jobs.
pub(crate) trait JobScheduler {
    /// The system's shared state.
    fn shared(&self) -> &Shared;
    /// Hands a new job for the actor `hdr` to whoever runs it.
    fn schedule(&self, hdr: &Header);
    /// The calling thread's own counters (a worker's), if any and if statistics are on.
    fn my_counters(&self) -> Option<&Counters>;
}

/// Any executor's reference, for the send path of the actor layer: the mailbox protocol runs
/// inlined there, and only making a job (or counting) reaches the executor, through its table.
impl JobScheduler for ExecRef {
    fn shared(&self) -> &Shared {
        self.get().shared()
    }

    fn schedule(&self, hdr: &Header) {
        self.get().schedule(hdr)
    }

    fn my_counters(&self) -> Option<&Counters> {
        self.get().my_counters()
    }
}

/// What a job's run ended with (CAF's `resumable::resume_result`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
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

/// The header pointer of a leave request: never a cell's (no allocation is at address 8).
const RETIRE: *const Header = std::ptr::dangling();

/// A unit of work for a scheduling policy (`actorium::policy::Policy`): an actor that has mail
/// to process, or the runtime's request that the worker taking it shuts down. Policies store
/// jobs and hand them back from `dequeue`; they cannot run them (the worker does).
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

    /// The runtime's request that the worker taking it leaves the pool, if a resize removed
    /// that worker (to policies it looks like a shutdown request: a job that is not an actor's).
    pub(crate) fn retire() -> Self {
        Self {
            hdr: RETIRE,
            type_name: || "<retire>",
        }
    }

    /// Whether this is a leave request of a resize ([`Self::retire`]).
    pub(crate) fn is_retire(&self) -> bool {
        std::ptr::eq(self.hdr, RETIRE)
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

    /// Whether this is the runtime's request that the worker taking it exits (at shutdown, or
    /// when a resize removed a worker): no actor's job, never run by the policy.
    pub fn is_shutdown(&self) -> bool {
        self.hdr.is_null() || self.is_retire()
    }

    pub(crate) fn header(&self) -> Option<&Header> {
        if self.is_shutdown() {
            return None;
        }
        // SAFETY: an actor's job's cell is alive while the job exists (module invariants).
        unsafe { self.hdr.as_ref() }
    }

    /// Envelopes waiting in the actor's mailbox (inbox and batch), counted exactly.
    ///
    /// # Safety
    /// The caller holds the job (took it from where it was queued) and is not running it.
    pub(crate) unsafe fn queued(&self) -> usize {
        let Some(mb) = self.header().and_then(Header::mailbox) else {
            return 0;
        };
        let inbox = mb.lock().with(|g| g.inbox.len());
        // SAFETY: the caller holds the job, so no thread runs it: the batch is not in use, and
        // taking the job from its queue ordered the last run's writes before this read.
        inbox + unsafe { mb.batch() }.len()
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

/// The thread running a mailbox actor's job, as the job sees it.
pub(crate) struct Runner<'a> {
    /// What behaviours see of the thread.
    pub(crate) worker: WorkerRef<'a>,
    /// Called between two messages of a long job, every [`LONG_JOB_CHECK`] messages (the
    /// policy's `during_resume`); `None` on threads that no other job waits for. Returns
    /// whether the job must end there because a resize removed the thread's worker: it then
    /// ends as if it had used its `max_throughput` (`ResumeLater`, the rest of its batch
    /// kept), for the worker to hand it on and leave, instead of running the actor's whole
    /// mail first (which a flood of sends can keep growing while the resize waits).
    pub(crate) during: Option<&'a dyn Fn() -> bool>,
}

/// The mailbox of a mailbox executor's actor.
#[inline]
fn mailbox_of(hdr: &Header) -> &Mailbox {
    hdr.mailbox()
        .expect("an actor of a mailbox executor has a mailbox")
}

/// Counts one event for the calling thread, if statistics are on (looking up the thread's
/// worker only then).
#[inline]
fn count(
    exec: &impl JobScheduler,
    hdr: &Header,
    pick: fn(&Counters) -> &crate::runtime::counters::Counter,
) {
    if hdr.stats() {
        exec.shared().count(exec.my_counters(), pick);
    }
}

/// A send: append under the lock unless the actor is terminal; schedule a job if none exists.
/// Inlined into the cells' send path (`ExecRef::push`); making the job is not.
#[inline(always)]
pub(crate) fn push(exec: &impl JobScheduler, hdr: &Header, env: Envelope) -> Result<(), Envelope> {
    // No mailbox: a cell that was never registered (a spawn refused by a stopping system);
    // every send to it fails.
    let Some(mb) = hdr.mailbox() else {
        return Err(env);
    };
    // (`installed` is read only on the job's thread, the one that writes it: `&&` orders it
    // after the test that this thread runs the job.)
    if local_send(mb) && hdr.installed() {
        return push_local(exec, hdr, mb, env);
    }
    let schedule = {
        let g = mb.lock();
        if hdr.status() != Status::Alive {
            return Err(env);
        }
        g.with(|s| {
            s.inbox.push(env);
            !std::mem::replace(s.scheduled, true)
        })
    };
    if schedule {
        schedule_job(exec, hdr);
    }
    count(exec, hdr, |c| &c.messages_sent);
    Ok(())
}

/// Sends a job's thread may append straight to its batch between two gulps (as the
/// message-centric executor's local sends per visit, `VISIT_BUDGET`): past it, sends to the
/// actor take the lock and wait in the inbox behind the other senders' mail, so an actor that
/// keeps sending itself messages cannot keep the others' (a poison pill, a shutdown request)
/// out of its batch for ever.
const LOCAL_BUDGET: u32 = 1024;

/// Whether this thread runs `mb`'s job right now and may append to its batch (a send from the
/// actor to itself, or from code its behaviour runs inline; not from outside code run
/// meanwhile, which hides the sink: `runtime::context::Enter::outside`).
#[inline(always)]
fn local_send(mb: &Mailbox) -> bool {
    let r = local_sink();
    ptr::eq(r.target, (mb as *const Mailbox).cast()) && r.left > 0
}

/// A send from the thread running the actor's job, within its budget: appended to the job's
/// batch, without the lock. Order per pair holds: every earlier send from this thread to the
/// actor went to the batch (this path), or to the inbox before the last gulp (which took the
/// whole inbox into the batch, ahead of this), and the budget is renewed only at a gulp, so
/// once it is spent no send can overtake one waiting in the inbox. The job keeps running
/// until its batch is empty: no job needs scheduling. Inlined, as the rest of the send, so
/// that the envelope is built where it is stored (passed on by reference, it would be copied
/// through the stack with wider loads than the stores that wrote it: a stalled store
/// forwarding on every self-send).
#[inline(always)]
fn push_local(
    exec: &impl JobScheduler,
    hdr: &Header,
    mb: &Mailbox,
    env: Envelope,
) -> Result<(), Envelope> {
    // The status of a running actor changes only on this thread (it ends, under the lock, in
    // `retire`), except that a revive makes a `Destroyed` one `Alive` again from any thread,
    // while this job may still run user code (dead letters' drops, event hooks); but then its
    // state is not installed until the revive's `Install` envelope runs here, and the caller
    // checked `installed`: a send from such code takes the lock and queues behind `Install`.
    if hdr.status() != Status::Alive {
        return Err(env);
    }
    let cur = local_sink();
    set_local_sink(LocalSink {
        left: cur.left - 1,
        ..cur
    });
    // SAFETY: this thread runs the actor's job (its local sink), and no reference to the batch is
    // alive: `drain` borrows it only inside `pop`, and behaviours run between pops.
    unsafe { mb.batch() }.push(env);
    count(exec, hdr, |c| &c.messages_sent);
    Ok(())
}

/// Makes `mb`'s job the calling thread's local sink until dropped (restoring what it ran
/// before: a behaviour may drive a caller-driven system, whose jobs then run nested on this
/// thread).
struct RunningHere(LocalSink);

impl RunningHere {
    /// The job starts with its first gulp ahead (the budget is renewed there).
    fn enter(mb: &Mailbox) -> Self {
        RunningHere(set_local_sink(LocalSink {
            target: (mb as *const Mailbox).cast(),
            left: 0,
        }))
    }

    /// A gulp took the whole inbox into the batch: local sends may go on.
    fn gulped(&self, mb: &Mailbox) {
        set_local_sink(LocalSink {
            target: (mb as *const Mailbox).cast(),
            left: LOCAL_BUDGET,
        });
    }
}

impl Drop for RunningHere {
    fn drop(&mut self) {
        set_local_sink(self.0);
    }
}

/// The actor was idle: hand a job to whoever runs it (kept out of the inlined send path).
#[inline(never)]
fn schedule_job(exec: &impl JobScheduler, hdr: &Header) {
    exec.schedule(hdr);
}

/// Registers a new mailbox actor: queues `start` first in its inbox, counts it live and puts it
/// on the registry (refused once the system is closed: the check is under the registry shard's
/// lock, which shutdown takes after closing), and schedules its first job. (A shutdown that
/// takes the actor between the two is harmless: it disposes of `start` with the inbox, and the
/// job made after it is never run.)
///
/// # Safety
/// `hdr` is a fresh, unpublished cell's header with a new mailbox.
pub(crate) unsafe fn register(
    exec: &impl JobScheduler,
    hdr: &Header,
    start: Envelope,
) -> Result<(), Envelope> {
    let mb = mailbox_of(hdr);
    // `start` goes in first (the cell is not published yet: no one else touches the inbox), so
    // that a shutdown which takes the actor the moment it is enrolled disposes of it too.
    mb.lock().with(|s| s.inbox.push(start));
    // SAFETY: a fresh cell's link is on no list.
    if !unsafe { enroll(exec.shared(), hdr, true, true) } {
        let start = mb.lock().with(|s| s.inbox.pop());
        return Err(start.expect("the start envelope pushed above"));
    }
    exec.schedule(hdr);
    count(exec, hdr, |c| &c.actors_created);
    Ok(())
}

/// Under the actor's registry shard lock: refuses (false) once the system is closed — shutdown
/// takes every shard lock after closing, so no actor slips in unseen — or, for a `fresh` spawn,
/// as [`Shared::refuses_spawn`] says; otherwise counts the actor live and, with `link`, takes
/// the system reference and puts the actor on the registry.
///
/// # Safety
/// With `link`: the header's link is on no list; the system reference taken keeps it valid
/// until the job that releases it unlinks it, or shutdown takes it.
unsafe fn enroll(shared: &Shared, hdr: &Header, link: bool, fresh: bool) -> bool {
    shared.registry.locked(hdr.queue(), |list| {
        let refused = if fresh {
            shared.refuses_spawn()
        } else {
            shared.life.closed()
        };
        if refused {
            return false;
        }
        shared.life.add_live();
        if link {
            hdr.retain();
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
/// `hdr` belongs to a mailbox actor kept alive by the caller.
pub(crate) unsafe fn revive(
    exec: &impl JobScheduler,
    hdr: &Header,
    install: Envelope,
) -> Result<(), Envelope> {
    // A cell that was never registered (no mailbox) cannot be revived.
    let Some(mb) = hdr.mailbox() else {
        return Err(install);
    };
    let schedule = {
        let g = mb.lock();
        if hdr.status() != Status::Destroyed {
            return Err(install);
        }
        let need_ref = g.with(|s| !*s.sys_ref);
        // SAFETY: with `sys_ref` false the link is on no list (it is unlinked under this
        // mailbox's lock, which we hold, before the reference is released).
        if !unsafe { enroll(exec.shared(), hdr, need_ref, false) } {
            return Err(install);
        }
        // A new incarnation, numbered before anyone sees it alive (a link made from now on is
        // with it).
        hdr.next_incarnation();
        hdr.set_status(Status::Alive);
        g.with(|s| {
            *s.sys_ref = true;
            s.inbox.push(install);
            !std::mem::replace(s.scheduled, true)
        })
    };
    if schedule {
        exec.schedule(hdr);
    }
    Ok(())
}

/// A behaviour ended its actor: the status is set under the lock, so every later send fails;
/// the job running now releases the system reference once its mail is drained.
///
/// # Safety
/// Called on the thread running the actor's job, for a live actor.
pub(crate) unsafe fn retire(shared: &Shared, hdr: &Header, status: Status) {
    mailbox_of(hdr).lock().with(|_| hdr.set_status(status));
    shared.life.terminated(hdr.joinable());
}

/// Runs a job: up to `max` envelopes (behaviours, starts, installs, dead letters), gulping the
/// inbox whenever the batch is empty. Also tells whether a `Done` actor was `Destroyed` (it may
/// be respawned: a detached actor's thread then waits for the respawn instead of ending).
///
/// # Safety
/// `job` is an actor job dequeued by the calling thread (so it is the only one running it).
pub(crate) unsafe fn resume(
    shared: &Shared,
    job: &Job,
    runner: &Runner<'_>,
    max: usize,
) -> (Resumable, bool) {
    let hdr = job.header().expect("an actor job");
    let mb = mailbox_of(hdr);
    let running = RunningHere::enter(mb);
    let counters = runner.worker.counters;
    let mut n = 0usize;
    let mut next_check = LONG_JOB_CHECK;
    loop {
        // In chunks, so a dropped system is noticed promptly and a long job lets the policy
        // look around (`during_resume`) even while it works through one big batch.
        n += drain(mb, &shared.life, runner.worker, (max - n).min(ABORT_CHECK));
        if n >= next_check {
            next_check = n + LONG_JOB_CHECK;
            // A long job on a removed worker ends here, whether its envelopes came in one
            // batch or in many small gulps (a job fed as fast as it runs never ends a chunk
            // with mail left); its mail waits, in order, for its next run on another worker.
            if runner.during.is_some_and(|f| f()) {
                return (Resumable::ResumeLater, false);
            }
        }
        // SAFETY: this thread runs the job (caller contract), and no behaviour is running.
        let batch = unsafe { mb.batch() };
        // A dropped system: stop at the next chunk boundary (an actor that keeps sending
        // itself messages would otherwise never end its job); shutdown's cleanup owns the rest.
        if shared.life.aborting() || (!batch.is_empty() && n >= max) {
            return (Resumable::ResumeLater, false);
        }
        if !batch.is_empty() {
            continue;
        }
        batch.reset_drained();
        let g = mb.lock();
        // The gulp: the whole inbox becomes the batch (one lock per batch, not per message).
        let gulped = g.with(|s| {
            let any = !s.inbox.is_empty();
            if any {
                std::mem::swap(s.inbox, batch);
            }
            any
        });
        if gulped {
            drop(g);
            running.gulped(mb);
            if let Some(c) = counters {
                let messages = batch.messages() as u64;
                if messages > 0 {
                    c.gulps.bump(1);
                    c.gulped.bump(messages);
                }
            }
            if n >= max {
                return (Resumable::ResumeLater, false);
            }
            continue;
        }
        // Nothing left: park, in the same critical section that saw the inbox empty.
        let (release, destroyed, burst) = g.with(|s| {
            *s.scheduled = false;
            let status = hdr.status();
            let release = status != Status::Alive && std::mem::replace(s.sys_ref, false);
            let burst =
                s.inbox.capacity() > KEEP_WHEN_PARKED || batch.capacity() > KEEP_WHEN_PARKED;
            (release, status == Status::Destroyed, burst)
        });
        if release {
            // Unlinked under the mailbox lock, so a respawn (which links again under it)
            // cannot interleave. Then the reference goes (below); the cell may be freed with it.
            shared.registry.locked(hdr.queue(), |list| {
                // SAFETY: `sys_ref` was true, so the link is on the registry shard `queue`.
                unsafe { list.unlink(&hdr.link) }
            });
        }
        if burst {
            // A burst's arrays go back to the allocator (steady-size ones stay), freed once the
            // lock is released; the batch is still ours until then.
            let freed = g.with(|s| take_burst_arrays(s.inbox, batch));
            drop(g);
            drop(freed);
        } else {
            drop(g);
        }
        if !release {
            return (Resumable::AwaitingMessage, false);
        }
        // The mailbox may be freed with the reference: this thread no longer runs its job.
        drop(running);
        // SAFETY: releases the system reference this mailbox held (`sys_ref`).
        unsafe { Header::release(hdr) };
        return (Resumable::Done, destroyed);
    }
}

/// The arrays of a parking mailbox that a burst left behind (the rare path of a park).
#[cold]
fn take_burst_arrays(inbox: &mut CopyQueue, batch: &mut CopyQueue) -> [Option<CopyQueue>; 2] {
    [
        inbox.take_if_larger(KEEP_WHEN_PARKED),
        batch.take_if_larger(KEEP_WHEN_PARKED),
    ]
}

/// Runs up to `max` envelopes of the batch, none once the system is stopping at once (a
/// shutdown's deadline passed, or it was dropped: no queued behaviour starts after that);
/// returns how many ran.
fn drain(mb: &Mailbox, life: &Life, w: WorkerRef<'_>, max: usize) -> usize {
    let pop = || {
        if life.aborting() {
            return None;
        }
        // SAFETY: the borrow of the batch ends with `pop`; behaviours run between pops (a
        // send from this thread to the actor may append to the batch: `push_local`).
        unsafe { mb.batch() }.pop()
    };
    run_batch(pop, w, max)
}

/// After every worker and detached thread has stopped: stop the mailbox actors still alive,
/// dispose of their mail, release the system's references. Single-threaded.
pub(crate) fn cleanup(shared: &Shared) {
    if shared.abandoned() {
        return;
    }
    let mut taken = Vec::new();
    let mut undelivered = Undelivered::default();
    for link in shared.registry.take_all() {
        // SAFETY: links on the registry are the `link` field of a cell header whose system
        // reference is held (module invariants).
        let hdr = unsafe { Header::from_link(link) };
        let mb = mailbox_of(hdr);
        let (alive, inbox) = {
            let g = mb.lock();
            let alive = hdr.status() == Status::Alive;
            if alive {
                hdr.set_status(Status::Stopped);
            }
            let inbox = g.with(|s| {
                *s.sys_ref = false;
                std::mem::replace(s.inbox, CopyQueue::empty())
            });
            (alive, inbox)
        };
        let mut batch = std::mem::replace(
            // SAFETY: no thread runs jobs any more.
            unsafe { mb.batch() },
            CopyQueue::empty(),
        );
        // SAFETY: the mail is this actor's, whose system reference is still held.
        unsafe {
            undelivered.count(&batch);
            undelivered.count(&inbox);
        }
        drop(inbox); // disposes of the mail (`CopyQueue`'s drop discards what is left)
        batch.discard_all();
        taken.push((hdr as *const Header, alive));
    }
    for (hdr, alive) in taken {
        if alive {
            // SAFETY: taken off the registry once; its system reference is still held.
            unsafe { Header::shutdown(hdr) };
            shared.life.stopped();
        } else {
            // SAFETY: as above; a terminal actor's state was dropped (or is kept for `join`).
            unsafe { Header::release(hdr) };
        }
    }
    shared.report_undelivered(undelivered);
    shared.life.notify();
}
