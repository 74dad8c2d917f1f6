//! The *worker table*, the runtime's half of a worker pool: the one place where per-worker
//! state lives, one row per worker, whose runtime columns (a [`Slot`]: its idle-sleep [`Benaphore`], its statistics [`Counters`], its
//! fork/join [`TaskRow`] (its task deque), its life-cycle state) live in the [`WorkerTable`], the pool's
//! executor-independent half, and whose executor column `T` is what the executor running on
//! the pool keeps for it (a queue range and a steal timestamp for the message-centric executor,
//! a policy's worker data for the actor-centric one). (What is merely sized from the number of
//! workers at start stays with its owner: the message queues, whose count is the
//! message-centric executor's policy, and the sharding of the live-actor registry.)
//!
//! Its rows are made once, at the pool's capacity, so no reference into a row can dangle
//! across a resize; the row states and `len` change only under the resize lock's write side
//! (`pool.rs` holds the resize protocol and its invariants).

use super::compaction::{Compaction, CompactionStats, Pace};
use super::counters::{CounterValues, Counters};
use super::idle::{Benaphore, IdleSleep};
use super::resize::{ReadGuard, ResizeLock};
use super::tasks::{JobRef, TaskRow};
use crate::runtime::loom::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use crossbeam_deque::Injector;
use crossbeam_utils::CachePadded;
use std::time::Duration;

/// Row state: never used, or its thread joined.
pub(super) const UNUSED: u8 = 0;

/// Row state: a thread was started for it by an add and waits at its start gate (a thread an
/// activation starts waits at its gate with its row still dormant).
pub(super) const STARTING: u8 = 1;

/// Row state: counted in `len`; its worker runs.
pub(super) const ACTIVE: u8 = 2;

/// Row state: removed; its worker has not yet seen it.
pub(super) const LEAVING: u8 = 3;

/// Row state: its worker saw it was removed, handed over what it held, and ended its loop; or
/// a removal found no thread on it (a dormant row that never ran).
pub(super) const EXITED: u8 = 4;

/// Row state: its thread was started for an add that failed: it ends at the gate.
pub(super) const CANCELLED: u8 = 5;

/// Row state: deactivated by compaction (`compaction.rs`); its worker has not yet seen it. It
/// hands over what it holds as a removed worker does, then parks instead of ending.
pub(super) const SUSPENDING: u8 = 6;

/// Row state: deactivated by compaction; its worker holds nothing and is parked on its
/// benaphore (not listed as idle: no general notification picks it), or it has no thread yet
/// (one starts when an activation or an add reaches the row), until an activation makes the
/// row active again, a removal makes it leaving (or exited), or the system stops.
pub(super) const DORMANT: u8 = 7;

/// The runtime's columns of one worker's row in the worker table.
#[derive(Debug)]
pub(crate) struct Slot {
    /// The worker's idle-sleep flag and event fd (read by every sender to the worker).
    pub(super) sleep: CachePadded<Benaphore>,
    /// The row's life-cycle state (`ACTIVE`...), read by its worker at every turn.
    pub(super) state: AtomicU8,
    /// The worker's statistics (written by the worker alone; a line of their own, so counting
    /// does not slow the senders reading `sleep`).
    pub(super) counters: CachePadded<Counters>,
    /// The worker's fork/join row: its task deque, whether it shows tasks, its thread (after
    /// Java's fork/join work stealing: Doug Lea, "A Java Fork/Join Framework", 2000;
    /// `runtime/tasks`).
    pub(crate) row: TaskRow,
    /// The worker's idle time, for the compaction controller (written by the worker alone).
    pub(super) pace: CachePadded<Pace>,
}

