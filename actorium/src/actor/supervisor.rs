//! Supervision, as Erlang/OTP's `supervisor`: a [`Supervisor`] actor restarts its children
//! when they end, by a [`Strategy`] and each child's [`Restart`] type, within a restart
//! intensity; past it, it gives up and its own supervisor decides.
//!
//! Unlike Erlang, a child is restarted **in place**: its address, its queue ticket and its
//! waiting mail stay. When an incarnation ends (a panic, or any terminal [`Allocation`]), the
//! actor is *suspended*: its state is dropped, its status stays alive, and mail sent to it
//! waits (in order) in its cell. The supervisor's decision comes back as an envelope in the
//! child's own queue: a restart builds the next incarnation with the child's factory, runs its
//! `started` hook, then the mail that waited; "not restarted" ends the child for good (the mail
//! that waited becomes dead letters, an ask in it resolves to [`crate::AskError::Dropped`]).
//! Everything that happens to one child runs as one of its behaviours, one at a time, so a
//! restart never overlaps the old incarnation's `stopped` hook.
//!
//! Which incarnation a notice is about is numbered (a *generation*): a child that ends while a
//! restart of it is already on its way (a sibling's failure restarted it) sends a notice the
//! supervisor ignores.
//!
//! Where this differs from OTP, besides restarting in place:
//! - `OneForAll` / `RestForOne` restart each affected sibling by an envelope in its own queue,
//!   so siblings restart concurrently, not "all stopped, last first, then all started in
//!   order": a restarted child may briefly talk to a sibling's old incarnation. Messages from
//!   different senders have no order between them, so a reply from one sibling's new
//!   incarnation does not mean that the restart has reached every other sibling yet.
//! - A supervisor that gives up ends with [`ExitReason::Escalated`], which counts as a failure:
//!   a `Transient` nested supervisor is restarted (in OTP it exits `shutdown` and is not). Its
//!   children keep running until its own supervisor decides; the restart restarts them all.
//! - Mail that waited across a restart includes replies to asks the old incarnation made
//!   ([`Context::ask`] continuations): the new incarnation runs them.

use super::addr::{Addr, WeakAddr};
use super::cell::{self, ChildOps, Notify};
use super::{Actor, Allocation, Cause, Context, Receive};
use crate::core::{ActorId, Event, ExecRef, ExitReason, Status};
use crate::runtime::lock;
use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// Which children a supervisor restarts when one of them is to be restarted (Erlang's
/// strategies).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Strategy {
    /// Only the child that ended.
    OneForOne,
    /// Every child (the others end first: `stopped` hook, state dropped).
    OneForAll,
    /// The child that ended and every child supervised after it.
    RestForOne,
}

/// When a child is restarted (Erlang's restart types).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Restart {
    /// Always, however it ended: a panic, a terminal [`Allocation`], [`Context::stop`], a
    /// poison pill. (To end a permanent child for good, end its supervisor.)
    Permanent,
    /// Only after an abnormal end ([`ExitReason::is_abnormal`]: a panic, a failed link, a
    /// supervisor's escalation, the loss of a remote node).
    Transient,
    /// Never; a `Temporary` sibling is not restarted by `OneForAll` or `RestForOne` either
    /// (it ends).
    Temporary,
}

