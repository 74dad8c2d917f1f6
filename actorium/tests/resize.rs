//! Live resizing, as in the Cforall runtime (Thierry Delisle, PhD thesis, Waterloo 2022, chapter
//! "Scheduling in practice", "Manual Resizing"): add and remove workers while actors and tasks
//! run, on every executor; the RAII guard; bad input refused.

mod common;

use actorium::policy::{WorkSharing, WorkStealing};
use actorium::{
    Actor, ActorSystem, ActorSystemBuilder, Addr, Allocation, Context, QueueStealing, Receive,
    ResizeError,
};
use common::checked::{send_from_outside, Node, Shared, ACTORS, OUTSIDE_THREADS};
use common::{fib, fib_seq, watchdog, Rng};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// Every executor and policy, with room for 8 workers.
fn builders(workers: usize) -> Vec<(&'static str, ActorSystemBuilder)> {
    let b = || ActorSystem::builder().workers(workers).max_workers(8);
    // (The message-centric executor needs a queue per worker: 16 for up to 8 workers.)
    let inv = |h| b().queues(16).queue_stealing(h);
    vec![
        ("message-centric-longest", inv(QueueStealing::LongestVictim)),
        ("message-centric-random", inv(QueueStealing::Random)),
        ("message-centric-none", inv(QueueStealing::None)),
        ("policy-stealing", b().policy(WorkStealing::default())),
        ("policy-sharing", b().policy(WorkSharing)),
    ]
}

#[test]
fn bad_resizes_are_refused_and_change_nothing() {
    for (name, b) in builders(2) {
        let system = b.build().unwrap();
        let e = system.remove_workers(2).unwrap_err();
        assert_eq!(
            e,
            ResizeError::TooFew {
                workers: 2,
                asked: 2
            },
            "{name}"
        );
        assert!(e.to_string().contains("has 2"), "{name}: {e}");
        let e = system.remove_workers(5).unwrap_err();
        assert!(
            matches!(
                e,
                ResizeError::TooFew {
                    workers: 2,
                    asked: 5
                }
            ),
            "{name}"
        );
        let e = system.add_workers(7).unwrap_err();
        assert!(
            matches!(
                e,
                ResizeError::TooMany {
                    workers: 2,
                    asked: 7,
                    max: 8,
                    ..
                }
            ),
            "{name}: {e:?}"
        );
        assert!(e.to_string().contains("at most 8"), "{name}: {e}");
        assert_eq!(system.workers(), 2, "{name}");
        assert_eq!(system.add_workers(0).unwrap(), 2);
        assert_eq!(system.remove_workers(0).unwrap(), 2);
        system.stop();
    }
    // The message-centric executor needs a queue per worker.
    let system = ActorSystem::builder().workers(2).queues(3).build().unwrap();
    let e = system.add_workers(2).unwrap_err();
    assert!(matches!(e, ResizeError::TooMany { max: 3, .. }), "{e:?}");
    assert!(e.to_string().contains("3 message queues"), "{e}");
    assert_eq!(system.add_workers(1).unwrap(), 3);
    system.stop();
    // A bad maximum is refused at build time.
    let e = ActorSystem::builder()
        .workers(4)
        .max_workers(2)
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("max_workers(2)"), "{e}");
}

#[test]
fn a_caller_driven_system_cannot_be_resized() {
    let system = ActorSystem::builder()
        .policy(actorium::policy::Testing)
        .build()
        .unwrap();
    assert!(matches!(
        system.add_workers(1),
        Err(ResizeError::Unsupported(_))
    ));
    assert!(matches!(
        system.remove_workers(1),
        Err(ResizeError::Unsupported(_))
    ));
    system.stop();
}

/// Adds up the numbers it is sent.
struct Count(Arc<AtomicU64>);
impl Actor for Count {}
impl Receive<u64> for Count {
    fn receive(&mut self, m: u64, _: &mut Context<'_, Self>) -> Allocation {
        self.0.fetch_add(m, Ordering::Relaxed);
        Allocation::Nodelete
    }
}

