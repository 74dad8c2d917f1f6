//! The actor system: builder, configuration errors, start and stop. The top layer: it chooses
//! the executors, wires them to one another, and owns their shutdown.

use crate::actor::{
    Actor, Addr, Context, ExtraWorkers, JoinHandle, Recipient, SendError, SystemHandle, Timer,
};
use crate::core::Stats;
use crate::core::{ExecRef, Header, Shared, Status};
use crate::executor::actor_centric::policy::Policy;
use crate::executor::actor_centric::{self, PolicyStarter, StartError, Starter};
use crate::executor::forkjoin::Scope;
use crate::executor::mailbox::detached::Detached;
use crate::executor::message_centric::{self, QueueStealing};
use crate::runtime::pool::ResizeError;
use crate::runtime::worker::runs_for;
use std::collections::HashSet;
use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// A deadline far enough to mean "none" (an `Instant` cannot be infinite).
const YEAR: Duration = Duration::from_secs(365 * 24 * 3600);

/// Default message queues per worker (as in the Cforall actor system: Colby Parsons, MMath
/// thesis, Waterloo 2023, where queues are over-sharded by a factor of 16).
pub(crate) const DEFAULT_QUEUES_PER_WORKER: usize = 16;

/// Default for [`ActorSystemBuilder::max_workers`] (or the starting workers, if more).
pub const DEFAULT_MAX_WORKERS: usize = 64;

pub use crate::runtime::pool::MAX_WORKERS;

/// The most message queues a message-centric system may have (`.queues(m)`, or workers times
/// `.queues_per_worker(k)`): its table of queues takes 128 bytes a queue (128 MiB at this
/// limit), allocated when the system is built.
pub(crate) const MAX_QUEUES: usize = 1 << 20;

/// A configuration that [`ActorSystemBuilder::build`] refuses, or a resource it could not get.
#[derive(Debug)]
#[non_exhaustive]
pub enum ConfigError {
    /// `.workers(0)`.
    ZeroWorkers,
    /// `.queues_per_worker(0)`.
    ZeroQueuesPerWorker,
    /// Fewer message queues than workers: some workers would never have work.
    TooFewQueues {
        /// Queues asked for.
        queues: usize,
        /// Workers asked for.
        workers: usize,
    },
    /// `.max_throughput(0)`.
    ZeroMaxThroughput,
    /// `.max_workers(n)` below the starting workers or above [`MAX_WORKERS`].
    BadMaxWorkers {
        /// The maximum asked for.
        max: usize,
        /// The starting workers.
        workers: usize,
    },
    /// `.workers(n)` above [`MAX_WORKERS`].
    TooManyWorkers {
        /// Workers asked for.
        workers: usize,
    },
    /// More message queues than 2^20 (`MAX_QUEUES`) (`.queues(m)`, or workers times
    /// `.queues_per_worker(k)`).
    TooManyQueues {
        /// Queues asked for (saturated at `usize::MAX` if the product overflows).
        queues: usize,
    },
    /// A setting that means nothing on the chosen executor.
    NotForExecutor {
        /// The builder method.
        setting: &'static str,
        /// The executor chosen.
        executor: &'static str,
    },
    /// The scheduling policy refused its settings (the message says what to change).
    Policy(String),
    /// The operating system refused a resource (a thread, an event fd).
    Os(std::io::Error),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::ZeroWorkers => write!(
                f,
                "`workers(0)`: an actor system needs at least one worker thread; pass \
                 `.workers(n)` with n >= 1, or leave it unset to use the machine's available \
                 parallelism"
            ),
            ConfigError::ZeroQueuesPerWorker => write!(
                f,
                "`queues_per_worker(0)`: each worker needs at least one message queue; pass \
                 `.queues_per_worker(k)` with k >= 1 (default {DEFAULT_QUEUES_PER_WORKER})"
            ),
            ConfigError::TooFewQueues { queues, workers } => write!(
                f,
                "`queues({queues})` with `workers({workers})`: fewer message queues than workers \
                 would leave {} worker(s) with no queue to serve; pass `.queues(m)` with \
                 m >= {workers}, or lower `.workers`",
                workers - queues
            ),
            ConfigError::ZeroMaxThroughput => write!(
                f,
                "`max_throughput(0)`: an actor must process at least one message per run; pass \
                 `.max_throughput(n)` with n >= 1, or leave it unset (unlimited, as in CAF)"
            ),
            ConfigError::BadMaxWorkers { max, workers } => write!(
                f,
                "`max_workers({max})` with `workers({workers})`: the most workers a resize may \
                 reach must be at least the starting workers and at most {MAX_WORKERS}; pass \
                 `.max_workers(m)` with {workers} <= m <= {MAX_WORKERS}"
            ),
            ConfigError::TooManyWorkers { workers } => write!(
                f,
                "`workers({workers})`: a pool has at most {MAX_WORKERS} worker threads; pass \
                 `.workers(n)` with n <= {MAX_WORKERS}"
            ),
            ConfigError::TooManyQueues { queues } => write!(
                f,
                "{queues} message queues asked for (`.queues(m)`, or workers times \
                 `.queues_per_worker(k)`): a system has at most {MAX_QUEUES}; lower `.queues` \
                 or `.queues_per_worker` (default {DEFAULT_QUEUES_PER_WORKER} per worker)"
            ),
            ConfigError::NotForExecutor { setting, executor } => {
                let (other, hint) = if *executor == "message-centric" {
                    (
                        "actor-centric",
                        "choose a policy with `.policy(..)` to use it, or remove it",
                    )
                } else {
                    (
                        "message-centric",
                        "remove it, or remove `.policy(..)` to use the message-centric executor",
                    )
                };
                write!(
                    f,
                    "`{setting}` applies to the {other} executor only, but this system uses the \
                     {executor} executor: {hint}"
                )
            }
            ConfigError::Policy(msg) => write!(f, "{msg}"),
            ConfigError::Os(e) => write!(f, "the operating system refused a resource: {e}"),
        }
    }
}

