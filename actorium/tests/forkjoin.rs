//! Fork/join on the actors' workers (as Java's fork/join): results equal their sequential
//! values on every executor and 1..=4 workers, deep nesting, big scopes, panics, tasks beside
//! actors, and the rayon #592 deadlock scenario. Every test runs under a watchdog.

mod common;

use actorium::{Actor, ActorSystem, Allocation, Context, DeleteMsg, Receive};
use common::{fib, fib_seq, watchdog, ExecutorChoice, Rng, EXECUTORS};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::ThreadId;

fn quicksort(v: &mut [u64]) {
    if v.len() <= 32 {
        v.sort_unstable();
        return;
    }
    let mid = partition(v);
    let (l, r) = v.split_at_mut(mid);
    actorium::join(|| quicksort(l), || quicksort(&mut r[1..]));
}

fn partition(v: &mut [u64]) -> usize {
    let last = v.len() - 1;
    v.swap(v.len() / 2, last);
    let pivot = v[last];
    let mut store = 0;
    for i in 0..last {
        if v[i] < pivot {
            v.swap(i, store);
            store += 1;
        }
    }
    v.swap(store, last);
    store
}

fn sum(v: &[u64]) -> u64 {
    if v.len() <= 64 {
        return v.iter().sum();
    }
    let (l, r) = v.split_at(v.len() / 2);
    let (a, b) = actorium::join(|| sum(l), || sum(r));
    a + b
}

fn systems(workers: usize) -> impl Iterator<Item = (&'static str, ActorSystem)> {
    EXECUTORS
        .iter()
        .map(move |&(name, choose): &(&str, ExecutorChoice)| {
            eprintln!("--- {name}, {workers} workers");
            (
                name,
                choose(ActorSystem::builder().workers(workers))
                    .build()
                    .unwrap(),
            )
        })
}

/// [`systems`] whose idle workers take tasks (not work sharing, not the caller-driven testing
/// policy): where a task can be stolen.
fn stealing_systems(workers: usize) -> impl Iterator<Item = (&'static str, ActorSystem)> {
    systems(workers).filter(|(name, _)| !name.contains("sharing") && !name.contains("testing"))
}

#[test]
fn results_equal_sequential_on_every_executor_and_1_to_4_workers() {
    watchdog(120, || {
        let mut rng = Rng::new(7);
        let data: Vec<u64> = (0..20_000).map(|_| rng.next() % 1_000_000).collect();
        let mut sorted = data.clone();
        sorted.sort_unstable();
        for workers in 1..=4 {
            for (_, system) in systems(workers) {
                assert_eq!(
                    system.join(|| fib(20), || fib(18)),
                    (fib_seq(20), fib_seq(18))
                );
                let mut v = data.clone();
                system.scope(|_| quicksort(&mut v));
                assert_eq!(v, sorted);
                let (s, _) = system.join(|| sum(&data), || ());
                assert_eq!(s, data.iter().sum::<u64>());
                system.stop();
            }
        }
    });
}

#[test]
fn tasks_really_run_on_several_workers() {
    watchdog(60, || {
        let system = ActorSystem::builder().workers(4).build().unwrap();
        // Each leaf waits until two distinct threads have run leaves (or until 30 s after the
        // start, together, failing the assertion below): work is spread, not run on one
        // worker.
        let threads = Mutex::new(HashSet::<ThreadId>::new());
        let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
        fn leaves(depth: u32, threads: &Mutex<HashSet<ThreadId>>, until: std::time::Instant) {
            if depth == 0 {
                threads.lock().unwrap().insert(std::thread::current().id());
                while threads.lock().unwrap().len() < 2 && std::time::Instant::now() < until {
                    std::thread::yield_now();
                }
                return;
            }
            actorium::join(
                || leaves(depth - 1, threads, until),
                || leaves(depth - 1, threads, until),
            );
        }
        system.scope(|_| leaves(6, &threads, until));
        assert!(
            threads.lock().unwrap().len() >= 2,
            "every leaf ran on one thread"
        );
        system.stop();
    });
}

/// Counts the caller as started, then waits (up to 10 s) until `k` have: true if they all
/// ran at once.
fn all_started(started: &AtomicU64, k: u64) -> bool {
    use std::time::{Duration, Instant};
    started.fetch_add(1, Ordering::SeqCst);
    let t0 = Instant::now();
    while started.load(Ordering::SeqCst) < k {
        if t0.elapsed() > Duration::from_secs(10) {
            return false;
        }
        std::thread::yield_now();
    }
    true
}

