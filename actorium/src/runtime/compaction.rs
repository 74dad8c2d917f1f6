//! Compaction of load: run as many workers as pay for themselves (the automatic half of the
//! Cforall runtime's resizing: Thierry Delisle, PhD thesis, Waterloo 2022, chapter
//! "Scheduling in practice"; the signal is Erlang's scheduler compaction, `+scl`: schedulers
//! that keep running out of work are put to sleep, and woken when the active ones are full).
//!
//! **Mechanism** (`pool.rs`): a *deactivated* worker is removed as a resize removes one (it
//! finishes what it runs and hands over what it holds, inside its read section), but its
//! thread parks instead of ending ([`super::worker_table::WorkerTable::park`]); an
//! *activation* makes it active again under the write lock and wakes it. Rows `0..len` are
//! active, `len..limit` deactivated; the user's `workers(n)`, `add_workers` and
//! `remove_workers` set `limit`, the most that run.
//!
//! **Signal.** Each worker keeps its idle time ([`Pace`]: the spells between running out of
//! work and finding some, spinning and sleeping included; running behaviours, visits and
//! fork/join tasks is busy). Every [`WINDOW`] one worker (whichever passes the deadline first,
//! at the start of an idle spell or every few dozen busy turns) runs the controller:
//! - the busy time of the active workers, summed, is the work they did, in workers; when it
//!   would have fitted on one worker fewer at [`SPARE`] of each, for [`LOW_WINDOWS`] windows in
//!   a row, the last active worker is deactivated. A conversation (a ring, a bank's teller and
//!   its accounts, a ping-pong) keeps every worker mostly idle waiting for the others: it ends
//!   on one worker, where its hand-offs cost a function call instead of a wake-up;
//! - when every active worker was busy for nearly all of [`SATURATED_WINDOWS`] windows in a row
//!   ([`SATURATED`]) and the unit
//!   sees work waiting beyond what they run ([`super::worker::Unit::waiting`]), the active
//!   workers double (up to `limit`) at once: a burst reaches every worker within a few windows.
//!   One saturated window is enough when no message ran in it (each active worker is inside
//!   one long behaviour: a factory's spawning loop, a computation), as what waits then waits
//!   for all of it;
//! - an activation is on trial for [`TRIAL_WINDOWS`] windows (the .NET thread pool's hill
//!   climbing, reduced to one step): if the units of work done per second
//!   ([`super::worker::Unit::progress`]: messages run) did not grow by [`GAIN`], the workers
//!   added go back and the next activation waits
//!   [`HOLDOFF_FIRST`] windows, doubling each time up to [`HOLDOFF_MAX`], back to the first
//!   once one pays. A ring whose token now hops between workers, or a fan-in whose added
//!   worker only contends for the same queues, runs slower after the activation than before:
//!   it settles on fewer workers and tries again now and then, while a pipeline or a fan-out
//!   runs faster and keeps them. (A burst that ends during its trial fails it too: bursts
//!   shorter than a trial run on fewer workers, the longer ones on all.)
//!
//! While the system is quiet only the watch (the first dormant row, at timed wake-ups backing
//! off to [`WATCH_MAX`]) runs the controller: it activates nothing then, and its spare rule
//! may deactivate idle workers; with every worker active there is no watch, and nothing runs.
//! It never blocks a worker: it and the resize it makes are tried
//! with `try_lock`, and skipped while a user's resize or a shutdown holds the resize mutex.

