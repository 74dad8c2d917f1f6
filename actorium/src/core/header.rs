//! The executor's part of an actor cell: the [`Header`], the actor's [`Status`], and the
//! type-erased cell operations ([`CellVTable`]) the executors call without knowing the actor's
//! type.
//!
//! Ownership of a cell (an `Arc` made by the actor API): every address and join handle holds a
//! reference, and so does the system while the actor is registered — the *system reference*,
//! taken by the executor with [`Header::retain`] and released with [`Header::release`] (by a
//! reclaim envelope, a mailbox job, or shutdown). Envelopes hold a raw pointer and no
//! reference: each executor keeps the system reference until every envelope for the actor has
//! run (see its README).

use super::actor_list::Link;
use super::envelope::{Envelope, EnvelopeVTable, Payload};
use super::mailbox::Mailbox;
use super::ExecRef;
use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};

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
    pub(crate) shutdown: unsafe fn(*const Header),
    /// Takes a system reference (increments the cell's reference count).
    pub(crate) retain: unsafe fn(*const Header),
    /// Releases the system reference.
    pub(crate) release: unsafe fn(*const Header),
    /// The envelope that releases the system reference when it runs (or is discarded).
    pub(crate) reclaim: &'static EnvelopeVTable,
    pub(crate) type_name: fn() -> &'static str,
    /// Queues a stop request behind the actor's mail (graceful shutdown: it ends as if deleted,
    /// with the exit reason `Shutdown`); nothing if it no longer accepts messages.
    pub(crate) stop: unsafe fn(*const Header),
}

/// `join` flag: a join handle exists.
const HANDLE: u8 = 1;
/// `join` flag: the actor finished and its final state was kept for the handle.
const KEPT: u8 = 2;
/// `join` flag: a monitor was set on the actor (`core/monitors.rs`).
const MONITORED: u8 = 4;
/// `join` bits 3 to 7: the actor's incarnation, counted modulo 32 ([`Header::incarnation`]).
const INCARNATION: u8 = 0b1111_1000;
/// One incarnation more (adding it never carries into the flags below).
const ONE_INCARNATION: u8 = 8;

/// `flags`: the actor's system counts statistics.
const STATS: u8 = 1;
/// `flags` above [`STATS`]: the dispatch tag, an opaque byte the actor layer chooses at spawn
/// to pick its code for the cell's executor (`actor/dispatch.rs`) without reading the
/// executor's table, which lies past the hot bytes. The core gives it no meaning.
const DISPATCH_SHIFT: u8 = 1;

/// The executor's part of a cell, the first field of a `repr(C)` cell (so a header pointer is
/// a cell pointer). The fields a send to the default executor reads (`ticket`, `status`,
/// `installed`, `flags`, and the executor's address, the first half of `exec`: [`HOT_END`] =
/// 16 bytes) come first; the rest (`exec`'s table and `mbox`, which sends to other executors
/// read too, then `vtable`, `link` and the cell's `extra`) sit between them and the actor's
/// state, which its behaviours write. Sharing a cache line with that state made every send to
/// a busy actor miss; the cell pads the rest of the way if needed (`STATE_AT` in
/// `actor/cell/mod.rs`). Sixteen hot bytes are what let a cell keep its state 64 bytes in, and a
/// cell with a 32-byte state within glibc's fastbins (past them, every free on a worker of a
/// cell allocated elsewhere takes the arena's lock, which slows spawn-heavy work). (A full
/// cache line of padding would not depend on the allocator's alignment, but costs 32 bytes
/// per cell, which spawn-heavy workloads pay for.)
#[repr(C)]
pub(crate) struct Header {
    /// The ticket: index of the queue that carries all of this actor's messages (message
    /// queues), or of its registry shard (mailbox actors). See [`Header::queue`].
    ticket: AtomicU32,
    status: AtomicU8,
    /// Whether the state is present so behaviours may run. Written only by the thread that holds
    /// the actor's queue (or before the cell is published).
    installed: Cell<bool>,
    /// [`STATS`] and the dispatch tag, fixed at construction (read on the send path, where
    /// the system's own settings are one indirection further).
    flags: u8,
    /// [`HANDLE`], [`KEPT`] and [`MONITORED`]: who drops a `Finished` actor's final state, and
    /// whether monitors wait for its end. Written at most a few times per actor.
    join: AtomicU8,
    pub(crate) exec: ExecRef,
    /// The actor's own mailbox (executors that schedule actors one by one).
    mbox: Option<Box<Mailbox>>,

