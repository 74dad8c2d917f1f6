//! A behaviour's run on a cell, and an actor's end: the behaviour (panics caught), what its
//! allocation makes of the actor, the end of an incarnation (its state dropped or kept, its
//! monitors told, its supervisor asked), and dead letters.

use super::super::dispatch::{self, Exec};
use super::super::{Actor, Allocation, Context};
use super::*;
use crate::core::{drop_payload, Event, Executor, ExitReason, Status, WorkerRef};
use crate::runtime::counters::Counters;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The running thread's counters, if statistics are on: all an actor's end needs of its
/// worker. (The end's entry points from an envelope's `run`, `ended`, `behaviour_panicked`
/// and `not_runnable`, are out of line; passing them this, not the whole `WorkerRef`, keeps
/// every `run` one register lighter.)
pub(super) type Counts<'a> = Option<&'a Counters>;

/// The actor's incarnation ended with `status` (or panicked), on its worker: a supervised
/// actor waits for its supervisor's decision (unless a graceful shutdown is under way); every
/// other actor ends for good. (Inline in its three callers, `ended`, `behaviour_panicked` and
/// `StartWith::run`: a call of its own under `ended` cost every actor's end a call.)
#[inline(always)]
pub(super) fn end<A: Actor>(
    cell: &Cell<A>,
    status: Status,
    counters: Counts<'_>,
    reason: ExitReason,
) {
    // SAFETY: we are the worker holding the actor's queue.
    if unsafe { cell.sup() }.is_some() {
        end_supervised(cell, status, counters, reason);
    } else {
        terminate(cell, status, counters, reason);
    }
}

/// Ends the actor for good: `stopped` hook, state dropped (or kept for a join handle),
/// retired, its monitors told.
/// (`terminate`, `finish_state` and `retire` inline into one function per actor type: as
/// three calls, their prologues and the moves of `reason` between them were a large part of
/// an actor's end.)
#[inline(always)]
pub(super) fn terminate<A: Actor>(
    cell: &Cell<A>,
    status: Status,
    counters: Counts<'_>,
    reason: ExitReason,
) {
    let mut reason = reason;
    finish_state(cell, status, counters, &mut reason);
    retire(cell, status, counters, reason);
}

/// The end of an incarnation: the `stopped` hook (not after a panic; a panicking hook makes
/// `reason` a panic), then the state is dropped, or kept for a join handle.
#[inline(always)]
pub(super) fn finish_state<A: Actor>(
    cell: &Cell<A>,
    status: Status,
    counters: Counts<'_>,
    reason: &mut ExitReason,
) {
    // SAFETY: we are the worker holding the actor's queue.
    let state = unsafe { &mut *cell.state.get() };
    if status != Status::Panicked {
        if let Some(s) = state.as_mut() {
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| s.stopped())) {
                // A failure: its monitors and links hear of it.
                *reason = ExitReason::Panicked(crate::core::panic_message(&*p).to_owned());
                panicked(cell, p, "stopped hook", counters);
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
            panicked(cell, p, "destructor", counters);
        }
    }
}

/// Makes the actor terminal (its state is gone or kept already) and tells its monitors; a
/// supervised actor's restart data and waiting mail are dropped (the mail as dead letters).
#[inline(always)]
pub(super) fn retire<A: Actor>(
    cell: &Cell<A>,
    status: Status,
    counters: Counts<'_>,
    reason: ExitReason,
) {
    // SAFETY: we are the worker holding the actor's queue.
    if unsafe { cell.sup() }.is_some() {
        drop_supervision(cell, counters);
    }
    // The incarnation that ends (once retired, a respawn may make the next one).
    let inc = cell.header.incarnation();
    // The status is terminal once retired. (The cell stays alive: its system reference is
    // released only behind the batch or job this behaviour runs in.) Then the monitors hear.
    // (One match for both calls: this is inlined into every envelope's `run`, where a second
    // match made the function save more registers on every message.)
    match Exec::of(&cell.header) {
        Exec::MessageCentric(e) => {
            // SAFETY: the actor is registered and alive, and we run its behaviour.
            unsafe { e.retire(&cell.header, status) };
            Executor::shared(e)
                .monitors
                .ended(&cell.header, inc, &reason);
        }
        Exec::Table(exec) => {
            // SAFETY: as above.
            unsafe { exec.retire(&cell.header, status) };
            exec.shared().monitors.ended(&cell.header, inc, &reason);
        }
    }
    // Senders waiting for room hear that the actor ended (after its status is terminal).
    // (The tag first: the hot bytes, not the cell's extras.)
    if dispatch::bounded(&cell.header) {
        if let Some(room) = cell.bound() {
            room.close();
        }
    }
}

/// A supervised actor ends for good: its restart data and waiting mail are dropped (the mail
/// as dead letters).
#[cold]
#[inline(never)]
pub(super) fn drop_supervision<A: Actor>(cell: &Cell<A>, counters: Counts<'_>) {
    // SAFETY: we are the worker holding the actor's queue (the caller's contract).
    let Some(sup) = (unsafe { cell.take_sup() }) else {
        return;
    };
    let waiting = sup.stash.len() as u64;
    if let Some(c) = counters {
        c.dead_letters.bump(waiting);
    }
    drop_sup(cell, sup, counters);
    if waiting > 0 {
        dead_letters(cell, waiting);
    }
}

