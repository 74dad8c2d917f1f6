//! [`ExecRef`]: a counted reference to an executor, as actor cells and system handles hold it.
//!
//! It is an `Arc<dyn Executor>` taken apart by hand: a thin pointer to the executor and a
//! static table of operations for its type ([`ExecOps`]). Every operation goes through
//! [`Executor`] (a trait object made by [`ExecRef::get`]) except the one on the hot path, a
//! send, which the table calls directly: an `Arc<dyn Executor>` must work out where the
//! executor lies in its allocation from the alignment in its vtable on every call, and that
//! made a self-send measurably slower than a direct call. The actor layer goes further for the
//! default executor and for mailbox actors (see `actor/cell/mod.rs`, `send`).
//!
//! The table of an executor type can also be a named `static` ([`ops_of`]): then the layers
//! above can recognise that type by the table's address ([`ExecRef::is`]) and call it directly,
//! inlined, where it pays (the actor layer does so for the default executor's sends).
//!
//! Invariant: `ptr` points to the `E` of a live `Arc<E>` whose type made `ops`, and the
//! `ExecRef` owns one strong count of it.

use super::envelope::Envelope;
use super::header::Header;
use super::Executor;
use std::fmt;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::Arc;

/// The operations of one executor type, on a thin pointer to it.
pub(crate) struct ExecOps {
    push: unsafe fn(*const (), &Header, Envelope) -> Result<(), Envelope>,
    get: unsafe fn(*const ()) -> *const dyn Executor,
    retain: unsafe fn(*const ()),
    release: unsafe fn(*const ()),
}

/// The table of `E`, to be stored in a named `static` (see [`ExecRef::from_arc_with`]).
pub(crate) const fn ops_of<E: Executor>() -> ExecOps {
    Ops::<E>::OPS
}

struct Ops<E>(E);

impl<E: Executor> Ops<E> {
    const OPS: ExecOps = ExecOps {
        push: Self::push,
        get: Self::get,
        retain: Self::retain,
        release: Self::release,
    };

    unsafe fn push(p: *const (), hdr: &Header, env: Envelope) -> Result<(), Envelope> {
        // SAFETY: `p` points to a live `E` (module invariant).
        unsafe { &*p.cast::<E>() }.push(hdr, env)
    }

    unsafe fn get(p: *const ()) -> *const dyn Executor {
        p.cast::<E>() as *const dyn Executor
    }

    unsafe fn retain(p: *const ()) {
        // SAFETY: `p` is the data pointer of a live `Arc<E>` (module invariant).
        unsafe { Arc::increment_strong_count(p.cast::<E>()) }
    }

    unsafe fn release(p: *const ()) {
        // SAFETY: as above; this gives back the count the `ExecRef` owned.
        unsafe { Arc::decrement_strong_count(p.cast::<E>()) }
    }
}

/// A counted reference to an executor (see the module docs). `repr(C)`: the executor's address
/// comes first (a header counts it among its hot bytes, its table not: `core/header.rs`).
#[repr(C)]
pub(crate) struct ExecRef {
    ptr: NonNull<()>,
    ops: &'static ExecOps,
}

// SAFETY: it is an `Arc<E>` with `E: Executor: Send + Sync`.
unsafe impl Send for ExecRef {}
// SAFETY: as above.
unsafe impl Sync for ExecRef {}

impl ExecRef {
    /// Takes over `e`'s count.
    pub(crate) fn from_arc<E: Executor>(e: Arc<E>) -> Self {
        let p = Arc::into_raw(e).cast_mut().cast::<()>();
        Self {
            // SAFETY: `Arc::into_raw` never returns null.
            ptr: unsafe { NonNull::new_unchecked(p) },
            ops: &Ops::<E>::OPS,
        }
    }

    /// Takes over `e`'s count, with `ops` as its table: a `static` holding [`ops_of::<E>()`],
    /// whose address identifies `E` to [`Self::is`].
    ///
    /// # Safety
    /// `ops` was made by `ops_of::<E>()`.
    pub(crate) unsafe fn from_arc_with<E: Executor>(e: Arc<E>, ops: &'static ExecOps) -> Self {
        let mut r = Self::from_arc(e);
        r.ops = ops;
        r
    }

    /// Whether this executor's table is `ops` (a `static` given to [`Self::from_arc_with`]).
    #[inline]
    pub(crate) fn is(&self, ops: &'static ExecOps) -> bool {
        std::ptr::eq(self.ops, ops)
    }

    /// The executor, as its own type.
    ///
    /// # Safety
    /// [`Self::is`] holds for a table made by `ops_of::<E>()`.
    #[inline]
    pub(crate) unsafe fn get_unchecked<E: Executor>(&self) -> &E {
        // SAFETY: caller contract: `ptr` points to a live `E` (module invariant).
        unsafe { &*self.ptr.as_ptr().cast::<E>() }
    }

    /// A new reference, counted directly on the executor's own type (inlined, no call through
    /// the table).
    ///
    /// # Safety
    /// [`Self::is`] holds for a table made by `ops_of::<E>()`.
    #[inline]
    pub(crate) unsafe fn clone_unchecked<E: Executor>(&self) -> Self {
        // SAFETY: caller contract: `ptr` is the data of a live `Arc<E>` (we own a count); the
        // new count is the clone's.
        unsafe { Arc::increment_strong_count(self.ptr.as_ptr().cast::<E>().cast_const()) };
        Self {
            ptr: self.ptr,
            ops: self.ops,
        }
    }

    /// The send path: [`Executor::push`], called without going through a trait object.
    #[inline]
    pub(crate) fn push(&self, hdr: &Header, env: Envelope) -> Result<(), Envelope> {
        // SAFETY: `ptr` and `ops` belong together (module invariant).
        unsafe { (self.ops.push)(self.ptr.as_ptr(), hdr, env) }
    }

    /// The executor, as a trait object.
    #[inline]
    /// This executor, if the caller drives it (a blocking wait on it must run its jobs).
    pub(crate) fn if_caller_driven(&self) -> Option<ExecRef> {
        self.driven_by_caller().then(|| self.clone())
    }

    pub(crate) fn get(&self) -> &dyn Executor {
        // SAFETY: `ptr` points to a live executor of the type that made `ops`, kept alive by
        // the count this reference owns, for as long as `self` is borrowed.
        unsafe { &*(self.ops.get)(self.ptr.as_ptr()) }
    }
}

impl Deref for ExecRef {
    type Target = dyn Executor;
    #[inline]
    fn deref(&self) -> &dyn Executor {
        self.get()
    }
}

impl Clone for ExecRef {
    fn clone(&self) -> Self {
        // SAFETY: `ptr` is a live `Arc`'s data (we own a count); the new count is the clone's.
        unsafe { (self.ops.retain)(self.ptr.as_ptr()) };
        Self {
            ptr: self.ptr,
            ops: self.ops,
        }
    }
}

impl Drop for ExecRef {
    fn drop(&mut self) {
        // SAFETY: gives back the count this reference owns, once.
        unsafe { (self.ops.release)(self.ptr.as_ptr()) }
    }
}

impl fmt::Debug for ExecRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ExecRef").field(&self.ptr).finish()
    }
}