use super::worker::Unit;
use super::worker_table::WorkerTable;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often the controller looks: long enough to span many behaviours and hand-offs (a
/// wake-up is 5–40 µs), short enough that a burst spreads within a few milliseconds.
pub(crate) const WINDOW: Duration = Duration::from_millis(1);

/// A worker idle for less than this share of a window was saturated.
const SATURATED: f64 = 0.9;

/// Saturated windows in a row before an activation: their rate of work is what the active
/// workers can do, against which the activation is judged (one window may be a phase that
/// ends: `main` spawning, a burst's first messages).
const SATURATED_WINDOWS: u32 = 2;

/// Deactivate when the active workers' busy time would fit on one fewer at this share each
/// (below 1: room for the hand-offs the remaining workers take over, and for noise).
const SPARE: f64 = 0.7;

/// Windows in a row with room to spare before a deactivation (hysteresis: a short lull, such as
/// `main` spawning the next round, does not shrink a system that is about to be busy).
const LOW_WINDOWS: u32 = 4;

/// Windows after an activation (and the one it happened in) over which it is judged.
const TRIAL_WINDOWS: u32 = 4;

/// An activation pays when the work done per second grows by this factor at least (an added
/// worker must add a tenth; noise between windows is a few percent).
const GAIN: f64 = 1.1;

/// The wait before the next activation after one that did not pay, in windows ...
const HOLDOFF_FIRST: u64 = 8;

/// ... doubling up to this many (about a second: a workload whose extra workers never pay
/// tries again at most once a second).
const HOLDOFF_MAX: u64 = 1024;

/// The first time limit of the park of the worker an activation would take first: it runs the
/// controller when it passes (the active workers may all be inside long behaviours, with mail
/// waiting behind them), one window, so that such mail waits a few windows at most ...
const WATCH_FIRST: Duration = Duration::from_millis(1);

/// ... doubling up to this while every active worker idles (at its looks; past [`QUIET`],
/// throughout): a wake-up costs about 0.1 ms of CPU on a VM, so once a second would be
/// 0.01 % of a core for an idle system ...
const WATCH_MAX: Duration = Duration::from_secs(4);

/// ... and back to the first when an active worker ends an idle spell this long (the watch
/// may have backed off far; what starts now may be a long behaviour with mail behind it).
/// Past this, the watch backs off only while every active worker stays idle throughout
/// ([`Watch::next`]): then the spell that ends is at least this long.
const QUIET: Duration = Duration::from_millis(100);

/// The watch's time limit (the first dormant row's park), and when it last looked.
#[derive(Debug)]
pub(crate) struct Watch {
    limit: Duration,
    /// Nanoseconds since the table's epoch (0: not yet).
    at: u64,
}

impl Watch {
    pub(crate) fn new() -> Self {
        Self {
            limit: WATCH_FIRST,
            at: 0,
        }
    }

    /// The park's time limit now.
    pub(crate) fn limit(&self) -> Duration {
        self.limit
    }

    /// Woken (an activation, fork/join tasks, a quiet spell's end): look again soon.
    pub(crate) fn woken(&mut self) {
        self.limit = WATCH_FIRST;
    }

    /// The limit passed (and the controller ran): see [`next_limit`]. Each active worker
    /// idled throughout when its idle spell in progress began at or before the last look.
    pub(crate) fn next(&mut self, table: &WorkerTable) {
        let now = table.compaction.ns(Instant::now());
        let n = table.len();
        let busy = (0..n).any(|i| !table.pace(i).idle());
        let at = self.at;
        let throughout =
            at != 0 && (0..n).all(|i| table.pace(i).spell_start().is_some_and(|s| s <= at));
        self.at = now;
        self.limit = next_limit(self.limit, busy, throughout);
    }
}

/// The watch's limit after `limit` passed: the first again while an active worker is busy
/// now (`busy`: it may be inside a long behaviour with mail behind it); doubling while all
/// are idle, up to [`QUIET`], and past it up to [`WATCH_MAX`] only from `QUIET` on and while
/// each stayed idle for the whole last interval (`throughout`: the spell that ends next is
/// then at least `QUIET`, and its end wakes the watch). A behaviour that starts after an idle
/// spell shorter than `QUIET` wakes nobody: with a light load whose spells are short, mail
/// behind a long behaviour waits at most `QUIET`, not `WATCH_MAX`.
fn next_limit(limit: Duration, busy: bool, throughout: bool) -> Duration {
    if busy {
        WATCH_FIRST
    } else if throughout && limit >= QUIET {
        (limit * 2).min(WATCH_MAX)
    } else {
        (limit * 2).min(QUIET)
    }
}

/// A quiet spell ended: the watch (the first dormant row) looks again soon.
#[cold]
#[inline(never)]
fn quiet_ended(table: &WorkerTable) {
    let c = table.compaction();
    c.quiet.store(true, Ordering::SeqCst);
    c.wake_watch(table);
}

/// A worker's idle time (written by the worker alone, read by the controller).
#[derive(Debug, Default)]
pub(crate) struct Pace {
    /// Nanoseconds idle in the spells that ended.
    idle: AtomicU64,
    /// When the spell in progress began (nanoseconds since the table's epoch, at least 1), or
    /// 0 while the worker is busy.
    since: AtomicU64,
}

impl Pace {
    /// The worker ran out of work at `now`.
    #[inline]
    pub(crate) fn idle_from(&self, now: u64) {
        self.since.store(now.max(1), Ordering::Relaxed);
    }

    /// Whether the worker is in an idle spell (its own view).
    #[inline]
    pub(crate) fn idle(&self) -> bool {
        self.since.load(Ordering::Relaxed) != 0
    }

    /// When the idle spell in progress began (nanoseconds since the table's epoch), if one is.
    pub(crate) fn spell_start(&self) -> Option<u64> {
        Some(self.since.load(Ordering::Acquire)).filter(|&s| s != 0)
    }

    /// The worker found work: a spell in progress ends now (a clock read only then). A quiet
    /// spell ([`QUIET`]) that ends wakes the watch, which looks again from [`WATCH_FIRST`].
    #[inline]
    pub(crate) fn at_work(&self, table: &WorkerTable) {
        let since = self.since.load(Ordering::Relaxed);
        if since != 0 {
            let c = &table.compaction;
            let now = c.ns(Instant::now());
            let spell = now.saturating_sub(since);
            self.idle
                .store(self.idle.load(Ordering::Relaxed) + spell, Ordering::Relaxed);
            self.since.store(0, Ordering::Release);
            if spell >= QUIET.as_nanos() as u64 {
                quiet_ended(table);
            }
        }
    }

    /// Idle nanoseconds up to `now` (the spell in progress included).
    fn total(&self, now: u64) -> u64 {
        let idle = self.idle.load(Ordering::Acquire);
        let since = self.since.load(Ordering::Acquire);
        idle + if since != 0 {
            now.saturating_sub(since)
        } else {
            0
        }
    }
}

/// The CPUs this process may use (`std::thread::available_parallelism`, which counts a
/// container's CPU quota; 1 if unknown).
pub(crate) fn available_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Whether the controller runs, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Mode {
    /// The number of workers stays as set.
    Off,
    /// The controller of the module documentation.
    #[default]
    On,
    /// For tests: every window, a worker is deactivated or activated at random, whatever the
    /// load (the hand-overs, not the signal, are under test).
    Chaos,
}

/// How many of `workers` start active: one with compaction (the others are activated as the
/// load needs them: a program that never has parallel work never pays a hand-off between
/// workers), all without.
pub(crate) fn starting(mode: Mode, workers: usize) -> usize {
    if mode == Mode::Off {
        workers
    } else {
        workers.min(1)
    }
}

/// The controller's settings, its state, and what it did (in the worker table).
#[derive(Debug)]
pub(crate) struct Compaction {
    on: bool,
    chaos: bool,
    epoch: Instant,
    /// When the next window ends (nanoseconds since `epoch`; `u64::MAX` when off).
    next: AtomicU64,
    state: Mutex<State>,
    /// Fork/join tasks were shown while every active worker was busy: the watcher activates
    /// workers for them at once ([`wanted`]).
    wanted: AtomicBool,
    /// An active worker ended a quiet spell: the watch looks again soon (see [`QUIET`]).
    quiet: AtomicBool,
    /// The CPUs this process may use (`std::thread::available_parallelism`, which counts a
    /// container's quota): the most workers fork/join tasks activate ([`wanted`]).
    cpus: usize,
    activations: AtomicU64,
    deactivations: AtomicU64,
    /// Active workers × nanoseconds, summed over the windows (for the mean).
    active_ns: AtomicU64,
    /// Nanoseconds the windows covered.
    covered_ns: AtomicU64,
}

/// What the controller remembers between windows.
#[derive(Debug, Default)]
struct State {
    /// When the last window ended.
    last: u64,
    /// Active workers then, and each one's idle total then (a change of the count starts
    /// afresh: the rows' spells straddle it).
    active: usize,
    seen: Vec<u64>,
    /// Each active worker's busy time in the window ending now.
    busy: Vec<u64>,
    /// Windows in a row with room to spare.
    low: u32,
    /// The units of work done so far (`Unit::progress`) at the end of the last window.
    progress: Option<u64>,
    /// The saturated windows in a row with these workers active, and their work.
    saturated: Run,
    /// The last activation, while it is judged.
    trial: Option<Trial>,
    /// No activation before this window.
    holdoff_until: u64,
    /// The next holdoff, in windows.
    holdoff: u64,
    /// Windows so far.
    windows: u64,
    /// Chaos mode's coin.
    coin: u64,
}

/// What the controller did, for the statistics.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CompactionStats {
    pub(crate) activations: u64,
    pub(crate) deactivations: u64,
    pub(crate) active_time: Duration,
    pub(crate) covered: Duration,
}