/// A half that forks nothing (a long sequential leaf) does not keep its sibling from being
/// stolen: each half waits until the other has started, so the join completes only if they run
/// at once, on two workers. (With thieves that must ask the owner, who answers only at its next
/// fork or join, both halves would run one after the other and the first wait out its 10 s.)
#[test]
fn the_halves_of_a_join_of_two_leaves_run_at_once() {
    watchdog(120, || {
        for (name, system) in stealing_systems(2) {
            for _ in 0..20 {
                let started = AtomicU64::new(0);
                let (ra, rb) =
                    system.join(|| all_started(&started, 2), || all_started(&started, 2));
                assert!(
                    ra && rb,
                    "{name}: the second half did not start while the first ran"
                );
            }
            system.stop();
        }
    });
}

/// Every task of a scope, and every leaf of a join of joins, can be stolen while its siblings
/// run leaves that fork nothing: each waits until all have started, so this completes only if
/// they run at once (4 workers for 3 spawned tasks or 4 leaves; the scope's body and the root
/// join run on a worker too).
#[test]
fn siblings_of_long_leaves_are_stolen_too() {
    watchdog(180, || {
        for (name, system) in stealing_systems(4) {
            for round in 0..10 {
                let started = AtomicU64::new(0);
                let ok = AtomicU64::new(0);
                system.scope(|s| {
                    for _ in 0..3 {
                        let (started, ok) = (&started, &ok);
                        s.spawn(move |_| {
                            if all_started(started, 3) {
                                ok.fetch_add(1, Ordering::Relaxed);
                            }
                        });
                    }
                });
                assert_eq!(
                    ok.into_inner(),
                    3,
                    "{name}, round {round}: scope tasks ran apart"
                );
                let started = AtomicU64::new(0);
                let leaf = || all_started(&started, 4);
                let ((a, b), (c, d)) =
                    system.join(|| actorium::join(leaf, leaf), || actorium::join(leaf, leaf));
                assert!(
                    a && b && c && d,
                    "{name}, round {round}: leaves of a join ran apart"
                );
            }
            system.stop();
        }
    });
}

#[test]
fn nested_joins_30_levels_deep() {
    fn deep(level: u32) -> u64 {
        if level == 30 {
            return 1;
        }
        let (a, b) = actorium::join(|| deep(level + 1), || u64::from(level));
        a + b
    }
    // Beyond a few queued tasks the lazy rule runs a join's halves in turn, so most levels
    // above are not tasks: here each level is one, a scope's (scopes' spawns are always
    // queued), spawning the next level and waiting for it at the scope's end.
    fn deep_scopes(level: u32, sum: &AtomicU64) {
        sum.fetch_add(u64::from(level), Ordering::Relaxed);
        if level < 30 {
            actorium::scope(|s| s.spawn(move |_| deep_scopes(level + 1, sum)));
        }
    }
    watchdog(60, || {
        for (_, system) in systems(2) {
            let expected = 1 + (0..30u64).sum::<u64>();
            assert_eq!(system.join(|| deep(0), || ()).0, expected);
            let sum = AtomicU64::new(0);
            system.scope(|s| s.spawn(|_| deep_scopes(0, &sum)));
            assert_eq!(sum.load(Ordering::Relaxed), (0..=30u64).sum::<u64>());
            system.stop();
        }
    });
}

#[test]
fn a_scope_with_100_000_tasks() {
    watchdog(120, || {
        for (_, system) in systems(2) {
            let hits: Vec<AtomicU64> = (0..100_000).map(|_| AtomicU64::new(0)).collect();
            system.scope(|s| {
                for h in &hits {
                    s.spawn(move |_| {
                        h.fetch_add(1, Ordering::Relaxed);
                    });
                }
            });
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
            // Nested spawns: each task spawns two more, 2^16 leaves.
            let leaves = AtomicUsize::new(0);
            fn spread<'s>(s: &actorium::Scope<'s>, depth: u32, leaves: &'s AtomicUsize) {
                if depth == 0 {
                    leaves.fetch_add(1, Ordering::Relaxed);
                    return;
                }
                s.spawn(move |s| spread(s, depth - 1, leaves));
                s.spawn(move |s| spread(s, depth - 1, leaves));
            }
            system.scope(|s| spread(s, 16, &leaves));
            assert_eq!(leaves.into_inner(), 1 << 16);
            system.stop();
        }
    });
}

