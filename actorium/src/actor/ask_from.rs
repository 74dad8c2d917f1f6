//! Asks from a behaviour ([`Context::ask`], [`Context::ask_timeout`]): the reply runs a
//! continuation on the asking actor, as one of its behaviours, so the worker never blocks. The
//! asked actor is reached through an [`Addr`] or a [`Recipient`] ([`AskTarget`]).

use super::addr::{Addr, Recipient, SendError};
use super::ask::{Ask, AskError, ReplyTo, ToActor, Wanted};
use super::cell;
use super::{Actor, Allocation, Context, Receive};
use crate::core::Status;
use crate::runtime::lock;
use crate::runtime::timer_thread::TimerRef;
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod sealed {
    /// Sends a request (`Ask<M, R>`), giving it back if the actor has ended.
    pub trait SendAsk<M, R> {
        fn send_ask(&self, ask: super::Ask<M, R>) -> Result<(), super::Ask<M, R>>;
    }
}

/// What [`Context::ask`] can ask a question `M` with reply `R`: an [`Addr`] of an actor that
/// answers `Ask<M, R>`, or a [`Recipient<Ask<M, R>>`] (any actor type that does). Sealed.
pub trait AskTarget<M, R>: sealed::SendAsk<M, R> {}

impl<B, M, R> sealed::SendAsk<M, R> for Addr<B>
where
    B: Receive<Ask<M, R>>,
    M: Send + 'static,
    R: Send + 'static,
{
    fn send_ask(&self, ask: Ask<M, R>) -> Result<(), Ask<M, R>> {
        self.send(ask).map_err(|SendError(a)| a)
    }
}
impl<B, M, R> AskTarget<M, R> for Addr<B>
where
    B: Receive<Ask<M, R>>,
    M: Send + 'static,
    R: Send + 'static,
{
}

impl<M: Send + 'static, R: Send + 'static> sealed::SendAsk<M, R> for Recipient<Ask<M, R>> {
    fn send_ask(&self, ask: Ask<M, R>) -> Result<(), Ask<M, R>> {
        self.send(ask).map_err(|SendError(a)| a)
    }
}
impl<M: Send + 'static, R: Send + 'static> AskTarget<M, R> for Recipient<Ask<M, R>> {}

