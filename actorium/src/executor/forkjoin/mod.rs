//! Fork/join on the actors' workers (after Java's fork/join work stealing: Doug Lea, "A Java
//! Fork/Join Framework", 2000): [`join`], [`scope`] with [`Scope::spawn`] and [`Scope::fork`]
//! handles, and their entry points from threads outside the pool. See `README.md` in this folder
//! for the helping rule and what a join inside a behaviour does to other actors; the deques and
//! stealing are the runtime's (`runtime/tasks`).

pub(crate) mod job;
pub(crate) mod latch;
mod scopes;

use scopes::Outside;
pub use scopes::{scope, Forked, Scope};

use crate::runtime::context::{publish_kept, Enter};
use crate::runtime::loom::{spin_hint, yield_now};
use crate::runtime::tasks::{self, JobRef, TaskWorker};
use crate::runtime::worker_table::WorkerTable;
use job::StackJob;
use latch::{LockLatch, SpinLatch};
use std::any::Any;
use std::cell::UnsafeCell;
use std::fmt;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A join pushes its second half only while the worker's deque holds fewer tasks than this;
/// beyond, the halves run in turn (see `README.md`, "Lazy task creation").
const LAZY_DEPTH: usize = 3;

/// A waiting joiner spins (probing and helping) this many rounds before it parks.
const SPIN_ROUNDS: u32 = 64;
/// The longest a parked joiner sleeps before it looks for work to help with again.
const MAX_NAP: Duration = Duration::from_millis(1);

/// Runs `a` and `b`, possibly in parallel, and returns both results.
///
/// On a worker of an actor system (inside a behaviour, or inside a task), `b` is pushed on the
/// worker's task deque, where an idle worker may take it, and `a` runs at once; then the worker
/// takes `b` back and runs it if nobody took it, or, if a thief did, helps that thief with the
/// subtasks `b` forks until `b` is done (the helping rule of the folder's `README.md`). On any
/// other thread, `join` runs `a` then `b` on the calling thread: use [`crate::SystemHandle::join`]
/// to run a computation on a system's workers from outside.
///
/// The halves may run one after the other on one worker (when its deque already holds tasks
/// for thieves, or no worker is free to take `b`): as with rayon's `join`, never make one half
/// wait for the other (a barrier, a channel); work that must run at once belongs in actors or
/// threads of its own.
///
/// A panic in `a` or `b` is resumed here, after both have finished or been dropped; the worker
/// survives.
///
/// ```
/// fn fib(n: u64) -> u64 {
///     if n < 2 {
///         return n;
///     }
///     let (a, b) = actorium::join(|| fib(n - 1), || fib(n - 2));
///     a + b
/// }
/// let system = actorium::ActorSystem::builder().workers(2).build().unwrap();
/// assert_eq!(system.join(|| fib(20), || fib(21)), (6765, 10946));
/// assert_eq!(fib(10), 55); // on a thread outside the pool: sequential
/// system.stop();
/// ```
#[inline]
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    // SAFETY: used during this call only, nested in the worker's loop.
    match unsafe { TaskWorker::current() } {
        Some(w) => join_on(w, a, b),
        None => (a(), b()),
    }
}

/// [`join`] on worker `w`.
#[inline]
fn join_on<A, B, RA, RB>(w: &TaskWorker<'_>, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    if w.len() >= LAZY_DEPTH {
        // Enough older (larger) tasks wait in the deque for thieves, who take the oldest
        // first: run both halves here without making `b` a task (lazy task creation).
        let rb = b();
        return (a(), rb);
    }
    let job = StackJob::new(b, SpinLatch::new(w.index()));
    let base = w.end();
    // (What the behaviour calling this sent before is queued before a thief can run `b`.)
    publish_kept();
    // SAFETY: `job` stays in this frame until it has run or was taken back: below, the normal
    // path either pops it back (then runs it here) or waits for its latch, and if `a` panics
    // the guard does the same while the frame unwinds.
    let jr = unsafe { job.as_job_ref() };
    w.push(jr);
    let guard = Unwinding {
        w,
        jr,
        base,
        latch: &job.latch,
    };
    let ra = a();
    std::mem::forget(guard);
    if take_back(w, jr, base) {
        return (ra, job.run_inline());
    }
    // A thief took `b`: help it until `b` is done.
    wait_for(
        w,
        &job.latch,
        jr.header().tag(),
        job.header().thief(),
        base,
        None,
    );
    (ra, job.take_result().into_value())
}

/// While `a` of a join unwinds: `b` must not outlive the frame it borrows from, so take it back
/// (it is then dropped unrun) or wait until its thief has finished it; then the panic goes on.
struct Unwinding<'a, 'w> {
    w: &'a TaskWorker<'w>,
    jr: JobRef,
    base: usize,
    latch: &'a SpinLatch,
}

impl Drop for Unwinding<'_, '_> {
    #[cold]
    fn drop(&mut self) {
        if !take_back(self.w, self.jr, self.base) {
            let h = self.jr.header();
            wait_for(self.w, self.latch, h.tag(), h.thief(), self.base, None);
        }
    }
}

/// Pops the deque down to position `base`: true when it reaches `jr` (still unrun: the caller
/// runs it); tasks above it (forked under the caller and left in the deque, a scope's) run on
/// the way. False when the deque ends at `base` without it (a thief took it).
#[inline(always)]
fn take_back(w: &TaskWorker<'_>, jr: JobRef, base: usize) -> bool {
    while w.end() > base {
        match w.pop() {
            Some(j) if j == jr => return true,
            // SAFETY: popped from our own deque: ours alone, unrun.
            Some(j) => unsafe { j.execute() },
            None => break,
        }
    }
    false
}

