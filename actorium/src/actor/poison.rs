//! Poison pills (the Cforall actor system: Colby Parsons, MMath thesis, Waterloo 2023, "Safety
//! and Productivity"): messages every actor accepts with no behaviour written, each ending the
//! actor with the matching [`Allocation`]. Messages queued before the pill are still delivered
//! first.

use super::{Actor, Allocation, Cause, Context, Receive};

/// Ends the receiving actor with [`Allocation::Delete`].
///
/// ```
/// use actorium::{Actor, ActorSystem, DeleteMsg};
/// struct Idle;
/// impl Actor for Idle {}
/// let system = ActorSystem::new().unwrap();
/// let addr = system.spawn(Idle);
/// addr.send(DeleteMsg).unwrap();
/// system.stop(); // returns: the only actor is terminal
/// assert!(addr.send(DeleteMsg).is_err());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeleteMsg;

/// Ends the receiving actor with [`Allocation::Destroy`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DestroyMsg;

/// Ends the receiving actor with [`Allocation::Finished`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FinishedMsg;

impl<A: Actor> Receive<DeleteMsg> for A {
    fn receive(&mut self, _: DeleteMsg, ctx: &mut Context<'_, Self>) -> Allocation {
        ctx.cause = Cause::Pill;
        Allocation::Delete
    }
}

impl<A: Actor> Receive<DestroyMsg> for A {
    fn receive(&mut self, _: DestroyMsg, ctx: &mut Context<'_, Self>) -> Allocation {
        ctx.cause = Cause::Pill;
        Allocation::Destroy
    }
}

impl<A: Actor> Receive<FinishedMsg> for A {
    fn receive(&mut self, _: FinishedMsg, ctx: &mut Context<'_, Self>) -> Allocation {
        ctx.cause = Cause::Pill;
        Allocation::Finished
    }
}