/// What a window's measurements say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Every active worker was saturated.
    Saturated,
    /// The work would have fitted on one worker fewer.
    Spare,
    /// Neither.
    Fits,
}

/// Reads a window: `busy[i]` is worker `i`'s busy nanoseconds in a window of `window`.
pub(crate) fn verdict(busy: &[u64], window: u64) -> Verdict {
    let n = busy.len();
    if n == 0 || window == 0 {
        return Verdict::Fits;
    }
    let w = window as f64;
    if busy.iter().all(|&b| b as f64 >= SATURATED * w) {
        return Verdict::Saturated;
    }
    let sum: u64 = busy.iter().sum();
    if n > 1 && (sum as f64) <= SPARE * (n - 1) as f64 * w {
        Verdict::Spare
    } else {
        Verdict::Fits
    }
}

impl Compaction {
    /// For a pool of at most `capacity` workers, on `cpus` CPUs.
    pub(crate) fn new(mode: Mode, capacity: usize, cpus: usize) -> Self {
        let on = mode != Mode::Off;
        Self {
            on,
            chaos: mode == Mode::Chaos,
            epoch: Instant::now(),
            next: AtomicU64::new(if on { 0 } else { u64::MAX }),
            state: Mutex::new(State {
                holdoff: HOLDOFF_FIRST,
                coin: 0x9E37_79B9_7F4A_7C15,
                seen: Vec::with_capacity(capacity),
                busy: Vec::with_capacity(capacity),
                ..State::default()
            }),
            wanted: AtomicBool::new(false),
            quiet: AtomicBool::new(false),
            cpus: cpus.max(1),
            activations: AtomicU64::new(0),
            deactivations: AtomicU64::new(0),
            active_ns: AtomicU64::new(0),
            covered_ns: AtomicU64::new(0),
        }
    }

