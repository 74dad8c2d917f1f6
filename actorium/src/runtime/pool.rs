//! The worker pool: the worker table, the worker threads, and the idle sleep between them.
//!
//! The *worker table* is the one place where per-worker state lives: one row per worker, whose
//! runtime columns (a [`Slot`]: its idle-sleep [`Benaphore`], its statistics [`Counters`], its
//! fork/join steal [`Handoff`]) live in the [`Crew`], the pool's executor-independent half, and
//! whose executor column `T` is what the executor running on the pool keeps for it (a queue
//! range and a steal timestamp for the message-centric executor, a policy's worker data for the
//! actor-centric one). What is kept *per worker* is kept here, in one table, for the resizing of
//! seed 003 ("Manual Resizing") to grow and shrink. (What is merely sized from the number of
//! workers at start stays with its owner: the message queues, whose count is the
//! message-centric executor's policy, and the sharding of the live-actor registry.) Threads are
//! spawned and joined here too; what they run is [`super::worker`]'s loop.
//!
//! Invariant: row `i` is used by worker thread `i`'s loop (its own fields), by notifiers
//! (its benaphore), by thieves (its handoff) and by readers of statistics (its counters,
//! written by worker `i` only).

use super::idle::{Benaphore, IdleSleep};
use super::stats::{Counters, Stats};
use super::tasks::{Handoff, JobRef};
use crossbeam_deque::Injector;
use crossbeam_utils::CachePadded;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};

/// The runtime's columns of one worker's row in the worker table.
#[derive(Debug)]
pub(crate) struct Slot {
    /// The worker's idle-sleep flag and event fd (read by every sender to the worker).
    sleep: CachePadded<Benaphore>,
    /// The worker's statistics (written by the worker alone; a line of their own, so counting
    /// does not slow the senders reading `sleep`).
    counters: CachePadded<Counters>,
    /// The worker's fork/join steal handoff (seed 004; `runtime/tasks`).
    pub(crate) hand: Handoff,
}

/// The runtime's half of a worker pool, the same for every executor (so code that is not
/// generic over the executor, such as fork/join, can reach it): the runtime's columns of the
/// worker table, the sleepers list, and the fork/join tasks' common queue.
#[derive(Debug)]
pub(crate) struct Crew {
    table: Box<[CachePadded<Slot>]>,
    idle: IdleSleep,
    stats_on: bool,
    /// Fork/join tasks submitted from outside the pool (seed 004's common queue).
    pub(crate) injector: Injector<JobRef>,
    /// How many workers show tasks in their deques, plus how many tasks the common queue
    /// holds (a hint for the worker loop: one load).
    shown: CachePadded<AtomicUsize>,
    /// Whether idle workers look for fork/join tasks (not under a scheduling policy that
    /// blocks in its own queue: see `Policy::helps_with_tasks`).
    thieves: AtomicBool,
    /// Every worker thread has exited ([`Crew::close`]): nobody takes tasks any more.
    closed: AtomicBool,
}

/// A pool of worker threads and its worker table: the runtime's columns ([`Crew`], reached
/// through `Deref`) and the executor's (`T`), one row per worker.
#[derive(Debug)]
pub(crate) struct Pool<T> {
    crew: Crew,
    data: Box<[CachePadded<T>]>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl<T> std::ops::Deref for Pool<T> {
    type Target = Crew;

    #[inline]
    fn deref(&self) -> &Crew {
        &self.crew
    }
}

impl<T> Pool<T> {
    /// A table of `workers` rows, worker `i`'s executor data made by `data(i)`. No thread runs
    /// yet (see [`Self::spawn`]).
    pub(crate) fn new(
        workers: usize,
        stats_on: bool,
        data: impl FnMut(usize) -> T,
    ) -> io::Result<Self> {
        let table = (0..workers)
            .map(|_| {
                Ok(CachePadded::new(Slot {
                    sleep: CachePadded::new(Benaphore::new()?),
                    counters: CachePadded::new(Counters::default()),
                    hand: Handoff::default(),
                }))
            })
            .collect::<io::Result<_>>()?;
        Ok(Self {
            crew: Crew {
                table,
                idle: IdleSleep::new(workers),
                stats_on,
                injector: Injector::new(),
                shown: CachePadded::new(AtomicUsize::new(0)),
                thieves: AtomicBool::new(true),
                closed: AtomicBool::new(false),
            },
            data: (0..workers).map(data).map(CachePadded::new).collect(),
            threads: Mutex::new(Vec::new()),
        })
    }

    /// Worker `i`'s executor data.
    #[inline]
    pub(crate) fn data(&self, i: usize) -> &T {
        &self.data[i]
    }

    /// Every worker's executor data, by index.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.data.iter().map(|d| &**d)
    }

    /// The runtime's half of the pool.
    #[inline]
    pub(crate) fn crew(&self) -> &Crew {
        &self.crew
    }

    // --- Threads ---