/// The runtime's half of a worker pool, the same for every executor (so code that is not
/// generic over the executor, such as fork/join, can reach it): the runtime's columns of the
/// worker table, the sleepers list, the resize lock, and the fork/join tasks' common queue.
#[derive(Debug)]
pub(crate) struct WorkerTable {
    pub(super) slots: Box<[CachePadded<Slot>]>,
    /// Workers running: rows `0..len` (see the module invariants).
    pub(super) len: CachePadded<AtomicUsize>,
    /// Rows ever active (their executor data and event fds exist).
    pub(super) created: AtomicUsize,
    /// Delisle's readers-writer lock (see `resize.rs`).
    pub(crate) lock: ResizeLock,
    pub(super) idle: IdleSleep,
    pub(super) stats_on: bool,
    /// Fork/join tasks submitted from outside the pool (Java's fork/join's common queue).
    pub(crate) injector: Injector<JobRef>,
    /// How many workers show tasks in their deques, plus how many tasks the common queue
    /// holds (a hint for the worker loop: one load).
    pub(super) shown: CachePadded<AtomicUsize>,
    /// Whether idle workers look for fork/join tasks (not under a scheduling policy that
    /// blocks in its own queue: see `Policy::helps_with_tasks`).
    pub(super) thieves: AtomicBool,
    /// Every worker thread has exited ([`WorkerTable::close`]): nobody takes tasks any more.
    pub(super) closed: AtomicBool,
    /// Workers that may run: rows `0..len` active, rows `len..limit` deactivated by
    /// compaction (suspending or dormant). Changed by [`crate::runtime::pool::Pool::add`] and
    /// `remove` only; `len` moves within `1..=limit`.
    pub(super) limit: AtomicUsize,
    /// The compaction controller's settings, state and statistics (`compaction.rs`).
    pub(super) compaction: Compaction,
}

/// What the statistics read from a pool ([`WorkerTable::counter_values`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct PoolValues {
    /// Every row's counters.
    pub(crate) rows: Vec<CounterValues>,
    /// The most workers that may run.
    pub(crate) workers: usize,
    /// Workers active now.
    pub(crate) active: usize,
    /// What the compaction controller did.
    pub(crate) compaction: CompactionStats,
}

/// How a dormant worker's park ended ([`WorkerTable::park`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parked {
    /// Its row is active again.
    Active,
    /// It must end.
    Exit,
    /// The time limit passed (still dormant).
    TimedOut,
    /// Notified, and still dormant.
    Woken,
}

/// What a worker at the top of its loop does about its row ([`leave_if_removed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Leave {
    /// The row is active: go on.
    Stay,
    /// Removed: it handed over what it held; the thread ends.
    Exit,
    /// Deactivated: it handed over what it held; the thread parks ([`WorkerTable::park`]).
    Park,
}

/// A worker of `pool` at the top of its loop, whose row is no longer active: if it is leaving
/// (or suspending), hands over what it holds (`hand_over`, inside its read section, where no
/// resize can run) and marks its row exited (or dormant); says whether it ends, parks, or (a
/// row added back or activated meanwhile) goes on.
pub(crate) fn leave_if_removed(table: &WorkerTable, row: usize, hand_over: impl FnOnce()) -> Leave {
    let slot = &table.slots[row];
    if slot.state.load(Ordering::Relaxed) == ACTIVE {
        return Leave::Stay;
    }
    let guard: ReadGuard<'_> = table.lock.read(row);
    let (next, leave) = match slot.state.load(Ordering::Relaxed) {
        LEAVING => (EXITED, Leave::Exit),
        SUSPENDING => (DORMANT, Leave::Park),
        // Dormant from the start: it holds nothing.
        DORMANT => return Leave::Park,
        _ => return Leave::Stay,
    };
    hand_over();
    slot.state.store(next, Ordering::Release);
    drop(guard);
    leave
}

/// [`WorkerTable::park`] on row `row`'s benaphore `sleep` and state `state` (apart, for the
/// loom model `compaction_loom.rs`).
pub(crate) fn park(
    sleep: &Benaphore,
    state: &AtomicU8,
    lock: &ResizeLock,
    row: usize,
    stop: impl Fn() -> bool,
    limit: impl Fn() -> Option<Duration>,
    poked: impl Fn() -> bool,
) -> Parked {
    loop {
        sleep.search();
        match state.load(Ordering::SeqCst) {
            ACTIVE => {
                sleep.awake();
                return Parked::Active;
            }
            LEAVING => {
                sleep.awake();
                let _section = lock.read(row);
                match state.load(Ordering::Relaxed) {
                    LEAVING => {
                        state.store(EXITED, Ordering::Release);
                        return Parked::Exit;
                    }
                    ACTIVE => return Parked::Active,
                    _ => continue,
                }
            }
            // Activated and deactivated again while it was parked: back to the worker's loop,
            // which hands over (nothing) and parks it again as dormant before any turn.
            SUSPENDING => {
                sleep.awake();
                return Parked::Active;
            }
            _ => {}
        }
        if stop() {
            sleep.awake();
            return Parked::Exit;
        }
        // A wake-up that changes no state (`poked`: fork/join tasks shown, a quiet spell's
        // end) may have come while the worker ran between two parks, and `search` above erased
        // it; what its waker stored before waking is seen here. The time limit is read here
        // too: an activation that made this row the watch stored the states before waking it.
        if poked() {
            sleep.awake();
            return Parked::Woken;
        }
        match limit() {
            None => sleep.sleep(),
            Some(limit) => {
                if !sleep.sleep_timeout(limit) {
                    sleep.awake();
                    return Parked::TimedOut;
                }
            }
        }
        // Notified: look at the state again, and let the caller choose a new limit
        // (activations wake the row that becomes the first dormant one).
        match state.load(Ordering::SeqCst) {
            DORMANT => return Parked::Woken,
            _ => continue,
        }
    }
}

