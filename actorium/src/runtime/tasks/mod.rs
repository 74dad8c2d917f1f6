//! Fork/join task deques and stealing (seed 004, "Work-stealing algorithm"): the runtime's
//! mechanism; `executor/forkjoin` builds `join` and scopes on it. See `README.md` in this folder
//! for the protocol, the helping rule and why nothing is lost or run twice.
//!
//! Each worker owns a deque of tasks ([`TaskWorker`]): the tasks it forked and has not yet run.
//! It pushes and pops at one end (LIFO: the latest forked subtask runs first); thieves get the
//! task at the other end (FIFO: the oldest, the largest piece of a divide-and-conquer tree) of a
//! randomly chosen victim that shows tasks; tasks submitted from outside the pool wait in the
//! pool's common queue (`Crew::injector`), which idle workers check after stealing, as the
//! seed says.
//!
//! The deque is private to its owner, and thieves get tasks through the [`handoff`] (a request
//! the owner answers at its next fork or join): a `join` costs no atomic read-modify-write and
//! no fence, which is what makes fine-grained fork/join cheap here (see `handoff`).
//!
//! Pieces: [`job`] (what a task is to the runtime: a type-erased pointer), `ring` (the
//! owner-private deque), [`handoff`] (the request/answer protocol between a thief and a
//! victim), this module (the owner's and the thief's operations, idle-sleep integration).

pub(crate) mod handoff;
pub(crate) mod job;
mod ring;

pub(crate) use handoff::Handoff;
pub(crate) use job::{JobHeader, JobRef};

use super::pool::Crew;
use super::rng::XorShift;
use crate::runtime::loom::sync::atomic::{fence, Ordering};
use handoff::{Asked, REFUSED};
use ring::Ring;
use std::cell::{Cell, UnsafeCell};
use std::ptr;
use std::time::{Duration, Instant};

/// How long a worker that woke a sleeper for its first task waits for that thief's request
/// (about the time a wake-up takes here).
const AWAIT_THIEF: Duration = Duration::from_micros(50);

/// A stolen task that ran shorter than this did not pay for its hand-off (a few cache-line
/// transfers between cores, about a microsecond each way here): the idle worker that took it
/// waits before asking again, doubling up to [`MAX_BACKOFF`]; a longer one resets that.
/// (tree-sum over a 1,023-node tree, 2 µs of work a tree, made 33,000 steals of about 1 µs and
/// ran slower on two workers than on one; with the back-off and [`TaskWorker::emptied`]'s sticky
/// showing, 47-54 ms, against 55-75 ms before and chili's 57.)
const TINY_STEAL: Duration = Duration::from_micros(5);

/// The longest an idle worker backs off after tiny steals (short against a computation worth
/// splitting: a larger cap, 500 µs, made `fib(32)` lose its second worker in some runs).
const MAX_BACKOFF: Duration = Duration::from_micros(50);

