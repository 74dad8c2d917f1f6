//! What a system does when user code misbehaves or a program shuts it down early: panics in a
//! scheduling policy, blocking on the system from inside it, dropping it with a backlog; and
//! statistics that count what `Stats` documents.

mod common;

use actorium::policy::{Job, Policy, Resumable, Scheduler, SharedQueue, WorkSharing, WorkerCtx};
use actorium::{
    Actor, ActorExit, ActorSystem, Addr, Allocation, Context, DeleteMsg, FinishedMsg, JoinHandle,
    Receive,
};
use common::{on_every_executor, settle, wait_for, watchdog, Counter};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

// --- Panics in a scheduling policy ---

/// Work sharing whose code panics where the flags say (each flag once).
#[derive(Default)]
struct Flaky {
    before_resume: AtomicBool,
    after_resume: AtomicBool,
    central_enqueue: AtomicBool,
    internal_enqueue: AtomicBool,
    dequeue: AtomicBool,
    /// Panic in `central_enqueue` every time (not once).
    always: bool,
    /// Panic in `central_enqueue` once, when the test sets it (after the build).
    central_enqueue_later: Arc<AtomicBool>,
}

impl Policy for Flaky {
    type Coordinator = SharedQueue;
    type Worker = ();
    type Local = ();

    fn coordinator(&self, n: usize) -> SharedQueue {
        WorkSharing.coordinator(n)
    }
    fn worker(&self, _: &SharedQueue, _: usize) -> ((), ()) {
        ((), ())
    }
    fn central_enqueue(&self, s: &Scheduler<'_, Self>, job: Job) {
        if self.always
            || self.central_enqueue.swap(false, Ordering::SeqCst)
            || self.central_enqueue_later.swap(false, Ordering::SeqCst)
        {
            panic!("flaky policy: central_enqueue");
        }
        s.coordinator().push(job)
    }
    fn internal_enqueue(&self, me: &mut WorkerCtx<'_, Self>, job: Job) {
        if self.internal_enqueue.swap(false, Ordering::SeqCst) {
            panic!("flaky policy: internal_enqueue");
        }
        me.scheduler().coordinator().push(job)
    }
    fn dequeue(&self, me: &mut WorkerCtx<'_, Self>) -> Option<Job> {
        if self.dequeue.swap(false, Ordering::SeqCst) {
            panic!("flaky policy: dequeue");
        }
        Some(me.scheduler().coordinator().pop_blocking())
    }
    fn before_resume(&self, _: &mut WorkerCtx<'_, Self>, _: &Job) {
        if self.before_resume.swap(false, Ordering::SeqCst) {
            panic!("flaky policy: before_resume");
        }
    }
    fn after_resume(&self, _: &mut WorkerCtx<'_, Self>, _: &Job, _: Resumable) {
        if self.after_resume.swap(false, Ordering::SeqCst) {
            panic!("flaky policy: after_resume");
        }
    }
}

fn counters(system: &ActorSystem, n: usize, left: u64) -> Arc<AtomicU64> {
    let done = Arc::new(AtomicU64::new(0));
    for _ in 0..n {
        system.spawn(Counter {
            left,
            done: done.clone(),
        });
    }
    done
}

#[test]
fn a_panicking_policy_hook_kills_no_worker_and_loses_nothing() {
    watchdog(60, || {
        let policy = Flaky::default();
        policy.before_resume.store(true, Ordering::SeqCst);
        policy.after_resume.store(true, Ordering::SeqCst);
        let system = ActorSystem::builder()
            .workers(2)
            .stats(true)
            .policy(policy)
            .build()
            .unwrap();
        let done = counters(&system, 20, 1000);
        let stats = system.stop().unwrap();
        assert_eq!(done.load(Ordering::SeqCst), 20, "every counter finished");
        assert_eq!(stats.panics, 2, "both hooks' panics were counted: {stats}");
    });
}

