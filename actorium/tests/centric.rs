//! The actor-centric executor's own features: max_throughput fairness, detached actors, the
//! deterministic testing policy, custom policies and their hooks, work stealing.

mod common;

use actorium::policy::{
    Job, Policy, Resumable, Scheduler, SharedQueue, Testing, WorkSharing, WorkStealing, WorkerCtx,
};
use actorium::{Actor, ActorSystem, Addr, Allocation, Context, DeleteMsg, Receive, DETACHED};
use common::{on_every_executor, settle, watchdog, Counter};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

type Trace = Arc<Mutex<Vec<(u32, u32)>>>;

/// Appends (its id, the message) to a shared trace.
struct Tracer {
    id: u32,
    trace: Trace,
}
impl Actor for Tracer {}
impl Receive<u32> for Tracer {
    fn receive(&mut self, n: u32, _: &mut Context<'_, Self>) -> Allocation {
        self.trace.lock().unwrap().push((self.id, n));
        Allocation::Nodelete
    }
}

/// Spawns two tracers and fills both mailboxes before either can run (one worker, busy here).
struct Starter {
    trace: Trace,
    out: Arc<Mutex<Vec<Addr<Tracer>>>>,
}
impl Actor for Starter {}
impl Receive<()> for Starter {
    fn receive(&mut self, _: (), ctx: &mut Context<'_, Self>) -> Allocation {
        let a = ctx.spawn(Tracer {
            id: 0,
            trace: self.trace.clone(),
        });
        let b = ctx.spawn(Tracer {
            id: 1,
            trace: self.trace.clone(),
        });
        for i in 0..100 {
            a.send(i).unwrap();
            b.send(i).unwrap();
        }
        self.out.lock().unwrap().extend([a, b]);
        Allocation::Delete
    }
}

/// How often consecutive trace entries come from different actors.
fn switches(trace: &[(u32, u32)]) -> usize {
    trace.windows(2).filter(|w| w[0].0 != w[1].0).count()
}

fn fairness_run(policy_stealing: bool, max: Option<usize>) -> Vec<(u32, u32)> {
    let trace: Trace = Arc::default();
    let out = Arc::new(Mutex::new(Vec::new()));
    let b = ActorSystem::builder().workers(1);
    let b = if policy_stealing {
        b.policy(WorkStealing::default())
    } else {
        b.policy(WorkSharing)
    };
    let b = match max {
        Some(m) => b.max_throughput(m),
        None => b,
    };
    let system = b.build().unwrap();
    system
        .spawn(Starter {
            trace: trace.clone(),
            out: out.clone(),
        })
        .send(())
        .unwrap();
    settle(&system, 30, "200 messages", || {
        trace.lock().unwrap().len() == 200
    });
    for a in out.lock().unwrap().iter() {
        a.send(DeleteMsg).unwrap();
    }
    system.stop();
    let t = trace.lock().unwrap().clone();
    // Per actor, in order.
    for id in 0..2 {
        let mine: Vec<u32> = t.iter().filter(|e| e.0 == id).map(|e| e.1).collect();
        assert_eq!(mine, (0..100).collect::<Vec<_>>());
    }
    t
}

#[test]
fn max_throughput_one_interleaves_busy_actors() {
    watchdog(60, || {
        for stealing in [true, false] {
            let t = fairness_run(stealing, Some(1));
            assert!(
                switches(&t) >= 195,
                "with max_throughput 1 the two actors alternate; {} switches in {:?}",
                switches(&t),
                &t[..20]
            );
            // Unlimited (CAF's default): each actor drains its whole mailbox per run.
            let t = fairness_run(stealing, None);
            assert_eq!(
                switches(&t),
                1,
                "unlimited throughput runs each mailbox dry"
            );
            // A limit of 10: runs of 10.
            let t = fairness_run(stealing, Some(10));
            assert!((15..=21).contains(&switches(&t)), "{}", switches(&t));
        }
    });
}