#[test]
fn smoke_add_remove_with_messages() {
    watchdog(60, || {
        for (name, b) in builders(1) {
            let system = b.build().unwrap();
            let sum = Arc::new(AtomicU64::new(0));
            let addrs: Vec<Addr<Count>> =
                (0..32).map(|_| system.spawn(Count(sum.clone()))).collect();
            for round in 0..20u64 {
                for a in &addrs {
                    a.send(1).unwrap();
                }
                if round % 2 == 0 {
                    system.add_workers(3).unwrap();
                } else {
                    system.remove_workers(3).unwrap();
                }
            }
            let t0 = Instant::now();
            while sum.load(Ordering::Relaxed) < 20 * 32 {
                assert!(
                    t0.elapsed() < Duration::from_secs(20),
                    "{name}: stuck at {sum:?}"
                );
                thread::sleep(Duration::from_millis(1));
            }
            drop(addrs);
            drop(system);
        }
    });
}

// ---- A removal does not wait for a whole batch -------------------------------------------------

/// An open-once gate (the tests wait on gates, never on time).
#[derive(Default)]
struct Gate(AtomicBool);
impl Gate {
    fn open(&self) {
        self.0.store(true, Ordering::Release);
    }
    fn wait(&self) {
        while !self.0.load(Ordering::Acquire) {
            thread::yield_now();
        }
    }
}

/// Checks that its messages come in order. Its first behaviour records its worker and waits
/// at `go` if that worker is `hold_on` (or whatever it is, without `hold_on`); behaviours on
/// any other thread than the first one's set `moved` and wait at `elsewhere`.
struct Batched {
    first: Option<thread::ThreadId>,
    hold_on: Option<usize>,
    /// The worker of the first behaviour, once it started (`usize::MAX` before).
    started_on: Arc<AtomicUsize>,
    moved: Arc<AtomicBool>,
    go: Arc<Gate>,
    elsewhere: Arc<Gate>,
    ran: Arc<AtomicU64>,
    next: u64,
}
impl Batched {
    fn new(hold_on: Option<usize>, go: &Arc<Gate>, elsewhere: &Arc<Gate>) -> Self {
        Self {
            first: None,
            hold_on,
            started_on: Arc::new(AtomicUsize::new(usize::MAX)),
            moved: Arc::new(AtomicBool::new(false)),
            go: go.clone(),
            elsewhere: elsewhere.clone(),
            ran: Arc::new(AtomicU64::new(0)),
            next: 0,
        }
    }
}
impl Actor for Batched {}
impl Receive<u64> for Batched {
    fn receive(&mut self, seq: u64, ctx: &mut Context<'_, Self>) -> Allocation {
        let here = thread::current().id();
        match self.first {
            None => {
                self.first = Some(here);
                let w = ctx.worker_index();
                self.started_on.store(w, Ordering::Release);
                if self.hold_on.is_none_or(|h| h == w) {
                    self.go.wait();
                }
            }
            Some(t) if t != here => {
                self.moved.store(true, Ordering::Release);
                self.elsewhere.wait();
            }
            Some(_) => {}
        }
        assert_eq!(seq, self.next, "FIFO order broken");
        self.next += 1;
        self.ran.fetch_add(1, Ordering::Release);
        Allocation::Nodelete
    }
}

/// Messages queued behind the first behaviour of the removal tests' actor.
const N: u64 = 20_000;

/// The removal tests' common part: queues `N` messages for `a`, whose first behaviour waits
/// at `go` on worker 1 (they are gulped as one batch once it returns); removes worker 1 from
/// another thread and opens `go` once the removal is under way; returns how many of `a`'s
/// behaviours had run when the removal returned. Then opens `elsewhere` and waits for the
/// rest, which worker 0 runs.
fn remove_worker_1_behind(
    system: &ActorSystem,
    a: &Addr<Batched>,
    ran: &AtomicU64,
    go: &Gate,
    elsewhere: &Gate,
) -> u64 {
    for seq in 1..=N {
        a.send(seq).unwrap();
    }
    let h = system.handle();
    let removal = thread::spawn(move || h.remove_workers(1).unwrap());
    common::wait_for(60, "the removal", || system.workers() == 1);
    go.open();
    assert_eq!(removal.join().unwrap(), 1);
    let by_then = ran.load(Ordering::Acquire);
    elsewhere.open();
    common::wait_for(60, "the rest, run by worker 0", || {
        ran.load(Ordering::Acquire) == N + 1
    });
    by_then
}

