//! Request/reply: [`Ask`], [`ReplyTo`], [`Pending`], [`AskError`].
//!
//! A request is an ordinary message, `Ask<M, R>`: the question `M` and a one-shot port for the
//! reply `R`. An actor answers requests of type `M` by implementing `Receive<Ask<M, R>>`; that
//! implementation declares the reply type `R`. The behaviour may reply at once, or keep the
//! port and reply later (after asking someone else, say); if it drops the port without
//! replying, or the actor ends with the request still queued, the asker gets
//! [`AskError::Dropped`] instead of waiting for ever.
//!
//! Who asks, and how the reply comes back:
//! - a plain thread: [`crate::Addr::ask`] returns a [`Pending`]; [`Pending::wait`] blocks,
//!   [`Pending::wait_timeout`] gives up after a while;
//! - async code: a [`Pending`] is a [`Future`] (no runtime needed: it works under tokio or any
//!   executor; for a timeout use the runtime's, e.g. `tokio::time::timeout`);
//! - a behaviour: [`crate::Context::ask`] never blocks the worker: the reply runs a
//!   continuation on the asking actor, as one of its behaviours (in turn with its messages).
//!
//! Cost: one allocation per ask (the reply slot, shared by the port and the [`Pending`]:
//! about 64 bytes with a small reply), or two for [`crate::Context::ask`] (its continuation
//! is boxed); no system call when the reply comes before the asker waits.

use super::addr::SendError;
use crate::core::ExecRef;
use crate::runtime::context::{detached_actor_of, must_not_block, own_system_aborting, runs_for};
use crate::runtime::oneshot::{Slot, Taken, Waiter};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

/// A request: the question `msg` and the port for its reply. Implement `Receive<Ask<M, R>>`
/// to answer questions `M` with replies `R`.
///
/// ```
/// use actorium::{Actor, ActorSystem, Allocation, Ask, Context, Receive};
///
/// struct Counter(u64);
/// impl Actor for Counter {}
/// struct Add(u64);
/// impl Receive<Ask<Add, u64>> for Counter {
///     fn receive(&mut self, ask: Ask<Add, u64>, _: &mut Context<'_, Self>) -> Allocation {
///         self.0 += ask.msg.0;
///         ask.reply.send(self.0).ok(); // Err: the asker stopped waiting
///         Allocation::Nodelete
///     }
/// }
///
/// let system = ActorSystem::new()?;
/// let counter = system.spawn(Counter(0));
/// assert_eq!(counter.ask(Add(2))?.wait()?, 2);
/// assert_eq!(counter.ask(Add(3))?.wait()?, 5);
/// # drop(system);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Ask<M, R> {
    /// The question.
    pub msg: M,
    /// Where the answer goes.
    pub reply: ReplyTo<R>,
}

impl<M, R> fmt::Debug for Ask<M, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ask")
            .field("msg", &std::any::type_name::<M>())
            .field("reply", &self.reply)
            .finish()
    }
}

/// A continuation waiting for a reply on an actor (boxed by `Context::ask`).
pub(crate) type ToActor<R> = Box<dyn FnOnce(Result<R, AskError>) + Send>;

/// Whether a continuation's asker still waits (it has not ended, its time is not up).
pub(crate) type Wanted = Box<dyn Fn() -> bool + Send>;

enum To<R> {
    Slot(Arc<Slot<R>>),
    Actor(ToActor<R>, Wanted),
    Done,
}

/// The port for one reply of type `R`: [`Self::send`] it, or drop it (the asker then gets
/// [`AskError::Dropped`]). It may be kept and used later, from any thread.
pub struct ReplyTo<R> {
    to: To<R>,
}

impl<R: Send + 'static> ReplyTo<R> {
    pub(crate) fn slot(slot: Arc<Slot<R>>) -> Self {
        Self { to: To::Slot(slot) }
    }

    /// A port whose reply runs `k`, wanted while `wanted` says so.
    pub(crate) fn actor(k: ToActor<R>, wanted: Wanted) -> Self {
        Self {
            to: To::Actor(k, wanted),
        }
    }

    /// Ends the port without a reply because the link to the node of the asked actor was
    /// lost: the asker gets [`AskError::NodeDown`].
    #[cfg(feature = "remote")]
    pub(crate) fn node_down(mut self) {
        match std::mem::replace(&mut self.to, To::Done) {
            To::Slot(s) => s.close_lost(),
            To::Actor(k, _) => k(Err(AskError::NodeDown)),
            To::Done => {}
        }
    }

    /// Ends the port without a reply because the asked actor (on another node) had ended:
    /// the asker gets [`AskError::Dead`].
    #[cfg(feature = "remote")]
    pub(crate) fn dead(mut self) {
        match std::mem::replace(&mut self.to, To::Done) {
            To::Slot(s) => s.close_dead(),
            To::Actor(k, _) => k(Err(AskError::Dead)),
            To::Done => {}
        }
    }

    /// Drops the port without telling anyone (its request was never sent).
    pub(crate) fn disarm(mut self) {
        self.to = To::Done;
    }

    /// Sends the reply.
    ///
    /// # Errors
    /// Gives `reply` back if nobody waits for it any more (the asker timed out or dropped its
    /// [`Pending`]). A reply to an asking actor is accepted; if that actor has ended
    /// meanwhile, or was respawned ([`crate::Addr::respawn`]), the reply is dropped with its
    /// continuation.
    pub fn send(mut self, reply: R) -> Result<(), R> {
        match std::mem::replace(&mut self.to, To::Done) {
            To::Slot(s) => s.send(reply),
            To::Actor(k, _) => {
                k(Ok(reply));
                Ok(())
            }
            To::Done => Err(reply),
        }
    }

    /// Whether the asker still waits for the reply: a thread or future that gave up does not,
    /// nor an asking actor ([`crate::Context::ask`]) that has ended or been respawned since,
    /// nor one whose [`crate::Context::ask_timeout`] is up. A server holding ports for later
    /// may drop those nobody waits for.
    pub fn is_wanted(&self) -> bool {
        match &self.to {
            To::Slot(s) => !s.receiver_gone(),
            To::Actor(_, wanted) => wanted(),
            To::Done => false,
        }
    }
}

