//! The actor cell: one heap allocation per actor holding the executor's bookkeeping (the
//! [`Header`]) and the actor's state, plus the monomorphised envelope operations that run
//! behaviours on it.
//!
//! Ownership of a cell (an `Arc`): every [`crate::Addr`] and [`crate::JoinHandle`] holds a
//! reference, and so does the system while the actor is registered — the *system reference*.
//! Envelopes hold a raw pointer and no reference: they are kept valid because the system
//! reference is released only by a *reclaim envelope*, which `retire` queues on the actor's own
//! queue after marking the actor terminal under that queue's lock. Every envelope for that
//! incarnation was queued before it (a send checks the status under the same lock) or sits in
//! the batch being processed, which runs first. The only envelopes that can be queued behind it
//! are a respawn's `Install` and the mail that follows, and `respawn` takes a new system
//! reference under the lock first, so every envelope is covered by a reference until it has run.
//! No reference count is touched per send.

use super::{Actor, Allocation, Context, Receive};
use crate::executor::actor_list::Link;
use crate::executor::envelope::{Envelope, EnvelopeVTable, Payload};
use crate::executor::mailbox::detached::DetachedUnit;
use crate::executor::mailbox::Mailbox;
use crate::executor::{report_panic, Exec, WorkerRef};
use std::cell::{Cell as StdCell, UnsafeCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;

/// Life-cycle status of an actor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Status {
    Alive = 0,
    Finished = 1,
    Deleted = 2,
    Destroyed = 3,
    Panicked = 4,
    /// The system shut down while the actor was alive.
    Stopped = 5,
}

impl Status {
    fn from_u8(v: u8) -> Self {
        match v {
            0 => Status::Alive,
            1 => Status::Finished,
            2 => Status::Deleted,
            3 => Status::Destroyed,
            4 => Status::Panicked,
            _ => Status::Stopped,
        }
    }
}

/// Per-cell operations that need the actor type.
pub(crate) struct CellVTable {
    /// Drops the state of a stopped actor and releases the system reference.
    shutdown: unsafe fn(*const Header),
    /// Releases the system reference.
    release: unsafe fn(*const Header),
    type_name: fn() -> &'static str,
}

/// The executor's part of a cell. `link` must stay the first field: list links are cast back
/// to headers, and headers to cells.
#[repr(C)]
pub(crate) struct Header {
    pub(crate) link: Link,
    pub(crate) exec: Exec,
    /// The ticket: index of the queue that carries all of this actor's messages (inverted
    /// executor), or of its registry shard (mailbox actors).
    pub(crate) queue: usize,
    /// The actor's own mailbox: every actor of the actor-centric executor, and detached actors.
    mbox: Option<Box<Mailbox>>,
    status: AtomicU8,
    /// Whether the state is present so behaviours may run. Written only by the thread that holds
    /// the actor's queue (or by `spawn` before the cell is published).
    installed: StdCell<bool>,
    joinable: AtomicBool,
    vtable: &'static CellVTable,
}

// SAFETY: `installed` and `link` are only accessed by the thread holding the actor's queue
// (processing its batch, or holding its lock), as documented on the fields; everything else is
// atomic or immutable.
unsafe impl Sync for Header {}
// SAFETY: as above.
unsafe impl Send for Header {}

impl Header {
    #[inline]
    pub(crate) fn status(&self) -> Status {
        Status::from_u8(self.status.load(Ordering::Acquire))
    }

    #[inline]
    pub(crate) fn set_status(&self, s: Status) {
        self.status.store(s as u8, Ordering::Release);
    }

    #[inline]
    pub(crate) fn installed(&self) -> bool {
        self.installed.get()
    }

    /// Only by the thread holding the actor's queue, or before the cell is published.
    #[inline]
    pub(crate) fn set_installed(&self, v: bool) {
        self.installed.set(v);
    }

    pub(crate) fn joinable(&self) -> bool {
        self.joinable.load(Ordering::Relaxed)
    }

    /// # Safety
    /// `link` is the `link` field of a live header.
    pub(crate) unsafe fn from_link<'a>(link: *const Link) -> &'a Header {
        // SAFETY: `link` is the first field of a `repr(C)` header (caller contract).
        unsafe { &*link.cast::<Header>() }
    }

    #[inline]
    pub(crate) fn mailbox(&self) -> Option<&Mailbox> {
        self.mbox.as_deref()
    }

    /// The actor's type name, as a function (calling it is left to whoever wants the name).
    pub(crate) fn type_name_fn(&self) -> fn() -> &'static str {
        self.vtable.type_name
    }

    /// Releases the system reference (the cell may be freed).
    ///
    /// # Safety
    /// `hdr` is a registered cell's header whose system reference is held and not otherwise
    /// released; called once per reference.
    pub(crate) unsafe fn release(hdr: *const Header) {
        // SAFETY: forwarded contract; the vtable matches the cell's actor type.
        unsafe { ((*hdr).vtable.release)(hdr) }
    }

    /// Drops a stopped actor's state and releases the system reference.
    ///
    /// # Safety
    /// `hdr` is a registered cell's header whose system reference is still held, called once.
    pub(crate) unsafe fn shutdown(hdr: *const Header) {
        // SAFETY: forwarded contract; the vtable matches the cell's actor type.
        unsafe { ((*hdr).vtable.shutdown)(hdr) }
    }
}

