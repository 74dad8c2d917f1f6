//! The worker pool: the worker table, the worker threads, and the idle sleep between them;
//! and live resizing ("Manual Resizing" in the Cforall runtime: Thierry Delisle, PhD thesis,
//! Waterloo 2022, chapter "Scheduling in practice").
//!
//! The *worker table* is the one place where per-worker state lives: one row per worker, whose
//! runtime columns (a [`Slot`]: its idle-sleep [`Benaphore`], its statistics [`Counters`], its
//! fork/join [`TaskRow`] (its task deque), its life-cycle state) live in the [`Crew`], the pool's
//! executor-independent half, and whose executor column `T` is what the executor running on
//! the pool keeps for it (a queue range and a steal timestamp for the message-centric executor,
//! a policy's worker data for the actor-centric one). (What is merely sized from the number of
//! workers at start stays with its owner: the message queues, whose count is the
//! message-centric executor's policy, and the sharding of the live-actor registry.) Threads are
//! spawned and joined here too; what they run is [`super::worker`]'s loop.
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
//! Invariants:
//! - rows `0..len` are *active* and each has a running thread (or, inside an add's write
//!   section, one about to be let through its start gate); a row `>= len` is unused, leaving,
//!   or exited; `len` and the row states change only under the write lock;
//! - a row's state goes leaving → exited only on its own thread, inside its read section, so a
//!   resize sees a row's state stable while it holds the write lock;
//! - executor rows `0..created` exist (made before `len` first covered them, published by the
//!   Release store of `len`); nothing indexes a row that never was active.

use super::idle::{Benaphore, IdleSleep};
use super::resize::{ReadGuard, ResizeLock};
use super::stats::{CounterValues, Counters};
use super::tasks::{JobRef, TaskRow};
use super::worker::Unit;
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

/// Row state: never used, or its thread joined.
const UNUSED: u8 = 0;
/// Row state: a thread was started for it and waits at its start gate.
const STARTING: u8 = 1;
/// Row state: counted in `len`; its worker runs.
const ACTIVE: u8 = 2;
/// Row state: removed; its worker has not yet seen it.
const LEAVING: u8 = 3;
/// Row state: its worker saw it was removed, handed over what it held, and ended its loop.
const EXITED: u8 = 4;
/// Row state: its thread was started for an add that failed: it ends at the gate.
const CANCELLED: u8 = 5;

/// The runtime's columns of one worker's row in the worker table.
#[derive(Debug)]
pub(crate) struct Slot {
    /// The worker's idle-sleep flag and event fd (read by every sender to the worker).
    sleep: CachePadded<Benaphore>,
    /// The row's life-cycle state (`ACTIVE`...), read by its worker at every turn.
    state: AtomicU8,
    /// The worker's statistics (written by the worker alone; a line of their own, so counting
    /// does not slow the senders reading `sleep`).
    counters: CachePadded<Counters>,
    /// The worker's fork/join row: its task deque, whether it shows tasks, its thread (after
    /// Java's fork/join work stealing: Doug Lea, "A Java Fork/Join Framework", 2000;
    /// `runtime/tasks`).
    pub(crate) row: TaskRow,
}

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

/// The runtime's half of a worker pool, the same for every executor (so code that is not
/// generic over the executor, such as fork/join, can reach it): the runtime's columns of the
/// worker table, the sleepers list, the resize lock, and the fork/join tasks' common queue.
#[derive(Debug)]
pub(crate) struct Crew {
    table: Box<[CachePadded<Slot>]>,
    /// Workers running: rows `0..len` (see the module invariants).
    len: CachePadded<AtomicUsize>,
    /// Rows ever active (their executor data and event fds exist).
    created: AtomicUsize,
    /// Delisle's readers-writer lock (see `resize.rs`).
    pub(crate) lock: ResizeLock,
    idle: IdleSleep,
    stats_on: bool,
    /// Fork/join tasks submitted from outside the pool (Java's fork/join's common queue).
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

/// What a resize holds: the threads by row, and whether resizing has ended (shutdown).
struct Threads {
    rows: Vec<Option<JoinHandle<()>>>,
    /// What a new thread runs (`None` until [`Pool::spawn`], and after shutdown took the
    /// threads: no resize then).
    body: Option<Arc<dyn Fn(usize) + Send + Sync>>,
}

/// A pool of worker threads and its worker table: the runtime's columns ([`Crew`], reached
/// through `Deref`) and the executor's (`T`), one row per worker.
pub(crate) struct Pool<T> {
    crew: Crew,
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
        f.debug_struct("Pool").field("crew", &self.crew).finish()
    }
}

impl<T> std::ops::Deref for Pool<T> {
    type Target = Crew;

    #[inline]
    fn deref(&self) -> &Crew {
        &self.crew
    }
}