impl<R> Drop for ReplyTo<R> {
    fn drop(&mut self) {
        match std::mem::replace(&mut self.to, To::Done) {
            To::Slot(s) => s.close(),
            To::Actor(k, _) => k(Err(AskError::Dropped)),
            To::Done => {}
        }
    }
}

impl<R> fmt::Debug for ReplyTo<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let to = match self.to {
            To::Slot(_) => "a waiting thread or future",
            To::Actor(..) => "an asking actor",
            To::Done => "nobody (used)",
        };
        f.debug_struct("ReplyTo")
            .field("reply", &std::any::type_name::<R>())
            .field("to", &to)
            .finish()
    }
}

/// Why a request got no reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AskError {
    /// The actor had ended before the request was sent ([`crate::Addr::ask`] returns the
    /// question inside a [`SendError`]; `?` turns that into this, dropping it), or, for a
    /// remote actor, its node found it ended when the request arrived.
    Dead,
    /// The behaviour dropped the reply port without replying, or the actor ended (or its
    /// system shut down) with the request still queued.
    Dropped,
    /// [`Pending::wait_timeout`]'s time passed first.
    Timeout,
    /// A blocking wait was refused: the calling thread runs work of the asked actor's
    /// system (a behaviour on one of its workers, or the asked actor's own detached thread),
    /// and blocking it could deadlock. Ask with [`crate::Context::ask`] there. Also on a
    /// thread that must never block: a remote node's callback (a name watch's), which runs
    /// on one of Zenoh's threads (send to an actor from there, and let it ask).
    WouldBlock,
    /// The asked actor is on another node, and the link to that node was lost before the
    /// reply came (the node ended, or was unreachable past its lease): the request may or may
    /// not have run. (Remote actors, feature `remote`.)
    NodeDown,
}

impl fmt::Display for AskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AskError::Dead => "the asked actor had ended (or its system had stopped)",
            AskError::Dropped => {
                "no reply: the asked actor dropped the reply port, or ended before replying"
            }
            AskError::Timeout => "no reply within the time given",
            AskError::WouldBlock => {
                "a blocking wait for a reply inside the asked actor's own system (a \
                 behaviour, or the actor's own thread), or on a thread that must never block \
                 (a remote node's callback), could deadlock: use `Context::ask`, whose reply \
                 runs a continuation on the asking actor"
            }
            AskError::NodeDown => {
                "the link to the asked actor's node was lost before the reply came (the \
                 request may or may not have run)"
            }
        })
    }
}

impl std::error::Error for AskError {}

impl<M> From<SendError<M>> for AskError {
    fn from(_: SendError<M>) -> Self {
        AskError::Dead
    }
}

/// A reply on its way: wait for it ([`Self::wait`], [`Self::wait_timeout`]) or `.await` it.
/// Dropping it tells the replier nobody waits ([`ReplyTo::is_wanted`]).
///
/// ```
/// # use actorium::{Actor, ActorSystem, Allocation, Ask, Context, Receive};
/// # struct Echo;
/// # impl Actor for Echo {}
/// # impl Receive<Ask<u32, u32>> for Echo {
/// #     fn receive(&mut self, a: Ask<u32, u32>, _: &mut Context<'_, Self>) -> Allocation {
/// #         a.reply.send(a.msg).ok();
/// #         Allocation::Nodelete
/// #     }
/// # }
/// # let system = ActorSystem::new()?;
/// # let echo = system.spawn(Echo);
/// use std::time::Duration;
/// let reply: u32 = echo.ask(7)?.wait_timeout(Duration::from_secs(5))?;
/// assert_eq!(reply, 7);
/// # drop(system);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use = "a request's reply is lost unless it is waited for or awaited"]
pub struct Pending<R> {
    slot: Arc<Slot<R>>,
    /// The asked actor's system (an identity) and header: a blocking wait on one of that
    /// system's threads is refused.
    owner: usize,
    target: usize,
    /// The asked actor's executor, if the caller drives it (a blocking wait runs its jobs).
    drive: Option<ExecRef>,
}