/// A worker removed while its batch holds thousands of envelopes leaves within a few of them:
/// the rest goes back to the front of its queue, and the queue's new owner runs it, in order.
/// (Were the removal to wait for the whole batch, under a flood of sends a batch would grow
/// to millions while the resize waited.) Deterministic: the batch's behaviours run freely on
/// the removed worker's thread and wait at a gate on any other, so without the hand-back all
/// of them have run when the removal returns.
#[test]
fn a_removed_worker_hands_back_the_rest_of_its_batch() {
    for stealing in [QueueStealing::None, QueueStealing::LongestVictim] {
        watchdog(120, move || {
            // One queue per worker: the first two actors spawned from outside get one each
            // (compaction off: both workers active from the start).
            let system = ActorSystem::builder()
                .workers(2)
                .queues(2)
                .compaction(false)
                .queue_stealing(stealing)
                .build()
                .unwrap();
            let (go, elsewhere) = (Arc::new(Gate::default()), Arc::new(Gate::default()));
            let spawn = || {
                let b = Batched::new(None, &go, &elsewhere);
                let (ran, started_on) = (b.ran.clone(), b.started_on.clone());
                (system.spawn(b), ran, started_on)
            };
            let _on_worker_0 = spawn();
            let (a, ran, started_on) = spawn(); // queue 1: worker 1's, the one removed below
            a.send(0).unwrap();
            common::wait_for(60, "the first behaviour", || {
                started_on.load(Ordering::Acquire) != usize::MAX
            });
            assert_eq!(started_on.load(Ordering::Acquire), 1);
            let by_then = remove_worker_1_behind(&system, &a, &ran, &go, &elsewhere);
            assert!(
                by_then < N / 2,
                "{stealing:?}: the removal waited for {by_then} of {} behaviours",
                N + 1
            );
            drop(system); // (the actors never end: `stop` would wait for them)
        });
    }
}

/// The actor-centric executor's version: a removed worker ends the job it runs within a few
/// envelopes (the policy's `max_throughput` is unlimited by default, and a job ran its actor's
/// whole mail, which a flood keeps growing), and the job goes on on the other worker, in order.
/// Actors are spawned one at a time until one's first behaviour runs on worker 1, the one
/// removed below, where it waits at `go` (those on worker 0 return at once, so worker 0 stays
/// free). Its later behaviours wait at a gate on any other thread than worker 1's, so without
/// the early end all of them have run there when the removal returns.
#[test]
fn a_removed_worker_ends_its_actor_job_early() {
    for (name, b) in builders(2).into_iter().skip(3) {
        watchdog(120, move || {
            let system = b.build().unwrap();
            let (go, elsewhere) = (Arc::new(Gate::default()), Arc::new(Gate::default()));
            let mut tries = 0;
            let (a, ran, moved) = loop {
                tries += 1;
                assert!(
                    tries <= 1000,
                    "{name}: no actor ran on worker 1 in 1,000 spawns"
                );
                let b = Batched::new(Some(1), &go, &elsewhere);
                let (ran, on, moved) = (b.ran.clone(), b.started_on.clone(), b.moved.clone());
                let a = system.spawn(b);
                a.send(0).unwrap();
                common::wait_for(60, "a first behaviour", || {
                    on.load(Ordering::Acquire) != usize::MAX
                });
                if on.load(Ordering::Acquire) == 1 {
                    break (a, ran, moved);
                }
            };
            let by_then = remove_worker_1_behind(&system, &a, &ran, &go, &elsewhere);
            assert!(
                moved.load(Ordering::Acquire) && by_then < N / 2,
                "{name}: the removal waited for {by_then} of {} behaviours",
                N + 1
            );
            drop(system); // (the actors never end: `stop` would wait for them)
        });
    }
}

// ---- The stress test: a million messages while another thread resizes -------------------------

/// Resizes made so far by [`resizer`]s (each test's workload runs until enough were made).
struct Resizing {
    stop: AtomicBool,
    count: AtomicUsize,
}

/// The least resizes a workload must run through.
const MIN_RESIZES: usize = 100;

/// Messages each outside thread sends at least (as many again are forwarded by behaviours).
const MSGS_PER_THREAD: u64 = 125_000;

impl Resizing {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            stop: AtomicBool::new(false),
            count: AtomicUsize::new(0),
        })
    }

    fn enough(&self) -> bool {
        self.count.load(Ordering::Relaxed) >= MIN_RESIZES
    }
}