impl std::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConfigError::Os(e) => Some(e),
            _ => None,
        }
    }
}

/// Configures and starts an [`ActorSystem`].
///
/// ```
/// use actorium::{ActorSystem, ConfigError};
/// let system = ActorSystem::builder().workers(2).queues_per_worker(8).stats(true).build()?;
/// assert_eq!(system.queues(), 16);
/// system.stop();
///
/// let err = ActorSystem::builder().workers(0).build().unwrap_err();
/// assert!(err.to_string().contains("at least one worker"));
/// # Ok::<(), ConfigError>(())
/// ```
#[derive(Clone, Default)]
pub struct ActorSystemBuilder {
    workers: Option<usize>,
    queues_per_worker: Option<usize>,
    queues: Option<usize>,
    stats: bool,
    spin: Option<Duration>,
    adaptive_spin: Option<bool>,
    stealing: Option<QueueStealing>,
    policy: Option<Arc<dyn Starter>>,
    max_throughput: Option<usize>,
    max_workers: Option<usize>,
    events: Option<crate::core::events::EventHook>,
    /// Settings changed by [`Self::tune`] (message-centric executor).
    tuning: Option<message_centric::Tuning>,
}

impl fmt::Debug for ActorSystemBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ActorSystemBuilder")
            .field("workers", &self.workers)
            .field("queues_per_worker", &self.queues_per_worker)
            .field("queues", &self.queues)
            .field("stats", &self.stats)
            .field("spin", &self.spin)
            .field("stealing", &self.stealing)
            .field("policy", &self.policy.as_ref().map(|p| p.name()))
            .field("max_throughput", &self.max_throughput)
            .field("max_workers", &self.max_workers)
            .field("on_event", &self.events.is_some())
            .finish()
    }
}

impl ActorSystemBuilder {
    /// Worker threads (default: the machine's available parallelism); at most
    /// [`MAX_WORKERS`].
    pub fn workers(mut self, n: usize) -> Self {
        self.workers = Some(n);
        self
    }

    /// Message queues per worker (default 16; with one worker, one queue in total, as in the
    /// Cforall actor thesis). Ignored if [`Self::queues`] is set.
    pub fn queues_per_worker(mut self, k: usize) -> Self {
        self.queues_per_worker = Some(k);
        self
    }

    /// Total message queues (the Cforall actor thesis's `nrqueues`); at least the number of
    /// workers, and at most 2^20 (so must workers times [`Self::queues_per_worker`] be).
    pub fn queues(mut self, m: usize) -> Self {
        self.queues = Some(m);
        self
    }