    /// Whether the controller runs.
    pub(crate) fn on(&self) -> bool {
        self.on
    }

    /// Of `limit` workers, `active` of them active: the most that fork/join tasks shown
    /// activate (every one without compaction; with it, up to the CPUs as [`wanted`] does,
    /// or those active if more).
    #[inline]
    pub(crate) fn task_workers(&self, limit: usize, active: usize) -> usize {
        if self.on {
            limit.min(self.cpus).max(active)
        } else {
            limit
        }
    }

    /// `t` in nanoseconds since the epoch.
    #[inline]
    pub(crate) fn ns(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.epoch).as_nanos() as u64
    }

    /// Whether a window has ended by `now` (one load).
    #[inline]
    pub(crate) fn due(&self, now: u64) -> bool {
        now >= self.next.load(Ordering::Relaxed)
    }

    /// Fork/join tasks shown while every active worker is busy: wakes the first dormant row,
    /// which activates workers ([`wanted`]); once until it has.
    pub(crate) fn want(&self, table: &WorkerTable) {
        if self.on && !self.wanted.swap(true, Ordering::SeqCst) {
            self.wake_watch(table);
        }
    }

    /// Wakes the watch (the first dormant row: [`WorkerTable::watch_row`]), its flag
    /// (`wanted` or `quiet`) set first.
    fn wake_watch(&self, table: &WorkerTable) {
        if let Some(row) = table.watch_row() {
            table.wake_row(row);
        }
    }

    /// Whether the watch was woken for a flag it has not taken yet (read by its park after
    /// announcing it searches: a wake-up that came while it ran between two parks is seen).
    /// Takes `quiet`; `wanted` stays for [`Self::take_wanted`].
    pub(crate) fn poked(&self) -> bool {
        let quiet = self.quiet.load(Ordering::SeqCst) && self.quiet.swap(false, Ordering::SeqCst);
        quiet || self.wanted.load(Ordering::SeqCst)
    }

    /// Whether activation was wanted for tasks (and no longer).
    pub(crate) fn take_wanted(&self) -> bool {
        self.wanted.load(Ordering::Relaxed) && self.wanted.swap(false, Ordering::AcqRel)
    }

    pub(crate) fn stats(&self) -> CompactionStats {
        CompactionStats {
            activations: self.activations.load(Ordering::Relaxed),
            deactivations: self.deactivations.load(Ordering::Relaxed),
            active_time: Duration::from_nanos(self.active_ns.load(Ordering::Relaxed)),
            covered: Duration::from_nanos(self.covered_ns.load(Ordering::Relaxed)),
        }
    }
}

