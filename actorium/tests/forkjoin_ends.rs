//! Fork/join combined with every way a system ends, on every executor and policy.
//!
//! Each program spawns actors whose behaviours run `ctx.join` and `ctx.scope` (tasks that
//! spawn tasks, and a fork handle that is joined), while outside threads send them work and
//! run `system.join` / `system.scope` themselves; then the system ends in one of six ways:
//! quiet (every result in) then `shutdown()`, poison then `stop()`, or `drop`; or with work
//! still in flight, `shutdown()`, `shutdown_timeout` or `drop`. Every end must return (a
//! watchdog), every result computed must be right, and every actor state must be dropped
//! once. Programs repeat many times per configuration: the hangs they guard against (a worker
//! that ends while still showing tasks, a scope whose child task waits in the deque of a
//! worker blocked in its policy) come once in tens of systems.
//!
//! `ACTORIUM_FJ_ROUNDS` sets the rounds per configuration (a soak: 200 or more).

mod common;

use actorium::policy::{WorkSharing, WorkStealing};
use actorium::{Actor, ActorSystem, ActorSystemBuilder, Allocation, Context, DeleteMsg};
use actorium::{QueueStealing, Receive};
use common::{fib, fib_seq, watchdog, Rng, TaskGiver};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

type Choice = fn(ActorSystemBuilder) -> ActorSystemBuilder;

/// Every executor and policy, with the settings that change how tasks are taken.
const EXECUTORS: &[(&str, Choice)] = &[
    ("message-centric, longest victim", |b| b),
    ("message-centric, random", |b| {
        b.queue_stealing(QueueStealing::Random)
    }),
    ("message-centric, no stealing", |b| {
        b.queue_stealing(QueueStealing::None)
    }),
    ("work stealing", |b| b.policy(WorkStealing::default())),
    ("work stealing, max_throughput(1)", |b| {
        b.policy(WorkStealing::default()).max_throughput(1)
    }),
    ("work sharing", |b| b.policy(WorkSharing)),
    ("work sharing, max_throughput(1)", |b| {
        b.policy(WorkSharing).max_throughput(1)
    }),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    QuietShutdown,
    QuietPoisonStop,
    QuietDrop,
    BusyShutdown,
    BusyShutdownTimeout,
    BusyDrop,
}

const ENDS: &[End] = &[
    End::QuietShutdown,
    End::QuietPoisonStop,
    End::QuietDrop,
    End::BusyShutdown,
    End::BusyShutdownTimeout,
    End::BusyDrop,
];

struct Counts {
    /// Behaviours that finished their fork/join work (each checked its results).
    done: AtomicU64,
    wrong: AtomicU64,
    states: AtomicU64,
    dropped: AtomicU64,
}

#[derive(Clone, Copy)]
enum Work {
    Join(u64),
    /// A scope of four tasks that each spawn one more, and a fork handle that is joined.
    Scope,
}

struct Forker(Arc<Counts>);

