//! The loop every worker thread runs, and the interface through which it runs work.
//!
//! A worker runs *units of work* of one kind, a [`Unit`]: the message-centric executor's unit
//! is "visit my queues" (gulp and run a batch), the actor-centric executor's is "dequeue a job
//! from the policy and run it". The loop owns what is common to every kind:
//!
//! 1. ask the unit for a [`Turn`]: it found and ran work (`Worked`), found none (`Idle`, or
//!    `Nothing` when it idles on its own), or the worker must end (`Exit`); after `Idle` or
//!    `Nothing` (and every [`TASKS_EVERY`] busy turns), look for a fork/join task, as in Java's
//!    fork/join work stealing (Doug Lea, "A Java Fork/Join Framework", 2000): the worker's own
//!    leftovers, one stolen from another worker's deque, or one from the common queue (see
//!    [`super::tasks`]), and run it;
//! 2. after `Idle`: if the unit says shutdown may proceed, one more exhaustive search, then
//!    exit; otherwise spin for the unit's spin window (work usually comes back sooner than a
//!    wake-up takes), yielding the CPU every few passes; the window is learned from what
//!    spinning bought lately (`runtime/idle/spin_budget.rs`), down to none;
//! 3. then idle sleep (as in the Cforall runtime: Thierry Delisle, PhD thesis, Waterloo 2022,
//!    chapter "Scheduling in practice"): announce, search exhaustively ([`Unit::search`] and the
//!    task deques, ordered after the announcement), and block in the kernel if nothing was found,
//!    until notified (the handshake of `runtime/idle/README.md`) or until a time bound: the unit's
//!    own ([`Unit::sleep_limit`]), or, for a unit that keeps memory for bursts, the moment the idle
//!    spell has lasted [`RELEASE_AFTER`] and that memory goes back ([`Unit::release_memory`]; a
//!    wake-up for that only releases and sleeps again).
//!
//! At the top of every turn the worker checks that its row is still active; a worker removed
//! by a resize (Delisle's thesis, "Manual Resizing") hands over what it holds and ends (see
//! `pool.rs`).
//!
//! A unit that does its own idling (a scheduling policy that polls and sleeps in its `dequeue`)
//! returns `Nothing` instead of `Idle`. A new kind of work is a new unit (or a unit wrapping
//! another), run by the same loop on the same threads, without touching the existing ones.
//!
//! Which pool, worker and system the calling thread runs work for is kept in
//! [`super::context`], which the loop sets ([`Enter::worker`]).

use super::compaction;
use super::context::Enter;
use super::counters::Counters;
use super::idle::SpinBudget;
use super::life::Life;
use super::loom::{spin_hint, yield_now};
use super::pool::Pool;
use super::tasks::{TaskSearch, TaskWorker};
use super::worker_table::{leave_if_removed, Leave, Parked};
use std::time::{Duration, Instant};

/// While spinning idle, yield the CPU every this many passes.
const YIELD_EVERY: u32 = 4;

/// A worker busy with its unit's work still looks for tasks every this many turns (tasks a
/// scope's task left in its deque must not wait for it to go idle).
const TASKS_EVERY: u32 = 64;

/// While spinning idle, look at the clock every this many passes.
const CLOCK_EVERY: u32 = 16;

/// A worker idle this long (spinning, asleep, or woken without work) gives back the memory
/// its unit keeps for bursts ([`Unit::release_memory`]); until then its sleeps are bounded by
/// what is left of it. A worker of a bursty workload idles between bursts: released at each
/// sleep, the arrays would grow again at the next burst, copying at every regrowth.
pub(crate) const RELEASE_AFTER: Duration = Duration::from_millis(10);

/// What one turn of a unit did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Turn {
    /// It found and ran work (or wants to be called again at once).
    Worked,
    /// It found no work.
    Idle,
    /// It found no work, and did its own idling (a policy that polls and sleeps in its
    /// `dequeue`): the loop looks for tasks, then calls again at once.
    Nothing,
    /// It found no work to run now, but holds some back that will be ready within
    /// microseconds: idle for the unit's own decisions ([`Idleness`]), but the loop spins
    /// instead of searching and sleeping.
    Holding,
    /// The worker must end.
    Exit,
}