/// A supervisor: an actor that restarts its children (added with [`Addr::supervise`]) in
/// place when they end, by its [`Strategy`] and each child's [`Restart`] type.
///
/// **Restart intensity.** If more than `max_restarts` restarts happen within `period`
/// (default: 1 in 5 seconds, as Erlang's), the supervisor gives up: it ends with
/// [`ExitReason::Escalated`]. Supervised itself ([`Addr::supervise_supervisor`]), it is then
/// restarted by its own supervisor, and its new incarnation restarts all its children; at the
/// top of a tree, its children end (reason [`ExitReason::Shutdown`]) and its monitors and links
/// hear `Escalated`.
///
/// **Ending a tree.** Ending a supervisor (a poison pill, or graceful shutdown) ends all its
/// children. A graceful [`crate::ActorSystem::shutdown`] restarts nothing: a child it finds
/// between two incarnations ends for good, and the mail that waited for its restart becomes
/// dead letters; a child supervised before the shutdown but not started yet does start, and
/// gets its mail, as any actor does.
/// [`crate::ActorSystem::stop`] waits for every actor, so it returns only once the supervisors
/// are ended.
///
/// **Monitors and links** of a child hear of it only when it ends for good, not at each
/// restart: its address stays valid across restarts. The monitors a child sets itself
/// ([`Context::monitor`]) go with the incarnation that set them (a restarted child sets its
/// own again, in `started`); its links stay.
///
/// ```
/// use actorium::{Actor, ActorSystem, Allocation, Ask, Context, Receive, Restart, Strategy,
///                Supervisor};
///
/// #[derive(Default)]
/// struct Parser;
/// impl Actor for Parser {}
/// impl Receive<Ask<String, u32>> for Parser {
///     fn receive(&mut self, q: Ask<String, u32>, _: &mut Context<'_, Self>) -> Allocation {
///         let n: u32 = q.msg.parse().expect("not a number"); // a bad request panics
///         q.reply.send(n).ok();
///         Allocation::Nodelete
///     }
/// }
///
/// let system = ActorSystem::new()?;
/// let sup = system.spawn(Supervisor::new(Strategy::OneForOne).intensity(3, std::time::Duration::from_secs(5)));
/// let parser = sup.supervise(Restart::Permanent, Parser::default).unwrap();
/// assert!(parser.ask("x".to_string()).unwrap().wait().is_err()); // it panicked...
/// assert_eq!(parser.ask("7".to_string()).unwrap().wait(), Ok(7)); // ...and was restarted
/// system.shutdown(); // ends the supervisor and its children
/// # Ok::<(), actorium::ConfigError>(())
/// ```
pub struct Supervisor {
    core: Arc<Core>,
    /// When this incarnation restarted children, oldest first (only those within `period`).
    restarts: VecDeque<Instant>,
    /// Notices about children not adopted yet (a child can fail before its `Adopt` arrives).
    orphans: Vec<ChildExit>,
}

/// What every incarnation of a supervisor shares: its settings and its children.
struct Core {
    strategy: Strategy,
    max_restarts: u32,
    period: Duration,
    children: Mutex<Vec<Child>>,
    /// How many incarnations have started (a restarted supervisor restarts its children).
    incarnations: AtomicU64,
    /// The system's executor, set when the first incarnation starts: where the children's
    /// ends are reported when the supervisor ends for good (the cell holds it as long).
    exec: OnceLock<ExecRef>,
}

struct Child {
    id: u64,
    restart: Restart,
    /// The incarnation last asked for: notices about older ones are stale.
    requested: u64,
    ops: Arc<dyn ChildOps>,
    type_name: &'static str,
}

impl Child {
    /// The child's actor id (its cell: what the operations are implemented on).
    fn actor(&self) -> ActorId {
        ActorId::of(Arc::as_ptr(&self.ops).cast())
    }
}

impl Supervisor {
    /// A supervisor with `strategy`, Erlang's default intensity (1 restart in 5 seconds) and
    /// no children yet.
    pub fn new(strategy: Strategy) -> Self {
        Self {
            core: Arc::new(Core {
                strategy,
                max_restarts: 1,
                period: Duration::from_secs(5),
                children: Mutex::new(Vec::new()),
                incarnations: AtomicU64::new(0),
                exec: OnceLock::new(),
            }),
            restarts: VecDeque::new(),
            orphans: Vec::new(),
        }
    }

    /// Gives up once more than `max_restarts` restarts happen within `period` (0 restarts:
    /// the first end that calls for a restart gives up).
    ///
    /// # Panics
    /// If `period` is zero (as Erlang requires a positive period), or children were added.
    pub fn intensity(mut self, max_restarts: u32, period: Duration) -> Self {
        assert!(
            !period.is_zero(),
            "Supervisor::intensity: the period must be positive (Erlang's default is 1 restart in 5 s)"
        );
        let core = Arc::get_mut(&mut self.core)
            .expect("Supervisor::intensity is set before the supervisor is spawned");
        core.max_restarts = max_restarts;
        core.period = period;
        self
    }

    /// Another incarnation of this supervisor (same settings and children), for a parent's
    /// factory.
    fn incarnation(&self) -> Self {
        Self {
            core: self.core.clone(),
            restarts: VecDeque::new(),
            orphans: Vec::new(),
        }
    }

    fn children(&self) -> MutexGuard<'_, Vec<Child>> {
        lock(&self.core.children)
    }
}

impl fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Supervisor")
            .field("strategy", &self.core.strategy)
            .field("max_restarts", &self.core.max_restarts)
            .field("period", &self.core.period)
            .field("children", &self.children().len())
            .finish()
    }
}

impl Drop for Core {
    /// The last incarnation is gone (the supervisor ended for good): its children end too.
    fn drop(&mut self) {
        let children = std::mem::take(self.children.get_mut().unwrap_or_else(|e| e.into_inner()));
        for c in children {
            c.ops.settle(Status::Deleted, ExitReason::Shutdown);
            if let Some(exec) = self.exec.get() {
                exec.shared().report(&Event::ChildEnded {
                    child: c.type_name,
                    id: c.actor(),
                    reason: &ExitReason::Shutdown,
                });
            }
        }
    }
}

