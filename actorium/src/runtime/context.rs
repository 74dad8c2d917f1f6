//! What the calling thread runs work for (as tokio's `runtime::context`): the pool and
//! worker it is on, so executors can take their local fast paths ([`current`]); the system it
//! runs work for, so a blocking wait on that system from inside it can be refused instead of
//! deadlocking ([`runs_for`], [`own_system_aborting`]); and the thread's local sink and
//! hand-off count, which executors read to decide where a send goes. The worker loop sets it
//! with [`Enter::worker`]; a detached actor's thread with [`Enter::detached`]; code that must
//! not see the worker it runs on (a policy's hook, a task run while helping) runs inside
//! [`Enter::outside`].

use super::life::Life;
use super::pool::Pool;
use super::worker::{Unit, Worker};
use std::cell::Cell;
use std::ptr;

/// What the calling thread runs work for.
#[derive(Clone, Copy)]
struct Current {
    /// The pool whose worker this thread is (null: not a worker, or outside the unit's code).
    pool: *const (),
    /// That worker (a `Worker<U>` of the pool's unit type); on a detached actor's thread, that
    /// actor.
    worker: *const (),
    /// The system whose work this thread runs (null: none).
    owner: *const (),
    /// `Unit::publish_kept` of the worker's unit, for `worker` (only while the thread runs
    /// that unit's code: set with `worker` by `Enter::worker`).
    publish: Option<unsafe fn(*const ())>,
    /// The life cycle of the system `owner` (null: none), which lives while this thread runs
    /// that system's work.
    life: *const Life,
}

const NOBODY: Current = Current {
    pool: ptr::null(),
    worker: ptr::null(),
    owner: ptr::null(),
    publish: None,
    life: ptr::null(),
};

thread_local! {
    static CURRENT: Cell<Current> = const { Cell::new(NOBODY) };
    static HANDOFFS: Cell<u32> = const { Cell::new(0) };
    /// Whether the unit code this thread runs keeps work back ([`note_kept`]).
    static KEPT: Cell<bool> = const { Cell::new(false) };
    /// Whether this thread must never block ([`must_not_block`]).
    static NO_BLOCKING: Cell<bool> = const { Cell::new(false) };
}

/// Marks the calling thread as one that must never block: a thread that serves many (the
/// system's timer thread fires every timer): a send that would wait (a congested network
/// link) is handed to a thread of its own instead, and a blocking wait for a reply is
/// refused.
pub(crate) fn never_block() {
    NO_BLOCKING.with(|b| b.set(true));
}

/// Runs `f` with the calling thread marked as one that must never block ([`never_block`]),
/// then restores the mark it had (also if `f` panics): for code run on a thread that serves
/// many, borrowed for a callback (a remote node's Zenoh callbacks).
#[cfg_attr(not(feature = "remote"), allow(dead_code))]
pub(crate) fn not_blocking<T>(f: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            NO_BLOCKING.with(|b| b.set(self.0));
        }
    }
    let _restore = Restore(NO_BLOCKING.with(|b| b.replace(true)));
    f()
}

/// Whether the calling thread must never block ([`never_block`], [`not_blocking`]): a send
/// that would wait is handed to another thread (only remote sends can wait today), and a
/// blocking wait for a reply is refused (`AskError::WouldBlock`).
pub(crate) fn must_not_block() -> bool {
    NO_BLOCKING.with(Cell::get)
}

/// Counts a hand-off made by this thread: work published for someone who may be waiting for
/// it (a message into a queue other than the batch a worker runs, a reply that wakes a
/// waiter).
/// Read by [`handoffs`]: an executor that lets a stream's batches grow does so only while
/// what it runs hands nothing off, so that nobody waits for it (`executor/message_centric/README.md`,
/// placement rule 7).
#[inline]
pub(crate) fn note_handoff() {
    HANDOFFS.with(|h| h.set(h.get().wrapping_add(1)));
}

/// This thread's hand-offs so far (wrapping; compare two readings for equality).
#[inline]
pub(crate) fn handoffs() -> u32 {
    HANDOFFS.with(Cell::get)
}

/// The unit's code on this thread keeps work back to hand over later (`true`), or no longer
/// (`false`): while it does, [`publish_kept`] calls [`Unit::publish_kept`].
#[inline]
pub(crate) fn note_kept(kept: bool) {
    KEPT.with(|k| k.set(kept));
}

/// Calls [`Unit::publish_kept`] for the worker whose unit's code the calling thread runs (a
/// behaviour, or a fork/join task it runs as the behaviour), if that code keeps work back
/// ([`note_kept`]); nothing elsewhere (a task run between visits runs as outside code, and
/// keeps nothing back). For the fork/join executor, before it lets thieves take a task and
/// while it waits for one: one thread-local load when nothing is kept (paid on every `join`,
/// where reading the worker instead cost fine-grained work measurably).
#[inline(always)]
pub(crate) fn publish_kept() {
    if KEPT.with(Cell::get) {
        publish_kept_now();
    }
}

#[cold]
#[inline(never)]
fn publish_kept_now() {
    let c = CURRENT.with(Cell::get);
    if let Some(publish) = c.publish {
        // SAFETY: `publish` and `worker` were set together by `Enter::worker`, for a worker
        // of the unit type `publish` was made for, which lives on this thread's stack while
        // CURRENT names it; this call is nested in that scope and keeps no reference.
        unsafe { publish(c.worker) }
    }
}

