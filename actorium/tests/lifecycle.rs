//! Allocation statuses, poison pills, termination, stop and drop, and bad input.

mod common;

use actorium::policy::{Testing, WorkSharing, WorkStealing};
/// The most message queues a system may have (refused above it).
const MAX_QUEUES: usize = 1 << 20;

use actorium::{
    Actor, ActorExit, ActorSystem, Addr, Allocation, ConfigError, Context, DeleteMsg, DestroyMsg,
    FinishedMsg, Receive, MAX_WORKERS,
};
use common::{on_every_executor, settle, watchdog, Counter};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Counts drops of its state.
#[derive(Debug)]
struct Tracked {
    drops: Arc<AtomicUsize>,
    got: u64,
}
impl Drop for Tracked {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}
impl Actor for Tracked {}
impl Receive<u64> for Tracked {
    fn receive(&mut self, n: u64, _: &mut Context<'_, Self>) -> Allocation {
        self.got += n;
        Allocation::Nodelete
    }
}
/// Ends the actor with the allocation inside.
struct End(Allocation);
impl Receive<End> for Tracked {
    fn receive(&mut self, e: End, _: &mut Context<'_, Self>) -> Allocation {
        e.0
    }
}

fn tracked(drops: &Arc<AtomicUsize>) -> Tracked {
    Tracked {
        drops: drops.clone(),
        got: 0,
    }
}

#[test]
fn config_errors_say_what_to_change() {
    watchdog(120, config_errors_say_what_to_change_body);
}

fn config_errors_say_what_to_change_body() {
    let e = ActorSystem::builder().workers(0).build().unwrap_err();
    assert!(matches!(e, ConfigError::ZeroWorkers));
    assert!(e.to_string().contains(".workers(n)` with n >= 1"), "{e}");

    let e = ActorSystem::builder()
        .workers(4)
        .queues(3)
        .build()
        .unwrap_err();
    assert!(matches!(
        e,
        ConfigError::TooFewQueues {
            queues: 3,
            workers: 4
        }
    ));
    assert!(e.to_string().contains("m >= 4"), "{e}");

    let e = ActorSystem::builder()
        .workers(2)
        .queues_per_worker(0)
        .build()
        .unwrap_err();
    assert!(matches!(e, ConfigError::ZeroQueuesPerWorker));
    assert!(e.to_string().contains("k >= 1"), "{e}");

    let e = ActorSystem::builder()
        .workers(MAX_WORKERS + 1)
        .build()
        .unwrap_err();
    assert!(matches!(e, ConfigError::TooManyWorkers { workers } if workers == MAX_WORKERS + 1));
    assert!(
        e.to_string().contains(&format!("n <= {MAX_WORKERS}")),
        "{e}"
    );
    for b in [
        ActorSystem::builder()
            .workers(2)
            .queues_per_worker(usize::MAX),
        ActorSystem::builder().workers(2).queues(MAX_QUEUES + 1),
    ] {
        let e = b.build().unwrap_err();
        assert!(matches!(e, ConfigError::TooManyQueues { queues } if queues > MAX_QUEUES));
        assert!(e.to_string().contains("lower `.queues`"), "{e}");
    }

    // Defaults: 16 queues per worker; one queue in total with one worker (the thesis's rule).
    let s = ActorSystem::builder().workers(3).build().unwrap();
    assert_eq!((s.workers(), s.queues()), (3, 48));
    s.stop();
    let s = ActorSystem::builder().workers(1).build().unwrap();
    assert_eq!(s.queues(), 1);
    s.stop();
    let s = ActorSystem::builder().workers(2).queues(2).build().unwrap();
    assert_eq!(s.queues(), 2);
    s.stop();

    // The actor-centric executor: max_throughput and the policy's own settings.
    let e = ActorSystem::builder()
        .policy(WorkSharing)
        .max_throughput(0)
        .build()
        .unwrap_err();
    assert!(matches!(e, ConfigError::ZeroMaxThroughput));
    assert!(e.to_string().contains("n >= 1"), "{e}");
    let e = ActorSystem::builder()
        .policy(WorkStealing::default().moderate(500, 0, Duration::from_micros(50)))
        .build()
        .unwrap_err();
    assert!(matches!(e, ConfigError::Policy(_)));
    assert!(e.to_string().contains("intervals >= 1"), "{e}");
    let e = ActorSystem::builder()
        .policy(WorkStealing::default())
        .workers(0)
        .build()
        .unwrap_err();
    assert!(matches!(e, ConfigError::ZeroWorkers));
    let s = ActorSystem::builder()
        .workers(3)
        .policy(WorkStealing::default())
        .build()
        .unwrap();
    assert!(s.handle().is_actor_centric());
    assert_eq!((s.workers(), s.queues()), (3, 0));
    s.stop();
    let s = ActorSystem::builder()
        .workers(3)
        .policy(Testing)
        .build()
        .unwrap();
    assert_eq!(
        s.workers(),
        1,
        "the testing policy runs on the calling thread"
    );
    s.stop();
}

