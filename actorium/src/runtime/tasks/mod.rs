//! Fork/join task deques and stealing (Java's fork/join work stealing: Doug Lea, "A Java
//! Fork/Join Framework", 2000, "Work-stealing algorithm"): the runtime's mechanism;
//! `executor/forkjoin` builds `join` and scopes on it. See `README.md` in this folder for the
//! protocol, the helping rule and why nothing is lost or run twice.
//!
//! Each worker owns a deque of tasks ([`TaskWorker`]): the tasks it forked and has not yet run.
//! It pushes and pops at one end (LIFO: the latest forked subtask runs first); thieves get the
//! task at the other end (FIFO: the oldest, the largest piece of a divide-and-conquer tree) of a
//! randomly chosen victim that shows tasks; tasks submitted from outside the pool wait in the
//! pool's common queue (`WorkerTable::injector`), which idle workers check after stealing, as in
//! Java's fork/join.
//!
//! The owner's end takes no lock and the thieves' end a spinlock (Java's fork/join: "two ends
//! protected by different locking mechanisms"); they meet over the last public task through
//! Cilk-5's THE protocol, and tasks beyond what thieves need are private to the owner, popped
//! with no fence (`deque.rs`). A thief takes a public task at once, even while its owner runs a
//! long leaf.
//!
//! Pieces: [`job_ref`] (what a task is to the runtime: a type-erased pointer), `deque` (the deque
//! and its protocol), [`task_row`] (a worker's row of fork/join state: its deque, whether it
//! shows tasks, its thread), this module (the owner's and the thief's operations, idle-sleep
//! integration); tests in `deque_tests.rs`, `deque_loom.rs` and `shuttle_tests.rs`.

mod deque;
pub(crate) mod job_ref;
#[cfg(all(test, shuttle))]
mod shuttle_tests;
pub(crate) mod task_row;

pub(crate) use job_ref::{JobHeader, JobRef};
pub(crate) use task_row::TaskRow;

use super::rng::XorShift;
use super::worker_table::WorkerTable;
use crate::runtime::loom::sync::atomic::{fence, Ordering};
use deque::Deque;
use std::cell::Cell;
use std::ptr;
use std::time::{Duration, Instant};

/// A stolen task that ran shorter than this did not pay for its hand-off (a few cache-line
/// transfers between cores, about a microsecond each way here): the idle worker that took it
/// waits before asking again, doubling up to [`MAX_BACKOFF`]; a longer one resets that.
/// (Without it, a sum over many small trees makes thousands of steals of about a microsecond
/// and runs slower on two workers than on one; [`TaskWorker::emptied`]'s sticky showing helps
/// too.)
const TINY_STEAL: Duration = Duration::from_micros(5);

/// The longest an idle worker backs off after tiny steals (short against a computation worth
/// splitting: a much larger cap can make a fine-grained computation lose its second worker).
const MAX_BACKOFF: Duration = Duration::from_micros(50);

/// The longest an idle worker sleeps while another worker shows tasks but none of them is
/// public (its deque emptied by thieves, or its tasks private), as beside a long task whose
/// sibling was stolen. A push that publishes tasks wakes a sleeper, but its look at the sleepers
/// is not fenced against their announcements (a fence per publication slows fine-grained trees):
/// a push that raced a worker going to sleep is found at the worker's next look, within this.
/// Long against a wake-up (a few µs of CPU a millisecond per sleeper), short against a task
/// worth waiting for (the same bound as a parked joiner's look, `forkjoin::MAX_NAP`).
pub(crate) const SHOWN_NAP: Duration = Duration::from_millis(1);

/// How long an idle worker of a scheduling policy goes on looking for tasks while some are
/// shown but none can be taken ([`TaskWorker::worth_looking`]), before the policy's own idling
/// (and sleep, within [`SHOWN_NAP`]) takes over: a fine-grained tree publishes its next task
/// within microseconds, and a wake-up costs its owner a system call. The message-centric
/// executor's default spin window; that executor's idle workers spin by its own window.
const SHOWN_SPIN: Duration = Duration::from_micros(100);

/// What idle sleep's search found among fork/join tasks ([`TaskWorker::search`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskSearch {
    /// No worker shows tasks and the common queue is empty: sleep.
    Nothing,
    /// Some worker shows tasks but none is public (none can be stolen now): sleep at most
    /// [`SHOWN_NAP`].
    Shown,
    /// A public task, or one in the common queue: do not sleep.
    Tasks,
}