/// Whether the calling thread may block waiting for a reply of actor `target` of the system
/// `owner` (see [`Pending::wait`]): [`AskError::WouldBlock`] on a thread of that system that a
/// wait would block, and on a thread that must never block (a system's timer thread; one of
/// Zenoh's threads, running a remote node's callback: a wait there can hold up the very
/// link that carries the reply).
pub(crate) fn may_block_on(owner: *const (), target: *const ()) -> Result<(), AskError> {
    if must_not_block() {
        return Err(AskError::WouldBlock);
    }
    if runs_for(owner) {
        // A detached actor may wait for *another* actor: it has a thread of its own.
        let other = detached_actor_of(owner).is_some_and(|a| !std::ptr::eq(a, target));
        if !other {
            return Err(AskError::WouldBlock);
        }
    }
    Ok(())
}

impl<R> Pending<R> {
    pub(crate) fn new(
        slot: Arc<Slot<R>>,
        owner: *const (),
        target: *const (),
        drive: Option<ExecRef>,
    ) -> Self {
        Self {
            slot,
            owner: owner as usize,
            target: target as usize,
            drive,
        }
    }

    fn may_block(&self) -> Result<(), AskError> {
        may_block_on(self.owner as *const (), self.target as *const ())
    }

    fn done(&self, t: Taken<R>) -> Result<R, AskError> {
        match t {
            Taken::Value(v) => Ok(v),
            Taken::Closed if self.slot.lost() => Err(AskError::NodeDown),
            Taken::Closed if self.slot.dead() => Err(AskError::Dead),
            Taken::Closed => Err(AskError::Dropped),
            Taken::Empty => Err(AskError::Timeout),
        }
    }

    /// Blocks the calling thread until the reply comes. On a caller-driven system (the
    /// [`crate::policy::Testing`] policy) it runs the system's jobs meanwhile, as
    /// [`crate::ActorSystem::run_once`] does.
    ///
    /// # Errors
    /// [`AskError::Dropped`] if no reply will come, or if the calling thread is a detached
    /// actor's (or a worker's) whose system is being dropped: the drop ends that thread, and
    /// the wait gives up rather than hold it; [`AskError::WouldBlock`] on a thread of the
    /// asked actor's own system that it would block, or on a thread that must never block
    /// (a remote node's `watch_name` callback; this also refuses [`Self::wait_timeout`],
    /// whatever its timeout); for a remote actor,
    /// [`AskError::NodeDown`] when the link to its node is lost, and [`AskError::Dead`] when
    /// its node found it ended.
    pub fn wait(self) -> Result<R, AskError> {
        self.may_block()?;
        if let Some(exec) = &self.drive {
            // A caller-driven system: run its jobs here until the reply comes (or this
            // thread's own system is dropped, as below).
            exec.wait_until(&mut || self.slot.completed() || own_system_aborting());
        }
        self.done(self.slot.wait_or_give_up(None, own_system_aborting))
    }

    /// [`Self::wait`], giving up after `timeout` ([`AskError::Timeout`]; a reply sent later
    /// is given back to the replier).
    ///
    /// # Errors
    /// As [`Self::wait`], and [`AskError::Timeout`].
    pub fn wait_timeout(self, timeout: Duration) -> Result<R, AskError> {
        self.may_block()?;
        let Some(deadline) = Instant::now().checked_add(timeout) else {
            return self.wait();
        };
        if let Some(exec) = &self.drive {
            // A caller-driven system: run its jobs here until the reply or the deadline.
            while !self.slot.completed() && !own_system_aborting() && Instant::now() < deadline {
                if !exec.run_once() {
                    let next = (Instant::now() + Duration::from_millis(1)).min(deadline);
                    if let Taken::Value(v) = self.slot.wait_until(next) {
                        return Ok(v);
                    }
                }
            }
        }
        self.done(
            self.slot
                .wait_or_give_up(Some(deadline), own_system_aborting),
        )
    }

    /// The reply, if it has come (without waiting); `None` while it has not.
    ///
    /// # Errors
    /// [`AskError::Dropped`] if no reply will come; for a remote actor, as [`Self::wait`].
    pub fn try_get(&mut self) -> Option<Result<R, AskError>> {
        match self.slot.take() {
            Taken::Empty => None,
            t => Some(self.done(t)),
        }
    }
}

impl<R> Future for Pending<R> {
    type Output = Result<R, AskError>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let slot = &self.slot;
        loop {
            match slot.take() {
                Taken::Empty => {}
                t => return Poll::Ready(self.done(t)),
            }
            let waker = cx.waker();
            if slot.register(
                || Waiter::Waker(waker.clone()),
                |w| matches!(w, Waiter::Waker(x) if x.will_wake(waker)),
            ) {
                return Poll::Pending;
            }
        }
    }
}

impl<R> Drop for Pending<R> {
    fn drop(&mut self) {
        self.slot.drop_receiver();
    }
}

impl<R> fmt::Debug for Pending<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pending")
            .field("reply", &std::any::type_name::<R>())
            .finish()
    }
}