    /// Sends the system's [`Event`](crate::Event)s — panics caught in user code, dead letters,
    /// supervisors' decisions — to `hook` (called on the thread where the event happens; it
    /// should be quick, and must not block on the system). Without a hook they go to the
    /// `tracing` crate (default feature `tracing`), or, with that feature off, panics only go to
    /// standard error.
    ///
    /// ```
    /// use actorium::{Actor, ActorSystem, Allocation, Context, Event, Receive};
    /// use std::sync::{Arc, Mutex};
    ///
    /// struct Fragile;
    /// impl Actor for Fragile {}
    /// impl Receive<u8> for Fragile {
    ///     fn receive(&mut self, _: u8, _: &mut Context<'_, Self>) -> Allocation {
    ///         panic!("bad byte")
    ///     }
    /// }
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = seen.clone();
    /// let system = ActorSystem::builder()
    ///     .on_event(move |e| {
    ///         if let Event::Panic { message, .. } = e {
    ///             log.lock().unwrap().push(message.to_string());
    ///         }
    ///     })
    ///     .build()?;
    /// system.spawn(Fragile).send(1).unwrap();
    /// system.stop(); // the panic ended the actor
    /// assert_eq!(*seen.lock().unwrap(), ["bad byte"]);
    /// # Ok::<(), actorium::ConfigError>(())
    /// ```
    pub fn on_event(mut self, hook: impl Fn(&crate::Event<'_>) + Send + Sync + 'static) -> Self {
        self.events = Some(Arc::new(hook));
        self
    }

    /// Count statistics (default off); read them with [`ActorSystem::stats`].
    pub fn stats(mut self, on: bool) -> Self {
        self.stats = on;
        self
    }

    /// Queue stealing between workers of the message-centric executor (default
    /// [`QueueStealing::LongestVictim`]): a worker that passed over its queues twice without
    /// work steals a whole message queue from a victim, so a workload whose busy actors share
    /// one worker's queues still uses every worker. See [`QueueStealing`] for the heuristics.
    /// (Not to be confused with [`crate::policy::WorkStealing`], the actor-centric executor's
    /// scheduling policy, which steals jobs.)
    pub fn queue_stealing(mut self, s: QueueStealing) -> Self {
        self.stealing = Some(s);
        self
    }

    /// Switches to the actor-centric executor (CAF's design: CAF's scheduler manual, the C++ Actor
    /// Framework manual's section "Scheduler") with scheduling policy `policy`:
    /// [`crate::policy::WorkStealing`], [`crate::policy::WorkSharing`], [`crate::policy::Testing`],
    /// or your own [`Policy`]. Without this call the system uses the message-centric executor.
    /// Every actor program runs unchanged on either; the settings `queues`, `queues_per_worker`,
    /// `queue_stealing`, `spin_before_sleep` and `adaptive_spin` apply to the message-centric
    /// executor only, `max_throughput` to the actor-centric one only: `build` refuses them on the
    /// other ([`ConfigError::NotForExecutor`]).
    ///
    /// ```
    /// use actorium::{policy::WorkStealing, ActorSystem};
    /// let system = ActorSystem::builder().policy(WorkStealing::default()).build()?;
    /// system.stop();
    /// # Ok::<(), actorium::ConfigError>(())
    /// ```
    pub fn policy<P: Policy>(mut self, policy: P) -> Self {
        self.policy = Some(Arc::new(PolicyStarter(Arc::new(policy))));
        self
    }

    /// Messages an actor may process per run before it is rescheduled behind other work
    /// (actor-centric executor; default unlimited, as CAF's `scheduler.max-throughput`).
    pub fn max_throughput(mut self, n: usize) -> Self {
        self.max_throughput = Some(n);
        self
    }

    /// The most workers the system may have when resized while running
    /// ([`SystemHandle::add_workers`]; default [`DEFAULT_MAX_WORKERS`], or the starting workers
    /// if more; at most [`MAX_WORKERS`]). The worker table is made this large at start (a few
    /// hundred bytes a row; kernel resources only for rows used). The message-centric executor
    /// also needs a message queue per worker: it runs at most `queues` workers.
    ///
    /// ```
    /// let system = actorium::ActorSystem::builder().workers(2).max_workers(4).build()?;
    /// assert_eq!(system.add_workers(2)?, 4);
    /// let err = system.add_workers(1).unwrap_err();
    /// assert!(err.to_string().contains("at most 4"));
    /// system.stop();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn max_workers(mut self, n: usize) -> Self {
        self.max_workers = Some(n);
        self
    }

    /// The longest a worker with no work spins before sleeping in the kernel (default 100 µs;
    /// message-centric executor). Each worker learns how much of it to use: a spin that finds
    /// work, or a sleep shorter than `d`, restores the full `d`; each sleep longer than `d`
    /// halves it, down to none (a worker woken only after long gaps sleeps at once: less CPU,
    /// and a faster wake-up, since the kernel lets a woken thread that used little CPU run
    /// before its waker). Zero never spins: lowest CPU use, but every hand-off to a sleeping
    /// worker costs a wake-up (about 12 µs on a small VM). See also [`Self::adaptive_spin`].
    pub fn spin_before_sleep(mut self, d: Duration) -> Self {
        self.spin = Some(d);
        self
    }

