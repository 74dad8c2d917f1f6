//! Supervision: restarts in place keep the address and the waiting mail; strategies restart
//! the right siblings; restart types; intensity and escalation; a supervised tree ends with
//! its supervisor and with graceful shutdown. On every executor.

mod common;

use actorium::{
    Actor, ActorSystem, Addr, Allocation, Ask, Context, DeleteMsg, Event, ExitReason, Receive,
    Restart, Strategy, Supervisor,
};
use common::{on_every_executor, settle, watchdog, ExecutorChoice, Gate};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(600);

/// A child that logs what it handles, panics on `Boom`, and knows its incarnation.
struct Child {
    incarnation: u32,
    log: Arc<Mutex<Vec<u32>>>,
    /// Set while an incarnation's state exists: a new one must never start before the old one
    /// is gone (its `stopped` hook run and its state dropped).
    live: Arc<AtomicBool>,
}

fn child_factory(
    log: Arc<Mutex<Vec<u32>>>,
) -> (impl FnMut() -> Child + Send + 'static, Arc<AtomicU32>) {
    let starts = Arc::new(AtomicU32::new(0));
    let s = starts.clone();
    let live = Arc::new(AtomicBool::new(false));
    let f = move || Child {
        incarnation: s.fetch_add(1, Ordering::SeqCst) + 1,
        log: log.clone(),
        live: live.clone(),
    };
    (f, starts)
}

impl Actor for Child {
    fn started(&mut self, _: &mut Context<'_, Self>) {
        assert!(
            !self.live.swap(true, Ordering::SeqCst),
            "an incarnation started while the previous one still existed"
        );
    }
}
impl Drop for Child {
    fn drop(&mut self) {
        self.live.store(false, Ordering::SeqCst);
    }
}

enum Msg {
    Log(u32),
    Boom,
    /// Blocks the worker until the sender is dropped or sends (lets a test queue mail behind).
    Gate(mpsc::Receiver<()>),
}
impl Receive<Msg> for Child {
    fn receive(&mut self, m: Msg, _: &mut Context<'_, Self>) -> Allocation {
        match m {
            Msg::Log(n) => self.log.lock().unwrap().push(n),
            Msg::Boom => panic!("boom"),
            Msg::Gate(rx) => {
                let _ = rx.recv();
            }
        }
        Allocation::Nodelete
    }
}
impl Receive<Ask<(), u32>> for Child {
    fn receive(&mut self, q: Ask<(), u32>, _: &mut Context<'_, Self>) -> Allocation {
        q.reply.send(self.incarnation).ok();
        Allocation::Nodelete
    }
}

fn is_testing(name: &str) -> bool {
    name.contains("testing")
}

fn system(choose: ExecutorChoice) -> ActorSystem {
    choose(ActorSystem::builder().workers(2)).build().unwrap()
}

/// The incarnation `c` answers with, once it answers `want` (a restart is asynchronous).
fn wait_incarnation(system: &ActorSystem, c: &Addr<Child>, want: u32) {
    let mut last = 0;
    settle(system, 60, "the expected incarnation", || {
        last = c.ask(()).unwrap().wait().unwrap();
        last == want
    });
}