/// Called by a worker of `unit` at `now` (a window may have ended): the controller, if due.
#[inline]
pub(crate) fn tick<U: Unit>(unit: &U, now: Instant) {
    let c = &unit.pool().table().compaction;
    if c.on {
        let now = c.ns(now);
        if c.due(now) {
            run(unit, now);
        }
    }
}

/// On a dormant worker woken for fork/join tasks ([`Compaction::want`]): the active workers
/// double (up to `limit`, and up to the CPUs) if tasks are still shown, whatever the holdoff
/// (tasks say outright that they can run in parallel; no rate of messages judges them). The
/// spare rule takes the workers back when the tasks are done. Past the CPUs, tasks would only
/// take turns on them, each preempted worker holding up the joins that wait for its task
/// (`docs/DESIGN.md`, "Compaction", has the measurement); an activation of `run` may still go
/// further where its trial shows it pays (behaviours that block).
pub(crate) fn wanted<U: Unit>(unit: &U) {
    let pool = unit.pool();
    let table = pool.table();
    let c = &table.compaction;
    let mut st = match c.state.try_lock() {
        Ok(st) => st,
        Err(std::sync::TryLockError::WouldBlock) => {
            // The controller runs (briefly): wanted still, and the watch looks again at once.
            c.wanted.store(true, Ordering::SeqCst);
            c.wake_watch(table);
            std::thread::yield_now();
            return;
        }
        // (A panic under the lock: the controller is off, as `run` finds it.)
        Err(std::sync::TryLockError::Poisoned(_)) => return,
    };
    let active = table.len();
    let most = c.task_workers(table.limit(), active);
    if active < most && table.tasks_hint() {
        if let Some(n) = pool.activate(unit, active.min(most - active)) {
            if n > active {
                c.activations.fetch_add(1, Ordering::Relaxed);
                st.low = 0;
            }
        }
    }
}