#[test]
fn a_policy_that_loses_a_job_fails_the_system_cleanly() {
    for flag in ["central_enqueue", "dequeue"] {
        eprintln!("--- panic in {flag}");
        watchdog(60, move || {
            let policy = Flaky::default();
            match flag {
                "central_enqueue" => policy.central_enqueue.store(true, Ordering::SeqCst),
                _ => policy.dequeue.store(true, Ordering::SeqCst),
            }
            let system = ActorSystem::builder()
                .workers(2)
                .policy(policy)
                .build()
                .unwrap();
            // The first job made goes through the panicking call; the counter may never run.
            let a = system.spawn(Counter {
                left: 10,
                done: Arc::new(AtomicU64::new(0)),
            });
            // `stop` would wait for it for ever; the failed system shuts down instead.
            system.stop();
            assert!(a.send(()).is_err(), "the system is down: sends fail");
        });
    }
}

/// A policy's panic is reported through the event hook after the policy's read section of
/// the resize lock: a hook that spawns an actor in the same system (a spawn from outside
/// always enqueues its start, in a read section of the same lock) does not wait for itself.
#[test]
fn an_event_hook_that_spawns_when_a_policy_panics_does_not_deadlock() {
    watchdog(60, || {
        let handle: Arc<std::sync::OnceLock<actorium::SystemHandle>> = Arc::default();
        let reported = Arc::new(AtomicU64::new(0));
        let policy = Flaky::default();
        let later = policy.central_enqueue_later.clone();
        let system = ActorSystem::builder()
            .workers(2)
            .policy(policy)
            .on_event({
                let (handle, reported) = (handle.clone(), reported.clone());
                move |e| {
                    if let actorium::Event::Panic { .. } = e {
                        reported.fetch_add(1, Ordering::SeqCst);
                        if let Some(h) = handle.get() {
                            h.spawn(Idle);
                        }
                    }
                }
            })
            .build()
            .unwrap();
        assert!(handle.set(system.handle()).is_ok());
        // The next central enqueue (this spawn's, from this thread) panics.
        later.store(true, Ordering::SeqCst);
        system.spawn(Idle);
        assert!(
            reported.load(Ordering::SeqCst) >= 1,
            "the panic was reported"
        );
        system.stop();
    });
}

/// Sends to an idle actor from a behaviour: an internal enqueue.
struct Poke(Addr<Idle>);
impl Actor for Poke {}
impl Receive<()> for Poke {
    fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
        let _ = self.0.send(7u8);
        Allocation::Nodelete
    }
}
impl Receive<u8> for Idle {
    fn receive(&mut self, _: u8, _: &mut Context<'_, Self>) -> Allocation {
        Allocation::Nodelete
    }
}

/// Blocks in its behaviour until the gate opens, then uses its state and reports.
struct Slow {
    gate: Option<mpsc::Receiver<()>>,
    entered: Arc<AtomicBool>,
    state: Vec<u64>,
    done: mpsc::Sender<u64>,
}
impl Actor for Slow {}
impl Receive<()> for Slow {
    fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
        self.entered.store(true, Ordering::SeqCst);
        let _ = self.gate.take().unwrap().recv();
        self.state.push(42);
        self.done.send(self.state.iter().sum()).unwrap();
        Allocation::Nodelete
    }
}

/// A failed policy while another worker runs a long behaviour: shutdown gives up on that
/// worker, and then frees nothing it could touch: the behaviour runs to its end on intact state
/// (freeing it under the behaviour would be a use after free).
#[test]
fn a_failed_policy_leaves_a_job_in_flight_untouched() {
    watchdog(60, || {
        let policy = Flaky::default();
        policy.internal_enqueue.store(true, Ordering::SeqCst);
        let system = ActorSystem::builder()
            .workers(2)
            .policy(policy)
            .build()
            .unwrap();
        let (open, gate) = mpsc::channel();
        let (done_tx, done) = mpsc::channel();
        let entered = Arc::new(AtomicBool::new(false));
        let slow = system.spawn(Slow {
            gate: Some(gate),
            entered: entered.clone(),
            state: vec![1, 2, 3],
            done: done_tx,
        });
        slow.send(()).unwrap();
        wait_for(30, "the slow behaviour", || entered.load(Ordering::SeqCst));
        // The other worker runs this; its send to an idle actor fails in `internal_enqueue`.
        system.spawn(Poke(system.spawn(Idle))).send(()).unwrap();
        // `stop` returns, leaving the busy worker behind (after 2 s), with its actor intact.
        system.stop();
        open.send(()).unwrap();
        assert_eq!(done.recv().unwrap(), 48, "the behaviour ran to its end");
        drop(slow);
    });
}

