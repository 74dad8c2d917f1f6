//! The worker pool: the worker threads, the executor's column of the worker table, and live
//! resizing ("Manual Resizing" in the Cforall runtime: Thierry Delisle, PhD thesis,
//! Waterloo 2022, chapter "Scheduling in practice").
//!
//! The pool owns the *worker table* (`worker_table.rs`: the runtime's columns, the same for
//! every executor) and, beside it, the executor's column `T` (what the executor running on
//! the pool keeps per worker). Threads are spawned and joined here; what they run is
//! [`super::worker`]'s loop.
//!
//! **Resizing.** The table has a row for the most workers the pool may ever have (its
//! *capacity*, [`crate::ActorSystemBuilder::max_workers`]); workers `0..len` run. Delisle's
//! runtime reallocates its arrays under the write lock; here they are made once at their largest
//! (the runtime's columns) or as first used (the executor's, and the event fds), so a resize
//! only moves the boundary `len` and what the executors keep per worker, and no reference into
//! a row can dangle. A resize ([`Pool::add`], [`Pool::remove`]) takes the pool's resize mutex
//! (resizes and shutdown one at a time), then the write side of the [`ResizeLock`], under
//! which it changes `len`, each row's state and the executor's arrangement ([`Unit::resized`]);
//! then, outside the lock, it wakes whoever must look again ([`Unit::after_resize`]). Rows
//! removed are *leaving*: their worker finishes what it runs, sees it at the top of its loop,
//! and under its read lock hands what it holds to the others ([`Unit::leave`], and its
//! fork/join leftovers to the common queue), marks the row *exited* and ends. A row added back
//! before its worker saw that it was leaving simply keeps its thread.
//!
//! **Compaction** (`compaction.rs`) moves `len` below `limit`, the most workers that may run:
//! a *deactivated* row is removed as above, but its worker, once it has handed over what it
//! held, parks (*dormant*) instead of ending, until an activation or an add makes it active
//! again, a removal makes it leaving, or the system stops.
//!
//! A dormant row gets its thread only when it is first needed: rows `0..=len` have one (the
//! active ones and the next), and so has the first dormant row, which keeps compaction's
//! watch (`WorkerTable::watch_row`, `worker::dormant`; row `len` unless that row was
//! deactivated inside a behaviour and has not parked yet); the others start theirs when an
//! activation or an add reaches them. A system built with `workers(64)` on a small machine
//! starts two threads, not 64, until its load asks for more.
//!
//! Invariants:
//! - rows `0..len` are *active* and each has a running thread (or, inside an add's or an
//!   activation's write section, one about to be let through its start gate); rows
//!   `len..limit` are suspending or dormant, row `len` with a thread, the others with a
//!   thread or none (never active: they hold nothing); a row `>= limit` is unused, leaving, or
//!   exited; `len`, `limit` and the row states change only under the write lock,
//!   `1 <= len <= limit`;
//! - a row's state goes leaving → exited and suspending → dormant only on its own thread,
//!   inside its read section, so a resize sees a row's state stable while it holds the write
//!   lock;
//! - executor rows `0..created` exist (made before `len` first covered them, published by the
//!   Release store of `len`); nothing indexes a row that never was active.

use super::compaction::{self, Compaction, Mode, Pace};
use super::counters::Counters;
use super::idle::{Benaphore, IdleSleep};
use super::resize::ResizeLock;
use super::tasks::TaskRow;
use super::worker::{Ended, Unit};
use super::worker_table::{
    Slot, WorkerTable, ACTIVE, CANCELLED, DORMANT, EXITED, LEAVING, STARTING, SUSPENDING, UNUSED,
};
use crate::runtime::loom::sync::atomic::{fence, AtomicBool, AtomicU8, AtomicUsize, Ordering};
use crossbeam_deque::Injector;
use crossbeam_utils::CachePadded;
use std::fmt;
use std::io;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// The most workers a pool may have ([`crate::ActorSystemBuilder::max_workers`] is refused
/// above it).
pub const MAX_WORKERS: usize = 1024;