impl Actor for Supervisor {
    fn started(&mut self, ctx: &mut Context<'_, Self>) {
        let _ = self.core.exec.set(ctx.cell.header.exec.clone());
        if self.core.incarnations.fetch_add(1, Ordering::Relaxed) > 0 {
            // Restarted by its own supervisor: every child starts afresh.
            let mut ended = Vec::new();
            let mut children = self.children();
            children.retain_mut(|c| {
                if c.restart == Restart::Temporary {
                    c.ops.settle(Status::Deleted, ExitReason::Shutdown);
                    ended.push((c.type_name, c.actor()));
                    return false;
                }
                c.requested += 1;
                c.ops.restart(c.requested, ExitReason::Shutdown)
            });
            drop(children);
            for (child, id) in ended {
                let reason = &ExitReason::Shutdown;
                report(ctx, Event::ChildEnded { child, id, reason });
            }
        }
    }
}

/// A child is added (sent by the child's first envelope, so before any notice about it). If
/// it is dropped unhandled (the supervisor ended meanwhile), the child ends.
struct Adopt(Option<Child>);

impl Drop for Adopt {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            c.ops.settle(Status::Deleted, ExitReason::Shutdown);
        }
    }
}

impl Receive<Adopt> for Supervisor {
    fn receive(&mut self, mut a: Adopt, ctx: &mut Context<'_, Self>) -> Allocation {
        let Some(c) = a.0.take() else {
            return Allocation::Nodelete;
        };
        let id = c.id;
        self.children().push(c);
        match self.orphans.iter().position(|n| n.id == id) {
            Some(i) => {
                let n = self.orphans.swap_remove(i);
                self.exited(n, ctx)
            }
            None => Allocation::Nodelete,
        }
    }
}

/// A child's incarnation ended. If it is dropped unhandled (the supervisor ended meanwhile),
/// the child ends for good.
struct ChildExit {
    id: u64,
    generation: u64,
    status: Status,
    reason: ExitReason,
    child: Option<Arc<dyn ChildOps>>,
}

impl ChildExit {
    /// Handled: dropping it does nothing.
    fn defuse(&mut self) {
        self.child = None;
    }
}

impl Drop for ChildExit {
    fn drop(&mut self) {
        if let Some(c) = self.child.take() {
            c.settle(self.status, self.reason.clone());
        }
    }
}

impl Receive<ChildExit> for Supervisor {
    fn receive(&mut self, n: ChildExit, ctx: &mut Context<'_, Self>) -> Allocation {
        self.exited(n, ctx)
    }
}

impl Supervisor {
    /// A child's incarnation ended: restart it (and siblings, by the strategy), let it end, or
    /// give up.
    fn exited(&mut self, mut n: ChildExit, ctx: &mut Context<'_, Self>) -> Allocation {
        let core = self.core.clone();
        let mut children = lock(&core.children);
        // Unknown: not adopted yet (kept until it is), or removed meanwhile (then it has been
        // told to end already; the notice is dropped with this incarnation).
        let Some(i) = children.iter().position(|c| c.id == n.id) else {
            self.orphans.push(n);
            return Allocation::Nodelete;
        };
        n.defuse();
        if n.generation < children[i].requested {
            // Stale: a restart of this child is on its way already.
            return Allocation::Nodelete;
        }
        let restart = match children[i].restart {
            Restart::Permanent => true,
            Restart::Transient => n.reason.is_abnormal(),
            Restart::Temporary => false,
        };
        if !restart {
            let c = children.remove(i);
            drop(children); // (a hook may call into this supervisor: report without the lock)
            report(
                ctx,
                Event::ChildEnded {
                    child: c.type_name,
                    id: c.actor(),
                    reason: &n.reason,
                },
            );
            c.ops.settle(n.status, n.reason.clone());
            return Allocation::Nodelete;
        }
        let now = Instant::now();
        while self
            .restarts
            .front()
            .is_some_and(|&t| now.duration_since(t) > core.period)
        {
            self.restarts.pop_front();
        }
        self.restarts.push_back(now);
        if self.restarts.len() > core.max_restarts as usize {
            let (child, id) = (children[i].type_name, children[i].actor());
            drop(children);
            report(
                ctx,
                Event::SupervisorGaveUp {
                    child,
                    id,
                    reason: &n.reason,
                    restarts: core.max_restarts,
                    period: core.period,
                },
            );
            ctx.cause = Cause::Escalated;
            return Allocation::Delete;
        }
        let (restarted, restarted_id) = (children[i].type_name, children[i].actor());
        let range = match core.strategy {
            Strategy::OneForOne => i..i + 1,
            Strategy::OneForAll => 0..children.len(),
            Strategy::RestForOne => i..children.len(),
        };
        // In order of supervision; a temporary sibling ends instead, and a child that has
        // ended for good meanwhile is forgotten.
        let (mut j, mut end, mut failed) = (range.start, range.end, i);
        let mut ended = Vec::new();
        while j < end {
            let c = &mut children[j];
            let keep = if j != failed && c.restart == Restart::Temporary {
                c.ops.settle(Status::Deleted, ExitReason::Shutdown);
                ended.push((c.type_name, c.actor()));
                false
            } else {
                c.requested += 1;
                // The failed child hears its own end; a sibling, that the strategy ended it.
                let why = if j == failed {
                    n.reason.clone()
                } else {
                    ExitReason::Shutdown
                };
                c.ops.restart(c.requested, why)
            };
            if keep {
                j += 1;
            } else {
                children.remove(j);
                if j < failed {
                    failed -= 1;
                }
                end -= 1;
            }
        }
        drop(children);
        report(
            ctx,
            Event::ChildRestarted {
                child: restarted,
                id: restarted_id,
                reason: &n.reason,
            },
        );
        for (child, id) in ended {
            let reason = &ExitReason::Shutdown;
            report(ctx, Event::ChildEnded { child, id, reason });
        }
        Allocation::Nodelete
    }
}

