//! Graceful shutdown (`ActorSystem::shutdown`, `shutdown_timeout`) on every executor.

mod common;

use actorium::{Actor, ActorSystem, Addr, Allocation, Context, Event, Receive, SystemHandle};
use common::{on_every_executor, watchdog, Gate};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// Never ends by itself; counts messages and its `stopped` hook; spawns a child on `Spawn`.
struct Server {
    got: Arc<AtomicUsize>,
    stopped: Arc<AtomicUsize>,
}
impl Actor for Server {
    fn stopped(&mut self) {
        self.stopped.fetch_add(1, Ordering::SeqCst);
    }
}
impl Receive<u32> for Server {
    fn receive(&mut self, _: u32, _: &mut Context<'_, Self>) -> Allocation {
        self.got.fetch_add(1, Ordering::SeqCst);
        Allocation::Nodelete
    }
}
struct Spawn;
/// Children's messages refused (only `Spawn` sends them).
static REFUSED: AtomicUsize = AtomicUsize::new(0);
impl Receive<Spawn> for Server {
    fn receive(&mut self, _: Spawn, ctx: &mut Context<'_, Self>) -> Allocation {
        // A child born while the system shuts down must be asked to end too.
        let child: Addr<Server> = ctx.spawn(Server {
            got: self.got.clone(),
            stopped: self.stopped.clone(),
        });
        // Refused if the shutdown asked the child to end first (allowed: it started during
        // the shutdown); counted, so that no message goes missing unnoticed.
        if child.send(7).is_err() {
            REFUSED.fetch_add(1, Ordering::SeqCst);
        }
        Allocation::Nodelete
    }
}

#[test]
fn shutdown_ends_100000_live_actors_after_their_queued_messages() {
    watchdog(300, || {
        on_every_executor(|_, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let (got, stopped) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
            let n = 100_000;
            for _ in 0..n {
                let a = system.spawn(Server {
                    got: got.clone(),
                    stopped: stopped.clone(),
                });
                a.send(1).unwrap();
                a.send(2).unwrap();
            }
            system.shutdown();
            // Queued before the stop request: delivered; then each stopped hook ran once.
            assert_eq!(got.load(Ordering::SeqCst), 2 * n);
            assert_eq!(stopped.load(Ordering::SeqCst), n);
        });
    });
}

#[test]
fn shutdown_also_ends_actors_spawned_while_it_runs() {
    watchdog(60, || {
        on_every_executor(|_, choose| {
            let dead = Arc::new(AtomicUsize::new(0));
            let d = dead.clone();
            let system = choose(ActorSystem::builder().workers(2))
                .on_event(move |e| {
                    if let Event::DeadLetters { count, .. } = e {
                        d.fetch_add(*count as usize, Ordering::SeqCst);
                    }
                })
                .build()
                .unwrap();
            let (got, stopped) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
            let parents: Vec<_> = (0..100)
                .map(|_| {
                    system.spawn(Server {
                        got: got.clone(),
                        stopped: stopped.clone(),
                    })
                })
                .collect();
            for p in &parents {
                p.send(Spawn).unwrap(); // queued before the stop request: runs, spawns
            }
            system.shutdown();
            assert_eq!(stopped.load(Ordering::SeqCst), 200, "parents and children");
            // A child's message is sent during the shutdown: usually the child gets it, but the
            // shutdown may have asked the child to end first (seen under valgrind); then it is
            // a dead letter or refused, counted, never lost.
            assert_eq!(
                got.load(Ordering::SeqCst)
                    + dead.load(Ordering::SeqCst)
                    + REFUSED.swap(0, Ordering::SeqCst),
                100,
                "each child's message delivered, counted as a dead letter, or refused"
            );
            for p in &parents {
                assert!(p.send(1).is_err(), "ended");
            }
        });
    });
}

/// Blocks in its behaviour until its gate opens (the test opens it once the shutdown's
/// deadline has passed; the stop that follows the time-out waits for it).
struct Stuck;
impl Actor for Stuck {}
impl Receive<Arc<Gate>> for Stuck {
    fn receive(&mut self, gate: Arc<Gate>, _: &mut Context<'_, Self>) -> Allocation {
        gate.wait();
        Allocation::Nodelete
    }
}