/// Resizes `system` between 1 and 8 workers at random, every 0.2-1 ms, until told to stop;
/// returns how many resizes it made.
fn resizer(
    system: actorium::SystemHandle,
    r: Arc<Resizing>,
    seed: u64,
) -> thread::JoinHandle<usize> {
    thread::spawn(move || {
        let mut rng = Rng::new(seed);
        while !r.stop.load(Ordering::Relaxed) {
            let target = 1 + rng.below(8);
            let now = system.workers();
            let res = if target > now {
                system.add_workers(target - now)
            } else {
                system.remove_workers(now - target)
            };
            assert_eq!(res.expect("resize within bounds"), target);
            assert_eq!(system.workers(), target);
            r.count.fetch_add(1, Ordering::Relaxed);
            thread::sleep(Duration::from_micros(200 + 100 * rng.below(8) as u64));
        }
        r.count.load(Ordering::Relaxed)
    })
}

fn stress_while_resizing(name: &str, builder: ActorSystemBuilder) {
    let system = builder.stats(true).build().unwrap();
    let shared = Shared::new();
    let (addrs, handles): (Vec<_>, Vec<_>) = (0..ACTORS)
        .map(|id| system.spawn_joinable(Node::new(id, shared.clone())))
        .unzip();
    assert!(shared.addrs.set(addrs.clone()).is_ok());
    let resizes = Resizing::new();
    let resizing = resizer(system.handle(), resizes.clone(), name.len() as u64);
    // At least MSGS_PER_THREAD each, and on until the resizer has made enough resizes.
    let enough = resizes.clone();
    let outside_sent = send_from_outside(&addrs, move |n| {
        if n % 1024 == 0 {
            thread::yield_now();
        }
        n <= MSGS_PER_THREAD || !enough.enough()
    });
    let total = 2 * outside_sent.iter().flatten().sum::<u64>();
    common::wait_for(120, "all messages delivered while resizing", || {
        shared.delivered.load(Ordering::Relaxed) >= total
    });
    resizes.stop.store(true, Ordering::Relaxed);
    let resizes = resizing.join().unwrap();
    for a in &addrs {
        a.send(actorium::FinishedMsg).unwrap();
    }
    let finals: Vec<Node> = handles
        .into_iter()
        .map(|h| h.join().expect("finished"))
        .collect();
    let stats = system.stop().unwrap();
    eprintln!("{name}: {resizes} resizes");
    assert!(resizes >= MIN_RESIZES, "{name}: only {resizes} resizes");
    assert!(total >= 2 * OUTSIDE_THREADS as u64 * MSGS_PER_THREAD);
    shared.check(&finals, &outside_sent, total, name);
    // Removed workers' counters stay in the totals.
    assert_eq!(
        stats.messages_processed,
        total + ACTORS as u64,
        "{name}: {stats}"
    );
    assert_eq!(
        stats.messages_sent,
        total + ACTORS as u64,
        "{name}: {stats}"
    );
    assert_eq!(stats.dead_letters, 0, "{name}");
}

#[test]
fn a_million_messages_while_resizing_every_executor() {
    for (name, b) in builders(4) {
        watchdog(300, move || stress_while_resizing(name, b));
    }
}

#[test]
fn limited_throughput_while_resizing() {
    for (name, b) in builders(2).into_iter().skip(3) {
        watchdog(300, move || {
            stress_while_resizing(name, b.max_throughput(1))
        });
    }
}

// ---- Fork/join while resizing --------------------------------------------------------------

/// Forks inside a behaviour: each message computes fib(n) with joins, on the actor's worker.
struct Forker {
    done: Arc<AtomicU64>,
    wrong: Arc<AtomicU64>,
}
impl Actor for Forker {}
impl Receive<u64> for Forker {
    fn receive(&mut self, n: u64, ctx: &mut Context<'_, Self>) -> Allocation {
        let (a, b) = ctx.join(|| fib(n - 1), || fib(n - 2));
        if a + b != fib_seq(n) {
            self.wrong.fetch_add(1, Ordering::Relaxed);
        }
        self.done.fetch_add(1, Ordering::Relaxed);
        Allocation::Nodelete
    }
}

