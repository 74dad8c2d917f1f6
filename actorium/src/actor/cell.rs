//! The actor cell: one heap allocation per actor holding the executor's bookkeeping (the
//! [`Header`], from the core) and the actor's state, plus the monomorphised envelope and cell
//! operations that run behaviours on it.
//!
//! Ownership of a cell (an `Arc`): every [`crate::Addr`] and [`crate::JoinHandle`] holds a
//! reference, and so does the system while the actor is registered — the *system reference*,
//! which the executor takes with [`Header::retain`] and releases when every envelope for the
//! actor has run (a reclaim envelope behind its queued mail, or its mailbox job's end). No
//! reference count is touched per send.

use super::{Actor, Allocation, Context, Receive};
use crate::core::envelope::{Envelope, EnvelopeVTable, Payload};
use crate::core::header::CellVTable;
use crate::core::{
    Event, ExecRef, Executor, ExitReason, Header, Placement, Sibling, Status, WorkerRef,
};
use crate::executor::{mailbox, message_centric};
use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// An actor cell.
#[repr(C)]
pub(crate) struct Cell<A: Actor> {
    pub(crate) header: Header,
    /// What a supervised actor keeps across restarts; `None` for every other actor. Touched
    /// under the same rule as `state`. Dropped by `Cell`'s `Drop`, which checks it inline.
    sup: ManuallyDrop<UnsafeCell<Option<Box<Supervised<A>>>>>,
    /// Puts `state` [`STATE_AT`] bytes into the cell (see there).
    _pad: [u8; PAD],
    state: UnsafeCell<Option<A>>,
}

impl<A: Actor> Drop for Cell<A> {
    /// A cell seldom holds restart data here: an actor that ends for good drops it in
    /// `retire`, a shutdown in `shutdown`; a supervised spawn refused by a closing system
    /// still holds it. So the check is inline and the drop out of line. (As the field's own
    /// drop, it would cost every cell's release a call.)
    #[inline]
    fn drop(&mut self) {
        /// # Safety
        /// Called once, from the cell's drop: the field is not used after.
        #[cold]
        #[inline(never)]
        unsafe fn drop_sup<A: Actor>(
            sup: &mut ManuallyDrop<UnsafeCell<Option<Box<Supervised<A>>>>>,
        ) {
            // SAFETY: the caller's contract: dropped once, never used after.
            unsafe { ManuallyDrop::drop(sup) };
        }
        if self.sup.get_mut().is_some() {
            // SAFETY: this is the cell's drop; `sup` is not touched after it.
            unsafe { drop_sup(&mut self.sup) };
        }
    }
}

/// Where the state starts in a cell, at least: far enough from the header's hot fields (the
/// first [`crate::core::HOT_END`] bytes, which sends to the default executor read) that, in an
/// allocation aligned to 16 bytes (the allocator's guarantee) behind the `Arc`'s two counters,
/// no 64-byte cache line can hold both a hot byte and the state's first bytes, which the
/// actor's behaviours write. A line holding both made every send to a busy actor miss. Sends
/// to the other executors also read the executor's table and the mailbox pointer (header
/// bytes 16 to 32), which share a line with the state's first bytes in one allocation address
/// out of four. The cold fields fill the distance (64 bytes, no padding with today's header).
const STATE_AT: usize = {
    // Cache lines start 16-byte aligned relative to the cell, so a line holding a hot byte
    // starts at or before the last multiple of 16 below the hot end, counted from the
    // allocation (the counters are 16 bytes); the state must start past that line.
    let hot_end_in_alloc = 16 + crate::core::HOT_END;
    let last_line_start = (hot_end_in_alloc - 1) / 16 * 16;
    last_line_start + 64 - 16
};
/// The padding before the state.
const PAD: usize =
    STATE_AT.saturating_sub(std::mem::size_of::<Header>() + std::mem::size_of::<usize>());

/// The part of a supervised actor's cell that outlives its incarnations: how to build the next
/// one, whom to tell when one ends, and the mail that arrives while it is down.
pub(crate) struct Supervised<A: Actor> {
    factory: Box<dyn FnMut() -> A + Send>,
    notify: Box<dyn Notify>,
    /// The incarnation now installed (or the last one, while suspended).
    generation: u64,
    /// The incarnation ended and the supervisor has not decided yet: the actor still accepts
    /// mail (its status stays `Alive`), which waits in `stash`.
    suspended: bool,
    stash: VecDeque<ThenFn<A>>,
}

impl<A: Actor> Supervised<A> {
    pub(crate) fn new(factory: Box<dyn FnMut() -> A + Send>, notify: Box<dyn Notify>) -> Self {
        Self {
            factory,
            notify,
            generation: 0,
            suspended: false,
            stash: VecDeque::new(),
        }
    }
}

/// Where a supervised actor reports the end of an incarnation (its supervisor).
pub(crate) trait Notify: Send {
    /// Incarnation `generation` of `child` ended with `status` and `reason`. False if the
    /// supervisor could not be told (it has ended): the child then ends for good.
    fn exited(
        &self,
        child: Arc<dyn ChildOps>,
        generation: u64,
        status: Status,
        reason: ExitReason,
    ) -> bool;
}

/// What a supervisor does to a child, whatever its type. Both queue an envelope behind the
/// child's mail; both do nothing once the child has ended for good.
pub(crate) trait ChildOps: Send + Sync {
    /// Replace the child's incarnation by a new one from its factory, numbered `generation`
    /// (a running incarnation ends first: `stopped` hook, state dropped). False if the child
    /// has ended for good.
    fn restart(&self, generation: u64) -> bool;
    /// End the child for good with `status` and `reason` (its mail left waiting becomes dead
    /// letters).
    fn settle(&self, status: Status, reason: ExitReason);
}

