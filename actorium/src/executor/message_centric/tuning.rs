//! Every setting of the message-centric executor's placement, stealing and idle spin, in one
//! place, with one line of rationale each. The defaults are what the executor runs with; a
//! test or an A/B run changes one with [`Tuning::set`] (reached from
//! `ActorSystemBuilder::tune`, a hidden option, and from the benchmark binary's `--tune`), so
//! that comparing two settings needs one build. What each rule is for: `README.md` here,
//! "Placement"; what each value was measured against: `docs/DESIGN.md`.
//!
//! The three switches turn a part of placement off alone; each part's hooks read its own.

use std::time::Duration;

/// The message-centric executor's settings (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tuning {
    // --- Switches ---
    /// Affinity (rules 1, 2, 5): children next to their parent, moves of actors that talk,
    /// runs of spawns from outside. Off: the round-robin tickets of the Cforall actor system
    /// (Colby Parsons, MMath thesis, Waterloo 2023), and no move.
    pub(crate) affinity: bool,
    /// Balance beyond the thesis's stealing (rules 3, 4, 6, and the thresholds below). Off: a
    /// thief takes any queue with mail, and nothing is rescued or split.
    pub(crate) balance: bool,
    /// Batching (rule 7 and the outbox). Off: no queue is held off and every send takes its
    /// queue's lock.
    pub(crate) batching: bool,

    // --- Stealing ---
    /// A worker idle this long (and two passes) tries to steal: on a 2-vCPU VM two passes
    /// take under a microsecond, and steals in such gaps bounce queues between cores.
    pub(crate) steal_after: Duration,
    /// Fewest envelopes that make a queue worth stealing: one in-flight message of a
    /// conversation is better left where its partner runs.
    pub(crate) min_steal: usize,
    /// A pass wakes an idle thief only when two of its queues had this many envelopes: waking
    /// one for a token hopping through queues costs a system call and finds nothing.
    pub(crate) wake_thief_backlog: usize,

    // --- Balance: rescues (rule 3) and splits (rule 4) ---
    /// One behaviour this long makes its worker stuck (a few wake-ups' worth, ~12 µs each).
    pub(crate) stuck_after: Duration,
    /// One visit of short behaviours this long makes its worker stuck all the same (1,024 of a
    /// talking group's behaviours take ~50 µs; rescuing from those scatters the group).
    pub(crate) stuck_visit: Duration,
    /// Envelopes a split looks at to choose its movers (bounds the hashing under the lock).
    pub(crate) split_scan: usize,
    /// First time limit of a rescue watch's sleep, doubling after each fruitless one...
    pub(crate) rescue_wait_first: Duration,
    /// ...up to this: the longest mail waits behind a long behaviour while another worker
    /// sleeps.
    pub(crate) rescue_wait_max: Duration,

    // --- Affinity: children (rule 1), moves (rule 2), runs of spawns (rule 5) ---
    /// Counted sends (one per visit, into an empty queue) after which the receiver moves to
    /// its sender; with 4, a pipeline's stages follow each other into fewer queues.
    pub(crate) follow_after: u32,
    /// Spawns in one visit after which further children go to the other workers: a fan-out
    /// keeps its worker busy, and children behind it would each wait for a rescue.
    pub(crate) spread_after: u32,
    /// Consecutive spawns from outside that share a queue: usually a group that will talk.
    pub(crate) spawn_run: usize,
    /// A follower takes the actors of its old queue along when they are at most this many (a
    /// gathered group); a queue of more holds runs of independent actors.
    pub(crate) merge_max: usize,

    // --- Batching: holds (rule 7) and the outbox ---
    /// A held queue is gulped once it holds this many envelopes.
    pub(crate) hold_batch: usize,
    /// The longest a queue is held while it grows (a stream over many queues fills each
    /// slowly).
    pub(crate) hold_max: Duration,
    /// The first interval between looks at a held queue (each look reads the sender's line)...
    pub(crate) hold_look: Duration,
    /// ...doubling up to this, about one wake-up.
    pub(crate) hold_look_max: Duration,
    /// A held queue that has not grown for this long is gulped: its sender stopped (longer
    /// than one look, so that a queue filled every microsecond is not taken for stalled).
    pub(crate) hold_stall: Duration,
    /// A queue whose last this many visits handed nothing off is a sink, held after any visit
    /// that found mail gathered: amortizes what a hold can cost a hub that replies later.
    pub(crate) sink_visits: u8,
    /// A behaviour's send that leaves this many envelopes in another worker's queue pins it:
    /// further sends there wait in the outbox (mail behind a backlog waits anyway).
    pub(crate) outbox_backlog: usize,
    /// The outbox's envelopes for one queue are queued as soon as they are this many: a
    /// behaviour that floods a queue feeds it as it goes.
    pub(crate) outbox_flush: usize,

    // --- Idle spin ---
    /// How long an idle worker spins before it sleeps (a wake-up costs ~12 µs here, and work
    /// usually comes back sooner); `ActorSystemBuilder::spin_before_sleep` sets it.
    pub(crate) spin: Duration,
    /// Whether that window is learned from what spinning bought lately, down to none
    /// (`runtime/idle/spin_budget.rs`); `ActorSystemBuilder::adaptive_spin` sets it.
    pub(crate) adaptive_spin: bool,

    // --- The machine ---
    /// The CPUs placement and compaction assume (`None`: `std::thread::available_parallelism`,
    /// which counts a container's quota): spawns from outside are dealt over as many
    /// workers' queues (rule 5), fork/join tasks activate as many workers. Tests that look at
    /// placement pin it, so that a 1-CPU host lays actors out as a 2-CPU one.
    pub(crate) cpus: Option<usize>,

    // --- Tests ---
    /// Compaction deactivates or activates a worker at random every window, whatever the
    /// load (`runtime/compaction.rs`, `Mode::Chaos`): the delivery tests run under it, so
    /// the hand-overs are exercised thousands of times a second.
    pub(crate) compaction_chaos: bool,
}

