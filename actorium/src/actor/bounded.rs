//! Bounded mailboxes and backpressure: an actor spawned with a capacity
//! ([`SystemHandle::spawn_bounded`]) counts the messages queued for it, and a sender can wait
//! for room instead of queuing without limit.
//!
//! | from | when the actor is full |
//! |---|---|
//! | anywhere | [`Addr::try_send`] gives the message back ([`TrySendError::Full`]) |
//! | a thread | [`Addr::send_wait`] blocks until there is room; [`Addr::send_timeout`] for at most a while |
//! | async code | [`Addr::send_async`]`.await` |
//! | a behaviour | [`Context::when_room`]: a continuation runs on this actor, holding a place in the mailbox ([`Room`]), once there is room; the worker never blocks |
//!
//! [`Addr::send`] (and an ask, and a timer's send) never waits and is never refused for room:
//! the message counts, past the capacity if need be (actix's `do_send`). Room is a permit per
//! message, taken by the send and given back when the message is taken to run; senders that
//! wait are served in order (`runtime/permits.rs`). The actor's own continuations (replies to
//! its asks, monitor notices, `when_room` itself) are not messages to it and do not count. An
//! actor without a capacity keeps the uncounted send path: the capacity costs only the actors
//! that have one.

use super::addr::{Addr, Recipient, SendError, Target};
use super::cell::{self, ThenFn};
use super::{Actor, Allocation, Context, Receive, SystemHandle};
use crate::runtime::context::{detached_actor_of, must_not_block, own_system_aborting, runs_for};
use crate::runtime::permits::{Permits, WaiterRef, Wake};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

/// A send that did not queue its message, which is inside.
#[derive(PartialEq, Eq, Clone, Copy)]
pub enum TrySendError<M> {
    /// The actor's bounded mailbox is full (or, for [`Addr::send_timeout`], stayed full).
    Full(M),
    /// The actor has ended (or its system has stopped).
    Dead(M),
}

impl<M> TrySendError<M> {
    /// The message that was not sent.
    pub fn into_inner(self) -> M {
        match self {
            TrySendError::Full(m) | TrySendError::Dead(m) => m,
        }
    }

    /// Whether the mailbox was full (rather than the actor gone).
    pub fn is_full(&self) -> bool {
        matches!(self, TrySendError::Full(_))
    }
}

impl<M> From<SendError<M>> for TrySendError<M> {
    fn from(SendError(m): SendError<M>) -> Self {
        TrySendError::Dead(m)
    }
}

impl<M> fmt::Debug for TrySendError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.is_full() { "Full" } else { "Dead" };
        write!(
            f,
            "TrySendError::{kind}<{}>(..)",
            std::any::type_name::<M>()
        )
    }
}

impl<M> fmt::Display for TrySendError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = std::any::type_name::<M>();
        match self {
            TrySendError::Full(_) => write!(
                f,
                "cannot send a `{m}`: the actor's bounded mailbox is full; the message is \
                 returned inside this error"
            ),
            TrySendError::Dead(_) => write!(
                f,
                "cannot send a `{m}`: the actor has terminated (or its system has stopped); \
                 the message is returned inside this error"
            ),
        }
    }
}

impl<M> std::error::Error for TrySendError<M> {}

/// A place in a bounded actor's mailbox, held for one message: what a [`Context::when_room`]
/// continuation receives. [`Room::send`] uses it; dropping it unused gives it back.
pub struct Room<M: Send + 'static> {
    to: Recipient<M>,
    /// Whether this holds a permit of the actor's room (not when the actor ended while the
    /// sender waited, nor for an actor without a capacity).
    held: bool,
}