impl<A: Actor> ChildOps for Cell<A> {
    fn restart(&self, generation: u64) -> bool {
        let env = Envelope::new(self.raw(), &Revive::<A>::VTABLE, Payload::pack(generation));
        match push_env(self, env) {
            Ok(()) => true,
            Err(env) => {
                env.discard();
                false
            }
        }
    }

    fn settle(&self, status: Status, reason: ExitReason) {
        let env = Envelope::new(
            self.raw(),
            &Settle::<A>::VTABLE,
            Payload::pack((status, reason)),
        );
        if let Err(env) = push_env(self, env) {
            env.discard();
        }
    }
}

// SAFETY: the state is only accessed by the one thread running the actor's behaviours (the
// worker holding its queue or running its job: behaviours, termination); after the actor is
// terminal, by its join handle (`join`, or dropping it: the `Header::keep_final_state` /
// `handle_dropped` handshake orders that after the worker's last access); or by shutdown once
// every thread has stopped. The header is Sync. `A: Send` lets the state move between threads.
unsafe impl<A: Actor> Sync for Cell<A> {}
// SAFETY: as above.
unsafe impl<A: Actor> Send for Cell<A> {}

impl<A: Actor> Cell<A> {
    /// The cell's address (what `Arc::as_ptr` of its `Arc` gives).
    pub(crate) fn raw(&self) -> *const () {
        (self as *const Self).cast()
    }

    /// Takes the final state of a `Finished` actor.
    ///
    /// # Safety
    /// The status is `Finished` (read with Acquire), and the caller is the join handle (the
    /// only taker).
    pub(crate) unsafe fn take_finished(&self) -> Option<A> {
        // SAFETY: caller contract: no worker touches a terminal actor's state.
        unsafe { (*self.state.get()).take() }
    }
}

/// The executor for actors placed `p` on the system of `exec`.
pub(crate) fn executor_for(exec: &ExecRef, p: Placement) -> Option<ExecRef> {
    match exec.sibling(p) {
        Sibling::This => Some(exec.clone()),
        Sibling::Other(e) => Some(e),
        Sibling::Gone => None,
    }
}

/// Spawns `actor` on the system of `exec`, placed `placement`. Fails, giving it back, when the
/// system no longer accepts actors (or, for a detached actor, no thread could be started).
#[inline]
pub(crate) fn spawn<A: Actor>(
    exec: &ExecRef,
    actor: A,
    joinable: bool,
    placement: Placement,
) -> Result<Arc<Cell<A>>, A> {
    if placement == Placement::Pooled && exec.is(&message_centric::OPS) {
        // The default executor, called directly (inlined) as in `send`: through the table,
        // a spawn made eight indirect calls, which slowed spawn-heavy work measurably.
        // SAFETY: the table is the message-centric executor's, so the executor is one.
        let e = unsafe { exec.get_unchecked::<message_centric::Executor>() };
        // SAFETY: as above.
        let own = || unsafe { exec.clone_unchecked::<message_centric::Executor>() };
        return spawn_on(e, own, actor, joinable);
    }
    spawn_other(exec, actor, joinable, placement)
}

/// [`spawn`] on any executor but the default one, or detached.
#[inline(never)]
fn spawn_other<A: Actor>(
    exec: &ExecRef,
    actor: A,
    joinable: bool,
    placement: Placement,
) -> Result<Arc<Cell<A>>, A> {
    // The executor is borrowed (from the caller, or from `sibling`'s answer); the header takes
    // its own reference. (Each trait object is made once: making one is a call through the
    // table.)
    let e = exec.get();
    let other;
    let (exec, e) = match e.sibling(placement) {
        Sibling::This => (exec, e),
        Sibling::Other(o) => {
            other = o;
            (&other, other.get())
        }
        Sibling::Gone => return Err(actor),
    };
    spawn_on(e, || exec.clone(), actor, joinable)
}

/// Makes the cell and registers it with `exec` (`own` makes the header's reference to it).
#[inline(always)]
fn spawn_on<A: Actor, E: Executor + ?Sized>(
    exec: &E,
    own: impl FnOnce() -> ExecRef,
    actor: A,
    joinable: bool,
) -> Result<Arc<Cell<A>>, A> {
    let Some(parts) = exec.spawn_parts() else {
        return Err(actor);
    };
    // Built here, not by a helper shared with `spawn_unbuilt`: one taking the state as an
    // `Option` slowed spawn-heavy work measurably.
    let exec_ref = own();
    let direct = exec_ref.is(&message_centric::OPS);
    let header = Header::new(
        exec_ref,
        direct,
        parts.stats_on,
        parts.ticket,
        parts.mbox,
        true,
        joinable,
        &CellOps::<A>::VTABLE,
    );
    let cell = Arc::new(Cell {
        header,
        sup: ManuallyDrop::new(UnsafeCell::new(None)),
        _pad: [0; PAD],
        state: UnsafeCell::new(Some(actor)),
    });
    let start = Envelope::new(cell.raw(), &Start::<A>::VTABLE, Payload::pack(()));
    register(exec, cell, start)
        .map_err(|cell| take_refused(&cell).expect("fresh cell has its state"))
}

/// The state of a cell that was never registered.
fn take_refused<A: Actor>(cell: &Cell<A>) -> Option<A> {
    // SAFETY: callers pass a cell that was refused by `register`: never shared, so we are the
    // only one touching its state.
    unsafe { (*cell.state.get()).take() }
}

/// Registers a fresh cell with its executor, `start` its first envelope; on failure gives
/// back the cell (and discards `start`).
#[inline(always)]
fn register<A: Actor, E: Executor + ?Sized>(
    exec: &E,
    cell: Arc<Cell<A>>,
    start: Envelope,
) -> Result<Arc<Cell<A>>, Arc<Cell<A>>> {
    // SAFETY: the header belongs to a fresh cell, made with this executor's mailbox; on
    // success the system reference it takes keeps the cell alive until it is released.
    if let Err(start) = unsafe { exec.register(&cell.header, start) } {
        start.discard();
        return Err(cell);
    }
    Ok(cell)
}