/// A detached actor that blocks its thread on the gate it is sent.
struct Sleeper {
    done: Arc<AtomicBool>,
    index: Arc<AtomicUsize>,
    blocked: Arc<AtomicBool>,
}
impl Actor for Sleeper {}
/// Blocks the actor's thread until the test lets it go (or a minute passes).
impl Receive<mpsc::Receiver<()>> for Sleeper {
    fn receive(&mut self, gate: mpsc::Receiver<()>, ctx: &mut Context<'_, Self>) -> Allocation {
        self.index.store(ctx.worker_index(), Ordering::SeqCst);
        THREAD_END.with(|g| {
            g.borrow_mut()
                .get_or_insert_with(|| ThreadEnd(self.done.clone()))
                .0
                .store(false, Ordering::SeqCst)
        });
        self.blocked.store(true, Ordering::SeqCst);
        // Opens when the test sends, or drops the sender (ends or panics).
        let _ = gate.recv();
        self.blocked.store(false, Ordering::SeqCst);
        Allocation::Nodelete
    }
}

/// Sets its flag when the thread that holds it ends.
struct ThreadEnd(Arc<AtomicBool>);
impl Drop for ThreadEnd {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}
thread_local! {
    static THREAD_END: RefCell<Option<ThreadEnd>> = const { RefCell::new(None) };
}

#[test]
fn a_blocking_detached_actor_does_not_delay_others() {
    watchdog(300, || {
        on_every_executor(|name, ex| {
            // One worker: a pooled actor blocked on the gate would stop everything.
            let system = ex(ActorSystem::builder().workers(1)).build().unwrap();
            let thread_ended = Arc::new(AtomicBool::new(false));
            let index = Arc::new(AtomicUsize::new(0));
            let blocked = Arc::new(AtomicBool::new(false));
            let sleeper = system.spawn_detached(Sleeper {
                done: thread_ended.clone(),
                index: index.clone(),
                blocked: blocked.clone(),
            });
            let (open, gate) = mpsc::channel();
            sleeper.send(gate).unwrap();
            settle(&system, 30, "the sleeper to block", || {
                blocked.load(Ordering::SeqCst)
            });
            assert_eq!(index.load(Ordering::SeqCst), DETACHED);
            let done = Arc::new(AtomicU64::new(0));
            for _ in 0..10 {
                system.spawn(Counter {
                    left: 10_000,
                    done: done.clone(),
                });
            }
            // Had the blocked actor taken the only pooled worker, the counters could not end
            // before the gate opens (it opens only after this wait).
            settle(&system, 60, "the counters while the sleeper blocks", || {
                done.load(Ordering::SeqCst) == 10
            });
            assert!(
                blocked.load(Ordering::SeqCst),
                "{name}: the sleeper stopped blocking before the gate opened"
            );
            open.send(()).unwrap();
            settle(&system, 30, "the sleeper to wake", || {
                !blocked.load(Ordering::SeqCst)
            });
            assert!(!thread_ended.load(Ordering::SeqCst));
            // The detached thread ends with its actor.
            sleeper.send(DeleteMsg).unwrap();
            settle(&system, 30, "the detached thread to end", || {
                thread_ended.load(Ordering::SeqCst)
            });
            assert!(sleeper.send(mpsc::channel().1).is_err());
            system.stop();
        });
    });
}

/// Detached actors spawned from behaviours, messaging pooled ones and back; dropped systems
/// end detached threads too.
#[test]
fn detached_actors_are_ordinary_actors() {
    watchdog(120, || {
        struct Echo(Addr<Collector>);
        impl Actor for Echo {}
        impl Receive<u64> for Echo {
            fn receive(&mut self, n: u64, ctx: &mut Context<'_, Self>) -> Allocation {
                assert_eq!(ctx.worker_index(), DETACHED);
                self.0.send(n).unwrap();
                Allocation::Nodelete
            }
        }
        struct Collector(Arc<AtomicU64>);
        impl Actor for Collector {}
        impl Receive<u64> for Collector {
            fn receive(&mut self, n: u64, _: &mut Context<'_, Self>) -> Allocation {
                self.0.fetch_add(n, Ordering::SeqCst);
                Allocation::Nodelete
            }
        }
        struct Spawner(Addr<Collector>);
        impl Actor for Spawner {}
        impl Receive<u64> for Spawner {
            fn receive(&mut self, n: u64, ctx: &mut Context<'_, Self>) -> Allocation {
                let e = ctx.spawn_detached(Echo(self.0.clone()));
                for i in 1..=n {
                    e.send(i).unwrap();
                }
                e.send(DeleteMsg).unwrap();
                Allocation::Delete
            }
        }
        on_every_executor(|_, ex| {
            let system = ex(ActorSystem::builder().workers(2)).build().unwrap();
            let sum = Arc::new(AtomicU64::new(0));
            let c = system.spawn(Collector(sum.clone()));
            for _ in 0..8 {
                system.spawn(Spawner(c.clone())).send(100).unwrap();
            }
            settle(&system, 30, "the echoes", || {
                sum.load(Ordering::SeqCst) == 8 * 5050
            });
            c.send(DeleteMsg).unwrap();
            system.stop();

            // Dropped while detached actors wait for mail: no hang, states dropped.
            let system = ex(ActorSystem::builder().workers(2)).build().unwrap();
            let sum = Arc::new(AtomicU64::new(0));
            let c = system.spawn(Collector(sum));
            let e = system.spawn_detached(Echo(c));
            drop(system);
            assert!(e.send(1).is_err());
        });
    });
}