#[test]
fn shutdown_timeout_names_the_actors_that_did_not_end() {
    watchdog(60, || {
        common::on_every_threaded_executor(|_, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let (got, stopped) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
            for _ in 0..10 {
                system.spawn(Server {
                    got: got.clone(),
                    stopped: stopped.clone(),
                });
            }
            let gate = Arc::new(Gate::default());
            system.spawn(Stuck).send(gate.clone()).unwrap();
            let handle = system.handle();
            let stopping =
                std::thread::spawn(move || system.shutdown_timeout(Duration::from_millis(50)));
            // (Each probe spawned before the refusals began is one more actor, which may still
            // be alive at the deadline.)
            let probes = past_the_deadline(&handle);
            gate.open();
            let err = stopping.join().unwrap().unwrap_err();
            // The servers whose queue the stuck worker holds may not have ended either: which
            // of them did depends on placement and timing, so only bounds are checked.
            assert!(err.remaining >= 1, "{err}");
            assert!(err.actors.iter().any(|a| a.ends_with("Stuck")), "{err}");
            assert!(err.actors.len() <= 11 + probes, "{err}");
            assert!(err.to_string().contains(" x `"), "{err}");
            let ended = stopped.load(Ordering::SeqCst);
            assert!(
                ended <= 10,
                "each server's stopped hook runs at most once: {ended}"
            );
        });
    });
}

#[test]
fn shutdown_timeout_returns_ok_when_every_actor_ends_in_time() {
    watchdog(60, || {
        on_every_executor(|_, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let (got, stopped) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
            for _ in 0..1_000 {
                system
                    .spawn(Server {
                        got: got.clone(),
                        stopped: stopped.clone(),
                    })
                    .send(1)
                    .unwrap();
            }
            assert!(system.shutdown_timeout(Duration::from_secs(30)).is_ok());
            assert_eq!(got.load(Ordering::SeqCst), 1_000);
            assert_eq!(stopped.load(Ordering::SeqCst), 1_000);
        });
    });
}

/// Found by the random programs (`random_programs.rs`): on the actor-centric executors, a
/// send to an actor whose spawn the stopping system refused (its cell has no mailbox) panicked
/// in the runtime instead of returning the message; in a behaviour that panic ended the
/// sending actor and leaked the message.
#[test]
fn a_send_to_an_actor_spawned_after_the_stop_returns_the_message() {
    on_every_executor(|name, choose| {
        let system = choose(ActorSystem::builder().workers(1)).build().unwrap();
        let handle = system.handle();
        drop(system);
        let got = Arc::new(AtomicUsize::new(0));
        let late = handle.spawn(Server {
            got: got.clone(),
            stopped: Arc::new(AtomicUsize::new(0)),
        });
        assert!(!late.is_alive(), "{name}");
        assert_eq!(
            late.send(7u32).map_err(|e| e.into_inner()),
            Err(7),
            "{name}"
        );
        assert!(late
            .respawn(Server {
                got: got.clone(),
                stopped: got.clone()
            })
            .is_err());
        assert_eq!(got.load(Ordering::SeqCst), 0, "{name}");
    });
}

/// Counts the behaviours it starts; each waits for the gate to open.
struct Slow {
    started: Arc<AtomicUsize>,
    gate: Arc<Gate>,
}
impl Actor for Slow {}
impl Receive<u32> for Slow {
    fn receive(&mut self, _: u32, _: &mut Context<'_, Self>) -> Allocation {
        self.started.fetch_add(1, Ordering::SeqCst);
        self.gate.wait();
        Allocation::Nodelete
    }
}