/// What builds an actor's state with its context (its address, its system) on its worker.
pub(crate) type BuildFn<A> = Box<dyn for<'a> FnOnce(&mut Context<'a, A>) -> A + Send>;

/// Spawns an actor whose state `build` makes on its worker, as its first envelope (so before
/// any message): its address exists before its state. On a stopping system, a cell every send
/// to fails (`build` is dropped).
pub(crate) fn spawn_with<A: Actor>(exec: &ExecRef, build: BuildFn<A>) -> Arc<Cell<A>> {
    spawn_unbuilt(exec, None, |cell| {
        Envelope::new(cell.raw(), &StartWith::<A>::VTABLE, Payload::pack(build))
    })
    .unwrap_or_else(|| dead_cell_empty(exec))
}

/// Spawns a pooled actor with no state yet: `start(cell)` makes its first envelope, which
/// builds the state. `None` if the system no longer accepts actors.
fn spawn_unbuilt<A: Actor>(
    exec: &ExecRef,
    sup: Option<Box<Supervised<A>>>,
    start: impl FnOnce(&Cell<A>) -> Envelope,
) -> Option<Arc<Cell<A>>> {
    let exec = executor_for(exec, Placement::Pooled)?;
    let e = exec.get();
    if e.shared().life.closed() {
        return None;
    }
    let header = Header::new(
        exec.clone(),
        exec.is(&message_centric::OPS),
        e.shared().stats_on,
        e.next_ticket(),
        e.new_mailbox(),
        true,
        false,
        &CellOps::<A>::VTABLE,
    );
    // No state until the start envelope builds it: nothing may run a behaviour before (that
    // envelope is first in the actor's order anyway; this makes any envelope that overtook it
    // a dead letter, never a behaviour without a state).
    header.set_installed(false);
    let cell = Arc::new(Cell {
        header,
        sup: ManuallyDrop::new(UnsafeCell::new(sup)),
        _pad: [0; PAD],
        state: UnsafeCell::new(None),
    });
    let start = start(&cell);
    register(e, cell, start).ok()
}

/// Spawns a supervised actor on the pooled executor of `exec`'s system. Its first
/// incarnation, as every later one, is built by `factory` on its worker (a restart numbered 0,
/// its first envelope: a panicking factory is a failure its supervisor hears of). The caller
/// tells the supervisor of it once it is registered (a notice may overtake that: the
/// supervisor keeps it until then). `None` if the system no longer accepts actors.
pub(crate) fn spawn_supervised<A: Actor>(
    exec: &ExecRef,
    factory: Box<dyn FnMut() -> A + Send>,
    notify: Box<dyn Notify>,
) -> Option<Arc<Cell<A>>> {
    let sup = Box::new(Supervised::new(factory, notify));
    spawn_unbuilt(exec, Some(sup), |cell| {
        Envelope::new(cell.raw(), &Revive::<A>::VTABLE, Payload::pack(0u64))
    })
}

/// [`spawn`], or on a stopping system a [`dead_cell`] (the actor is dropped; every send fails).
pub(crate) fn spawn_or_dead<A: Actor>(
    exec: &ExecRef,
    actor: A,
    joinable: bool,
    placement: Placement,
) -> Arc<Cell<A>> {
    spawn(exec, actor, joinable, placement).unwrap_or_else(|actor| dead_cell(exec, actor))
}

/// A cell for an actor that was refused (its system is stopping): terminal, unregistered; the
/// actor is dropped. Every send to it fails.
fn dead_cell<A: Actor>(exec: &ExecRef, actor: A) -> Arc<Cell<A>> {
    drop(actor);
    dead_cell_empty(exec)
}

/// A terminal, unregistered cell with no state: every send to it fails.
fn dead_cell_empty<A: Actor>(exec: &ExecRef) -> Arc<Cell<A>> {
    Arc::new(Cell {
        header: Header::new(
            exec.clone(),
            exec.is(&message_centric::OPS),
            false,
            0,
            None,
            false,
            false,
            &CellOps::<A>::VTABLE,
        ),
        sup: ManuallyDrop::new(UnsafeCell::new(None)),
        _pad: [0; PAD],
        state: UnsafeCell::new(None),
    })
}

/// Sends `msg` to the actor in `cell`.
#[inline]
pub(crate) fn send<A: Receive<M>, M: Send + 'static>(cell: &Cell<A>, msg: M) -> Result<(), M> {
    let exec = &cell.header.exec;
    // The default executor's send, called directly so that it is inlined here, with the
    // envelope built where it is stored (an indirect call here cost measurably on the send
    // path). Every other executor's send is out of line: inlined here too, its branch made
    // this function large enough to slow the default executor's.
    // (The header's mark, not the table's address: the table lies past the header's hot bytes.)
    if cell.header.direct() {
        let env = || Envelope::new(cell.raw(), &Deliver::<A, M>::VTABLE, Payload::pack(msg));
        // SAFETY: a header is marked direct only when its executor's table is the
        // message-centric executor's (`exec.is(&message_centric::OPS)` at construction), so the
        // executor is one.
        match unsafe { exec.get_unchecked::<message_centric::Executor>() }
            .push_envelope_with(&cell.header, env)
        {
            Ok(()) => Ok(()),
            // SAFETY: the envelope was packed from an `M` just above.
            Err(env) => Err(unsafe { env.into_message::<M>() }),
        }
    } else {
        send_other(cell, msg)
    }
}