/// A small program whose order on threads would vary: three producers each send a chain of
/// messages to a shared consumer and to each other.
fn program_trace() -> Vec<(u32, u32)> {
    struct Node {
        id: u32,
        next: Option<Addr<Node>>,
        sink: Addr<Tracer>,
    }
    impl Actor for Node {}
    impl Receive<Addr<Node>> for Node {
        fn receive(&mut self, a: Addr<Node>, _: &mut Context<'_, Self>) -> Allocation {
            self.next = Some(a);
            Allocation::Nodelete
        }
    }
    impl Receive<u32> for Node {
        fn receive(&mut self, hops: u32, _: &mut Context<'_, Self>) -> Allocation {
            self.sink.send(self.id * 1000 + hops).unwrap();
            if hops > 0 {
                self.next.as_ref().unwrap().send(hops - 1).unwrap();
            }
            Allocation::Nodelete
        }
    }
    let system = ActorSystem::builder().policy(Testing).build().unwrap();
    let trace: Trace = Arc::default();
    let sink = system.spawn(Tracer {
        id: 99,
        trace: trace.clone(),
    });
    let nodes: Vec<_> = (0..3)
        .map(|id| {
            system.spawn(Node {
                id,
                next: None,
                sink: sink.clone(),
            })
        })
        .collect();
    for (i, n) in nodes.iter().enumerate() {
        n.send(nodes[(i + 1) % 3].clone()).unwrap();
    }
    for (i, n) in nodes.iter().enumerate() {
        n.send(5 + i as u32).unwrap();
    }
    let steps = system.run();
    assert!(steps > 20);
    for n in &nodes {
        n.send(DeleteMsg).unwrap();
    }
    sink.send(DeleteMsg).unwrap();
    system.stop();
    let t = trace.lock().unwrap().clone();
    t
}

#[test]
fn the_testing_policy_runs_the_same_way_every_time() {
    watchdog(60, || {
        let first = program_trace();
        assert_eq!(first.len(), 6 + 7 + 8, "every hop reached the sink");
        for _ in 0..20 {
            assert_eq!(program_trace(), first);
        }
        // Round-robin, one message per step: the three chains interleave.
        let ids: Vec<u32> = first.iter().map(|e| e.1 / 1000).collect();
        assert_eq!(&ids[..3], &[0, 1, 2], "{first:?}");
    });
}

#[test]
fn the_testing_policy_steps_one_message_at_a_time() {
    watchdog(120, the_testing_policy_steps_one_message_at_a_time_body);
}

fn the_testing_policy_steps_one_message_at_a_time_body() {
    let system = ActorSystem::builder().policy(Testing).build().unwrap();
    let trace: Trace = Arc::default();
    let a = system.spawn(Tracer {
        id: 0,
        trace: trace.clone(),
    });
    a.send(1).unwrap();
    a.send(2).unwrap();
    assert!(trace.lock().unwrap().is_empty(), "nothing runs until asked");
    assert!(system.run_once()); // started
    assert!(system.run_once());
    assert_eq!(*trace.lock().unwrap(), [(0, 1)]);
    assert!(system.run_once());
    assert_eq!(*trace.lock().unwrap(), [(0, 1), (0, 2)]);
    // The job found the mailbox empty after message 2 and parked: nothing left to run.
    assert!(!system.run_once());
    a.send(3).unwrap();
    assert!(system.run_once());
    assert_eq!(trace.lock().unwrap().len(), 3);
    a.send(DeleteMsg).unwrap();
    system.stop();
}

