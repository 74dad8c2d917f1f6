//! How the actor layer reaches a cell's executor: one closed set of the executors it knows, as
//! tokio's `scheduler::Handle` (an enum, matched where the layer calls its executor), instead
//! of a trait object on the hot path.
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
use crate::core::{ExecRef, Executor, Header, Shared, Status};
use crate::executor::{mailbox, message_centric};

/// Dispatch tag: the cell's executor is reached through its table (the mailbox protocol
/// inlined for mailbox actors).
const TABLE: u8 = 0;
/// Dispatch tag: the cell's executor is the message-centric one, called directly.
const MESSAGE_CENTRIC: u8 = 1;

/// The dispatch tag for cells of `exec` (kept in their headers).
#[inline]
pub(crate) fn tag_of(exec: &ExecRef) -> u8 {
    if exec.is(&message_centric::OPS) {
        MESSAGE_CENTRIC
    } else {
        TABLE
    }
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
        if hdr.dispatch() == MESSAGE_CENTRIC {
            // SAFETY: the tag is MESSAGE_CENTRIC only when the header's executor's table is the
            // message-centric executor's (`tag_of`, at the cell's construction), so the
            // executor is one.
            Exec::MessageCentric(unsafe { hdr.exec.get_unchecked::<message_centric::Executor>() })
        } else {
            Exec::Table(&hdr.exec)
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

    /// Queues the envelope `make` builds for the actor of `hdr`, giving it back if the actor no
    /// longer accepts messages. The default executor's send is inlined with the envelope built
    /// where it is stored; every other executor's is out of line (inlined too, its branch made
    /// the sends that inline this large enough to slow the default executor's).
    #[inline(always)]
    pub(crate) fn push_with(
        self,
        hdr: &Header,
        make: impl FnOnce() -> Envelope,
    ) -> Result<(), Envelope> {
        match self {
            Exec::MessageCentric(e) => e.push_envelope_with(hdr, make),
            Exec::Table(exec) => push_through_table(exec, hdr, make),
        }
    }

    /// Marks the actor of `hdr` terminal (see [`Executor::retire`]).
    ///
    /// # Safety
    /// As [`Executor::retire`]: on the thread running the actor's behaviour, for a registered
    /// actor.
    #[inline(always)]
    pub(crate) unsafe fn retire(self, hdr: &Header, status: Status) {
        match self {
            // SAFETY: the caller's contract.
            Exec::MessageCentric(e) => unsafe { e.retire(hdr, status) },
            // SAFETY: the caller's contract.
            Exec::Table(exec) => unsafe { exec.retire(hdr, status) },
        }
    }

    /// The system's shared state.
    #[inline(always)]
    pub(crate) fn shared(self) -> &'a Shared {
        match self {
            Exec::MessageCentric(e) => Executor::shared(e),
            Exec::Table(exec) => exec.shared(),
        }
    }
}

/// [`Exec::push_with`] on an executor other than the default one: the mailbox protocol
/// inlined for a mailbox actor (its executor only makes the job), the table's send otherwise.
#[inline(never)]
fn push_through_table(
    exec: &ExecRef,
    hdr: &Header,
    make: impl FnOnce() -> Envelope,
) -> Result<(), Envelope> {
    if hdr.mailbox().is_some() {
        mailbox::push(exec, hdr, make())
    } else {
        exec.push(hdr, make())
    }
}