#[test]
fn fork_handles_join_in_any_order() {
    fn fib_forked(n: u64) -> u64 {
        if n < 2 {
            return n;
        }
        actorium::scope(|s| {
            let a = s.fork(|| fib_forked(n - 1));
            let b = s.fork(|| fib_forked(n - 2));
            // Joined oldest first: `a` is below `b` in the deque (removed from the middle, or
            // taken by a thief).
            a.join() + b.join()
        })
    }
    watchdog(60, || {
        for (_, system) in systems(3) {
            assert_eq!(system.scope(|_| fib_forked(16)), fib_seq(16));
            // Newest first: `b` is on top of the deque (popped back, or taken by a thief).
            let (x, y) = system.scope(|s| {
                let a = s.fork(|| fib(14));
                let b = s.fork(|| fib(13));
                let y = b.join();
                (a.join(), y)
            });
            assert_eq!((x, y), (fib_seq(14), fib_seq(13)));
            // A handle never joined still runs before the scope ends.
            let ran = AtomicBool::new(false);
            system.scope(|s| {
                let _ = s.fork(|| ran.store(true, Ordering::SeqCst));
            });
            assert!(ran.load(Ordering::SeqCst));
            system.stop();
        }
    });
}

#[test]
fn panics_reach_the_joiner_and_the_pool_survives() {
    watchdog(60, || {
        for (_, system) in systems(2) {
            for round in 0..20u64 {
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    system.join(
                        || fib(12),
                        || {
                            actorium::join(
                                || fib(10),
                                || {
                                    if round % 2 == 0 {
                                        panic!("boom in b")
                                    }
                                    1
                                },
                            )
                        },
                    )
                }));
                if round % 2 == 0 {
                    let p = r.expect_err("the panic reaches the joiner");
                    assert_eq!(p.downcast_ref::<&str>(), Some(&"boom in b"));
                } else {
                    assert_eq!(r.unwrap().0, fib_seq(12));
                }
                // A panic in `a` too, and in a scope's task.
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    system.join(|| panic!("boom in a"), || fib(15))
                }));
                assert!(r.is_err());
                let done = AtomicU64::new(0);
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    system.scope(|s| {
                        for i in 0..100u64 {
                            let done = &done;
                            s.spawn(move |_| {
                                if i == 50 {
                                    panic!("boom in a task")
                                }
                                done.fetch_add(1, Ordering::Relaxed);
                            });
                        }
                    })
                }));
                assert!(r.is_err());
                // Every other task still ran before the scope returned.
                assert_eq!(done.load(Ordering::Relaxed), 99);
            }
            // Still usable, with every worker.
            assert_eq!(
                system.join(|| fib(18), || fib(17)),
                (fib_seq(18), fib_seq(17))
            );
            system.stop();
        }
    });
}

/// A behaviour that forks and joins, while other actors exchange messages on the same workers.
struct Forker {
    results: mpsc::Sender<u64>,
}
impl Actor for Forker {}
impl Receive<u64> for Forker {
    fn receive(&mut self, n: u64, ctx: &mut Context<'_, Self>) -> Allocation {
        // Odd sizes through a scope's fork handles, joined newest first; even ones by a join.
        let (a, b) = if n % 2 == 1 {
            ctx.scope(|s| {
                let a = s.fork(|| fib(n));
                let b = s.fork(|| fib(n - 1));
                let rb = b.join();
                (a.join(), rb)
            })
        } else {
            ctx.join(|| fib(n), || fib(n - 1))
        };
        self.results.send(a + b).unwrap();
        Allocation::Nodelete
    }
}

struct Pinger {
    left: u64,
    peer: Option<actorium::Addr<Pinger>>,
    done: Arc<AtomicU64>,
}
impl Actor for Pinger {}
struct Peer(actorium::Addr<Pinger>);
impl Receive<Peer> for Pinger {
    fn receive(&mut self, p: Peer, _: &mut Context<'_, Self>) -> Allocation {
        self.peer = Some(p.0);
        Allocation::Nodelete
    }
}
impl Receive<u64> for Pinger {
    fn receive(&mut self, seq: u64, _: &mut Context<'_, Self>) -> Allocation {
        self.done.fetch_add(1, Ordering::Relaxed);
        if self.left == 0 {
            return Allocation::Nodelete;
        }
        self.left -= 1;
        self.peer.as_ref().unwrap().send(seq + 1).unwrap();
        Allocation::Nodelete
    }
}

