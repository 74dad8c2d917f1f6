//! Jobs never wait behind a long one while a worker could run them: not behind a behaviour
//! that joins on a long half (the fork/join hint stays up meanwhile), and not when a wake-up
//! was spent on another job. On every executor that runs on its own threads.

mod common;

use actorium::{Actor, ActorSystem, Allocation, Context, Receive};
use common::{on_every_threaded_executor, watchdog};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a behaviour below waits for the others before it gives up (a failure).
const PATIENCE: Duration = Duration::from_secs(10);

/// Waits (spinning politely) until `count` reaches `n`, at most [`PATIENCE`]; whether it did.
fn meet(count: &AtomicUsize, n: usize) -> bool {
    let deadline = Instant::now() + PATIENCE;
    while count.load(Ordering::SeqCst) < n {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::yield_now();
    }
    true
}

/// Counts itself in when its message runs.
struct Arrive(Arc<AtomicUsize>);
impl Actor for Arrive {}
impl Receive<()> for Arrive {
    fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
        self.0.fetch_add(1, Ordering::SeqCst);
        Allocation::Nodelete
    }
}

/// Joins on a first half that waits for `n` arrivals (a second half that a thief takes at
/// once); says whether they came, and that it is inside the join.
struct Joiner {
    arrived: Arc<AtomicUsize>,
    n: usize,
    inside: std::sync::mpsc::Sender<()>,
    met: std::sync::mpsc::Sender<bool>,
}
impl Actor for Joiner {}
impl Receive<()> for Joiner {
    fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
        let (arrived, n, inside) = (&self.arrived, self.n, &self.inside);
        let (met, ()) = actorium::join(
            || {
                inside.send(()).unwrap();
                meet(arrived, n)
            },
            || (),
        );
        self.met.send(met).unwrap();
        Allocation::Nodelete
    }
}

/// A behaviour joins on a long first half whose second half a thief took: mail to other
/// actors, some of it queued on the joining worker, still runs on the free one (work stealing
/// kept polling its own queues while the fork/join hint was up, and never stole them).
#[test]
fn mail_runs_while_a_behaviour_waits_in_a_join() {
    watchdog(120, || {
        on_every_threaded_executor(|name, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let arrived = Arc::new(AtomicUsize::new(0));
            let n = 8;
            let arrivals: Vec<_> = (0..n)
                .map(|_| system.spawn(Arrive(arrived.clone())))
                .collect();
            let (inside, inside_rx) = std::sync::mpsc::channel();
            let (met, met_rx) = std::sync::mpsc::channel();
            let joiner = system.spawn(Joiner {
                arrived: arrived.clone(),
                n,
                inside,
                met,
            });
            joiner.send(()).unwrap();
            inside_rx.recv().unwrap();
            // From outside: spread over the workers, the joining one included.
            for a in &arrivals {
                a.send(()).unwrap();
            }
            assert!(
                met_rx.recv().unwrap(),
                "{name}: mail waited behind the join"
            );
            system.shutdown();
        });
    });
}

/// Inside its message, counts itself in and waits for `n` in all.
struct Meet(Arc<AtomicUsize>, usize, std::sync::mpsc::Sender<bool>);
impl Actor for Meet {}
impl Receive<()> for Meet {
    fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
        self.0.fetch_add(1, Ordering::SeqCst);
        self.2.send(meet(&self.0, self.1)).unwrap();
        Allocation::Nodelete
    }
}

/// Two workers inside long messages, two asleep; two messages from outside that must run at
/// once land on the busy workers' queues back to back: the first wakes a sleeper, which must
/// pass the wake-up on for the second (a general notification hides the other sleepers until
/// the woken one retires, so the second sender saw nobody asleep). Rounds shift where the
/// messages land.
#[test]
fn two_jobs_from_outside_wake_two_sleepers() {
    watchdog(300, || {
        on_every_threaded_executor(|name, choose| {
            // (The message-centric executor also with every worker active from the start:
            // compaction activates workers for stuck mail, and would hide the lost wake-up.)
            let fixed = name == "message-centric";
            for (shift, compaction) in (0..4).map(|s| (s, true)).chain((0..4).map(|s| (s, false))) {
                if !compaction && !fixed {
                    continue;
                }
                let mut builder = choose(ActorSystem::builder().workers(4));
                if !compaction {
                    builder = builder.compaction(false);
                }
                let system = builder.build().unwrap();
                let count = Arc::new(AtomicUsize::new(0));
                let (tx, rx) = std::sync::mpsc::channel();
                // Every actor starts (and its start runs) before the workers fall asleep.
                let meets: Vec<_> = (0..4)
                    .map(|_| system.spawn(Meet(count.clone(), 4, tx.clone())))
                    .collect();
                for _ in 0..shift {
                    system.spawn(Arrive(Arc::new(AtomicUsize::new(0))));
                }
                // (Lets every worker fall asleep, which the failure needs; the outcome does
                // not depend on it.)
                std::thread::sleep(Duration::from_millis(50));
                for m in &meets[..2] {
                    m.send(()).unwrap();
                }
                while count.load(Ordering::SeqCst) < 2 {
                    std::thread::yield_now();
                }
                std::thread::sleep(Duration::from_millis(50));
                for m in &meets[2..] {
                    m.send(()).unwrap();
                }
                for _ in 0..4 {
                    assert!(
                        rx.recv().unwrap(),
                        "{name}, shift {shift}: a message waited"
                    );
                }
                system.shutdown();
            }
        });
    });
}