/// Waits until `latch` is set, helping meanwhile: with the tasks above position `base` in the
/// own deque
/// (forked under the waiting task), then, once the deque is empty, only with tasks forked under
/// the job or scope tagged `tag`, taken from its `thief` (or of any worker showing tasks, for a
/// scope). Parks after a while; the setter wakes it (and it looks again at least every
/// [`MAX_NAP`]).
/// A scope's waiter also runs the scope's tasks spawned from outside the pool (`outside`).
fn wait_for(
    w: &TaskWorker<'_>,
    latch: &SpinLatch,
    tag: usize,
    thief: Option<usize>,
    base: usize,
    outside: Option<&Outside>,
) {
    let mut rounds = 0u32;
    let mut nap = Duration::from_micros(50);
    while !latch.probe() {
        // (What this worker keeps back, sent before the fork or by a task it ran since, goes
        // out before it waits: the thief may be waiting for it.)
        publish_kept();
        // (Not when empty: once thieves took everything above `base`, a pop would take the
        // deque's lock only to find it empty.)
        if w.end() > base && !w.surely_empty() {
            if let Some(j) = w.pop() {
                // SAFETY: popped from our own deque: ours alone, unrun.
                unsafe { j.execute() };
                rounds = 0;
                continue;
            }
        }
        if w.surely_empty() {
            let got = match thief {
                Some(t) => w.steal_from(t, tag),
                None => ask_any(w, tag),
            };
            if let Some(j) = got {
                // Another worker's task runs as outside code, as it would on an idle worker:
                // it was forked by code that runs no behaviour here, and its sends must not
                // take this worker's local fast path, ahead of what that code sent before it
                // forked (through the lock).
                let _outside = Enter::outside();
                // SAFETY: handed to us alone by its owner, unrun.
                unsafe { w.run_stolen(j) };
                rounds = 0;
                continue;
            }
        }
        if let Some(j) = outside.and_then(Outside::pop) {
            // Spawned from a thread outside the pool: it runs as outside code (as above).
            let _outside = Enter::outside();
            // SAFETY: taken from the scope's list of tasks spawned from outside the pool: ours
            // alone (whoever pops a task runs it), unrun.
            unsafe { j.execute() };
            rounds = 0;
            continue;
        }
        rounds += 1;
        // Park only when there is nothing to help with and nothing in the own deque (older
        // tasks there may be private, which thieves cannot take from a parked owner), and the
        // thief shows no tasks (its next public one is ours to take).
        let idle_here = w.surely_empty()
            && match thief {
                Some(t) => !w.table().slot(t).row.shows_tasks(),
                None => !w.others_show_tasks(),
            };
        if rounds < SPIN_ROUNDS || !idle_here {
            if rounds % 8 == 0 {
                yield_now();
            } else {
                for _ in 0..32 {
                    spin_hint();
                }
            }
        } else if latch.sleepy() {
            // Parked, it stops showing an empty deque first (idle workers sleep unbounded
            // then, not only `SHOWN_NAP` at a time).
            w.unshow();
            park(nap);
            nap = (nap * 2).min(MAX_NAP);
        }
    }
    // Done. Thieves that took every task left the deque showing, and no pop said it was empty
    // (a scope's waiter never pops an empty deque): withdraw now, or every idle worker would
    // nap beside it until this worker next forks.
    if w.surely_empty() {
        w.emptied();
    }
}

/// Takes a task forked under `tag` from any worker that shows tasks.
fn ask_any(w: &TaskWorker<'_>, tag: usize) -> Option<JobRef> {
    let table = w.table();
    // Every row ever used: the thief may be a worker removed meanwhile (it finishes the job).
    (0..table.rows())
        .filter(|&v| v != w.index() && table.slot(v).row.shows_tasks())
        .find_map(|v| w.steal_from(v, tag))
}

#[cfg(not(any(loom, shuttle)))]
fn park(d: Duration) {
    std::thread::park_timeout(d);
}

#[cfg(any(loom, shuttle))]
fn park(_: Duration) {
    crate::runtime::loom::thread::park();
}

// --- From outside the pool ---

/// Runs `f` on a worker of `table` and blocks the calling thread (no worker of it) until it is
/// done; its panic is resumed here. If the workers exit meanwhile (the system stopped), the
/// caller runs what is left in the common queue: nothing submitted waits forever.
pub(crate) fn run_on<F, R>(table: &WorkerTable, f: F) -> R
where
    F: FnOnce() -> R + Send,
    R: Send,
{
    let job = StackJob::new(f, LockLatch::default());
    // SAFETY: `job` stays in this frame until its latch is set: we wait for it below.
    let jr = unsafe { job.as_job_ref() };
    // (A behaviour joining on another system's pool: what it kept back goes out first.)
    publish_kept();
    tasks::inject(table, jr);
    while !job.latch.wait_for(Duration::from_millis(10)) {
        // The workers have exited (the system was stopped meanwhile): nobody else will run
        // what the common queue holds; run it here, ours included (the others' submitters are
        // blocked like us, so their jobs are alive).
        if table.is_closed() {
            while let Some(j) = tasks::take_injected(table) {
                // SAFETY: taken from the common queue: ours alone, unrun.
                unsafe { j.execute() };
            }
        }
    }
    job.take_result().into_value()
}

/// Whether the calling thread is a worker of some pool.
pub(crate) fn on_worker() -> bool {
    // SAFETY: used during this call only.
    unsafe { TaskWorker::current() }.is_some()
}

/// Whether the calling thread is a worker of `table`.
pub(crate) fn on_table(table: &WorkerTable) -> bool {
    // SAFETY: used during this call only.
    unsafe { TaskWorker::current() }.is_some_and(|w| ptr::eq(w.table(), table))
}