/// Why the number of workers cannot change as asked. Nothing changed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResizeError {
    /// Removing `asked` of `workers` workers would leave none (at least one must run).
    TooFew {
        /// Workers running.
        workers: usize,
        /// Workers asked to remove.
        asked: usize,
    },
    /// Adding `asked` to `workers` workers would pass `max`.
    TooMany {
        /// Workers running.
        workers: usize,
        /// Workers asked to add.
        asked: usize,
        /// The most this system may run.
        max: usize,
        /// What sets `max`, and how to raise it.
        why: String,
    },
    /// The system is stopping or stopped.
    Stopped,
    /// This system's workers cannot be resized (a caller-driven policy has none).
    Unsupported(&'static str),
    /// The operating system refused a thread or an event fd.
    Os(String),
    /// The scheduling policy panicked while building a new worker's data.
    Policy(String),
}

impl fmt::Display for ResizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooFew { workers, asked } => write!(
                f,
                "cannot remove {asked} worker(s): the system has {workers}, and at least one \
                 must remain (remove at most {})",
                workers.saturating_sub(1)
            ),
            Self::TooMany {
                workers,
                asked,
                max,
                why,
            } => write!(
                f,
                "cannot add {asked} worker(s): the system has {workers} and may have at most \
                 {max} ({why})"
            ),
            Self::Stopped => write!(
                f,
                "the system is stopping: its workers can no longer change"
            ),
            Self::Unsupported(why) => write!(f, "this system's workers cannot be resized: {why}"),
            Self::Os(e) => write!(f, "the operating system refused a worker: {e}"),
            Self::Policy(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ResizeError {}

/// What a resize holds: the threads by row, and whether resizing has ended (shutdown).
struct Threads {
    rows: Vec<Option<JoinHandle<()>>>,
    /// What a new thread runs (`None` until [`Pool::spawn`], and after shutdown took the
    /// threads: no resize then).
    body: Option<Arc<dyn Fn(usize) + Send + Sync>>,
}

/// A pool of worker threads and its worker table: the runtime's columns ([`WorkerTable`], reached
/// through `Deref`) and the executor's (`T`), one row per worker.
pub(crate) struct Pool<T> {
    table: WorkerTable,
    /// (The once-flag on the same line as its row: one line per access.)
    data: Box<[CachePadded<OnceLock<T>>]>,
    /// The resize mutex (resizes and shutdown one at a time) and the threads.
    threads: Mutex<Threads>,
    /// Set when shutdown takes the threads (read without the resize mutex).
    stopping: AtomicBool,
    /// Signalled when a leaving worker has exited (a separate lock: an exiting worker must
    /// never wait for a resize, which may be joining it).
    exits: Mutex<()>,
    exited_cv: Condvar,
}

impl<T: fmt::Debug> fmt::Debug for Pool<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool").field("table", &self.table).finish()
    }
}

impl<T> std::ops::Deref for Pool<T> {
    type Target = WorkerTable;

    #[inline]
    fn deref(&self) -> &WorkerTable {
        &self.table
    }
}

impl<T> Pool<T> {
    /// A table of `capacity` rows of which the first `workers` are active, worker `i`'s
    /// executor data made by `data(i)`. No thread runs yet (see [`Self::spawn`]).
    pub(crate) fn new(
        workers: usize,
        capacity: usize,
        stats_on: bool,
        compaction: Mode,
        cpus: usize,
        mut data: impl FnMut(usize) -> T,
    ) -> io::Result<Self> {
        assert!(workers <= capacity);
        // With compaction, one worker starts active; the others start dormant (their threads
        // start when first needed, and park) and are activated as the load needs them.
        let active = compaction::starting(compaction, workers);
        let slots: Box<[_]> = (0..capacity)
            .map(|i| {
                CachePadded::new(Slot {
                    sleep: CachePadded::new(Benaphore::unopened()),
                    state: AtomicU8::new(if i < active {
                        ACTIVE
                    } else if i < workers {
                        DORMANT
                    } else {
                        UNUSED
                    }),
                    counters: CachePadded::new(Counters::default()),
                    row: TaskRow::default(),
                    pace: CachePadded::new(Pace::default()),
                })
            })
            .collect();
        for slot in &slots[..workers] {
            slot.sleep.open()?;
        }
        let rows: Box<[CachePadded<OnceLock<T>>]> = (0..capacity)
            .map(|_| CachePadded::new(OnceLock::new()))
            .collect();
        for (i, row) in rows[..workers].iter().enumerate() {
            let _ = row.set(data(i));
        }
        Ok(Self {
            table: WorkerTable {
                slots,
                len: CachePadded::new(AtomicUsize::new(active)),
                created: AtomicUsize::new(workers),
                lock: ResizeLock::new(capacity),
                idle: IdleSleep::new(capacity),
                stats_on,
                injector: Injector::new(),
                shown: CachePadded::new(AtomicUsize::new(0)),
                thieves: AtomicBool::new(true),
                closed: AtomicBool::new(false),
                limit: AtomicUsize::new(workers),
                compaction: Compaction::new(compaction, capacity, cpus),
            },
            data: rows,
            threads: Mutex::new(Threads {
                rows: (0..capacity).map(|_| None).collect(),
                body: None,
            }),
            stopping: AtomicBool::new(false),
            exits: Mutex::new(()),
            exited_cv: Condvar::new(),
        })
    }