impl Default for Tuning {
    fn default() -> Self {
        Self {
            affinity: true,
            balance: true,
            batching: true,
            steal_after: Duration::from_micros(5),
            min_steal: 4,
            wake_thief_backlog: 16,
            stuck_after: Duration::from_micros(50),
            stuck_visit: Duration::from_millis(1),
            split_scan: 4 * super::VISIT_BUDGET as usize,
            rescue_wait_first: Duration::from_micros(100),
            rescue_wait_max: Duration::from_millis(1),
            follow_after: 8,
            spread_after: 8,
            spawn_run: 64,
            merge_max: 32,
            hold_batch: 256,
            hold_max: Duration::from_micros(200),
            hold_look: Duration::from_nanos(250),
            hold_look_max: Duration::from_micros(10),
            hold_stall: Duration::from_micros(2),
            sink_visits: 16,
            outbox_backlog: 32,
            outbox_flush: 64,
            spin: Duration::from_micros(100),
            adaptive_spin: true,
            cpus: None,
            compaction_chaos: false,
        }
    }
}

/// The settings [`Tuning::set`] knows, with their units (durations in microseconds, or
/// nanoseconds where the name says so; switches 0 or 1).
pub(crate) const SETTINGS: &[&str] = &[
    "affinity",
    "balance",
    "batching",
    "steal_after_us",
    "min_steal",
    "wake_thief_backlog",
    "stuck_after_us",
    "stuck_visit_us",
    "split_scan",
    "rescue_wait_first_us",
    "rescue_wait_max_us",
    "follow_after",
    "spread_after",
    "spawn_run",
    "merge_max",
    "hold_batch",
    "hold_max_us",
    "hold_look_ns",
    "hold_look_max_us",
    "hold_stall_us",
    "sink_visits",
    "outbox_backlog",
    "outbox_flush",
    "spin_us",
    "adaptive_spin",
    "cpus",
    "compaction_chaos",
];

impl Tuning {
    /// Sets one setting from `name=value` (a name of [`SETTINGS`]). The error says what is
    /// wrong and lists the names.
    pub(crate) fn set(&mut self, setting: &str) -> Result<(), String> {
        let (name, value) = setting
            .split_once('=')
            .ok_or_else(|| format!("`{setting}`: expected name=value"))?;
        let v: u64 = value
            .trim()
            .parse()
            .map_err(|_| format!("`{setting}`: the value is not a non-negative integer"))?;
        let flag = |v: u64| match v {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(format!("`{setting}`: a switch is 0 or 1")),
        };
        let us = Duration::from_micros;
        let at_least_1 = |v: u64| {
            if v == 0 {
                Err(format!("`{setting}`: must be at least 1"))
            } else {
                Ok(v)
            }
        };
        match name.trim() {
            "affinity" => self.affinity = flag(v)?,
            "balance" => self.balance = flag(v)?,
            "batching" => self.batching = flag(v)?,
            "steal_after_us" => self.steal_after = us(v),
            "min_steal" => self.min_steal = at_least_1(v)? as usize,
            "wake_thief_backlog" => self.wake_thief_backlog = v as usize,
            "stuck_after_us" => self.stuck_after = us(v),
            "stuck_visit_us" => self.stuck_visit = us(v),
            "split_scan" => self.split_scan = at_least_1(v)? as usize,
            "rescue_wait_first_us" => self.rescue_wait_first = us(v),
            "rescue_wait_max_us" => self.rescue_wait_max = us(v),
            "follow_after" => self.follow_after = at_least_1(v)?.min(u64::from(u32::MAX)) as u32,
            "spread_after" => self.spread_after = v.min(u64::from(u32::MAX)) as u32,
            "spawn_run" => self.spawn_run = at_least_1(v)? as usize,
            "merge_max" => self.merge_max = v as usize,
            "hold_batch" => self.hold_batch = at_least_1(v)? as usize,
            "hold_max_us" => self.hold_max = us(v),
            "hold_look_ns" => self.hold_look = Duration::from_nanos(v),
            "hold_look_max_us" => self.hold_look_max = us(v),
            "hold_stall_us" => self.hold_stall = us(v),
            "sink_visits" => self.sink_visits = v.min(u64::from(u8::MAX)) as u8,
            "outbox_backlog" => self.outbox_backlog = at_least_1(v)? as usize,
            "outbox_flush" => self.outbox_flush = at_least_1(v)? as usize,
            "spin_us" => self.spin = us(v),
            "adaptive_spin" => self.adaptive_spin = flag(v)?,
            "cpus" => self.cpus = Some(at_least_1(v)? as usize),
            "compaction_chaos" => self.compaction_chaos = flag(v)?,
            other => {
                return Err(format!(
                    "unknown setting `{other}`; known: {}",
                    SETTINGS.join(", ")
                ))
            }
        }
        Ok(())
    }
}