#[test]
fn a_policy_that_always_panics_still_lets_stop_return() {
    watchdog(60, || {
        let system = ActorSystem::builder()
            .workers(2)
            .policy(Flaky {
                always: true,
                ..Flaky::default()
            })
            .build()
            .unwrap();
        let a = system.spawn(Counter {
            left: 10,
            done: Arc::new(AtomicU64::new(0)),
        });
        // Shutdown jobs cannot be delivered either: the workers blocked in the policy are
        // left behind (reported, with the system's actors: a leak), and `stop` returns.
        system.stop();
        drop(a);
    });
}

#[test]
fn a_policy_that_panics_while_building_is_a_config_error() {
    struct Broken;
    impl Policy for Broken {
        type Coordinator = ();
        type Worker = ();
        type Local = ();
        fn coordinator(&self, _: usize) {
            panic!("no coordinator today");
        }
        fn worker(&self, _: &(), _: usize) -> ((), ()) {
            ((), ())
        }
        fn central_enqueue(&self, _: &Scheduler<'_, Self>, _: Job) {}
        fn dequeue(&self, _: &mut WorkerCtx<'_, Self>) -> Option<Job> {
            None
        }
    }
    let err = ActorSystem::builder().policy(Broken).build().unwrap_err();
    assert!(err.to_string().contains("no coordinator today"), "{err}");
}

// --- Blocking on a system from inside it ---

/// Runs `f` inside a behaviour of the system `a` belongs to and reports what it panicked with.
struct Inside(Option<Box<dyn FnOnce() + Send>>, mpsc::Sender<String>);
impl Actor for Inside {}
impl Receive<()> for Inside {
    fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
        let f = self.0.take().unwrap();
        let msg = match catch_unwind(AssertUnwindSafe(f)) {
            Ok(()) => "no panic".to_string(),
            Err(p) => p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default(),
        };
        self.1.send(msg).unwrap();
        Allocation::Delete
    }
}

/// Runs `f` in a behaviour of `system` (driving a caller-driven one) and returns its panic.
fn panic_inside(system: &ActorSystem, f: impl FnOnce() + Send + 'static) -> String {
    let (tx, rx) = mpsc::channel();
    system
        .spawn(Inside(Some(Box::new(f)), tx))
        .send(())
        .unwrap();
    let mut got = None;
    settle(system, 30, "the behaviour to report", || {
        got = got.take().or_else(|| rx.try_recv().ok());
        got.is_some()
    });
    got.unwrap()
}

#[derive(Debug)]
struct Idle;
impl Actor for Idle {}

#[test]
fn joining_an_actor_from_inside_its_system_panics_with_the_reason() {
    watchdog(120, || {
        on_every_executor(|_, ex| {
            let system = ex(ActorSystem::builder().workers(2)).build().unwrap();
            let (idle, handle): (Addr<Idle>, JoinHandle<Idle>) = system.spawn_joinable(Idle);
            let msg = panic_inside(&system, move || drop(handle.join()));
            assert!(
                msg.contains("`JoinHandle::join`") && msg.contains("deadlock"),
                "{msg}"
            );
            idle.send(DeleteMsg).unwrap();
            system.stop();
        });
    });
}