impl TaskSearch {
    /// The sleep's time limit that this asks for, if any, with the unit's own `limit`.
    pub(crate) fn limit(self, limit: Option<Duration>) -> Option<Duration> {
        match self {
            Self::Shown => Some(limit.map_or(SHOWN_NAP, |l| l.min(SHOWN_NAP))),
            _ => limit,
        }
    }
}

/// A worker's fork/join state, on its own thread (reached through [`TaskWorker::current`]).
pub(crate) struct TaskWorker<'c> {
    table: &'c WorkerTable,
    index: usize,
    /// This worker's row (its deque, in the worker table), used on every fork.
    row: &'c TaskRow,
    /// Whether this worker shows tasks (`has_tasks` in its row). Inside a stolen job it keeps
    /// showing while its deque is briefly empty (see [`Self::emptied`]).
    showing: Cell<bool>,
    /// A position at which the deque was found empty under its lock ([`Self::surely_empty`]).
    settled_end: Cell<usize>,
    /// After steals shorter than [`TINY_STEAL`], how long this idle worker waits before it
    /// asks again, and until when.
    backoff: Cell<Duration>,
    resume: Cell<Option<Instant>>,
    /// Since when this worker, idle, has seen tasks shown with none to take
    /// ([`Self::worth_looking`]).
    shown_since: Cell<Option<Instant>>,
    rng: Cell<XorShift>,
}

thread_local! {
    /// The calling worker's [`TaskWorker`] (null: the thread is no worker of a pool).
    static TASKS: Cell<*const ()> = const { Cell::new(ptr::null()) };
}

/// Sets [`TASKS`] for a scope (a worker's whole loop), restoring the previous value on drop.
pub(crate) struct EnterTasks(*const ());

impl Drop for EnterTasks {
    fn drop(&mut self) {
        TASKS.with(|t| t.set(self.0));
    }
}

impl<'c> TaskWorker<'c> {
    /// Worker `index` of `table`'s fork/join state.
    pub(crate) fn new(table: &'c WorkerTable, index: usize) -> Self {
        Self {
            table,
            index,
            row: &table.slot(index).row,
            showing: Cell::new(false),
            settled_end: Cell::new(usize::MAX),
            backoff: Cell::new(Duration::ZERO),
            resume: Cell::new(None),
            shown_since: Cell::new(None),
            rng: Cell::new(XorShift::for_worker(index ^ 0x5A5A)),
        }
    }

    /// Makes `self` the calling thread's task worker until the guard drops (and records the
    /// thread, so that a latch can wake it).
    pub(crate) fn enter(&self) -> EnterTasks {
        self.table.slot(self.index).row.register_thread();
        EnterTasks(TASKS.with(|t| t.replace((self as *const Self).cast())))
    }

    /// The calling thread's task worker, if it is a worker of a pool.
    ///
    /// # Safety
    /// The reference is used only during the caller's call, which runs nested inside the
    /// worker's loop (where the `TaskWorker` lives, on the thread's stack), and never kept.
    #[inline]
    pub(crate) unsafe fn current<'a>() -> Option<&'a TaskWorker<'a>> {
        let p = TASKS.with(Cell::get);
        // SAFETY: set by `enter` to a `TaskWorker` that lives while the guard does, which
        // outlasts every call nested in the loop (the caller's contract).
        unsafe { p.cast::<TaskWorker<'a>>().as_ref() }
    }

