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
//!    spinning bought lately (`runtime/idle/spin.rs`), down to none;
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
//! The thread-local [`current`] tells code running on a worker (a behaviour sending a message)
//! which pool and worker it is on, so executors can take their local fast paths; and tells
//! every thread which system it runs work for, so a blocking wait on that system from inside
//! it can be refused instead of deadlocking.

use super::idle::SpinBudget;
use super::life::Life;
use super::loom::{spin_hint, yield_now};
use super::pool::{leave_if_removed, Pool};
use super::stats::Counters;
use super::tasks::TaskWorker;
use std::cell::Cell;
use std::ptr;
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
    /// gives up then, [`own_system_aborting`]).
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
    /// `me` waits in the join ([`publish_kept`]).
    fn publish_kept(&self, _me: &Worker<'_, Self>) {}

    /// Called when `me` woke from idle sleep.
    fn woke(&self, _me: &Worker<'_, Self>) {}

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
    let tasks = TaskWorker::new(pool.crew(), index);
    let _tasks = tasks.enter();
    work(unit, &me, &tasks);
    // However the loop ended (removed, shutdown, abort), a row still marked leaving becomes
    // exited, and a resize waiting for it is told.
    pool.ended(index);
}

/// A removed worker (its row no longer active) at the top of its loop: runs the tasks left in
/// its deque (a scope's, whose owner may wait for them without looking at the common queue),
/// hands over what the unit holds, and says whether to end (a row added back meanwhile goes
/// on). Out of line: the check costs the loop one relaxed load.
#[cold]
#[inline(never)]
fn removed<U: Unit>(unit: &U, me: &Worker<'_, U>, tasks: &TaskWorker<'_>) -> bool {
    let pool = unit.pool();
    run_own_tasks(tasks);
    if !leave_if_removed(pool.crew(), me.index, || {
        tasks.evacuate();
        unit.leave(me);
    }) {
        return false;
    }
    unit.left(me);
    // A general notification may have picked this worker, which leaves without looking:
    // pass it on if tasks wait.
    if pool.tasks_hint() {
        pool.notify_any();
    }
    true
}

/// The loop proper (see the module documentation); returns when the worker must end.
fn work<U: Unit>(unit: &U, me: &Worker<'_, U>, tasks: &TaskWorker<'_>) {
    let (pool, index) = (unit.pool(), me.index);
    let mut idle = Idleness::new(unit.spin());
    let mut busy_turns = 0u32;
    loop {
        // Removed by a resize: hand over and end.
        if !pool.is_active(index) && removed(unit, me, tasks) {
            return;
        }
        let turn = unit.turn(me, &idle);
        if turn == Turn::Exit {
            // Tasks left in this worker's deque run before it ends (`run_left_tasks`).
            finish_tasks(tasks);
            return;
        }
        if turn == Turn::Worked {
            busy_turns = busy_turns.wrapping_add(1);
            if busy_turns % TASKS_EVERY != 0 {
                idle.reset();
                continue;
            }
        }
        // Fork/join tasks, when some worker shows tasks or the common queue holds one (one
        // load when there are none).
        if tasks.hinted() {
            unit.before_tasks(me);
            if run_tasks(tasks) {
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
            if !unit.search(me) && !tasks.search() {
                return;
            }
            continue;
        }
        idle.passes += 1;
        let since = *idle.since.get_or_insert_with(Instant::now);
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
        if spin || turn == Turn::Holding {
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
        // Idle sleep: stop showing an emptied deque (the others would not sleep while it
        // shows tasks), announce, search exhaustively (the unit's work and tasks), then sleep.
        tasks.unshow();
        pool.announce(index);
        // (`tasks.search` fences; a removal stores the row's state, fences, then notifies:
        // either this sees the worker removed, or the notification reaches its benaphore.)
        if unit.search(me) || tasks.search() || unit.exit_ready() || !pool.is_active(index) {
            pool.retire(index);
            idle.reset();
            continue;
        }
        unit.sleeping(me);
        let limit = unit.sleep_limit(me);
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
/// tasks keeps the others from ending and from sleeping).
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

/// What the calling thread runs work for.
#[derive(Clone, Copy)]
struct Current {
    /// The pool whose worker this thread is (null: not a worker, or outside the unit's code).
    pool: *const (),
    /// That worker (a `Worker<U>` of the pool's unit type); on a detached actor's thread, that
    /// actor.
    worker: *const (),
    /// The system whose work this thread runs (null: none).
    owner: *const (),
    /// `Unit::publish_kept` of the worker's unit, for `worker` (only while the thread runs
    /// that unit's code: set with `worker` by `Enter::worker`).
    publish: Option<unsafe fn(*const ())>,
    /// The life cycle of the system `owner` (null: none), which lives while this thread runs
    /// that system's work.
    life: *const Life,
}

const NOBODY: Current = Current {
    pool: ptr::null(),
    worker: ptr::null(),
    owner: ptr::null(),
    publish: None,
    life: ptr::null(),
};

thread_local! {
    static CURRENT: Cell<Current> = const { Cell::new(NOBODY) };
    static HANDOFFS: Cell<u32> = const { Cell::new(0) };
    /// Whether the unit code this thread runs keeps work back ([`note_kept`]).
    static KEPT: Cell<bool> = const { Cell::new(false) };
}

/// Counts a hand-off made by this thread: work published for someone who may be waiting for
/// it (a message into a queue other than the batch a worker runs, a reply that wakes a
/// waiter).
/// Read by [`handoffs`]: an executor that lets a stream's batches grow does so only while
/// what it runs hands nothing off, so that nobody waits for it (`executor/message_centric/README.md`,
/// placement rule 7).
#[inline]
pub(crate) fn note_handoff() {
    HANDOFFS.with(|h| h.set(h.get().wrapping_add(1)));
}

/// This thread's hand-offs so far (wrapping; compare two readings for equality).
#[inline]
pub(crate) fn handoffs() -> u32 {
    HANDOFFS.with(Cell::get)
}

/// The unit's code on this thread keeps work back to hand over later (`true`), or no longer
/// (`false`): while it does, [`publish_kept`] calls [`Unit::publish_kept`].
#[inline]
pub(crate) fn note_kept(kept: bool) {
    KEPT.with(|k| k.set(kept));
}

/// Calls [`Unit::publish_kept`] for the worker whose unit's code the calling thread runs (a
/// behaviour, or a fork/join task it runs as the behaviour), if that code keeps work back
/// ([`note_kept`]); nothing elsewhere (a task run between visits runs as outside code, and
/// keeps nothing back). For the fork/join executor, before it lets thieves take a task and
/// while it waits for one: one thread-local load when nothing is kept (paid on every `join`,
/// where reading the worker instead cost fine-grained work measurably).
#[inline(always)]
pub(crate) fn publish_kept() {
    if KEPT.with(Cell::get) {
        publish_kept_now();
    }
}

#[cold]
#[inline(never)]
fn publish_kept_now() {
    let c = CURRENT.with(Cell::get);
    if let Some(publish) = c.publish {
        // SAFETY: `publish` and `worker` were set together by `Enter::worker`, for a worker
        // of the unit type `publish` was made for, which lives on this thread's stack while
        // CURRENT names it; this call is nested in that scope and keeps no reference.
        unsafe { publish(c.worker) }
    }
}

/// [`Unit::publish_kept`] of worker `w`, for [`publish_kept`].
///
/// # Safety
/// `w` points to a live `Worker<'_, U>` of this thread, for the duration of the call.
unsafe fn publish_kept_of<U: Unit>(w: *const ()) {
    // SAFETY: the caller's contract.
    let me = unsafe { &*w.cast::<Worker<'_, U>>() };
    me.unit.publish_kept(me);
}

/// The worker of `pool` running on this thread, if any.
///
/// # Safety
/// The reference is used only during the caller's call and never kept: the worker lives on
/// its thread's stack while the thread runs the loop (or a driver's step), and code that sees it
/// here runs nested inside that, but the lifetime `'p` says nothing of it.
#[inline]
pub(crate) unsafe fn current<'p, U: Unit>(pool: &'p Pool<U::Slot>) -> Option<&'p Worker<'p, U>> {
    let c = CURRENT.with(Cell::get);
    if !ptr::eq(c.pool, (pool as *const Pool<U::Slot>).cast()) {
        return None;
    }
    // `c.worker` was set by `Enter::worker` for a `Worker` of this pool, whose unit type is
    // `U` (a pool is run by one unit type), and that worker lives on this thread's stack for
    // as long as CURRENT names it: every caller that can observe it runs nested inside the
    // scope of that `Enter`, and keeps no reference beyond its call (the contract).
    // SAFETY: as just said.
    Some(unsafe { &*c.worker.cast::<Worker<'p, U>>() })
}

/// Whether the calling thread runs work for the system `owner` (a worker of its pool, a
/// detached actor's thread, or a thread driving a caller-driven system).
pub(crate) fn runs_for(owner: *const ()) -> bool {
    !owner.is_null() && ptr::eq(CURRENT.with(Cell::get).owner, owner)
}

/// Whether the system whose work the calling thread runs (a worker's, or a detached actor's
/// thread) is being dropped: such a thread is about to be joined, so a wait on it must give
/// up rather than hold the drop (`Pending::wait` on a detached actor's thread, for an actor
/// whose mail the drop disposes of only after that join). The drop unparks those threads.
pub(crate) fn own_system_aborting() -> bool {
    let life = CURRENT.with(Cell::get).life;
    // SAFETY: `life` was set by `Enter` to the life of the system whose work this thread
    // runs, for as long as it runs it (the worker's loop or the detached actor's thread body
    // borrows the system's shared state, which owns the life, for that whole time); a wait
    // that calls this is nested in that scope.
    !life.is_null() && unsafe { (*life).aborting() }
}

/// On a thread of the system `owner` that runs one actor only (a detached actor's thread):
/// that actor.
pub(crate) fn detached_actor_of(owner: *const ()) -> Option<*const ()> {
    let c = CURRENT.with(Cell::get);
    (runs_for(owner) && c.pool.is_null() && !c.worker.is_null()).then_some(c.worker)
}

/// Where the calling thread's sends may append without a lock: an executor's local fast path
/// for the job this thread runs (an opaque target, the job's identity, and the appends left
/// before the path closes). An executor sets it around a job's behaviours
/// ([`set_local_sink`]); [`Enter::outside`] hides it, so that outside code run meanwhile (a
/// fork/join task taken from another worker, a scheduling policy's hook) never appends to the
/// job's batch ahead of mail it sent earlier through a lock.
#[derive(Clone, Copy)]
pub(crate) struct LocalSink {
    pub(crate) target: *const (),
    pub(crate) left: u32,
}

/// No local sink: every send takes its lock.
pub(crate) const NO_SINK: LocalSink = LocalSink {
    target: ptr::null(),
    left: 0,
};

thread_local! {
    static SINK: Cell<LocalSink> = const { Cell::new(NO_SINK) };
}

/// The calling thread's local sink ([`LocalSink`]).
#[inline(always)]
pub(crate) fn local_sink() -> LocalSink {
    SINK.with(Cell::get)
}

/// Sets the calling thread's local sink; returns the one it replaces.
#[inline]
pub(crate) fn set_local_sink(s: LocalSink) -> LocalSink {
    SINK.with(|c| c.replace(s))
}

/// Sets CURRENT for a scope, restoring the previous value on drop (a caller-driven system may
/// be driven from inside a behaviour of another system); [`Enter::outside`] also hides the
/// local sink for the scope.
pub(crate) struct Enter(Current, Option<LocalSink>);

impl Enter {
    #[inline]
    fn set(c: Current) -> Self {
        Enter(CURRENT.with(|cur| cur.replace(c)), None)
    }

    /// The calling thread is worker `me` of its unit's pool.
    pub(crate) fn worker<U: Unit>(me: &Worker<'_, U>) -> Self {
        Self::set(Current {
            pool: (me.unit.pool() as *const Pool<U::Slot>).cast(),
            worker: (me as *const Worker<'_, U>).cast(),
            owner: me.unit.owner(),
            publish: Some(publish_kept_of::<U>),
            life: me.unit.life(),
        })
    }

    /// The calling thread runs the work of one actor, `actor` (an address used as an
    /// identity), for `owner` (whose life cycle is `life`), and is no worker of a pool (a
    /// detached actor's thread).
    pub(crate) fn detached(owner: *const (), life: &Life, actor: *const ()) -> Self {
        Self::set(Current {
            pool: ptr::null(),
            worker: actor,
            owner,
            publish: None,
            life,
        })
    }

    /// Code that must not see the worker it runs on (a scheduling policy's code: a send it
    /// makes is not a behaviour's send). The owner is kept.
    #[inline]
    pub(crate) fn outside() -> Self {
        let c = CURRENT.with(Cell::get);
        let mut e = Self::set(Current {
            owner: c.owner,
            life: c.life,
            ..NOBODY
        });
        e.1 = Some(set_local_sink(NO_SINK));
        e
    }
}

impl Drop for Enter {
    #[inline]
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.0));
        if let Some(s) = self.1 {
            set_local_sink(s);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn an_idle_worker_releases_memory_once_per_quiet_spell() {
        let ms = Duration::from_millis;
        let plan = |release, limit, for_release| SleepPlan {
            release,
            limit,
            for_release,
        };
        let t0 = Instant::now();
        let mut idle = Idleness::fresh();
        // A unit that keeps nothing for bursts: its sleeps are left as they were, and the
        // clock is not read.
        let no_clock = || -> Instant { unreachable!("no clock read for such a unit") };
        let other = idle.before_sleep(false, t0, no_clock, None);
        assert_eq!(other, plan(false, None, false));
        // The spell's first sleep, 1 ms in: nothing released yet, woken when it is due.
        let first = idle.before_sleep(true, t0, || t0 + ms(1), None);
        assert_eq!(first, plan(false, Some(RELEASE_AFTER - ms(1)), true));
        // A shorter bound of the unit's own (a rescue watch) stays, and is the unit's.
        let watch = idle.before_sleep(true, t0, || t0 + ms(1), Some(ms(2)));
        assert_eq!(watch, plan(false, Some(ms(2)), false));
        // A later one gives way to the release's.
        let late = idle.before_sleep(true, t0, || t0 + ms(1), Some(ms(50)));
        assert_eq!(late, plan(false, Some(RELEASE_AFTER - ms(1)), true));
        // Woken by the release's bound: no last chance to steal, no spin (one pass, then the
        // release and a sleep).
        idle.woke(ms(9), false, true);
        assert!(!idle.last_chance() && idle.no_spin());
        // The spell goes on from its start, not from the wake-up.
        let woken = t0 + ms(10);
        let due = idle.before_sleep(true, woken, || t0 + RELEASE_AFTER, None);
        assert_eq!(due, plan(true, None, false));
        // Once per spell.
        let again = idle.before_sleep(true, woken, || t0 + ms(30), Some(ms(3)));
        assert_eq!(again, plan(false, Some(ms(3)), false));
        // The unit's own time-out still gives the last chance it always gave.
        idle.woke(ms(3), false, false);
        assert!(idle.last_chance());
        // Work found: the next spell waits its own time.
        idle.reset();
        let t1 = t0 + ms(40);
        let next = idle.before_sleep(true, t1, || t1, None);
        assert_eq!(next, plan(false, Some(RELEASE_AFTER), true));
    }
}
