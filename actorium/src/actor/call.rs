//! One-call requests with one error type, Erlang's `gen_server:call`: send the question and
//! wait for the reply, blocking ([`Addr::call`], [`Addr::call_timeout`]) or awaited
//! ([`Addr::call_async`]). A question that cannot be sent (the actor had ended) is dropped
//! and reported as [`AskError::Dead`]; where it must come back, use the two-step
//! [`Addr::ask`] (its [`crate::SendError`] holds it). A blocking call that its thread may not
//! make ([`AskError::WouldBlock`]: a thread of the asked actor's own system, or one that must
//! never block, such as a remote node's callback) sends nothing.

use super::addr::{Addr, Recipient};
use super::ask::{Ask, AskError, Pending};
use super::Receive;
use std::future::Future;
use std::time::Duration;

/// The reply of the request `ask` sends, blocking: refused before anything is sent on a thread
/// that may not wait for `parts`' actor (see [`Addr::pending_parts`]).
fn reply<R, E>(
    parts: (*const (), *const (), Option<crate::core::ExecRef>),
    ask: impl FnOnce() -> Result<Pending<R>, E>,
    timeout: Option<Duration>,
) -> Result<R, AskError> {
    super::ask::may_block_on(parts.0, parts.1)?;
    let pending = ask().map_err(|_| AskError::Dead)?;
    match timeout {
        Some(d) => pending.wait_timeout(d),
        None => pending.wait(),
    }
}

/// The reply of a request whose sending gave `sent`, awaited.
async fn reply_async<R, E>(sent: Result<Pending<R>, E>) -> Result<R, AskError> {
    sent.map_err(|_| AskError::Dead)?.await
}

impl<A> Addr<A>
where
    A: super::Actor,
{
    /// Asks `msg` and blocks until the reply comes: [`Self::ask`] then
    /// [`Pending::wait`], with one error type (a question the ended actor could not take is
    /// dropped: [`AskError::Dead`]).
    ///
    /// # Errors
    /// [`AskError::Dead`], and as [`Pending::wait`].
    ///
    /// ```
    /// use actorium::{Actor, ActorSystem, Allocation, Ask, Context, Receive};
    /// struct Squares;
    /// impl Actor for Squares {}
    /// impl Receive<Ask<u64, u64>> for Squares {
    ///     fn receive(&mut self, a: Ask<u64, u64>, _: &mut Context<'_, Self>) -> Allocation {
    ///         a.reply.send(a.msg * a.msg).ok();
    ///         Allocation::Nodelete
    ///     }
    /// }
    /// fn main() -> Result<(), Box<dyn std::error::Error>> {
    ///     let system = ActorSystem::new()?;
    ///     let sq = system.spawn(Squares);
    ///     assert_eq!(sq.call(7)?, 49); // one `?`
    ///     assert_eq!(sq.call_timeout(8, std::time::Duration::from_secs(5))?, 64);
    ///     system.shutdown();
    ///     Ok(())
    /// }
    /// ```
    pub fn call<M, R>(&self, msg: M) -> Result<R, AskError>
    where
        A: Receive<Ask<M, R>>,
        M: Send + 'static,
        R: Send + 'static,
    {
        reply(self.pending_parts(), || self.ask(msg), None)
    }

    /// [`Self::call`], giving up after `timeout` ([`AskError::Timeout`]).
    ///
    /// # Errors
    /// As [`Self::call`], and [`AskError::Timeout`].
    pub fn call_timeout<M, R>(&self, msg: M, timeout: Duration) -> Result<R, AskError>
    where
        A: Receive<Ask<M, R>>,
        M: Send + 'static,
        R: Send + 'static,
    {
        reply(self.pending_parts(), || self.ask(msg), Some(timeout))
    }

    /// [`Self::call`] for async code: the question is sent now, the reply awaited (any
    /// runtime; bound it with the runtime's timeout, e.g. `tokio::time::timeout`).
    ///
    /// # Errors
    /// As [`Self::call`].
    pub fn call_async<M, R>(&self, msg: M) -> impl Future<Output = Result<R, AskError>> + Send
    where
        A: Receive<Ask<M, R>>,
        M: Send + 'static,
        R: Send + 'static,
    {
        reply_async(self.ask(msg))
    }
}

impl<M: Send + 'static, R: Send + 'static> Recipient<Ask<M, R>> {
    /// Asks and blocks until the reply comes, as [`Addr::call`].
    ///
    /// # Errors
    /// As [`Addr::call`].
    pub fn call(&self, msg: M) -> Result<R, AskError> {
        reply(self.pending_parts(), || self.ask(msg), None)
    }

    /// [`Self::call`], giving up after `timeout`, as [`Addr::call_timeout`].
    ///
    /// # Errors
    /// As [`Addr::call_timeout`].
    pub fn call_timeout(&self, msg: M, timeout: Duration) -> Result<R, AskError> {
        reply(self.pending_parts(), || self.ask(msg), Some(timeout))
    }

    /// [`Self::call`] for async code, as [`Addr::call_async`].
    ///
    /// # Errors
    /// As [`Addr::call`].
    pub fn call_async(&self, msg: M) -> impl Future<Output = Result<R, AskError>> + Send {
        reply_async(self.ask(msg))
    }
}
