//! Request/reply (`Addr::ask`, `Context::ask`), type-erased and weak addresses, and
//! `Context::stop`, on every executor.

mod common;

use actorium::{
    Actor, ActorSystem, Addr, Allocation, Ask, AskError, Context, DeleteMsg, Pending, Receive,
    Recipient, ReplyTo, SendError, WeakAddr,
};
use common::{block_on, on_every_executor, settle, watchdog, ExecutorChoice};
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::Duration;

fn build(choose: ExecutorChoice, workers: usize) -> ActorSystem {
    choose(ActorSystem::builder().workers(workers))
        .build()
        .unwrap()
}

fn caller_driven(name: &str) -> bool {
    name.contains("testing")
}

/// The reply of `p`: waited for, or (caller-driven system) driven until it comes.
fn reply<R>(system: &ActorSystem, name: &str, mut p: Pending<R>) -> Result<R, AskError> {
    if !caller_driven(name) {
        return p.wait_timeout(Duration::from_secs(30));
    }
    let mut got = None;
    settle(system, 30, "a reply", || {
        got = p.try_get();
        got.is_some()
    });
    got.unwrap()
}

/// Adds to a running total; answers with the total. Keeps the reply port of a `Later`
/// request until a `Now` comes; drops the port of a `Never`.
#[derive(Default)]
struct Adder {
    total: u64,
    later: Vec<ReplyTo<u64>>,
    given_back: Arc<AtomicUsize>,
}
impl Actor for Adder {}
impl Receive<Ask<u64, u64>> for Adder {
    fn receive(&mut self, a: Ask<u64, u64>, _: &mut Context<'_, Self>) -> Allocation {
        self.total += a.msg;
        a.reply.send(self.total).ok(); // Err: the asker stopped waiting
        Allocation::Nodelete
    }
}
struct Later;
impl Receive<Ask<Later, u64>> for Adder {
    fn receive(&mut self, a: Ask<Later, u64>, _: &mut Context<'_, Self>) -> Allocation {
        self.later.push(a.reply);
        Allocation::Nodelete
    }
}
struct Now;
impl Receive<Now> for Adder {
    fn receive(&mut self, _: Now, _: &mut Context<'_, Self>) -> Allocation {
        for r in self.later.drain(..) {
            let wanted = r.is_wanted();
            match r.send(self.total) {
                Ok(()) => assert!(wanted),
                Err(_) => {
                    self.given_back.fetch_add(1, Ordering::SeqCst);
                }
            }
        }
        Allocation::Nodelete
    }
}
struct Never;
impl Receive<Ask<Never, u64>> for Adder {
    fn receive(&mut self, a: Ask<Never, u64>, _: &mut Context<'_, Self>) -> Allocation {
        drop(a.reply);
        Allocation::Nodelete
    }
}

#[test]
fn asks_from_a_thread_get_their_replies_in_order() {
    watchdog(120, || {
        on_every_executor(|name, choose| {
            let system = build(choose, 2);
            let adder = system.spawn(Adder::default());
            let mut expect = 0;
            for n in 1..=200u64 {
                expect += n;
                assert_eq!(reply(&system, name, adder.ask(n).unwrap()), Ok(expect));
            }
            // Several in flight at once: replies in send order (one sender, one actor).
            let pending: Vec<_> = (1..=50u64).map(|n| adder.ask(n).unwrap()).collect();
            for (p, n) in pending.into_iter().zip(1..=50u64) {
                expect += n;
                assert_eq!(reply(&system, name, p), Ok(expect));
            }
            adder.send(DeleteMsg).unwrap();
            if !caller_driven(name) {
                system.stop();
            }
        });
    });
}

#[test]
fn asks_from_many_threads_each_get_exactly_their_reply() {
    watchdog(120, || {
        for (name, choose) in common::EXECUTORS.iter().filter(|(n, _)| !caller_driven(n)) {
            eprintln!("--- executor: {name}");
            let system = build(*choose, 2);
            let adder = system.spawn(Adder::default());
            let threads: Vec<_> = (0..4)
                .map(|_| {
                    let adder = adder.clone();
                    thread::spawn(move || {
                        let mut seen = Vec::new();
                        for _ in 0..2_000 {
                            seen.push(adder.ask(1).unwrap().wait().unwrap());
                        }
                        seen
                    })
                })
                .collect();
            let mut all: Vec<u64> = threads
                .into_iter()
                .flat_map(|t| t.join().unwrap())
                .collect();
            all.sort_unstable();
            // Every total from 1 to 8000 once: each ask ran once, each reply reached its asker.
            assert_eq!(all, (1..=8_000).collect::<Vec<_>>());
            adder.send(DeleteMsg).unwrap();
            system.stop();
        }
    });
}