    /// Whether each worker learns its spin window (default `true`, see
    /// [`Self::spin_before_sleep`]); `false` always spins the full window before sleeping
    /// (as CAF's fixed polling tiers do). Message-centric executor.
    ///
    /// ```
    /// use std::time::Duration;
    /// let system = actorium::ActorSystem::builder()
    ///     .spin_before_sleep(Duration::from_micros(50))
    ///     .adaptive_spin(false)
    ///     .build()?;
    /// system.stop();
    /// # Ok::<(), actorium::ConfigError>(())
    /// ```
    pub fn adaptive_spin(mut self, on: bool) -> Self {
        self.adaptive_spin = Some(on);
        self
    }

    /// Changes one setting of the message-centric executor's placement, stealing or idle spin,
    /// `name=value` (`executor/message_centric/tuning.rs` lists them, with their units and
    /// why each default is what it is). For tests that switch one part of placement off alone
    /// (`affinity=0`, `balance=0`, `batching=0`) and for A/B runs of the benchmark binary
    /// (`--tune`): not a stable interface, and not part of the documented API.
    ///
    /// # Errors
    /// An unknown name or a bad value, said in words with the names known.
    #[doc(hidden)]
    pub fn tune(mut self, setting: &str) -> Result<Self, String> {
        let mut t = self.tuning.take().unwrap_or_default();
        t.set(setting)?;
        self.tuning = Some(t);
        Ok(self)
    }

    /// Refuses settings that mean nothing on the executor chosen.
    fn check_settings(&self) -> Result<(), ConfigError> {
        let refuse = |setting, executor| Err(ConfigError::NotForExecutor { setting, executor });
        if self.policy.is_some() {
            let inverted_only = [
                ("queues", self.queues.is_some()),
                ("queues_per_worker", self.queues_per_worker.is_some()),
                ("queue_stealing", self.stealing.is_some()),
                ("spin_before_sleep", self.spin.is_some()),
                ("adaptive_spin", self.adaptive_spin.is_some()),
                ("tune", self.tuning.is_some()),
            ];
            if let Some((setting, _)) = inverted_only.iter().find(|(_, set)| *set) {
                return refuse(setting, "actor-centric");
            }
        } else if self.max_throughput.is_some() {
            return refuse("max_throughput", "message-centric");
        }
        Ok(())
    }

    fn config(&self) -> Result<(message_centric::Config, bool), ConfigError> {
        let workers = self.workers.unwrap_or_else(|| {
            thread::available_parallelism().map_or(1, |n| n.get().min(MAX_WORKERS))
        });
        if workers == 0 {
            return Err(ConfigError::ZeroWorkers);
        }
        if workers > MAX_WORKERS {
            return Err(ConfigError::TooManyWorkers { workers });
        }
        let queues = match (self.queues, self.queues_per_worker) {
            (Some(m), _) => m,
            (None, Some(0)) => return Err(ConfigError::ZeroQueuesPerWorker),
            (None, Some(k)) => workers.saturating_mul(k),
            (None, None) if workers == 1 => 1,
            (None, None) => workers * DEFAULT_QUEUES_PER_WORKER,
        };
        if queues > MAX_QUEUES {
            return Err(ConfigError::TooManyQueues { queues });
        }
        if queues < workers {
            return Err(ConfigError::TooFewQueues { queues, workers });
        }
        let max_workers = match self.max_workers {
            Some(m) if m < workers || m > MAX_WORKERS => {
                return Err(ConfigError::BadMaxWorkers { max: m, workers })
            }
            Some(m) => m,
            None => workers.max(DEFAULT_MAX_WORKERS),
        };
        let mut tuning = self.tuning.clone().unwrap_or_default();
        if let Some(d) = self.spin {
            tuning.spin = d;
        }
        if let Some(on) = self.adaptive_spin {
            tuning.adaptive_spin = on;
        }
        let cfg = message_centric::Config {
            workers,
            max_workers,
            queues,
            stealing: self.stealing.unwrap_or_default(),
            tuning,
        };
        Ok((cfg, self.stats))
    }

