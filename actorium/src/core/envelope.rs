//! Envelopes (the Cforall actor system: Colby Parsons, MMath thesis, Waterloo 2023,
//! "Envelopes"): the unit of work a send packages and a worker runs.
//!
//! An envelope is a fixed-size value — target, a static vtable, and the message itself stored
//! inline — so the copy queue can store envelopes by value and a send allocates nothing. A
//! message larger than [`INLINE`] bytes (or aligned above 8) is boxed, and its envelope carries
//! the box. The vtable is monomorphised per (actor, message) pair: the Cforall actor thesis's
//! generated `?<<?` operator that "addresses" the envelope to the right `receive` routine.

use super::WorkerRef;
use std::mem::{align_of, size_of, MaybeUninit};

/// Bytes of message stored inline in an envelope.
pub(crate) const INLINE: usize = 32;

/// Inline message storage.
#[repr(C, align(8))]
pub(crate) struct Payload(MaybeUninit<[u8; INLINE]>);

impl Payload {
    /// Whether `M` travels inline (no allocation) rather than boxed.
    pub(crate) const fn is_inline<M>() -> bool {
        size_of::<M>() <= INLINE && align_of::<M>() <= align_of::<Payload>()
    }

    #[inline]
    pub(crate) fn pack<M>(msg: M) -> Self {
        let mut p = Payload(MaybeUninit::uninit());
        if Self::is_inline::<M>() {
            // SAFETY: `M` fits in the payload's size and alignment (checked above), and the
            // storage is fresh, so writing one `M` at its start is in bounds and aligned.
            unsafe { p.0.as_mut_ptr().cast::<M>().write(msg) };
        } else {
            let b = Box::into_raw(Box::new(msg));
            // SAFETY: a pointer fits in INLINE bytes with the payload's alignment.
            unsafe { p.0.as_mut_ptr().cast::<*mut M>().write(b) };
        }
        p
    }

    /// Moves the message out.
    ///
    /// # Safety
    /// `p` was made by `pack::<M>` and has not been unpacked since.
    #[inline]
    pub(crate) unsafe fn unpack<M>(p: *mut Payload) -> M {
        if Self::is_inline::<M>() {
            // SAFETY: by the caller's contract an `M` was written inline and is still there.
            unsafe { p.cast::<M>().read() }
        } else {
            // SAFETY: by the caller's contract the payload holds a `Box<M>` raw pointer.
            unsafe { *Box::from_raw(p.cast::<*mut M>().read()) }
        }
    }
}

/// Type-erased operations on an envelope, one static instance per (actor, message) pair.
pub(crate) struct EnvelopeVTable {
    /// Runs the unit of work on the current worker. Consumes the payload.
    pub(crate) run: unsafe fn(target: *const (), payload: *mut Payload, worker: WorkerRef<'_>),
    /// Disposes of an envelope that will never run (shutdown). Consumes the payload.
    pub(crate) discard: unsafe fn(target: *const (), payload: *mut Payload),
    /// Whether it carries a message (a send), rather than the executor's own work (an actor's
    /// start, install or reclaim): statistics count messages only.
    pub(crate) message: bool,
}

/// A unit of work: a message addressed to a behaviour of one actor.
pub(crate) struct Envelope {
    target: *const (),
    vtable: &'static EnvelopeVTable,
    payload: Payload,
}

// SAFETY: an envelope is only built from `Send` messages addressed to actor cells that are
// `Sync` for the executor's purposes (their state is only touched by the worker that holds the
// queue); the raw target pointer is kept alive by the system's reference to the cell.
unsafe impl Send for Envelope {}

impl Envelope {
    #[inline]
    pub(crate) fn new(
        target: *const (),
        vtable: &'static EnvelopeVTable,
        payload: Payload,
    ) -> Self {
        Self {
            target,
            vtable,
            payload,
        }
    }

    /// The actor cell it is addressed to.
    #[inline]
    pub(crate) fn target(&self) -> *const () {
        self.target
    }

    /// The target field of the envelope at `e`, read without making a reference to it.
    ///
    /// # Safety
    /// `e` points to initialised envelope bytes (they may have been moved out bitwise).
    #[inline]
    pub(crate) unsafe fn target_at(e: *const Envelope) -> *const () {
        // SAFETY: caller contract; a raw pointer field is read bitwise.
        unsafe { std::ptr::addr_of!((*e).target).read() }
    }

    /// Whether it carries a message rather than the executor's own work.
    #[inline]
    pub(crate) fn is_message(&self) -> bool {
        self.vtable.message
    }

    /// Runs it, consuming it.
    #[inline]
    pub(crate) fn run(mut self, worker: WorkerRef<'_>) {
        // SAFETY: the payload was packed for this vtable and is consumed exactly once here;
        // `self` is moved in, so nothing else can run or discard it.
        unsafe { (self.vtable.run)(self.target, &mut self.payload, worker) }
    }

    /// Disposes of it without running it.
    pub(crate) fn discard(mut self) {
        // SAFETY: as for `run`: one consumption of a payload packed for this vtable.
        unsafe { (self.vtable.discard)(self.target, &mut self.payload) }
    }

    /// Takes the message back out of an envelope that could not be enqueued.
    ///
    /// # Safety
    /// The envelope was built with a payload packed from an `M`.
    pub(crate) unsafe fn into_message<M>(mut self) -> M {
        // SAFETY: forwarded caller contract; the envelope is consumed.
        unsafe { Payload::unpack::<M>(&mut self.payload) }
    }
}