#[test]
fn behaviours_fork_while_other_actors_exchange_messages() {
    watchdog(120, || {
        for (name, system) in systems(3) {
            if name.contains("testing") {
                continue; // caller-driven: no worker threads to share
            }
            let done = Arc::new(AtomicU64::new(0));
            let pairs = 8;
            let hops = 2_000;
            let mut pingers = Vec::new();
            let mut partners = Vec::new();
            for _ in 0..pairs {
                let a = system.spawn(Pinger {
                    left: hops,
                    peer: None,
                    done: done.clone(),
                });
                let b = system.spawn(Pinger {
                    left: hops,
                    peer: None,
                    done: done.clone(),
                });
                a.send(Peer(b.clone())).unwrap();
                b.send(Peer(a.clone())).unwrap();
                pingers.push(a);
                partners.push(b);
            }
            let (tx, rx) = mpsc::channel();
            let forkers: Vec<_> = (0..4)
                .map(|_| {
                    system.spawn(Forker {
                        results: tx.clone(),
                    })
                })
                .collect();
            for a in &pingers {
                a.send(0u64).unwrap();
            }
            for round in 0..5u64 {
                for f in &forkers {
                    f.send(15 + round % 3).unwrap();
                }
            }
            let mut got: Vec<u64> = (0..20).map(|_| rx.recv().unwrap()).collect();
            got.sort_unstable();
            let mut want: Vec<u64> = (0..5u64)
                .flat_map(|r| std::iter::repeat_n(fib_seq(15 + r % 3) + fib_seq(14 + r % 3), 4))
                .collect();
            want.sort_unstable();
            assert_eq!(got, want);
            // Every hop of every pair was delivered: 2 * (hops + 1) behaviours per pair.
            common::settle(&system, 60, "every ping delivered", || {
                done.load(Ordering::Relaxed) == pairs * 2 * (hops + 1) - pairs
            });
            for f in &forkers {
                f.send(DeleteMsg).unwrap();
            }
            for p in pingers.iter().chain(&partners) {
                p.send(DeleteMsg).unwrap();
            }
            system.stop();
        }
    });
}

#[test]
fn tasks_may_send_messages_to_actors() {
    struct Sink(Arc<AtomicU64>);
    impl Actor for Sink {}
    impl Receive<u64> for Sink {
        fn receive(&mut self, x: u64, _: &mut Context<'_, Self>) -> Allocation {
            self.0.fetch_add(x, Ordering::Relaxed);
            Allocation::Nodelete
        }
    }
    watchdog(60, || {
        for (_, system) in systems(2) {
            let total = Arc::new(AtomicU64::new(0));
            let sink = system.spawn(Sink(total.clone()));
            system.scope(|s| {
                for i in 1..=1000u64 {
                    let sink = sink.clone();
                    s.spawn(move |_| sink.send(i).unwrap());
                }
            });
            common::settle(&system, 30, "every task's message", || {
                total.load(Ordering::Relaxed) == 500_500
            });
            sink.send(DeleteMsg).unwrap();
            system.stop();
        }
    });
}