#[test]
fn fork_join_while_resizing_every_executor() {
    for (name, b) in builders(2) {
        watchdog(300, move || {
            let system = b.build().unwrap();
            let resizes = Resizing::new();
            let resizing = resizer(system.handle(), resizes.clone(), 7);
            // From outside: submitted to the common queue, run on the workers.
            let outside: Vec<_> = (0..2)
                .map(|_| {
                    let h = system.handle();
                    let resizes = resizes.clone();
                    thread::spawn(move || {
                        while !resizes.enough() {
                            for n in 15..22 {
                                let r = h.join(|| fib(n), || fib(n - 1));
                                assert_eq!(r, (fib_seq(n), fib_seq(n - 1)));
                            }
                        }
                    })
                })
                .collect();
            // Inside behaviours, as long as the outside threads run.
            let done = Arc::new(AtomicU64::new(0));
            let wrong = Arc::new(AtomicU64::new(0));
            let forkers: Vec<_> = (0..8)
                .map(|_| {
                    system.spawn(Forker {
                        done: done.clone(),
                        wrong: wrong.clone(),
                    })
                })
                .collect();
            let mut sent = 0u64;
            while !resizes.enough() || sent < 160 {
                for f in &forkers {
                    f.send(sent % 18 + 2).unwrap();
                    sent += 1;
                }
                // Keep at most a few rounds queued.
                while sent - done.load(Ordering::Relaxed) > 64 {
                    thread::sleep(Duration::from_micros(100));
                }
            }
            outside.into_iter().for_each(|t| t.join().unwrap());
            common::wait_for(120, "forkers done", || done.load(Ordering::Relaxed) == sent);
            resizes.stop.store(true, Ordering::Relaxed);
            let resizes = resizing.join().unwrap();
            assert!(resizes >= MIN_RESIZES, "{name}: only {resizes} resizes");
            assert_eq!(wrong.load(Ordering::Relaxed), 0, "{name}: wrong fib");
            eprintln!("{name}: fork/join, {resizes} resizes");
            for f in &forkers {
                f.send(actorium::DeleteMsg).unwrap();
            }
            system.stop();
        });
    }
}

// ---- Resizing from a behaviour, the RAII guard -------------------------------------------------

/// Adds or removes workers from inside a behaviour (possibly the worker being removed).
struct Resizer {
    done: Arc<AtomicUsize>,
}
impl Actor for Resizer {}
impl Receive<i64> for Resizer {
    fn receive(&mut self, k: i64, ctx: &mut Context<'_, Self>) -> Allocation {
        let sys = ctx.system();
        let r = if k > 0 {
            sys.add_workers(k as usize)
        } else {
            sys.remove_workers((-k) as usize)
        };
        r.unwrap();
        self.done.fetch_add(1, Ordering::SeqCst);
        Allocation::Nodelete
    }
}

#[test]
fn resizing_from_inside_a_behaviour() {
    for (name, b) in builders(1) {
        watchdog(120, move || {
            let system = b.build().unwrap();
            let done = Arc::new(AtomicUsize::new(0));
            let actors: Vec<_> = (0..8)
                .map(|_| system.spawn(Resizer { done: done.clone() }))
                .collect();
            for round in 0..50 {
                let k = if round % 2 == 0 { 3 } else { -3 };
                actors[round % 8].send(k).unwrap();
                let want = round + 1;
                common::wait_for(30, "the behaviour resized", || {
                    done.load(Ordering::SeqCst) == want
                });
            }
            assert_eq!(system.workers(), 1, "{name}");
            for a in &actors {
                a.send(actorium::DeleteMsg).unwrap();
            }
            system.stop();
        });
    }
}

#[test]
fn the_guard_adds_and_removes_nested_and_from_another_thread() {
    for (name, b) in builders(1) {
        watchdog(120, move || {
            let system = b.build().unwrap();
            {
                let _a = system.extra_workers(2).unwrap();
                assert_eq!(system.workers(), 3, "{name}");
                {
                    let b = system.extra_workers(4).unwrap();
                    assert_eq!(b.count(), 4);
                    assert_eq!(system.workers(), 7, "{name}");
                }
                assert_eq!(system.workers(), 3, "{name}");
                // On the heap, moved to another thread and dropped there.
                let c = Box::new(system.extra_workers(1).unwrap());
                assert_eq!(system.workers(), 4, "{name}");
                thread::spawn(move || drop(c)).join().unwrap();
                assert_eq!(system.workers(), 3, "{name}");
            }
            assert_eq!(system.workers(), 1, "{name}");
            let g = system.extra_workers(2).unwrap();
            assert_eq!(g.release().unwrap(), 1);
            system.stop();
        });
    }
}