/// [`send`] on an executor other than the default one.
#[inline(never)]
fn send_other<A: Receive<M>, M: Send + 'static>(cell: &Cell<A>, msg: M) -> Result<(), M> {
    let env = move || Envelope::new(cell.raw(), &Deliver::<A, M>::VTABLE, Payload::pack(msg));
    let exec = &cell.header.exec;
    let pushed = if cell.header.mailbox().is_some() {
        // A mailbox actor: the mailbox protocol, inlined here; its executor makes the job.
        mailbox::push(exec, &cell.header, env())
    } else {
        exec.push(&cell.header, env())
    };
    match pushed {
        Ok(()) => Ok(()),
        // SAFETY: the envelope was packed from an `M` just above.
        Err(env) => Err(unsafe { env.into_message::<M>() }),
    }
}

/// A continuation to run on an actor as one of its behaviours (a reply to its `Context::ask`).
pub(crate) type ThenFn<A> =
    Box<dyn for<'a> FnOnce(&mut A, &mut Context<'a, A>) -> Allocation + Send>;

/// A continuation, and the incarnation of its actor it was made for
/// ([`crate::core::Header::incarnation`]).
type Stamped<A> = (u8, ThenFn<A>);

/// Queues `f` to run on the actor in `cell` in turn with its messages (as a message would be),
/// if incarnation `incarnation` of the actor is still the one installed then (a dead letter
/// otherwise).
pub(crate) fn send_then<A: Actor>(
    cell: &Cell<A>,
    incarnation: u8,
    f: ThenFn<A>,
) -> Result<(), ThenFn<A>> {
    let env = Envelope::new(
        cell.raw(),
        &Then::<A>::VTABLE,
        Payload::pack::<Stamped<A>>((incarnation, f)),
    );
    // SAFETY: the envelope was packed from a `Stamped<A>` just above.
    push_env(cell, env).map_err(|env| unsafe { env.into_message::<Stamped<A>>() }.1)
}

/// Queues `env` (for the actor in `cell`) on whichever executor runs the actor.
fn push_env<A: Actor>(cell: &Cell<A>, env: Envelope) -> Result<(), Envelope> {
    let exec = &cell.header.exec;
    if cell.header.direct() {
        // SAFETY: marked direct, the executor is the message-centric one (see `send`).
        unsafe { exec.get_unchecked::<message_centric::Executor>() }
            .push_envelope(&cell.header, env)
    } else if cell.header.mailbox().is_some() {
        mailbox::push(exec, &cell.header, env)
    } else {
        exec.push(&cell.header, env)
    }
}

/// Puts a new state into a `Destroyed` actor's cell, in order with its queue.
pub(crate) fn respawn<A: Actor>(cell: &Arc<Cell<A>>, actor: A) -> Result<(), A> {
    if cell.header.exec.shared().draining() {
        return Err(actor);
    }
    let env = Envelope::new(cell.raw(), &Install::<A>::VTABLE, Payload::pack(actor));
    // SAFETY: the cell is kept alive by `cell`, and belongs to its header's executor.
    match unsafe { cell.header.exec.revive(&cell.header, env) } {
        Ok(()) => Ok(()),
        // SAFETY: packed from an `A` above.
        Err(env) => Err(unsafe { env.into_message::<A>() }),
    }
}

/// The actor's incarnation ended with `status` (or panicked), on its worker: a supervised
/// actor waits for its supervisor's decision (unless a graceful shutdown is under way); every
/// other actor ends for good. (Inline in its three callers, `ended`, `behaviour_panicked` and
/// `StartWith::run`: a call of its own under `ended` cost every actor's end a call.)
#[inline(always)]
fn end<A: Actor>(cell: &Cell<A>, status: Status, w: WorkerRef<'_>, reason: ExitReason) {
    // SAFETY: we are the worker holding the actor's queue.
    if unsafe { (*cell.sup.get()).is_some() } {
        end_supervised(cell, status, w, reason);
    } else {
        terminate(cell, status, w, reason);
    }
}

/// Ends the actor for good: `stopped` hook, state dropped (or kept for a join handle),
/// retired, its monitors told.
/// (`terminate`, `finish_state` and `retire` inline into one function per actor type: as
/// three calls, their prologues and the moves of `reason` between them were a large part of
/// an actor's end.)
#[inline(always)]
fn terminate<A: Actor>(cell: &Cell<A>, status: Status, w: WorkerRef<'_>, reason: ExitReason) {
    let mut reason = reason;
    finish_state(cell, status, w, &mut reason);
    retire(cell, status, w, reason);
}

/// The end of an incarnation: the `stopped` hook (not after a panic; a panicking hook makes
/// `reason` a panic), then the state is dropped, or kept for a join handle.
#[inline(always)]
fn finish_state<A: Actor>(
    cell: &Cell<A>,
    status: Status,
    w: WorkerRef<'_>,
    reason: &mut ExitReason,
) {
    // SAFETY: we are the worker holding the actor's queue.
    let state = unsafe { &mut *cell.state.get() };
    if status != Status::Panicked {
        if let Some(s) = state.as_mut() {
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| s.stopped())) {
                panicked(cell, &*p, "stopped hook", w);
                // A failure: its monitors and links hear of it.
                *reason = ExitReason::Panicked(crate::core::panic_message(&*p).to_owned());
            }
        }
    }
    // A finished actor's final state is kept only for a join handle: without one nobody could
    // take it (and a state holding the actor's own address would keep the cell, and the whole
    // executor with it, alive for ever).
    if status != Status::Finished || !cell.header.keep_final_state() {
        cell.header.set_installed(false);
        let old = state.take();
        if let Err(p) = catch_unwind(AssertUnwindSafe(move || drop(old))) {
            panicked(cell, &*p, "destructor", w);
        }
    }
}