impl WorkerTable {
    /// Workers running (rows `0..len`).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    /// The most workers that may run (active, or deactivated by compaction).
    #[inline]
    pub(crate) fn limit(&self) -> usize {
        self.limit.load(Ordering::Acquire)
    }

    /// Fork/join: the most workers that tasks shown activate (`compaction.rs`, `wanted`):
    /// every row up to `limit` without compaction; with it, up to the CPUs (or those active,
    /// if more). A task shown while fewer are active, every one busy, wakes the dormant row.
    #[inline]
    pub(crate) fn task_workers(&self) -> usize {
        self.compaction.task_workers(self.limit(), self.len())
    }

    /// Worker `i`'s idle time, for the compaction controller.
    #[inline]
    pub(crate) fn pace(&self, i: usize) -> &Pace {
        &self.slots[i].pace
    }

    /// The compaction controller.
    #[inline]
    pub(crate) fn compaction(&self) -> &Compaction {
        &self.compaction
    }

    /// A deactivated worker (its row dormant, it holds nothing) parks until its row is active
    /// again ([`Parked::Active`]: it goes on), or it must end ([`Parked::Exit`]): its row
    /// became leaving (a removal; it marks the row exited, inside its read section, as every
    /// leaving worker), or `stop()` (the system stops or is dropped; the shutdown wakes every
    /// row); or the time limit (`limit()`, read after each announcement) passed
    /// ([`Parked::TimedOut`]), or it was notified and is still dormant, or `poked()` (a flag a
    /// waker set before a wake-up that changes no state) ([`Parked::Woken`]). The handshake is the idle sleep's
    /// (`idle/README.md`) without the sleepers list, so no general notification is spent on a
    /// dormant worker: its benaphore to `SEARCH` (SeqCst), then its row's state read; an
    /// activation stores the state, fences, then wakes the benaphore, so either the worker
    /// sees the new state or the wake-up reaches it.
    pub(crate) fn park(
        &self,
        row: usize,
        stop: impl Fn() -> bool,
        limit: impl Fn() -> Option<Duration>,
        poked: impl Fn() -> bool,
    ) -> Parked {
        let slot = &self.slots[row];
        park(
            &slot.sleep,
            &slot.state,
            &self.lock,
            row,
            stop,
            limit,
            poked,
        )
    }

    /// The most workers the pool may have (rows in the table).
    pub(crate) fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// How many rows were ever active (workers `0..rows()` may run, or have run, tasks).
    #[inline]
    pub(crate) fn rows(&self) -> usize {
        self.created.load(Ordering::Relaxed)
    }

    /// Rows ever active.
    fn created(&self) -> &[CachePadded<Slot>] {
        &self.slots[..self.created.load(Ordering::Relaxed)]
    }

    /// Whether row `i` is active (its worker runs and is counted in `len`).
    #[inline]
    pub(crate) fn is_active(&self, i: usize) -> bool {
        self.slots[i].state.load(Ordering::Relaxed) == ACTIVE
    }

    /// Compaction's watch: the first dormant row (`len`, unless that row's worker was
    /// deactivated inside a behaviour and has not parked yet; then the next, which has its
    /// thread: it was the watch before), if any below `limit`.
    pub(crate) fn watch_row(&self) -> Option<usize> {
        (self.len()..self.limit()).find(|&i| self.slots[i].state.load(Ordering::SeqCst) == DORMANT)
    }

    /// Rows whose worker was removed and has not yet left.
    pub(crate) fn leaving(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.created.load(Ordering::Relaxed))
            .filter(|&i| self.slots[i].state.load(Ordering::Relaxed) == LEAVING)
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