#[test]
fn a_guard_dropped_during_stop_or_after_it() {
    for (name, b) in builders(1) {
        watchdog(120, move || {
            let system = b.build().unwrap();
            let g = system.extra_workers(3).unwrap();
            let h = thread::spawn(move || {
                thread::sleep(Duration::from_millis(2));
                drop(g); // during or after stop: refused quietly, or done
            });
            let t0 = Instant::now();
            system.stop();
            h.join().unwrap();
            assert!(t0.elapsed() < Duration::from_secs(30), "{name}");
        });
    }
    // After a stop, a handle's resizes are refused.
    let system = ActorSystem::builder().workers(1).queues(4).build().unwrap();
    let h = system.handle();
    system.stop();
    assert_eq!(h.add_workers(1), Err(ResizeError::Stopped));
    assert_eq!(h.remove_workers(1), Err(ResizeError::Stopped));
}

#[test]
fn statistics_survive_removed_workers() {
    watchdog(60, || {
        let system = ActorSystem::builder()
            .workers(4)
            .queues(16)
            .stats(true)
            .build()
            .unwrap();
        let sum = Arc::new(AtomicU64::new(0));
        let addrs: Vec<_> = (0..16).map(|_| system.spawn(Count(sum.clone()))).collect();
        for _ in 0..100 {
            for a in &addrs {
                a.send(1).unwrap();
            }
        }
        common::wait_for(30, "delivered", || sum.load(Ordering::Relaxed) == 1600);
        system.remove_workers(3).unwrap();
        let s = system.stats().unwrap();
        assert_eq!(s.workers, 1);
        assert_eq!(s.messages_processed, 1600, "{s}");
        for a in &addrs {
            a.send(actorium::DeleteMsg).unwrap();
        }
        let s = system.stop().unwrap();
        assert_eq!(s.messages_processed, 1600 + 16, "{s}");
    });
}

// ---- Resizes racing stop, tasks and idle workers ------------------------------------------------

/// A removal from another thread while `stop()` waits for live actors: the removed workers
/// may end on the shutdown (not by leaving); the removal must return, and so must `stop`.
#[test]
fn a_removal_racing_stop_returns() {
    for (name, b) in builders(4) {
        watchdog(120, move || {
            for round in 0..20 {
                let system = b.clone().build().unwrap();
                let done = Arc::new(AtomicUsize::new(0));
                // Actors alive until told, so `stop` waits for them.
                let actors: Vec<_> = (0..8)
                    .map(|_| system.spawn(Resizer { done: done.clone() }))
                    .collect();
                let h = system.handle();
                let remover = thread::spawn(move || {
                    for _ in 0..3 {
                        let _ = h.add_workers(2);
                        let _ = h.remove_workers(2);
                    }
                    let _ = h.remove_workers(3);
                });
                let deleter = thread::spawn(move || {
                    thread::sleep(Duration::from_micros(100 * (round % 5)));
                    for a in &actors {
                        a.send(actorium::DeleteMsg).unwrap();
                    }
                });
                system.stop();
                remover.join().unwrap();
                deleter.join().unwrap();
                let _ = name;
            }
        });
    }
}

/// The same race at its tightest: a removal and `stop` started together on an idle system
/// (the removed workers may take shutdown jobs before their leave requests).
#[test]
fn a_removal_started_with_stop_returns() {
    for (name, b) in builders(4) {
        watchdog(120, move || {
            for _ in 0..200 {
                let system = b.clone().build().unwrap();
                let h = system.handle();
                let go = Arc::new(std::sync::Barrier::new(2));
                let go2 = go.clone();
                let remover = thread::spawn(move || {
                    go2.wait();
                    let _ = h.remove_workers(3);
                });
                go.wait();
                system.stop();
                remover.join().unwrap();
                let _ = name;
            }
        });
    }
}

