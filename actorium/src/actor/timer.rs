//! Timers: messages sent after a delay ([`SystemHandle::send_after`]) or periodically
//! ([`SystemHandle::send_interval`]), cancellable with their [`Timer`] handle. Every timer of a
//! system runs on one thread of its own, started with the first timer, sleeping until the
//! earliest deadline (`runtime/timer_thread.rs`): no thread per timer, no CPU while none is due.

use super::addr::{Recipient, SendError};
use super::handle::SystemHandle;
use super::{Actor, Context};
use crate::core::{report_panic, Shared};
use crate::runtime::timer_thread::{Fire, TimerRef};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A pending timer. Dropping the handle does not cancel the timer; [`Self::cancel`] does.
#[derive(Clone)]
pub struct Timer {
    r: TimerRef,
}

impl Timer {
    /// Cancels the timer: its message is dropped unsent (for a periodic timer, no tick after
    /// the one being sent at this moment, if any: a cancel that races a tick does not take
    /// back the tick already on its way, so a receiver may see one more). Returns whether it
    /// was still pending.
    pub fn cancel(&self) -> bool {
        self.r.cancel()
    }

    /// Whether the timer will still send (a one-shot timer that fired, a cancelled one, a
    /// periodic one whose receiver ended, or any timer of a stopped system: `false`).
    pub fn is_pending(&self) -> bool {
        self.r.is_pending()
    }
}

impl fmt::Debug for Timer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timer")
            .field("pending", &self.is_pending())
            .finish()
    }
}

/// A periodic timer (`send_interval`): refuses a zero period with a message that says what
/// to change, then [`add`]s it, first tick after one period.
fn add_interval<M: Clone + Send + 'static>(
    shared: &Shared,
    to: Recipient<M>,
    msg: M,
    period: Duration,
) -> Result<Timer, SendError<M>> {
    assert!(
        !period.is_zero(),
        "`send_interval` with a zero period would send without pause and flood the receiver; \
         pass a period of at least a microsecond"
    );
    let clone: fn(&M) -> M = M::clone;
    add(shared, to, msg, period, Some((period, clone)))
}

/// A periodic timer's period, and how it clones its message.
type Period<M> = (Duration, fn(&M) -> M);

/// The message a timer holds until it fires. A timer dropped unsent (cancelled, stopped with
/// its system, or a periodic timer's original once it ends) drops it through this, on the
/// timer thread, in the shutdown or in `cancel`: a panic of its destructor is caught and
/// reported there, and never unwinds into the timer thread or the shutdown.
struct Held<M>(Mutex<Option<M>>);

impl<M> Drop for Held<M> {
    fn drop(&mut self) {
        if let Some(m) = self.0.get_mut().unwrap_or_else(|p| p.into_inner()).take() {
            dispose(m);
        }
    }
}

/// Drops a timer's message that was not delivered (its receiver ended, or the timer was
/// dropped unsent), reporting a panic of its destructor.
fn dispose<M>(m: M) {
    if let Err(p) = catch_unwind(AssertUnwindSafe(|| drop(m))) {
        report_panic(
            &format!(
                "a timer's message (`Drop` of `{}`)",
                std::any::type_name::<M>()
            ),
            &*p,
        );
        crate::core::drop_payload(p);
    }
}

/// Adds a timer on `shared`'s timer thread that sends `msg` (a clone of it, if `period`) to
/// `to` after `delay`, then every `period` while `to` accepts it. The message waits in a slot
/// the firing closure shares, so that a timer that could not be added gives it back.
fn add<M: Send + 'static>(
    shared: &Shared,
    to: Recipient<M>,
    msg: M,
    delay: Duration,
    period: Option<Period<M>>,
) -> Result<Timer, SendError<M>> {
    if shared.life.closed() {
        return Err(SendError(msg));
    }
    let slot = Arc::new(Held(Mutex::new(Some(msg))));
    let held = slot.clone();
    let fire: Fire = Box::new(move || {
        let mut g = held.0.lock().unwrap_or_else(|p| p.into_inner());
        match period {
            None => {
                if let Some(m) = g.take() {
                    // Refused: the receiver ended meanwhile; the message is dropped.
                    if let Err(SendError(m)) = to.send(m) {
                        dispose(m);
                    }
                }
                false
            }
            Some((_, clone)) => {
                let Some(m) = g.as_ref() else { return false };
                match catch_unwind(AssertUnwindSafe(|| clone(m))) {
                    Ok(m) => match to.send(m) {
                        Ok(()) => true,
                        Err(SendError(m)) => {
                            dispose(m);
                            false
                        }
                    },
                    Err(p) => {
                        report_panic(
                            &format!(
                                "a periodic timer (`Clone` of `{}`)",
                                std::any::type_name::<M>()
                            ),
                            &*p,
                        );
                        crate::core::drop_payload(p);
                        false
                    }
                }
            }
        }
    });
    match shared.timers.add(delay, period.map(|(p, _)| p), fire) {
        Ok(r) => Ok(Timer { r }),
        Err(fire) => {
            drop(fire);
            let msg = slot.0.lock().unwrap_or_else(|p| p.into_inner()).take();
            Err(SendError(
                msg.expect("a timer that was not added never fired"),
            ))
        }
    }
}