#[test]
fn send_to_terminated_actor_returns_the_message() {
    watchdog(120, || {
        on_every_executor(|_name, ex| {
            let system = ex(ActorSystem::builder())
                .workers(2)
                .stats(true)
                .build()
                .unwrap();
            let drops = Arc::new(AtomicUsize::new(0));
            let a = system.spawn(tracked(&drops));
            a.send(DeleteMsg).unwrap();
            settle(&system, 30, "actor to terminate", || !a.is_alive());
            let err = a.send(77u64).unwrap_err();
            assert_eq!(err.into_inner(), 77);
            let err = a.send(String::from("not lost").len() as u64).unwrap_err();
            assert_eq!(err.0, 8);
            assert!(err.to_string().contains("terminated"));
            let stats = system.stop().unwrap();
            assert_eq!(drops.load(Ordering::SeqCst), 1);
            assert_eq!(
                stats.messages_sent, 1,
                "rejected sends are not counted as sent"
            );
            // After stop, sends to any actor of the system fail too, with the message back.
            assert_eq!(a.send(5u64).unwrap_err().0, 5);
        });
    });
}

#[test]
fn each_allocation_status() {
    watchdog(120, || {
        on_every_executor(|_name, ex| {
            let system = ex(ActorSystem::builder().workers(2)).build().unwrap();
            let drops = Arc::new(AtomicUsize::new(0));

            // Finished: the final value comes back through the join handle, not dropped.
            let (a, h) = system.spawn_joinable(tracked(&drops));
            a.send(40u64).unwrap();
            a.send(2u64).unwrap();
            a.send(End(Allocation::Finished)).unwrap();
            let fin = h.join().unwrap();
            assert_eq!(fin.got, 42);
            assert_eq!(
                drops.load(Ordering::SeqCst),
                0,
                "a finished actor's state is not dropped"
            );
            drop(fin);
            assert_eq!(drops.load(Ordering::SeqCst), 1);

            // Delete: state dropped; join reports it; later sends fail.
            let (a, h) = system.spawn_joinable(tracked(&drops));
            a.send(End(Allocation::Delete)).unwrap();
            assert_eq!(h.join().unwrap_err(), ActorExit::Deleted);
            assert_eq!(drops.load(Ordering::SeqCst), 2);
            assert!(a.send(1u64).is_err());
            let refused = a
                .respawn(tracked(&drops))
                .expect_err("a deleted actor cannot be respawned");
            drop(refused);
            assert_eq!(
                drops.load(Ordering::SeqCst),
                3,
                "the refused actor came back to us"
            );

            // Destroy: state dropped, cell kept: respawn reuses the same address.
            let (a, h) = system.spawn_joinable(tracked(&drops));
            a.send(5u64).unwrap();
            a.send(End(Allocation::Destroy)).unwrap();
            assert_eq!(h.join().unwrap_err(), ActorExit::Destroyed);
            assert_eq!(drops.load(Ordering::SeqCst), 4);
            let a2 = a.clone();
            a.respawn(Tracked {
                drops: drops.clone(),
                got: 1000,
            })
            .unwrap();
            a2.send(1u64).unwrap(); // every old address reaches the new incarnation
            a.send(End(Allocation::Finished)).unwrap();
            settle(&system, 30, "respawned actor to finish", || !a.is_alive());
            // Its join handle was used up by the first incarnation: nobody can take this final
            // state, so it is dropped at once (kept, it could hold the actor's own address and
            // keep the cell, and the whole executor, alive for ever).
            settle(
                &system,
                30,
                "the unjoinable final state to be dropped",
                || drops.load(Ordering::SeqCst) == 5,
            );

            // Nodelete keeps receiving; stop() waits for the poison pill.
            let b = system.spawn(tracked(&drops));
            for _ in 0..100 {
                b.send(1u64).unwrap();
            }
            b.send(DestroyMsg).unwrap();
            system.stop();
            assert_eq!(drops.load(Ordering::SeqCst), 6, "b destroyed");
            drop((a, a2));
            assert_eq!(
                drops.load(Ordering::SeqCst),
                6,
                "nothing left to drop with the last address"
            );
        });
    });
}

