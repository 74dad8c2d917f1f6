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
    report_panic, ExecRef, Executor, ExitReason, Header, Placement, Sibling, Status, WorkerRef,
};
use crate::executor::{inverted, mailbox};
use std::cell::UnsafeCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// An actor cell.
#[repr(C)]
pub(crate) struct Cell<A> {
    pub(crate) header: Header,
    state: UnsafeCell<Option<A>>,
}

// SAFETY: the state is only accessed by the one thread running the actor's behaviours (the
// worker holding its queue or running its job: behaviours, termination); after the actor is
// terminal, by its join handle (`join`, or dropping it: the `Header::keep_final_state` /
// `handle_dropped` handshake orders that after the worker's last access); or by shutdown once
// every thread has stopped. The header is Sync. `A: Send` lets the state move between threads.
unsafe impl<A: Send> Sync for Cell<A> {}
// SAFETY: as above.
unsafe impl<A: Send> Send for Cell<A> {}

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
    if placement == Placement::Pooled && exec.is(&inverted::OPS) {
        // The default executor, called directly (inlined) as in `send`: through the table,
        // a spawn made eight indirect calls (measured: a chain of spawn-and-send hops 10-15 %
        // slower than with the executor's own calls).
        // SAFETY: the table is the message-centric executor's, so the executor is one.
        let e = unsafe { exec.get_unchecked::<inverted::Executor>() };
        // SAFETY: as above.
        let own = || unsafe { exec.clone_unchecked::<inverted::Executor>() };
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
    // its own reference.
    let other;
    let exec = match exec.sibling(placement) {
        Sibling::This => exec,
        Sibling::Other(e) => {
            other = e;
            &other
        }
        Sibling::Gone => return Err(actor),
    };
    spawn_on(exec.get(), || exec.clone(), actor, joinable)
}

/// Makes the cell and registers it with `exec` (`own` makes the header's reference to it).
#[inline(always)]
fn spawn_on<A: Actor, E: Executor + ?Sized>(
    exec: &E,
    own: impl FnOnce() -> ExecRef,
    actor: A,
    joinable: bool,
) -> Result<Arc<Cell<A>>, A> {
    let shared = exec.shared();
    if shared.life.closed() {
        return Err(actor);
    }
    let header = Header::new(
        own(),
        shared.stats_on,
        exec.next_ticket(),
        exec.new_mailbox(),
        true,
        joinable,
        &CellOps::<A>::VTABLE,
    );
    let cell = Arc::new(Cell {
        header,
        state: UnsafeCell::new(Some(actor)),
    });
    let start = Envelope::new(cell.raw(), &Start::<A>::VTABLE, Payload::pack(()));
    // SAFETY: the header belongs to a fresh cell, made with this executor's mailbox; on
    // success the system reference it takes keeps the cell alive until it is released.
    if let Err(start) = unsafe { exec.register(&cell.header, start) } {
        start.discard();
        // SAFETY: not registered, never shared: we are the only owner of the state.
        let actor = unsafe { (*cell.state.get()).take() }.expect("fresh cell has its state");
        return Err(actor);
    }
    Ok(cell)
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
    Arc::new(Cell {
        header: Header::new(
            exec.clone(),
            false,
            0,
            None,
            false,
            false,
            &CellOps::<A>::VTABLE,
        ),
        state: UnsafeCell::new(None),
    })
}