    /// The pool this worker belongs to.
    #[inline]
    pub(crate) fn table(&self) -> &'c WorkerTable {
        self.table
    }

    /// This worker's index.
    #[inline]
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    #[inline]
    fn row(&self) -> &'c TaskRow {
        self.row
    }

    #[inline]
    fn deque(&self) -> &'c Deque {
        &self.row.deque
    }

    // --- The owner's end ---

    /// Tasks in the deque.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.deque().len()
    }

    /// The position just past the owner's end: a task pushed now gets position `end()`, and
    /// keeps it while thieves take tasks from the front (a mark taken before a fork stays
    /// valid, unlike a length).
    #[inline]
    pub(crate) fn end(&self) -> usize {
        self.deque().end()
    }

    /// Forks: pushes `job` on the owner's end, public if fewer tasks are public than there
    /// are other workers (`deque.rs`). The first task of a deque that shows none is published
    /// to thieves, and wakes an idle worker if there is one (idle sleep, after the Cforall
    /// runtime: Thierry Delisle, PhD thesis, Waterloo 2022, chapter "Scheduling in practice").
    #[inline]
    pub(crate) fn push(&self, job: JobRef) {
        // (Workers compaction deactivated count: tasks shown activate them up to the CPUs, and
        // the controller's trial further where that pays, e.g. tasks that block; a task kept
        // private behind a blocked owner would wait for it.)
        self.push_wanting(job, self.table.limit().saturating_sub(1));
    }

    /// [`Self::push`], making every task of the deque public (a scope's tasks: they come in
    /// bursts, and each is worth a steal).
    #[inline]
    pub(crate) fn push_public(&self, job: JobRef) {
        self.push_wanting(job, usize::MAX);
    }

    #[inline]
    fn push_wanting(&self, job: JobRef, want_public: usize) {
        let more = self.deque().push(job, want_public);
        if !self.showing.get() {
            self.published();
        } else if more && self.table.has_idle() {
            // Tasks made public while showing already: a sleeper may be wanted for them (the
            // owner woke one when it began to show; idle workers sleep while the tasks it
            // shows are taken, see `SHOWN_NAP`).
            self.wake_one();
        }
    }

    #[cold]
    #[inline(never)]
    fn wake_one(&self) {
        self.table.notify_any();
    }

    /// Whether the deque is empty, surely: [`Self::len`] can read 0 during a thief's claim
    /// that will back off, so an empty-looking deque is confirmed under its lock, once per
    /// position (the end comes back to a position where the deque was empty only by the
    /// owner's own pops, and thieves add nothing). What a worker checks before it takes work
    /// from elsewhere: a stolen job starts on an empty deque (the helping rule).
    #[inline]
    pub(crate) fn surely_empty(&self) -> bool {
        let e = self.end();
        if e == self.settled_end.get() {
            return true;
        }
        if self.len() > 0 || !self.deque().is_empty_settled() {
            return false;
        }
        self.settled_end.set(e);
        true
    }

    #[cold]
    fn published(&self) {
        self.showing.set(true);
        self.row().set_has_tasks(true);
        self.table.show_tasks(true);
        // Ordered after the SeqCst store above, as an idle worker's search is ordered after its
        // announcement: one of the two sees the other (runtime/idle/README.md).
        if self.table.has_idle_seqcst() {
            self.table.notify_any();
        } else if self.table.len() < self.table.task_workers() {
            // Every active worker busy, and some deactivated that tasks may activate: fork/join
            // says outright that this can run in parallel, so they are activated at once
            // (`compaction.rs`).
            self.table.compaction().want(self.table);
        }
    }

    /// Joins: pops the owner's end (the task pushed last), unless thieves took every task.
    #[inline]
    pub(crate) fn pop(&self) -> Option<JobRef> {
        let d = self.deque();
        let job = d.pop();
        if job.is_none() || d.len() == 0 {
            self.emptied();
        }
        job
    }

    /// The deque was found empty. Inside a stolen job, whose forks come in quick succession
    /// (a small tree summed over and over), it keeps showing tasks: publishing and withdrawing
    /// at every root would write two shared cache lines each time, under the idle workers'
    /// polling loads (a thief finding it empty meanwhile just looks elsewhere). It stops
    /// showing when the job ends or the worker is about to park ([`Self::unshow`]). Elsewhere
    /// it stops showing now.
    #[cold]
    pub(crate) fn emptied(&self) {
        if self.showing.get() && !self.deque().in_stolen_job() {
            self.unshow();
        }
    }

    /// Stops showing tasks, if the deque is empty (checked under its lock: with no thief
    /// mid-claim, and only this worker adding tasks, it stays empty until this worker pushes).
    #[cold]
    pub(crate) fn unshow(&self) {
        if !self.showing.get() || !self.deque().is_empty_settled() {
            return;
        }
        self.showing.set(false);
        self.row().set_has_tasks(false);
        self.table.show_tasks(false);
    }

    /// The worker is leaving the pool (a resize removed it): the tasks left in its deque (a
    /// scope's, spawned here by a task that has returned) go to the common queue, in the order
    /// a thief would have taken them, and it stops showing tasks.
    pub(crate) fn evacuate(&self) {
        while let Some(job) = self.deque().take_oldest() {
            inject(self.table, job);
        }
        self.unshow();
    }

    // --- The thief's end ---

    /// Runs `job`, which this worker got from another worker or the common queue, as a
    /// *stolen* job: while it runs, thieves waiting for its tag may take tasks forked under it.
    /// The deque is empty when it starts (the helping rule's invariant).
    ///
    /// # Safety
    /// `job` was handed to this worker (and to nobody else), and has not run.
    pub(crate) unsafe fn run_stolen(&self, job: JobRef) {
        debug_assert!(self.surely_empty());
        self.deque().enter_job(job.header().tag());
        // SAFETY: the caller's contract.
        unsafe { job.execute() };
        // Tasks the job left in the deque (spawned into a scope it does not wait for, so a
        // scope of its caller's) run now, while the job's tag is still listed: the scope's
        // waiter may take them (the helping rule) only from a worker running a job with that
        // tag. Left for later, they waited for this worker's next look at its own deque,
        // which a worker blocked in its scheduling policy's queue never took (work sharing:
        // the scope waited for ever).
        // (Mostly none: the deque is known empty at the position it started from, unless
        // thieves took tasks since, so that check is a load.)
        if !self.surely_empty() {
            drain(self);
        }
        self.deque().leave_job();
        self.unshow();
    }

    /// An idle worker's steal: [`Self::find`], unless its recent steals were too small to pay
    /// (see [`TINY_STEAL`]), then [`Self::run_stolen`], timed. Whether it ran one.
    pub(crate) fn steal_and_run(&self) -> bool {
        if !self.surely_empty() {
            return false; // (a thief backing off made `len` read 0: the caller pops next)
        }
        if let Some(t) = self.resume.get() {
            if Instant::now() < t {
                return false;
            }
            self.resume.set(None);
        }
        let Some(job) = self.find() else {
            return false;
        };
        let t0 = Instant::now();
        // SAFETY: `find` handed the job to this worker alone, unrun.
        unsafe { self.run_stolen(job) };
        if t0.elapsed() < TINY_STEAL {
            let b = (self.backoff.get() * 2).clamp(Duration::from_micros(1), MAX_BACKOFF);
            self.backoff.set(b);
            self.resume.set(Some(Instant::now() + b));
        } else {
            self.backoff.set(Duration::ZERO);
        }
        true
    }

    /// Takes a task from worker `victim`'s deque (its oldest), wanting `wants` (0: any task;
    /// else only while `victim` runs a stolen job with that tag: the helping rule).
    pub(crate) fn steal_from(&self, victim: usize, wants: usize) -> Option<JobRef> {
        debug_assert!(self.surely_empty(), "a thief's deque is empty");
        if let Some(c) = self.table.counters(self.index) {
            c.steal_attempts.bump(1);
        }
        let deque = &self.table.slot(victim).row.deque;
        let job = deque.steal(self.index, wants)?;
        if let Some(c) = self.table.counters(self.index) {
            c.steals.bump(1);
        }
        // More public tasks and workers asleep: wake one for them (see `wake_for_more`). On 2
        // workers nobody else can sleep. Out of line: inlined here, even behind that check, it
        // slowed fine-grained fork/join through code layout alone.
        if self.table.len() > 2 {
            self.wake_for_more(Some(deque));
        }
        Some(job)
    }

    /// A thief got a task while workers sleep: if more public tasks wait (at `victim` or any
    /// other worker, or in the common queue), wake one sleeper for them, as tokio's searcher
    /// that finds work wakes the next. Needed because a general notification hides the other
    /// sleepers until the worker it picked has retired (`IdleSleep::notify_any` swaps the
    /// first-idle word to "none"): a push meanwhile sees nobody idle and wakes nobody. This
    /// thief has retired (its SeqCst store of first-idle) before it loads the rows' flags
    /// (SeqCst), so a push that saw "none" published its flag before and is seen here.
    #[cold]
    #[inline(never)]
    fn wake_for_more(&self, victim: Option<&Deque>) {
        if !self.table.has_idle() {
            return;
        }
        if victim.is_some_and(Deque::has_public) || self.public_elsewhere() {
            self.table.notify_any();
        }
    }

    /// Whether a worker other than this one shows public tasks, or the common queue holds one.
    fn public_elsewhere(&self) -> bool {
        self.search() == TaskSearch::Tasks
    }

    /// Whether another worker shows tasks or the common queue holds one (a hint: the count
    /// of showing workers, less this one, which keeps showing inside a stolen job while its
    /// deque is momentarily empty).
    #[inline]
    pub(crate) fn others_show_tasks(&self) -> bool {
        self.table.shown_count() > usize::from(self.showing.get())
    }

    /// Whether this idle worker should look for tasks now (a scheduling policy's `dequeue`
    /// returns to the worker's loop, which runs them): tasks are shown, and this worker has
    /// looked for them, finding none, for less than [`SHOWN_SPIN`] (since it last found work),
    /// or one can be taken now ([`to_take`]). (Only past that: `to_take` reads the line each
    /// owner writes at every fork, and polled by a thief it made `tree-sum-small` take three
    /// times as long.)
    pub(crate) fn worth_looking(&self) -> bool {
        if !self.table.tasks_hint() {
            self.shown_since.set(None);
            return false;
        }
        let now = Instant::now();
        match self.shown_since.get() {
            None => {
                self.shown_since.set(Some(now));
                true
            }
            Some(t) if now.duration_since(t) < SHOWN_SPIN => true,
            Some(_) => to_take(self.table, self.index),
        }
    }

    /// The worker found work: its next idle spell looks for shown tasks afresh
    /// ([`Self::worth_looking`]).
    #[inline]
    pub(crate) fn found_work(&self) {
        if self.shown_since.get().is_some() {
            self.shown_since.set(None);
        }
    }

    /// Whether a task may be waiting for this worker to find (a hint: a load or two).
    #[inline]
    pub(crate) fn hinted(&self) -> bool {
        self.table.tasks_hint()
    }

    /// An idle worker's search for a task: a random victim that shows tasks first, then every
    /// other in turn, then the common queue.
    pub(crate) fn find(&self) -> Option<JobRef> {
        // Every row ever used: a removed worker may still run a stolen job and fork.
        let n = self.table.rows();
        if n > 1 {
            let mut rng = self.rng.get();
            let start = rng.below(n);
            self.rng.set(rng);
            for k in 0..n {
                let v = (start + k) % n;
                if v != self.index && self.table.slot(v).row.shows_tasks() {
                    if let Some(job) = self.steal_from(v, 0) {
                        return Some(job);
                    }
                }
            }
        }
        let job = take_injected(self.table)?;
        if self.table.len() > 2 {
            self.wake_for_more(None);
        }
        Some(job)
    }

    /// Idle sleep's exhaustive search, after the announcement (its loads ordered after the
    /// caller's SeqCst store: a fence first): whether a worker other than this one shows public
    /// tasks or the common queue holds one (then the caller must not sleep), or tasks are only
    /// shown (then it sleeps briefly: [`SHOWN_NAP`]).
    pub(crate) fn search(&self) -> TaskSearch {
        fence(Ordering::SeqCst);
        let mut found = TaskSearch::Nothing;
        for v in (0..self.table.rows()).filter(|&v| v != self.index) {
            let row = &self.table.slot(v).row;
            if row.shows_tasks_seqcst() {
                if row.deque.has_public() {
                    return TaskSearch::Tasks;
                }
                found = TaskSearch::Shown;
            }
        }
        if !self.table.injector.is_empty() {
            return TaskSearch::Tasks;
        }
        found
    }
}

