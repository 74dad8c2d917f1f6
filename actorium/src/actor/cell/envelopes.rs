//! The monomorphised envelope tables of a cell: a message's behaviour, a continuation, the
//! start and install of a state, a respawn's revive, a supervisor's decision, the reclaim of
//! the system reference, and the cell operations the executors call without the actor's type.

use super::super::{Actor, Allocation, Context, Receive};
use super::run::*;
use super::*;
use crate::core::envelope::{EnvelopeVTable, Payload};
use crate::core::header::CellVTable;
use crate::core::{ExitReason, Header, Status, WorkerRef};
use std::panic::{catch_unwind, AssertUnwindSafe};

pub(super) struct CellOps<A>(A);

impl<A: Actor> CellOps<A> {
    pub(super) const VTABLE: CellVTable = CellVTable {
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
        // its waiting mail. Behind every message sent to it so far, those that wait in a
        // worker's outbox included (`dispatch::push_last`). Refused: it has ended already.
        let env = Envelope::new(
            cell.raw(),
            &Settle::<A>::VTABLE,
            Payload::pack((Status::Deleted, ExitReason::Shutdown)),
        );
        if let Err(env) = crate::actor::dispatch::push_last(&cell.header, env) {
            env.discard();
        }
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
        cell.header.exec.shared().monitors.ended(
            &cell.header,
            cell.header.incarnation(),
            &ExitReason::Shutdown,
        );
        cell.header.set_installed(false);
        // SAFETY: the workers have exited: nothing else touches the state.
        let (old, sup) = unsafe { ((*cell.state.get()).take(), cell.take_sup()) };
        if let Err(p) = catch_unwind(AssertUnwindSafe(move || drop(old))) {
            panicked(cell, p, "destructor", None);
        }
        if let Some(sup) = sup {
            super::run::drop_sup(cell, sup, None);
        }
        if let Some(room) = cell.bound() {
            room.close();
        }
        // SAFETY: releases the system reference taken at spawn (or respawn).
        drop(unsafe { Arc::from_raw(hdr.cast::<Cell<A>>()) });
    }
}

/// Envelope: deliver an `M` to an `A`.
pub(super) struct Deliver<A, M>(A, M);

impl<A: Receive<M>, M: Send + 'static> Deliver<A, M> {
    pub(super) const VTABLE: EnvelopeVTable = EnvelopeVTable {
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
            unsafe {
                not_runnable(
                    cell,
                    w.counters,
                    Box::new(move |a, ctx| a.receive(msg, ctx)),
                )
            };
            return;
        }
        if let Some(c) = w.counters {
            c.messages_processed.bump(1);
        }
        run_behaviour(cell, w, "behaviour", move |a, ctx| a.receive(msg, ctx));
    }
}

/// Envelope: deliver an `M` to a bounded `A`, giving back the message's permit of the actor's
/// room when it is taken to run (or discarded).
pub(super) struct Counted<A, M>(A, M);

impl<A: Receive<M>, M: Send + 'static> Counted<A, M> {
    pub(super) const VTABLE: EnvelopeVTable = EnvelopeVTable {
        run: Self::run,
        discard: Self::discard,
        message: true,
    };

    unsafe fn run(target: *const (), p: *mut Payload, w: WorkerRef<'_>) {
        // SAFETY: the envelope targets a `Cell<A>` kept alive by the system reference.
        let cell = unsafe { &*target.cast::<Cell<A>>() };
        if let Some(room) = cell.bound() {
            room.release();
        }
        // SAFETY: forwarded: the payload is an `M` for this cell, consumed once there.
        unsafe { Deliver::<A, M>::run(target, p, w) }
    }

    unsafe fn discard(target: *const (), p: *mut Payload) {
        // SAFETY: as for `run`.
        let cell = unsafe { &*target.cast::<Cell<A>>() };
        if let Some(room) = cell.bound() {
            room.release();
        }
        // SAFETY: forwarded.
        unsafe { discard::<M>(target, p) }
    }
}

/// Envelope: run a continuation on the actor (see [`send_then`]); a message, for statistics
/// and dead letters.
pub(super) struct Then<A>(A);

impl<A: Actor> Then<A> {
    pub(super) const VTABLE: EnvelopeVTable = EnvelopeVTable {
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
            dead_letter(cell, w.counters, f);
            return;
        }
        if !runnable(cell) {
            // SAFETY: we hold the actor's queue.
            unsafe { not_runnable(cell, w.counters, f) };
            return;
        }
        if let Some(c) = w.counters {
            c.messages_processed.bump(1);
        }
        run_behaviour(cell, w, "reply continuation", move |a, ctx| f(a, ctx));
    }
}