#[test]
fn stopping_a_system_from_inside_panics_and_dropping_it_there_shuts_it_down() {
    watchdog(120, || {
        on_every_executor(|name, ex| {
            for detached in [false, true] {
                eprintln!("--- {name}, from a detached actor: {detached}");
                let system = ex(ActorSystem::builder().workers(2)).build().unwrap();
                let handle = system.handle();
                let (probe, probe_handle) = system.spawn_joinable(Idle);
                // A behaviour takes the system and stops it: `stop` refuses; the system value,
                // dropped while that panic unwinds, then shuts the system down from inside.
                let slot = Arc::new(Mutex::new(None::<ActorSystem>));
                let s = slot.clone();
                let (tx, rx) = mpsc::channel();
                let behaviour = Inside(
                    Some(Box::new(move || {
                        let system = s.lock().unwrap().take().unwrap();
                        system.stop();
                    })),
                    tx,
                );
                let inside = if detached {
                    system.spawn_detached(behaviour)
                } else {
                    system.spawn(behaviour)
                };
                *slot.lock().unwrap() = Some(system);
                inside.send(()).unwrap();
                // Waiting for the probe drives a caller-driven system; it ends with the system.
                assert_eq!(probe_handle.join().unwrap_err(), ActorExit::Stopped);
                let msg = rx.recv_timeout(Duration::from_secs(30)).unwrap();
                assert!(msg.contains("`ActorSystem::stop`"), "{msg}");
                wait_for(30, "the system to shut down", || {
                    probe.send(DeleteMsg).is_err()
                });
                assert!(handle.try_spawn(Idle).is_err(), "no more spawns");
            }
        });
    });
}

#[test]
fn a_detached_actor_may_join_another_actor() {
    watchdog(60, || {
        on_every_executor(|_, ex| {
            let system = ex(ActorSystem::builder().workers(2)).build().unwrap();
            // Another actor: fine from a detached thread (it has a thread of its own).
            let (other, handle) = system.spawn_joinable(Idle);
            other.send(FinishedMsg).unwrap();
            let (tx, rx) = mpsc::channel();
            system
                .spawn_detached(Inside(
                    Some(Box::new(move || {
                        handle.join().unwrap();
                    })),
                    tx,
                ))
                .send(())
                .unwrap();
            let mut msg = None;
            settle(&system, 30, "the detached join", || {
                msg = msg.take().or_else(|| rx.try_recv().ok());
                msg.is_some()
            });
            assert_eq!(msg.unwrap(), "no panic");
            system.stop();
        });
    });
}

// --- Dropping a system with a backlog ---

/// Counts its messages; message `i` of each `(i, gate)` blocks until that gate opens.
struct Backlog {
    ran: Arc<AtomicU64>,
    /// The index of the last gated message reached.
    entered: Arc<AtomicU64>,
    gates: Vec<(u64, mpsc::Receiver<()>)>,
}
impl Actor for Backlog {}
impl Receive<u64> for Backlog {
    fn receive(&mut self, i: u64, _: &mut Context<'_, Self>) -> Allocation {
        self.ran.fetch_add(1, Ordering::SeqCst);
        if self.gates.first().is_some_and(|g| g.0 == i) {
            let (_, gate) = self.gates.remove(0);
            self.entered.store(i, Ordering::SeqCst);
            let _ = gate.recv();
        }
        Allocation::Nodelete
    }
}

const BACKLOG: u64 = 1_000_000;

/// A message inside the backlog's batch: the drop begins while it runs.
const GATED: u64 = 100;

/// Behaviours that may still run once a drop has begun: those a worker runs before it checks
/// again (every 64 envelopes).
const AFTER_DROP: u64 = 64;

