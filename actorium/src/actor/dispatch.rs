//! How the actor layer reaches a cell's executor: one closed set of the executors it knows, as
//! tokio's `scheduler::Handle` (an enum, [`Exec`], matched where the layer calls its executor;
//! the send path tests the tag itself, [`message_centric`]), instead of a trait object on the
//! hot path.
//!
//! Every executor is reachable through the core's interface ([`crate::core::Executor`], behind
//! [`ExecRef`]'s table). On the send path the actor layer does better for the default,
//! message-centric executor: it calls that executor's code directly, inlined where the
//! envelope is built (through the table a send is an indirect call that cannot build the
//! envelope in place, and a spawn makes several). Which arm a cell takes is chosen once, at
//! spawn, and kept in the cell's header as an opaque *dispatch tag* among its hot bytes (the
//! executor's table lies past them, on a line the actor's state may share): the core stores
//! the tag and gives it no meaning.

use crate::core::envelope::Envelope;
use crate::core::{ExecRef, Header};
use crate::executor::{mailbox, message_centric};

/// Dispatch tag: the cell's executor is reached through its table (the mailbox protocol
/// inlined for mailbox actors). No bit: it is what a header without [`MESSAGE_CENTRIC`] has,
/// never a tag to test for.
const TABLE: u8 = 0;
/// Dispatch tag: the cell's executor is the message-centric one, called directly. (Tags are
/// bits, so that the send path tests one: `Header::dispatch_has`.)
const MESSAGE_CENTRIC: u8 = 1;
/// Dispatch tag bit: the actor has a bounded mailbox, so a send counts the message
/// (`actor/bounded.rs`); its sends leave the default executor's inlined path.
const BOUNDED: u8 = 2;

/// The dispatch tag for cells of `exec` (kept in their headers), `bounded` or not.
#[inline]
pub(crate) fn tag_of(exec: &ExecRef, bounded: bool) -> u8 {
    let exec_bit = if exec.is(&message_centric::OPS) {
        MESSAGE_CENTRIC
    } else {
        TABLE
    };
    exec_bit | if bounded { BOUNDED } else { 0 }
}

/// A cell's executor, as the actor layer calls it.
#[derive(Clone, Copy)]
pub(crate) enum Exec<'a> {
    /// The message-centric executor: its code called directly, inlined.
    MessageCentric(&'a message_centric::Executor),
    /// Any other executor, through its table.
    Table(&'a ExecRef),
}

impl<'a> Exec<'a> {
    /// The executor of the cell whose header is `hdr` (its dispatch tag: hot bytes only).
    #[inline(always)]
    pub(crate) fn of(hdr: &'a Header) -> Self {
        match message_centric(hdr) {
            Some(e) => Exec::MessageCentric(e),
            None => Exec::Table(&hdr.exec),
        }
    }

    /// The executor `exec` refers to (by its table's address: a spawn, before any header).
    #[inline(always)]
    pub(crate) fn of_ref(exec: &'a ExecRef) -> Self {
        if exec.is(&message_centric::OPS) {
            // SAFETY: the table is the message-centric executor's, so the executor is one.
            Exec::MessageCentric(unsafe { exec.get_unchecked::<message_centric::Executor>() })
        } else {
            Exec::Table(exec)
        }
    }
}

/// The message-centric executor of the cell whose header is `hdr`, if that is its executor:
/// one bit test on the hot bytes. The send path uses this rather than building an [`Exec`]
/// (matching the enum cost a few instructions a send, and a chain of sends pays them in
/// latency); a message's send keeps every other executor's out of line (`cell::send_other`:
/// inlined too, its branch made the sends that inline this large enough to slow the default
/// executor's).
#[inline(always)]
pub(crate) fn message_centric(hdr: &Header) -> Option<&message_centric::Executor> {
    if hdr.dispatch_has(MESSAGE_CENTRIC) {
        // SAFETY: the tag is MESSAGE_CENTRIC only when the header's executor's table is the
        // message-centric executor's (`tag_of`, at the cell's construction).
        Some(unsafe { hdr.exec.get_unchecked::<message_centric::Executor>() })
    } else {
        None
    }
}

/// [`message_centric`] for an actor without a bounded mailbox: the send path's test, one
/// masked compare on the hot bytes as before (a bounded actor's sends are counted, out of
/// line).
#[inline(always)]
pub(crate) fn message_centric_unbounded(hdr: &Header) -> Option<&message_centric::Executor> {
    if hdr.dispatch_is(MESSAGE_CENTRIC, MESSAGE_CENTRIC | BOUNDED) {
        // SAFETY: as in `message_centric`.
        Some(unsafe { hdr.exec.get_unchecked::<message_centric::Executor>() })
    } else {
        None
    }
}

/// Whether the actor of `hdr` has a bounded mailbox (its tag: hot bytes only).
#[inline(always)]
pub(crate) fn bounded(hdr: &Header) -> bool {
    hdr.dispatch_has(BOUNDED)
}

/// Queues `env` for the actor of `hdr`, giving it back if the actor no longer accepts
/// messages.
#[inline]
pub(crate) fn push(hdr: &Header, env: Envelope) -> Result<(), Envelope> {
    match message_centric(hdr) {
        Some(e) => e.push_envelope_with(hdr, || env),
        None => push_through_table(hdr, || env),
    }
}

/// Queues `env` for the actor of `hdr` behind every message accepted for it so far, by any
/// sender (a graceful shutdown's request to end it): on the default executor also behind
/// those a behaviour's send left in its worker's outbox, queued at the outbox's flush. Other
/// executors queue every accepted message at once: [`push`].
pub(crate) fn push_last(hdr: &Header, env: Envelope) -> Result<(), Envelope> {
    match message_centric(hdr) {
        Some(e) => e.push_last(hdr, env),
        None => push_through_table(hdr, || env),
    }
}

/// [`push`] on an executor other than the default one, with the envelope `make` builds: the
/// mailbox protocol inlined for a mailbox actor (its executor only makes the job), the table's
/// send otherwise. (The envelope is built in whichever branch takes it, where it is stored:
/// built before the branch, it was copied.)
#[inline(always)]
pub(crate) fn push_through_table(
    hdr: &Header,
    make: impl FnOnce() -> Envelope,
) -> Result<(), Envelope> {
    if hdr.mailbox().is_some() {
        mailbox::push(&hdr.exec, hdr, make())
    } else {
        hdr.exec.push(hdr, make())
    }
}