/// rayon #592: an outer parallel loop whose items each lock one mutex and, holding it, run an
/// inner join. With rayon's helping, a worker waiting in the inner join may take another outer
/// item, which blocks on the mutex its own thread holds: a deadlock. The helping rule here only
/// runs, while waiting, tasks forked under the awaited job, so this completes.
///
/// Made to happen every time: three workers (one runs the scope's body, which waits for the
/// plain thread); each outer item is spawned from a plain thread (so it waits in the common
/// queue, where a worker that helps with anything finds it) only once the previous item's inner
/// second half has started (the first half waits for that, and the second, public in the
/// joiner's deque, is taken by the idle worker); that half then runs 5 ms, so the joiner,
/// holding the lock, waits for it while the next outer item is queued. The plain thread waits for that start with no
/// timeout: with one, a slow machine (CI) let two outer items overlap, one worker then blocked
/// on the mutex and the other's second half had no thief (20 s of spinning, then run inline).
#[test]
fn rayon_592_join_inside_a_mutex_holding_task_completes() {
    use std::time::{Duration, Instant};
    watchdog(120, || {
        for (_, system) in stealing_systems(3) {
            let lock = Mutex::new(0u64);
            let items = 20u64;
            let stolen = AtomicU64::new(0);
            let (tx, rx) = mpsc::channel::<()>();
            let rx = Mutex::new(rx);
            let (lock_r, stolen_r, tx_r, rx_r) = (&lock, &stolen, &tx, &rx);
            system.scope(|s| {
                std::thread::scope(|ts| {
                    ts.spawn(move || {
                        for i in 0..items {
                            let (lock, stolen, tx) = (lock_r, stolen_r, tx_r.clone());
                            s.spawn(move |_| {
                                let mut g = lock.lock().unwrap();
                                let me = std::thread::current().id();
                                let started = Mutex::new(None);
                                let (a, b) = actorium::join(
                                    || {
                                        // Until the other half has started (an idle
                                        // worker takes `b`, the oldest task here).
                                        let t0 = Instant::now();
                                        while started.lock().unwrap().is_none()
                                            && t0.elapsed() < Duration::from_secs(20)
                                        {
                                            actorium::join(|| (), || ());
                                            std::thread::yield_now();
                                        }
                                        fib(10)
                                    },
                                    || {
                                        let t = std::thread::current().id();
                                        *started.lock().unwrap() = Some(t);
                                        // Started (here or, after the first half's 20 s,
                                        // inline): the plain thread may queue the next item.
                                        let _ = tx.send(());
                                        if t != me {
                                            std::thread::sleep(Duration::from_millis(5));
                                        }
                                        fib(10)
                                    },
                                );
                                if started.lock().unwrap().is_some_and(|t| t != me) {
                                    stolen.fetch_add(1, Ordering::Relaxed);
                                }
                                *g += a + b + i;
                            });
                            // The next item once this one's second half has started.
                            rx_r.lock().unwrap().recv().unwrap();
                        }
                    });
                });
            });
            assert_eq!(
                lock.into_inner().unwrap(),
                items * 2 * fib_seq(10) + (0..items).sum::<u64>()
            );
            // The scenario happened: second halves ran on the other worker while the joiner
            // held the lock, with the next outer item queued.
            let stolen = stolen.load(Ordering::Relaxed);
            eprintln!("{stolen} of {items} inner joins stolen");
            assert_eq!(
                stolen, items,
                "every inner second half ran on another worker"
            );
            system.stop();
        }
    });
}

#[test]
fn join_from_a_detached_actor_and_from_another_thread() {
    struct Detached(mpsc::Sender<u64>);
    impl Actor for Detached {}
    impl Receive<u64> for Detached {
        fn receive(&mut self, n: u64, ctx: &mut Context<'_, Self>) -> Allocation {
            let (a, b) = ctx.join(|| fib(n), || fib(n));
            self.0.send(a + b).unwrap();
            Allocation::Nodelete
        }
    }
    watchdog(60, || {
        for (_, system) in systems(2) {
            let (tx, rx) = mpsc::channel();
            let d = system.spawn_detached(Detached(tx));
            d.send(15).unwrap();
            assert_eq!(rx.recv().unwrap(), 2 * fib_seq(15));
            let h = system.handle();
            let t = std::thread::spawn(move || h.join(|| fib(16), || fib(15)));
            assert_eq!(t.join().unwrap(), (fib_seq(16), fib_seq(15)));
            d.send(DeleteMsg).unwrap();
            system.stop();
        }
    });
}

/// The executors whose idle workers look for tasks (and sleep in the runtime's idle sleep):
/// message-centric, and actor-centric with work stealing.
fn thieving_builders() -> [actorium::ActorSystemBuilder; 2] {
    [
        ActorSystem::builder(),
        ActorSystem::builder().policy(actorium::policy::WorkStealing::default()),
    ]
}

#[test]
fn idle_workers_sleep_after_tasks() {
    watchdog(60, || {
        for b in thieving_builders() {
            let system = b.workers(2).stats(true).build().unwrap();
            let before = system.stats().unwrap().sleeps;
            assert_eq!(system.join(|| fib(20), || fib(20)).0, fib_seq(20));
            // With nothing queued, the workers that ran the tasks go back to sleep.
            common::wait_for(10, "workers asleep after the tasks", || {
                system.stats().unwrap().sleeps > before
            });
            // And a task submitted now wakes one.
            assert_eq!(system.join(|| fib(15), || 1).0, fib_seq(15));
            system.stop();
        }
    });
}

