//! The steal handoff (seed 004's "poll" of a victim's deque, done by request): one cell per
//! worker, in its row of the worker table.
//!
//! A worker's task deque is *private* (`super::Deque`): only its owner touches it, with plain
//! loads and stores, so a `join` pays no atomic read-modify-write and no fence (after Acar,
//! Charguéraud and Rainey, "Scheduling parallel programs by work stealing with private deques",
//! PPoPP 2013). A thief asks instead:
//!
//! 1. it writes what it `wants` (any task, or only work under a tag: see the helping rule in
//!    `README.md`) and resets its `answer` to `WAITING`, then posts its index in the victim's
//!    `request` word with a compare-and-swap from `NO_REQUEST` (one thief at a time per victim);
//! 2. the victim polls `request` (one relaxed load, its own cache line) whenever it pushes or
//!    pops; when it finds a request it takes it with a swap, and answers in the thief's
//!    `answer`: the *oldest* task of its deque (FIFO stealing, as the seed says) or `REFUSED`;
//! 3. the thief spins on its own `answer`.
//!
//! Invariants:
//! - **Every posted request is answered or withdrawn, exactly once.** The victim takes a request
//!   only by swapping it out; a thief withdraws only by a compare-and-swap from its own index
//!   back to `NO_REQUEST`. Exactly one of the two succeeds; a thief whose withdrawal fails waits
//!   for the answer, which the victim, having taken the request, writes at once.
//! - **No request waits on a victim that will not poll.** A victim polls while its deque holds
//!   tasks, and `has_tasks` says so. Emptying its deque, the victim stores `has_tasks = false`
//!   then loads `request` (both SeqCst); a thief stores its request then loads `has_tasks`
//!   (both SeqCst). Of two such store-then-load pairs one sees the other's store: either the
//!   victim sees the request (and refuses it), or the thief sees `false` (and withdraws). A
//!   victim that stops polling for long (a long leaf, user code that blocks) is waited for at
//!   most [`PATIENCE`] spins, then the thief withdraws and looks elsewhere.
//! - **A task is handed over once.** Only the owner removes tasks from its deque (its own pops
//!   and the answers it writes), so no two parties ever take the same task.

use crate::runtime::loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use crate::runtime::loom::sync::Mutex;
use crate::runtime::loom::thread::{self, Thread};
use crossbeam_utils::CachePadded;

/// `request` value: nobody asks.
pub(crate) const NO_REQUEST: usize = 0;
/// `answer` value: the victim has not answered yet.
pub(crate) const WAITING: usize = 0;
/// `answer` value: the victim had nothing to give.
pub(crate) const REFUSED: usize = 1;

/// How many spins a thief waits for an answer before it withdraws its request.
#[cfg(not(loom))]
pub(crate) const PATIENCE: u32 = 1 << 11;
#[cfg(loom)]
pub(crate) const PATIENCE: u32 = 2;

/// What the victim's side of a handoff holds (read by every thief; written by the owner, and
/// by thieves posting requests).
#[derive(Debug)]
struct VictimSide {
    /// Whether the owner's deque holds tasks (a hint thieves scan; see the module invariants).
    has_tasks: AtomicBool,
    /// The thief asking: its index + 1, or [`NO_REQUEST`].
    request: AtomicUsize,
}

/// What the thief's side holds (written by the thief, answered by one victim).
#[derive(Debug)]
struct ThiefSide {
    /// What this worker, as a thief, asks for: 0 for any task, else a tag.
    wants: AtomicUsize,
    /// The answer to this worker's request: [`WAITING`], [`REFUSED`], or a job pointer.
    answer: AtomicUsize,
}

/// One worker's handoff cell.
#[derive(Debug)]
pub(crate) struct Handoff {
    victim: CachePadded<VictimSide>,
    thief: CachePadded<ThiefSide>,
    /// The worker's thread, for waking it when a job it joins on completes.
    /// (A row's worker changes when the pool is resized: the thread is set at each start.)
    thread: Mutex<Option<Thread>>,
}

impl Default for Handoff {
    fn default() -> Self {
        Self {
            victim: CachePadded::new(VictimSide {
                has_tasks: AtomicBool::new(false),
                request: AtomicUsize::new(NO_REQUEST),
            }),
            thief: CachePadded::new(ThiefSide {
                wants: AtomicUsize::new(0),
                answer: AtomicUsize::new(WAITING),
            }),
            thread: Mutex::new(None),
        }
    }
}

/// What a request came to.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Asked {
    /// The victim handed over this job (a [`super::JobRef`] pointer).
    Job(usize),
    /// The victim had no task (or none the thief may run), or showed none.
    Refused,
    /// Another thief was asking, or the victim did not answer in time: try again later.
    Busy,
}

impl Handoff {
    // --- The owner (victim) side ---

    /// Publishes whether the owner's deque holds tasks. Publishing `false` is followed by a
    /// SeqCst [`Self::requested`] check by the caller (the module's second invariant).
    #[inline]
    pub(crate) fn set_has_tasks(&self, yes: bool) {
        self.victim.has_tasks.store(yes, Ordering::SeqCst);
    }

    /// Whether a thief is asking (relaxed: the owner's routine poll).
    #[inline]
    pub(crate) fn polled(&self) -> bool {
        self.victim.request.load(Ordering::Relaxed) != NO_REQUEST
    }

