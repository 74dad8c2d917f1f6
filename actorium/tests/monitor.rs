//! Monitors (`Addr::monitor`, `Context::monitor`) see each exit reason, on every executor.

mod common;

use actorium::{
    Actor, ActorSystem, Addr, Allocation, Context, DeleteMsg, DestroyMsg, ExitReason, Receive,
};
use common::{on_every_executor, settle, watchdog};
use std::sync::{mpsc, Arc, Mutex};

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

/// Links to the actors it is sent, and handles their ends: records the notices, goes on.
struct Linked {
    notices: Arc<Mutex<Vec<ExitReason>>>,
}
impl Actor for Linked {
    fn linked_exit(&mut self, reason: ExitReason, _: &mut Context<'_, Self>) -> Allocation {
        self.notices.lock().unwrap().push(reason);
        Allocation::Nodelete
    }
}
struct LinkTo(Addr<Subject>);
impl Receive<LinkTo> for Linked {
    fn receive(&mut self, LinkTo(s): LinkTo, ctx: &mut Context<'_, Self>) -> Allocation {
        ctx.link(&s);
        Allocation::Nodelete
    }
}

/// Default links (no `linked_exit` override); fails on `End`.
struct Chain;
impl Actor for Chain {}
struct LinkToChain(Addr<Chain>, mpsc::Sender<()>);
impl Receive<LinkToChain> for Chain {
    fn receive(
        &mut self,
        LinkToChain(c, done): LinkToChain,
        ctx: &mut Context<'_, Self>,
    ) -> Allocation {
        ctx.link(&c);
        done.send(()).unwrap();
        Allocation::Nodelete
    }
}
impl Receive<End> for Chain {
    fn receive(&mut self, _: End, _: &mut Context<'_, Self>) -> Allocation {
        panic!("chain link gave up")
    }
}

/// Links by default (no `linked_exit` override).
struct Plain;
impl Actor for Plain {}
struct PlainLink(Addr<Subject>, mpsc::Sender<()>);
impl Receive<PlainLink> for Plain {
    fn receive(
        &mut self,
        PlainLink(s, done): PlainLink,
        ctx: &mut Context<'_, Self>,
    ) -> Allocation {
        ctx.link(&s);
        done.send(()).unwrap();
        Allocation::Nodelete
    }
}

#[test]
fn a_linked_pair_fails_together_unless_the_survivor_handles_it() {
    watchdog(120, || {
        on_every_executor(|name, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            // Default: a failure takes the survivor down (reason Linked); a normal end does not.
            for (end, survives) in [(End::Panic, false), (End::Delete, true)] {
                let (tx, rx) = mpsc::channel();
                let (p, s) = (system.spawn(Plain), system.spawn(Subject));
                let down = p.monitor();
                p.send(PlainLink(s.clone(), tx)).unwrap();
                settle(&system, 10, "linked", || rx.try_recv().is_ok());
                let s_down = s.monitor();
                s.send(end).unwrap();
                let _ = s_down.wait().unwrap();
                if survives {
                    // Its notice ran (queued behind nothing else): it is still alive after a
                    // round trip through its queue.
                    let (tx2, rx2) = mpsc::channel();
                    p.send(PlainLink(system.spawn(Subject), tx2)).unwrap();
                    settle(&system, 10, "still alive", || rx2.try_recv().is_ok());
                    assert!(p.is_alive());
                    p.send(DeleteMsg).unwrap();
                } else {
                    assert_eq!(down.wait().unwrap(), ExitReason::Linked);
                }
            }
            // A handled notice: the survivor records it and goes on.
            let notices = Arc::new(Mutex::new(Vec::new()));
            let l = system.spawn(Linked {
                notices: notices.clone(),
            });
            let s = system.spawn(Subject);
            l.send(LinkTo(s.clone())).unwrap();
            let dead = system.spawn(Subject);
            dead.send(End::Delete).unwrap();
            let _ = dead.monitor().wait();
            // A link to an actor that has ended reports NotAlive (not a failure).
            l.send(LinkTo(dead.clone())).unwrap();
            settle(&system, 10, "the NotAlive notice", || {
                notices.lock().unwrap().contains(&ExitReason::NotAlive)
            });
            s.send(End::Panic).unwrap();
            settle(&system, 10, "the failure notice", || {
                notices
                    .lock()
                    .unwrap()
                    .contains(&ExitReason::Panicked("subject gave up".into()))
            });
            assert!(l.is_alive(), "handled: it goes on");
            l.send(DeleteMsg).unwrap();
            if name.contains("testing") {
                drop(system);
            } else {
                system.shutdown();
            }
        });
    });
}

