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

/// Which actor: the identity of its cell, as [`crate::Addr::id`] and [`crate::Recipient::id`]
/// give it, for logs and for matching an [`Event`] to an address. Unique among the actors whose
/// cells exist at one time: a cell lives while anything holds the actor's address, and keeps
/// its id across a supervised child's restarts and a respawn. Once an ended actor's address is
/// gone, its id may be given to a new actor. Printed as `#` and hexadecimal digits.
///
/// ```
/// use actorium::{Actor, ActorSystem};
/// struct A;
/// impl Actor for A {}
/// let system = ActorSystem::new()?;
/// let (a, b) = (system.spawn(A), system.spawn(A));
/// assert_ne!(a.id(), b.id());
/// assert_eq!(a.id(), a.clone().recipient::<actorium::DeleteMsg>().id());
/// println!("{}", a.id()); // e.g. #55d0c1a2e3f0
/// # drop(system);
/// # Ok::<(), actorium::ConfigError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ActorId(usize);

impl ActorId {
    /// The id of the actor whose cell is at `cell`.
    pub(crate) fn of(cell: *const ()) -> Self {
        ActorId(cell as usize)
    }
}

impl std::fmt::Debug for ActorId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{:x}", self.0)
    }
}

impl std::fmt::Display for ActorId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self, f)
    }
}

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
        /// The child ([`crate::Addr::id`] of its address, which a restart keeps).
        id: ActorId,
        /// How its incarnation ended.
        reason: &'a ExitReason,
    },
    /// A child of a supervisor ends for good: its restart type says so, a restart strategy
    /// ends it (a temporary sibling), or its supervisor ended for good (then `Shutdown`).
    /// Events are reported without the supervisor's locks held: a hook may call into it.
    ChildEnded {
        /// The child's type.
        child: &'static str,
        /// The child ([`crate::Addr::id`]).
        id: ActorId,
        /// How it ended.
        reason: &'a ExitReason,
    },
    /// A supervisor gave up: more than `restarts` restarts within `period`. It ends with
    /// [`ExitReason::Escalated`].
    SupervisorGaveUp {
        /// The type of the child whose end was one too many.
        child: &'static str,
        /// That child ([`crate::Addr::id`]).
        id: ActorId,
        /// How that child ended.
        reason: &'a ExitReason,
        /// The intensity: restarts allowed…
        restarts: u32,
        /// …within this period.
        period: Duration,
    },
    /// A frame was dropped (remote actors, feature `remote`): one from another node, unread
    /// (malformed, truncated, too large, or for a message type or actor this node does not
    /// serve), or one of this node's own that could not be encoded or did not fit its outbox
    /// (then `from` is this node's id, and an ask the frame carried is answered
    /// [`crate::AskError::Dropped`]). Nothing else happens: the node goes on.
    RemoteFrameDropped {
        /// The sending node's id.
        from: &'a str,
        /// Why.
        reason: &'a str,
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
                super::drop_payload(p);
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
        Event::ChildRestarted { child, id, reason } => {
            tracing::info!(target: "actorium", child, %id, %reason, "supervisor restarts a child")
        }
        Event::ChildEnded { child, id, reason } => {
            tracing::info!(target: "actorium", child, %id, %reason, "supervisor lets a child end")
        }
        Event::SupervisorGaveUp {
            child,
            id,
            reason,
            restarts,
            period,
        } => tracing::warn!(
            target: "actorium",
            child,
            %id,
            %reason,
            restarts,
            period_ms = period.as_millis() as u64,
            "supervisor gave up: restart intensity exceeded"
        ),
        Event::RemoteFrameDropped { from, reason } => tracing::warn!(
            target: "actorium",
            from,
            reason,
            "a frame from another node was dropped"
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