/// What the custom policy below saw.
#[derive(Default)]
struct Counts {
    before: AtomicU64,
    after: AtomicU64,
    later: AtomicU64,
    completed: AtomicU64,
    ids: Mutex<std::collections::HashSet<usize>>,
}

/// A custom policy: work sharing, counting hook calls.
struct Hooked(Arc<Counts>);

impl Policy for Hooked {
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
        s.coordinator().push(job)
    }
    fn resume_job_later(&self, me: &mut WorkerCtx<'_, Self>, job: Job) {
        self.0.later.fetch_add(1, Ordering::SeqCst);
        me.scheduler().coordinator().push(job)
    }
    fn dequeue(&self, me: &mut WorkerCtx<'_, Self>) -> Option<Job> {
        Some(me.scheduler().coordinator().pop_blocking())
    }
    fn before_resume(&self, _: &mut WorkerCtx<'_, Self>, job: &Job) {
        assert!(
            job.actor_type().ends_with("Counter"),
            "{}",
            job.actor_type()
        );
        self.0.ids.lock().unwrap().insert(job.id());
        self.0.before.fetch_add(1, Ordering::SeqCst);
    }
    fn after_resume(&self, _: &mut WorkerCtx<'_, Self>, _: &Job, _: Resumable) {
        self.0.after.fetch_add(1, Ordering::SeqCst);
    }
    fn after_completion(&self, _: &mut WorkerCtx<'_, Self>, _: &Job) {
        self.0.completed.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_custom_policy_sees_every_hook() {
    watchdog(60, || {
        let counts = Arc::new(Counts::default());
        let system = ActorSystem::builder()
            .workers(2)
            .max_throughput(10)
            .policy(Hooked(counts.clone()))
            .build()
            .unwrap();
        let done = Arc::new(AtomicU64::new(0));
        // The addresses are kept: a finished actor's cell freed early could be reused by a
        // later spawn, and two actors would then share one id (seen once in CI).
        let _kept: Vec<_> = (0..20)
            .map(|_| {
                system.spawn(Counter {
                    left: 1000,
                    done: done.clone(),
                })
            })
            .collect();
        system.stop();
        assert_eq!(done.load(Ordering::SeqCst), 20);
        let (b, a) = (
            counts.before.load(Ordering::SeqCst),
            counts.after.load(Ordering::SeqCst),
        );
        assert_eq!(b, a, "every resume has both hooks");
        assert_eq!(
            counts.completed.load(Ordering::SeqCst),
            20,
            "one completion per actor"
        );
        assert!(
            counts.later.load(Ordering::SeqCst) >= 20 * 99,
            "1000 self-sends at 10 per run are resumed later at least 99 times each"
        );
        assert!(b >= 20 * 100);
        assert_eq!(counts.ids.lock().unwrap().len(), 20);
    });
}

#[test]
fn work_stealing_spreads_a_burst_and_idles_asleep() {
    watchdog(120, || {
        /// Spawns busy counters from a behaviour (they all land on this worker's deque), then
        /// keeps this worker busy until one of them has finished: only a thief can run them.
        struct Burst(Arc<AtomicU64>);
        impl Actor for Burst {}
        impl Receive<()> for Burst {
            fn receive(&mut self, _: (), ctx: &mut Context<'_, Self>) -> Allocation {
                for _ in 0..64 {
                    ctx.spawn(Counter {
                        left: 20_000,
                        done: self.0.clone(),
                    });
                }
                let t0 = Instant::now();
                while self.0.load(Ordering::SeqCst) == 0 && t0.elapsed() < Duration::from_secs(30) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Allocation::Delete
            }
        }
        let system = ActorSystem::builder()
            .workers(2)
            .stats(true)
            .policy(WorkStealing::default())
            .build()
            .unwrap();
        let done = Arc::new(AtomicU64::new(0));
        let slept_before = system.stats().unwrap().sleeps;
        system.spawn(Burst(done.clone())).send(()).unwrap();
        settle(&system, 60, "the counters", || {
            done.load(Ordering::SeqCst) == 64
        });
        let s = system.stats().unwrap();
        assert!(s.steals > 0, "the idle worker stole from the busy one: {s}");
        // Idle: the workers pass the polling tiers (about 25 ms unloaded) and sleep. A polling
        // worker keeps counting steal attempts, so both are asleep once that count stands
        // still for longer than the tiers take.
        settle(&system, 60, "both workers to sleep after the burst", || {
            system.stats().unwrap().sleeps >= slept_before + 2
        });
        polling_stops(&system);
        system.stop();
    });
}

/// Waits until no worker of a work-stealing system polls any more: a polling worker counts
/// steal attempts (CAF's defaults: one every 250 µs or more often), so they are all asleep, or
/// running jobs, once that count stands still for 200 ms. Fails after a minute.
fn polling_stops(system: &ActorSystem) {
    let t0 = Instant::now();
    let mut last = system.stats().unwrap().steal_attempts;
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let now = system.stats().unwrap().steal_attempts;
        if now == last {
            return;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "idle workers still polling after a minute: {}",
            system.stats().unwrap()
        );
        last = now;
    }
}