/// An actor cell.
#[repr(C)]
pub(crate) struct Cell<A> {
    pub(crate) header: Header,
    state: UnsafeCell<Option<A>>,
}

// SAFETY: the state is only accessed by the one worker holding the actor's queue (behaviours,
// termination), or after the actor is terminal by the single owner of the join handle; the
// header is Sync (above). `A: Send` lets the state move between those threads.
unsafe impl<A: Send> Sync for Cell<A> {}
// SAFETY: as above.
unsafe impl<A: Send> Send for Cell<A> {}

impl<A: Actor> Cell<A> {
    fn raw(self: &Arc<Self>) -> *const () {
        Arc::as_ptr(self).cast()
    }

    /// Takes the final state of a `Finished` actor.
    ///
    /// # Safety
    /// The status is `Finished` (read with Acquire), and the caller is the only taker.
    pub(crate) unsafe fn take_finished(&self) -> Option<A> {
        // SAFETY: caller contract: no worker touches a terminal actor's state.
        unsafe { (*self.state.get()).take() }
    }
}

/// How an actor runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// On the executor's workers.
    Pooled,
    /// On a thread of its own.
    Detached,
}

/// Spawns `actor` on `exec`. Fails, giving it back, when the system no longer accepts actors
/// (or, for a detached actor, no thread could be started).
pub(crate) fn spawn<A: Actor>(
    exec: &Exec,
    actor: A,
    joinable: bool,
    placement: Placement,
) -> Result<Arc<Cell<A>>, A> {
    if exec.closed() {
        return Err(actor);
    }
    let detached = placement == Placement::Detached;
    let unit = detached.then(|| Arc::new(DetachedUnit::new()));
    let mbox = (detached || exec.uses_mailboxes()).then(|| Box::new(Mailbox::new(unit.clone())));
    let mut cell = Arc::new(Cell {
        header: Header {
            link: Link::new(),
            exec: exec.clone(),
            queue: exec.next_ticket(),
            mbox,
            status: AtomicU8::new(Status::Alive as u8),
            installed: StdCell::new(true),
            joinable: AtomicBool::new(joinable),
            vtable: &CellOps::<A>::VTABLE,
        },
        state: UnsafeCell::new(Some(actor)),
    });
    if let Some(unit) = &unit {
        if let Err(e) = exec.core().detached.start(exec, unit, &cell.header) {
            eprintln!("actorium: cannot start a thread for a detached actor: {e}");
            let actor = Arc::get_mut(&mut cell).and_then(|c| c.state.get_mut().take());
            return Err(actor.expect("fresh cell has its state"));
        }
    }
    let raw = Arc::as_ptr(&cell).cast::<()>();
    let start = Envelope::new(raw, &Start::<A>::VTABLE, Payload::pack(()));
    // SAFETY: the header belongs to a fresh cell; on success the system reference taken by
    // `take_ref` keeps it alive until it is released (reclaim envelope, or the mailbox job).
    let registered = unsafe {
        exec.register(&cell.header, start, || {
            Arc::increment_strong_count(Arc::as_ptr(&cell))
        })
    };
    if let Err(start) = registered {
        start.discard();
        if let Some(unit) = unit {
            exec.core().detached.abandon(&unit);
        }
        // SAFETY: not registered, never shared: we are the only owner of the state.
        let actor = unsafe { (*cell.state.get()).take() }.expect("fresh cell has its state");
        return Err(actor);
    }
    exec.count_created();
    Ok(cell)
}

/// [`spawn`], or on a stopping system a [`dead_cell`] (the actor is dropped; every send fails).
pub(crate) fn spawn_or_dead<A: Actor>(
    exec: &Exec,
    actor: A,
    joinable: bool,
    placement: Placement,
) -> Arc<Cell<A>> {
    spawn(exec, actor, joinable, placement).unwrap_or_else(|actor| dead_cell(exec, actor))
}

/// A cell for an actor that was refused (its system is stopping): terminal, unregistered; the
/// actor is dropped. Every send to it fails.
fn dead_cell<A: Actor>(exec: &Exec, actor: A) -> Arc<Cell<A>> {
    drop(actor);
    Arc::new(Cell {
        header: Header {
            link: Link::new(),
            exec: exec.clone(),
            queue: 0,
            mbox: None,
            status: AtomicU8::new(Status::Stopped as u8),
            installed: StdCell::new(false),
            joinable: AtomicBool::new(false),
            vtable: &CellOps::<A>::VTABLE,
        },
        state: UnsafeCell::new(None),
    })
}

/// Sends `msg` to the actor in `cell`.
#[inline]
pub(crate) fn send<A: Receive<M>, M: Send + 'static>(cell: &Arc<Cell<A>>, msg: M) -> Result<(), M> {
    let env = Envelope::new(cell.raw(), &Deliver::<A, M>::VTABLE, Payload::pack(msg));
    let exec = &cell.header.exec;
    match exec.push(&cell.header, env) {
        Ok(()) => {
            exec.count_sent();
            Ok(())
        }
        // SAFETY: the envelope was packed from an `M` just above.
        Err(env) => Err(unsafe { env.into_message::<M>() }),
    }
}