    /// Starts one thread per worker, each running `body(index)`. On failure the threads
    /// already started are left running (the caller shuts the pool down and joins them).
    pub(crate) fn spawn(&self, body: impl Fn(usize) + Send + Sync + 'static) -> io::Result<()> {
        let body = Arc::new(body);
        let mut threads = self.threads.lock().unwrap();
        for i in threads.len()..self.len() {
            let b = body.clone();
            let t = thread::Builder::new()
                .name(format!("actorium-worker-{i}"))
                .spawn(move || b(i))?;
            threads.push(t);
        }
        Ok(())
    }

    /// Takes the handles of the threads started so far (to join them).
    pub(crate) fn take_threads(&self) -> Vec<JoinHandle<()>> {
        std::mem::take(&mut *self.threads.lock().unwrap())
    }
}

impl Crew {
    /// Workers in the table.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    /// Fork/join: a worker starts (`true`) or stops showing tasks, or a task enters (`true`) or
    /// leaves the common queue.
    #[inline]
    pub(crate) fn show_tasks(&self, yes: bool) {
        if yes {
            self.shown.fetch_add(1, Ordering::Relaxed);
        } else {
            self.shown.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Fork/join: whether some worker shows tasks or the common queue holds one (a hint).
    #[inline]
    pub(crate) fn tasks_hint(&self) -> bool {
        self.shown.load(Ordering::Relaxed) != 0
    }

    /// Whether idle workers look for fork/join tasks.
    #[inline]
    pub(crate) fn has_thieves(&self) -> bool {
        self.len() > 0 && self.thieves.load(Ordering::Relaxed)
    }

    /// Idle workers of this pool never look for fork/join tasks (they wait in a policy's own
    /// queue): tasks run where they are forked, and from outside on the caller.
    pub(crate) fn no_thieves(&self) {
        self.thieves.store(false, Ordering::Relaxed);
    }

    /// Whether every worker thread has exited (nobody takes tasks from the common queue).
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Worker `i`'s runtime row.
    #[inline]
    pub(crate) fn slot(&self, i: usize) -> &Slot {
        &self.table[i]
    }

    /// Worker `i`'s counters, if statistics are on.
    #[inline]
    pub(crate) fn counters(&self, i: usize) -> Option<&Counters> {
        self.stats_on.then(|| &*self.table[i].counters)
    }

    /// Whether statistics are counted.
    #[inline]
    pub(crate) fn stats_on(&self) -> bool {
        self.stats_on
    }

    /// Adds every worker's counters into `s`.
    pub(crate) fn add_stats(&self, s: &mut Stats) {
        for slot in self.table.iter() {
            slot.counters.add_to(s);
        }
        s.workers += self.len();
    }

    // --- Idle sleep (see `runtime/idle/README.md` for the handshake) ---

    /// Idle side, step one: worker `i` announces itself idle.
    pub(crate) fn announce(&self, i: usize) {
        self.idle.announce(i, &self.table[i].sleep);
    }

    /// Idle side, step two: nothing found, block until notified (at once if a notifier came
    /// by since [`Self::announce`]).
    pub(crate) fn sleep(&self, i: usize) {
        if let Some(c) = self.counters(i) {
            c.sleeps.bump(1);
        }
        self.table[i].sleep.sleep();
    }

    /// Idle side, last step: worker `i` runs again.
    pub(crate) fn retire(&self, i: usize) {
        self.idle.retire(i, &self.table[i].sleep);
    }

    /// Targeted notification: worker `i` must look for work (one relaxed load when it is
    /// running). Returns whether a system call was made.
    #[inline]
    pub(crate) fn notify(&self, i: usize) -> bool {
        IdleSleep::notify(&self.table[i].sleep)
    }

    /// General notification: wake the first idle worker, if any.
    pub(crate) fn notify_any(&self) -> bool {
        self.idle.notify_any(|i| &self.table[i].sleep)
    }

    /// Whether some worker is published as idle (a hint: one load).
    #[inline]
    pub(crate) fn has_idle(&self) -> bool {
        self.idle.has_idle()
    }

    /// Whether some worker is published as idle, ordered after the caller's preceding SeqCst
    /// store (the notifier's half of the idle-sleep handshake for fork/join tasks).
    #[inline]
    pub(crate) fn has_idle_seqcst(&self) -> bool {
        self.idle.has_idle_seqcst()
    }

    /// Whether worker `i` is running or was told to (its benaphore is `AWAKE`): what a model
    /// checks to see that a notification reached it.
    #[cfg(all(test, loom))]
    pub(crate) fn is_awake(&self, i: usize) -> bool {
        self.table[i].sleep.is_awake()
    }

    /// Wakes every worker (shutdown).
    pub(crate) fn wake_all(&self) {
        for slot in self.table.iter() {
            slot.sleep.wake();
        }
    }

    /// After every worker thread has exited: releases the kernel resources (event fds) now,
    /// rather than when the last reference to the pool goes.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        for slot in self.table.iter() {
            slot.sleep.close();
        }
    }
}

/// Joins `threads`; returns how many ended by a panic (an actorium bug: worker loops catch
/// user panics), reporting each on standard error.
pub(crate) fn join_all(threads: Vec<JoinHandle<()>>) -> usize {
    let mut panicked = 0;
    for t in threads {
        if t.join().is_err() {
            eprintln!("actorium: a worker thread panicked (an actorium bug; please report it)");
            panicked += 1;
        }
    }
    panicked
}