/// How long the calling worker has been without work, for a unit's own decisions (when to
/// try to steal).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Idleness {
    /// Consecutive turns that found no work.
    pub(crate) passes: u32,
    /// When the first of them ended.
    pub(crate) since: Option<Instant>,
    /// How long to spin before sleeping, learned from what spinning bought (kept across
    /// idle periods).
    budget: SpinBudget,
    /// Woken from sleep, and no work found since.
    woken: bool,
    /// That sleep ended on its time limit, not on a notification.
    timed_out: bool,
    /// When this idle spell began (its first idle pass; kept across its sleeps, unlike
    /// `since`, which each wake-up restarts).
    quiet_since: Option<Instant>,
    /// The unit's memory was released in this idle spell.
    released: bool,
}

impl Idleness {
    fn new(budget: SpinBudget) -> Self {
        Self {
            passes: 0,
            since: None,
            budget,
            woken: false,
            timed_out: false,
            quiet_since: None,
            released: false,
        }
    }

    /// A worker that has just started idling (for tests that call a unit's turn directly).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn fresh() -> Self {
        Self::new(SpinBudget::new(Duration::ZERO, false))
    }

    /// Work found: if the worker had been spinning, the spin paid.
    fn reset(&mut self) {
        if self.passes > 0 {
            self.budget.paid();
        }
        self.passes = 0;
        self.since = None;
        self.woken = false;
        self.timed_out = false;
        self.quiet_since = None;
        self.released = false;
    }

    /// About to sleep, idle since `since`, for at most `limit` (the unit's bound): whether to
    /// release the unit's memory first ([`Unit::release_memory`], once the spell has lasted
    /// [`RELEASE_AFTER`] at `now`, read only for a unit that `releases`), and the sleep's bound
    /// (until then, no later than that moment).
    fn before_sleep(
        &mut self,
        releases: bool,
        since: Instant,
        now: impl FnOnce() -> Instant,
        limit: Option<Duration>,
    ) -> SleepPlan {
        let unbounded = SleepPlan {
            release: false,
            limit,
            for_release: false,
        };
        if !releases || self.released {
            return unbounded;
        }
        let quiet_for = now().saturating_duration_since(*self.quiet_since.get_or_insert(since));
        if quiet_for >= RELEASE_AFTER {
            self.released = true;
            return SleepPlan {
                release: true,
                ..unbounded
            };
        }
        let rest = RELEASE_AFTER - quiet_for;
        match limit {
            Some(l) if l <= rest => unbounded,
            _ => SleepPlan {
                release: false,
                limit: Some(rest),
                for_release: true,
            },
        }
    }

    /// Woken after sleeping for `slept`; `notified` false: the sleep's time limit ran out,
    /// which was the memory release's (`for_release`) or the unit's own.
    fn woke(&mut self, slept: Duration, notified: bool, for_release: bool) {
        // A time-out says nothing about when work comes back: the window is not learned
        // from it, and the worker does not spin (it looks once, then sleeps again).
        if notified {
            self.budget.slept(slept);
        }
        self.passes = 0;
        self.since = None;
        // Woken only to give memory back: one pass, then the release and a sleep, with no
        // last chance to steal (nothing called for one; a thief's timed look is the unit's
        // own bound, a rescue watch).
        self.woken = notified || !for_release;
        self.timed_out = !notified;
    }

    /// Whether the worker spins no more before sleeping again: its learned window is zero, or
    /// it woke because its sleep timed out.
    fn no_spin(&self) -> bool {
        self.budget.window().is_zero() || self.timed_out
    }

    /// Whether this is the last idle turn of a worker that will not spin: its learned window
    /// is zero, or its sleep timed out, and it was woken with nothing of its own to do (most
    /// likely so that it steals, or rescues work stuck behind a long behaviour).
    /// Such a worker gets two idle turns before it sleeps again (a worker that just ran work
    /// sleeps after one: spinning, even a few µs, delays its next wake-up).
    pub(crate) fn last_chance(&self) -> bool {
        self.woken && self.no_spin()
    }

    /// Whether the worker has been idle for at least `d`.
    pub(crate) fn longer_than(&self, d: Duration) -> bool {
        self.since.is_some_and(|t| t.elapsed() >= d)
    }
}

/// What [`Idleness::before_sleep`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SleepPlan {
    /// Release the unit's memory before the sleep.
    release: bool,
    /// The sleep's bound.
    limit: Option<Duration>,
    /// The bound is the release's (the unit's own is later or none).
    for_release: bool,
}