/// A fork/join task stolen by a worker that the task itself removes: the removal must not
/// wait for its own thread.
#[test]
fn a_task_may_remove_the_worker_it_runs_on() {
    for (name, b) in builders(4) {
        watchdog(120, move || {
            let system = b.build().unwrap();
            let h = system.handle();
            for _ in 0..20 {
                let h2 = h.clone();
                let h3 = h.clone();
                system.scope(|s| {
                    s.spawn(move |_| {
                        if h2.workers() > 1 {
                            h2.remove_workers(h2.workers() - 1).unwrap();
                        }
                    });
                    s.spawn(move |_| {
                        let _ = h3.add_workers(3);
                    });
                });
                if system.workers() < 4 {
                    system.add_workers(4 - system.workers()).unwrap();
                }
            }
            assert!(system.workers() >= 1, "{name}");
            system.stop();
        });
    }
}

/// Tasks a scope's task left in a worker's deque when that worker is removed run before it
/// ends, even when one worker (the scope's owner) is all that is left.
#[test]
fn scope_leftovers_of_a_removed_worker_run() {
    for (name, b) in builders(4) {
        watchdog(120, move || {
            let system = b.build().unwrap();
            let h = system.handle();
            for _ in 0..20 {
                let ran = AtomicUsize::new(0);
                let h2 = h.clone();
                system.scope(|s| {
                    for _ in 0..4 {
                        s.spawn(|s| {
                            // Spawns onto the worker running it, and returns.
                            for _ in 0..8 {
                                s.spawn(|_| {
                                    ran.fetch_add(1, Ordering::Relaxed);
                                });
                            }
                        });
                    }
                    let n = h2.workers();
                    if n > 1 {
                        let _ = h2.remove_workers(n - 1);
                    }
                });
                assert_eq!(ran.load(Ordering::Relaxed), 32, "{name}");
                let n = system.workers();
                if n < 4 {
                    system.add_workers(4 - n).unwrap();
                }
            }
            system.stop();
        });
    }
}

/// Workers removed while idle (spinning, about to sleep, or asleep) always leave: a removal
/// that lands between a worker's look at its row and its sleep must still reach it.
#[test]
fn removing_idle_workers_never_hangs() {
    for (name, b) in builders(1) {
        watchdog(120, move || {
            let system = b.build().unwrap();
            for i in 0..300u64 {
                system.add_workers(3).unwrap();
                // Let them reach the spin or the sleep before they are removed.
                thread::sleep(Duration::from_micros(20 * (i % 10)));
                assert_eq!(system.remove_workers(3).unwrap(), 1, "{name}");
            }
            system.stop();
        });
    }
}

/// On the actor-centric executor, dropping a system while another thread removes and adds
/// workers must not hang the drop: a worker that left for the shutdown (its row still
/// active), marked leaving by a removal and kept by an add, would count as running again with
/// no thread, and the shutdown would wait for it for ever. Resizes are refused once the
/// system stops.
#[test]
fn dropping_a_system_while_another_thread_resizes_it_never_hangs() {
    type Make = fn() -> ActorSystem;
    let configs: [(&str, Make); 3] = [
        ("message-centric", || {
            ActorSystem::builder()
                .workers(2)
                .max_workers(4)
                .build()
                .unwrap()
        }),
        ("actor-centric work stealing", || {
            ActorSystem::builder()
                .workers(2)
                .max_workers(4)
                .policy(WorkStealing::default())
                .build()
                .unwrap()
        }),
        ("actor-centric work sharing", || {
            ActorSystem::builder()
                .workers(2)
                .max_workers(4)
                .policy(WorkSharing)
                .build()
                .unwrap()
        }),
    ];
    for (name, make) in configs {
        watchdog(120, move || {
            for _ in 0..300 {
                let system = make();
                let (started, go) = std::sync::mpsc::channel();
                // Three resizers at once: one's add may wait for another's removal.
                let resizers: Vec<_> = (0..3)
                    .map(|_| {
                        let (handle, started) = (system.handle(), started.clone());
                        thread::spawn(move || {
                            let _ = started.send(());
                            // Until both are refused: the system has begun to stop.
                            loop {
                                let removed = handle.remove_workers(1);
                                let added = handle.add_workers(1);
                                if removed.is_err() && added.is_err() {
                                    break;
                                }
                            }
                        })
                    })
                    .collect();
                for _ in 0..3 {
                    go.recv().unwrap();
                }
                drop(system);
                for r in resizers {
                    r.join().unwrap();
                }
            }
            eprintln!("{name}: 300 drops during resizes by three threads");
        });
    }
}