    /// Validates the configuration and starts the worker threads.
    ///
    /// # Errors
    /// [`ConfigError`] naming what to change, or an OS error if threads or event fds could not
    /// be created.
    pub fn build(self) -> Result<ActorSystem, ConfigError> {
        self.check_settings()?;
        let (cfg, stats) = self.config()?;
        let shared = Arc::new(Shared::new(cfg.workers, stats).with_event_hook(self.events.clone()));
        let pooled: ExecRef = match &self.policy {
            Some(starter) => {
                if self.max_throughput == Some(0) {
                    return Err(ConfigError::ZeroMaxThroughput);
                }
                starter.validate().map_err(ConfigError::Policy)?;
                let ccfg = actor_centric::Config {
                    workers: cfg.workers,
                    max_workers: cfg.max_workers,
                    max_throughput: self.max_throughput.unwrap_or(usize::MAX),
                };
                starter.start(&ccfg, shared.clone()).map_err(|e| match e {
                    StartError::Os(e) => ConfigError::Os(e),
                    StartError::Policy(m) => ConfigError::Policy(m),
                })?
            }
            None => message_centric::Executor::start_ref(&cfg, shared.clone())
                .map_err(ConfigError::Os)?,
        };
        // Each executor refers to the other until shutdown's cleanup breaks the cycle.
        let detached = ExecRef::from_arc(Arc::new(Detached::new(shared, pooled.clone())));
        pooled.attach_detached(detached.clone());
        Ok(ActorSystem {
            handle: SystemHandle::from_executor(pooled),
            detached,
            done: false,
        })
    }
}

/// A running actor system: worker threads executing behaviours (the Cforall actor thesis's
/// `start_actor_system` / `stop_actor_system`).
///
/// Several systems may run at once or in turn in one process; actors of different systems can
/// message each other.
///
/// **Dropping** a system without calling [`stop`](Self::stop) shuts it down at once instead of
/// waiting for actors: each worker finishes the behaviour it is running (behaviours are never
/// interrupted) and at most a few dozen more (it checks every 64), then exits; the threads are
/// joined; actors still alive are stopped (their `stopped` hook is *not* run), their states and
/// all queued messages are dropped, and every later send returns [`crate::SendError`]. Nothing
/// is leaked and no thread outlives the drop, but a behaviour that never returns would block it
/// (as it would block `stop`). Two exceptions, both reported on standard error: dropping a
/// system from inside one of its own behaviours is allowed, and the shutdown then completes on
/// a helper thread once that behaviour returns (if no thread can be started for it, the system
/// is left running); and when a scheduling policy has failed, worker threads that do not exit
/// within 2 s are left behind, and the system's actors and resources with them (leaked).
pub struct ActorSystem {
    handle: SystemHandle,
    /// The executor of the system's detached actors.
    detached: ExecRef,
    /// Stopped (or shut down): nothing left for `Drop`.
    done: bool,
}

impl fmt::Debug for ActorSystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ActorSystem")
            .field("workers", &self.workers())
            .field("queues", &self.queues())
            .field("live_actors", &self.handle.live_actors())
            .finish()
    }
}

/// What a system does while it runs, as on its [`SystemHandle`] (which threads and
/// behaviours keep): each method here is that handle's.
impl ActorSystem {
    /// Spawns `actor` ([`SystemHandle::spawn`]).
    pub fn spawn<A: Actor>(&self, actor: A) -> Addr<A> {
        self.handle.spawn(actor)
    }

    /// Spawns an actor whose state is built with its own address ([`SystemHandle::spawn_with`]).
    pub fn spawn_with<A, F>(&self, build: F) -> Addr<A>
    where
        A: Actor,
        F: FnOnce(&mut Context<'_, A>) -> A + Send + 'static,
    {
        self.handle.spawn_with(build)
    }

    /// Spawns `actor`, or gives it back if the system is stopping ([`SystemHandle::try_spawn`]).
    pub fn try_spawn<A: Actor>(&self, actor: A) -> Result<Addr<A>, A> {
        self.handle.try_spawn(actor)
    }

    /// Spawns an actor on a thread of its own ([`SystemHandle::spawn_detached`]).
    pub fn spawn_detached<A: Actor>(&self, actor: A) -> Addr<A> {
        self.handle.spawn_detached(actor)
    }

    /// Spawns `actor` with a handle that waits for its end ([`SystemHandle::spawn_joinable`]).
    pub fn spawn_joinable<A: Actor>(&self, actor: A) -> (Addr<A>, JoinHandle<A>) {
        self.handle.spawn_joinable(actor)
    }

    /// Runs `a` and `b` in parallel on the workers ([`SystemHandle::join`]).
    pub fn join<FA, FB, RA, RB>(&self, a: FA, b: FB) -> (RA, RB)
    where
        FA: FnOnce() -> RA + Send,
        FB: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.handle.join(a, b)
    }