/// Makes the actor terminal (its state is gone or kept already) and tells its monitors; a
/// supervised actor's restart data and waiting mail are dropped (the mail as dead letters).
#[inline(always)]
fn retire<A: Actor>(cell: &Cell<A>, status: Status, w: WorkerRef<'_>, reason: ExitReason) {
    // SAFETY: we are the worker holding the actor's queue.
    if unsafe { (*cell.sup.get()).is_some() } {
        drop_supervision(cell, w);
    }
    let exec = &cell.header.exec;
    // The status is terminal once retired. (The cell stays alive: its system reference is
    // released only behind the batch or job this behaviour runs in.) Then the monitors hear.
    if cell.header.direct() {
        // SAFETY: marked direct, the executor is the message-centric one (see `send`); the
        // actor is registered and alive, and we run its behaviour.
        let e = unsafe { exec.get_unchecked::<message_centric::Executor>() };
        // SAFETY: as above.
        unsafe { e.retire(&cell.header, status) };
        Executor::shared(e).monitors.ended(&cell.header, &reason);
    } else {
        // SAFETY: as above.
        unsafe { exec.retire(&cell.header, status) };
        exec.shared().monitors.ended(&cell.header, &reason);
    }
}

/// A supervised actor ends for good: its restart data and waiting mail are dropped (the mail
/// as dead letters).
#[cold]
#[inline(never)]
fn drop_supervision<A: Actor>(cell: &Cell<A>, w: WorkerRef<'_>) {
    // SAFETY: we are the worker holding the actor's queue (the caller's contract).
    let Some(sup) = (unsafe { (*cell.sup.get()).take() }) else {
        return;
    };
    let waiting = sup.stash.len() as u64;
    if let Some(c) = w.counters {
        c.dead_letters.bump(waiting);
    }
    if let Err(p) = catch_unwind(AssertUnwindSafe(move || drop(sup))) {
        panicked(cell, &*p, "destructor of waiting mail", w);
    }
    if waiting > 0 {
        dead_letters(cell, waiting);
    }
}

/// A new reference to a cell whose envelope (or behaviour) runs.
#[inline]
pub(crate) fn arc_of<A: Actor>(cell: &Cell<A>) -> Arc<Cell<A>> {
    let me: *const Cell<A> = cell;
    // SAFETY: the cell came from `Arc::new` and is alive (its system reference is held while
    // its envelope runs), so adding a strong count and rebuilding an `Arc` is sound.
    unsafe {
        Arc::increment_strong_count(me);
        Arc::from_raw(me)
    }
}

/// [`end`] for a supervised actor.
#[cold]
#[inline(never)]
fn end_supervised<A: Actor>(cell: &Cell<A>, status: Status, w: WorkerRef<'_>, reason: ExitReason) {
    let mut reason = reason;
    finish_state(cell, status, w, &mut reason);
    suspend(cell, status, w, reason);
}

/// The incarnation is gone (state dropped): wait for the supervisor's decision, or end for
/// good if it cannot be asked (it ended, or a graceful shutdown is under way).
fn suspend<A: Actor>(cell: &Cell<A>, status: Status, w: WorkerRef<'_>, reason: ExitReason) {
    cell.header.set_installed(false);
    if !cell.header.exec.shared().draining() {
        // SAFETY: we are the worker holding the actor's queue; `end` checked it is supervised.
        let sup = unsafe { (*cell.sup.get()).as_mut().unwrap_unchecked() };
        sup.suspended = true;
        if sup
            .notify
            .exited(arc_of(cell), sup.generation, status, reason.clone())
        {
            return;
        }
    }
    retire(cell, status, w, reason);
}

/// A join handle was dropped without joining: drop a final state kept for it.
pub(crate) fn handle_dropped<A: Actor>(cell: &Cell<A>) {
    if cell.header.handle_dropped() {
        // SAFETY: the worker kept the state for the handle and touches it no more (it set
        // `KEPT` after its last access); the handle, which is being dropped, was the only other
        // taker, so this is the only access now.
        let old = unsafe { (*cell.state.get()).take() };
        if let Err(p) = catch_unwind(AssertUnwindSafe(move || drop(old))) {
            cell.header.exec.shared().report_panic(
                Some(std::any::type_name::<A>()),
                "destructor",
                &*p,
            );
        }
    }
}

fn panicked<A: Actor>(
    cell: &Cell<A>,
    payload: &(dyn std::any::Any + Send),
    what: &str,
    w: WorkerRef<'_>,
) {
    cell.header
        .exec
        .shared()
        .report_panic(Some(std::any::type_name::<A>()), what, payload);
    if let Some(c) = w.counters {
        c.panics.bump(1);
    }
}