/// Sends itself the next tick forever.
struct Ticker(Arc<AtomicU64>);
impl Actor for Ticker {
    fn started(&mut self, ctx: &mut Context<'_, Self>) {
        ctx.address().send(()).unwrap();
    }
}
impl Receive<()> for Ticker {
    fn receive(&mut self, _: (), ctx: &mut Context<'_, Self>) -> Allocation {
        self.0.fetch_add(1, Ordering::Relaxed);
        let _ = ctx.address().send(());
        Allocation::Nodelete
    }
}

#[test]
fn dropping_a_system_ends_actors_that_never_go_idle() {
    watchdog(60, || {
        on_every_executor(|_, ex| {
            let system = ex(ActorSystem::builder().workers(2)).build().unwrap();
            let (a, b) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
            let pooled = system.spawn(Ticker(a.clone()));
            let detached = system.spawn_detached(Ticker(b.clone()));
            settle(&system, 30, "both tickers to tick", || {
                a.load(Ordering::Relaxed) > 100 && b.load(Ordering::Relaxed) > 100
            });
            drop(system); // unlimited throughput: the jobs never end by themselves
            assert!(!pooled.is_alive() && !detached.is_alive());
        });
    });
}

#[test]
fn a_detached_actor_can_be_respawned() {
    watchdog(60, || {
        #[derive(Debug)]
        struct Phoenix(Arc<AtomicU64>);
        impl Actor for Phoenix {}
        impl Receive<u64> for Phoenix {
            fn receive(&mut self, n: u64, ctx: &mut Context<'_, Self>) -> Allocation {
                assert_eq!(ctx.worker_index(), DETACHED);
                self.0.fetch_add(n, Ordering::SeqCst);
                if n == 0 {
                    Allocation::Destroy
                } else {
                    Allocation::Nodelete
                }
            }
        }
        on_every_executor(|_, ex| {
            let system = ex(ActorSystem::builder().workers(2)).build().unwrap();
            let sum = Arc::new(AtomicU64::new(0));
            let p = system.spawn_detached(Phoenix(sum.clone()));
            p.send(5).unwrap();
            p.send(0).unwrap(); // destroy
            settle(&system, 30, "destroyed", || !p.is_alive());
            for round in 0..3 {
                p.respawn(Phoenix(sum.clone())).unwrap();
                p.send(10).unwrap();
                settle(&system, 30, "respawned actor to run", || {
                    sum.load(Ordering::SeqCst) == 15 + 10 * round
                });
                p.send(0).unwrap();
                settle(&system, 30, "destroyed again", || !p.is_alive());
            }
            system.stop();
            // A destroyed detached actor left alone: its thread ends with the system or cell.
            let system = ex(ActorSystem::builder().workers(2)).build().unwrap();
            let q = system.spawn_detached(Phoenix(sum.clone()));
            q.send(0).unwrap();
            settle(&system, 30, "destroyed", || !q.is_alive());
            drop(q);
            system.stop();
        });
    });
}