    /// Whether a thief is asking, ordered after a preceding SeqCst store.
    #[inline]
    pub(crate) fn requested(&self) -> bool {
        self.victim.request.load(Ordering::SeqCst) != NO_REQUEST
    }

    /// Takes the pending request, if any: the asking thief's index.
    pub(crate) fn take_request(&self) -> Option<usize> {
        match self.victim.request.swap(NO_REQUEST, Ordering::AcqRel) {
            NO_REQUEST => None,
            r => Some(r - 1),
        }
    }

    /// What the thief whose cell this is asks for (read by the victim after it took the
    /// request, which the thief posted after writing this).
    pub(crate) fn wants(&self) -> usize {
        self.thief.wants.load(Ordering::Relaxed)
    }

    /// The victim's answer to this cell's thief: a job pointer or [`REFUSED`].
    pub(crate) fn answer(&self, a: usize) {
        self.thief.answer.store(a, Ordering::Release);
    }

    // --- The thief side ---

    /// Whether this cell's owner shows tasks (a relaxed hint, for scanning victims).
    #[inline]
    pub(crate) fn shows_tasks(&self) -> bool {
        self.victim.has_tasks.load(Ordering::Relaxed)
    }

    /// Whether this cell's owner shows tasks, ordered after a preceding SeqCst store or fence
    /// (an idle worker's search).
    #[inline]
    pub(crate) fn shows_tasks_seqcst(&self) -> bool {
        self.victim.has_tasks.load(Ordering::SeqCst)
    }

    /// Thief `me` (whose cell is `mine`) asks this cell's owner for a task, wanting `wants`
    /// (0: any), and waits for the answer (see the module documentation).
    pub(crate) fn ask(&self, mine: &Handoff, me: usize, wants: usize) -> Asked {
        if !self.shows_tasks() {
            return Asked::Refused;
        }
        mine.thief.wants.store(wants, Ordering::Relaxed);
        mine.thief.answer.store(WAITING, Ordering::Relaxed);
        let id = me + 1;
        if self
            .victim
            .request
            .compare_exchange(NO_REQUEST, id, Ordering::SeqCst, Ordering::Relaxed)
            .is_err()
        {
            return Asked::Busy;
        }
        if !self.victim.has_tasks.load(Ordering::SeqCst) && self.withdraw(id) {
            return Asked::Refused;
        }
        let mut spins = 0u32;
        loop {
            match mine.thief.answer.load(Ordering::Acquire) {
                WAITING => {}
                REFUSED => return Asked::Refused,
                job => return Asked::Job(job),
            }
            spins += 1;
            if spins == PATIENCE && self.withdraw(id) {
                return Asked::Busy;
            }
            crate::runtime::loom::spin_hint();
        }
    }

    /// Withdraws thief `id`'s request; false if the victim took it first (it answers then).
    fn withdraw(&self, id: usize) -> bool {
        self.victim
            .request
            .compare_exchange(id, NO_REQUEST, Ordering::SeqCst, Ordering::Relaxed)
            .is_ok()
    }

    // --- Parking a joiner ---

    /// Records the calling thread as this cell's worker (when its loop starts).
    pub(crate) fn register_thread(&self) {
        *self.thread.lock().unwrap_or_else(|e| e.into_inner()) = Some(thread::current());
    }

    /// Forgets the worker's thread (the pool shut down).
    pub(crate) fn forget_thread(&self) {
        *self.thread.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Wakes this cell's worker if it parks (or will park) waiting for a job.
    pub(crate) fn unpark(&self) {
        if let Some(t) = &*self.thread.lock().unwrap_or_else(|e| e.into_inner()) {
            t.unpark();
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    //! The handoff, model-checked: a victim with one task that polls once and then pops it,
    //! against a thief asking for it. The task is run exactly once (by the victim, or by the
    //! thief it was handed to), and the thief never waits forever (loom reports a thief spinning
    //! on an answer nobody writes as a livelock).
    use super::*;
    use crate::runtime::loom::sync::Arc;
    use loom::thread;

    const JOB: usize = 8;

    /// The victim's side: answers a pending request from its one-task deque.
    fn serve(v: &Handoff, t: &Handoff, have: &mut bool) {
        if let Some(thief) = v.take_request() {
            assert_eq!(thief, 1);
            if *have {
                *have = false;
                t.answer(JOB);
            } else {
                t.answer(REFUSED);
            }
        }
    }

    #[test]
    fn a_task_is_taken_once_and_no_thief_waits_forever() {
        loom::model(|| {
            let v = Arc::new(Handoff::default());
            let t = Arc::new(Handoff::default());
            v.set_has_tasks(true);
            let (v2, t2) = (v.clone(), t.clone());
            let thief = thread::spawn(move || v2.ask(&t2, 1, 0) == Asked::Job(JOB));
            let mut have = true;
            // A fork or join: the routine poll.
            if v.polled() {
                serve(&v, &t, &mut have);
            }
            // The owner pops its task (if still there); the deque is then empty.
            let popped = std::mem::take(&mut have);
            v.set_has_tasks(false);
            if v.requested() {
                serve(&v, &t, &mut have);
            }
            let stolen = thief.join().unwrap();
            assert!(popped ^ stolen, "popped {popped}, stolen {stolen}");
        });
    }
}