impl<A: Actor> Context<'_, A> {
    /// Asks `to` the question `msg` without blocking this worker: the reply (or why there is
    /// none, [`AskError`]) comes back to this actor as a call of `then`, run as one of its
    /// behaviours, in turn with its messages (so never at the same time as another). `then`
    /// returns the actor's [`Allocation`] like any behaviour. `to` is an [`Addr`] or a
    /// [`Recipient<Ask<M, R>>`] ([`AskTarget`]); [`Self::ask_timeout`] bounds the wait. See
    /// [`Ask`].
    ///
    /// # Errors
    /// [`SendError`] with `msg` inside if `to` had ended.
    ///
    /// ```
    /// use actorium::{Actor, ActorSystem, Addr, Allocation, Ask, Context, Receive};
    /// use std::sync::mpsc;
    ///
    /// struct Doubler;
    /// impl Actor for Doubler {}
    /// impl Receive<Ask<u32, u32>> for Doubler {
    ///     fn receive(&mut self, a: Ask<u32, u32>, _: &mut Context<'_, Self>) -> Allocation {
    ///         a.reply.send(a.msg * 2).ok();
    ///         Allocation::Nodelete
    ///     }
    /// }
    /// struct Client { doubler: Addr<Doubler>, out: mpsc::Sender<u32> }
    /// impl Actor for Client {}
    /// impl Receive<u32> for Client {
    ///     fn receive(&mut self, n: u32, ctx: &mut Context<'_, Self>) -> Allocation {
    ///         ctx.ask(&self.doubler, n, |me: &mut Self, reply, _| {
    ///             me.out.send(reply.unwrap()).unwrap();
    ///             Allocation::Nodelete
    ///         })
    ///         .unwrap();
    ///         Allocation::Nodelete // the worker goes on with other actors meanwhile
    ///     }
    /// }
    /// // One worker: a blocking ask would deadlock here; this one cannot.
    /// let system = ActorSystem::builder().workers(1).build()?;
    /// let (tx, rx) = mpsc::channel();
    /// let doubler = system.spawn(Doubler);
    /// let client = system.spawn(Client { doubler, out: tx });
    /// client.send(21).unwrap();
    /// assert_eq!(rx.recv().unwrap(), 42);
    /// # drop(system);
    /// # Ok::<(), actorium::ConfigError>(())
    /// ```
    pub fn ask<T, M, R, F>(&self, to: &T, msg: M, then: F) -> Result<(), SendError<M>>
    where
        T: AskTarget<M, R> + ?Sized,
        M: Send + 'static,
        R: Send + 'static,
        F: FnOnce(&mut A, Result<R, AskError>, &mut Context<'_, A>) -> Allocation + Send + 'static,
    {
        send(to, msg, self.continuation(then), self.asker_waits())
    }

    /// [`Self::ask`] that gives up after `timeout`: if no reply has come by then, `then` runs
    /// with [`AskError::Timeout`] (a reply that comes later is dropped). `then` runs exactly
    /// once, whichever comes first; a reply cancels the timer. The timeout runs on the
    /// system's timer thread (where none can be set, the system stopping, it is up at once).
    ///
    /// # Errors
    /// [`SendError`] with `msg` inside if `to` had ended.
    ///
    /// ```
    /// use actorium::{Actor, ActorSystem, AskError, Allocation, Ask, Context, Receive, ReplyTo};
    /// use std::sync::mpsc;
    /// use std::time::Duration;
    ///
    /// /// Keeps every reply port and never answers.
    /// struct Silent(Vec<ReplyTo<u32>>);
    /// impl Actor for Silent {}
    /// impl Receive<Ask<u32, u32>> for Silent {
    ///     fn receive(&mut self, a: Ask<u32, u32>, _: &mut Context<'_, Self>) -> Allocation {
    ///         self.0.push(a.reply);
    ///         Allocation::Nodelete
    ///     }
    /// }
    /// struct Client(actorium::Recipient<Ask<u32, u32>>, mpsc::Sender<Result<u32, AskError>>);
    /// impl Actor for Client {}
    /// impl Receive<()> for Client {
    ///     fn receive(&mut self, _: (), ctx: &mut Context<'_, Self>) -> Allocation {
    ///         let timeout = Duration::from_millis(20);
    ///         ctx.ask_timeout(&self.0, 7, timeout, |me: &mut Self, reply, _| {
    ///             me.1.send(reply).unwrap();
    ///             Allocation::Nodelete
    ///         })
    ///         .unwrap();
    ///         Allocation::Nodelete
    ///     }
    /// }
    /// let system = ActorSystem::new()?;
    /// let (tx, rx) = mpsc::channel();
    /// let silent = system.spawn(Silent(Vec::new())).recipient();
    /// system.spawn(Client(silent, tx)).send(()).unwrap();
    /// assert_eq!(rx.recv()?, Err(AskError::Timeout));
    /// # drop(system);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn ask_timeout<T, M, R, F>(
        &self,
        to: &T,
        msg: M,
        timeout: Duration,
        then: F,
    ) -> Result<(), SendError<M>>
    where
        T: AskTarget<M, R> + ?Sized,
        M: Send + 'static,
        R: Send + 'static,
        F: FnOnce(&mut A, Result<R, AskError>, &mut Context<'_, A>) -> Allocation + Send + 'static,
    {
        // The continuation goes to whichever comes first, the reply or the timer; the reply
        // cancels the timer (a finished ask keeps no timer until its deadline).
        let race = Arc::new(Mutex::new(Race {
            then: Some(self.continuation(then)),
            timer: None,
        }));
        let by_reply = race.clone();
        let k: ToActor<R> = Box::new(move |r| {
            let (then, timer) = {
                let mut g = lock(&by_reply);
                (g.then.take(), g.timer.take())
            };
            if let Some(t) = timer {
                t.cancel();
            }
            if let Some(then) = then {
                then(r);
            }
        });
        let waits = self.asker_waits();
        let open = Arc::downgrade(&race);
        // (Wanted until the reply or the timer took the continuation.)
        let wanted: Wanted =
            Box::new(move || waits() && open.upgrade().is_some_and(|r| lock(&r).then.is_some()));
        send(to, msg, k, wanted)?;
        let by_timer = race.clone();
        let fire = Box::new(move || {
            let then = lock(&by_timer).then.take();
            if let Some(then) = then {
                then(Err(AskError::Timeout));
            }
            false
        });
        match self
            .cell
            .header
            .exec
            .shared()
            .timers
            .add(timeout, None, fire)
        {
            Ok(t) => {
                let mut g = lock(&race);
                if g.then.is_some() {
                    g.timer = Some(t);
                } else {
                    // The reply came first.
                    drop(g);
                    t.cancel();
                }
            }
            // No timer (the system is stopping, or the timer thread could not start): the
            // time is up at once, so that `then` still runs exactly once.
            Err(mut fire) => {
                fire();
            }
        }
        Ok(())
    }

    /// Whether this actor (this incarnation) is still there to take a reply: a continuation's
    /// [`ReplyTo::is_wanted`].
    fn asker_waits(&self) -> Wanted {
        let me = self.address().downgrade();
        let incarnation = self.cell.header.incarnation();
        Box::new(move || {
            me.upgrade().is_some_and(|me| {
                let h = &me.cell().header;
                h.status() == Status::Alive && h.incarnation() == incarnation
            })
        })
    }

    /// The continuation of an ask: `then`, run on this actor (this incarnation) as one of its
    /// behaviours.
    fn continuation<R, F>(&self, then: F) -> ToActor<R>
    where
        R: Send + 'static,
        F: FnOnce(&mut A, Result<R, AskError>, &mut Context<'_, A>) -> Allocation + Send + 'static,
    {
        // Weak: a reply port kept by another actor (or another system) must not keep this
        // actor's cell, and its system's executor, alive. A live actor's cell is held by its
        // system, so the upgrade fails only once the actor is gone.
        let me = self.address().downgrade();
        let incarnation = self.cell.header.incarnation();
        Box::new(move |reply: Result<R, AskError>| {
            let f: cell::ThenFn<A> =
                Box::new(move |a: &mut A, ctx: &mut Context<'_, A>| then(a, reply, ctx));
            // The asker ended meanwhile (or was respawned: a dead letter then): the reply is
            // dropped with the continuation.
            if let Some(me) = me.upgrade() {
                let _ = cell::send_then(me.cell(), incarnation, f);
            }
        })
    }
}

/// An ask with a timeout: its continuation until the reply or the timer takes it, and the
/// timer, cancelled by a reply that comes first.
struct Race<R> {
    then: Option<ToActor<R>>,
    timer: Option<TimerRef>,
}

/// Sends the request `msg` to `to`, its reply going to `k` (wanted while `wanted` says so);
/// gives `msg` back if `to` had ended.
fn send<T, M, R>(to: &T, msg: M, k: ToActor<R>, wanted: Wanted) -> Result<(), SendError<M>>
where
    T: AskTarget<M, R> + ?Sized,
    R: Send + 'static,
{
    to.send_ask(Ask {
        msg,
        reply: ReplyTo::actor(k, wanted),
    })
    .map_err(|Ask { msg, reply }| {
        reply.disarm();
        SendError(msg)
    })
}