    /// Fork/join: how many workers show tasks, plus the tasks in the common queue (a hint).
    #[inline]
    pub(crate) fn shown_count(&self) -> usize {
        self.shown.load(Ordering::Relaxed)
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
        &self.slots[i]
    }

    /// Worker `i`'s counters, if statistics are on.
    #[inline]
    pub(crate) fn counters(&self, i: usize) -> Option<&Counters> {
        self.stats_on.then(|| &*self.slots[i].counters)
    }

    /// Whether statistics are counted.
    #[inline]
    pub(crate) fn stats_on(&self) -> bool {
        self.stats_on
    }

    /// Every worker's counters (every row ever used: a removed worker's counts stay in the
    /// totals), and the workers: the most that may run, and those active now.
    pub(crate) fn counter_values(&self) -> PoolValues {
        PoolValues {
            rows: self.created().iter().map(|s| s.counters.values()).collect(),
            workers: self.limit(),
            active: self.len(),
            compaction: self.compaction.stats(),
        }
    }

    // --- Idle sleep (see `runtime/idle/README.md` for the handshake) ---

    /// Idle side, step one: worker `i` announces itself idle.
    pub(crate) fn announce(&self, i: usize) {
        self.idle.announce(i, &self.slots[i].sleep);
    }

    /// Idle side, step two: nothing found, block until notified (at once if a notifier came
    /// by since [`Self::announce`]), or until `limit` has passed if one is given. Returns
    /// whether it was notified (false: the time ran out).
    pub(crate) fn sleep(&self, i: usize, limit: Option<Duration>) -> bool {
        if let Some(c) = self.counters(i) {
            c.sleeps.bump(1);
        }
        match limit {
            None => {
                self.slots[i].sleep.sleep();
                true
            }
            Some(limit) => self.slots[i].sleep.sleep_timeout(limit),
        }
    }

    /// Idle side, last step: worker `i` runs again.
    pub(crate) fn retire(&self, i: usize) {
        self.idle.retire(i, &self.slots[i].sleep);
    }

    /// Targeted notification: worker `i` must look for work (one relaxed load when it is
    /// running). Returns whether a system call was made.
    #[inline]
    pub(crate) fn notify(&self, i: usize) -> bool {
        IdleSleep::notify(&self.slots[i].sleep)
    }

    /// Wakes worker `i` whatever its benaphore says (a resize's wake-up of a dormant or
    /// removed row: an exchange, never skipped on a stale read, so the park's handshake needs
    /// no fence on the waker's side to be sound; see `compaction_loom.rs`).
    pub(crate) fn wake_row(&self, i: usize) {
        self.slots[i].sleep.wake();
    }

    /// General notification: wake the first idle worker, if any.
    pub(crate) fn notify_any(&self) -> bool {
        self.idle.notify_any(|i| &self.slots[i].sleep)
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
        self.slots[i].sleep.is_awake()
    }

    /// Wakes every worker (shutdown).
    pub(crate) fn wake_all(&self) {
        for slot in self.created() {
            slot.sleep.wake();
        }
    }

    /// Unparks every worker thread (the system is being dropped): one blocked in a wait gives
    /// up (`runtime::context::own_system_aborting`) and goes back to its loop, which ends.
    pub(crate) fn unpark_all(&self) {
        for slot in self.created() {
            slot.row.unpark();
        }
    }

    /// Every worker thread has been joined: from now on nobody takes tasks from the common
    /// queue, so a thread that waits for a task it put there runs it itself
    /// (`executor/forkjoin`'s `run_on`; else a detached actor's `join` while the system is
    /// dropped would wait for the cleanup, which waits for that thread). Set by the shutdown as
    /// soon as the threads are joined, before it waits for the detached actors' threads, and
    /// again by [`Self::close`].
    pub(crate) fn workers_exited(&self) {
        self.closed.store(true, Ordering::SeqCst);
    }

    /// After every worker thread has exited: releases the kernel resources (event fds) now,
    /// rather than when the last reference to the pool goes.
    pub(crate) fn close(&self) {
        self.workers_exited();
        for slot in self.slots.iter() {
            slot.sleep.close();
        }
        for slot in self.slots.iter() {
            slot.row.forget_thread();
        }
    }
}

#[cfg(all(test, loom))]
#[path = "compaction_loom.rs"]
mod compaction_loom;