impl<T> Pool<T> {
    /// A table of `capacity` rows of which the first `workers` are active, worker `i`'s
    /// executor data made by `data(i)`. No thread runs yet (see [`Self::spawn`]).
    pub(crate) fn new(
        workers: usize,
        capacity: usize,
        stats_on: bool,
        mut data: impl FnMut(usize) -> T,
    ) -> io::Result<Self> {
        assert!(workers <= capacity);
        let table: Box<[_]> = (0..capacity)
            .map(|i| {
                CachePadded::new(Slot {
                    sleep: CachePadded::new(Benaphore::unopened()),
                    state: AtomicU8::new(if i < workers { ACTIVE } else { UNUSED }),
                    counters: CachePadded::new(Counters::default()),
                    row: TaskRow::default(),
                })
            })
            .collect();
        for slot in &table[..workers] {
            slot.sleep.open()?;
        }
        let rows: Box<[CachePadded<OnceLock<T>>]> = (0..capacity)
            .map(|_| CachePadded::new(OnceLock::new()))
            .collect();
        for (i, row) in rows[..workers].iter().enumerate() {
            let _ = row.set(data(i));
        }
        Ok(Self {
            crew: Crew {
                table,
                len: CachePadded::new(AtomicUsize::new(workers)),
                created: AtomicUsize::new(workers),
                lock: ResizeLock::new(capacity),
                idle: IdleSleep::new(capacity),
                stats_on,
                injector: Injector::new(),
                shown: CachePadded::new(AtomicUsize::new(0)),
                thieves: AtomicBool::new(true),
                closed: AtomicBool::new(false),
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
    pub(crate) fn crew(&self) -> &Crew {
        &self.crew
    }

    // --- Threads ---

    /// Starts one thread per active worker, each running `body(index)`, and keeps `body` for
    /// the workers a resize adds (so it must not own what owns the pool: give it a weak
    /// reference). On failure the threads already started are left running (the caller shuts
    /// the pool down and joins them).
    pub(crate) fn spawn(&self, body: impl Fn(usize) + Send + Sync + 'static) -> io::Result<()> {
        let body: Arc<dyn Fn(usize) + Send + Sync> = Arc::new(body);
        let mut t = self.threads.lock().unwrap_or_else(|e| e.into_inner());
        t.body = Some(body.clone());
        for i in 0..self.len() {
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

    /// Adds `k` workers: rows `len..len + k`, each made by `make(i)` the first time it is
    /// used, started (or, for a row whose worker is still leaving, kept). Returns the new
    /// number of workers.
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
        let n = self.len();
        let (unit_max, unit_why) = unit.max_workers();
        let cap = self.table.len();
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
        if n + k > max {
            return Err(ResizeError::TooMany {
                workers: n,
                asked: k,
                max,
                why,
            });
        }
        if k == 0 {
            return Ok(n);
        }
        // The new rows' data and event fds, before anyone may see them.
        for i in n..n + k {
            if self.data[i].get().is_none() {
                let row = make(i)?;
                let _ = self.data[i].set(row);
            }
            self.table[i]
                .sleep
                .open()
                .map_err(|e| ResizeError::Os(e.to_string()))?;
        }
        // Threads whose workers exited are joined first (they only return now).
        for i in n..n + k {
            if self.table[i].state.load(Ordering::Acquire) == EXITED {
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
            for i in n..n + k {
                let state = self.table[i].state.load(Ordering::Relaxed);
                if state == LEAVING {
                    continue; // its worker has not left yet: it stays
                }
                if let Some(h) = t.rows[i].take() {
                    // It exited after the joins above, inside its read section before ours.
                    join_one(h);
                }
                self.table[i].state.store(STARTING, Ordering::Relaxed);
                match start_thread(i, body.clone(), Some(gate.clone())) {
                    Ok(h) => started.push((i, h)),
                    Err(e) => {
                        self.table[i].state.store(UNUSED, Ordering::Relaxed);
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
                    self.table[i].state.store(UNUSED, Ordering::Relaxed);
                }
                return Err(ResizeError::Os(e.to_string()));
            }
            for i in n..n + k {
                self.table[i].state.store(ACTIVE, Ordering::Release);
            }
            for (i, h) in started {
                t.rows[i] = Some(h);
            }
            // (Written under the resize mutex only.)
            if self.created.load(Ordering::Relaxed) < n + k {
                self.created.store(n + k, Ordering::Relaxed);
            }
            self.len.store(n + k, Ordering::Release);
            unit.resized(n, n + k);
            // Last: the new threads run only once everything about them is in place.
            gate.store(ACTIVE, Ordering::Release);
        }
        drop(t);
        unit.after_resize(n, n + k);
        Ok(n + k)
    }

    /// Removes `k` workers (rows `len - k..len`): they finish what they run, hand over what
    /// they hold, and end. Waits for their threads unless called on a thread of the unit's
    /// system (a behaviour, a fork/join task, a detached actor: it may be one of them).
    /// Returns the new number of workers.
    pub(crate) fn remove<U: Unit<Slot = T>>(
        &self,
        unit: &U,
        k: usize,
    ) -> Result<usize, ResizeError> {
        self.remove_and(unit, k, !super::worker::runs_for(unit.owner()))
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
        let n = self.len();
        if k >= n {
            return Err(ResizeError::TooFew {
                workers: n,
                asked: k,
            });
        }
        if k == 0 {
            return Ok(n);
        }
        {
            let _w = self.lock.write();
            for i in n - k..n {
                self.table[i].state.store(LEAVING, Ordering::Relaxed);
            }
            self.len.store(n - k, Ordering::Release);
            unit.resized(n, n - k);
        }
        drop(t);
        // Ordered against a removed worker's check of its row after announcing itself idle
        // (Dekker: both sides fenced): it sees that it is removed, or this wakes it.
        fence(Ordering::SeqCst);
        for i in n - k..n {
            self.notify(i);
        }
        unit.after_resize(n, n - k);
        if wait {
            self.join_leaving(unit, n - k..n);
        }
        Ok(n - k)
    }

    /// Worker `row`'s loop ended (it left after a resize, or the pool shuts down): a row
    /// still leaving becomes exited (inside the row's read section, as every leaving → exited
    /// change), and a resize waiting for it is told.
    pub(crate) fn ended(&self, row: usize) {
        let slot = &self.table[row];
        if slot.state.load(Ordering::Acquire) == LEAVING {
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
                .any(|i| self.table[i].state.load(Ordering::Acquire) == LEAVING);
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
            .filter(|&i| self.table[i].state.load(Ordering::Acquire) == EXITED)
            .filter_map(|i| t.rows[i].take())
            .collect();
        drop(t);
        handles.into_iter().for_each(join_one);
    }
}

/// Starts worker `i`'s thread; with a `gate`, it first waits for the gate to open (the add
/// that starts it holds the write lock meanwhile), or ends if the add failed.
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

/// A worker of `pool` at the top of its loop, whose row is no longer active: if it is leaving,
/// hands over what it holds (`hand_over`, inside its read section, where no resize can run)
/// and marks its row exited; returns whether it must end. A row added back meanwhile is
/// active again: the worker goes on.
pub(crate) fn leave_if_removed(crew: &Crew, row: usize, hand_over: impl FnOnce()) -> bool {
    let slot = &crew.table[row];
    if slot.state.load(Ordering::Relaxed) == ACTIVE {
        return false;
    }
    let guard: ReadGuard<'_> = crew.lock.read(row);
    if slot.state.load(Ordering::Relaxed) != LEAVING {
        return false;
    }
    hand_over();
    slot.state.store(EXITED, Ordering::Release);
    drop(guard);
    true
}

impl Crew {
    /// Workers running (rows `0..len`).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    /// The most workers the pool may have (rows in the table).
    pub(crate) fn capacity(&self) -> usize {
        self.table.len()
    }

    /// How many rows were ever active (workers `0..rows()` may run, or have run, tasks).
    #[inline]
    pub(crate) fn rows(&self) -> usize {
        self.created.load(Ordering::Relaxed)
    }

    /// Rows ever active.
    fn created(&self) -> &[CachePadded<Slot>] {
        &self.table[..self.created.load(Ordering::Relaxed)]
    }

    /// Whether row `i` is active (its worker runs and is counted in `len`).
    #[inline]
    pub(crate) fn is_active(&self, i: usize) -> bool {
        self.table[i].state.load(Ordering::Relaxed) == ACTIVE
    }

    /// Rows whose worker was removed and has not yet left.
    pub(crate) fn leaving(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.created.load(Ordering::Relaxed))
            .filter(|&i| self.table[i].state.load(Ordering::Relaxed) == LEAVING)
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

    /// Every worker's counters (every row ever used: a removed worker's counts stay in the
    /// totals), and the number of workers now.
    pub(crate) fn counter_values(&self) -> (Vec<CounterValues>, usize) {
        let rows = self.created().iter().map(|s| s.counters.values()).collect();
        (rows, self.len())
    }

    // --- Idle sleep (see `runtime/idle/README.md` for the handshake) ---

    /// Idle side, step one: worker `i` announces itself idle.
    pub(crate) fn announce(&self, i: usize) {
        self.idle.announce(i, &self.table[i].sleep);
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
                self.table[i].sleep.sleep();
                true
            }
            Some(limit) => self.table[i].sleep.sleep_timeout(limit),
        }
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
        for slot in self.created() {
            slot.sleep.wake();
        }
    }

    /// Unparks every worker thread (the system is being dropped): one blocked in a wait gives
    /// up (`runtime::worker::own_system_aborting`) and goes back to its loop, which ends.
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
        for slot in self.table.iter() {
            slot.sleep.close();
        }
        for slot in self.table.iter() {
            slot.row.forget_thread();
        }
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