#[test]
fn a_failure_travels_along_a_chain_of_links() {
    watchdog(120, || {
        on_every_executor(|_, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let (a, b, c) = (
                system.spawn(Chain),
                system.spawn(Chain),
                system.spawn(Chain),
            );
            let (tx, rx) = mpsc::channel();
            a.send(LinkToChain(b.clone(), tx.clone())).unwrap();
            b.send(LinkToChain(c.clone(), tx)).unwrap();
            for _ in 0..2 {
                settle(&system, 10, "linked", || rx.try_recv().is_ok());
            }
            let (da, db, dc) = (a.monitor(), b.monitor(), c.monitor());
            c.send(End::Panic).unwrap();
            assert_eq!(
                dc.wait().unwrap(),
                ExitReason::Panicked("chain link gave up".into())
            );
            // c's failure takes b down, and b's (Linked, abnormal too) takes a.
            assert_eq!(db.wait().unwrap(), ExitReason::Linked);
            assert_eq!(da.wait().unwrap(), ExitReason::Linked);
            drop(system);
        });
    });
}

/// Its `stopped` hook panics.
struct BadHook;
impl Actor for BadHook {
    fn stopped(&mut self) {
        panic!("hook failed")
    }
}

#[test]
fn a_panicking_stopped_hook_is_a_failure() {
    watchdog(60, || {
        on_every_executor(|_, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let a = system.spawn(BadHook);
            let down = a.monitor();
            a.send(DeleteMsg).unwrap();
            assert_eq!(
                down.wait().unwrap(),
                ExitReason::Panicked("hook failed".into())
            );
            drop(system);
        });
    });
}

/// Keeps the reply port of the question it is asked until told to answer.
struct Holder(Option<actorium::ReplyTo<u32>>);
impl Actor for Holder {}
impl Receive<actorium::Ask<u32, u32>> for Holder {
    fn receive(&mut self, a: actorium::Ask<u32, u32>, _: &mut Context<'_, Self>) -> Allocation {
        self.0 = Some(a.reply);
        Allocation::Nodelete
    }
}
/// Answer the question now, then say so.
struct Answer(mpsc::Sender<()>);
impl Receive<Answer> for Holder {
    fn receive(&mut self, Answer(done): Answer, _: &mut Context<'_, Self>) -> Allocation {
        self.0.take().expect("asked").send(7).unwrap();
        done.send(()).unwrap();
        Allocation::Nodelete
    }
}
/// Ends with a panic.
struct Fail;
impl Receive<Fail> for Holder {
    fn receive(&mut self, _: Fail, _: &mut Context<'_, Self>) -> Allocation {
        panic!("the holder fails (on purpose)")
    }
}