    /// Runs `op` with a fork/join scope on the workers ([`SystemHandle::scope`]).
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.handle.scope(op)
    }

    /// Sends `msg` to `to` after `delay` ([`SystemHandle::send_after`]).
    ///
    /// # Errors
    /// As [`SystemHandle::send_after`].
    pub fn send_after<M: Send + 'static>(
        &self,
        to: impl Into<Recipient<M>>,
        msg: M,
        delay: Duration,
    ) -> Result<Timer, SendError<M>> {
        self.handle.send_after(to, msg, delay)
    }

    /// Sends a clone of `msg` to `to` every `period` ([`SystemHandle::send_interval`]).
    ///
    /// # Errors
    /// As [`SystemHandle::send_interval`].
    ///
    /// # Panics
    /// If `period` is zero.
    pub fn send_interval<M: Clone + Send + 'static>(
        &self,
        to: impl Into<Recipient<M>>,
        msg: M,
        period: Duration,
    ) -> Result<Timer, SendError<M>> {
        self.handle.send_interval(to, msg, period)
    }

    /// Actors spawned and not yet terminal ([`SystemHandle::live_actors`]).
    pub fn live_actors(&self) -> usize {
        self.handle.live_actors()
    }

    /// Worker threads running now ([`SystemHandle::workers`]).
    pub fn workers(&self) -> usize {
        self.handle.workers()
    }

    /// Adds `n` workers while the system runs ([`SystemHandle::add_workers`]).
    ///
    /// # Errors
    /// As [`SystemHandle::add_workers`].
    pub fn add_workers(&self, n: usize) -> Result<usize, ResizeError> {
        self.handle.add_workers(n)
    }

    /// Removes `n` workers while the system runs ([`SystemHandle::remove_workers`]).
    ///
    /// # Errors
    /// As [`SystemHandle::remove_workers`].
    pub fn remove_workers(&self, n: usize) -> Result<usize, ResizeError> {
        self.handle.remove_workers(n)
    }

    /// Adds `n` workers until the returned guard is dropped ([`SystemHandle::extra_workers`]).
    ///
    /// # Errors
    /// As [`SystemHandle::add_workers`].
    pub fn extra_workers(&self, n: usize) -> Result<ExtraWorkers, ResizeError> {
        self.handle.extra_workers(n)
    }
}

impl ActorSystem {
    /// A builder with the defaults.
    pub fn builder() -> ActorSystemBuilder {
        ActorSystemBuilder::default()
    }

    /// Starts a system with the default configuration.
    ///
    /// # Errors
    /// As [`ActorSystemBuilder::build`].
    pub fn new() -> Result<Self, ConfigError> {
        Self::builder().build()
    }

    /// A cloneable spawning handle.
    pub fn handle(&self) -> SystemHandle {
        self.handle.clone()
    }

    fn exec(&self) -> &ExecRef {
        self.handle.executor()
    }

    /// Message queues over all workers (message-centric executor; 0 on the actor-centric
    /// one, where each actor has a mailbox instead).
    #[doc(hidden)]
    // Hidden: a view of the message-centric executor's placement, for the benchmark suite's
    // balance workloads (which load chosen workers, as the Cforall actor thesis's do) and the
    // placement tests; placement may change in any release, so this is no stable interface.
    pub fn queues(&self) -> usize {
        self.exec().queues()
    }

    /// Statistics so far (`None` unless enabled with [`ActorSystemBuilder::stats`]).
    pub fn stats(&self) -> Option<Stats> {
        let shared = self.exec().shared();
        if !shared.stats_on {
            return None;
        }
        let mut s = Stats::default();
        self.exec().add_stats(&mut s);
        s.add(shared.external.values());
        Some(s)
    }

    /// With a caller-driven policy ([`crate::policy::Testing`]): runs the next job — one
    /// message of one actor, or its `started` hook — on the calling thread, and returns
    /// whether there was one. On a system with worker threads it does nothing and returns
    /// `false`: the workers run jobs.
    pub fn run_once(&self) -> bool {
        self.exec().run_once()
    }

    /// With a caller-driven policy: runs jobs until none is ready; returns how many ran
    /// (0 on a system with worker threads).
    pub fn run(&self) -> usize {
        let mut n = 0;
        while self.run_once() {
            n += 1;
        }
        n
    }