#[test]
fn asks_can_be_awaited() {
    watchdog(120, || {
        for (name, choose) in common::EXECUTORS.iter().filter(|(n, _)| !caller_driven(n)) {
            eprintln!("--- executor: {name}");
            let system = build(*choose, 2);
            let adder = system.spawn(Adder::default());
            let total = block_on(async {
                let mut last = 0;
                for n in 1..=100u64 {
                    last = adder.ask(n)?.await?;
                }
                Ok::<u64, AskError>(last)
            });
            assert_eq!(total, Ok(5050));
            // A future that waits for a deferred reply is woken by it.
            let p = adder.ask(Later).unwrap();
            let t = {
                let adder = adder.clone();
                thread::spawn(move || {
                    thread::sleep(Duration::from_millis(20));
                    adder.send(Now).unwrap();
                })
            };
            assert_eq!(block_on(p), Ok(5050));
            t.join().unwrap();
            assert_eq!(block_on(adder.ask(Never).unwrap()), Err(AskError::Dropped));
            adder.send(DeleteMsg).unwrap();
            system.stop();
        }
    });
}

#[test]
fn a_timed_out_ask_gives_the_late_reply_back_to_the_replier() {
    watchdog(60, || {
        for (name, choose) in common::EXECUTORS.iter().filter(|(n, _)| !caller_driven(n)) {
            eprintln!("--- executor: {name}");
            let system = build(*choose, 2);
            let given_back = Arc::new(AtomicUsize::new(0));
            let adder = system.spawn(Adder {
                given_back: given_back.clone(),
                ..Adder::default()
            });
            let err = adder
                .ask(Later)
                .unwrap()
                .wait_timeout(Duration::from_millis(20));
            assert_eq!(err, Err(AskError::Timeout));
            adder.send(Now).unwrap();
            common::wait_for(10, "the late reply given back", || {
                given_back.load(Ordering::SeqCst) == 1
            });
            adder.send(DeleteMsg).unwrap();
            system.stop();
        }
    });
}

#[test]
fn asking_a_dead_actor_returns_the_question_and_a_dropped_reply_is_an_error() {
    watchdog(60, || {
        on_every_executor(|name, choose| {
            let system = build(choose, 2);
            let adder = system.spawn(Adder::default());
            assert_eq!(
                reply(&system, name, adder.ask(Never).unwrap()),
                Err(AskError::Dropped)
            );
            adder.send(DeleteMsg).unwrap();
            settle(&system, 10, "the actor ended", || !adder.is_alive());
            let SendError(back) = adder.ask(7u64).unwrap_err();
            assert_eq!(back, 7);
            let via_question_mark = || -> Result<u64, AskError> { adder.ask(1u64)?.wait() };
            assert_eq!(via_question_mark(), Err(AskError::Dead));
            if !caller_driven(name) {
                system.stop();
            }
        });
    });
}

/// Blocks in its behaviour until a gate opens; ends on `Quit`.
struct Gated;
impl Actor for Gated {}
impl Receive<mpsc::Receiver<()>> for Gated {
    fn receive(&mut self, gate: mpsc::Receiver<()>, _: &mut Context<'_, Self>) -> Allocation {
        gate.recv().unwrap();
        Allocation::Nodelete
    }
}
struct Quit;
impl Receive<Quit> for Gated {
    fn receive(&mut self, _: Quit, _: &mut Context<'_, Self>) -> Allocation {
        Allocation::Delete
    }
}
impl Receive<Ask<u8, u8>> for Gated {
    fn receive(&mut self, a: Ask<u8, u8>, _: &mut Context<'_, Self>) -> Allocation {
        a.reply.send(a.msg).unwrap();
        Allocation::Nodelete
    }
}

#[test]
fn an_ask_queued_behind_the_actors_end_resolves_to_dropped() {
    watchdog(60, || {
        for (name, choose) in common::EXECUTORS.iter().filter(|(n, _)| !caller_driven(n)) {
            eprintln!("--- executor: {name}");
            let system = build(*choose, 2);
            let g = system.spawn(Gated);
            let (open, gate) = mpsc::channel();
            g.send(gate).unwrap();
            g.send(Quit).unwrap();
            let p = g.ask(1u8).unwrap(); // queued behind Quit: never answered
            open.send(()).unwrap();
            assert_eq!(p.wait(), Err(AskError::Dropped));
            system.stop();
        }
    });
}