impl Drop for Forker {
    fn drop(&mut self) {
        self.0.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

impl Actor for Forker {}

/// What a scope of four tasks, each spawning one more, and a forked fib(12) must give.
fn scope_work<'a>(s: &actorium::Scope<'a>, count: &'a AtomicU64) -> u64 {
    for _ in 0..4 {
        s.spawn(move |s| {
            s.spawn(move |_| {
                count.fetch_add(1, Ordering::Relaxed);
            });
            count.fetch_add(1, Ordering::Relaxed);
        });
    }
    let h = s.fork(|| fib(12));
    h.join()
}

fn check_scope(f: impl FnOnce(&AtomicU64) -> u64) -> bool {
    let count = AtomicU64::new(0);
    let r = f(&count);
    r == fib_seq(12) && count.load(Ordering::Relaxed) == 8
}

impl Receive<Work> for Forker {
    fn receive(&mut self, w: Work, ctx: &mut Context<'_, Self>) -> Allocation {
        let ok = match w {
            Work::Join(n) => {
                let (a, b) = ctx.join(|| fib(n), || fib(n + 1));
                a == fib_seq(n) && b == fib_seq(n + 1)
            }
            Work::Scope => check_scope(|count| ctx.scope(|s| scope_work(s, count))),
        };
        let c = if ok { &self.0.done } else { &self.0.wrong };
        c.fetch_add(1, Ordering::SeqCst);
        Allocation::Nodelete
    }
}

/// One program: `actors` forkers, two outside threads sending them work and running
/// fork/join from outside, then `end`.
fn program(choose: Choice, workers: usize, end: End, seed: u64) {
    let system = choose(ActorSystem::builder().workers(workers))
        .build()
        .unwrap();
    let counts = Arc::new(Counts {
        done: AtomicU64::new(0),
        wrong: AtomicU64::new(0),
        states: AtomicU64::new(0),
        dropped: AtomicU64::new(0),
    });
    let actors: Vec<_> = (0..8)
        .map(|_| {
            counts.states.fetch_add(1, Ordering::SeqCst);
            system.spawn(Forker(counts.clone()))
        })
        .collect();
    let busy = matches!(
        end,
        End::BusyShutdown | End::BusyShutdownTimeout | End::BusyDrop
    );
    let stop = Arc::new(AtomicBool::new(false));
    let outside_wrong = Arc::new(AtomicU64::new(0));
    let per_thread = 24u64;
    let senders: Vec<_> = (0..2)
        .map(|t| {
            let (actors, handle, stop, wrong) = (
                actors.clone(),
                system.handle(),
                stop.clone(),
                outside_wrong.clone(),
            );
            std::thread::spawn(move || {
                let mut rng = Rng::new(seed * 31 + t);
                let mut sent = 0u64;
                let mut i = 0u64;
                while if busy {
                    !stop.load(Ordering::Relaxed)
                } else {
                    i < per_thread
                } {
                    i += 1;
                    let a = &actors[rng.below(actors.len())];
                    let w = if rng.below(2) == 0 {
                        Work::Join(8 + rng.below(6) as u64)
                    } else {
                        Work::Scope
                    };
                    if a.send(w).is_ok() {
                        sent += 1;
                    }
                    // Fork/join from outside now and then (runs on the workers, or on this
                    // thread once they are gone).
                    if i % 4 == 0 {
                        let ok = if rng.below(2) == 0 {
                            handle.join(|| fib(10), || fib(11)) == (fib_seq(10), fib_seq(11))
                        } else {
                            check_scope(|count| handle.scope(|s| scope_work(s, count)))
                        };
                        if !ok {
                            wrong.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                }
                sent
            })
        })
        .collect();
    let join_senders = |senders: Vec<std::thread::JoinHandle<u64>>| -> u64 {
        senders.into_iter().map(|t| t.join().unwrap()).sum()
    };
    match end {
        End::QuietShutdown | End::QuietPoisonStop | End::QuietDrop => {
            let sent = join_senders(senders);
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            while counts.done.load(Ordering::SeqCst) + counts.wrong.load(Ordering::SeqCst) < sent {
                assert!(std::time::Instant::now() < deadline, "work never finished");
                std::thread::sleep(Duration::from_micros(200));
            }
            match end {
                End::QuietShutdown => {
                    system.shutdown();
                }
                End::QuietPoisonStop => {
                    for a in &actors {
                        a.send(DeleteMsg).unwrap();
                    }
                    system.stop();
                }
                _ => drop(system),
            }
        }
        _ => {
            // Let some work start, then end with the senders still going.
            std::thread::sleep(Duration::from_millis(2));
            match end {
                End::BusyShutdown => {
                    system.shutdown();
                }
                End::BusyShutdownTimeout => {
                    let _ = system.shutdown_timeout(Duration::from_millis(5));
                }
                _ => drop(system),
            }
            stop.store(true, Ordering::Relaxed);
            join_senders(senders);
        }
    }
    drop(actors);
    assert_eq!(counts.wrong.load(Ordering::SeqCst), 0, "a wrong result");
    assert_eq!(
        outside_wrong.load(Ordering::SeqCst),
        0,
        "a wrong result outside"
    );
    assert_eq!(
        counts.dropped.load(Ordering::SeqCst),
        counts.states.load(Ordering::SeqCst),
        "an actor's state was not dropped once"
    );
}

fn rounds() -> u64 {
    std::env::var("ACTORIUM_FJ_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
}

/// One test per executor, so that they run in parallel and a hang names its executor.
fn every_end_on(executor: usize) {
    let (name, choose) = EXECUTORS[executor];
    for round in 0..rounds() {
        for workers in 1..=4 {
            for (e, &end) in ENDS.iter().enumerate() {
                let seed = round * 1000 + workers as u64 * 10 + e as u64;
                let r = std::panic::catch_unwind(|| {
                    watchdog(60, move || program(choose, workers, end, seed))
                });
                if let Err(e) = r {
                    eprintln!("{name}: {workers} workers, {end:?}, round {round}: failed");
                    std::panic::resume_unwind(e);
                }
            }
        }
    }
    eprintln!("{name}: {} programs", rounds() * 4 * ENDS.len() as u64);
}

#[test]
fn message_centric_longest_victim() {
    every_end_on(0);
}

#[test]
fn message_centric_random() {
    every_end_on(1);
}

#[test]
fn message_centric_no_stealing() {
    every_end_on(2);
}

#[test]
fn work_stealing() {
    every_end_on(3);
}

#[test]
fn work_stealing_one_job_per_turn() {
    every_end_on(4);
}

#[test]
fn work_sharing() {
    every_end_on(5);
}

#[test]
fn work_sharing_one_job_per_turn() {
    every_end_on(6);
}

/// Eight actors each run a scope whose four tasks each spawn one more, with a fork handle
/// joined, on work sharing with one job per turn. A worker that takes one of those tasks
/// between its jobs must not leave the child it spawned in its own deque and block in the
/// shared queue, where the scope's waiter cannot take it: the behaviour would never finish
/// (within the first few systems of this loop).
#[test]
fn scopes_in_behaviours_finish_on_work_sharing() {
    for round in 0..20u64 {
        watchdog(30, move || {
            let system = ActorSystem::builder()
                .workers(3)
                .policy(WorkSharing)
                .max_throughput(1)
                .build()
                .unwrap();
            let counts = Arc::new(Counts {
                done: AtomicU64::new(0),
                wrong: AtomicU64::new(0),
                states: AtomicU64::new(0),
                dropped: AtomicU64::new(0),
            });
            let actors: Vec<_> = (0..8)
                .map(|_| system.spawn(Forker(counts.clone())))
                .collect();
            // Enough jobs that every worker looks for tasks between them (it does every 64
            // turns while busy).
            for _ in 0..64 {
                for a in &actors {
                    a.send(Work::Scope).unwrap();
                }
            }
            while counts.done.load(Ordering::SeqCst) + counts.wrong.load(Ordering::SeqCst) < 512 {
                std::thread::sleep(Duration::from_micros(100));
            }
            assert_eq!(counts.wrong.load(Ordering::SeqCst), 0, "round {round}");
            system.shutdown();
        });
    }
}

/// A behaviour's scope whose one task is taken by the other worker: the scope's worker finds
/// its deque empty (a thief took the task) and waits on the task without popping again, so it
/// still shows tasks it no longer has. Then the system ends: the other worker must not wait in its
/// exit loop for those tasks, which would be for ever once the showing worker has exited.
#[test]
fn a_worker_whose_tasks_were_taken_does_not_keep_the_others_from_ending() {
    let mut taken = 0;
    for (name, choose) in EXECUTORS.iter().take(4) {
        for round in 0..5 {
            let choose = *choose;
            let r = std::panic::catch_unwind(|| {
                watchdog(30, move || {
                    let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
                    let (tx, rx) = std::sync::mpsc::channel();
                    system.spawn(TaskGiver(tx)).send(()).unwrap();
                    let taken = rx.recv().unwrap();
                    system.shutdown();
                    taken
                })
            });
            match r {
                Ok(t) => taken += usize::from(t),
                Err(e) => {
                    eprintln!("{name}, round {round}: failed");
                    std::panic::resume_unwind(e);
                }
            }
        }
    }
    assert!(taken > 0, "no task was ever taken by the other worker");
}