#[test]
fn poison_pills_deliver_pending_messages_first() {
    watchdog(120, || {
        on_every_executor(|_name, ex| {
            let system = ex(ActorSystem::builder().workers(2)).build().unwrap();
            let drops = Arc::new(AtomicUsize::new(0));
            for pill in 0..3 {
                let (a, h) = system.spawn_joinable(tracked(&drops));
                for _ in 0..1000 {
                    a.send(1u64).unwrap();
                }
                match pill {
                    0 => a.send(DeleteMsg).unwrap(),
                    1 => a.send(DestroyMsg).unwrap(),
                    _ => a.send(FinishedMsg).unwrap(),
                }
                match (pill, h.join()) {
                    (0, Err(ActorExit::Deleted)) | (1, Err(ActorExit::Destroyed)) => {}
                    (2, Ok(t)) => assert_eq!(t.got, 1000),
                    (p, r) => panic!("pill {p}: unexpected {:?}", r.map(|t| t.got)),
                }
            }
            system.stop();
        });
    });
}

/// Panics on `Boom`; counts each `Ask` in the asker's counter.
#[derive(Debug)]
struct Fragile;
impl Actor for Fragile {}
struct Boom;
impl Receive<Boom> for Fragile {
    fn receive(&mut self, _: Boom, _: &mut Context<'_, Self>) -> Allocation {
        panic!("boom (this panic is expected by the test)");
    }
}
struct Ask(Arc<AtomicU64>);
impl Receive<Ask> for Fragile {
    fn receive(&mut self, a: Ask, _: &mut Context<'_, Self>) -> Allocation {
        a.0.fetch_add(1, Ordering::SeqCst);
        Allocation::Nodelete
    }
}

#[test]
fn panicking_behaviour_terminates_only_its_actor() {
    watchdog(120, || {
        on_every_executor(|_name, ex| {
            // One worker: if the panic killed it, nothing else would ever run.
            let system = ex(ActorSystem::builder())
                .workers(1)
                .stats(true)
                .build()
                .unwrap();
            let (bad, h) = system.spawn_joinable(Fragile);
            let good = system.spawn(Fragile);
            let answers = Arc::new(AtomicU64::new(0));
            bad.send(Boom).unwrap();
            assert_eq!(h.join().unwrap_err(), ActorExit::Panicked);
            assert!(
                bad.send(Ask(answers.clone())).is_err(),
                "the panicked actor is terminated"
            );
            for _ in 0..10 {
                good.send(Ask(answers.clone())).unwrap();
            }
            settle(&system, 30, "the worker to keep running", || {
                answers.load(Ordering::SeqCst) == 10
            });
            good.send(DeleteMsg).unwrap();
            let stats = system.stop().unwrap();
            assert_eq!(stats.panics, 1);
        });
    });
}

#[test]
fn stop_waits_for_every_actor() {
    watchdog(180, || {
        on_every_executor(|_name, ex| {
            let system = ex(ActorSystem::builder().workers(2)).build().unwrap();
            let done = Arc::new(AtomicU64::new(0));
            for i in 0..1000 {
                system.spawn(Counter {
                    left: 1 + i % 50,
                    done: done.clone(),
                });
            }
            system.stop();
            assert_eq!(done.load(Ordering::SeqCst), 1000);
        });
    });
}