/// A deadline is a deadline: once `shutdown_timeout`'s time is up and seen (or the system is
/// dropped), no queued behaviour starts; the call returns when the behaviours running then
/// end. Five behaviours are queued for one actor, the first one runs and waits on a gate; the
/// gate opens only once the system has stopped taking spawns (and, for the deadline, a while
/// after), and then no second behaviour may start, pooled or detached, on every executor that
/// runs on its own.
#[test]
fn no_queued_behaviour_starts_after_the_deadline() {
    for stop in ["shutdown_timeout", "drop"] {
        for detached in [false, true] {
            common::on_every_threaded_executor(|_, choose| {
                eprintln!("    ({stop}, detached: {detached})");
                watchdog(60, move || {
                    let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
                    let (started, gate) =
                        (Arc::new(AtomicUsize::new(0)), Arc::new(Gate::default()));
                    let slow = Slow {
                        started: started.clone(),
                        gate: gate.clone(),
                    };
                    let a = if detached {
                        system.spawn_detached(slow)
                    } else {
                        system.spawn(slow)
                    };
                    for i in 0..5 {
                        a.send(i).unwrap();
                    }
                    common::wait_for(30, "the first behaviour runs", || {
                        started.load(Ordering::SeqCst) == 1
                    });
                    let handle = system.handle();
                    let stopping = std::thread::spawn(move || match stop {
                        "drop" => drop(system),
                        _ => {
                            let err = system.shutdown_timeout(Duration::ZERO).unwrap_err();
                            assert!(err.actors.iter().any(|a| a.ends_with("Slow")), "{err}");
                        }
                    });
                    // (A drop stops the system at once: spawns refused is enough.)
                    if stop == "drop" {
                        common::wait_for(30, "the system stops taking spawns", || {
                            handle.try_spawn(Idle).is_err()
                        });
                    } else {
                        past_the_deadline(&handle);
                    }
                    gate.open();
                    stopping.join().unwrap();
                    assert_eq!(
                        started.load(Ordering::SeqCst),
                        1,
                        "a queued behaviour started after the deadline"
                    );
                });
            });
        }
    }
}

/// Returns once a `shutdown_timeout` begun on another thread is past its (short) deadline, as
/// far as a test can tell: spawns from outside are refused from the shutdown's start, and the
/// deadline is held against the actors on the shutdown's own thread after that, so 2 s more
/// pass (that thread would have to stall through all of them to look late). How many probe
/// spawns succeeded before the refusals began (each is one more live actor).
fn past_the_deadline(handle: &SystemHandle) -> usize {
    let mut probes = 0;
    common::wait_for(30, "the system stops taking spawns", || {
        let refused = handle.try_spawn(Idle).is_err();
        probes += usize::from(!refused);
        refused
    });
    std::thread::sleep(Duration::from_secs(2));
    probes
}

/// Does nothing.
struct Idle;
impl Actor for Idle {}

/// Requests a graceful shutdown from inside, when told to (twice: the second does nothing).
struct Admin;
impl Actor for Admin {}
impl Receive<&'static str> for Admin {
    fn receive(&mut self, cmd: &'static str, ctx: &mut Context<'_, Self>) -> Allocation {
        if cmd == "quit" {
            ctx.system().request_shutdown();
            ctx.system().request_shutdown();
        }
        Allocation::Nodelete
    }
}

/// A behaviour starts a graceful shutdown and returns at once; the owner's `stop` returns
/// once every actor has ended, each after the mail queued for it, with its `stopped` hook run.
#[test]
fn a_behaviour_requests_a_graceful_shutdown() {
    watchdog(120, || {
        on_every_executor(|_, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let (got, stopped) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
            let servers: Vec<_> = (0..100)
                .map(|_| {
                    system.spawn(Server {
                        got: got.clone(),
                        stopped: stopped.clone(),
                    })
                })
                .collect();
            for s in &servers {
                for n in 0..3 {
                    s.send(n).unwrap();
                }
            }
            system.spawn(Admin).send("quit").unwrap();
            // `stop` waits for actors to end by themselves: only the request ends these.
            system.stop();
            assert_eq!(got.load(Ordering::SeqCst), 300);
            assert_eq!(stopped.load(Ordering::SeqCst), 100);
        });
    });
}