    vtable: &'static CellVTable,
    /// On its queue's or registry shard's list of live actors ([`Header::from_link`]).
    pub(crate) link: Link,
}

/// Where the fields a send to the default executor reads end, within a header (a cell keeps
/// its state at least a cache line past this): the first word of `exec` is the executor's
/// address ([`ExecRef`] is `repr(C)`).
pub(crate) const HOT_END: usize =
    std::mem::offset_of!(Header, exec) + std::mem::size_of::<*const ()>();

impl Header {
    /// The ticket: index of the queue that carries all of this actor's messages (message
    /// queues), or of its registry shard (mailbox actors).
    ///
    /// Fixed for mailbox actors. The message-centric executor may move an actor to another
    /// queue while none of its behaviours runs, taking whatever is queued for it along, in
    /// order, and changing the ticket under the old queue's lock ([`Header::move_to_queue`]):
    /// a sender that read the old ticket checks it again under that lock.
    #[inline]
    pub(crate) fn queue(&self) -> usize {
        self.ticket.load(Ordering::Relaxed) as usize
    }

    /// Gives the actor queue `q` (message-centric executor). Only under the lock of its
    /// current queue and `q`'s, while none of its behaviours runs and with everything queued
    /// for it moved along (a move while its queue is empty and not processed, or a split by
    /// the worker holding that queue: `executor/message_centric/README.md`, "Placement").
    #[inline]
    pub(crate) fn move_to_queue(&self, q: usize) {
        self.ticket.store(q as u32, Ordering::Relaxed);
    }
}

// SAFETY: `link` is only accessed under the lock of the list it is on (its work queue's lock,
// or its registry shard's); `installed` only by the thread running the actor's behaviours (the
// worker holding its queue, or running its job), before the cell is published, or by shutdown
// once every thread has stopped. Everything else is atomic or immutable.
unsafe impl Sync for Header {}
// SAFETY: as above.
unsafe impl Send for Header {}