/// Drops a supervised actor's restart data, its waiting mail one message at a time: each
/// destructor's panic is caught and reported (dropped as one queue, a second panicking
/// destructor would unwind during the first's unwinding and abort the process).
pub(super) fn drop_sup<A: Actor>(cell: &Cell<A>, mut sup: Supervised<A>, counters: Counts<'_>) {
    while let Some(f) = sup.stash.pop_front() {
        if let Err(p) = catch_unwind(AssertUnwindSafe(move || drop(f))) {
            panicked(cell, p, "destructor of waiting mail", counters);
        }
    }
    if let Err(p) = catch_unwind(AssertUnwindSafe(move || drop(sup))) {
        panicked(cell, p, "destructor of a restart factory", counters);
    }
}

/// [`end`] for a supervised actor.
#[cold]
#[inline(never)]
pub(super) fn end_supervised<A: Actor>(
    cell: &Cell<A>,
    status: Status,
    counters: Counts<'_>,
    reason: ExitReason,
) {
    let mut reason = reason;
    finish_state(cell, status, counters, &mut reason);
    // The monitors this incarnation set go with its state (a restart sets its own).
    cell.header.exec.shared().monitors.restarting(&cell.header);
    suspend(cell, status, counters, reason);
}

/// The incarnation is gone (state dropped): wait for the supervisor's decision, or end for
/// good if it cannot be asked (it ended, or a graceful shutdown is under way).
pub(super) fn suspend<A: Actor>(
    cell: &Cell<A>,
    status: Status,
    counters: Counts<'_>,
    reason: ExitReason,
) {
    cell.header.set_installed(false);
    if !cell.header.exec.shared().draining() {
        // SAFETY: we are the worker holding the actor's queue; `end` checked it is supervised.
        let sup = unsafe { cell.sup().unwrap_unchecked() };
        sup.suspended = true;
        if sup
            .notify
            .exited(arc_of(cell), sup.generation, status, reason.clone())
        {
            return;
        }
    }
    retire(cell, status, counters, reason);
}

/// A panic of the actor's code (`what`) was caught: reported and counted, then its payload
/// dropped ([`drop_payload`]).
pub(super) fn panicked<A: Actor>(
    cell: &Cell<A>,
    payload: Box<dyn std::any::Any + Send>,
    what: &str,
    counters: Counts<'_>,
) {
    cell.header
        .exec
        .shared()
        .report_panic(Some(std::any::type_name::<A>()), what, &*payload);
    if let Some(c) = counters {
        c.panics.bump(1);
    }
    drop_payload(payload);
}

/// Runs `f` with the actor's state and a context, then applies the allocation it returns.
#[inline]
pub(super) fn run_behaviour<A: Actor>(
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
        Ok(a) => ended(cell, a, ctx.exit_reason(), w.counters),
        Err(p) => behaviour_panicked(cell, p, what, w.counters),
    }
}

/// A behaviour returned a terminal allocation, or `Nodelete` after [`Context::stop`] (or
/// its equivalents: then the actor ends as `Deleted`).
#[inline(never)]
pub(super) fn ended<A: Actor>(
    cell: &Cell<A>,
    a: Allocation,
    reason: ExitReason,
    counters: Counts<'_>,
) {
    let status = match a {
        Allocation::Nodelete => Status::Deleted,
        a => a.status(),
    };
    end(cell, status, counters, reason);
}

/// A behaviour (or hook) panicked: reported, and the actor ends as `Panicked`.
#[cold]
#[inline(never)]
pub(super) fn behaviour_panicked<A: Actor>(
    cell: &Cell<A>,
    p: Box<dyn std::any::Any + Send>,
    what: &str,
    counters: Counts<'_>,
) {
    let reason = ExitReason::Panicked(crate::core::panic_message(&*p).to_owned());
    panicked(cell, p, what, counters);
    end(cell, Status::Panicked, counters, reason);
}

#[inline]
pub(super) fn runnable<A: Actor>(cell: &Cell<A>) -> bool {
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
pub(super) unsafe fn not_runnable<A: Actor>(cell: &Cell<A>, counters: Counts<'_>, f: ThenFn<A>) {
    if cell.header.status() == Status::Alive {
        // SAFETY: caller contract.
        if let Some(sup) = unsafe { cell.sup() } {
            if sup.suspended {
                sup.stash.push_back(f);
                return;
            }
        }
    }
    dead_letter(cell, counters, f);
}

/// Drops `f`, a message for the actor in `cell` that will never run, as a dead letter.
#[cold]
pub(super) fn dead_letter<A: Actor>(cell: &Cell<A>, counters: Counts<'_>, f: ThenFn<A>) {
    if let Some(c) = counters {
        c.dead_letters.bump(1);
    }
    if let Err(p) = catch_unwind(AssertUnwindSafe(move || drop(f))) {
        panicked(cell, p, "destructor of a dead letter", counters);
    }
    dead_letters(cell, 1);
}

/// Reports `count` dead letters of the actor in `cell`.
pub(super) fn dead_letters<A: Actor>(cell: &Cell<A>, count: u64) {
    cell.header.exec.shared().report(&Event::DeadLetters {
        actor: std::any::type_name::<A>(),
        count,
    });
}

/// Runs the mail a supervised actor received while it waited for its restart, in order, until
/// it is done or the actor stops being runnable (ended again: the rest waits on), or the
/// system aborts (a shutdown's deadline passed: no behaviour starts after it; the rest is
/// dropped with the actor).
pub(super) fn replay<A: Actor>(cell: &Cell<A>, w: WorkerRef<'_>) {
    let life = &cell.header.exec.shared().life;
    while runnable(cell) && !life.aborting() {
        // SAFETY: we hold the actor's queue; the borrow ends before the behaviour runs.
        let next = unsafe { cell.sup().and_then(|s| s.stash.pop_front()) };
        let Some(f) = next else { break };
        if let Some(c) = w.counters {
            c.messages_processed.bump(1);
        }
        run_behaviour(cell, w, "behaviour", move |a, ctx| f(a, ctx));
    }
}