#[test]
fn a_restart_keeps_the_address_and_the_waiting_mail() {
    watchdog(120, || {
        on_every_executor(|name, choose| {
            let system = system(choose);
            let sup = system.spawn(Supervisor::new(Strategy::OneForOne).intensity(10, LONG));
            let log = Arc::new(Mutex::new(Vec::new()));
            let (f, starts) = child_factory(log.clone());
            let child = sup.supervise(Restart::Permanent, f).unwrap();
            // Everything below is queued before the panic runs (behind a gate, or, on the
            // caller-driven executor, before anything runs): the mail after the panic waits
            // for the restart.
            let gate = (!is_testing(name)).then(|| {
                let (tx, rx) = mpsc::channel();
                child.send(Msg::Gate(rx)).unwrap();
                tx
            });
            for n in 0..3 {
                child.send(Msg::Log(n)).unwrap();
            }
            child.send(Msg::Boom).unwrap();
            for n in 3..1000 {
                child.send(Msg::Log(n)).unwrap();
            }
            drop(gate);
            // The same address reaches the second incarnation.
            assert_eq!(child.ask(()).unwrap().wait(), Ok(2), "{name}");
            assert_eq!(
                *log.lock().unwrap(),
                (0..1000).collect::<Vec<_>>(),
                "{name}"
            );
            assert_eq!(starts.load(Ordering::SeqCst), 2);
            system.shutdown();
            assert!(!child.is_alive());
        });
    });
}

#[test]
fn strategies_restart_the_right_siblings() {
    watchdog(120, || {
        on_every_executor(|name, choose| {
            for (strategy, want) in [
                (Strategy::OneForOne, [1, 2, 1]),
                (Strategy::OneForAll, [2, 2, 2]),
                (Strategy::RestForOne, [1, 2, 2]),
            ] {
                let system = system(choose);
                let sup = system.spawn(Supervisor::new(strategy).intensity(10, LONG));
                let log = Arc::new(Mutex::new(Vec::new()));
                let kids: Vec<Addr<Child>> = (0..3)
                    .map(|_| {
                        let (f, _) = child_factory(log.clone());
                        sup.supervise(Restart::Permanent, f).unwrap()
                    })
                    .collect();
                kids[1].send(Msg::Boom).unwrap();
                // The last child is restarted by every strategy but one-for-one; once it has
                // been (or, for one-for-one, once the failed one has been), every restart the
                // decision made is queued ahead of the asks below.
                wait_incarnation(&system, &kids[1], 2);
                wait_incarnation(&system, &kids[2], want[2]);
                let got: Vec<u32> = kids
                    .iter()
                    .map(|k| k.ask(()).unwrap().wait().unwrap())
                    .collect();
                assert_eq!(got, want, "{name}, {strategy:?}");
                system.shutdown();
            }
        });
    });
}

/// Ends as told.
struct Ender;
impl Actor for Ender {}
impl Receive<Ask<(), u32>> for Ender {
    fn receive(&mut self, q: Ask<(), u32>, _: &mut Context<'_, Self>) -> Allocation {
        q.reply.send(7).ok();
        Allocation::Nodelete
    }
}
struct PanicNow;
impl Receive<PanicNow> for Ender {
    fn receive(&mut self, _: PanicNow, _: &mut Context<'_, Self>) -> Allocation {
        panic!("ender panicked")
    }
}

#[test]
fn restart_types_decide_by_how_the_child_ended() {
    watchdog(120, || {
        on_every_executor(|name, choose| {
            let system = system(choose);
            let sup = system.spawn(Supervisor::new(Strategy::OneForOne).intensity(10, LONG));
            // (restart type, how it ends, restarted?, reason its monitor hears if not)
            let cases: [(Restart, bool, bool, ExitReason); 6] = [
                (Restart::Permanent, false, true, ExitReason::Normal),
                (Restart::Permanent, true, true, ExitReason::Normal),
                (Restart::Transient, false, false, ExitReason::PoisonPill),
                (Restart::Transient, true, true, ExitReason::Normal),
                (Restart::Temporary, false, false, ExitReason::PoisonPill),
                (
                    Restart::Temporary,
                    true,
                    false,
                    ExitReason::Panicked("ender panicked".into()),
                ),
            ];
            for (restart, panics, restarted, reason) in cases {
                let what = format!("{name}: {restart:?}, panics {panics}");
                let e = sup.supervise(restart, || Ender).unwrap();
                let mut down = e.monitor();
                if panics {
                    e.send(PanicNow).unwrap();
                } else {
                    e.send(DeleteMsg).unwrap();
                }
                if restarted {
                    // Still answering on the same address; its monitor has not fired.
                    assert_eq!(e.ask(()).unwrap().wait(), Ok(7), "{what}");
                    assert_eq!(down.try_get(), None, "{what}");
                    assert!(e.is_alive(), "{what}");
                } else {
                    assert_eq!(down.wait(), Ok(reason), "{what}");
                    assert!(e.send(DeleteMsg).is_err(), "{what}");
                }
            }
            system.shutdown();
        });
    });
}