/// With work stealing, a job made by an actor whose own job never ends (it keeps sending
/// itself messages, unlimited throughput) is taken by the other worker, even when that one was
/// already asleep: the long job wakes it (`Policy::during_resume`).
#[test]
fn a_job_behind_a_never_ending_job_is_stolen() {
    watchdog(120, || {
        struct Flag(Arc<AtomicBool>);
        impl Actor for Flag {
            fn started(&mut self, _: &mut Context<'_, Self>) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        impl Receive<()> for Flag {
            fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
                Allocation::Delete
            }
        }
        /// Mails itself forever; makes the `Flag` job once `go` is set.
        struct Busy {
            ran: Arc<AtomicBool>,
            go: Arc<AtomicBool>,
            running: Arc<AtomicBool>,
            spawned: bool,
        }
        impl Actor for Busy {}
        impl Receive<u64> for Busy {
            fn receive(&mut self, i: u64, ctx: &mut Context<'_, Self>) -> Allocation {
                self.running.store(true, Ordering::SeqCst);
                if !self.spawned && self.go.load(Ordering::SeqCst) {
                    self.spawned = true;
                    ctx.spawn(Flag(self.ran.clone())).send(()).unwrap();
                }
                // The next message is always there: the job never ends by itself.
                let _ = ctx.address().send(i + 1);
                Allocation::Nodelete
            }
        }
        let system = ActorSystem::builder()
            .workers(2)
            .stats(true)
            .policy(WorkStealing::default())
            .build()
            .unwrap();
        let ran = Arc::new(AtomicBool::new(false));
        let go = Arc::new(AtomicBool::new(false));
        let running = Arc::new(AtomicBool::new(false));
        let busy = system.spawn(Busy {
            ran: ran.clone(),
            go: go.clone(),
            running: running.clone(),
            spawned: false,
        });
        busy.send(0).unwrap();
        settle(&system, 30, "the busy actor to run", || {
            running.load(Ordering::SeqCst)
        });
        // The other worker is idle: wait until it sleeps (stops polling), so only a wake-up can
        // bring it to the job made next.
        polling_stops(&system);
        go.store(true, Ordering::SeqCst);
        settle(
            &system,
            30,
            "the job behind the never-ending job to run",
            || ran.load(Ordering::SeqCst),
        );
        busy.send(DeleteMsg).unwrap();
        system.stop();
    });
}

/// On the testing policy, a behaviour that waits for its own system gets a clear panic (its
/// actor ends as panicked), not a deadlock.
#[test]
fn a_behaviour_waiting_for_its_testing_system_panics_clearly() {
    watchdog(30, || {
        #[derive(Debug)]
        struct Waiter;
        impl Actor for Waiter {}
        impl Receive<actorium::JoinHandle<Tracer>> for Waiter {
            fn receive(
                &mut self,
                h: actorium::JoinHandle<Tracer>,
                _: &mut Context<'_, Self>,
            ) -> Allocation {
                let _ = h.join(); // would wait for the system this behaviour runs on
                Allocation::Delete
            }
        }
        let system = ActorSystem::builder().policy(Testing).build().unwrap();
        let (t, h) = system.spawn_joinable(Tracer {
            id: 0,
            trace: Arc::default(),
        });
        let (w, wh) = system.spawn_joinable(Waiter);
        w.send(h).unwrap();
        assert_eq!(wh.join().unwrap_err(), actorium::ActorExit::Panicked);
        t.send(DeleteMsg).unwrap();
        system.stop();
    });
}