#[test]
fn pending_asks_resolve_when_the_system_is_dropped() {
    watchdog(60, || {
        for (name, choose) in common::EXECUTORS.iter().filter(|(n, _)| !caller_driven(n)) {
            eprintln!("--- executor: {name}");
            let system = build(*choose, 2);
            let adder = system.spawn(Adder::default());
            let held = adder.ask(Later).unwrap(); // the actor keeps the port
            let (open, gate) = mpsc::channel::<()>();
            let g = system.spawn(Gated);
            g.send(gate).unwrap();
            let queued = g.ask(5u8).unwrap(); // queued behind the gate
            drop(open); // the gate's recv fails: the behaviour panics, the actor ends
            drop(system);
            assert_eq!(held.wait(), Err(AskError::Dropped));
            assert_eq!(queued.wait(), Err(AskError::Dropped));
        }
    });
}

/// Asks `to` from inside its behaviour, continuing when the reply comes.
struct Client {
    adder: Addr<Adder>,
    out: mpsc::Sender<(u64, bool)>,
    busy: bool,
}
impl Actor for Client {}
impl Receive<u64> for Client {
    fn receive(&mut self, n: u64, ctx: &mut Context<'_, Self>) -> Allocation {
        assert!(!self.busy, "two behaviours of one actor at once");
        self.busy = true;
        ctx.ask(&self.adder, n, |me: &mut Self, r, _| {
            assert!(!me.busy, "a continuation ran with another behaviour");
            me.out.send((r.unwrap(), true)).unwrap();
            Allocation::Nodelete
        })
        .unwrap();
        // A blocking wait here would be refused (it could deadlock).
        let p = self.adder.ask(0).unwrap();
        assert_eq!(p.wait(), Err(AskError::WouldBlock));
        self.busy = false;
        Allocation::Nodelete
    }
}
impl Receive<Ask<Never, u64>> for Client {
    fn receive(&mut self, a: Ask<Never, u64>, ctx: &mut Context<'_, Self>) -> Allocation {
        // Ask someone who drops the port: the continuation sees the error.
        let reply = a.reply;
        ctx.ask(&self.adder, Never, move |_: &mut Self, r, _| {
            reply.send(u64::from(r == Err(AskError::Dropped))).ok();
            Allocation::Nodelete
        })
        .unwrap();
        Allocation::Nodelete
    }
}

#[test]
fn a_behaviour_asks_without_blocking_its_worker() {
    watchdog(60, || {
        on_every_executor(|name, choose| {
            // One worker: the asked actor can only run if the asking behaviour returned.
            let system = build(choose, 1);
            let (out, results) = mpsc::channel();
            let adder = system.spawn(Adder::default());
            let client = system.spawn(Client {
                adder: adder.clone(),
                out,
                busy: false,
            });
            for n in 1..=100u64 {
                client.send(n).unwrap();
            }
            let mut got = Vec::new();
            settle(&system, 30, "100 continuations", || {
                while let Ok((v, _)) = results.try_recv() {
                    got.push(v);
                }
                got.len() == 100
            });
            // The asks ran in order (per-pair FIFO), so the totals grow: 1, 3, 6, ...
            let expect: Vec<u64> = (1..=100u64).map(|n| n * (n + 1) / 2).collect();
            assert_eq!(got, expect);
            // The asking actor's own request, answered from a continuation.
            assert_eq!(reply(&system, name, client.ask(Never).unwrap()), Ok(1));
            adder.send(DeleteMsg).unwrap();
            drop(system);
        });
    });
}