/// Panics in its `started` hook, every time.
struct Doomed(Arc<AtomicU32>);
impl Actor for Doomed {
    fn started(&mut self, _: &mut Context<'_, Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
        panic!("cannot start");
    }
}

#[test]
fn a_child_restarted_n_times_then_escalated() {
    watchdog(120, || {
        on_every_executor(|name, choose| {
            let system = system(choose);
            let sup = system.spawn(Supervisor::new(Strategy::OneForOne).intensity(3, LONG));
            let sup_down = sup.monitor();
            let starts = Arc::new(AtomicU32::new(0));
            let (s, gate) = (starts.clone(), Arc::new(Gate::default()));
            let g = gate.clone();
            // (The first incarnation waits for the monitor: the child could otherwise use up
            // its restarts, and end, before the monitor is set.)
            let child = sup
                .supervise(Restart::Permanent, move || {
                    g.wait();
                    Doomed(s.clone())
                })
                .unwrap();
            let child_down = child.monitor();
            gate.open();
            assert_eq!(sup_down.wait(), Ok(ExitReason::Escalated), "{name}");
            // The first start and three restarts; the fourth end was one too many.
            assert_eq!(starts.load(Ordering::SeqCst), 4, "{name}");
            assert_eq!(child_down.wait(), Ok(ExitReason::Shutdown), "{name}");
            system.stop();
        });
    });
}

#[test]
fn escalation_restarts_the_subtree_then_climbs() {
    watchdog(120, || {
        on_every_executor(|name, choose| {
            let system = system(choose);
            let top = system.spawn(Supervisor::new(Strategy::OneForOne).intensity(1, LONG));
            let top_down = top.monitor();
            let inner = top
                .supervise_supervisor(
                    Restart::Permanent,
                    Supervisor::new(Strategy::OneForOne).intensity(2, LONG),
                )
                .unwrap();
            let inner_down = inner.monitor();
            let starts = Arc::new(AtomicU32::new(0));
            let (s, gate) = (starts.clone(), Arc::new(Gate::default()));
            let g = gate.clone();
            // (As above: the monitor is set before the child can end.)
            let child = inner
                .supervise(Restart::Permanent, move || {
                    g.wait();
                    Doomed(s.clone())
                })
                .unwrap();
            let child_down = child.monitor();
            gate.open();
            // The inner supervisor gives up after three starts; the top one restarts it once
            // (it restarts the child: three more starts), then gives up itself.
            assert_eq!(top_down.wait(), Ok(ExitReason::Escalated), "{name}");
            assert_eq!(inner_down.wait(), Ok(ExitReason::Shutdown), "{name}");
            assert_eq!(starts.load(Ordering::SeqCst), 6, "{name}");
            assert_eq!(child_down.wait(), Ok(ExitReason::Shutdown), "{name}");
            system.stop();
        });
    });
}

#[test]
fn ending_the_supervisor_ends_the_tree_and_stop_returns() {
    watchdog(120, || {
        on_every_executor(|name, choose| {
            let system = system(choose);
            let sup = system.spawn(Supervisor::new(Strategy::OneForAll));
            let log = Arc::new(Mutex::new(Vec::new()));
            let kids: Vec<_> = (0..50)
                .map(|_| {
                    let (f, _) = child_factory(log.clone());
                    sup.supervise(Restart::Permanent, f).unwrap()
                })
                .collect();
            let downs: Vec<_> = kids.iter().map(|k| k.monitor()).collect();
            sup.send(DeleteMsg).unwrap();
            for d in downs {
                assert_eq!(d.wait(), Ok(ExitReason::Shutdown), "{name}");
            }
            system.stop(); // returns: every actor has ended
            assert!(sup.supervise(Restart::Permanent, || Ender).is_err());
        });
    });
}