impl SystemHandle {
    /// Sends `msg` to `to` (an [`crate::Addr`] or a [`Recipient`]) after `delay`, from the
    /// system's timer thread. The message is dropped if the receiver has ended by then, or if
    /// the timer is cancelled or the system stops first.
    ///
    /// # Errors
    /// [`SendError`] with `msg` if the system has stopped.
    ///
    /// ```
    /// use actorium::{Actor, ActorSystem, Allocation, Context, Receive};
    /// use std::sync::mpsc;
    /// use std::time::Duration;
    ///
    /// struct Alarm(mpsc::Sender<&'static str>);
    /// impl Actor for Alarm {}
    /// impl Receive<&'static str> for Alarm {
    ///     fn receive(&mut self, s: &'static str, _: &mut Context<'_, Self>) -> Allocation {
    ///         self.0.send(s).unwrap();
    ///         Allocation::Nodelete
    ///     }
    /// }
    /// let system = ActorSystem::new()?;
    /// let (tx, rx) = mpsc::channel();
    /// let alarm = system.spawn(Alarm(tx));
    /// system.send_after(&alarm, "late", Duration::from_millis(20)).unwrap();
    /// system.send_after(&alarm, "early", Duration::from_millis(10)).unwrap();
    /// let never = system.send_after(&alarm, "never", Duration::from_millis(15)).unwrap();
    /// assert!(never.cancel());
    /// assert_eq!(rx.recv()?, "early");
    /// assert_eq!(rx.recv()?, "late");
    /// system.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn send_after<M: Send + 'static>(
        &self,
        to: impl Into<Recipient<M>>,
        msg: M,
        delay: Duration,
    ) -> Result<Timer, SendError<M>> {
        add(self.executor().shared(), to.into(), msg, delay, None)
    }

    /// Sends a clone of `msg` to `to` every `period` (the first after one period), from the
    /// system's timer thread, until the timer is cancelled, the receiver ends, or the system
    /// stops. A tick that comes late (a busy machine) is not made up for: the next keeps
    /// the period's phase.
    ///
    /// # Errors
    /// [`SendError`] with `msg` if the system has stopped.
    ///
    /// # Panics
    /// If `period` is zero (as `tokio::time::interval`): it would flood the receiver.
    pub fn send_interval<M: Clone + Send + 'static>(
        &self,
        to: impl Into<Recipient<M>>,
        msg: M,
        period: Duration,
    ) -> Result<Timer, SendError<M>> {
        add_interval(self.executor().shared(), to.into(), msg, period)
    }
}

impl<A: Actor> Context<'_, A> {
    /// [`SystemHandle::send_after`] on this actor's system; to itself:
    /// `ctx.send_after(ctx.address(), msg, delay)`.
    ///
    /// # Errors
    /// [`SendError`] with `msg` if the system has stopped.
    ///
    /// ```
    /// use actorium::{Actor, ActorSystem, Allocation, Context, Receive};
    /// use std::time::Duration;
    ///
    /// /// Counts down once every millisecond, then ends.
    /// struct Countdown(u32);
    /// impl Actor for Countdown {}
    /// impl Receive<()> for Countdown {
    ///     fn receive(&mut self, _: (), ctx: &mut Context<'_, Self>) -> Allocation {
    ///         if self.0 == 0 {
    ///             return Allocation::Delete;
    ///         }
    ///         self.0 -= 1;
    ///         ctx.send_after(ctx.address(), (), Duration::from_millis(1)).unwrap();
    ///         Allocation::Nodelete
    ///     }
    /// }
    /// let system = ActorSystem::new()?;
    /// system.spawn(Countdown(5)).send(()).unwrap();
    /// system.stop(); // returns once the countdown ended
    /// # Ok::<(), actorium::ConfigError>(())
    /// ```
    pub fn send_after<M: Send + 'static>(
        &self,
        to: impl Into<Recipient<M>>,
        msg: M,
        delay: Duration,
    ) -> Result<Timer, SendError<M>> {
        add(self.cell.header.exec.shared(), to.into(), msg, delay, None)
    }

    /// [`SystemHandle::send_interval`] on this actor's system.
    ///
    /// # Errors
    /// [`SendError`] with `msg` if the system has stopped.
    ///
    /// # Panics
    /// If `period` is zero.
    pub fn send_interval<M: Clone + Send + 'static>(
        &self,
        to: impl Into<Recipient<M>>,
        msg: M,
        period: Duration,
    ) -> Result<Timer, SendError<M>> {
        add_interval(self.cell.header.exec.shared(), to.into(), msg, period)
    }
}