fn report(ctx: &Context<'_, Supervisor>, e: Event<'_>) {
    ctx.cell.header.exec.shared().report(&e);
}

/// Numbers children across all supervisors (an id is only compared within one).
static NEXT_CHILD: AtomicU64 = AtomicU64::new(0);

/// A child's way to its supervisor (weak: a child does not keep its supervisor alive).
struct ToSupervisor {
    sup: WeakAddr<Supervisor>,
    id: u64,
}

impl Notify for ToSupervisor {
    fn exited(
        &self,
        child: Arc<dyn ChildOps>,
        generation: u64,
        status: Status,
        reason: ExitReason,
    ) -> bool {
        let Some(sup) = self.sup.upgrade() else {
            return false;
        };
        let n = ChildExit {
            id: self.id,
            generation,
            status,
            reason,
            child: Some(child),
        };
        match sup.send(n) {
            Ok(()) => true,
            Err(super::SendError(mut n)) => {
                n.defuse();
                false
            }
        }
    }
}

/// Why [`Addr::supervise`] started no child: the supervisor has ended, or its system no
/// longer accepts actors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuperviseError;

impl fmt::Display for SuperviseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("no child started: the supervisor has ended, or its system is stopping")
    }
}

impl std::error::Error for SuperviseError {}

impl Addr<Supervisor> {
    /// Starts a child of this supervisor: its first incarnation, and every restarted one, is
    /// built by `factory` on the child's worker, before any message (mail sent meanwhile
    /// waits); a factory that panics is a failure like any other. The address stays valid
    /// across restarts.
    ///
    /// # Errors
    /// [`SuperviseError`] if the supervisor has ended or its system is stopping.
    pub fn supervise<A, F>(&self, restart: Restart, factory: F) -> Result<Addr<A>, SuperviseError>
    where
        A: Actor,
        F: FnMut() -> A + Send + 'static,
    {
        let id = NEXT_CHILD.fetch_add(1, Ordering::Relaxed);
        let notify = Box::new(ToSupervisor {
            sup: self.downgrade(),
            id,
        });
        if !self.is_alive() {
            return Err(SuperviseError);
        }
        let cell = cell::spawn_supervised(&self.cell().header.exec, Box::new(factory), notify)
            .ok_or(SuperviseError)?;
        // Registered first (so whatever the supervisor does to it meets a registered actor),
        // adopted before `supervise` returns (so a later failure of a sibling restarts it too).
        let child = Child {
            id,
            restart,
            requested: 0,
            ops: cell.clone(),
            type_name: std::any::type_name::<A>(),
        };
        // Refused: the supervisor ended meanwhile; dropping the refused `Adopt` ends the child.
        self.send(Adopt(Some(child))).map_err(|_| SuperviseError)?;
        Ok(Addr::from_cell(cell))
    }

    /// Starts `sup` as a child of this supervisor (a supervision tree). When `sup` gives up
    /// (its restart intensity exceeded), this supervisor decides by `restart` and its own
    /// strategy; a restarted `sup` keeps its children and restarts them all.
    ///
    /// # Errors
    /// As [`Self::supervise`].
    pub fn supervise_supervisor(
        &self,
        restart: Restart,
        sup: Supervisor,
    ) -> Result<Addr<Supervisor>, SuperviseError> {
        self.supervise(restart, move || sup.incarnation())
    }
}