#[test]
fn dropping_a_system_with_a_backlog_stops_running_behaviours_promptly() {
    watchdog(300, || {
        on_every_executor(|name, ex| {
            for detached in [false, true] {
                eprintln!("--- {name}, detached: {detached}");
                let system = ex(ActorSystem::builder().workers(2)).build().unwrap();
                let ran = Arc::new(AtomicU64::new(0));
                let entered = Arc::new(AtomicU64::new(u64::MAX));
                let (open_first, first) = mpsc::channel();
                let (open_second, second) = mpsc::channel();
                let actor = Backlog {
                    ran: ran.clone(),
                    entered: entered.clone(),
                    gates: vec![(0, first), (GATED, second)],
                };
                let a = if detached {
                    system.spawn_detached(actor)
                } else {
                    system.spawn(actor)
                };
                a.send(0).unwrap();
                if !detached && system.run_once() {
                    // Caller-driven: nothing runs unless asked. Run a few, then drop.
                    drop((open_first, open_second));
                    for i in 1..=BACKLOG {
                        a.send(i).unwrap();
                    }
                    for _ in 0..10 {
                        system.run_once();
                    }
                    let before = ran.load(Ordering::SeqCst);
                    drop(system);
                    assert_eq!(
                        ran.load(Ordering::SeqCst),
                        before,
                        "nothing runs after drop"
                    );
                    continue;
                }
                // The backlog piles up behind message 0, then is taken as one batch; the drop
                // begins while message GATED of that batch runs.
                settle(&system, 30, "message 0", || {
                    entered.load(Ordering::SeqCst) == 0
                });
                for i in 1..=BACKLOG {
                    a.send(i).unwrap();
                }
                open_first.send(()).unwrap();
                settle(&system, 30, "the gated message", || {
                    entered.load(Ordering::SeqCst) == GATED
                });
                // Drop on another thread; it blocks until the gated behaviour returns.
                let handle = system.handle();
                let dropper = std::thread::spawn(move || drop(system));
                wait_for(30, "the drop to begin", || handle.try_spawn(Idle).is_err());
                let before = ran.load(Ordering::SeqCst);
                open_second.send(()).unwrap();
                dropper.join().unwrap();
                let after = ran.load(Ordering::SeqCst) - before;
                eprintln!("behaviours run after the drop began: {after}");
                assert!(
                    after <= AFTER_DROP,
                    "{after} behaviours ran after the drop began (bound {AFTER_DROP})"
                );
                assert!(a.send(0).is_err());
            }
        });
    });
}

// --- Statistics as `Stats` documents them ---

/// Counts `started` hooks.
struct Starts(Arc<AtomicU64>);
impl Actor for Starts {
    fn started(&mut self, _: &mut Context<'_, Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}
impl Receive<u64> for Starts {
    fn receive(&mut self, _: u64, _: &mut Context<'_, Self>) -> Allocation {
        Allocation::Nodelete
    }
}

#[test]
fn gulps_count_messages_not_the_executors_own_envelopes() {
    watchdog(60, || {
        on_every_executor(|_, ex| {
            let system = ex(ActorSystem::builder().workers(2).stats(true))
                .build()
                .unwrap();
            let started = Arc::new(AtomicU64::new(0));
            let actors: Vec<_> = (0..50)
                .map(|_| system.spawn(Starts(started.clone())))
                .collect();
            settle(&system, 30, "every start", || {
                started.load(Ordering::SeqCst) == 50
            });
            let s = system.stats().unwrap();
            assert_eq!((s.gulps, s.gulped), (0, 0), "starts are no gulps: {s}");
            for i in 0..100 {
                actors[0].send(i).unwrap();
            }
            settle(&system, 30, "100 messages", || {
                system.stats().unwrap().messages_processed == 100
            });
            let s = system.stats().unwrap();
            // Every message came from outside the workers, so every one was gulped.
            assert_eq!(s.gulped, 100, "{s}");
            assert!((1..=100).contains(&s.gulps), "{s}");
            for a in &actors {
                a.send(DeleteMsg).unwrap();
            }
            let s = system.stop().unwrap();
            // The poison pills are messages too; the reclaim envelopes are not.
            assert_eq!(s.gulped, 150, "{s}");
        });
    });
}
