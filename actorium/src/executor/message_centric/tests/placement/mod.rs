//! Placement on the message-centric executor (`README.md` of the executor, "Placement"),
//! watched through the public API and the executor's counters: a child starts on its
//! spawner's worker (rule 1) and mail that waits there behind a long behaviour is taken by an
//! idle worker (the rescue, rule 3), whichever stealing heuristic is on; actors that hand each
//! other messages move and merge (rule 2), a queue held by a long behaviour is split (rule 4),
//! spawns from outside come in runs (rule 5), and a stream's queue is held until its batch
//! grows (rule 7), each keeping order and one behaviour at a time. A test that waits for
//! something only another worker can make happen does so under a watchdog: without the rule
//! it checks, it hangs and fails. Every system here runs with compaction off
//! (`runtime/compaction.rs`): placement among a fixed set of active workers is what is watched;
//! compaction has tests of its own (`tests/compaction.rs`).

mod affinity;
mod balance;
mod batching;

use crate::{Actor, ActorSystem, Addr, Allocation, Context, QueueStealing, Receive};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// How long a behaviour may wait for another worker before the test gives up (a failure,
/// never a time the test relies on).
const GIVE_UP: Duration = Duration::from_secs(20);

/// Spins until `done()` or `GIVE_UP`; returns whether `done()` became true.
fn wait_for(done: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    while !done() {
        if start.elapsed() > GIVE_UP {
            return false;
        }
        std::hint::spin_loop();
    }
    true
}

struct Child {
    ran: Arc<AtomicUsize>,
}
impl Actor for Child {}
impl Receive<()> for Child {
    fn receive(&mut self, (): (), _: &mut Context<'_, Self>) -> Allocation {
        self.ran.fetch_add(1, Ordering::SeqCst);
        Allocation::Delete
    }
}

/// Spawns children one at a time, each time waiting in the same behaviour for the child to
/// run: the parent's worker never gets to its queues, so another worker must take them.
struct Parent {
    children: usize,
    report: mpsc::Sender<Result<(), String>>,
}
impl Actor for Parent {}
impl Receive<()> for Parent {
    fn receive(&mut self, (): (), ctx: &mut Context<'_, Self>) -> Allocation {
        let ran = Arc::new(AtomicUsize::new(0));
        let mut outcome = Ok(());
        for k in 0..self.children {
            let child: Addr<Child> = ctx.spawn(Child { ran: ran.clone() });
            child.send(()).unwrap();
            if !wait_for(|| ran.load(Ordering::SeqCst) > k) {
                outcome = Err(format!("child {k} never ran while its parent waited"));
                break;
            }
        }
        self.report.send(outcome).unwrap();
        Allocation::Delete
    }
}

/// A system on `workers` workers with the given heuristic, statistics on.
fn system(workers: usize, stealing: QueueStealing) -> ActorSystem {
    ActorSystem::builder()
        .compaction(false)
        .workers(workers)
        // (Placement as on a host with a CPU per worker, whatever this one has.)
        .tune(&format!("cpus={workers}"))
        .unwrap()
        .queue_stealing(stealing)
        .stats(true)
        .build()
        .unwrap()
}

/// Waits until the (new, idle) system's workers have each found nothing to do and slept for
/// good: nothing wakes an idle system, so each sleeps twice, the first time until its idle
/// spell has lasted `RELEASE_AFTER` (10 ms, when it gives its burst memory back), then until
/// notified; or once, if its spell had lasted that long before it first slept (a thread
/// preempted while it spun, on a loaded machine). So: every worker has slept, and no sleep
/// began for several times `RELEASE_AFTER`. (Sooner, a worker could still wake by itself,
/// look at the others' queues and rescue what the tests below need a notification to
/// rescue. A wait cut short only weakens the test, never fails it.)
fn all_asleep(system: &ActorSystem, workers: usize) {
    let mut last = (0, Instant::now());
    loop {
        let sleeps = system.stats().unwrap().sleeps;
        if sleeps >= 2 * workers as u64 {
            return;
        }
        if sleeps != last.0 {
            last = (sleeps, Instant::now());
        } else if sleeps >= workers as u64 && last.1.elapsed() > Duration::from_millis(50) {
            return;
        }
        std::thread::yield_now();
    }
}

fn stealing_heuristics() -> [QueueStealing; 2] {
    [QueueStealing::LongestVictim, QueueStealing::Random]
}

/// Runs `f` on its own thread and fails the test if it does not finish within `secs`: a hang
/// (say, a `stop()` that never returns) fails instead of blocking CI.
fn watchdog<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let t = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(v) => {
            t.join().unwrap();
            v
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            // The closure panicked: re-raise its panic here.
            std::panic::resume_unwind(t.join().unwrap_err())
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("watchdog: not finished after {secs} s (hang)")
        }
    }
}
