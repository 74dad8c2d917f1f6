//! Compaction (`runtime/compaction.rs`): the number of active workers follows the load, between
//! one and `workers(n)`. What users rely on, through the public API: the counts they read, the
//! settings refused, parallel work that finds the workers it needs (a behaviour that can only
//! finish once another runs beside it never waits for ever), nothing lost, reordered or run
//! twice while workers are deactivated and activated thousands of times (the random mode of
//! the hidden `compaction_chaos` setting), during manual resizes, fork/join, and shutdown.

mod common;

use actorium::{
    Actor, ActorSystem, Allocation, ConfigError, Context, FinishedMsg, QueueStealing, Receive,
};
use common::checked::{send_from_outside, Node, Shared, ACTORS, OUTSIDE_THREADS};
use common::{wait_for, watchdog, Meeter};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};

/// Changes of mind the chaos tests wait for (fewer in an unoptimised build, which CI runs).
const CHANGES: u64 = if cfg!(debug_assertions) { 30 } else { 100 };

/// A system whose workers are deactivated and activated at random, one window after another.
fn chaotic(workers: usize) -> actorium::ActorSystemBuilder {
    ActorSystem::builder()
        .workers(workers)
        .tune("compaction_chaos=1")
        .expect("a known setting")
}

#[test]
fn workers_is_the_most_that_run_and_active_workers_those_running_now() {
    watchdog(60, || {
        let system = ActorSystem::builder().workers(4).build().unwrap();
        assert_eq!(system.workers(), 4);
        // One worker starts active; the others are activated when work needs them.
        assert_eq!(system.active_workers(), 1);
        // An add makes every worker active (compaction may deactivate them again later).
        assert_eq!(system.add_workers(1).unwrap(), 5);
        assert_eq!(system.workers(), 5);
        assert!(system.active_workers() >= 1 && system.active_workers() <= 5);
        // A removal lowers the most; the active ones never exceed it.
        assert_eq!(system.remove_workers(3).unwrap(), 2);
        assert_eq!(system.workers(), 2);
        assert!(system.active_workers() <= 2);
        let err = system.remove_workers(2).unwrap_err();
        assert!(err.to_string().contains("the system has 2"), "{err}");
        system.stop();
    });
}

#[test]
fn compaction_off_keeps_every_worker_active() {
    watchdog(60, || {
        let system = ActorSystem::builder()
            .workers(3)
            .compaction(false)
            .stats(true)
            .build()
            .unwrap();
        assert_eq!(system.active_workers(), 3);
        let stats = system.stop().unwrap();
        assert_eq!(stats.active_workers, 3);
        assert_eq!(stats.worker_activations + stats.worker_deactivations, 0);
    });
}

#[test]
fn compaction_on_the_actor_centric_executor_is_refused() {
    let err = ActorSystem::builder()
        .policy(actorium::policy::WorkStealing::default())
        .compaction(true)
        .build()
        .unwrap_err();
    assert!(
        matches!(
            err,
            ConfigError::NotForExecutor {
                setting: "compaction",
                ..
            }
        ),
        "{err}"
    );
    // Off is what it does anyway.
    ActorSystem::builder()
        .policy(actorium::policy::WorkStealing::default())
        .compaction(false)
        .build()
        .unwrap()
        .stop();
}