#[test]
fn drop_without_stop_neither_hangs_nor_leaks() {
    watchdog(120, || {
        on_every_executor(|_name, ex| {
            let drops = Arc::new(AtomicUsize::new(0));
            let addrs: Vec<Addr<Tracked>> = {
                let system = ex(ActorSystem::builder().workers(2)).build().unwrap();
                let addrs: Vec<_> = (0..100).map(|_| system.spawn(tracked(&drops))).collect();
                for a in &addrs {
                    for _ in 0..100 {
                        a.send(1u64).unwrap();
                    }
                }
                addrs
                // dropped here with every actor alive and messages queued
            };
            assert_eq!(
                drops.load(Ordering::SeqCst),
                100,
                "every live actor's state is dropped"
            );
            for a in &addrs {
                assert!(!a.is_alive());
                assert_eq!(a.send(9u64).unwrap_err().0, 9);
            }
        });
    });
}

#[test]
fn behaviours_spawn_and_several_systems_run_in_turn() {
    watchdog(180, || {
        on_every_executor(|_name, ex| {
            struct Parent(u32);
            impl Actor for Parent {}
            impl Receive<Arc<AtomicU64>> for Parent {
                fn receive(
                    &mut self,
                    c: Arc<AtomicU64>,
                    ctx: &mut Context<'_, Self>,
                ) -> Allocation {
                    c.fetch_add(1, Ordering::SeqCst);
                    if self.0 > 0 {
                        ctx.spawn(Parent(self.0 - 1)).send(c.clone()).unwrap();
                        ctx.spawn(Parent(self.0 - 1)).send(c).unwrap();
                    }
                    Allocation::Delete
                }
            }
            for round in 0..5 {
                let system = ex(ActorSystem::builder())
                    .workers(1 + round % 3)
                    .build()
                    .unwrap();
                let count = Arc::new(AtomicU64::new(0));
                system.spawn(Parent(10)).send(count.clone()).unwrap();
                system.stop();
                assert_eq!(count.load(Ordering::SeqCst), (1 << 11) - 1);
            }
            // Two systems at once, actors of one messaging actors of the other.
            let (s1, s2) = (
                ex(ActorSystem::builder()).build().unwrap(),
                ex(ActorSystem::builder()).build().unwrap(),
            );
            let drops = Arc::new(AtomicUsize::new(0));
            let target = s2.spawn(tracked(&drops));
            struct Bridge(Addr<Tracked>);
            impl Actor for Bridge {}
            impl Receive<u64> for Bridge {
                fn receive(&mut self, n: u64, _: &mut Context<'_, Self>) -> Allocation {
                    self.0.send(n).unwrap();
                    Allocation::Delete
                }
            }
            s1.spawn(Bridge(target.clone())).send(3u64).unwrap();
            s1.stop();
            target.send(End(Allocation::Delete)).unwrap();
            s2.stop();
            assert_eq!(drops.load(Ordering::SeqCst), 1);
        });
    });
}

#[test]
fn idle_workers_sleep_and_wake() {
    watchdog(180, || {
        // Short idle phases, so the workers sleep between the sends below.
        let quick =
            WorkStealing::default()
                .aggressive(10, 2)
                .moderate(2, 1, Duration::from_micros(10));
        let builders = [
            ActorSystem::builder().spin_before_sleep(Duration::from_micros(10)),
            ActorSystem::builder().policy(quick),
            ActorSystem::builder().policy(WorkSharing),
        ];
        for b in builders {
            let system = b.workers(2).stats(true).build().unwrap();
            let drops = Arc::new(AtomicUsize::new(0));
            let a = system.spawn(tracked(&drops));
            let centric = system.handle().is_actor_centric();
            // The message-centric executor also counts the system calls that woke a worker.
            let seen = |s: &actorium::Stats| s.sleeps > 0 && (centric || s.wakeups > 0);
            // Gaps long enough for the workers to sleep between sends (usually the first few
            // do it; a loaded machine may need more).
            let t0 = std::time::Instant::now();
            let mut sent = 0;
            while sent < 20 || !seen(&system.stats().unwrap()) {
                assert!(
                    t0.elapsed() < Duration::from_secs(30),
                    "idle workers should sleep and sends wake them: {}",
                    system.stats().unwrap()
                );
                std::thread::sleep(Duration::from_millis(5));
                a.send(sent).unwrap();
                sent += 1;
            }
            a.send(DeleteMsg).unwrap();
            let s = system.stop().unwrap();
            assert!(seen(&s), "{s}");
            assert_eq!(s.messages_processed, sent + 1);
        }
    });
}