/// A worker's fork/join state, on its own thread (reached through [`TaskWorker::current`]).
pub(crate) struct TaskWorker<'c> {
    crew: &'c Crew,
    index: usize,
    /// This worker's handoff cell (in its row of the worker table), read on every fork.
    hand: &'c Handoff,
    /// The private deque ([`ring::Ring`]).
    deque: UnsafeCell<Ring>,
    /// Whether this worker shows tasks (`has_tasks` in its handoff). Inside a stolen job it
    /// keeps showing while its deque is briefly empty (see [`Self::emptied`]).
    showing: Cell<bool>,
    /// Tags of the stolen jobs this worker is running, outermost first (the helping rule).
    running: UnsafeCell<Vec<usize>>,
    /// After steals shorter than [`TINY_STEAL`], how long this idle worker waits before it
    /// asks again, and until when.
    backoff: Cell<Duration>,
    resume: Cell<Option<Instant>>,
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
    /// Worker `index` of `crew`'s fork/join state.
    pub(crate) fn new(crew: &'c Crew, index: usize) -> Self {
        Self {
            crew,
            index,
            hand: &crew.slot(index).hand,
            deque: UnsafeCell::new(Ring::new()),
            showing: Cell::new(false),
            running: UnsafeCell::new(Vec::new()),
            backoff: Cell::new(Duration::ZERO),
            resume: Cell::new(None),
            rng: Cell::new(XorShift::for_worker(index ^ 0x5A5A)),
        }
    }

    /// Makes `self` the calling thread's task worker until the guard drops (and records the
    /// thread, so that a latch can wake it).
    pub(crate) fn enter(&self) -> EnterTasks {
        self.crew.slot(self.index).hand.register_thread();
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
    pub(crate) fn crew(&self) -> &'c Crew {
        self.crew
    }

    /// This worker's index.
    #[inline]
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    #[inline]
    fn hand(&self) -> &'c Handoff {
        self.hand
    }

    #[inline]
    #[allow(clippy::mut_from_ref)]
    fn deque(&self) -> &mut Ring {
        // SAFETY: only the owning thread touches the deque, and no borrow of it outlives a
        // method of this type (none calls out while holding one).
        unsafe { &mut *self.deque.get() }
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

    /// Forks: pushes `job` on the owner's end. The first task of an empty deque is published to
    /// thieves, and wakes an idle worker if there is one (idle sleep, seed 003).
    #[inline]
    pub(crate) fn push(&self, job: JobRef) {
        if self.deque().push(job) == 1 && !self.showing.get() {
            self.published();
        }
        self.poll();
    }

    #[cold]
    fn published(&self) {
        self.showing.set(true);
        self.hand().set_has_tasks(true);
        self.crew.show_tasks(true);
        // Ordered after the SeqCst store above, as an idle worker's search is ordered after its
        // announcement: one of the two sees the other (runtime/idle/README.md).
        if self.crew.has_idle_seqcst() && self.crew.notify_any() {
            self.await_thief();
        }
    }

    /// A sleeper was just woken for this worker's first task: wait (up to [`AWAIT_THIEF`]) for
    /// its request and answer it, rather than let it wait until this worker's next fork or
    /// join, which a long leaf can put off for milliseconds (a quicksort's partition).
    #[cold]
    fn await_thief(&self) {
        let t0 = Instant::now();
        loop {
            for _ in 0..64 {
                if self.hand().polled() {
                    // The sleeper woken for this task: served at once.
                    self.serve();
                    return;
                }
                crate::runtime::loom::spin_hint();
            }
            if self.deque().len() == 0 || t0.elapsed() >= AWAIT_THIEF {
                return;
            }
        }
    }

    /// Joins: pops the owner's end (the task pushed last), if the deque holds any. (No poll
    /// here: every pop follows a push, which polled.)
    #[inline]
    pub(crate) fn pop(&self) -> Option<JobRef> {
        let d = self.deque();
        let job = d.pop();
        if job.is_some() && d.len() == 0 {
            self.emptied();
        }
        job
    }

    /// The deque just became empty. Inside a stolen job, whose forks come in quick succession
    /// (a small tree summed over and over), it keeps showing tasks: publishing and withdrawing
    /// at every root would write two shared cache lines each time, under the idle workers'
    /// polling loads; a thief asking meanwhile is answered at the next fork (or refused by
    /// [`Self::unshow`], when the job ends or the worker is about to park). Elsewhere it stops
    /// showing now.
    #[cold]
    fn emptied(&self) {
        // SAFETY: only the owning thread touches `running`.
        if unsafe { (*self.running.get()).is_empty() } {
            self.unshow();
        } else {
            self.poll();
        }
    }

    /// Stops showing tasks (the deque is empty), then refuses a request that came in meanwhile
    /// (the handoff's second invariant).
    #[cold]
    pub(crate) fn unshow(&self) {
        if !self.showing.get() || self.deque().len() > 0 {
            return;
        }
        self.showing.set(false);
        self.hand().set_has_tasks(false);
        self.crew.show_tasks(false);
        if self.hand().requested() {
            self.serve();
        }
    }

    /// The routine poll (one relaxed load): answer a thief that asks.
    #[inline]
    pub(crate) fn poll(&self) {
        if self.hand().polled() {
            self.serve();
        }
    }

    /// Answers the pending request, if any: the oldest task, if the deque has one and the
    /// thief may run it, else a refusal.
    #[cold]
    fn serve(&self) {
        let Some(thief) = self.hand().take_request() else {
            return;
        };
        let theirs = &self.crew.slot(thief).hand;
        let wants = theirs.wants();
        let d = self.deque();
        if d.len() == 0 || (wants != 0 && !self.runs_under(wants)) {
            theirs.answer(REFUSED);
            return;
        }
        let job = d.take_oldest().expect("checked non-empty");
        job.header().set_thief(thief);
        let empty = d.len() == 0;
        theirs.answer(job.as_ptr() as usize);
        if empty {
            self.emptied();
        }
    }

    /// Whether this worker is running a stolen job tagged `tag` (so every task in its deque
    /// was forked under it: see the helping rule).
    fn runs_under(&self, tag: usize) -> bool {
        // SAFETY: only the owning thread touches `running`; no borrow outlives this call.
        unsafe { &*self.running.get() }.contains(&tag)
    }

    /// The worker is leaving the pool (a resize removed it): the tasks left in its deque (a
    /// scope's, spawned here by a task that has returned) go to the common queue, in the order
    /// a thief would have taken them, and it stops showing tasks.
    pub(crate) fn evacuate(&self) {
        while let Some(job) = self.deque().take_oldest() {
            inject(self.crew, job);
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
        debug_assert_eq!(self.deque().len(), 0);
        let tag = job.header().tag();
        // SAFETY (both): only the owning thread touches `running`.
        unsafe { (*self.running.get()).push(tag) };
        // SAFETY: the caller's contract.
        unsafe { job.execute() };
        unsafe { (*self.running.get()).pop() };
        self.unshow();
    }

    /// An idle worker's steal: [`Self::find`], unless its recent steals were too small to pay
    /// (see [`TINY_STEAL`]), then [`Self::run_stolen`], timed. Whether it ran one.
    pub(crate) fn steal_and_run(&self) -> bool {
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

    /// Asks worker `victim` for a task, wanting `wants` (0: any).
    pub(crate) fn ask(&self, victim: usize, wants: usize) -> Option<JobRef> {
        debug_assert_eq!(self.deque().len(), 0, "a thief's deque is empty");
        if let Some(c) = self.crew.counters(self.index) {
            c.steal_attempts.bump(1);
        }
        match self
            .crew
            .slot(victim)
            .hand
            .ask(self.hand(), self.index, wants)
        {
            Asked::Job(p) => {
                if let Some(c) = self.crew.counters(self.index) {
                    c.steals.bump(1);
                }
                // SAFETY: the victim answered with a job pointer it took out of its deque for
                // us alone (the handoff's third invariant).
                Some(unsafe { JobRef::from_ptr(p as *mut JobHeader) })
            }
            Asked::Refused | Asked::Busy => None,
        }
    }

    /// Whether a task may be waiting for this worker to find (a hint: a load or two).
    #[inline]
    pub(crate) fn hinted(&self) -> bool {
        self.crew.tasks_hint()
    }

    /// An idle worker's search for a task: a random victim that shows tasks first, then every
    /// other in turn, then the common queue.
    pub(crate) fn find(&self) -> Option<JobRef> {
        // Every row ever used: a removed worker may still run a stolen job and fork.
        let n = self.crew.rows();
        if n > 1 {
            let mut rng = self.rng.get();
            let start = rng.below(n);
            self.rng.set(rng);
            for k in 0..n {
                let v = (start + k) % n;
                if v != self.index && self.crew.slot(v).hand.shows_tasks() {
                    if let Some(job) = self.ask(v, 0) {
                        return Some(job);
                    }
                }
            }
        }
        take_injected(self.crew)
    }

    /// Idle sleep's exhaustive search, after the announcement: whether any worker shows tasks
    /// or the common queue holds one (then the caller must not sleep).
    pub(crate) fn search(&self) -> bool {
        fence(Ordering::SeqCst);
        (0..self.crew.rows())
            .any(|v| v != self.index && self.crew.slot(v).hand.shows_tasks_seqcst())
            || !self.crew.injector.is_empty()
    }
}

/// Takes a task from `crew`'s common queue.
pub(crate) fn take_injected(crew: &Crew) -> Option<JobRef> {
    loop {
        match crew.injector.steal() {
            crossbeam_deque::Steal::Success(j) => {
                crew.show_tasks(false);
                return Some(j);
            }
            crossbeam_deque::Steal::Empty => return None,
            crossbeam_deque::Steal::Retry => {}
        }
    }
}

/// Submits `job` to `crew`'s common queue from outside the pool, and wakes an idle worker.
pub(crate) fn inject(crew: &Crew, job: JobRef) {
    crew.show_tasks(true);
    crew.injector.push(job);
    // The injector's push is a SeqCst-ordered publication followed by this SeqCst load, as in
    // `TaskWorker::published`.
    fence(Ordering::SeqCst);
    if crew.has_idle_seqcst() {
        crew.notify_any();
    }
}