    /// Graceful shutdown: asks every live actor to end (a [`crate::DeleteMsg`] queued behind
    /// its mail, so the messages already queued for it are **delivered** first and its
    /// `stopped` hook runs), waits until every actor has ended (actors spawned meanwhile are
    /// asked too), then stops the system as [`Self::stop`] does. Messages sent to an actor
    /// after its stop request are refused ([`crate::SendError`] gives them back) or, if they
    /// were already queued behind it, counted as dead letters. See
    /// [`Self::shutdown_timeout`] to bound the wait.
    ///
    /// ```
    /// use actorium::{Actor, ActorSystem, Allocation, Context, Receive};
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    ///
    /// struct Server(Arc<AtomicUsize>);
    /// impl Actor for Server {
    ///     fn stopped(&mut self) {
    ///         self.0.fetch_add(1, Ordering::SeqCst);
    ///     }
    /// }
    /// impl Receive<u32> for Server {
    ///     fn receive(&mut self, _: u32, _: &mut Context<'_, Self>) -> Allocation {
    ///         Allocation::Nodelete // never ends by itself
    ///     }
    /// }
    /// let system = ActorSystem::new()?;
    /// let stopped = Arc::new(AtomicUsize::new(0));
    /// for _ in 0..10 {
    ///     system.spawn(Server(stopped.clone())).send(1).unwrap();
    /// }
    /// system.shutdown(); // `stop()` would wait for ever here
    /// assert_eq!(stopped.load(Ordering::SeqCst), 10);
    /// # Ok::<(), actorium::ConfigError>(())
    /// ```
    ///
    /// # Panics
    /// When called from inside one of this system's behaviours (it would wait for itself).
    pub fn shutdown(self) -> Option<Stats> {
        match self.graceful(None) {
            Ok(stats) => stats,
            Err(_) => unreachable!("no deadline"),
        }
    }

    /// [`Self::shutdown`], waiting at most `timeout` for the actors to end. If some have not
    /// ended by then (a behaviour that blocks, a long queue), the system is stopped at once
    /// (as when dropped: the remaining actors' states are dropped, their queued messages are
    /// dead letters, their `stopped` hooks do not run), and the error says which actors they
    /// were.
    ///
    /// # Errors
    /// [`ShutdownTimeout`] naming the actors that had not ended.
    ///
    /// # Panics
    /// When called from inside one of this system's behaviours (it would wait for itself).
    pub fn shutdown_timeout(self, timeout: Duration) -> Result<Option<Stats>, ShutdownTimeout> {
        let deadline = Instant::now().checked_add(timeout);
        self.graceful(Some(deadline.unwrap_or_else(|| Instant::now() + YEAR)))
    }

    fn graceful(self, deadline: Option<Instant>) -> Result<Option<Stats>, ShutdownTimeout> {
        let exec = self.exec().clone();
        let shared = exec.shared();
        let life = &shared.life;
        assert!(
            !runs_for(shared.id()),
            "`ActorSystem::shutdown` was called from inside a behaviour of that system (or on \
             one of its threads): it would wait for itself to finish (a deadlock). Shut it \
             down from a thread outside the system; to end the system from inside, drop it"
        );
        // From now on no ended actor comes back: each one asked to end stays ended.
        shared.draining.store(true, Ordering::SeqCst);
        // Every actor asked so far, held (a counted reference) until the end, so that no cell
        // is freed and its address reused by a new actor while we tell them apart. Released
        // by the guard on every path, a panic included.
        let mut asked: HashSet<usize> = HashSet::new();
        let mut held = Held(Vec::new());
        let mut told = 0;
        loop {
            // Under each list's lock: note (and hold) the actors not asked yet.
            let mut visit = |h: &Header| {
                if asked.insert(h as *const Header as usize) {
                    h.retain();
                    held.0.push(h);
                }
            };
            exec.for_each_queued_actor(&mut visit);
            shared.registry.for_each(|link| {
                // SAFETY: links on the registry are the `link` field of live cells' headers,
                // kept alive while listed (the registry's lock is held during the call).
                let hdr = unsafe { Header::from_link(link) };
                visit(hdr)
            });
            // Outside the locks (a send takes them): the stop requests.
            for &h in &held.0[told..] {
                // SAFETY: held (retained) above.
                unsafe { (*h).request_stop() };
            }
            told = held.0.len();
            if life.live() == 0 || life.aborting() {
                break;
            }
            if let Some(d) = deadline {
                let now = Instant::now();
                if now >= d {
                    let mut names: Vec<&'static str> = held
                        .0
                        .iter()
                        // SAFETY: held (retained) above.
                        .map(|&h| unsafe { &*h })
                        .filter(|h| h.status() == Status::Alive)
                        .map(|h| (h.type_name_fn())())
                        .collect();
                    names.sort_unstable();
                    let remaining = life.live();
                    drop(held);
                    drop(self); // stop now
                    return Err(ShutdownTimeout {
                        remaining,
                        actors: names,
                    });
                }
            }
            if exec.driven_by_caller() && exec.run_once() {
                while exec.run_once() {}
                continue;
            }
            let wait = deadline.map_or(Duration::from_millis(10), |d| {
                d.saturating_duration_since(Instant::now())
                    .min(Duration::from_millis(10))
            });
            life.wait_a_little(wait);
        }
        drop(held);
        Ok(self.stop())
    }