/// Asks, watches or links with a `Holder`, then ends with `Destroy`; reports what runs on it
/// (with its name: the incarnation).
struct Asker {
    name: &'static str,
    seen: mpsc::Sender<String>,
}
impl Actor for Asker {
    fn linked_exit(&mut self, why: ExitReason, _: &mut Context<'_, Self>) -> Allocation {
        self.seen
            .send(format!("{}: linked {why:?}", self.name))
            .unwrap();
        Allocation::Nodelete
    }
}
enum Then {
    Ask(Addr<Holder>),
    Watch(Addr<Holder>),
    Link(Addr<Holder>),
}
impl Receive<Then> for Asker {
    fn receive(&mut self, t: Then, ctx: &mut Context<'_, Self>) -> Allocation {
        match t {
            Then::Ask(h) => {
                ctx.ask(&h, 1u32, |me: &mut Self, r, _| {
                    me.seen.send(format!("{}: reply {r:?}", me.name)).unwrap();
                    Allocation::Nodelete
                })
                .unwrap();
            }
            Then::Watch(h) => ctx.monitor(&h, |me: &mut Self, why, _| {
                me.seen.send(format!("{}: down {why:?}", me.name)).unwrap();
                Allocation::Nodelete
            }),
            Then::Link(h) => ctx.link(&h),
        }
        Allocation::Destroy
    }
}
/// Says its name.
struct Ping;
impl Receive<Ping> for Asker {
    fn receive(&mut self, _: Ping, _: &mut Context<'_, Self>) -> Allocation {
        self.seen.send(format!("{}: ping", self.name)).unwrap();
        Allocation::Nodelete
    }
}

/// A respawned actor is a new incarnation: the reply to a question the old one asked, a
/// monitor it set, a link it made, when they come after the respawn, are dead letters, and
/// never run on the new state (a linked failure would take the new one down).
#[test]
fn a_respawned_actor_never_runs_what_its_old_incarnation_asked_watched_or_linked() {
    watchdog(120, || {
        on_every_executor(|name, choose| {
            for case in 0..3 {
                let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
                let (tx, rx) = mpsc::channel();
                let holder = system.spawn(Holder(None));
                let a = system.spawn(Asker {
                    name: "old",
                    seen: tx.clone(),
                });
                a.send(match case {
                    0 => Then::Ask(holder.clone()),
                    1 => Then::Watch(holder.clone()),
                    _ => Then::Link(holder.clone()),
                })
                .unwrap();
                settle(&system, 10, "the old incarnation ended", || !a.is_alive());
                assert!(
                    a.respawn(Asker {
                        name: "new",
                        seen: tx.clone(),
                    })
                    .is_ok(),
                    "{name}"
                );
                // What the old incarnation waits for comes now, queued behind the respawn.
                let down = holder.monitor();
                if case == 0 {
                    let (done, answered) = mpsc::channel();
                    holder.send(Answer(done)).unwrap();
                    settle(&system, 10, "the answer", || answered.try_recv().is_ok());
                } else {
                    holder.send(Fail).unwrap();
                    settle(&system, 10, "the holder's end", || !holder.is_alive());
                    assert_eq!(
                        down.wait().unwrap(),
                        ExitReason::Panicked("the holder fails (on purpose)".into())
                    );
                }
                // The reply or the reaction was queued for `a` before this message.
                a.send(Ping).unwrap();
                let first = loop {
                    if let Ok(s) = rx.try_recv() {
                        break s;
                    }
                    system.run_once();
                    std::thread::yield_now();
                };
                assert_eq!(first, "new: ping", "{name}, case {case}");
                assert!(
                    a.is_alive(),
                    "{name}, case {case}: the new incarnation is alive"
                );
                a.send(DeleteMsg).unwrap();
                holder.send(DeleteMsg).ok();
                system.shutdown();
                // Nor later (on the default executor, the holder's worker may have kept the
                // reply or the reaction in its outbox, behind this test's message).
                let later: Vec<String> = rx.try_iter().collect();
                assert!(later.is_empty(), "{name}, case {case}: {later:?}");
            }
        });
    });
}

/// Links with the actors it is sent, counts the notices it handles (and goes on); panics on
/// `End`; answers how many notices it has had.
struct Pair(usize);
impl Actor for Pair {
    fn linked_exit(&mut self, _: ExitReason, _: &mut Context<'_, Self>) -> Allocation {
        self.0 += 1;
        Allocation::Nodelete
    }
}
impl Receive<Addr<Pair>> for Pair {
    fn receive(&mut self, other: Addr<Pair>, ctx: &mut Context<'_, Self>) -> Allocation {
        ctx.link(&other);
        Allocation::Nodelete
    }
}
impl Receive<End> for Pair {
    fn receive(&mut self, _: End, _: &mut Context<'_, Self>) -> Allocation {
        panic!("pair gave up")
    }
}
impl Receive<mpsc::Sender<usize>> for Pair {
    fn receive(&mut self, tx: mpsc::Sender<usize>, _: &mut Context<'_, Self>) -> Allocation {
        tx.send(self.0).unwrap();
        Allocation::Nodelete
    }
}