#[test]
fn started_runs_before_the_first_message() {
    watchdog(180, || {
        on_every_executor(|name, ex| {
            static VIOLATIONS: AtomicU64 = AtomicU64::new(0);
            static RECEIVED: AtomicU64 = AtomicU64::new(0);
            struct Child(bool);
            impl Actor for Child {
                fn started(&mut self, _: &mut Context<'_, Self>) {
                    self.0 = true;
                }
            }
            impl Receive<u32> for Child {
                fn receive(&mut self, _: u32, _: &mut Context<'_, Self>) -> Allocation {
                    if !self.0 {
                        VIOLATIONS.fetch_add(1, Ordering::SeqCst);
                    }
                    RECEIVED.fetch_add(1, Ordering::SeqCst);
                    Allocation::Delete
                }
            }
            /// Spawns children (with few queues, many land on its own, held queue) and sends to
            /// each at once, from inside a behaviour.
            struct Parent;
            impl Actor for Parent {}
            impl Receive<u32> for Parent {
                fn receive(&mut self, n: u32, ctx: &mut Context<'_, Self>) -> Allocation {
                    for i in 0..n {
                        ctx.spawn(Child(false)).send(i).unwrap();
                    }
                    Allocation::Delete
                }
            }
            RECEIVED.store(0, Ordering::SeqCst);
            for queues in [1, 2, 4, 32] {
                let b = ex(ActorSystem::builder()).workers(2.min(queues));
                // (Message queues exist on the message-centric executor only.)
                let b = if name == "message-centric" {
                    b.queues(queues)
                } else {
                    b
                };
                let system = b.build().unwrap();
                for _ in 0..4 {
                    system.spawn(Parent).send(2000u32).unwrap();
                    // ...and from outside, too.
                    for i in 0..100 {
                        system.spawn(Child(false)).send(i).unwrap();
                    }
                }
                system.stop();
            }
            assert_eq!(RECEIVED.load(Ordering::SeqCst), 4 * 4 * 2100);
            assert_eq!(
                VIOLATIONS.load(Ordering::SeqCst),
                0,
                "a message ran before `started`"
            );
        });
    });
}

#[test]
fn settings_meaningless_for_the_executor_are_refused() {
    use actorium::QueueStealing;
    let with_policy = || ActorSystem::builder().workers(1).policy(WorkSharing);
    for (setting, b) in [
        ("queues", with_policy().queues(4)),
        ("queues_per_worker", with_policy().queues_per_worker(4)),
        (
            "queue_stealing",
            with_policy().queue_stealing(QueueStealing::None),
        ),
        (
            "spin_before_sleep",
            with_policy().spin_before_sleep(Duration::ZERO),
        ),
        ("adaptive_spin", with_policy().adaptive_spin(false)),
    ] {
        let e = b.build().unwrap_err();
        assert!(
            matches!(e, ConfigError::NotForExecutor { setting: s, executor: "actor-centric" } if s == setting),
            "{setting}: {e:?}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains(setting) && msg.contains("message-centric executor only"),
            "{msg}"
        );
    }
    let e = ActorSystem::builder()
        .workers(1)
        .max_throughput(10)
        .build()
        .unwrap_err();
    assert!(
        matches!(
            e,
            ConfigError::NotForExecutor {
                setting: "max_throughput",
                executor: "message-centric"
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("`.policy(..)`"), "{e}");
}