/// Ends itself with `ctx.stop()`; counts its `stopped` hook.
struct SelfStopper(Arc<AtomicUsize>);
impl Actor for SelfStopper {
    fn stopped(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}
impl Receive<u8> for SelfStopper {
    fn receive(&mut self, _: u8, ctx: &mut Context<'_, Self>) -> Allocation {
        ctx.stop();
        Allocation::Nodelete
    }
}

#[test]
fn context_stop_ends_the_actor_after_its_behaviour() {
    watchdog(60, || {
        on_every_executor(|name, choose| {
            let system = build(choose, 2);
            let stopped = Arc::new(AtomicUsize::new(0));
            let a = system.spawn(SelfStopper(stopped.clone()));
            a.send(1).unwrap();
            settle(&system, 10, "the actor ended", || !a.is_alive());
            assert_eq!(stopped.load(Ordering::SeqCst), 1);
            assert!(a.send(2).is_err());
            if !caller_driven(name) {
                system.stop();
            }
        });
    });
}

/// Records what it receives, tagged.
struct Tagged(&'static str, Arc<Mutex<Vec<String>>>);
impl Actor for Tagged {}
impl Receive<String> for Tagged {
    fn receive(&mut self, s: String, _: &mut Context<'_, Self>) -> Allocation {
        self.1.lock().unwrap().push(format!("{}:{s}", self.0));
        Allocation::Nodelete
    }
}
struct Other(Arc<Mutex<Vec<String>>>);
impl Actor for Other {}
impl Receive<String> for Other {
    fn receive(&mut self, s: String, _: &mut Context<'_, Self>) -> Allocation {
        self.0.lock().unwrap().push(format!("other:{s}"));
        Allocation::Delete
    }
}

#[test]
fn recipients_reach_actors_of_any_type_and_compare_by_actor() {
    watchdog(60, || {
        on_every_executor(|name, choose| {
            let system = build(choose, 2);
            let log = Arc::new(Mutex::new(Vec::new()));
            let t = system.spawn(Tagged("t", log.clone()));
            let o = system.spawn(Other(log.clone()));
            let r1: Recipient<String> = t.recipient();
            let r2: Recipient<String> = o.clone().into();
            let set: HashSet<Recipient<String>> = [r1.clone(), r1.clone(), r2.clone()].into();
            assert_eq!(set.len(), 2);
            assert_ne!(r1, r2);
            assert!(format!("{r1:?}").contains("Tagged"));
            r1.send("a".into()).unwrap();
            r2.send("b".into()).unwrap();
            settle(&system, 10, "both delivered", || {
                log.lock().unwrap().len() == 2
            });
            settle(&system, 10, "other ended", || !r2.is_alive());
            assert_eq!(r2.send("c".into()).unwrap_err().into_inner(), "c");
            // Asking through a recipient.
            let adder = system.spawn(Adder::default());
            let ra: Recipient<Ask<u64, u64>> = adder.recipient();
            assert_eq!(reply(&system, name, ra.ask(5).unwrap()), Ok(5));
            // Addresses hash and compare by actor too.
            // (Hashed by the cell's address, which never changes: clippy's lint cannot know.)
            #[allow(clippy::mutable_key_type)]
            let addrs: HashSet<Addr<Tagged>> = [t.clone(), t.clone()].into();
            assert_eq!(addrs.len(), 1);
            adder.send(DeleteMsg).unwrap();
            drop(system);
        });
    });
}

/// Keeps a weak address of itself; counts its drops.
struct WeakSelf {
    me: Option<WeakAddr<WeakSelf>>,
    drops: Arc<AtomicUsize>,
}
impl Actor for WeakSelf {
    fn started(&mut self, ctx: &mut Context<'_, Self>) {
        self.me = Some(ctx.address().downgrade());
    }
}
impl Drop for WeakSelf {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}
impl Receive<u32> for WeakSelf {
    fn receive(&mut self, n: u32, _: &mut Context<'_, Self>) -> Allocation {
        if n == 0 {
            return Allocation::Finished; // no join handle: the state is dropped at once
        }
        let me = self.me.as_ref().and_then(WeakAddr::upgrade).unwrap();
        me.send(n - 1).unwrap();
        Allocation::Nodelete
    }
}

#[test]
fn a_weak_self_address_makes_no_cycle() {
    watchdog(60, || {
        on_every_executor(|name, choose| {
            let system = build(choose, 2);
            let drops = Arc::new(AtomicUsize::new(0));
            let a = system.spawn(WeakSelf {
                me: None,
                drops: drops.clone(),
            });
            let weak = a.downgrade();
            a.send(100).unwrap();
            drop(a);
            settle(&system, 10, "the state dropped", || {
                drops.load(Ordering::SeqCst) == 1
            });
            if caller_driven(name) {
                drop(system);
            } else {
                system.stop();
            }
            // Nothing holds the cell any more: the weak address cannot be upgraded.
            assert!(weak.upgrade().is_none());
        });
    });
}

#[test]
fn a_blocking_wait_drives_a_caller_driven_system() {
    watchdog(60, || {
        let system = ActorSystem::builder()
            .policy(actorium::policy::Testing)
            .build()
            .unwrap();
        let given_back = Arc::new(AtomicUsize::new(0));
        let adder = system.spawn(Adder {
            given_back: given_back.clone(),
            ..Adder::default()
        });
        // No worker thread: the wait runs the actor's jobs on this thread.
        assert_eq!(adder.ask(5u64).unwrap().wait(), Ok(5));
        assert_eq!(
            adder
                .ask(6u64)
                .unwrap()
                .wait_timeout(Duration::from_secs(10)),
            Ok(11)
        );
        // A reply that never comes times out instead of hanging.
        assert_eq!(
            adder
                .ask(Later)
                .unwrap()
                .wait_timeout(Duration::from_millis(20)),
            Err(AskError::Timeout)
        );
        adder.send(Now).unwrap();
        system.run();
        assert_eq!(given_back.load(Ordering::SeqCst), 1);
    });
}