/// A kind of work that worker threads run.
pub(crate) trait Unit: Send + Sync + Sized + 'static {
    /// What the unit keeps per worker in the worker table (reachable by other threads).
    type Slot: Send + Sync;
    /// What the unit keeps per worker on the worker's own thread.
    type Local;

    /// The pool whose threads run this unit.
    fn pool(&self) -> &Pool<Self::Slot>;

    /// The system this unit's work belongs to (an address used as an identity).
    fn owner(&self) -> *const ();

    /// That system's life cycle (whether it is being dropped: a wait on one of its threads
    /// gives up then, [`super::context::own_system_aborting`]).
    fn life(&self) -> &Life;

    /// Worker `index`'s thread-owned state.
    fn local(&self, index: usize) -> Self::Local;

    /// Finds and runs some work on worker `me`.
    fn turn(&self, me: &Worker<'_, Self>, idle: &Idleness) -> Turn;

    /// Idle sleep, step two: an exhaustive search for work `me` must run, every load ordered
    /// after the announcement (under the locks senders take, or after a SeqCst fence).
    fn search(&self, me: &Worker<'_, Self>) -> bool;

    /// Whether an idle worker may exit (shutdown), once a last [`Self::search`] finds nothing.
    fn exit_ready(&self) -> bool;

    /// How long an idle worker spins before idle sleep.
    fn spin(&self) -> SpinBudget;

    /// Called when `me` is about to block in idle sleep.
    fn sleeping(&self, _me: &Worker<'_, Self>) {}

    /// Whether the unit keeps memory for bursts that an idle worker gives back
    /// ([`Self::release_memory`]; without it, sleeps are not bounded for that).
    const RELEASES_MEMORY: bool = false;

    /// Called once per idle spell, before a sleep, when `me` has been idle for
    /// [`RELEASE_AFTER`]: memory kept for bursts may go back to the allocator.
    fn release_memory(&self, _me: &Worker<'_, Self>) {}

    /// Called right before `me` blocks in idle sleep (after [`Self::sleeping`]): the longest
    /// it may sleep without being notified, or `None` (until notified). A unit bounds the
    /// sleep when work it can see elsewhere may need rescuing without anyone notifying it.
    fn sleep_limit(&self, _me: &Worker<'_, Self>) -> Option<Duration> {
        None
    }

    /// Called before `me` looks for fork/join tasks to run (and may run one, for long).
    fn before_tasks(&self, _me: &Worker<'_, Self>) {}

    /// Called from `me`'s own code (a behaviour, or a task it runs as the behaviour) where it
    /// lets other threads act at once: a fork/join task pushed where thieves take it, a task
    /// that finishes, a join or scope that waits. Work the unit keeps back to hand over later
    /// (the message-centric executor's outbox) goes out now, so that what was sent before is
    /// queued before anything the other tasks send after, and no thief waits for it while
    /// `me` waits in the join ([`super::context::publish_kept`]).
    fn publish_kept(&self, _me: &Worker<'_, Self>) {}

    /// Called when `me` woke from idle sleep.
    fn woke(&self, _me: &Worker<'_, Self>) {}

    /// Called when `me`, announced idle, found work in its last search before sleeping (it
    /// has retired): a general notification may have picked it meanwhile, and hidden the
    /// other sleepers from the senders until now.
    fn found_work(&self, _me: &Worker<'_, Self>) {}

    /// Units of work done so far by every worker, if the unit counts them (the compaction
    /// controller judges an activation by the rate of work after it against before).
    fn progress(&self) -> Option<u64> {
        None
    }

    /// Whether work waits beyond what `active` workers, each busy, run now: the compaction
    /// controller activates more workers only then (`compaction.rs`).
    fn waiting(&self, _active: usize) -> bool {
        true
    }

    /// Whether worker `row` holds work behind what it runs now that no other worker can take
    /// (mail in the batch a visit holds): the compaction controller deactivates it only
    /// otherwise, since the rescue of such work looks at active workers alone.
    fn holds_work(&self, _row: usize) -> bool {
        false
    }

    // --- Resizing (Delisle's thesis, "Manual Resizing"; see `pool.rs`) ---

    /// The most workers this unit can run, and what sets that limit (said in the error when
    /// an add is refused).
    fn max_workers(&self) -> (usize, String) {
        (usize::MAX, String::new())
    }

    /// Inside a resize's write section (no worker is in a read section): the pool went from
    /// `old` to `new` workers; rearrange what depends on that.
    fn resized(&self, _old: usize, _new: usize) {}

    /// After a resize's write section: wake whoever must look again (removed workers are
    /// notified by the pool).
    fn after_resize(&self, _old: usize, _new: usize) {}

    /// On a removed worker's thread, inside its read section, before it ends: hand what it
    /// holds to the remaining workers. (No user code that may send runs here: a send may
    /// need the section this thread holds. Report what went wrong in [`Self::left`].)
    fn leave(&self, _me: &Worker<'_, Self>) {}

    /// On a removed worker's thread, after [`Self::leave`], out of the read section, before
    /// the thread ends.
    fn left(&self, _me: &Worker<'_, Self>) {}

    /// Whether the unit's system failed (a scheduling policy lost a job): a removal then stops
    /// waiting for workers that may never get their leave request.
    fn failed(&self) -> bool {
        false
    }

    /// Whether the unit's system has begun to stop: resizes are refused from then on (checked
    /// under the resize mutex, so that no resize runs on a row whose worker left for the
    /// shutdown).
    fn closed(&self) -> bool {
        false
    }
}

/// A worker thread as its unit sees it: index, thread-owned state, counters.
pub(crate) struct Worker<'a, U: Unit> {
    pub(crate) index: usize,
    pub(crate) unit: &'a U,
    pub(crate) local: U::Local,
}

impl<'a, U: Unit> Worker<'a, U> {
    pub(crate) fn new(unit: &'a U, index: usize) -> Self {
        Self {
            index,
            unit,
            local: unit.local(index),
        }
    }

    /// The unit found work and is about to run it: an idle spell, if any, ends now (for the
    /// compaction controller; one load of the worker's own line when there is none). A unit
    /// calls it before what may run long (a behaviour), so that a worker inside a long
    /// behaviour counts as busy.
    #[inline]
    pub(crate) fn at_work(&self) {
        let table = self.unit.pool().table();
        table.pace(self.index).at_work(table);
    }

    /// This worker's counters, if statistics are on.
    #[inline]
    pub(crate) fn counters(&self) -> Option<&'a Counters> {
        self.unit.pool().counters(self.index)
    }
}

/// Worker `index`'s thread body: the loop of the module documentation.
pub(crate) fn run<U: Unit>(unit: &U, index: usize) {
    let me = Worker::new(unit, index);
    let _enter = Enter::worker(&me);
    let pool = unit.pool();
    let tasks = TaskWorker::new(pool.table(), index);
    let _tasks = tasks.enter();
    let how = work(unit, &me, &tasks);
    pool.ended(index, how);
}

/// How a worker's loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// It left its row after a removal, marking the row exited itself; or, parked, it was
    /// told to end by the shutdown (its row stays as it is: a removal that began before the
    /// shutdown and marked it leaving stops waiting when the shutdown takes the threads).
    Left,
    /// The pool shut down or aborted while it ran.
    Other,
}

/// A removed or deactivated worker (its row no longer active) at the top of its loop: runs
/// the tasks left in its deque (a scope's, whose owner may wait for them without looking at
/// the common queue), hands over what the unit holds, and says whether to end (a row added
/// back meanwhile goes on). A deactivated worker then parks until it is active again (it goes
/// on) or must end (`compaction.rs`). Out of line: the check costs the loop one relaxed load.
#[cold]
#[inline(never)]
fn removed<U: Unit>(unit: &U, me: &Worker<'_, U>, tasks: &TaskWorker<'_>) -> bool {
    let pool = unit.pool();
    run_own_tasks(tasks);
    let leave = leave_if_removed(pool.table(), me.index, || {
        tasks.evacuate();
        unit.leave(me);
    });
    if leave == Leave::Stay {
        return false;
    }
    unit.left(me);
    // A general notification may have picked this worker, which leaves without looking:
    // pass it on if tasks wait, and with no idle worker to take it, ask for an activation
    // (as for tasks shown while every active worker is busy; the controller's saturated rule
    // may be held off for up to a second).
    if pool.tasks_hint() && !pool.notify_any() {
        pool.compaction().want(pool.table());
    }
    leave == Leave::Exit || dormant(unit, me.index)
}

/// A deactivated worker parks (`compaction.rs`); whether it must end. The first dormant row
/// (the watch: [`super::worker_table::WorkerTable::watch_row`]) parks with a time limit, and
/// runs the controller when it passes: no active worker may run it while each is inside one
/// long behaviour, and mail may wait behind them. (An activation wakes the row that becomes
/// the first dormant one, so that it takes up the watch; a row that becomes dormant is the
/// watch from its next park.)
///
/// It ends only when the workers may end (`exit_ready`: the system is aborting, or drained of
/// its actors), not as soon as it closes: an activation that checked for the close before it
/// came may still make its row active, and that row needs its thread.
fn dormant<U: Unit>(unit: &U, index: usize) -> bool {
    let pool = unit.pool();
    let stop = || unit.exit_ready();
    let mut watch = compaction::Watch::new();
    loop {
        let is_watch = || pool.watch_row() == Some(index);
        let limit = || is_watch().then_some(watch.limit());
        let poked = || is_watch() && pool.compaction().poked();
        let parked = pool.park(index, stop, limit, poked);
        if pool.compaction().take_wanted() {
            compaction::wanted(unit);
        }
        match parked {
            Parked::Active => return false,
            Parked::Exit => return true,
            // An activation, fork/join tasks, or the end of a quiet spell: look again soon.
            Parked::Woken => watch.woken(),
            Parked::TimedOut => {
                compaction::tick(unit, Instant::now());
                watch.next(pool.table());
            }
        }
    }
}

/// The loop proper (see the module documentation); returns when the worker must end, and how.
fn work<U: Unit>(unit: &U, me: &Worker<'_, U>, tasks: &TaskWorker<'_>) -> Ended {
    let (pool, index) = (unit.pool(), me.index);
    let mut idle = Idleness::new(unit.spin());
    let mut busy_turns = 0u32;
    // Idle spells, for the compaction controller (`compaction.rs`): one clock read when a
    // spell ends (its start reads the clock already).
    let spell = Spell::new(pool.table(), index);
    loop {
        // Removed by a resize, or deactivated: hand over and end, or park (again, if it was
        // activated and deactivated anew before it ran: it runs no turn while not active).
        while !pool.is_active(index) {
            if removed(unit, me, tasks) {
                return Ended::Left;
            }
            spell.end();
            idle.reset();
        }
        let turn = unit.turn(me, &idle);
        if turn == Turn::Exit {
            // Tasks left in this worker's deque run before it ends (`run_left_tasks`).
            finish_tasks(tasks);
            return Ended::Other;
        }
        if turn == Turn::Worked {
            spell.end();
            tasks.found_work();
            busy_turns = busy_turns.wrapping_add(1);
            if busy_turns % TASKS_EVERY != 0 {
                idle.reset();
                continue;
            }
            spell.tick(unit);
        }
        // Fork/join tasks, when some worker shows tasks or the common queue holds one (one
        // load when there are none).
        if tasks.hinted() {
            unit.before_tasks(me);
            // (Before: a task may be long.)
            spell.end();
            if run_tasks(tasks) {
                tasks.found_work();
                idle.reset();
                continue;
            }
        }
        if turn != Turn::Idle && turn != Turn::Holding {
            idle.reset();
            continue;
        }
        if unit.exit_ready() {
            // Shutdown: run what is left in the own deque and stop showing tasks (a thief may
            // have emptied it; left showing, it kept every other worker in this loop for
            // ever once this one had gone), then leave once a search finds nothing left.
            finish_tasks(tasks);
            if !unit.search(me) && tasks.search() == TaskSearch::Nothing {
                return Ended::Other;
            }
            continue;
        }
        idle.passes += 1;
        let since = *idle.since.get_or_insert_with(Instant::now);
        spell.begin(unit, since);
        let window = idle.budget.window();
        // With no window left, a worker woken with nothing of its own to do gets one more
        // pass: the unit's last chance to steal (it was most likely woken for that).
        let spin = if idle.no_spin() {
            idle.woken && idle.passes < 2
        } else {
            idle.passes % CLOCK_EVERY != 0 || since.elapsed() < window
        };
        // A unit holding work back spins through it: a search would take the held queues'
        // locks (the lines their senders write) and find them non-empty, and the hold ends by
        // itself within microseconds.
        // (So does a worker beside tasks shown with none to take yet, for a while: a
        // fine-grained computation publishes more within microseconds, and waking a sleeper
        // for them costs their owner a system call.)
        if spin || turn == Turn::Holding || tasks.worth_looking() {
            if idle.passes % YIELD_EVERY == 0 {
                // Let a worker that shares our CPU run: it may be the one about to hand us
                // work (a ring whose two workers the kernel put on one CPU crawls otherwise).
                yield_now();
            } else {
                for _ in 0..8 {
                    spin_hint();
                }
            }
            continue;
        }
        // Idle sleep: stop showing an emptied deque (the others would sleep only briefly while
        // it shows tasks), announce, search exhaustively (the unit's work and tasks), then
        // sleep.
        tasks.unshow();
        pool.announce(index);
        // (`tasks.search` fences; a removal stores the row's state, fences, then notifies:
        // either this sees the worker removed, or the notification reaches its benaphore.)
        let found = tasks.search();
        if found == TaskSearch::Tasks
            || unit.search(me)
            || unit.exit_ready()
            || !pool.is_active(index)
        {
            pool.retire(index);
            unit.found_work(me);
            idle.reset();
            continue;
        }
        unit.sleeping(me);
        let limit = found.limit(unit.sleep_limit(me));
        let plan = idle.before_sleep(U::RELEASES_MEMORY, since, Instant::now, limit);
        if plan.release {
            unit.release_memory(me);
        }
        let limit = plan.limit;
        let slept = Instant::now();
        let notified = pool.sleep(index, limit);
        pool.retire(index);
        unit.woke(me);
        idle.woke(slept.elapsed(), notified, plan.for_release);
    }
}

/// A worker's idle spells as the compaction controller sees them (nothing when it is off).
struct Spell<'a> {
    pace: Option<(&'a compaction::Pace, &'a super::worker_table::WorkerTable)>,
}

impl<'a> Spell<'a> {
    fn new(table: &'a super::worker_table::WorkerTable, index: usize) -> Self {
        Self {
            pace: table.compaction().on().then(|| (table.pace(index), table)),
        }
    }

    /// An idle pass at `now` (if the spell's first, the worker ran out of work, and a window
    /// may have ended).
    #[inline]
    fn begin<U: Unit>(&self, unit: &U, now: Instant) {
        if let Some((pace, table)) = self.pace {
            if !pace.idle() {
                pace.idle_from(table.compaction().ns(now));
                compaction::tick(unit, now);
            }
        }
    }

    /// Work found: the spell, if any, ends now (one load when there is none).
    #[inline]
    fn end(&self) {
        if let Some((pace, table)) = self.pace {
            pace.at_work(table);
        }
    }

    /// A busy worker now and then: a window may have ended.
    #[inline]
    fn tick<U: Unit>(&self, unit: &U) {
        if self.pace.is_some() {
            compaction::tick(unit, Instant::now());
        }
    }
}

/// Runs the tasks in the worker's own deque until it is empty (those they spawn here too).
#[inline(never)]
fn run_own_tasks(tasks: &TaskWorker<'_>) {
    if tasks.len() > 0 {
        drain_own_tasks(tasks);
    }
}

/// Pops and runs the worker's own deque until a pop finds nothing (its length may read 0
/// while one task is left), as outside code.
fn drain_own_tasks(tasks: &TaskWorker<'_>) {
    let _outside = Enter::outside();
    while let Some(job) = tasks.pop() {
        // SAFETY: popped from the own deque: this worker's alone, unrun.
        unsafe { job.execute() };
    }
}

/// On a worker that ends, or may (shutdown): runs the tasks left in its own deque and stops
/// showing tasks, which thieves may have taken since it last looked (a worker that shows
/// tasks keeps the others from ending, and from sleeping longer than `SHOWN_NAP`).
fn finish_tasks(tasks: &TaskWorker<'_>) {
    drain_own_tasks(tasks);
    tasks.unshow();
}

/// On a worker that ends (shutdown, or a failed system): runs the tasks left in its own deque
/// (a scope's, spawned by a task it ran): their scope waits for them, and they may borrow from
/// its caller's stack (left there, the scope and the shutdown would hang).
/// For a unit that counts the worker out of its shutdown handshake first (the runtime does it
/// again, with nothing left, when `turn` returns `Exit`).
pub(crate) fn run_left_tasks() {
    // SAFETY: used during this call only, on this worker's thread.
    if let Some(tasks) = unsafe { TaskWorker::current() } {
        drain_own_tasks(tasks);
    }
}

/// Runs fork/join tasks (Java's fork/join) on a worker whose unit found no work: first what its own
/// deque holds (tasks a scope's task spawned here and left when it returned), then one stolen from
/// another worker's deque or taken from the common queue. They run outside the unit's code, as a
/// policy's do: a message a task sends is sent as from outside the pool. Whether it ran any. Out of
/// line: the worker loop's idle pass is the latency of a hand-off between actors, and stays short.
#[inline(never)]
fn run_tasks(tasks: &TaskWorker<'_>) -> bool {
    if tasks.len() > 0 {
        drain_own_tasks(tasks);
        return true;
    }
    let _outside = Enter::outside();
    tasks.steal_and_run()
}

#[cfg(all(test, not(loom)))]
#[path = "worker_tests.rs"]
mod tests;