/// Puts a new state into a `Destroyed` actor's cell, in order with its queue.
pub(crate) fn respawn<A: Actor>(cell: &Arc<Cell<A>>, actor: A) -> Result<(), A> {
    let env = Envelope::new(cell.raw(), &Install::<A>::VTABLE, Payload::pack(actor));
    let exec = &cell.header.exec;
    // SAFETY: `revive` takes a new system reference for the cell before queuing `env`.
    match unsafe {
        exec.revive(&cell.header, env, || {
            Arc::increment_strong_count(Arc::as_ptr(cell))
        })
    } {
        Ok(()) => Ok(()),
        // SAFETY: packed from an `A` above.
        Err(env) => Err(unsafe { env.into_message::<A>() }),
    }
}

/// Ends the actor after a behaviour returned `status` (or panicked), on its worker.
fn terminate<A: Actor>(cell: &Cell<A>, status: Status, w: WorkerRef<'_>) {
    // SAFETY: we are the worker holding the actor's queue.
    let state = unsafe { &mut *cell.state.get() };
    if status != Status::Panicked {
        if let Some(s) = state.as_mut() {
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| s.stopped())) {
                panicked::<A>(&*p, "stopped hook", w);
            }
        }
    }
    if status != Status::Finished {
        cell.header.installed.set(false);
        let old = state.take();
        if let Err(p) = catch_unwind(AssertUnwindSafe(move || drop(old))) {
            panicked::<A>(&*p, "destructor", w);
        }
    }
    let raw = (cell as *const Cell<A>).cast::<()>();
    let reclaim = || Envelope::new(raw, &Reclaim::<A>::VTABLE, Payload::pack(()));
    // SAFETY: the actor is registered (it was alive), and the reclaim envelope releases the
    // system reference.
    unsafe { cell.header.exec.retire(&cell.header, status, reclaim) };
}

fn panicked<A>(payload: &(dyn std::any::Any + Send), what: &str, w: WorkerRef<'_>) {
    report_panic(
        &format!("actor `{}` ({what})", std::any::type_name::<A>()),
        payload,
    );
    if let Some(c) = w.counters() {
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
        Ok(Allocation::Nodelete) => {}
        Ok(a) => terminate(cell, a.status(), w),
        Err(p) => {
            panicked::<A>(&*p, what, w);
            terminate(cell, Status::Panicked, w);
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
        release: Self::release,
        type_name: std::any::type_name::<A>,
    };

    unsafe fn release(hdr: *const Header) {
        // SAFETY: the header is the first field of a `Cell<A>` (vtable matches); this drops
        // the system reference (caller contract of `Header::release`).
        drop(unsafe { Arc::from_raw(hdr.cast::<Cell<A>>()) });
    }

    unsafe fn shutdown(hdr: *const Header) {
        // SAFETY: the header is the first field of a `Cell<A>` (vtable matches); the system
        // reference is still held (caller contract), so the cell is alive.
        let cell = unsafe { &*hdr.cast::<Cell<A>>() };
        cell.header.installed.set(false);
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
    };

    unsafe fn run(target: *const (), p: *mut Payload, w: WorkerRef<'_>) {
        // SAFETY: the envelope targets a `Cell<A>` kept alive by the system reference.
        let cell = unsafe { &*target.cast::<Cell<A>>() };
        // SAFETY: packed from an `M` by `send`; consumed once.
        let msg = unsafe { Payload::unpack::<M>(p) };
        if !runnable(cell) {
            if let Some(c) = w.counters() {
                c.dead_letters.bump(1);
            }
            return;
        }
        if let Some(c) = w.counters() {
            c.messages_processed.bump(1);
        }
        run_behaviour(cell, w, "behaviour", move |a, ctx| a.receive(msg, ctx));
    }
}

/// Envelope: run the actor's `started` hook on its worker, before any message.
struct Start<A>(A);
impl<A: Actor> Start<A> {
    const VTABLE: EnvelopeVTable = EnvelopeVTable {
        run: Self::run,
        discard: discard::<()>,
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
            cell.header.installed.set(true);
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
        cell.header.installed.set(true);
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
    };

    unsafe fn run(target: *const (), p: *mut Payload, _: WorkerRef<'_>) {
        // SAFETY: forwarded.
        unsafe { Self::release(target, p) }
    }

    unsafe fn release(target: *const (), _: *mut Payload) {
        // SAFETY: this envelope owns the system reference taken at spawn; dropping it may drop a
        // finished actor's state (user code: a panic there is caught by the worker's drain loop).
        drop(unsafe { Arc::from_raw(target.cast::<Cell<A>>()) });
    }
}

unsafe fn discard<M>(_: *const (), p: *mut Payload) {
    // SAFETY: the payload was packed from an `M` (the vtable is chosen with it).
    drop(unsafe { Payload::unpack::<M>(p) });
}