/// Two actors that message each other for ever (a retry storm) next to a third that was sent
/// one message first: on one worker of the work-stealing policy, LIFO scheduling put the pair
/// back on top of the deque each time, and the third actor's job, at the bottom, never ran (the
/// `sleeping-barber` benchmark hung this way). Every executor must run it.
#[test]
fn a_pair_messaging_each_other_for_ever_does_not_starve_a_third_actor() {
    struct Bouncer {
        peer: Arc<std::sync::OnceLock<Addr<Bouncer>>>,
        third: Option<Addr<Third>>,
        stop: Arc<AtomicBool>,
        started: Arc<AtomicUsize>,
    }
    struct Third(Arc<AtomicBool>, Arc<AtomicUsize>);
    struct Kick;
    impl Actor for Bouncer {
        fn started(&mut self, _: &mut Context<'_, Self>) {
            self.started.fetch_add(1, Ordering::Relaxed);
        }
    }
    impl Actor for Third {
        fn started(&mut self, _: &mut Context<'_, Self>) {
            self.1.fetch_add(1, Ordering::Relaxed);
        }
    }
    impl Receive<Kick> for Bouncer {
        fn receive(&mut self, _: Kick, _: &mut Context<'_, Self>) -> Allocation {
            // The third actor's job is enqueued first, the peer's on top of it.
            self.third.take().unwrap().send(()).unwrap();
            self.peer.get().unwrap().send(()).unwrap();
            Allocation::Nodelete
        }
    }
    impl Receive<()> for Bouncer {
        fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
            if self.stop.load(Ordering::Relaxed) {
                // Pass the end on (the peer may have ended already), then end.
                let _ = self.peer.get().unwrap().send(());
                return Allocation::Delete;
            }
            self.peer.get().unwrap().send(()).unwrap();
            Allocation::Nodelete
        }
    }
    impl Receive<()> for Third {
        fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
            self.0.store(true, Ordering::Relaxed);
            Allocation::Delete
        }
    }
    watchdog(60, || {
        on_every_executor(|name, ex| {
            for workers in [1, 2] {
                let system = ex(ActorSystem::builder().workers(workers)).build().unwrap();
                let stop = Arc::new(AtomicBool::new(false));
                let (pa, pb) = (
                    Arc::new(std::sync::OnceLock::new()),
                    Arc::new(std::sync::OnceLock::new()),
                );
                let started = Arc::new(AtomicUsize::new(0));
                let third = system.spawn(Third(stop.clone(), started.clone()));
                let a = system.spawn(Bouncer {
                    peer: pa.clone(),
                    third: Some(third),
                    stop: stop.clone(),
                    started: started.clone(),
                });
                let b = system.spawn(Bouncer {
                    peer: pb.clone(),
                    third: None,
                    stop: stop.clone(),
                    started: started.clone(),
                });
                // All three idle before the kick, so that each send schedules its receiver.
                settle(&system, 30, "the actors to start", || {
                    started.load(Ordering::Relaxed) == 3
                });
                // (Each holds the other: a cycle, ended by `Delete` once the third has run.)
                assert!(pa.set(b).is_ok() && pb.set(a.clone()).is_ok());
                a.send(Kick).unwrap();
                settle(
                    &system,
                    30,
                    &format!("{name}, {workers} workers: the third actor"),
                    || stop.load(Ordering::Relaxed),
                );
                system.stop();
            }
        });
    });
}

/// Blocks inside its first message until the test opens the gate (one long message).
struct Long(Arc<common::Gate>, mpsc::Sender<()>);
impl Actor for Long {}
impl Receive<()> for Long {
    fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
        self.1.send(()).unwrap();
        self.0.wait();
        Allocation::Nodelete
    }
}

/// Tells the test it started, and that its message ran.
struct Quick(mpsc::Sender<()>);
impl Actor for Quick {
    fn started(&mut self, _: &mut Context<'_, Self>) {
        self.0.send(()).unwrap();
    }
}
impl Receive<()> for Quick {
    fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
        self.0.send(()).unwrap();
        Allocation::Nodelete
    }
}

#[test]
fn a_message_from_outside_runs_while_another_worker_is_in_one_long_message() {
    // Work stealing used to put a job from outside in the inbox of whichever worker it
    // targeted (round-robin): if that worker was inside the long message, the job waited there
    // while the other worker slept. (The pause lets the free worker fall asleep first, which
    // that failure needed; the outcome does not depend on it.)
    watchdog(120, || {
        common::on_every_threaded_executor(|name, choose| {
            for round in 0..3 {
                let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
                let gate = Arc::new(common::Gate::default());
                let (tx, rx) = mpsc::channel();
                system.spawn(Long(gate.clone(), tx)).send(()).unwrap();
                rx.recv().unwrap(); // inside its long message
                let (tx, rx) = mpsc::channel();
                let quick = system.spawn(Quick(tx));
                rx.recv_timeout(Duration::from_secs(20)).unwrap(); // started
                std::thread::sleep(Duration::from_millis(20));
                quick.send(()).unwrap();
                let ran = rx.recv_timeout(Duration::from_secs(20));
                gate.open();
                assert!(
                    ran.is_ok(),
                    "{name}, round {round}: the new actor did not run"
                );
                system.shutdown();
            }
        })
    });
}