    /// Worker `i`'s executor data.
    #[inline]
    pub(crate) fn data(&self, i: usize) -> &T {
        self.data[i]
            .get()
            .expect("a worker row is used only once it was active")
    }

    /// Row `i`'s executor data, if the row was ever made.
    pub(crate) fn data_if_made(&self, i: usize) -> Option<&T> {
        self.data[i].get()
    }

    /// The active workers' executor data, by index.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.data[..self.len()]
            .iter()
            .map(|d| d.get().expect("active rows exist"))
    }

    /// The runtime's half of the pool.
    #[inline]
    pub(crate) fn table(&self) -> &WorkerTable {
        &self.table
    }

    // --- Threads ---

    /// Starts one thread per active worker and one for the first dormant row (the others
    /// start theirs when first needed: see the module documentation), each running
    /// `body(index)`, and keeps `body` for the workers a resize adds or activates (so it must
    /// not own what owns the pool: give it a weak reference). On failure the threads already
    /// started are left running (the caller shuts the pool down and joins them).
    pub(crate) fn spawn(&self, body: impl Fn(usize) + Send + Sync + 'static) -> io::Result<()> {
        let body: Arc<dyn Fn(usize) + Send + Sync> = Arc::new(body);
        let mut t = self.threads.lock().unwrap_or_else(|e| e.into_inner());
        t.body = Some(body.clone());
        for i in 0..(self.len() + 1).min(self.limit()) {
            if t.rows[i].is_none() {
                t.rows[i] = Some(start_thread(i, body.clone(), None)?);
            }
        }
        Ok(())
    }

    /// Ends resizing and takes the handles of every thread started so far (to join them),
    /// with their rows.
    pub(crate) fn take_threads(&self) -> Vec<(usize, JoinHandle<()>)> {
        let mut t = self.threads.lock().unwrap_or_else(|e| e.into_inner());
        t.body = None;
        self.stopping.store(true, Ordering::SeqCst);
        drop(self.exits.lock().unwrap_or_else(|e| e.into_inner()));
        self.exited_cv.notify_all();
        t.rows
            .iter_mut()
            .enumerate()
            .filter_map(|(i, h)| h.take().map(|h| (i, h)))
            .collect()
    }

    // --- Resizing (Delisle's thesis, "Manual Resizing"; see the module documentation) ---

    /// Adds `k` workers: the most that may run goes from `limit` to `limit + k`, and every
    /// worker runs: rows deactivated by compaction (`len..limit`) are active again, and rows
    /// `limit..limit + k`, each made by `make(i)` the first time it is used, are started (or,
    /// for a row whose worker is still leaving, kept). Returns the new number of workers.
    pub(crate) fn add<U: Unit<Slot = T>>(
        &self,
        unit: &U,
        k: usize,
        make: impl Fn(usize) -> Result<T, ResizeError>,
    ) -> Result<usize, ResizeError> {
        let mut t = self.threads.lock().unwrap_or_else(|e| e.into_inner());
        let Some(body) = t.body.clone() else {
            return Err(ResizeError::Stopped);
        };
        // Once the system stops, workers leave their rows for the shutdown (not through a
        // removal): a removal and an add after that could mark such a row active again with no
        // thread, and the shutdown would wait for it for ever. (Under the resize mutex: a
        // stop that began during an earlier resize is seen here.)
        if unit.closed() {
            return Err(ResizeError::Stopped);
        }
        let (n, lim) = (self.len(), self.limit());
        let (unit_max, unit_why) = unit.max_workers();
        let cap = self.slots.len();
        let (max, why) = if cap <= unit_max {
            (
                cap,
                format!(
                    "the capacity it was built with; raise it with \
                     `ActorSystemBuilder::max_workers`, at most {MAX_WORKERS}"
                ),
            )
        } else {
            (unit_max, unit_why)
        };
        if lim + k > max {
            return Err(ResizeError::TooMany {
                workers: lim,
                asked: k,
                max,
                why,
            });
        }
        if k == 0 && n == lim {
            return Ok(lim);
        }
        // The new rows' data and event fds, before anyone may see them.
        for i in lim..lim + k {
            if self.data[i].get().is_none() {
                let row = make(i)?;
                let _ = self.data[i].set(row);
            }
            self.slots[i]
                .sleep
                .open()
                .map_err(|e| ResizeError::Os(e.to_string()))?;
        }
        // Threads whose workers exited are joined first (they only return now).
        for i in lim..lim + k {
            if self.slots[i].state.load(Ordering::Acquire) == EXITED {
                if let Some(h) = t.rows[i].take() {
                    join_one(h);
                }
            }
        }
        {
            let _w = self.lock.write();
            let mut started = Vec::new();
            let mut failed = None;
            // The new threads wait at a gate of their own (not in the table: a thread not yet
            // scheduled must not hold a pointer into a pool that a failed policy's abandoned
            // shutdown may free).
            let gate = Arc::new(AtomicU8::new(STARTING));
            // Deactivated rows that never had a thread (their state stays dormant until the
            // stores below, which the gate orders before the thread runs).
            for i in n..lim {
                if t.rows[i].is_some() {
                    continue;
                }
                match start_thread(i, body.clone(), Some(gate.clone())) {
                    Ok(h) => started.push((i, h)),
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            for i in (lim..lim + k).take_while(|_| failed.is_none()) {
                let state = self.slots[i].state.load(Ordering::Relaxed);
                if state == LEAVING {
                    continue; // its worker has not left yet: it stays
                }
                if let Some(h) = t.rows[i].take() {
                    // It exited after the joins above, inside its read section before ours.
                    join_one(h);
                }
                self.slots[i].state.store(STARTING, Ordering::Relaxed);
                match start_thread(i, body.clone(), Some(gate.clone())) {
                    Ok(h) => started.push((i, h)),
                    Err(e) => {
                        self.slots[i].state.store(UNUSED, Ordering::Relaxed);
                        failed = Some(e);
                        break;
                    }
                }
            }
            if let Some(e) = failed {
                // Nothing changes: the threads started end at their gate.
                gate.store(CANCELLED, Ordering::Release);
                for (i, h) in started {
                    join_one(h);
                    if i >= lim {
                        self.slots[i].state.store(UNUSED, Ordering::Relaxed);
                    }
                }
                return Err(ResizeError::Os(e.to_string()));
            }
            // Rows `n..lim` were deactivated (suspending or dormant): they run again.
            for i in n..lim + k {
                self.slots[i].state.store(ACTIVE, Ordering::Release);
            }
            for (i, h) in started {
                t.rows[i] = Some(h);
            }
            // (Written under the resize mutex only.)
            if self.created.load(Ordering::Relaxed) < lim + k {
                self.created.store(lim + k, Ordering::Relaxed);
            }
            self.limit.store(lim + k, Ordering::Release);
            self.len.store(lim + k, Ordering::Release);
            unit.resized(n, lim + k);
            // Last: the new threads run only once everything about them is in place.
            gate.store(ACTIVE, Ordering::Release);
        }
        drop(t);
        // A dormant worker parks on its benaphore: after the state stores, it sees them or
        // this wakes it (`WorkerTable::park`).
        fence(Ordering::SeqCst);
        for i in n..lim {
            self.wake_row(i);
        }
        unit.after_resize(n, lim + k);
        Ok(lim + k)
    }

    /// Removes `k` workers (rows `limit - k..limit`): the active ones finish what they run,
    /// hand over what they hold, and end; the deactivated ones end (those that never had a
    /// thread are exited at once). Waits for their threads
    /// unless called on a thread of the unit's system (a behaviour, a fork/join task, a
    /// detached actor: it may be one of them). Returns the new number of workers.
    pub(crate) fn remove<U: Unit<Slot = T>>(
        &self,
        unit: &U,
        k: usize,
    ) -> Result<usize, ResizeError> {
        self.remove_and(unit, k, !super::context::runs_for(unit.owner()))
    }

    /// [`Self::remove`], waiting for the removed threads only if `wait` (a model runs no worker
    /// thread to wait for).
    pub(crate) fn remove_and<U: Unit<Slot = T>>(
        &self,
        unit: &U,
        k: usize,
        wait: bool,
    ) -> Result<usize, ResizeError> {
        let t = self.threads.lock().unwrap_or_else(|e| e.into_inner());
        if t.body.is_none() || unit.closed() {
            return Err(ResizeError::Stopped);
        }
        let (n, lim) = (self.len(), self.limit());
        if k >= lim {
            return Err(ResizeError::TooFew {
                workers: lim,
                asked: k,
            });
        }
        if k == 0 {
            return Ok(lim);
        }
        let new_lim = lim - k;
        let new_len = n.min(new_lim);
        {
            let _w = self.lock.write();
            for i in new_lim..lim {
                // A row that never had a thread never ran: it holds nothing to hand over.
                let next = if t.rows[i].is_some() { LEAVING } else { EXITED };
                self.slots[i].state.store(next, Ordering::Relaxed);
            }
            self.limit.store(new_lim, Ordering::Release);
            if new_len != n {
                self.len.store(new_len, Ordering::Release);
                unit.resized(n, new_len);
            }
        }
        drop(t);
        // Ordered against a removed worker's check of its row after announcing itself idle
        // (Dekker: both sides fenced): it sees that it is removed, or this wakes it.
        fence(Ordering::SeqCst);
        for i in new_lim..lim {
            self.wake_row(i);
        }
        if new_len != n {
            unit.after_resize(n, new_len);
        }
        if wait {
            self.join_leaving(unit, new_lim..lim);
        }
        Ok(new_lim)
    }

    // --- Compaction (`compaction.rs`): deactivation and activation ---

    /// Deactivates the last active worker (row `len - 1`): as a removal, but its thread parks
    /// once it has handed over what it holds, and `limit` stays. Never waits: `None` if a
    /// resize or shutdown holds the resize mutex, the system is stopping, or one worker runs.
    /// Returns the number of active workers.
    pub(crate) fn deactivate<U: Unit<Slot = T>>(&self, unit: &U) -> Option<usize> {
        let t = self.threads.try_lock().ok()?;
        let n = self.len();
        if t.body.is_none() || unit.closed() || n <= 1 {
            return None;
        }
        {
            let _w = self.lock.write();
            self.slots[n - 1].state.store(SUSPENDING, Ordering::Relaxed);
            self.len.store(n - 1, Ordering::Release);
            unit.resized(n, n - 1);
        }
        drop(t);
        // As a removal's (Dekker against the worker's check after announcing itself idle).
        fence(Ordering::SeqCst);
        self.notify(n - 1);
        unit.after_resize(n, n - 1);
        Some(n - 1)
    }

    /// Activates up to `k` deactivated workers (rows `len..`, below `limit`): they are active
    /// again under the write lock, then woken. Never waits (`None` as for
    /// [`Self::deactivate`]). Returns the number of active workers.
    pub(crate) fn activate<U: Unit<Slot = T>>(&self, unit: &U, k: usize) -> Option<usize> {
        let mut t = self.threads.try_lock().ok()?;
        let (n, lim) = (self.len(), self.limit());
        let mut m = (n + k).min(lim);
        let body = t.body.clone()?;
        if unit.closed() || m == n {
            return None;
        }
        // Threads for the rows activated and the next one (the watch, when dormant) that have
        // none, held at a gate until the rows are in place. One the system refuses ends the
        // activation below it. (The gate is made only then: an activation of rows that have
        // their threads allocates nothing.)
        let mut gate: Option<Arc<AtomicU8>> = None;
        for i in n..(m + 1).min(lim) {
            if t.rows[i].is_some() {
                continue;
            }
            let g = gate.get_or_insert_with(|| Arc::new(AtomicU8::new(STARTING)));
            match start_thread(i, body.clone(), Some(g.clone())) {
                Ok(h) => t.rows[i] = Some(h),
                Err(_) => {
                    // Fewer rows, so that the next dormant one (the watch) has a thread: row
                    // `i - 1` had one or was just given one (row `n` always has one).
                    m = m.min(i.saturating_sub(1)).max(n);
                    break;
                }
            }
        }
        let open = |gate: &Option<Arc<AtomicU8>>| {
            if let Some(g) = gate {
                g.store(ACTIVE, Ordering::Release);
            }
        };
        if m == n {
            open(&gate);
            return None;
        }
        {
            let _w = self.lock.write();
            for i in n..m {
                let s = self.slots[i].state.load(Ordering::Relaxed);
                debug_assert!(s == SUSPENDING || s == DORMANT, "row {i} in state {s}");
                self.slots[i].state.store(ACTIVE, Ordering::Release);
            }
            self.len.store(m, Ordering::Release);
            unit.resized(n, m);
            open(&gate);
        }
        drop(t);
        // After the state stores: a parked worker sees them, or this wakes it. The first row
        // still dormant is woken too: it takes up the watch (`worker::dormant`).
        fence(Ordering::SeqCst);
        for i in n..m {
            self.wake_row(i);
        }
        if let Some(watch) = self.watch_row() {
            self.wake_row(watch);
        }
        unit.after_resize(n, m);
        Some(m)
    }

    /// Worker `row`'s loop ended (`how`): a resize waiting for it is told. A worker that
    /// ends otherwise than by leaving (the pool shuts down, or aborts) while its row is
    /// leaving marks the row exited (inside the row's read section, as every leaving → exited
    /// change). One that left marked its row exited itself, and must not touch the row again:
    /// a resize may have taken its handle since, added the row back with a new thread, and
    /// begun removing that one (the row leaving again is the new thread's; marked exited for
    /// it, that thread would never leave, and whoever joins it would wait for ever).
    pub(crate) fn ended(&self, row: usize, how: Ended) {
        let slot = &self.slots[row];
        if how == Ended::Other && slot.state.load(Ordering::Acquire) == LEAVING {
            let _section = self.lock.read(row);
            if slot.state.load(Ordering::Relaxed) == LEAVING {
                slot.state.store(EXITED, Ordering::Release);
            }
        }
        drop(self.exits.lock().unwrap_or_else(|e| e.into_inner()));
        self.exited_cv.notify_all();
    }

    /// Whether shutdown has taken the threads (no resize any more). Without the resize mutex:
    /// a removal waiting for its workers holds `exits`, which an exiting thread that an add
    /// joins under the resize mutex also takes.
    fn shutting_down(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// Waits until each of `rows` has exited (or was added back meanwhile), and joins the
    /// threads that exited.
    fn join_leaving<U: Unit<Slot = T>>(&self, unit: &U, rows: std::ops::Range<usize>) {
        let since = std::time::Instant::now();
        let mut g = self.exits.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let pending = rows
                .clone()
                .any(|i| self.slots[i].state.load(Ordering::Acquire) == LEAVING);
            if !pending || self.shutting_down() {
                // (Shutdown joins the threads itself.)
                break;
            }
            if unit.failed() && since.elapsed() >= Duration::from_secs(2) {
                // A failed policy may never hand a worker its leave request: the system
                // aborts, and its shutdown deals with the threads.
                break;
            }
            // Belt and braces: wake them again (a worker is notified only if it sleeps).
            for i in rows.clone() {
                self.notify(i);
            }
            g = self
                .exited_cv
                .wait_timeout(g, Duration::from_millis(10))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        drop(g);
        let mut t = self.threads.lock().unwrap_or_else(|e| e.into_inner());
        let handles: Vec<_> = rows
            .filter(|&i| self.slots[i].state.load(Ordering::Acquire) == EXITED)
            .filter_map(|i| t.rows[i].take())
            .collect();
        drop(t);
        handles.into_iter().for_each(join_one);
    }
}

/// Starts worker `i`'s thread; with a `gate`, it first waits for the gate to open (the add or
/// activation that starts it opens it once the rows are in place), or ends if the add
/// failed.
fn start_thread(
    i: usize,
    body: Arc<dyn Fn(usize) + Send + Sync>,
    gate: Option<Arc<AtomicU8>>,
) -> io::Result<JoinHandle<()>> {
    thread::Builder::new()
        .name(format!("actorium-worker-{i}"))
        .spawn(move || {
            if let Some(gate) = gate {
                loop {
                    match gate.load(Ordering::Acquire) {
                        STARTING => thread::yield_now(),
                        CANCELLED => return,
                        _ => break,
                    }
                }
            }
            body(i)
        })
}

fn join_one(h: JoinHandle<()>) {
    if h.join().is_err() {
        eprintln!("actorium: a worker thread panicked (an actorium bug; please report it)");
    }
}

/// Joins `threads`; returns how many ended by a panic (an actorium bug: worker loops catch
/// user panics), reporting each on standard error.
pub(crate) fn join_all(threads: Vec<(usize, JoinHandle<()>)>) -> usize {
    let mut panicked = 0;
    for (_, t) in threads {
        if t.join().is_err() {
            eprintln!("actorium: a worker thread panicked (an actorium bug; please report it)");
            panicked += 1;
        }
    }
    panicked
}

#[cfg(all(test, not(loom)))]
#[path = "pool_tests.rs"]
mod tests;