impl Header {
    /// A header for a cell of `exec`, whose system keeps statistics if `stats_on`; `alive`
    /// false makes a terminal (refused) one. `dispatch`: the actor layer's tag (see
    /// [`Self::dispatch_has`]; below 128).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        exec: ExecRef,
        dispatch: u8,
        stats_on: bool,
        queue: usize,
        mbox: Option<Box<Mailbox>>,
        alive: bool,
        joinable: bool,
        vtable: &'static CellVTable,
    ) -> Self {
        debug_assert!(dispatch < 1 << (8 - DISPATCH_SHIFT));
        let flags = if alive && stats_on { STATS } else { 0 } | dispatch << DISPATCH_SHIFT;
        Self {
            link: Link::new(),
            exec,
            ticket: AtomicU32::new(
                u32::try_from(queue).expect("fewer than 2^32 queues and registry shards"),
            ),
            mbox,
            status: AtomicU8::new(if alive {
                Status::Alive
            } else {
                Status::Stopped
            } as u8),
            installed: Cell::new(alive),
            flags,
            join: AtomicU8::new(if joinable { HANDLE } else { 0 }),
            vtable,
        }
    }

    #[inline]
    pub(crate) fn status(&self) -> Status {
        Status::from_u8(self.status.load(Ordering::Acquire))
    }

    #[inline]
    pub(crate) fn set_status(&self, s: Status) {
        self.status.store(s as u8, Ordering::Release);
    }

    /// Whether the actor's system counts statistics.
    #[inline]
    pub(crate) fn stats(&self) -> bool {
        self.flags & STATS != 0
    }

    /// Whether the dispatch tag the header was made with (the actor layer's:
    /// `actor/dispatch.rs`) has all the bits of `bits`: one bit test on the send path (reading
    /// the tag whole and comparing it cost two more instructions a send). Read from the first
    /// [`HOT_END`] bytes, unlike `exec`'s table.
    #[inline(always)]
    pub(crate) fn dispatch_has(&self, bits: u8) -> bool {
        // (A tag of no bits would match every header.)
        debug_assert!(bits != 0, "a dispatch tag to test has at least one bit");
        let mask = bits << DISPATCH_SHIFT;
        self.flags & mask == mask
    }

    /// Whether, of the dispatch tag's bits in `among`, exactly those of `bits` are set (one
    /// masked compare, as [`Self::dispatch_has`]).
    #[inline(always)]
    pub(crate) fn dispatch_is(&self, bits: u8, among: u8) -> bool {
        debug_assert!(bits & !among == 0);
        self.flags & (among << DISPATCH_SHIFT) == bits << DISPATCH_SHIFT
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

    /// Which incarnation of the actor is installed: respawns so far, modulo 32 (spare bits of
    /// a byte the header already has: a wider count would move the state a cache line
    /// further). A reply continuation or a monitor's or link's reaction carries the
    /// incarnation it was made for, and is dropped if another one is installed when it comes
    /// (a respawned actor is a new incarnation; a supervised restart keeps the number, and its
    /// continuations, by design). Read anywhere (for a link, by the other actor's worker);
    /// changed only by a respawn (the executor's `revive`), under the actor's queue or mailbox
    /// lock, before the actor is marked alive again: whoever sees it alive sees the new
    /// number (the status's Release store, the reader's Acquire load).
    #[inline]
    pub(crate) fn incarnation(&self) -> u8 {
        self.join.load(Ordering::Relaxed) & INCARNATION
    }

    /// A respawn makes the next incarnation ([`Self::incarnation`]), before the status says
    /// alive.
    pub(crate) fn next_incarnation(&self) {
        self.join.fetch_add(ONE_INCARNATION, Ordering::Relaxed);
    }

    /// Whether a join handle waits for this actor (its waiters are woken at termination).
    pub(crate) fn joinable(&self) -> bool {
        self.join.load(Ordering::Relaxed) & HANDLE != 0
    }

    /// The actor finished: whether its final state must be kept for a join handle. If no handle
    /// exists (any more) the caller drops the state: nobody could ever take it, and a state
    /// holding the actor's own address would otherwise keep the cell, and with it the whole
    /// executor, alive forever. Exactly one of this and [`Self::handle_dropped`] decides to
    /// drop a kept state.
    pub(crate) fn keep_final_state(&self) -> bool {
        self.join.fetch_or(KEPT, Ordering::AcqRel) & HANDLE != 0
    }

    /// A monitor is being set (see `core/monitors.rs` for the ordering).
    pub(crate) fn mark_monitored(&self) {
        self.join.fetch_or(MONITORED, Ordering::AcqRel);
    }

    /// Whether a monitor was ever set on this actor, read by the actor's end after it stored
    /// the terminal status: an RMW on `join` (not a load), so that it comes after or before
    /// [`Self::mark_monitored`] in `join`'s modification order (see `core/monitors.rs`).
    pub(crate) fn monitored(&self) -> bool {
        self.join.fetch_or(0, Ordering::AcqRel) & MONITORED != 0
    }

    /// The join handle is dropped without joining: whether it must drop a final state that was
    /// kept for it (from now on, [`Self::keep_final_state`] answers false).
    pub(crate) fn handle_dropped(&self) -> bool {
        self.join.fetch_and(!HANDLE, Ordering::AcqRel) & KEPT != 0
    }

    /// # Safety
    /// `link` is the `link` field of a live header.
    pub(crate) unsafe fn from_link<'a>(link: *const Link) -> &'a Header {
        // SAFETY: `link` is the `link` field of a `repr(C)` header (caller contract), so the
        // header starts that many bytes before it, within the same allocation.
        unsafe {
            &*link
                .cast::<u8>()
                .sub(std::mem::offset_of!(Header, link))
                .cast::<Header>()
        }
    }

    #[inline]
    pub(crate) fn mailbox(&self) -> Option<&Mailbox> {
        self.mbox.as_deref()
    }

    /// The actor's type name, as a function (calling it is left to whoever wants the name).
    pub(crate) fn type_name_fn(&self) -> fn() -> &'static str {
        self.vtable.type_name
    }

    /// Takes a system reference for the cell.
    #[inline]
    pub(crate) fn retain(&self) {
        // SAFETY: the vtable matches the cell's actor type, and `self` is alive.
        unsafe { (self.vtable.retain)(self) }
    }

    /// Asks the actor to end after the messages queued for it (see `CellVTable::stop`).
    pub(crate) fn request_stop(&self) {
        // SAFETY: the vtable matches the cell's actor type, and `self` is alive.
        unsafe { (self.vtable.stop)(self) }
    }

    /// Drops a reference taken with [`Self::retain`].
    ///
    /// # Safety
    /// The caller owns a reference taken with `retain` and gives it up; `self` is not used
    /// afterwards.
    pub(crate) unsafe fn drop_ref(&self) {
        // SAFETY: caller contract; the vtable matches the cell.
        unsafe { (self.vtable.release)(self) }
    }

    /// The envelope that releases the system reference when it runs.
    pub(crate) fn reclaim_envelope(&self) -> Envelope {
        let target = (self as *const Header).cast::<()>();
        Envelope::new(target, self.vtable.reclaim, Payload::pack(()))
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