/// Pops and runs `w`'s own deque until a pop finds nothing (tasks they fork here too).
fn drain(w: &TaskWorker<'_>) {
    while let Some(j) = w.pop() {
        // SAFETY: popped from the own deque: this worker's alone, unrun.
        unsafe { j.execute() };
    }
}

/// Whether worker `me` of `table` may find a fork/join task to run now (a hint: relaxed loads,
/// one when no worker shows tasks): its own deque holds one, another worker shows public
/// tasks, or the common queue holds one. Not merely shown: a worker whose tasks were all taken
/// while it runs long shows tasks with none to take.
pub(crate) fn to_take(table: &WorkerTable, me: usize) -> bool {
    table.tasks_hint()
        && ((0..table.rows()).any(|v| {
            let row = &table.slot(v).row;
            if v == me {
                row.deque.len() > 0
            } else {
                row.shows_tasks() && row.deque.has_public()
            }
        }) || !table.injector.is_empty())
}

/// Takes a task from `table`'s common queue.
pub(crate) fn take_injected(table: &WorkerTable) -> Option<JobRef> {
    loop {
        match table.injector.steal() {
            crossbeam_deque::Steal::Success(j) => {
                table.show_tasks(false);
                return Some(j);
            }
            crossbeam_deque::Steal::Empty => return None,
            crossbeam_deque::Steal::Retry => {}
        }
    }
}

/// Submits `job` to `table`'s common queue from outside the pool, and wakes an idle worker.
pub(crate) fn inject(table: &WorkerTable, job: JobRef) {
    table.show_tasks(true);
    table.injector.push(job);
    // The injector's push is a SeqCst-ordered publication followed by this SeqCst load, as in
    // `TaskWorker::published`.
    fence(Ordering::SeqCst);
    if table.has_idle_seqcst() {
        table.notify_any();
    } else if table.len() < table.task_workers() {
        // Every active worker busy, and some deactivated that tasks may activate: as for
        // tasks a worker shows.
        table.compaction().want(table);
    }
}