#[test]
fn idle_workers_sleep_beside_a_long_task_whose_sibling_was_taken() {
    // A join whose second half a thief took at once while the first runs long: the worker
    // running it shows tasks with none left to take. Idle workers must sleep meanwhile (they
    // spun, a core each, for as long as the first half ran), and still take tasks it forks.
    watchdog(60, || {
        for b in thieving_builders() {
            let system = b.workers(4).compaction(false).stats(true).build().unwrap();
            let gate = Arc::new(common::Gate::default());
            // Opened on every way out (a failed wait below must not leave a worker blocked in
            // the gate, and the system's drop waiting for it).
            struct OpenOnDrop(Arc<common::Gate>);
            impl Drop for OpenOnDrop {
                fn drop(&mut self) {
                    self.0.open();
                }
            }
            let open = OpenOnDrop(gate.clone());
            let (taken_tx, taken_rx) = std::sync::mpsc::channel();
            let (g, h) = (gate.clone(), system.handle());
            let joiner = std::thread::spawn(move || {
                h.join(
                    move || {
                        let taken = taken_rx
                            .recv_timeout(std::time::Duration::from_secs(10))
                            .is_ok();
                        g.wait();
                        // Tasks forked now are still taken (a sleeper is woken for them).
                        (taken, actorium::join(|| fib(18), || fib(18)))
                    },
                    move || taken_tx.send(()).unwrap(),
                )
            });
            // The second half ran, on another worker (the first waits for it); from now on
            // nothing is public until the gate opens.
            common::wait_for(10, "the second half taken", || {
                system.stats().unwrap().steals > 0
            });
            let before = system.stats().unwrap().sleeps;
            common::wait_for(10, "idle workers asleep beside the long task", || {
                system.stats().unwrap().sleeps >= before + 20
            });
            drop(open);
            let ((taken, (x, y)), ()) = joiner.join().unwrap();
            assert!(taken, "the second half was never run");
            assert_eq!((x, y), (fib_seq(18), fib_seq(18)));
            system.stop();
        }
    });
}

/// Runs a scope (not inside a stolen job) whose two tasks the other workers take while its
/// body waits; says whether they did.
struct ScopeInBehaviour(mpsc::Sender<bool>);
impl Actor for ScopeInBehaviour {}
impl Receive<()> for ScopeInBehaviour {
    fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
        let started = AtomicUsize::new(0);
        let all_stolen = actorium::scope(|sc| {
            for _ in 0..2 {
                let s = &started;
                sc.spawn(move |_| {
                    s.fetch_add(1, Ordering::SeqCst);
                });
            }
            // Both taken by the other workers before the waiter could pop one.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while started.load(Ordering::SeqCst) < 2 && std::time::Instant::now() < deadline {
                std::thread::yield_now();
            }
            started.load(Ordering::SeqCst) == 2
        });
        self.0.send(all_stolen).unwrap();
        Allocation::Delete
    }
}

#[test]
fn idle_workers_sleep_for_good_after_a_scope_whose_tasks_were_all_stolen() {
    // A scope's waiter never pops a deque that thieves emptied: it must still stop showing
    // tasks, or every idle worker naps beside it, waking every millisecond, until it forks
    // again.
    watchdog(60, || {
        for b in thieving_builders() {
            let system = b.workers(3).compaction(false).stats(true).build().unwrap();
            let (tx, rx) = mpsc::channel();
            system.spawn(ScopeInBehaviour(tx)).send(()).unwrap();
            let all_stolen = rx.recv().unwrap();
            assert!(all_stolen, "the tasks were not taken by the other workers");
            // Quiet now: every worker sleeps without a time limit (but for one wake-up to give
            // memory back), so the count of sleeps stops growing.
            let mut last = (system.stats().unwrap().sleeps, std::time::Instant::now());
            common::wait_for(10, "the sleeps to stop", || {
                let now = system.stats().unwrap().sleeps;
                if now != last.0 {
                    last = (now, std::time::Instant::now());
                }
                last.1.elapsed() > std::time::Duration::from_millis(100)
            });
            system.stop();
        }
    });
}

#[test]
fn join_through_a_handle_after_stop_runs_on_the_caller() {
    watchdog(60, || {
        for (_, system) in systems(2) {
            let h = system.handle();
            system.stop();
            assert_eq!(h.join(|| fib(15), || fib(14)), (fib_seq(15), fib_seq(14)));
            let mut v = vec![3u64, 1, 2];
            h.scope(|s| s.spawn(|_| v.sort_unstable()));
            assert_eq!(v, [1, 2, 3]);
        }
    });
}