/// As Erlang's, links among one system's actors are a set: a pair linked twice from one side
/// and once from the other is linked once, and each end hears of the other's once.
#[test]
fn a_pair_linked_again_from_either_side_is_linked_once() {
    watchdog(120, || {
        common::on_every_threaded_executor(|name, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let (a, b) = (system.spawn(Pair(0)), system.spawn(Pair(0)));
            a.send(b.clone()).unwrap();
            a.send(b.clone()).unwrap();
            b.send(a.clone()).unwrap();
            // Every link made (each behaviour ran) before the end.
            let (tx, rx) = mpsc::channel();
            a.send(tx.clone()).unwrap();
            b.send(tx).unwrap();
            assert_eq!((rx.recv().unwrap(), rx.recv().unwrap()), (0, 0), "{name}");
            let down = b.monitor();
            b.send(End::Panic).unwrap();
            assert!(matches!(down.wait(), Ok(ExitReason::Panicked(_))), "{name}");
            // The notices were queued for `a` before the monitor heard (watchers in order).
            let (tx, rx) = mpsc::channel();
            a.send(tx).unwrap();
            assert_eq!(rx.recv().unwrap(), 1, "{name}: linked once");
            // A new actor may reuse `b`'s cell: it links afresh.
            let c = system.spawn(Pair(0));
            a.send(c.clone()).unwrap();
            // The link made before the end (else `c`'s monitor may hear first, and the
            // count below be asked for before the notice is queued).
            let (tx, rx) = mpsc::channel();
            a.send(tx).unwrap();
            assert_eq!(rx.recv().unwrap(), 1, "{name}");
            let down = c.monitor();
            c.send(End::Panic).unwrap();
            let _ = down.wait();
            let (tx, rx) = mpsc::channel();
            a.send(tx).unwrap();
            assert_eq!(rx.recv().unwrap(), 2, "{name}");
            system.shutdown();
        });
    });
}

/// Ends by returning `Destroy` (its cell kept for a respawn).
struct Phoenix;
impl Actor for Phoenix {}
struct Burn;
impl Receive<Burn> for Phoenix {
    fn receive(&mut self, _: Burn, _: &mut Context<'_, Self>) -> Allocation {
        Allocation::Destroy
    }
}

/// Respawns `a` as soon as its incarnation is destroyed.
fn respawn_when_destroyed(a: &Addr<Phoenix>) {
    let mut next = Phoenix;
    while let Err(back) = a.respawn(next) {
        next = back;
        // (Spinning, not yielding: the race is with the end that the worker runs right now.)
        std::hint::spin_loop();
    }
}

/// A respawn may make the next incarnation alive (and a monitor may be set on it) before the
/// old one's end has told its monitors: that end tells only the old incarnation's. The old
/// ends normally, the new by a poison pill; each monitor must hear its own.
#[test]
fn a_respawn_racing_the_old_end_keeps_the_new_monitors_for_the_new_end() {
    watchdog(120, || {
        common::on_every_threaded_executor(|name, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let a = system.spawn(Phoenix);
            for i in 0..2_000 {
                let old = a.monitor();
                a.send(Burn).unwrap();
                // Possibly before the old incarnation's end told its monitors.
                respawn_when_destroyed(&a);
                let new = a.monitor();
                a.send(DestroyMsg).unwrap();
                assert_eq!(old.wait().unwrap(), ExitReason::Normal, "{name}, round {i}");
                assert_eq!(
                    new.wait().unwrap(),
                    ExitReason::PoisonPill,
                    "{name}, round {i}: the new incarnation's monitor heard the old end"
                );
                // The next round's old incarnation.
                respawn_when_destroyed(&a);
            }
            a.send(DeleteMsg).unwrap();
            system.shutdown();
        });
    });
}