/// Sends `msg` to the actor in `cell`.
#[inline]
pub(crate) fn send<A: Receive<M>, M: Send + 'static>(cell: &Cell<A>, msg: M) -> Result<(), M> {
    let exec = &cell.header.exec;
    // The default executor's send, called directly so that it is inlined here, with the
    // envelope built where it is stored (measured: a self-send 13 ns instead of 17 through the
    // table). Every other executor's send is out of line: inlined here too, its branch made
    // this function large enough to slow the default executor's (balance-one 1.23-1.35x).
    if exec.is(&inverted::OPS) {
        let env = Envelope::new(cell.raw(), &Deliver::<A, M>::VTABLE, Payload::pack(msg));
        // SAFETY: the table is the message-centric executor's, so the executor is one.
        match unsafe { exec.get_unchecked::<inverted::Executor>() }.push_envelope(&cell.header, env)
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

/// Queues `f` to run on the actor in `cell` in turn with its messages (as a message would be).
pub(crate) fn send_then<A: Actor>(cell: &Cell<A>, f: ThenFn<A>) -> Result<(), ThenFn<A>> {
    let env = Envelope::new(cell.raw(), &Then::<A>::VTABLE, Payload::pack(f));
    let exec = &cell.header.exec;
    let pushed = if exec.is(&inverted::OPS) {
        // SAFETY: the table is the message-centric executor's, so the executor is one.
        unsafe { exec.get_unchecked::<inverted::Executor>() }.push_envelope(&cell.header, env)
    } else if cell.header.mailbox().is_some() {
        mailbox::push(exec, &cell.header, env)
    } else {
        exec.push(&cell.header, env)
    };
    // SAFETY: the envelope was packed from a `ThenFn<A>` just above.
    pushed.map_err(|env| unsafe { env.into_message::<ThenFn<A>>() })
}

/// Puts a new state into a `Destroyed` actor's cell, in order with its queue.
pub(crate) fn respawn<A: Actor>(cell: &Arc<Cell<A>>, actor: A) -> Result<(), A> {
    if cell
        .header
        .exec
        .shared()
        .draining
        .load(std::sync::atomic::Ordering::SeqCst)
    {
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

/// Ends the actor after a behaviour returned `status` (or panicked), on its worker.
fn terminate<A: Actor>(cell: &Cell<A>, status: Status, w: WorkerRef<'_>, reason: ExitReason) {
    // SAFETY: we are the worker holding the actor's queue.
    let state = unsafe { &mut *cell.state.get() };
    let mut reason = reason;
    if status != Status::Panicked {
        if let Some(s) = state.as_mut() {
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| s.stopped())) {
                panicked::<A>(&*p, "stopped hook", w);
                // A failure: its monitors and links hear of it.
                reason = ExitReason::Panicked(crate::core::panic_message(&*p).to_owned());
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
            panicked::<A>(&*p, "destructor", w);
        }
    }
    let exec = &cell.header.exec;
    if exec.is(&inverted::OPS) {
        // SAFETY: the table is the message-centric executor's, so the executor is one; the
        // actor is registered and alive, and we run its behaviour.
        unsafe {
            exec.get_unchecked::<inverted::Executor>()
                .retire(&cell.header, status)
        };
    } else {
        // SAFETY: as above.
        unsafe { exec.retire(&cell.header, status) };
    }
    // The status is terminal now. (The cell stays alive: its system reference is released
    // only behind the batch or job this behaviour runs in.)
    exec.shared().monitors.ended(&cell.header, &reason);
}

/// A join handle was dropped without joining: drop a final state kept for it.
pub(crate) fn handle_dropped<A: Actor>(cell: &Cell<A>) {
    if cell.header.handle_dropped() {
        // SAFETY: the worker kept the state for the handle and touches it no more (it set
        // `KEPT` after its last access); the handle, which is being dropped, was the only other
        // taker, so this is the only access now.
        let old = unsafe { (*cell.state.get()).take() };
        if let Err(p) = catch_unwind(AssertUnwindSafe(move || drop(old))) {
            report_panic(
                &format!("actor `{}` (destructor)", std::any::type_name::<A>()),
                &*p,
            );
        }
    }
}

fn panicked<A>(payload: &(dyn std::any::Any + Send), what: &str, w: WorkerRef<'_>) {
    report_panic(
        &format!("actor `{}` ({what})", std::any::type_name::<A>()),
        payload,
    );
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
    match catch_unwind(AssertUnwindSafe(|| f(state, &mut ctx))) {
        Ok(Allocation::Nodelete) if ctx.stopping() => {
            terminate(cell, Status::Deleted, w, ctx.exit_reason())
        }
        Ok(Allocation::Nodelete) => {}
        Ok(a) => terminate(cell, a.status(), w, ctx.exit_reason()),
        Err(p) => {
            panicked::<A>(&*p, what, w);
            let reason = ExitReason::Panicked(crate::core::panic_message(&*p).to_owned());
            terminate(cell, Status::Panicked, w, reason);
        }
    }
}

#[inline]
fn runnable<A>(cell: &Cell<A>) -> bool {
    cell.header.status() == Status::Alive && cell.header.installed()
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
        let pill: ThenFn<A> = Box::new(|_, ctx| {
            ctx.cause = super::Cause::Shutdown;
            Allocation::Delete
        });
        // Refused: the actor has ended already.
        let _ = send_then(cell, pill);
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
        let old = unsafe { (*cell.state.get()).take() };
        if let Err(p) = catch_unwind(AssertUnwindSafe(move || drop(old))) {
            report_panic(
                &format!("actor `{}` (destructor)", std::any::type_name::<A>()),
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
            if let Some(c) = w.counters {
                c.dead_letters.bump(1);
            }
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
        discard: discard::<ThenFn<A>>,
        message: true,
    };

    unsafe fn run(target: *const (), p: *mut Payload, w: WorkerRef<'_>) {
        // SAFETY: as for `Deliver::run`.
        let cell = unsafe { &*target.cast::<Cell<A>>() };
        // SAFETY: packed from a `ThenFn<A>` by `send_then`; consumed once.
        let f = unsafe { Payload::unpack::<ThenFn<A>>(p) };
        if !runnable(cell) {
            if let Some(c) = w.counters {
                c.dead_letters.bump(1);
            }
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
            // SAFETY (of the read): we hold the actor's queue, and a live actor that has not
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