/// Adds one to its counter when dropped, after a pause (so that a drop made late shows).
struct LateBump<'a>(&'a AtomicUsize);
impl Drop for LateBump<'_> {
    fn drop(&mut self) {
        std::thread::sleep(std::time::Duration::from_millis(20));
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A forked task whose handle is dropped unjoined, run by a thief: its result is dropped
/// before the scope returns (it may borrow from the scope's caller: dropped after, it would
/// write into a frame that is gone), and a panic in such a task is resumed when the scope ends.
#[test]
fn a_dropped_fork_handle_s_task_ends_inside_its_scope() {
    watchdog(60, || {
        for (name, system) in stealing_systems(2) {
            let (n, started) = (AtomicUsize::new(0), AtomicBool::new(false));
            system.scope(|s| {
                drop(s.fork(|| {
                    started.store(true, Ordering::SeqCst);
                    LateBump(&n)
                }));
                // Taken by the other worker: this one never runs it.
                while !started.load(Ordering::SeqCst) {
                    std::thread::yield_now();
                }
            });
            assert_eq!(
                n.load(Ordering::SeqCst),
                1,
                "{name}: dropped inside the scope"
            );
            // A result whose destructor panics: the scope still ends, and resumes the panic.
            struct PanicsWhenDropped;
            impl Drop for PanicsWhenDropped {
                fn drop(&mut self) {
                    panic!("a forked task's result panics when dropped (on purpose)");
                }
            }
            let started = AtomicBool::new(false);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                system.scope(|s| {
                    drop(s.fork(|| {
                        started.store(true, Ordering::SeqCst);
                        PanicsWhenDropped
                    }));
                    while !started.load(Ordering::SeqCst) {
                        std::thread::yield_now();
                    }
                })
            }));
            assert!(r.is_err(), "{name}: the destructor's panic is resumed");
            // Dropped before it ran, and after it ran (and panicked).
            for after in [false, true] {
                let ran = AtomicBool::new(false);
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    system.scope(|s| {
                        let h = s.fork(|| {
                            ran.store(true, Ordering::SeqCst);
                            panic!("a forked task panics (on purpose)")
                        });
                        if after {
                            while !ran.load(Ordering::SeqCst) {
                                std::thread::yield_now();
                            }
                        }
                        drop(h);
                    })
                }));
                assert!(r.is_err(), "{name}, dropped after it ran: {after}");
            }
            system.stop();
        }
    });
}

/// A worker that ends with tasks in its deque (a task it ran spawned them into a scope as the
/// system was being dropped) runs them first: their scope, and the drop, would wait forever.
#[test]
fn a_worker_that_ends_runs_the_tasks_left_in_its_deque() {
    struct Dummy;
    impl Actor for Dummy {}
    watchdog(60, || {
        for (name, system) in stealing_systems(2) {
            let h = system.handle();
            let (started, done, child) = (
                Arc::new(AtomicBool::new(false)),
                Arc::new(AtomicBool::new(false)),
                Arc::new(AtomicBool::new(false)),
            );
            let scoper = {
                let (h, started, done, child) =
                    (h.clone(), started.clone(), done.clone(), child.clone());
                std::thread::spawn(move || {
                    h.scope(|s| {
                        let (h2, done2, child) = (h.clone(), done.clone(), child.clone());
                        s.spawn(move |s| {
                            started.store(true, Ordering::SeqCst);
                            // Until the system is being dropped (it then refuses spawns).
                            while h2.try_spawn(Dummy).is_ok() {
                                std::thread::yield_now();
                            }
                            let child = child.clone();
                            s.spawn(move |_| child.store(true, Ordering::SeqCst));
                            done2.store(true, Ordering::SeqCst);
                        });
                        while !done.load(Ordering::SeqCst) {
                            std::thread::yield_now();
                        }
                    })
                })
            };
            while !started.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
            drop(system);
            scoper.join().unwrap();
            assert!(child.load(Ordering::SeqCst), "{name}: the child task ran");
        }
    });
}