impl<M: Send + 'static> Room<M> {
    /// Sends `msg` into the place held. (If the actor ended while its sender waited, there is
    /// no place: the message comes back, unless a respawn made the actor alive again, which
    /// then takes it as a plain [`Addr::send`] would.)
    ///
    /// # Errors
    /// [`SendError`], holding `msg`, if the actor has ended.
    pub fn send(mut self, msg: M) -> Result<(), SendError<M>> {
        if std::mem::take(&mut self.held) {
            self.to.to.deliver_counted(msg).map_err(SendError)
        } else {
            self.to.send(msg)
        }
    }

    /// The actor the place is in.
    pub fn recipient(&self) -> &Recipient<M> {
        &self.to
    }
}

impl<M: Send + 'static> Drop for Room<M> {
    fn drop(&mut self) {
        if self.held {
            if let Some(room) = self.to.to.room() {
                room.release();
            }
        }
    }
}

impl<M: Send + 'static> fmt::Debug for Room<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Room")
            .field("to", &self.to)
            .field("held", &self.held)
            .finish()
    }
}

/// [`Addr::try_send`] on any target.
fn try_send<M: Send + 'static>(to: &dyn Target<M>, msg: M) -> Result<(), TrySendError<M>> {
    let Some(room) = to.room() else {
        return to.deliver(msg).map_err(TrySendError::Dead);
    };
    if !to.alive() {
        return Err(TrySendError::Dead(msg));
    }
    if room.try_acquire() {
        to.deliver_counted(msg).map_err(TrySendError::Dead)
    } else {
        Err(TrySendError::Full(msg))
    }
}

/// [`Addr::send_wait`] (no deadline) and [`Addr::send_timeout`] on any target.
fn send_wait<M: Send + 'static>(
    to: &dyn Target<M>,
    msg: M,
    deadline: Option<Instant>,
) -> Result<(), TrySendError<M>> {
    let (room, msg) = match try_send(to, msg) {
        Err(TrySendError::Full(m)) => (to.room().expect("only a bound is full"), m),
        done => return done,
    };
    assert!(
        !must_not_block(),
        "`send_wait` (or `send_timeout`) was called on a thread that must never block (a \
         remote node's callback, on one of Zenoh's threads) while the mailbox is full: use \
         `try_send`, or send to an actor that waits with `Context::when_room`"
    );
    let owner = to.owner();
    assert!(
        !runs_for(owner) || detached_actor_of(owner).is_some(),
        "`send_wait` (or `send_timeout`) was called from inside a behaviour of the receiving \
         actor's own system while its mailbox is full: the worker would block waiting for \
         room that it may be the one to make (a deadlock). In a behaviour, use `try_send`, or \
         `Context::when_room` to continue once there is room"
    );
    let w = room.wait(Wake::Thread(std::thread::current()));
    if !to.alive() {
        // Ended before the waiter was queued: nobody would close it.
        room.close_one(&w);
    }
    // A caller-driven system runs its jobs on this thread meanwhile.
    let drive = to.driver();
    // Room usually comes within a message's run: spin, then yield, a little before parking
    // (crossbeam's channels do the same); a wake-up from park costs a system call each way.
    let backoff = crossbeam_utils::Backoff::new();
    loop {
        if w.granted() {
            w.used();
            return to.deliver_counted(msg).map_err(TrySendError::Dead);
        }
        if w.closed() {
            return Err(TrySendError::Dead(msg));
        }
        let late = deadline.is_some_and(|d| Instant::now() >= d);
        // A detached actor's thread (or another system's worker) whose system is being
        // dropped gives up: the drop waits for this thread.
        if late || own_system_aborting() {
            if room.cancel(&w) {
                // Served between the last look and the cancel: use it.
                return to.deliver_counted(msg).map_err(TrySendError::Dead);
            }
            // (An actor that ended has its status stored before its waiters are closed.)
            return Err(if late && !w.closed() && to.alive() {
                TrySendError::Full(msg)
            } else {
                TrySendError::Dead(msg)
            });
        }
        if let Some(exec) = &drive {
            if exec.run_once() {
                continue;
            }
        } else if !backoff.is_completed() {
            backoff.snooze();
            continue;
        }
        let mut nap = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if drive.is_some() {
            // Nothing to run: look again soon (another thread may send or run it too).
            nap = Some(nap.map_or(Duration::from_millis(1), |n| {
                n.min(Duration::from_millis(1))
            }));
        }
        match nap {
            Some(t) => std::thread::park_timeout(t),
            None => std::thread::park(),
        }
    }
}

