//! The actor cell: one heap allocation per actor holding the executor's bookkeeping (the
//! [`Header`], from the core) and the actor's state, plus the monomorphised envelope and cell
//! operations that run behaviours on it.
//!
//! Ownership of a cell (an `Arc`): every [`crate::Addr`] and [`crate::JoinHandle`] holds a
//! reference, and so does the system while the actor is registered — the *system reference*,
//! which the executor takes with [`Header::retain`] and releases when every envelope for the
//! actor has run (a reclaim envelope behind its queued mail, or its mailbox job's end). No
//! reference count is touched per send.

use super::dispatch::{self, Exec};
use super::{Actor, Allocation, Context, Receive};
use crate::core::envelope::{Envelope, Payload};
use crate::core::{ExecRef, Executor, ExitReason, Header, Placement, Sibling, Status};
use crate::executor::message_centric;
use crate::runtime::permits::Permits;
use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

mod envelopes;
mod run;
#[cfg(test)]
mod tests;

use envelopes::*;

/// An actor cell.
#[repr(C)]
pub(crate) struct Cell<A: Actor> {
    pub(crate) header: Header,
    /// What few actors have (supervision, a bounded mailbox); `None` for every other actor.
    /// Set at spawn, never replaced: senders read its bound on any thread. Dropped by
    /// `Cell`'s `Drop`, which checks it inline.
    extra: ManuallyDrop<Option<Box<Extra<A>>>>,
    /// Puts `state` [`STATE_AT`] bytes into the cell (see there).
    _pad: [u8; PAD],
    state: UnsafeCell<Option<A>>,
}

impl<A: Actor> Drop for Cell<A> {
    /// Few cells have extras (supervised and bounded actors), so the check is inline and the
    /// drop out of line. (As the field's own drop, it would cost every cell's release a call.)
    #[inline]
    fn drop(&mut self) {
        /// # Safety
        /// Called once, from the cell's drop: the field is not used after.
        #[cold]
        #[inline(never)]
        unsafe fn drop_extra<A: Actor>(extra: &mut ManuallyDrop<Option<Box<Extra<A>>>>) {
            // SAFETY: the caller's contract: dropped once, never used after.
            unsafe { ManuallyDrop::drop(extra) };
        }
        if self.extra.is_some() {
            // SAFETY: this is the cell's drop; `extra` is not touched after it. (The header,
            // dropped after this, holds the mailbox: its envelopes' discard would read `extra`
            // (a counted one gives its permit back), but none is left by now: the mailbox's
            // system reference keeps the cell alive while its inbox holds mail, and is dropped
            // only once the inbox is empty, under its lock; a cleanup empties the queues first.)
            unsafe { drop_extra(&mut self.extra) };
        }
    }
}

/// The part of a cell that only supervised and bounded actors have (one pointer in every cell).
pub(crate) struct Extra<A: Actor> {
    /// What a supervised actor keeps across restarts. Touched under the same rule as the
    /// cell's `state`; taken when the actor ends for good.
    sup: UnsafeCell<Option<Supervised<A>>>,
    /// A bounded mailbox's room: a permit per message queued for the actor by a bounded send
    /// (`actor/bounded.rs`). Read by senders on any thread, for as long as the cell lives.
    bound: Option<Permits>,
}

impl<A: Actor> Cell<A> {
    /// The supervision data, if the actor is supervised (and has not ended for good).
    ///
    /// # Safety
    /// The caller runs the actor's behaviours (holds its queue or job), or every thread of its
    /// system has stopped; no other borrow of the data is alive.
    #[allow(clippy::mut_from_ref)]
    #[inline]
    pub(super) unsafe fn sup(&self) -> Option<&mut Supervised<A>> {
        match &*self.extra {
            // SAFETY: the caller's contract.
            Some(x) => unsafe { (*x.sup.get()).as_mut() },
            None => None,
        }
    }

    /// Takes the supervision data (the actor ends for good).
    ///
    /// # Safety
    /// As for [`Self::sup`].
    #[inline]
    pub(super) unsafe fn take_sup(&self) -> Option<Supervised<A>> {
        match &*self.extra {
            // SAFETY: the caller's contract.
            Some(x) => unsafe { (*x.sup.get()).take() },
            None => None,
        }
    }

