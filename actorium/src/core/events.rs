//! What the runtime reports as it runs: panics caught in user code, dead letters, and
//! supervisors' decisions ([`Event`]).
//!
//! Each system sends them to the hook set with [`crate::ActorSystemBuilder::on_event`]; without one,
//! to the [`tracing`](https://docs.rs/tracing) crate (the default feature `tracing`: panics
//! at `error`, a supervisor giving up at `warn`, restarts at `info`, dead letters at
//! `debug`, all with target `actorium`), or, with that feature off, panics only, on
//! standard error.

use super::ExitReason;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

/// Something the runtime reports ([`crate::ActorSystemBuilder::on_event`]).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Event<'a> {
    /// User code panicked and the runtime caught the panic (no worker dies of it).
    Panic {
        /// The actor type whose code panicked, if it was an actor's.
        actor: Option<&'static str>,
        /// What panicked: `"behaviour"`, `"started hook"`, `"stopped hook"`, `"destructor"`,
        /// `"restart factory"`, a scheduling policy's method, a timer's `Clone`…
        what: &'a str,
        /// The panic's message.
        message: &'a str,
    },
    /// Messages reached an actor that had ended and were dropped unrun (they are counted
    /// in [`crate::Stats::dead_letters`] too).
    DeadLetters {
        /// The actor's type.
        actor: &'static str,
        /// How many.
        count: u64,
    },
    /// A supervisor restarts a child (and, by its strategy, maybe siblings) after it ended.
    ChildRestarted {
        /// The child's type.
        child: &'static str,
        /// How its incarnation ended.
        reason: &'a ExitReason,
    },
    /// A child of a supervisor ends for good: its restart type says so, a restart strategy
    /// ends it (a temporary sibling), or its supervisor ended for good (then `Shutdown`).
    /// Events are reported without the supervisor's locks held: a hook may call into it.
    ChildEnded {
        /// The child's type.
        child: &'static str,
        /// How it ended.
        reason: &'a ExitReason,
    },
    /// A supervisor gave up: more than `restarts` restarts within `period`. It ends with
    /// [`ExitReason::Escalated`].
    SupervisorGaveUp {
        /// The child whose end was one too many.
        child: &'static str,
        /// How that child ended.
        reason: &'a ExitReason,
        /// The intensity: restarts allowed…
        restarts: u32,
        /// …within this period.
        period: Duration,
    },
}

/// A system's event hook.
pub(crate) type EventHook = Arc<dyn Fn(&Event<'_>) + Send + Sync>;

/// Sends `e` to `hook`, or reports it the default way (see the module docs). A panicking
/// hook is reported the default way and otherwise ignored.
pub(crate) fn report(hook: Option<&EventHook>, e: &Event<'_>) {
    match hook {
        Some(h) => {
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| h(e))) {
                default_report(&Event::Panic {
                    actor: None,
                    what: "the event hook",
                    message: super::panic_message(&*p),
                });
            }
        }
        None => default_report(e),
    }
}

#[cfg(feature = "tracing")]
fn default_report(e: &Event<'_>) {
    match *e {
        Event::Panic {
            actor,
            what,
            message,
        } => {
            tracing::error!(target: "actorium", actor = actor.unwrap_or(""), what, message, "panic caught")
        }
        Event::DeadLetters { actor, count } => {
            tracing::debug!(target: "actorium", actor, count, "dead letters")
        }
        Event::ChildRestarted { child, reason } => {
            tracing::info!(target: "actorium", child, %reason, "supervisor restarts a child")
        }
        Event::ChildEnded { child, reason } => {
            tracing::info!(target: "actorium", child, %reason, "supervisor lets a child end")
        }
        Event::SupervisorGaveUp {
            child,
            reason,
            restarts,
            period,
        } => tracing::warn!(
            target: "actorium",
            child,
            %reason,
            restarts,
            period_ms = period.as_millis() as u64,
            "supervisor gave up: restart intensity exceeded"
        ),
    }
}

#[cfg(not(feature = "tracing"))]
fn default_report(e: &Event<'_>) {
    if let Event::Panic {
        actor,
        what,
        message,
    } = *e
    {
        match actor {
            Some(a) => eprintln!("actorium: actor `{a}` ({what}) panicked: {message}"),
            None => eprintln!("actorium: {what} panicked: {message}"),
        }
    }
}