/// One window's decision (see the module documentation).
#[cold]
#[inline(never)]
fn run<U: Unit>(unit: &U, now: u64) {
    let pool = unit.pool();
    let table = pool.table();
    let c = &table.compaction;
    let Ok(mut st) = c.state.try_lock() else {
        return;
    };
    if !c.due(now) {
        return;
    }
    c.next
        .store(now + WINDOW.as_nanos() as u64, Ordering::Relaxed);
    let active = table.len();
    let dt = now.saturating_sub(st.last);
    st.last = now;
    c.active_ns.fetch_add(active as u64 * dt, Ordering::Relaxed);
    c.covered_ns.fetch_add(dt, Ordering::Relaxed);
    st.windows += 1;
    let total = unit.progress();
    let done = match (total, st.progress) {
        (Some(t), Some(p)) => Some(t.saturating_sub(p)),
        _ => None,
    };
    st.progress = total;
    let window = st.windows;
    // (In place, in arrays made at the pool's capacity: the controller allocates nothing.)
    let fresh = st.active != active;
    st.active = active;
    let State { seen, busy, .. } = &mut *st;
    seen.resize(active, 0);
    busy.clear();
    for (i, then) in seen.iter_mut().enumerate() {
        let idle = table.pace(i).total(now);
        busy.push(dt.saturating_sub(idle.saturating_sub(*then).min(dt)));
        *then = idle;
    }
    if c.chaos {
        st.coin ^= st.coin << 13;
        st.coin ^= st.coin >> 7;
        st.coin ^= st.coin << 17;
        let down = st.coin & 1 == 0;
        let changed = if (down && active > 1) || active == table.limit() {
            pool.deactivate(unit).is_some()
        } else {
            pool.activate(unit, 1 + (st.coin >> 1) as usize % active)
                .is_some()
        };
        if changed {
            let n = if table.len() < active {
                &c.deactivations
            } else {
                &c.activations
            };
            n.fetch_add(1, Ordering::Relaxed);
        }
        return;
    }
    if fresh || unit.closed() {
        // (The windows of a trial start after this one: its work straddles the change.)
        st.low = 0;
        st.saturated = Run::default();
        return;
    }
    if let Some(t) = &mut st.trial {
        t.windows += 1;
        t.time += dt;
        t.done += done.unwrap_or(0);
        if t.windows >= TRIAL_WINDOWS {
            let t = st.trial.take().expect("a trial");
            st.low = 0;
            match t.judge() {
                Judged::Pays => st.holdoff = HOLDOFF_FIRST,
                Judged::Fails => {
                    // Back to what ran before, and no try for a while (longer each time). A
                    // load that fell during the trial needs those workers no more either; one
                    // still there ran no faster on them (a chain whose hops now cross
                    // workers keeps about one busy, too many for the spare rule).
                    st.holdoff_until = window + st.holdoff;
                    st.holdoff = (st.holdoff * 2).min(HOLDOFF_MAX);
                    for _ in t.from..active {
                        if !deactivatable(unit, table.len() - 1) {
                            break; // (the spare rule takes it later)
                        }
                        if pool.deactivate(unit).is_some() {
                            c.deactivations.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            }
            return;
        }
    }
    let limit = table.limit();
    let verdict = verdict(&st.busy, dt);
    if verdict == Verdict::Saturated {
        st.saturated.windows += 1;
        st.saturated.time += dt;
        st.saturated.done += done.unwrap_or(0);
    } else {
        st.saturated = Run::default();
    }
    // Saturated without running a message (each active worker inside one long behaviour, or
    // in fork/join tasks): no rate to compare an activation with, and whatever waits waits
    // for as long as those run, so one window is enough.
    let stalled = done == Some(0) && st.saturated.done == 0;
    match verdict {
        Verdict::Saturated
            if active < limit
                && window >= st.holdoff_until
                && st.trial.is_none()
                && (st.saturated.windows >= SATURATED_WINDOWS || stalled) =>
        {
            st.low = 0;
            if unit.waiting(active) || table.tasks_hint() {
                // The rate of work of the saturated windows: what these workers can do.
                let before = st.saturated.done as f64 / st.saturated.time.max(1) as f64;
                st.saturated = Run::default();
                let k = active.min(limit - active);
                if let Some(n) = pool.activate(unit, k) {
                    if n > active {
                        c.activations.fetch_add(1, Ordering::Relaxed);
                        st.trial = Some(Trial {
                            from: active,
                            before,
                            ..Trial::default()
                        });
                    }
                }
            }
        }
        Verdict::Spare if active > 1 => {
            st.low += 1;
            if st.low >= LOW_WINDOWS && deactivatable(unit, active - 1) {
                st.low = 0;
                if pool.deactivate(unit).is_some() {
                    c.deactivations.fetch_add(1, Ordering::Relaxed);
                    st.trial = None;
                }
            }
        }
        _ => st.low = 0,
    }
}

/// Whether the last active worker, `row`, may be deactivated now: it is in an idle spell (a
/// worker deactivated inside a long behaviour would finish it first, and hold its queues
/// until then), and holds no work behind what it runs (mail behind a long behaviour: its
/// rescue looks at active workers alone, `Unit::holds_work`). Looks before the deactivation:
/// a behaviour or a batch taken in between still runs first; the watch then moves to the
/// next dormant row (`WorkerTable::watch_row`).
fn deactivatable<U: Unit>(unit: &U, row: usize) -> bool {
    unit.pool().table().pace(row).idle() && !unit.holds_work(row)
}

/// Consecutive windows, their nanoseconds and the units of work done in them.
#[derive(Debug, Default, Clone, Copy)]
struct Run {
    windows: u32,
    time: u64,
    done: u64,
}

/// An activation on trial: the rate of work before it, and what the windows after it did.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Trial {
    /// Active workers before.
    pub(crate) from: usize,
    /// Units of work (messages run) per nanosecond before, while those were saturated.
    pub(crate) before: f64,
    /// Windows judged so far, their nanoseconds and the units of work done in them.
    pub(crate) windows: u32,
    pub(crate) time: u64,
    pub(crate) done: u64,
}

/// What a trial says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Judged {
    /// The work went faster by at least [`GAIN`] (or is not counted).
    Pays,
    /// It did not: a conversation spread thin, contention, or a load that fell during the
    /// trial (a burst that ended).
    Fails,
}

impl Trial {
    pub(crate) fn judge(&self) -> Judged {
        let after = self.done as f64 / self.time.max(1) as f64;
        if self.before <= 0.0 || after >= self.before * GAIN {
            Judged::Pays
        } else {
            Judged::Fails
        }
    }
}

#[cfg(all(test, not(loom)))]
#[path = "compaction_tests.rs"]
mod tests;
