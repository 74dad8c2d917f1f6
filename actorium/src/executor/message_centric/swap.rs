//! The wait-free queue swap of the Cforall actor system (Colby Parsons, MMath thesis, Waterloo
//! 2023, "Stealing Mechanism", "Queue Swap Correctness").
//!
//! Workers reach their queues through `slots`, an array of queue pointers; a thief exchanges
//! one of its own slots with one of a victim's. Senders never use `slots` (they index the
//! stable queues by ticket), so a swap never disturbs a send, and messages never move: whole
//! queues change owner.
//!
//! The protocol, for a thief owning slot `own` and a victim slot `victim`:
//! 0. read both pointers, `vq = slots[victim]`, `oq = slots[own]`;
//! 1. fail if `vq` is null (another thief is in the middle of swapping it);
//! 2. CAS `slots[own]` from `oq` to null; fail if it changed;
//! 3. CAS `slots[victim]` from `vq` to `oq`; on failure store `oq` back into `slots[own]`
//!    and fail;
//! 4. store `vq` into `slots[own]`.
//!
//! Invariant: a null written into a slot in step 2 is overwritten next only by the thief that
//! wrote it (step 3's restore or step 4), because every other writer CASes from a non-null
//! value.
//!
//! Queue owners. Senders wake a queue's *owner* (the worker whose range holds it), so the owner
//! must never disagree with the range once a steal completes. A queue is in no slot from the
//! moment a thief takes it out (step 2 for its own queue, step 3 for the victim's) until the
//! thief publishes it (step 3, step 4 or the restore), and in that window no other thief can
//! reach it; the thief writes the owner exactly then ([`Moves`]). So every owner write a steal
//! makes is made by the one thread that holds the queue out of every slot (a resize writes
//! owners too, under the write lock, when no swap runs), before the queue is published in
//! its new slot: there is no late write (an owner stored after the swap, as the thesis's
//! description suggests, can land after a second thief stole the same queue again and leave the
//! queue in one range with another worker as its owner — a lost wake-up). Hence no queue is
//! ever lost or duplicated: after every swap has finished, every queue is in exactly one slot.
//! Guarantees (the thesis, "Stealing Guarantees"): among thieves all targeting one victim, or
//! forming a chain, at least one succeeds; in a cycle all may fail, losing nothing.
//! Checked by the loom models in `tests/loom_swap.rs`.

use crate::runtime::loom::sync::atomic::{AtomicPtr, Ordering};
use std::ptr;

/// Why a swap did not happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SwapFail {
    /// The victim's slot was null (being swapped by another thief).
    VictimBusy,
    /// The thief's own slot changed (a thief took it), or the victim's changed under us.
    Raced,
}

/// What a swap tells the queues it moves, while it holds them out of every slot.
pub(crate) trait Moves<T> {
    /// `q` is about to enter the victim's range.
    fn to_victim(&self, q: *mut T);
    /// `q` is about to enter (or return to) the thief's range.
    fn to_thief(&self, q: *mut T);
}

/// No owners to keep (the loom models in `tests/loom_swap.rs`).
impl<T> Moves<T> for () {
    fn to_victim(&self, _: *mut T) {}
    fn to_thief(&self, _: *mut T) {}
}

/// Swaps `slots[own]` with `slots[victim]`, telling `moves` about each queue before it is
/// published in its new slot. On success returns the stolen queue pointer (now in
/// `slots[own]`) and the one given away (now in `slots[victim]`).
pub(crate) fn try_swap<T>(
    slots: &[AtomicPtr<T>],
    own: usize,
    victim: usize,
    moves: &impl Moves<T>,
) -> Result<(*mut T, *mut T), SwapFail> {
    debug_assert_ne!(own, victim);
    // Step 0.
    let vq = slots[victim].load(Ordering::Acquire);
    let oq = slots[own].load(Ordering::Acquire);
    // Step 1.
    if vq.is_null() {
        return Err(SwapFail::VictimBusy);
    }
    // Step 2.
    if oq.is_null()
        || slots[own]
            .compare_exchange(oq, ptr::null_mut(), Ordering::AcqRel, Ordering::Acquire)
            .is_err()
    {
        return Err(SwapFail::Raced);
    }
    // `oq` is in no slot now: only we can reach it.
    moves.to_victim(oq);
    // Step 3.
    if slots[victim]
        .compare_exchange(vq, oq, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        // Only we write our nulled slot (the invariant): restore it.
        moves.to_thief(oq);
        slots[own].store(oq, Ordering::Release);
        return Err(SwapFail::Raced);
    }
    // `vq` is in no slot now (step 3 replaced it): only we can reach it.
    moves.to_thief(vq);
    // Step 4.
    slots[own].store(vq, Ordering::Release);
    Ok((vq, oq))
}