/// The future of [`Addr::send_async`].
struct SendAsync<M: Send + 'static> {
    to: Recipient<M>,
    msg: Option<M>,
    /// Queued for room (after a first poll found the mailbox full).
    waiter: Option<WaiterRef>,
}

// No field is pinned: the message is moved out, never borrowed across polls.
impl<M: Send + 'static> Unpin for SendAsync<M> {}

impl<M: Send + 'static> Future for SendAsync<M> {
    type Output = Result<(), SendError<M>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let w = match &this.waiter {
            Some(w) => w,
            None => {
                let msg = this.msg.take().expect("polled after completion");
                let msg = match try_send(&*this.to.to, msg) {
                    Err(TrySendError::Full(m)) => m,
                    done => return Poll::Ready(done.map_err(|e| SendError(e.into_inner()))),
                };
                this.msg = Some(msg);
                let room = this.to.to.room().expect("only a bound is full");
                let w = room.wait(Wake::Task(cx.waker().clone()));
                if !this.to.is_alive() {
                    // Ended before the waiter was queued: nobody would close it.
                    room.close_one(&w);
                }
                this.waiter.insert(w)
            }
        };
        // The waker first, then the state (see `Waiter::set_waker`).
        w.set_waker(cx.waker());
        if w.granted() {
            w.used();
            this.waiter = None;
            let msg = this.msg.take().expect("polled after completion");
            return Poll::Ready(this.to.to.deliver_counted(msg).map_err(SendError));
        }
        if w.closed() {
            this.waiter = None;
            let msg = this.msg.take().expect("polled after completion");
            return Poll::Ready(Err(SendError(msg)));
        }
        Poll::Pending
    }
}

impl<M: Send + 'static> Drop for SendAsync<M> {
    /// A future dropped while waiting leaves the queue (and gives back a permit it was
    /// granted and never used).
    fn drop(&mut self) {
        if let (Some(w), Some(room)) = (&self.waiter, self.to.to.room()) {
            if room.cancel(w) {
                room.release();
            }
        }
    }
}

impl<A: Actor> Addr<A> {
    /// How many messages are queued for the actor (a snapshot, for monitoring), if it has a
    /// bounded mailbox ([`SystemHandle::spawn_bounded`]; a capacity of `usize::MAX` counts
    /// without bounding): sends not yet taken to run, and places held for a sender that was
    /// given room and has not used it yet ([`Room`]). It passes the capacity only through
    /// [`Addr::send`]s, asks and timers (which are not bounded), and a [`Room::send`] that holds
    /// no place (the actor had ended when the room was granted, and was respawned since).
    /// `None` for an actor without a capacity: its sends are not counted.
    pub fn queued(&self) -> Option<usize> {
        self.cell().bound().map(Permits::used)
    }

    /// The capacity of the actor's bounded mailbox, if it has one.
    pub fn capacity(&self) -> Option<usize> {
        self.cell().bound().map(Permits::capacity)
    }
}