/// Runs `f` with the actor's state and a context, then applies the allocation it returns.
#[inline]
fn run_behaviour<A: Actor>(
    cell: &Cell<A>,
    w: WorkerRef<'_>,
    what: &str,
    f: impl FnOnce(&mut A, &mut Context<'_, A>) -> Allocation,
) {
    // SAFETY: this worker holds the actor's queue, so it alone touches the state; the caller
    // checked `installed`, so it is present.
    let state = unsafe { (*cell.state.get()).as_mut().unwrap_unchecked() };
    let mut ctx = Context::new(cell, w);
    // Only the common outcome (the actor goes on) inline: the others are calls, so that every
    // message type's copy of this stays small (with them inlined, a self-send saved and
    // restored more registers).
    match catch_unwind(AssertUnwindSafe(|| f(state, &mut ctx))) {
        Ok(Allocation::Nodelete) if !ctx.stopping() => {}
        Ok(a) => ended(cell, a, ctx.exit_reason(), w),
        Err(p) => behaviour_panicked(cell, p, what, w),
    }
}

/// A behaviour returned a terminal allocation, or `Nodelete` after [`Context::stop`] (or
/// its equivalents: then the actor ends as `Deleted`).
#[inline(never)]
fn ended<A: Actor>(cell: &Cell<A>, a: Allocation, reason: ExitReason, w: WorkerRef<'_>) {
    let status = match a {
        Allocation::Nodelete => Status::Deleted,
        a => a.status(),
    };
    end(cell, status, w, reason);
}

/// A behaviour (or hook) panicked: reported, and the actor ends as `Panicked`.
#[cold]
#[inline(never)]
fn behaviour_panicked<A: Actor>(
    cell: &Cell<A>,
    p: Box<dyn std::any::Any + Send>,
    what: &str,
    w: WorkerRef<'_>,
) {
    panicked(cell, &*p, what, w);
    let reason = ExitReason::Panicked(crate::core::panic_message(&*p).to_owned());
    end(cell, Status::Panicked, w, reason);
}

#[inline]
fn runnable<A: Actor>(cell: &Cell<A>) -> bool {
    cell.header.status() == Status::Alive && cell.header.installed()
}

/// A message (as the behaviour `f` that would handle it) for an actor that cannot run it: a
/// supervised actor waiting for its restart keeps it for the next incarnation; for any other,
/// it is a dead letter.
///
/// # Safety
/// The caller holds the actor's queue.
#[cold]
#[inline(never)]
unsafe fn not_runnable<A: Actor>(cell: &Cell<A>, w: WorkerRef<'_>, f: ThenFn<A>) {
    if cell.header.status() == Status::Alive {
        // SAFETY: caller contract.
        if let Some(sup) = unsafe { (*cell.sup.get()).as_mut() } {
            if sup.suspended {
                sup.stash.push_back(f);
                return;
            }
        }
    }
    dead_letter(cell, w, f);
}

/// Drops `f`, a message for the actor in `cell` that will never run, as a dead letter.
#[cold]
fn dead_letter<A: Actor>(cell: &Cell<A>, w: WorkerRef<'_>, f: ThenFn<A>) {
    if let Some(c) = w.counters {
        c.dead_letters.bump(1);
    }
    drop(f);
    dead_letters(cell, 1);
}

/// Reports `count` dead letters of the actor in `cell`.
fn dead_letters<A: Actor>(cell: &Cell<A>, count: u64) {
    cell.header.exec.shared().report(&Event::DeadLetters {
        actor: std::any::type_name::<A>(),
        count,
    });
}

/// Runs the mail a supervised actor received while it waited for its restart, in order, until
/// it is done or the actor stops being runnable (ended again: the rest waits on).
fn replay<A: Actor>(cell: &Cell<A>, w: WorkerRef<'_>) {
    while runnable(cell) {
        // SAFETY: we hold the actor's queue; the borrow ends before the behaviour runs.
        let next = unsafe { (*cell.sup.get()).as_mut().and_then(|s| s.stash.pop_front()) };
        let Some(f) = next else { break };
        if let Some(c) = w.counters {
            c.messages_processed.bump(1);
        }
        run_behaviour(cell, w, "behaviour", move |a, ctx| f(a, ctx));
    }
}

struct CellOps<A>(A);
impl<A: Actor> CellOps<A> {
    const VTABLE: CellVTable = CellVTable {
        shutdown: Self::shutdown,
        retain: Self::retain,
        release: Self::release,
        reclaim: &Reclaim::<A>::VTABLE,
        type_name: std::any::type_name::<A>,
        stop: Self::stop,
    };

    unsafe fn stop(hdr: *const Header) {
        // SAFETY: the header is the first field of a `Cell<A>` (vtable matches), kept alive by
        // the caller.
        let cell = unsafe { &*hdr.cast::<Cell<A>>() };
        // Not a continuation: a supervised actor waiting for its restart would keep that with
        // its waiting mail. Refused: the actor has ended already.
        cell.settle(Status::Deleted, ExitReason::Shutdown);
    }

    unsafe fn retain(hdr: *const Header) {
        // SAFETY: the header is the first field of a `Cell<A>` made by `Arc::new` (vtable
        // matches), alive while the caller uses it.
        unsafe { Arc::increment_strong_count(hdr.cast::<Cell<A>>()) }
    }

    unsafe fn release(hdr: *const Header) {
        // SAFETY: the header is the first field of a `Cell<A>` (vtable matches); this drops
        // the system reference (caller contract of `Header::release`).
        drop(unsafe { Arc::from_raw(hdr.cast::<Cell<A>>()) });
    }

    unsafe fn shutdown(hdr: *const Header) {
        // SAFETY: the header is the first field of a `Cell<A>` (vtable matches); the system
        // reference is still held (caller contract), so the cell is alive.
        let cell = unsafe { &*hdr.cast::<Cell<A>>() };
        // Stopped by the system (its status is terminal by now): its monitors are told.
        cell.header
            .exec
            .shared()
            .monitors
            .ended(&cell.header, &ExitReason::Shutdown);
        cell.header.set_installed(false);
        // SAFETY: the workers have exited: nothing else touches the state.
        let old = unsafe { ((*cell.state.get()).take(), (*cell.sup.get()).take()) };
        if let Err(p) = catch_unwind(AssertUnwindSafe(move || drop(old))) {
            cell.header.exec.shared().report_panic(
                Some(std::any::type_name::<A>()),
                "destructor",
                &*p,
            );
        }
        // SAFETY: releases the system reference taken at spawn (or respawn).
        drop(unsafe { Arc::from_raw(hdr.cast::<Cell<A>>()) });
    }
}

/// Envelope: deliver an `M` to an `A`.
struct Deliver<A, M>(A, M);
impl<A: Receive<M>, M: Send + 'static> Deliver<A, M> {
    const VTABLE: EnvelopeVTable = EnvelopeVTable {
        run: Self::run,
        discard: discard::<M>,
        message: true,
    };

    unsafe fn run(target: *const (), p: *mut Payload, w: WorkerRef<'_>) {
        // SAFETY: the envelope targets a `Cell<A>` kept alive by the system reference.
        let cell = unsafe { &*target.cast::<Cell<A>>() };
        // SAFETY: packed from an `M` by `send`; consumed once.
        let msg = unsafe { Payload::unpack::<M>(p) };
        if !runnable(cell) {
            // SAFETY: we hold the actor's queue.
            unsafe { not_runnable(cell, w, Box::new(move |a, ctx| a.receive(msg, ctx))) };
            return;
        }
        if let Some(c) = w.counters {
            c.messages_processed.bump(1);
        }
        run_behaviour(cell, w, "behaviour", move |a, ctx| a.receive(msg, ctx));
    }
}