    /// The room of the actor's bounded mailbox, if it has one.
    #[inline]
    pub(crate) fn bound(&self) -> Option<&Permits> {
        self.extra.as_ref()?.bound.as_ref()
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
    /// (a running incarnation ends first: `stopped` hook, state dropped), which hears `why`
    /// the last one ended (`Actor::restarted`). False if the child has ended for good.
    fn restart(&self, generation: u64, why: ExitReason) -> bool;
    /// End the child for good with `status` and `reason` (its mail left waiting becomes dead
    /// letters).
    fn settle(&self, status: Status, reason: ExitReason);
}

impl<A: Actor> ChildOps for Cell<A> {
    fn restart(&self, generation: u64, why: ExitReason) -> bool {
        let env = Envelope::new(
            self.raw(),
            &Revive::<A>::VTABLE,
            Payload::pack((generation, Some(why))),
        );
        // During a graceful shutdown the revived child ends at once: behind the mail already
        // sent to it, as the shutdown's own request (`dispatch::push_last`).
        let pushed = if self.header.exec.shared().draining() {
            dispatch::push_last(&self.header, env)
        } else {
            push_env(self, env)
        };
        match pushed {
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
        // Behind the mail already sent to the child, by any sender (`dispatch::push_last`):
        // a supervisor that ends its children, also in a graceful shutdown, ends each after
        // what was sent to it before.
        if let Err(env) = dispatch::push_last(&self.header, env) {
            env.discard();
        }
    }
}

// SAFETY: the state is only accessed by the one thread running the actor's behaviours (the
// worker holding its queue or running its job: behaviours, termination); after the actor is
// terminal, by its join handle (`join`, or dropping it: the `Header::keep_final_state` /
// `handle_dropped` handshake orders that after the worker's last access); or by shutdown once
// every thread has stopped. The extras' supervision data follows the state's rule; their
// bound (`Permits`) is Sync on its own. The header is Sync. `A: Send` lets the state move
// between threads.
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
    match Exec::of_ref(exec) {
        // The default executor, called directly (inlined) as in `send`: through the table,
        // a spawn made several indirect calls, which slowed spawn-heavy work.
        Exec::MessageCentric(e) if placement == Placement::Pooled => {
            // SAFETY: `Exec::MessageCentric` is the executor of this table.
            let own = || unsafe { exec.clone_unchecked::<message_centric::Executor>() };
            spawn_on(e, own, actor, joinable, None)
        }
        _ => spawn_other(exec, actor, joinable, placement, None),
    }
}

/// Spawns `actor` pooled with a bounded mailbox of `capacity` messages (`actor/bounded.rs`);
/// on a stopping system, a dead cell (the actor is dropped).
pub(crate) fn spawn_bounded<A: Actor>(exec: &ExecRef, actor: A, capacity: usize) -> Arc<Cell<A>> {
    let extra = Box::new(Extra {
        sup: UnsafeCell::new(None),
        bound: Some(Permits::new(capacity)),
    });
    spawn_other(exec, actor, false, Placement::Pooled, Some(extra))
        .unwrap_or_else(|actor| dead_cell(exec, actor))
}

/// [`spawn`] on any executor but the default one, or detached, or with `extra`.
#[inline(never)]
fn spawn_other<A: Actor>(
    exec: &ExecRef,
    actor: A,
    joinable: bool,
    placement: Placement,
    extra: Option<Box<Extra<A>>>,
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
    spawn_on(e, || exec.clone(), actor, joinable, extra)
}

/// Makes the cell and registers it with `exec` (`own` makes the header's reference to it).
#[inline(always)]
fn spawn_on<A: Actor, E: Executor + ?Sized>(
    exec: &E,
    own: impl FnOnce() -> ExecRef,
    actor: A,
    joinable: bool,
    extra: Option<Box<Extra<A>>>,
) -> Result<Arc<Cell<A>>, A> {
    let Some(parts) = exec.spawn_parts() else {
        return Err(actor);
    };
    // Built here, not by a helper shared with `spawn_unbuilt`: one taking the state as an
    // `Option` slowed spawn-heavy work measurably.
    let exec_ref = own();
    let bounded = extra.as_ref().is_some_and(|x| x.bound.is_some());
    let tag = dispatch::tag_of(&exec_ref, bounded);
    let header = Header::new(
        exec_ref,
        tag,
        parts.stats_on,
        parts.ticket,
        parts.mbox,
        true,
        joinable,
        &CellOps::<A>::VTABLE,
    );
    let cell = Arc::new(Cell {
        header,
        extra: ManuallyDrop::new(extra),
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
    sup: Option<Supervised<A>>,
    start: impl FnOnce(&Cell<A>) -> Envelope,
) -> Option<Arc<Cell<A>>> {
    let exec = executor_for(exec, Placement::Pooled)?;
    let e = exec.get();
    if e.shared().refuses_spawn() {
        return None;
    }
    let header = Header::new(
        exec.clone(),
        dispatch::tag_of(&exec, false),
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
    let extra = sup.map(|sup| {
        Box::new(Extra {
            sup: UnsafeCell::new(Some(sup)),
            bound: None,
        })
    });
    let cell = Arc::new(Cell {
        header,
        extra: ManuallyDrop::new(extra),
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
    let sup = Supervised::new(factory, notify);
    spawn_unbuilt(exec, Some(sup), |cell| {
        Envelope::new(
            cell.raw(),
            &Revive::<A>::VTABLE,
            Payload::pack((0u64, None::<ExitReason>)),
        )
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
            dispatch::tag_of(exec, false),
            false,
            0,
            None,
            false,
            false,
            &CellOps::<A>::VTABLE,
        ),
        extra: ManuallyDrop::new(None),
        _pad: [0; PAD],
        state: UnsafeCell::new(None),
    })
}

/// Sends `msg` to the actor in `cell`.
#[inline]
pub(crate) fn send<A: Receive<M>, M: Send + 'static>(cell: &Cell<A>, msg: M) -> Result<(), M> {
    // The default executor's send inlined here, with the envelope built where it is stored;
    // every other executor's is a call (see `dispatch::message_centric`).
    let Some(e) = dispatch::message_centric_unbounded(&cell.header) else {
        return send_other(cell, msg);
    };
    let env = || Envelope::new(cell.raw(), &Deliver::<A, M>::VTABLE, Payload::pack(msg));
    match e.push_envelope_with(&cell.header, env) {
        Ok(()) => Ok(()),
        // SAFETY: the envelope was packed from an `M` just above.
        Err(env) => Err(unsafe { env.into_message::<M>() }),
    }
}

/// [`send`] on an executor other than the default one, or to a bounded actor (the message
/// counts against its capacity, past it if need be). (It takes the message itself: a closure
/// that builds the envelope, passed to a call, went through memory.)
#[inline(never)]
fn send_other<A: Receive<M>, M: Send + 'static>(cell: &Cell<A>, msg: M) -> Result<(), M> {
    if dispatch::bounded(&cell.header) {
        if let Some(room) = cell.bound() {
            room.force();
            return send_counted(cell, msg);
        }
    }
    let env = || Envelope::new(cell.raw(), &Deliver::<A, M>::VTABLE, Payload::pack(msg));
    match dispatch::push_through_table(&cell.header, env) {
        Ok(()) => Ok(()),
        // SAFETY: the envelope was packed from an `M` just above.
        Err(env) => Err(unsafe { env.into_message::<M>() }),
    }
}

/// Queues `msg` for the bounded actor in `cell`, with a permit of its room the caller took;
/// if the actor no longer accepts messages, gives back the permit and the message.
pub(crate) fn send_counted<A: Receive<M>, M: Send + 'static>(
    cell: &Cell<A>,
    msg: M,
) -> Result<(), M> {
    let env = Envelope::new(cell.raw(), &Counted::<A, M>::VTABLE, Payload::pack(msg));
    match push_env(cell, env) {
        Ok(()) => Ok(()),
        Err(env) => {
            if let Some(room) = cell.bound() {
                room.release();
            }
            // SAFETY: the envelope was packed from an `M` just above.
            Err(unsafe { env.into_message::<M>() })
        }
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
    dispatch::push(&cell.header, env)
}

/// Puts a new state into a `Destroyed` actor's cell, in order with its queue.
pub(crate) fn respawn<A: Actor>(cell: &Arc<Cell<A>>, actor: A) -> Result<(), A> {
    if cell.header.exec.shared().draining() {
        return Err(actor);
    }
    let env = Envelope::new(cell.raw(), &Install::<A>::VTABLE, Payload::pack(actor));
    // SAFETY: the cell is kept alive by `cell`, and belongs to its header's executor.
    match unsafe { cell.header.exec.revive(&cell.header, env) } {
        Ok(()) => {
            // A graceful shutdown that began since the check above may have looked at this
            // actor while it was ended, and it asks each actor once: ask it here. (The fence
            // orders the revival before the look at `draining`; the shutdown sets `draining`
            // before its look at the actors: one of the two sees the other.)
            std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
            if cell.header.exec.shared().draining() {
                cell.header.request_stop();
            }
            Ok(())
        }
        // SAFETY: packed from an `A` above.
        Err(env) => Err(unsafe { env.into_message::<A>() }),
    }
}

/// A new reference to a cell that is alive: its envelope (or behaviour) runs, or the caller
/// holds a counted reference to it (a `Recipient`'s).
#[inline]
pub(crate) fn arc_of<A: Actor>(cell: &Cell<A>) -> Arc<Cell<A>> {
    let me: *const Cell<A> = cell;
    // SAFETY: the cell came from `Arc::new` and is alive (its system reference is held while
    // its envelope runs, or the caller holds a strong count), so adding a strong count and
    // rebuilding an `Arc` is sound.
    unsafe {
        Arc::increment_strong_count(me);
        Arc::from_raw(me)
    }
}

/// A join handle was dropped without joining: drop a final state kept for it.
pub(crate) fn handle_dropped<A: Actor>(cell: &Cell<A>) {
    if cell.header.handle_dropped() {
        // SAFETY: the worker kept the state for the handle and touches it no more (it set
        // `KEPT` after its last access); the handle, which is being dropped, was the only other
        // taker, so this is the only access now.
        let old = unsafe { (*cell.state.get()).take() };
        if let Err(p) = catch_unwind(AssertUnwindSafe(move || drop(old))) {
            run::panicked(cell, p, "destructor", None);
        }
    }
}