/// Work that needs every worker at once gets them, however few were active: actors whose
/// behaviours meet at a barrier (the first spawns of a system go to separate queues), and
/// fork/join tasks that do (a scope's caller may run one of them itself).
#[test]
fn work_that_needs_every_worker_at_once_gets_them() {
    watchdog(120, || {
        for workers in [2, 3, 4] {
            let system = ActorSystem::builder()
                .workers(workers)
                .stats(true)
                .build()
                .unwrap();
            let barrier = Arc::new(Barrier::new(workers));
            let done = Arc::new(AtomicU64::new(0));
            for _ in 0..workers {
                system
                    .spawn(Meeter(barrier.clone(), done.clone()))
                    .send(())
                    .unwrap();
            }
            let t0 = std::time::Instant::now();
            while done.load(Ordering::SeqCst) != workers as u64 {
                assert!(
                    t0.elapsed().as_secs() < 60,
                    "{workers} workers: {} of the behaviours met; {}",
                    done.load(Ordering::SeqCst),
                    system.stats().unwrap()
                );
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            // Then tasks, after the system had time to go quiet (and compact).
            let barrier = Barrier::new(workers);
            let met = AtomicU64::new(0);
            system.handle().scope(|s| {
                for _ in 0..workers {
                    s.spawn(|_| {
                        barrier.wait();
                        met.fetch_add(1, Ordering::SeqCst);
                    });
                }
            });
            assert_eq!(met.load(Ordering::SeqCst), workers as u64);
            let stats = system.stop().unwrap();
            assert!(stats.worker_activations > 0, "{stats}");
        }
    });
}

/// A child spawned by a behaviour that waits for it (an anti-pattern, but one users write):
/// the child runs on a worker activated for it.
#[test]
fn a_child_behind_its_waiting_parent_is_run_by_another_worker() {
    struct Parent(std::sync::mpsc::Sender<()>);
    impl Actor for Parent {}
    impl Receive<()> for Parent {
        fn receive(&mut self, _: (), ctx: &mut Context<'_, Self>) -> Allocation {
            let barrier = Arc::new(Barrier::new(2));
            let done = Arc::new(AtomicU64::new(0));
            ctx.spawn(Meeter(barrier.clone(), done.clone()))
                .send(())
                .unwrap();
            barrier.wait();
            self.0.send(()).unwrap();
            Allocation::Delete
        }
    }
    watchdog(60, || {
        let system = ActorSystem::builder().workers(2).build().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        system.spawn(Parent(tx)).send(()).unwrap();
        rx.recv().unwrap();
        system.stop();
    });
}

/// The delivery workload of `tests/delivery.rs` (outside threads and forwarding behaviours over
/// 64 actors) while workers are deactivated and activated at random every window, with each
/// stealing heuristic: exactly once, per-pair order, one behaviour at a time.
#[test]
fn deactivations_and_activations_keep_every_guarantee() {
    for (workers, stealing) in [
        (2, QueueStealing::LongestVictim),
        (3, QueueStealing::Random),
        (4, QueueStealing::None),
    ] {
        watchdog(300, move || {
            let system = chaotic(workers)
                .queue_stealing(stealing)
                .stats(true)
                .build()
                .unwrap();
            let shared = Shared::new();
            let (addrs, handles): (Vec<_>, Vec<_>) = (0..ACTORS)
                .map(|id| system.spawn_joinable(Node::new(id, shared.clone())))
                .unzip();
            assert!(shared.addrs.set(addrs.clone()).is_ok());
            // At least 20,000 messages per thread, and on until the controller has changed
            // its mind `CHANGES` times (or 20 s have passed: a loaded machine runs fewer
            // windows; the run must still see a few changes, checked below).
            let enough = Arc::new(AtomicBool::new(false));
            let outside_sent = std::thread::scope(|scope| {
                let (system, enough_w) = (&system, enough.clone());
                let watcher = scope.spawn(move || {
                    let start = std::time::Instant::now();
                    while start.elapsed().as_secs() < 20 {
                        let s = system.stats().unwrap();
                        if s.worker_activations + s.worker_deactivations >= CHANGES {
                            break;
                        }
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                    enough_w.store(true, Ordering::SeqCst);
                });
                let enough = enough.clone();
                let sent = send_from_outside(&addrs, move |n| {
                    n <= 20_000 || (!enough.load(Ordering::Relaxed) && n < 50_000_000)
                });
                watcher.join().unwrap();
                sent
            });
            let total = 2 * outside_sent.iter().flatten().sum::<u64>();
            wait_for(120, "all messages delivered", || {
                shared.delivered.load(Ordering::Relaxed) >= total
            });
            for a in &addrs {
                a.send(FinishedMsg).unwrap();
            }
            let finals: Vec<Node> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            let stats = system.stop().unwrap();
            shared.check(&finals, &outside_sent, total, "chaos");
            assert_eq!(stats.dead_letters, 0);
            assert!(
                stats.worker_activations + stats.worker_deactivations >= 5,
                "{workers} workers, {stealing:?}: the workers barely changed: {stats}"
            );
            assert_eq!(outside_sent.len(), OUTSIDE_THREADS);
        });
    }
}

/// Fork/join inside behaviours and from outside while workers come and go: every task runs
/// once and every join completes.
#[test]
fn fork_join_completes_while_workers_come_and_go() {
    fn sum(lo: u64, hi: u64) -> u64 {
        if hi - lo <= 64 {
            return (lo..hi).sum();
        }
        let mid = (lo + hi) / 2;
        let (a, b) = actorium::join(|| sum(lo, mid), || sum(mid, hi));
        a + b
    }
    struct Summer(Arc<AtomicU64>);
    impl Actor for Summer {}
    impl Receive<u64> for Summer {
        fn receive(&mut self, n: u64, ctx: &mut Context<'_, Self>) -> Allocation {
            let s = ctx.join(|| sum(0, n / 2), || sum(n / 2, n));
            self.0.fetch_add(s.0 + s.1, Ordering::SeqCst);
            Allocation::Nodelete
        }
    }
    watchdog(300, || {
        let system = chaotic(4).stats(true).build().unwrap();
        let total = Arc::new(AtomicU64::new(0));
        let summers: Vec<_> = (0..8)
            .map(|_| system.spawn(Summer(total.clone())))
            .collect();
        let n = 20_000u64;
        let mut rounds = 0u64;
        let start = std::time::Instant::now();
        loop {
            for s in &summers {
                s.send(n).unwrap();
            }
            rounds += 1;
            let expect = rounds * 8 * (n * (n - 1) / 2);
            wait_for(60, "every sum", || total.load(Ordering::SeqCst) == expect);
            // And from outside, on the system's workers.
            let (a, b) = system.handle().join(|| sum(0, n), || sum(n, 2 * n));
            assert_eq!(a + b, n * (2 * n - 1));
            let s = system.stats().unwrap();
            let changes = s.worker_activations + s.worker_deactivations;
            if rounds >= 20 && (changes >= CHANGES / 2 || start.elapsed().as_secs() >= 20) {
                assert!(changes >= 5, "the workers barely changed: {s}");
                break;
            }
        }
        // (The summers never end by themselves.)
        system.shutdown();
    });
}

/// Shutdown and drop end dormant workers as they end active ones (the watchdog fails a hang),
/// also while a manual resize and the controller race.
#[test]
fn shutdown_and_drop_end_dormant_workers() {
    watchdog(120, || {
        for i in 0..50 {
            let system = chaotic(4).build().unwrap();
            let done = Arc::new(AtomicU64::new(0));
            for _ in 0..4 {
                system
                    .spawn(common::Counter {
                        left: 1000,
                        done: done.clone(),
                    })
                    .send(())
                    .ok();
            }
            match i % 4 {
                0 => {
                    system.stop();
                    assert_eq!(done.load(Ordering::SeqCst), 4);
                }
                1 => {
                    let _ = system.add_workers(2);
                    let _ = system.remove_workers(3);
                    system.stop();
                }
                2 => drop(system),
                _ => {
                    let _ = system.remove_workers(2);
                    drop(system);
                }
            }
        }
    });
}