#[test]
fn graceful_shutdown_restarts_nothing() {
    watchdog(120, || {
        on_every_executor(|name, choose| {
            let system = system(choose);
            let sup = system.spawn(Supervisor::new(Strategy::OneForOne).intensity(1000, LONG));
            let log = Arc::new(Mutex::new(Vec::new()));
            let mut starts = Vec::new();
            let kids: Vec<_> = (0..200)
                .map(|_| {
                    let (f, s) = child_factory(log.clone());
                    starts.push(s);
                    sup.supervise(Restart::Permanent, f).unwrap()
                })
                .collect();
            for k in &kids {
                k.send(Msg::Log(1)).unwrap();
            }
            assert!(
                system.shutdown_timeout(Duration::from_secs(60)).is_ok(),
                "{name}"
            );
            assert!(kids.iter().all(|k| !k.is_alive()), "{name}");
            // Built once, or (if the shutdown overtook its first envelope) never.
            assert!(
                starts.iter().all(|s| s.load(Ordering::SeqCst) <= 1),
                "{name}: restarted during shutdown"
            );
        });
    });
}

#[test]
fn supervisor_decisions_and_panics_are_events() {
    watchdog(120, || {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let ids = Arc::new(Mutex::new(Vec::new()));
        let id_log = ids.clone();
        let system = ActorSystem::builder()
            .workers(2)
            .on_event(move |e| {
                if let Event::ChildRestarted { id, .. }
                | Event::SupervisorGaveUp { id, .. }
                | Event::ChildEnded { id, .. } = e
                {
                    id_log.lock().unwrap().push(*id);
                }
                let s = match e {
                    Event::Panic { message, .. } => format!("panic {message}"),
                    Event::ChildRestarted { .. } => "restarted".to_string(),
                    Event::SupervisorGaveUp { restarts, .. } => format!("gave up after {restarts}"),
                    Event::ChildEnded { reason, .. } => format!("ended {reason}"),
                    Event::DeadLetters { count, .. } => format!("dead {count}"),
                    _ => "other".to_string(),
                };
                log.lock().unwrap().push(s);
            })
            .build()
            .unwrap();
        let sup = system.spawn(Supervisor::new(Strategy::OneForOne).intensity(1, LONG));
        let down = sup.monitor();
        let starts = Arc::new(AtomicU32::new(0));
        let s = starts.clone();
        let child = sup
            .supervise(Restart::Permanent, move || Doomed(s.clone()))
            .unwrap();
        assert_eq!(down.wait(), Ok(ExitReason::Escalated));
        system.stop();
        // Each supervisor event names the child by the id of its address.
        assert_eq!(*ids.lock().unwrap(), [child.id(); 3]);
        assert_ne!(child.id(), sup.id());
        let seen = seen.lock().unwrap().clone();
        assert_eq!(
            seen,
            [
                "panic cannot start",
                "restarted",
                "panic cannot start",
                "gave up after 1",
                // The supervisor ended for good: its child ends with it.
                "ended stopped by its system's shutdown"
            ]
        );
    });
}

#[test]
#[should_panic(expected = "period must be positive")]
fn a_zero_period_is_refused() {
    let _ = Supervisor::new(Strategy::OneForOne).intensity(1, Duration::ZERO);
}