impl<A: Actor> Addr<A> {
    /// Sends `msg` if the actor's bounded mailbox has room, else gives it back at once
    /// ([`TrySendError::Full`]). To an actor without a capacity it is [`Self::send`]. Senders
    /// waiting for room ([`Self::send_wait`], [`Self::send_async`], [`Context::when_room`])
    /// are served first: a `try_send` does not pass them.
    ///
    /// ```
    /// use actorium::{Actor, ActorSystem, Allocation, Context, Receive, TrySendError};
    /// struct Slow;
    /// impl Actor for Slow {}
    /// impl Receive<u32> for Slow {
    ///     fn receive(&mut self, _: u32, _: &mut Context<'_, Self>) -> Allocation {
    ///         std::thread::sleep(std::time::Duration::from_millis(1));
    ///         Allocation::Nodelete
    ///     }
    /// }
    /// let system = ActorSystem::new()?;
    /// let slow = system.spawn_bounded(Slow, 100);
    /// let (mut sent, mut full) = (0, 0);
    /// for i in 0..1_000 {
    ///     match slow.try_send(i) {
    ///         Ok(()) => sent += 1,
    ///         Err(TrySendError::Full(_)) => full += 1, // dropped here; or keep it for later
    ///         Err(e) => return Err(e.into()),
    ///     }
    /// }
    /// assert!(full > 0 && sent >= 100);
    /// assert!(slow.queued().unwrap() <= 100);
    /// system.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`TrySendError::Full`] or [`TrySendError::Dead`], holding `msg`.
    pub fn try_send<M: Send + 'static>(&self, msg: M) -> Result<(), TrySendError<M>>
    where
        A: Receive<M>,
    {
        try_send(self.target(), msg)
    }

    /// Sends `msg`, blocking this thread while the actor's bounded mailbox is full (as
    /// `tokio::sync::mpsc::Sender::blocking_send`). To an actor without a capacity it is
    /// [`Self::send`]. Waiting senders are served in the order they came.
    ///
    /// ```
    /// use actorium::{Actor, ActorSystem, Allocation, Context, Receive};
    /// struct Sink(u64);
    /// impl Actor for Sink {}
    /// impl Receive<u64> for Sink {
    ///     fn receive(&mut self, n: u64, _: &mut Context<'_, Self>) -> Allocation {
    ///         self.0 += n;
    ///         Allocation::Nodelete
    ///     }
    /// }
    /// let system = ActorSystem::new()?;
    /// let sink = system.spawn_bounded(Sink(0), 1_000);
    /// for n in 0..100_000 {
    ///     sink.send_wait(n)?; // never more than 1,000 queued
    /// }
    /// system.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// On a caller-driven system (the [`crate::policy::Testing`] policy) it runs the system's
    /// jobs while it waits, as [`crate::ActorSystem::run_once`] does.
    ///
    /// # Errors
    /// [`SendError`], holding `msg`, if the actor has ended (before or while waiting), or if
    /// the calling thread is a detached actor's (or a worker's) whose own system is being
    /// dropped: the drop waits for that thread, and the send gives up rather than hold it.
    ///
    /// # Panics
    /// If it would have to wait on a worker of the actor's own system (in a behaviour: use
    /// [`Self::try_send`] or [`Context::when_room`] there), or on a thread that must never
    /// block (a remote node's callback). A detached actor of that system may wait: it has a
    /// thread of its own.
    pub fn send_wait<M: Send + 'static>(&self, msg: M) -> Result<(), SendError<M>>
    where
        A: Receive<M>,
    {
        send_wait(self.target(), msg, None).map_err(|e| SendError(e.into_inner()))
    }

    /// [`Self::send_wait`] for at most `timeout`.
    ///
    /// # Errors
    /// [`TrySendError::Full`] if the mailbox stayed full, [`TrySendError::Dead`] if the actor
    /// ended (or the calling thread's own system is being dropped, as for
    /// [`Self::send_wait`]); the message is inside.
    ///
    /// # Panics
    /// As [`Self::send_wait`].
    pub fn send_timeout<M: Send + 'static>(
        &self,
        msg: M,
        timeout: Duration,
    ) -> Result<(), TrySendError<M>>
    where
        A: Receive<M>,
    {
        send_wait(self.target(), msg, Instant::now().checked_add(timeout))
    }

    /// Sends `msg` from async code, waiting while the actor's bounded mailbox is full (as
    /// `tokio::sync::mpsc::Sender::send`). To an actor without a capacity it is
    /// [`Self::send`]. Dropping the future gives up its place among the waiting senders.
    ///
    /// # Errors
    /// [`SendError`], holding `msg`, if the actor has ended.
    pub fn send_async<M: Send + 'static>(
        &self,
        msg: M,
    ) -> impl Future<Output = Result<(), SendError<M>>> + Send + 'static
    where
        A: Receive<M>,
    {
        SendAsync {
            to: self.recipient(),
            msg: Some(msg),
            waiter: None,
        }
    }
}