    /// Blocks until every actor has reached a terminal status, then drains the queues (dead
    /// letters) and joins every worker thread. Returns the final statistics if enabled.
    /// Long-lived actors must be told to end first (a poison pill such as
    /// [`crate::DeleteMsg`]); [`Self::shutdown`] does that for every actor, and
    /// [`Self::shutdown_timeout`] bounds the wait. Dropping the system stops it at once.
    ///
    /// If the system failed meanwhile (a scheduling policy panicked where it may have lost a
    /// job; reported on standard error), it shuts down as if dropped, and `stop` returns.
    ///
    /// # Panics
    /// When called from inside one of this system's behaviours (it would wait for itself).
    pub fn stop(mut self) -> Option<Stats> {
        let exec = self.exec().clone();
        let life = &exec.shared().life;
        assert!(
            !runs_for(exec.shared().id()),
            "`ActorSystem::stop` was called from inside a behaviour of that system (or on one \
             of its threads): it would wait for itself to finish (a deadlock). Stop it from a \
             thread outside the system; to end the system from inside, drop it instead"
        );
        let settled = || life.live() == 0 || life.aborting();
        exec.wait_until(&mut { settled });
        self.begin_shutdown(true);
        // An actor spawned (from a handle on another thread) between the wait and the close
        // is counted in `live` by now: wait for it too, then let the workers see `live == 0`.
        exec.wait_until(&mut { settled });
        let drain = !life.aborting();
        shutdown(&exec, &self.detached, drain);
        self.done = true;
        self.stats()
    }

    fn begin_shutdown(&self, drain: bool) {
        self.exec().shared().close(drain);
        self.exec().begin_shutdown(drain);
        self.detached.begin_shutdown(drain);
    }
}

/// Counted references to actors' cells (taken with `Header::retain`), released on drop.
struct Held(Vec<*const Header>);

impl Drop for Held {
    fn drop(&mut self) {
        for h in self.0.drain(..) {
            // SAFETY: each was retained once by `graceful` and is released once here.
            unsafe { (*h).drop_ref() };
        }
    }
}

/// A graceful shutdown that gave up ([`ActorSystem::shutdown_timeout`]): these actors had
/// not ended in time (the system was then stopped at once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShutdownTimeout {
    /// Actors still alive when the time ran out (those started during the shutdown included).
    pub remaining: usize,
    /// The type names of the live actors known to the shutdown, sorted.
    pub actors: Vec<&'static str>,
}

impl fmt::Display for ShutdownTimeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "graceful shutdown timed out with {} actor(s) still alive",
            self.remaining
        )?;
        let mut i = 0;
        let mut sep = ": ";
        while i < self.actors.len() {
            let n = self.actors[i..]
                .iter()
                .take_while(|a| **a == self.actors[i])
                .count();
            write!(f, "{sep}{n} x `{}`", self.actors[i])?;
            sep = ", ";
            i += n;
        }
        f.write_str("; they were stopped at once (their stopped hooks did not run)")
    }
}

impl std::error::Error for ShutdownTimeout {}

/// Ends the threads of both executors, then cleans up: stops live actors, disposes of queued
/// envelopes, releases references and kernel resources.
fn shutdown(pooled: &ExecRef, detached: &ExecRef, drain: bool) {
    // No timer fires from now on; the pending ones (and their messages) are dropped.
    pooled.shared().timers.stop();
    pooled.join_threads(drain);
    detached.join_threads(drain);
    pooled.cleanup();
    detached.cleanup();
    // A hook that holds an address would otherwise keep the system's executors alive.
    pooled.shared().drop_event_hook();
}

impl Drop for ActorSystem {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        self.begin_shutdown(false);
        let (pooled, detached) = (self.exec().clone(), self.detached.clone());
        if runs_for(pooled.shared().id()) {
            // Dropped from inside one of its behaviours: this thread must return to its loop
            // (and see the abort) before it can be joined, so a helper thread finishes.
            let helper = thread::Builder::new()
                .name("actorium-shutdown".into())
                .spawn(move || shutdown(&pooled, &detached, false));
            if let Err(e) = helper {
                eprintln!("actorium: cannot start the shutdown thread: {e}");
            }
        } else {
            shutdown(&pooled, &detached, false);
        }
    }
}