#[test]
fn supervise_racing_the_supervisors_end_leaves_no_child_behind() {
    watchdog(120, || {
        on_every_executor(|name, choose| {
            for round in 0..50 {
                let system = system(choose);
                let sup = system.spawn(Supervisor::new(Strategy::OneForAll).intensity(100, LONG));
                let s2 = sup.clone();
                let adder = std::thread::spawn(move || {
                    let log = Arc::new(Mutex::new(Vec::new()));
                    let mut kids = Vec::new();
                    for _ in 0..20 {
                        let (f, _) = child_factory(log.clone());
                        // Refused once the supervisor has ended.
                        if let Ok(k) = s2.supervise(Restart::Permanent, f) {
                            kids.push(k);
                        }
                    }
                    kids
                });
                if round % 2 == 0 {
                    std::thread::yield_now();
                }
                sup.send(DeleteMsg).unwrap();
                let kids = adder.join().unwrap();
                // Every child ends with its supervisor, adopted or not: `stop` returns.
                let downs: Vec<_> = kids.iter().map(|k| k.monitor()).collect();
                for d in downs {
                    // (`NotAlive`: it had ended before the monitor was set.)
                    let r = d.wait().unwrap();
                    assert!(
                        matches!(r, ExitReason::Shutdown | ExitReason::NotAlive),
                        "{name}, round {round}: {r:?}"
                    );
                }
                system.stop();
            }
        });
    });
}

/// Its factory panics twice, then works.
struct Flaky;
impl Actor for Flaky {}
impl Receive<Ask<(), u32>> for Flaky {
    fn receive(&mut self, q: Ask<(), u32>, _: &mut Context<'_, Self>) -> Allocation {
        q.reply.send(1).ok();
        Allocation::Nodelete
    }
}

#[test]
fn a_panicking_factory_is_a_failure_and_the_mail_waits() {
    watchdog(120, || {
        on_every_executor(|name, choose| {
            let system = system(choose);
            let sup = system.spawn(Supervisor::new(Strategy::OneForOne).intensity(5, LONG));
            let tries = Arc::new(AtomicU32::new(0));
            let t = tries.clone();
            let flaky = sup
                .supervise(Restart::Permanent, move || {
                    if t.fetch_add(1, Ordering::SeqCst) < 2 {
                        panic!("not yet");
                    }
                    Flaky
                })
                .unwrap();
            // Sent before any incarnation exists: answered by the third.
            assert_eq!(flaky.ask(()).unwrap().wait(), Ok(1), "{name}");
            assert_eq!(tries.load(Ordering::SeqCst), 3, "{name}");
            system.shutdown();
        });
    });
}

#[test]
fn a_restart_decided_during_graceful_shutdown_does_not_happen() {
    watchdog(120, || {
        // Caller-driven, so the steps are ours: the child fails, its notice waits at the
        // supervisor, and the shutdown begins before the supervisor decides.
        let panicked = Arc::new(AtomicBool::new(false));
        let p = panicked.clone();
        let system = ActorSystem::builder()
            .policy(actorium::policy::Testing)
            .on_event(move |e| {
                if matches!(e, Event::Panic { .. }) {
                    p.store(true, Ordering::SeqCst);
                }
            })
            .build()
            .unwrap();
        let sup = system.spawn(Supervisor::new(Strategy::OneForOne).intensity(10, LONG));
        let log = Arc::new(Mutex::new(Vec::new()));
        let (f, starts) = child_factory(log);
        let child = sup.supervise(Restart::Permanent, f).unwrap();
        child.send(Msg::Boom).unwrap();
        child.send(Msg::Log(1)).unwrap(); // waits for a restart that never comes
        while !panicked.load(Ordering::SeqCst) {
            assert!(system.run_once(), "the child's panic never ran");
        }
        let mut down = child.monitor();
        system.shutdown();
        assert_eq!(
            starts.load(Ordering::SeqCst),
            1,
            "restarted during shutdown"
        );
        assert_eq!(down.try_get(), Some(Ok(ExitReason::Shutdown)));
    });
}