/// The bounded-mailbox side of a [`Recipient`]: as on [`Addr`].
impl<M: Send + 'static> Recipient<M> {
    /// As [`Addr::try_send`].
    ///
    /// # Errors
    /// [`TrySendError::Full`] or [`TrySendError::Dead`], holding `msg`.
    pub fn try_send(&self, msg: M) -> Result<(), TrySendError<M>> {
        try_send(&*self.to, msg)
    }

    /// As [`Addr::send_wait`].
    ///
    /// # Errors
    /// As [`Addr::send_wait`].
    ///
    /// # Panics
    /// As [`Addr::send_wait`].
    pub fn send_wait(&self, msg: M) -> Result<(), SendError<M>> {
        send_wait(&*self.to, msg, None).map_err(|e| SendError(e.into_inner()))
    }

    /// As [`Addr::send_timeout`].
    ///
    /// # Errors
    /// As [`Addr::send_timeout`].
    ///
    /// # Panics
    /// As [`Addr::send_wait`].
    pub fn send_timeout(&self, msg: M, timeout: Duration) -> Result<(), TrySendError<M>> {
        send_wait(&*self.to, msg, Instant::now().checked_add(timeout))
    }

    /// As [`Addr::send_async`].
    ///
    /// # Errors
    /// [`SendError`], holding `msg`, if the actor has ended.
    pub fn send_async(
        &self,
        msg: M,
    ) -> impl Future<Output = Result<(), SendError<M>>> + Send + 'static {
        SendAsync {
            to: self.clone(),
            msg: Some(msg),
            waiter: None,
        }
    }

    /// As [`Addr::queued`].
    pub fn queued(&self) -> Option<usize> {
        self.to.room().map(Permits::used)
    }

    /// As [`Addr::capacity`].
    pub fn capacity(&self) -> Option<usize> {
        self.to.room().map(Permits::capacity)
    }
}

impl SystemHandle {
    /// Spawns `actor` with a bounded mailbox of `capacity` messages: [`Addr::try_send`],
    /// [`Addr::send_wait`], [`Addr::send_async`] and [`Context::when_room`] wait for room (or
    /// report it full), [`Addr::queued`] tells how many messages wait. [`Addr::send`] is not
    /// refused for room. See `Addr::try_send` for an example. On a system that is stopping,
    /// the actor is dropped and the address is dead, with no capacity (as [`Self::spawn`]).
    ///
    /// # Panics
    /// If `capacity` is 0 (a mailbox that can never take a message).
    pub fn spawn_bounded<A: Actor>(&self, actor: A, capacity: usize) -> Addr<A> {
        spawn_bounded(self.executor(), actor, capacity)
    }
}

/// [`SystemHandle::spawn_bounded`] on the system of `exec`.
fn spawn_bounded<A: Actor>(exec: &crate::core::ExecRef, actor: A, capacity: usize) -> Addr<A> {
    assert!(
        capacity > 0,
        "a bounded mailbox needs a capacity of at least 1 (use `usize::MAX` to count \
         messages without bounding them)"
    );
    Addr::from_cell(cell::spawn_bounded(exec, actor, capacity))
}