/// Lives until asked to end; counts its end.
struct Lives(Arc<AtomicUsize>);
impl Actor for Lives {
    fn stopped(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A thread that holds a handle spawns actors (`try_spawn`, or `spawn_with`) in a loop while
/// `shutdown` runs, and until it has returned: the shutdown ends (a spawn from outside the
/// system is refused from its start, or the spawner would keep it going for ever), and every
/// actor the thread did spawn was asked to end (none slipped in unseen: `stop` would wait for
/// it for ever). Repeated, as the gap it guards is narrow.
#[test]
fn shutdown_refuses_and_asks_the_actors_a_thread_spawns_while_it_runs() {
    watchdog(120, || {
        common::on_every_threaded_executor(|_, choose| {
            for with in [false, true] {
                for _ in 0..10 {
                    let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
                    let (stopped, built) =
                        (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
                    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
                    let (handle, s, b, d) = (
                        system.handle(),
                        stopped.clone(),
                        built.clone(),
                        done.clone(),
                    );
                    let (first, started) = mpsc::channel();
                    let spawner = std::thread::spawn(move || {
                        let mut tries = 0usize;
                        while !d.load(Ordering::SeqCst) {
                            tries += 1;
                            if tries == 100 {
                                first.send(()).unwrap();
                            }
                            if with {
                                let (s, b) = (s.clone(), b.clone());
                                handle.spawn_with(move |_| {
                                    b.fetch_add(1, Ordering::SeqCst);
                                    Lives(s)
                                });
                            } else if handle.try_spawn(Lives(s.clone())).is_ok() {
                                b.fetch_add(1, Ordering::SeqCst);
                            }
                        }
                    });
                    started.recv().unwrap();
                    system.shutdown();
                    done.store(true, Ordering::SeqCst);
                    spawner.join().unwrap();
                    assert_eq!(
                        stopped.load(Ordering::SeqCst),
                        built.load(Ordering::SeqCst),
                        "each one spawned (with: {with}) asked, ended"
                    );
                }
            }
        });
    });
}

/// Sleeps 10 ms in each behaviour, counting them.
struct Sleeps(Arc<AtomicUsize>);
impl Actor for Sleeps {}
impl Receive<u32> for Sleeps {
    fn receive(&mut self, _: u32, _: &mut Context<'_, Self>) -> Allocation {
        self.0.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(10));
        Allocation::Nodelete
    }
}

/// On the caller-driven `Testing` policy too, `shutdown_timeout` drives the system only until
/// its deadline: 100 queued behaviours of 10 ms each do not all run within 50 ms.
#[test]
fn a_caller_driven_shutdown_stops_driving_at_its_deadline() {
    watchdog(60, || {
        let system = ActorSystem::builder()
            .policy(actorium::policy::Testing)
            .build()
            .unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        let a = system.spawn(Sleeps(ran.clone()));
        for i in 0..100 {
            a.send(i).unwrap();
        }
        let err = system
            .shutdown_timeout(Duration::from_millis(50))
            .unwrap_err();
        assert_eq!(err.remaining, 1, "{err}");
        let ran = ran.load(Ordering::SeqCst);
        assert!(
            ran < 100,
            "all {ran} queued behaviours ran past the deadline"
        );
    });
}

/// An actor ended with `DestroyMsg` and respawned, again and again, while a graceful shutdown
/// begins: the shutdown asks each actor once, and one it found ended (then respawned before
/// its end) was never asked, so `shutdown()` waited for it for ever. A respawn that sees the
/// shutdown begun asks the actor itself. (A stress test of a window a few instructions wide,
/// found by reading the code: it did not hit it on the code before the fix; it guards the
/// path.)
#[test]
fn a_respawn_racing_a_graceful_shutdown_does_not_keep_it_waiting() {
    watchdog(300, || {
        common::on_every_threaded_executor(|name, choose| {
            for round in 0..100 {
                let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
                // Every incarnation's `stopped` hook runs once: counted against incarnations.
                let stopped = Arc::new(AtomicUsize::new(0));
                let incarnations = Arc::new(AtomicUsize::new(1));
                let server = {
                    let stopped = stopped.clone();
                    move || Server {
                        got: Arc::new(AtomicUsize::new(0)),
                        stopped: stopped.clone(),
                    }
                };
                let a = system.spawn(server());
                let (started_tx, started) = mpsc::channel();
                let churn = {
                    let (a, incarnations) = (a.clone(), incarnations.clone());
                    std::thread::spawn(move || {
                        let mut first = true;
                        loop {
                            if a.send(actorium::DestroyMsg).is_ok() {
                                let _ = a.monitor().wait();
                            }
                            if a.respawn(server()).is_err() {
                                return;
                            }
                            incarnations.fetch_add(1, Ordering::SeqCst);
                            if first {
                                first = false;
                                started_tx.send(()).unwrap();
                            }
                        }
                    })
                };
                started.recv().unwrap();
                system.shutdown();
                churn.join().unwrap();
                assert!(!a.is_alive(), "{name}, round {round}");
                assert_eq!(
                    stopped.load(Ordering::SeqCst),
                    incarnations.load(Ordering::SeqCst),
                    "{name}, round {round}: a stopped hook not run, or run twice"
                );
            }
        });
    });
}