/// A child that ends (normally) on any `u32`.
struct Quiet;
impl Actor for Quiet {}
impl Receive<u32> for Quiet {
    fn receive(&mut self, _: u32, _: &mut Context<'_, Self>) -> Allocation {
        Allocation::Delete
    }
}

/// Every end of a child is an event, also when its supervisor ends (the children end with
/// it); a hook may call into the supervisor (here it supervises a replacement for a child that
/// ended), and the replacement ends with the supervisor too.
#[test]
fn children_that_end_with_their_supervisor_are_events_and_hooks_may_call_it() {
    watchdog(60, || {
        let ended = Arc::new(Mutex::new(Vec::<String>::new()));
        let slot: Arc<Mutex<Option<Addr<Supervisor>>>> = Arc::new(Mutex::new(None));
        let replaced = Arc::new(Mutex::new(None::<Addr<Quiet>>));
        let (log, sup_slot, repl) = (ended.clone(), slot.clone(), replaced.clone());
        let system = ActorSystem::builder()
            .workers(2)
            .on_event(move |e| {
                if let Event::ChildEnded { reason, .. } = e {
                    log.lock().unwrap().push(reason.to_string());
                    let sup = sup_slot.lock().unwrap().clone();
                    let mut r = repl.lock().unwrap();
                    if let (Some(sup), None) = (sup, r.as_ref()) {
                        // On the supervisor's worker, inside its behaviour.
                        *r = Some(sup.supervise(Restart::Temporary, || Quiet).unwrap());
                    }
                }
            })
            .build()
            .unwrap();
        let sup = system.spawn(Supervisor::new(Strategy::OneForOne));
        *slot.lock().unwrap() = Some(sup.clone());
        let a = sup.supervise(Restart::Temporary, || Quiet).unwrap();
        let _b = sup.supervise(Restart::Temporary, || Quiet).unwrap();
        let down = a.monitor();
        a.send(1).unwrap();
        assert_eq!(down.wait(), Ok(ExitReason::Normal));
        // The hook's replacement exists once the event was handled.
        while replaced.lock().unwrap().is_none() {
            std::thread::yield_now();
        }
        assert_eq!(*ended.lock().unwrap(), ["ended normally"]);
        // The supervisor ends for good: `_b` and the replacement end with it, as events.
        *slot.lock().unwrap() = None;
        let sup_down = sup.monitor();
        sup.send(DeleteMsg).unwrap();
        assert_eq!(sup_down.wait(), Ok(ExitReason::PoisonPill));
        system.stop();
        let ended = ended.lock().unwrap().clone();
        assert_eq!(
            ended,
            [
                "ended normally",
                "stopped by its system's shutdown",
                "stopped by its system's shutdown"
            ]
        );
        assert!(!replaced.lock().unwrap().as_ref().unwrap().is_alive());
    });
}

/// Found by the random programs (`random_programs.rs`): a child supervised just before a
/// graceful shutdown, whose first incarnation was not built yet, ended unstarted and its
/// queued mail became dead letters (the shutdown's "no restart" rule caught its first start
/// too). Its mail is delivered, as an unsupervised actor's is.
#[test]
fn a_child_supervised_just_before_shutdown_gets_its_mail() {
    on_every_executor(|name, choose| {
        if is_testing(name) {
            return; // caller-driven: `shutdown` runs the jobs in its own order
        }
        for round in 0..200 {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let log = Arc::new(Mutex::new(Vec::new()));
            let sup = system.spawn(Supervisor::new(Strategy::OneForOne));
            let (factory, _) = child_factory(log.clone());
            let child: Addr<Child> = sup.supervise(Restart::Permanent, factory).unwrap();
            for i in 0..10 {
                child.send(Msg::Log(i)).unwrap();
            }
            watchdog(60, move || system.shutdown());
            assert_eq!(
                *log.lock().unwrap(),
                (0..10).collect::<Vec<_>>(),
                "{name}, round {round}"
            );
        }
    });
}
