//! Building a system: the builder's settings, their validation, and the errors that name what
//! to change.

use super::ActorSystem;
use crate::core::{ExecRef, Shared};
use crate::executor::actor_centric::policy::Policy;
use crate::executor::actor_centric::{self, PolicyStarter, StartError, Starter};
use crate::executor::mailbox::detached::Detached;
use crate::executor::message_centric::{self, QueueStealing};
use crate::runtime::compaction::Mode;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

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
    compaction: Option<bool>,
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
            .field("compaction", &self.compaction)
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
    /// ([`crate::SystemHandle::add_workers`]; default [`DEFAULT_MAX_WORKERS`], or the starting workers
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

    /// Whether the number of active workers follows the load (default `true` on the
    /// message-centric executor). [`Self::workers`] is then the most that run: while the
    /// work would fit on fewer of them (a conversation, a ring, a sparse load) the others are
    /// deactivated, their threads parked, and each message is handed over within one worker
    /// instead of waking another; when the active workers are saturated and work waits, they
    /// double at once. `false` keeps every worker active, as in a system tuned by hand or
    /// measured for its scaling; [`ActorSystem::stats`](crate::ActorSystem::stats) says how
    /// many were active over time. The actor-centric executor has no compaction (its
    /// policies keep their own idle workers): `true` with [`Self::policy`] is refused.
    ///
    /// ```
    /// let system = actorium::ActorSystem::builder().workers(4).compaction(false).build()?;
    /// assert_eq!(system.active_workers(), 4);
    /// system.stop();
    /// # Ok::<(), actorium::ConfigError>(())
    /// ```
    pub fn compaction(mut self, on: bool) -> Self {
        self.compaction = Some(on);
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
            let message_centric_only = [
                ("queues", self.queues.is_some()),
                ("queues_per_worker", self.queues_per_worker.is_some()),
                ("queue_stealing", self.stealing.is_some()),
                ("spin_before_sleep", self.spin.is_some()),
                ("adaptive_spin", self.adaptive_spin.is_some()),
                ("tune", self.tuning.is_some()),
                ("compaction", self.compaction == Some(true)),
            ];
            if let Some((setting, _)) = message_centric_only.iter().find(|(_, set)| *set) {
                return refuse(setting, "actor-centric");
            }
        } else if self.max_throughput.is_some() {
            return refuse("max_throughput", "message-centric");
        }
        Ok(())
    }

    fn config(&self) -> Result<(message_centric::Config, bool), ConfigError> {
        let workers = self
            .workers
            .unwrap_or_else(|| crate::runtime::compaction::available_cpus().min(MAX_WORKERS));
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
        let compaction = match (self.compaction.unwrap_or(true), tuning.compaction_chaos) {
            (false, _) => Mode::Off,
            (true, false) => Mode::On,
            (true, true) => Mode::Chaos,
        };
        let cfg = message_centric::Config {
            workers,
            max_workers,
            queues,
            stealing: self.stealing.unwrap_or_default(),
            tuning,
            compaction,
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
        Ok(ActorSystem::started(pooled, detached))
    }
}