/// Envelope: run a continuation on the actor (see [`send_then`]); a message, for statistics
/// and dead letters.
struct Then<A>(A);
impl<A: Actor> Then<A> {
    const VTABLE: EnvelopeVTable = EnvelopeVTable {
        run: Self::run,
        discard: discard::<Stamped<A>>,
        message: true,
    };

    unsafe fn run(target: *const (), p: *mut Payload, w: WorkerRef<'_>) {
        // SAFETY: as for `Deliver::run`.
        let cell = unsafe { &*target.cast::<Cell<A>>() };
        // SAFETY: packed from a `Stamped<A>` by `send_then`; consumed once.
        let (incarnation, f) = unsafe { Payload::unpack::<Stamped<A>>(p) };
        if incarnation != cell.header.incarnation() {
            // Made for an incarnation that a respawn replaced: never run on the new one.
            dead_letter(cell, w, f);
            return;
        }
        if !runnable(cell) {
            // SAFETY: we hold the actor's queue.
            unsafe { not_runnable(cell, w, f) };
            return;
        }
        if let Some(c) = w.counters {
            c.messages_processed.bump(1);
        }
        run_behaviour(cell, w, "reply continuation", move |a, ctx| f(a, ctx));
    }
}

/// Envelope: run the actor's `started` hook on its worker, before any message.
struct Start<A>(A);
impl<A: Actor> Start<A> {
    const VTABLE: EnvelopeVTable = EnvelopeVTable {
        run: Self::run,
        discard: discard::<()>,
        message: false,
    };

    unsafe fn run(target: *const (), _: *mut Payload, w: WorkerRef<'_>) {
        // SAFETY: as for `Deliver::run`.
        let cell = unsafe { &*target.cast::<Cell<A>>() };
        // A start envelope queued on the shared queue left the actor uninstalled (so that no
        // local send could overtake it); the state is there, make it runnable now.
        if cell.header.status() == Status::Alive {
            // SAFETY: (of the read) we hold the actor's queue, and a live actor that has not
            // started still has its state.
            debug_assert!(unsafe { (*cell.state.get()).is_some() });
            cell.header.set_installed(true);
        }
        if runnable(cell) {
            run_behaviour(cell, w, "started hook", |a, ctx| {
                a.started(ctx);
                Allocation::Nodelete
            });
        }
    }
}

/// Envelope: build the state of an actor spawned with [`spawn_with`], then run its `started`
/// hook (its first envelope).
struct StartWith<A>(A);
impl<A: Actor> StartWith<A> {
    const VTABLE: EnvelopeVTable = EnvelopeVTable {
        run: Self::run,
        discard: discard::<BuildFn<A>>,
        message: false,
    };

    unsafe fn run(target: *const (), p: *mut Payload, w: WorkerRef<'_>) {
        // SAFETY: as for `Deliver::run`.
        let cell = unsafe { &*target.cast::<Cell<A>>() };
        // SAFETY: packed from a `BuildFn<A>` by `spawn_with`.
        let build = unsafe { Payload::unpack::<BuildFn<A>>(p) };
        if cell.header.status() != Status::Alive {
            return;
        }
        let mut ctx = Context::new(cell, w);
        match catch_unwind(AssertUnwindSafe(|| build(&mut ctx))) {
            Ok(actor) => {
                // SAFETY: we hold the actor's queue (its first envelope).
                unsafe { *cell.state.get() = Some(actor) };
                cell.header.set_installed(true);
            }
            Err(p) => {
                panicked(cell, &*p, "state builder", w);
                let reason = ExitReason::Panicked(crate::core::panic_message(&*p).to_owned());
                end(cell, Status::Panicked, w, reason);
                return;
            }
        }
        let stopping = ctx.stopping();
        run_behaviour(cell, w, "started hook", |a, ctx| {
            a.started(ctx);
            if stopping {
                ctx.stop();
            }
            Allocation::Nodelete
        });
    }
}

/// Envelope: install a respawned actor's new state, in queue order.
struct Install<A>(A);
impl<A: Actor> Install<A> {
    const VTABLE: EnvelopeVTable = EnvelopeVTable {
        run: Self::run,
        discard: discard::<A>,
        message: false,
    };

    unsafe fn run(target: *const (), p: *mut Payload, w: WorkerRef<'_>) {
        // SAFETY: as for `Deliver::run`.
        let cell = unsafe { &*target.cast::<Cell<A>>() };
        // SAFETY: packed from an `A` by `respawn`.
        let actor = unsafe { Payload::unpack::<A>(p) };
        if cell.header.status() != Status::Alive {
            return;
        }
        // SAFETY: this worker holds the actor's queue.
        unsafe { *cell.state.get() = Some(actor) };
        cell.header.set_installed(true);
        run_behaviour(cell, w, "started hook", |a, ctx| {
            a.started(ctx);
            Allocation::Nodelete
        });
    }
}