impl<A: Actor> Context<'_, A> {
    /// Spawns an actor with a bounded mailbox on this actor's system
    /// ([`SystemHandle::spawn_bounded`]).
    ///
    /// # Panics
    /// If `capacity` is 0.
    pub fn spawn_bounded<B: Actor>(&self, actor: B, capacity: usize) -> Addr<B> {
        spawn_bounded(&self.cell.header.exec, actor, capacity)
    }

    /// Backpressure in a behaviour: once the bounded mailbox of `to` has room, `then` runs on
    /// this actor (as one of its behaviours, in turn with its messages) with a [`Room`]
    /// holding a place for one message; the worker never blocks. Waiting senders are served
    /// in order. If `to` ends first, `then` still runs, and its `Room::send` gives the message
    /// back; if this actor ends first, the place is given back. To an actor without a
    /// capacity, `then` is queued at once.
    ///
    /// A producer keeps what it could not send in its own state, and refills from there:
    ///
    /// ```
    /// use actorium::{Actor, ActorSystem, Addr, Allocation, Context, Receive, Room, TrySendError};
    /// use std::sync::mpsc;
    ///
    /// struct Sink(u64, mpsc::Sender<u64>);
    /// impl Actor for Sink {}
    /// impl Receive<u64> for Sink {
    ///     fn receive(&mut self, n: u64, _: &mut Context<'_, Self>) -> Allocation {
    ///         self.0 += n;
    ///         if n == 9_999 {
    ///             self.1.send(self.0).unwrap();
    ///         }
    ///         Allocation::Nodelete
    ///     }
    /// }
    /// struct Source { next: u64, sink: Addr<Sink> }
    /// impl Source {
    ///     /// Sends until the sink is full, then waits for room.
    ///     fn pump(&mut self, ctx: &mut Context<'_, Self>) {
    ///         while self.next < 10_000 {
    ///             match self.sink.try_send(self.next) {
    ///                 Ok(()) => self.next += 1,
    ///                 Err(TrySendError::Full(_)) => {
    ///                     ctx.when_room(&self.sink, |me: &mut Source, room: Room<u64>, ctx| {
    ///                         if room.send(me.next).is_ok() {
    ///                             me.next += 1;
    ///                             me.pump(ctx);
    ///                         }
    ///                         Allocation::Nodelete
    ///                     });
    ///                     return;
    ///                 }
    ///                 Err(TrySendError::Dead(_)) => return,
    ///             }
    ///         }
    ///     }
    /// }
    /// impl Actor for Source {}
    /// impl Receive<()> for Source {
    ///     fn receive(&mut self, _: (), ctx: &mut Context<'_, Self>) -> Allocation {
    ///         self.pump(ctx);
    ///         Allocation::Nodelete
    ///     }
    /// }
    /// let system = ActorSystem::new()?;
    /// let (tx, rx) = mpsc::channel();
    /// let sink = system.spawn_bounded(Sink(0, tx), 64);
    /// system.spawn(Source { next: 0, sink }).send(())?;
    /// assert_eq!(rx.recv()?, 9_999 * 10_000 / 2);
    /// system.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn when_room<M, T, F>(&self, to: T, then: F)
    where
        M: Send + 'static,
        T: Into<Recipient<M>>,
        F: FnOnce(&mut A, Room<M>, &mut Context<'_, A>) -> Allocation + Send + 'static,
    {
        let to: Recipient<M> = to.into();
        // Weak: a waiter queued at a full actor of another system must not keep this actor
        // (and its system's memory) alive after its system is dropped.
        let me = self.address().downgrade();
        let incarnation = self.cell.header.incarnation();
        let queue_then = move |room: Room<M>| {
            let f: ThenFn<A> = Box::new(move |a, ctx| then(a, room, ctx));
            // Refused (this actor ended): the continuation is dropped, and the place with it.
            if let Some(me) = me.upgrade() {
                let _ = cell::send_then(me.cell(), incarnation, f);
            }
        };
        let Some(permits) = to.to.room() else {
            queue_then(Room { to, held: false });
            return;
        };
        let target = to.clone();
        let w = permits.wait(Wake::Call(Box::new(move |held| {
            queue_then(Room { to: target, held })
        })));
        if !to.is_alive() {
            // Ended before the waiter was queued: nobody would close it.
            permits.close_one(&w);
        }
    }
}