/// Envelope: run the actor's `started` hook on its worker, before any message.
pub(super) struct Start<A>(A);

impl<A: Actor> Start<A> {
    pub(super) const VTABLE: EnvelopeVTable = EnvelopeVTable {
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
pub(super) struct StartWith<A>(A);

impl<A: Actor> StartWith<A> {
    pub(super) const VTABLE: EnvelopeVTable = EnvelopeVTable {
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
                let reason = ExitReason::Panicked(crate::core::panic_message(&*p).to_owned());
                panicked(cell, p, "state builder", w.counters);
                end(cell, Status::Panicked, w.counters, reason);
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
pub(super) struct Install<A>(A);

impl<A: Actor> Install<A> {
    pub(super) const VTABLE: EnvelopeVTable = EnvelopeVTable {
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
pub(super) struct Revive<A>(A);

impl<A: Actor> Revive<A> {
    pub(super) const VTABLE: EnvelopeVTable = EnvelopeVTable {
        run: Self::run,
        discard: discard::<(u64, Option<ExitReason>)>,
        message: false,
    };

    unsafe fn run(target: *const (), p: *mut Payload, w: WorkerRef<'_>) {
        // SAFETY: as for `Deliver::run`.
        let cell = unsafe { &*target.cast::<Cell<A>>() };
        // SAFETY: packed from this pair by `ChildOps::restart` (or the first incarnation's
        // spawn, with no reason).
        let (generation, why) = unsafe { Payload::unpack::<(u64, Option<ExitReason>)>(p) };
        // SAFETY: we hold the actor's queue (this holds for every access to `sup` and `state`
        // below).
        if cell.header.status() != Status::Alive || unsafe { cell.sup() }.is_none() {
            return;
        }
        // A running incarnation (a sibling of a failed child) ends first.
        let mut reason = ExitReason::Shutdown;
        if cell.header.installed() {
            finish_state(cell, Status::Deleted, w.counters, &mut reason);
            // The monitors it set go with its state (as in `end_supervised`).
            cell.header.exec.shared().monitors.restarting(&cell.header);
        }
        // During a graceful shutdown nothing is restarted: the child ends for good. Its first
        // incarnation (generation 0) is built all the same: a child supervised before the
        // shutdown began gets the mail queued for it, as an unsupervised actor does.
        if generation > 0 && cell.header.exec.shared().draining() {
            retire(cell, Status::Deleted, w.counters, reason);
            return;
        }
        // SAFETY: see above.
        let sup = unsafe { cell.sup().unwrap_unchecked() };
        sup.generation = generation;
        sup.suspended = false;
        match catch_unwind(AssertUnwindSafe(|| (sup.factory)())) {
            Ok(actor) => {
                // SAFETY: see above.
                unsafe { *cell.state.get() = Some(actor) };
                cell.header.set_installed(true);
            }
            Err(p) => {
                let reason = ExitReason::Panicked(crate::core::panic_message(&*p).to_owned());
                panicked(cell, p, "restart factory", w.counters);
                suspend(cell, Status::Panicked, w.counters, reason);
                return;
            }
        }
        run_behaviour(cell, w, "started hook", |a, ctx| {
            a.started(ctx);
            Allocation::Nodelete
        });
        if let Some(why) = why.filter(|_| runnable(cell)) {
            // A restart: the new incarnation hears why the last one ended.
            run_behaviour(cell, w, "restarted hook", |a, ctx| {
                a.restarted(why, ctx);
                Allocation::Nodelete
            });
        }
        replay(cell, w);
    }
}

/// Envelope: end the actor for good (payload: status and reason), as a supervisor that does
/// not restart it decides, or graceful shutdown's stop request. A running incarnation runs its
/// `stopped` hook first.
pub(super) struct Settle<A>(A);

impl<A: Actor> Settle<A> {
    pub(super) const VTABLE: EnvelopeVTable = EnvelopeVTable {
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
            finish_state(cell, status, w.counters, &mut reason);
        }
        retire(cell, status, w.counters, reason);
    }
}

/// Envelope: release the system reference of a terminated actor (queued behind all its mail).
pub(super) struct Reclaim<A>(A);

impl<A: Actor> Reclaim<A> {
    pub(super) const VTABLE: EnvelopeVTable = EnvelopeVTable {
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

pub(super) unsafe fn discard<M>(_: *const (), p: *mut Payload) {
    // SAFETY: the payload was packed from an `M` (the vtable is chosen with it).
    drop(unsafe { Payload::unpack::<M>(p) });
}
