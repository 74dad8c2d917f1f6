//! The worker pool: the worker table, the worker threads, and the idle sleep between them.
//!
//! The *worker table* is the one place where per-worker state lives: each [`Slot`] holds what
//! the runtime keeps for a worker (its idle-sleep [`Benaphore`] and its statistics
//! [`Counters`]) and `T`, what the executor running on the pool keeps for it (a queue range and
//! a steal timestamp for the message-centric executor, a policy's worker data for the
//! actor-centric one). What is kept *per worker* is kept here, in one table, for the resizing of
//! seed 003 ("Manual Resizing") to grow and shrink. (What is merely sized from the number of
//! workers at start stays with its owner: the message queues, whose count is the
//! message-centric executor's policy, and the sharding of the live-actor registry.) Threads are
//! spawned and joined here too; what they run is [`super::worker`]'s loop.
//!
//! Invariant: slot `i` is used by worker thread `i`'s loop (its own fields), by notifiers
//! (its benaphore) and by readers of statistics (its counters, written by worker `i` only).

use super::idle::{Benaphore, IdleSleep};
use super::stats::{Counters, Stats};
use crossbeam_utils::CachePadded;
use std::io;
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};

/// One worker's slot in the worker table.
#[derive(Debug)]
pub(crate) struct Slot<T> {
    /// The worker's idle-sleep flag and event fd (read by every sender to the worker).
    sleep: CachePadded<Benaphore>,
    /// The worker's statistics (written by the worker alone; a line of their own, so counting
    /// does not slow the senders reading `sleep`).
    counters: CachePadded<Counters>,
    /// What the executor keeps per worker.
    pub(crate) data: T,
}

/// A pool of worker threads and its worker table.
#[derive(Debug)]
pub(crate) struct Pool<T> {
    table: Box<[CachePadded<Slot<T>>]>,
    idle: IdleSleep,
    stats_on: bool,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl<T> Pool<T> {
    /// A table of `workers` slots, worker `i`'s executor data made by `data(i)`. No thread runs
    /// yet (see [`Self::spawn`]).
    pub(crate) fn new(
        workers: usize,
        stats_on: bool,
        mut data: impl FnMut(usize) -> T,
    ) -> io::Result<Self> {
        let table = (0..workers)
            .map(|i| {
                Ok(CachePadded::new(Slot {
                    sleep: CachePadded::new(Benaphore::new()?),
                    counters: CachePadded::new(Counters::default()),
                    data: data(i),
                }))
            })
            .collect::<io::Result<_>>()?;
        Ok(Self {
            table,
            idle: IdleSleep::new(workers),
            stats_on,
            threads: Mutex::new(Vec::new()),
        })
    }

    /// Workers in the table.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    /// Worker `i`'s executor data.
    #[inline]
    pub(crate) fn data(&self, i: usize) -> &T {
        &self.table[i].data
    }

    /// Every worker's executor data, by index.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.table.iter().map(|s| &s.data)
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

    /// After every worker thread has exited: releases the kernel resources (event fds) now,
    /// rather than when the last reference to the pool goes.
    pub(crate) fn close(&self) {
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