/// [`Unit::publish_kept`] of worker `w`, for [`publish_kept`].
///
/// # Safety
/// `w` points to a live `Worker<'_, U>` of this thread, for the duration of the call.
unsafe fn publish_kept_of<U: Unit>(w: *const ()) {
    // SAFETY: the caller's contract.
    let me = unsafe { &*w.cast::<Worker<'_, U>>() };
    me.unit.publish_kept(me);
}

/// The worker of `pool` running on this thread, if any.
///
/// # Safety
/// The reference is used only during the caller's call and never kept: the worker lives on
/// its thread's stack while the thread runs the loop (or a driver's step), and code that sees it
/// here runs nested inside that, but the lifetime `'p` says nothing of it.
#[inline]
pub(crate) unsafe fn current<'p, U: Unit>(pool: &'p Pool<U::Slot>) -> Option<&'p Worker<'p, U>> {
    let c = CURRENT.with(Cell::get);
    if !ptr::eq(c.pool, (pool as *const Pool<U::Slot>).cast()) {
        return None;
    }
    // `c.worker` was set by `Enter::worker` for a `Worker` of this pool, whose unit type is
    // `U` (a pool is run by one unit type), and that worker lives on this thread's stack for
    // as long as CURRENT names it: every caller that can observe it runs nested inside the
    // scope of that `Enter`, and keeps no reference beyond its call (the contract).
    // SAFETY: as just said.
    Some(unsafe { &*c.worker.cast::<Worker<'p, U>>() })
}

/// Whether the calling thread runs work for the system `owner` (a worker of its pool, a
/// detached actor's thread, or a thread driving a caller-driven system).
pub(crate) fn runs_for(owner: *const ()) -> bool {
    !owner.is_null() && ptr::eq(CURRENT.with(Cell::get).owner, owner)
}

/// Whether the system whose work the calling thread runs (a worker's, or a detached actor's
/// thread) is being dropped: such a thread is about to be joined, so a wait on it must give
/// up rather than hold the drop (`Pending::wait` on a detached actor's thread, for an actor
/// whose mail the drop disposes of only after that join). The drop unparks those threads.
pub(crate) fn own_system_aborting() -> bool {
    let life = CURRENT.with(Cell::get).life;
    // SAFETY: `life` was set by `Enter` to the life of the system whose work this thread
    // runs, for as long as it runs it (the worker's loop or the detached actor's thread body
    // borrows the system's shared state, which owns the life, for that whole time); a wait
    // that calls this is nested in that scope.
    !life.is_null() && unsafe { (*life).aborting() }
}

/// On a thread of the system `owner` that runs one actor only (a detached actor's thread):
/// that actor.
pub(crate) fn detached_actor_of(owner: *const ()) -> Option<*const ()> {
    let c = CURRENT.with(Cell::get);
    (runs_for(owner) && c.pool.is_null() && !c.worker.is_null()).then_some(c.worker)
}

/// Where the calling thread's sends may append without a lock: an executor's local fast path
/// for the job this thread runs (an opaque target, the job's identity, and the appends left
/// before the path closes). An executor sets it around a job's behaviours
/// ([`set_local_sink`]); [`Enter::outside`] hides it, so that outside code run meanwhile (a
/// fork/join task taken from another worker, a scheduling policy's hook) never appends to the
/// job's batch ahead of mail it sent earlier through a lock.
#[derive(Clone, Copy)]
pub(crate) struct LocalSink {
    pub(crate) target: *const (),
    pub(crate) left: u32,
}

/// No local sink: every send takes its lock.
pub(crate) const NO_SINK: LocalSink = LocalSink {
    target: ptr::null(),
    left: 0,
};

thread_local! {
    static SINK: Cell<LocalSink> = const { Cell::new(NO_SINK) };
}

/// The calling thread's local sink ([`LocalSink`]).
#[inline(always)]
pub(crate) fn local_sink() -> LocalSink {
    SINK.with(Cell::get)
}

/// Sets the calling thread's local sink; returns the one it replaces.
#[inline]
pub(crate) fn set_local_sink(s: LocalSink) -> LocalSink {
    SINK.with(|c| c.replace(s))
}

/// Sets CURRENT for a scope, restoring the previous value on drop (a caller-driven system may
/// be driven from inside a behaviour of another system); [`Enter::outside`] also hides the
/// local sink for the scope.
pub(crate) struct Enter(Current, Option<LocalSink>);

impl Enter {
    #[inline]
    fn set(c: Current) -> Self {
        Enter(CURRENT.with(|cur| cur.replace(c)), None)
    }

    /// The calling thread is worker `me` of its unit's pool.
    pub(crate) fn worker<U: Unit>(me: &Worker<'_, U>) -> Self {
        Self::set(Current {
            pool: (me.unit.pool() as *const Pool<U::Slot>).cast(),
            worker: (me as *const Worker<'_, U>).cast(),
            owner: me.unit.owner(),
            publish: Some(publish_kept_of::<U>),
            life: me.unit.life(),
        })
    }

    /// The calling thread runs the work of one actor, `actor` (an address used as an
    /// identity), for `owner` (whose life cycle is `life`), and is no worker of a pool (a
    /// detached actor's thread).
    pub(crate) fn detached(owner: *const (), life: &Life, actor: *const ()) -> Self {
        Self::set(Current {
            pool: ptr::null(),
            worker: actor,
            owner,
            publish: None,
            life,
        })
    }

    /// Code that must not see the worker it runs on (a scheduling policy's code: a send it
    /// makes is not a behaviour's send). The owner is kept.
    #[inline]
    pub(crate) fn outside() -> Self {
        let c = CURRENT.with(Cell::get);
        let mut e = Self::set(Current {
            owner: c.owner,
            life: c.life,
            ..NOBODY
        });
        e.1 = Some(set_local_sink(NO_SINK));
        e
    }
}

impl Drop for Enter {
    #[inline]
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.0));
        if let Some(s) = self.1 {
            set_local_sink(s);
        }
    }
}
