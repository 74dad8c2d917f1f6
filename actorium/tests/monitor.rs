//! Monitors (`Addr::monitor`, `Context::monitor`) see each exit reason, on every executor.

mod common;

use actorium::{
    Actor, ActorSystem, Addr, Allocation, Context, DeleteMsg, DestroyMsg, ExitReason, Receive,
};
use common::{on_every_executor, settle, watchdog};
use std::sync::{Arc, Mutex};

/// Ends as told.
struct Subject;
impl Actor for Subject {}
enum End {
    Delete,
    Stop,
    Panic,
}
impl Receive<End> for Subject {
    fn receive(&mut self, e: End, ctx: &mut Context<'_, Self>) -> Allocation {
        match e {
            End::Delete => Allocation::Delete,
            End::Stop => {
                ctx.stop();
                Allocation::Nodelete
            }
            End::Panic => panic!("subject gave up"),
        }
    }
}

/// The reason `a`'s monitor resolves to after `end` runs `a` down; on a caller-driven system
/// the wait drives it.
fn reason_after(a: &Addr<Subject>, end: impl FnOnce(&Addr<Subject>)) -> ExitReason {
    let down = a.monitor();
    end(a);
    down.wait().unwrap()
}

/// An expected reason, and how to bring it about.
type Case = (ExitReason, Box<dyn FnOnce(&Addr<Subject>)>);

#[test]
fn a_thread_monitor_sees_each_exit_reason() {
    watchdog(120, || {
        on_every_executor(|_, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let cases: Vec<Case> = vec![
                (
                    ExitReason::Normal,
                    Box::new(|a| a.send(End::Delete).unwrap_or(())),
                ),
                (
                    ExitReason::Normal,
                    Box::new(|a| a.send(End::Stop).unwrap_or(())),
                ),
                (
                    ExitReason::Panicked("subject gave up".into()),
                    Box::new(|a| a.send(End::Panic).unwrap_or(())),
                ),
                (
                    ExitReason::PoisonPill,
                    Box::new(|a| a.send(DeleteMsg).unwrap()),
                ),
                (
                    ExitReason::PoisonPill,
                    Box::new(|a| a.send(DestroyMsg).unwrap()),
                ),
            ];
            for (want, end) in cases {
                let a = system.spawn(Subject);
                assert_eq!(reason_after(&a, end), want);
                // Monitored after the end: at once, NotAlive.
                assert_eq!(a.monitor().wait().unwrap(), ExitReason::NotAlive);
            }
            // Graceful shutdown, and a system dropped with the actor alive.
            let a = system.spawn(Subject);
            let down = a.monitor();
            system.shutdown();
            assert_eq!(down.wait().unwrap(), ExitReason::Shutdown);
        });
        on_every_executor(|_, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let a = system.spawn(Subject);
            let (d1, d2) = (a.monitor(), a.monitor());
            drop(system);
            assert_eq!(d1.wait().unwrap(), ExitReason::Shutdown);
            assert_eq!(
                d2.wait().unwrap(),
                ExitReason::Shutdown,
                "every monitor is told"
            );
        });
    });
}

/// Monitors subjects from its behaviours; records what it is told.
struct Watcher(Arc<Mutex<Vec<ExitReason>>>);
impl Actor for Watcher {}
struct Watch(Addr<Subject>, End);
impl Receive<Watch> for Watcher {
    fn receive(&mut self, Watch(s, end): Watch, ctx: &mut Context<'_, Self>) -> Allocation {
        ctx.monitor(&s, |me: &mut Self, why, _| {
            me.0.lock().unwrap().push(why);
            Allocation::Nodelete
        });
        let _ = s.send(end);
        Allocation::Nodelete
    }
}

#[test]
fn an_actor_monitor_runs_on_the_watcher() {
    watchdog(120, || {
        on_every_executor(|name, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let seen = Arc::new(Mutex::new(Vec::new()));
            let w = system.spawn(Watcher(seen.clone()));
            for end in [End::Delete, End::Panic, End::Stop] {
                w.send(Watch(system.spawn(Subject), end)).unwrap();
            }
            settle(&system, 30, "three notices", || {
                seen.lock().unwrap().len() == 3
            });
            let mut got = seen.lock().unwrap().clone();
            got.sort_by_key(|r| format!("{r:?}"));
            assert_eq!(
                got,
                [
                    ExitReason::Normal,
                    ExitReason::Normal,
                    ExitReason::Panicked("subject gave up".into())
                ]
            );
            if name.contains("testing") {
                drop(system);
            } else {
                system.shutdown();
            }
        });
    });
}

#[test]
fn monitors_racing_the_end_are_never_missed() {
    watchdog(120, || {
        for (name, choose) in common::EXECUTORS
            .iter()
            .filter(|(n, _)| !n.contains("testing"))
        {
            eprintln!("--- executor: {name}");
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            for _ in 0..2_000 {
                let a = system.spawn(Subject);
                a.send(End::Delete).unwrap();
                // Set while the actor may be ending on a worker: resolves either way.
                let why = a.monitor().wait().unwrap();
                assert!(
                    why == ExitReason::Normal || why == ExitReason::NotAlive,
                    "{why:?}"
                );
            }
            system.shutdown();
        }
    });
}