/// Envelope: a supervisor restarts the actor (payload: the new incarnation's number). A running
/// incarnation ends first (`stopped` hook, state dropped); the new one is built by the factory,
/// its `started` hook runs, then the mail that waited for it.
struct Revive<A>(A);
impl<A: Actor> Revive<A> {
    const VTABLE: EnvelopeVTable = EnvelopeVTable {
        run: Self::run,
        discard: discard::<u64>,
        message: false,
    };

    unsafe fn run(target: *const (), p: *mut Payload, w: WorkerRef<'_>) {
        // SAFETY: as for `Deliver::run`.
        let cell = unsafe { &*target.cast::<Cell<A>>() };
        // SAFETY: packed from a `u64` by `ChildOps::restart`.
        let generation = unsafe { Payload::unpack::<u64>(p) };
        // SAFETY: we hold the actor's queue (this holds for every access to `sup` and `state`
        // below).
        if cell.header.status() != Status::Alive || unsafe { (*cell.sup.get()).is_none() } {
            return;
        }
        // A running incarnation (a sibling of a failed child) ends first.
        let mut reason = ExitReason::Shutdown;
        if cell.header.installed() {
            finish_state(cell, Status::Deleted, w, &mut reason);
        }
        // During a graceful shutdown nothing is restarted: the child ends for good. Its first
        // incarnation (generation 0) is built all the same: a child supervised before the
        // shutdown began gets the mail queued for it, as an unsupervised actor does.
        if generation > 0 && cell.header.exec.shared().draining() {
            retire(cell, Status::Deleted, w, reason);
            return;
        }
        // SAFETY: see above.
        let sup = unsafe { (*cell.sup.get()).as_mut().unwrap_unchecked() };
        sup.generation = generation;
        sup.suspended = false;
        match catch_unwind(AssertUnwindSafe(|| (sup.factory)())) {
            Ok(actor) => {
                // SAFETY: see above.
                unsafe { *cell.state.get() = Some(actor) };
                cell.header.set_installed(true);
            }
            Err(p) => {
                panicked(cell, &*p, "restart factory", w);
                let reason = ExitReason::Panicked(crate::core::panic_message(&*p).to_owned());
                suspend(cell, Status::Panicked, w, reason);
                return;
            }
        }
        run_behaviour(cell, w, "started hook", |a, ctx| {
            a.started(ctx);
            Allocation::Nodelete
        });
        replay(cell, w);
    }
}

/// Envelope: end the actor for good (payload: status and reason), as a supervisor that does
/// not restart it decides, or graceful shutdown's stop request. A running incarnation runs its
/// `stopped` hook first.
struct Settle<A>(A);
impl<A: Actor> Settle<A> {
    const VTABLE: EnvelopeVTable = EnvelopeVTable {
        run: Self::run,
        discard: discard::<(Status, ExitReason)>,
        message: false,
    };

    unsafe fn run(target: *const (), p: *mut Payload, w: WorkerRef<'_>) {
        // SAFETY: as for `Deliver::run`.
        let cell = unsafe { &*target.cast::<Cell<A>>() };
        // SAFETY: packed from a `(Status, ExitReason)` by `ChildOps::settle`.
        let (status, mut reason) = unsafe { Payload::unpack::<(Status, ExitReason)>(p) };
        if cell.header.status() != Status::Alive {
            return;
        }
        if cell.header.installed() {
            finish_state(cell, status, w, &mut reason);
        }
        retire(cell, status, w, reason);
    }
}

/// Envelope: release the system reference of a terminated actor (queued behind all its mail).
struct Reclaim<A>(A);
impl<A: Actor> Reclaim<A> {
    const VTABLE: EnvelopeVTable = EnvelopeVTable {
        run: Self::run,
        discard: Self::release,
        message: false,
    };

    unsafe fn run(target: *const (), p: *mut Payload, _: WorkerRef<'_>) {
        // SAFETY: forwarded.
        unsafe { Self::release(target, p) }
    }

    unsafe fn release(target: *const (), _: *mut Payload) {
        // SAFETY: this envelope owns the system reference taken at spawn; dropping it may free
        // the cell (whose state is gone by then: dropped at termination, or taken or dropped
        // by the join handle, which holds its own reference until then).
        drop(unsafe { Arc::from_raw(target.cast::<Cell<A>>()) });
    }
}

unsafe fn discard<M>(_: *const (), p: *mut Payload) {
    // SAFETY: the payload was packed from an `M` (the vtable is chosen with it).
    drop(unsafe { Payload::unpack::<M>(p) });
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Small(#[allow(dead_code)] u8);
    impl Actor for Small {}
    struct Words(#[allow(dead_code)] [u64; 4]);
    impl Actor for Words {}

    #[test]
    fn no_cache_line_holds_a_hot_header_byte_and_the_state() {
        let hot = crate::core::HOT_END;
        let state = std::mem::offset_of!(Cell<Small>, state);
        assert_eq!(std::mem::offset_of!(Cell<Small>, header), 0);
        // Every placement of a 64-byte line, in steps of 16 (the allocator's alignment),
        // relative to the `Arc`'s allocation (two counters, then the cell).
        for line in (-64i64..256).step_by(16) {
            let covers = |from: i64, to: i64| from < line + 64 && to > line;
            let hot_bytes = (16, 16 + hot as i64);
            let state_first = (16 + state as i64, 16 + state as i64 + 1);
            assert!(
                !(covers(hot_bytes.0, hot_bytes.1) && covers(state_first.0, state_first.1)),
                "a line at {line} holds hot header bytes and the state (state at {state})"
            );
        }
        // What it costs: a cell with a 32-byte state, plus the `Arc`'s counters, stays within
        // glibc's fastbins (requests up to 120 bytes): past them, spawn-heavy workloads are
        // measurably slower (`core/header.rs`).
        assert_eq!(state, 64, "the state starts one cache line in");
        assert!(std::mem::size_of::<Cell<Words>>() + 16 <= 120);
    }
}