/// A detached actor that joins while its system is being dropped: once the workers are gone,
/// its thread runs the join itself (the drop waits for that thread).
#[test]
fn a_detached_actor_s_join_during_the_drop_runs_on_its_thread() {
    struct Dummy;
    impl Actor for Dummy {}
    struct Joiner(mpsc::Sender<()>, mpsc::Sender<(u64, u64)>);
    impl Actor for Joiner {}
    impl Receive<()> for Joiner {
        fn receive(&mut self, _: (), ctx: &mut Context<'_, Self>) -> Allocation {
            self.0.send(()).unwrap();
            let h = ctx.system();
            while h.try_spawn(Dummy).is_ok() {
                std::thread::yield_now();
            }
            self.1.send(ctx.join(|| fib(10), || fib(11))).unwrap();
            Allocation::Nodelete
        }
    }
    watchdog(60, || {
        for (name, system) in stealing_systems(2) {
            let (entered_tx, entered) = mpsc::channel();
            let (out_tx, out) = mpsc::channel();
            system
                .spawn_detached(Joiner(entered_tx, out_tx))
                .send(())
                .unwrap();
            entered.recv().unwrap();
            drop(system);
            assert_eq!(out.recv().unwrap(), (fib_seq(10), fib_seq(11)), "{name}");
        }
    });
}

/// Tasks spawned into a scope from a thread that is no worker of its pool run once each, also
/// when no idle worker takes tasks (one worker, busy with the scope; work sharing): the scope's
/// waiter runs them (else it would wait for them forever).
#[test]
fn scope_tasks_spawned_from_outside_the_pool_run_once_each() {
    watchdog(60, || {
        for workers in [1, 2] {
            for (name, system) in systems(workers) {
                let n = AtomicUsize::new(0);
                system.scope(|s| {
                    std::thread::scope(|t| {
                        t.spawn(|| {
                            for _ in 0..100 {
                                s.spawn(|_| {
                                    n.fetch_add(1, Ordering::SeqCst);
                                });
                            }
                        });
                    });
                });
                assert_eq!(n.load(Ordering::SeqCst), 100, "{name}, {workers} workers");
                system.stop();
            }
        }
    });
}

/// The same from inside a behaviour (`Context::scope` on a worker, also with work sharing,
/// whose idle workers take no tasks), where the outside thread's tasks fork subtasks: the
/// scope's waiter runs the tasks and helps with what they fork.
#[test]
fn a_behaviour_s_scope_runs_tasks_spawned_from_outside_the_pool() {
    struct Scoper(mpsc::Sender<usize>);
    impl Actor for Scoper {}
    impl Receive<()> for Scoper {
        fn receive(&mut self, _: (), ctx: &mut Context<'_, Self>) -> Allocation {
            let n = AtomicUsize::new(0);
            ctx.scope(|s| {
                std::thread::scope(|t| {
                    t.spawn(|| {
                        for _ in 0..50 {
                            s.spawn(|s| {
                                for _ in 0..2 {
                                    s.spawn(|_| {
                                        n.fetch_add(1, Ordering::SeqCst);
                                    });
                                }
                            });
                        }
                    });
                });
            });
            self.0.send(n.load(Ordering::SeqCst)).unwrap();
            Allocation::Nodelete
        }
    }
    watchdog(60, || {
        for workers in [1, 2] {
            for (name, system) in systems(workers) {
                let (tx, rx) = mpsc::channel();
                let a = system.spawn(Scoper(tx));
                a.send(()).unwrap();
                let got = loop {
                    if let Ok(n) = rx.try_recv() {
                        break n;
                    }
                    system.run_once();
                    std::thread::yield_now();
                };
                assert_eq!(got, 100, "{name}, {workers} workers");
                a.send(DeleteMsg).unwrap();
                system.stop();
            }
        }
    });
}

/// A panic payload whose own `Drop` panics (while armed).
struct Bomb(bool);
impl Drop for Bomb {
    fn drop(&mut self) {
        if self.0 {
            panic!("a panic payload that panics when dropped");
        }
    }
}

/// Several tasks of a scope panic with payloads whose `Drop` panics: the scope keeps the first
/// and drops the others; that drop's panic neither kills a worker nor hangs the scope.
#[test]
fn a_panic_payload_that_panics_when_dropped_ends_no_worker_and_hangs_no_scope() {
    watchdog(60, || {
        for (_, system) in systems(2) {
            for _ in 0..10 {
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    system.scope(|s| {
                        for _ in 0..8 {
                            s.spawn(|_| std::panic::panic_any(Bomb(true)));
                        }
                    })
                }));
                let mut p = r.expect_err("the first panic reaches the scope's caller");
                p.downcast_mut::<Bomb>().expect("a Bomb").0 = false;
                drop(p);
                // The workers still run tasks.
                assert_eq!(system.join(|| fib(12), || fib(10)).0, fib_seq(12));
            }
            system.stop();
        }
    });
}
