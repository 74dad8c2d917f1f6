//! Balance: who runs what. Mail waiting behind a busy worker is taken by another (the
//! rescue, rule 3), a fan-out's later children go to the other worker, and a queue held by a
//! long behaviour is split (rule 4), each keeping order and one behaviour at a time.

use super::*;

#[test]
fn children_waiting_behind_their_busy_parent_are_taken_by_another_worker() {
    watchdog(120, || {
        for stealing in stealing_heuristics() {
            for workers in [2, 3] {
                let system = system(workers, stealing);
                let (tx, rx) = mpsc::channel();
                let parent = system.spawn(Parent {
                    children: 5,
                    report: tx,
                });
                parent.send(()).unwrap();
                let outcome = rx.recv().unwrap();
                system.stop();
                assert_eq!(outcome, Ok(()), "{stealing:?}, {workers} workers");
            }
        }
    });
}

/// Two siblings that can only finish together: each spins until the other has started.
struct Sibling {
    started: Arc<AtomicUsize>,
    report: mpsc::Sender<bool>,
}
impl Actor for Sibling {}
impl Receive<()> for Sibling {
    fn receive(&mut self, (): (), _: &mut Context<'_, Self>) -> Allocation {
        self.started.fetch_add(1, Ordering::SeqCst);
        let both = wait_for(|| self.started.load(Ordering::SeqCst) >= 2);
        self.report.send(both).unwrap();
        Allocation::Delete
    }
}

struct Spawner {
    report: mpsc::Sender<bool>,
}
impl Actor for Spawner {}
impl Receive<()> for Spawner {
    fn receive(&mut self, (): (), ctx: &mut Context<'_, Self>) -> Allocation {
        let started = Arc::new(AtomicUsize::new(0));
        for _ in 0..2 {
            let s = ctx.spawn(Sibling {
                started: started.clone(),
                report: self.report.clone(),
            });
            s.send(()).unwrap();
        }
        Allocation::Delete
    }
}

#[test]
fn siblings_spawned_by_a_behaviour_run_in_parallel() {
    watchdog(120, || {
        for stealing in stealing_heuristics() {
            for round in 0..3 {
                let system = system(2, stealing);
                let (tx, rx) = mpsc::channel();
                system.spawn(Spawner { report: tx }).send(()).unwrap();
                let both = [rx.recv().unwrap(), rx.recv().unwrap()];
                system.stop();
                assert_eq!(both, [true, true], "{stealing:?}, round {round}");
            }
        }
    });
}

/// As the first test, but the other workers are asleep when the parent spawns (each worker
/// slept for good, nothing woke them): the spawn, which notifies nobody for its own worker's
/// queue, must wake one so that it watches for the stuck parent.
#[test]
fn a_sleeping_worker_is_woken_to_rescue_children_behind_a_busy_parent() {
    watchdog(120, || {
        for stealing in stealing_heuristics() {
            for workers in [2, 3] {
                let system = system(workers, stealing);
                all_asleep(&system, workers);
                let (tx, rx) = mpsc::channel();
                let parent = system.spawn(Parent {
                    children: 3,
                    report: tx,
                });
                parent.send(()).unwrap();
                let outcome = rx.recv().unwrap();
                system.stop();
                assert_eq!(outcome, Ok(()), "{stealing:?}, {workers} workers");
            }
        }
    });
}

/// Waits, inside one behaviour, until `want` children (spawned from outside) have run.
struct Waiter {
    started: Arc<AtomicUsize>,
    ran: Arc<AtomicUsize>,
    want: usize,
    report: mpsc::Sender<Result<(), String>>,
}
impl Actor for Waiter {}
impl Receive<()> for Waiter {
    fn receive(&mut self, (): (), _: &mut Context<'_, Self>) -> Allocation {
        self.started.store(1, Ordering::SeqCst);
        let outcome = if wait_for(|| self.ran.load(Ordering::SeqCst) >= self.want) {
            Ok(())
        } else {
            Err(format!(
                "{} of {} children ran while the waiter's worker was busy",
                self.ran.load(Ordering::SeqCst),
                self.want
            ))
        };
        self.report.send(outcome).unwrap();
        Allocation::Delete
    }
}

/// Mail sent from outside into queues of a worker that runs a long behaviour: the notification
/// finds that worker awake and does nothing, so another worker must be woken to watch for it
/// and take it. The children are spawned (and started) first, all on the waiter's worker, and
/// the workers go back to sleep; then the waiter starts and the children get their messages.
/// Without the wake-up the other workers sleep on and the waiter gives up, unless one happened
/// to be awake and to look after the messages.
#[test]
fn mail_sent_from_outside_behind_a_busy_worker_is_rescued() {
    watchdog(120, || {
        for stealing in stealing_heuristics() {
            for workers in [2, 3] {
                let system = system(workers, stealing);
                let sleeps = || system.stats().unwrap().sleeps;
                all_asleep(&system, workers);
                let before = sleeps();
                let (tx, rx) = mpsc::channel();
                let started = Arc::new(AtomicUsize::new(0));
                let ran = Arc::new(AtomicUsize::new(0));
                const CHILDREN: usize = 8;
                let waiter = system.spawn(Waiter {
                    started: started.clone(),
                    ran: ran.clone(),
                    want: CHILDREN,
                    report: tx,
                });
                let busy = system.handle().worker_of_queue(waiter.queue());
                let mut children = Vec::new();
                while children.len() < CHILDREN {
                    let c = system.spawn(Child { ran: ran.clone() });
                    if system.handle().worker_of_queue(c.queue()) == busy
                        && c.queue() != waiter.queue()
                    {
                        children.push(c);
                    }
                }
                // The busy worker started them and slept again (a gate: the test passes either
                // way; it fails without the fix only when the others are asleep by now).
                while sleeps() <= before {
                    std::thread::yield_now();
                }
                waiter.send(()).unwrap();
                while started.load(Ordering::SeqCst) == 0 {
                    std::thread::yield_now();
                }
                for c in &children {
                    c.send(()).unwrap();
                }
                let outcome = rx.recv().unwrap();
                system.stop();
                assert_eq!(outcome, Ok(()), "{stealing:?}, {workers} workers");
            }
        }
    });
}

/// Spawns `children` children in one behaviour and reports their queues, then ends them.
struct FanOut {
    children: usize,
    report: mpsc::Sender<Vec<usize>>,
}
impl Actor for FanOut {}
impl Receive<()> for FanOut {
    fn receive(&mut self, (): (), ctx: &mut Context<'_, Self>) -> Allocation {
        let ran = Arc::new(AtomicUsize::new(0));
        let children: Vec<Addr<Child>> = (0..self.children)
            .map(|_| ctx.spawn(Child { ran: ran.clone() }))
            .collect();
        self.report
            .send(children.iter().map(Addr::queue).collect())
            .unwrap();
        for c in &children {
            c.send(()).unwrap();
        }
        Allocation::Delete
    }
}

/// A behaviour that spawns many children is a fan-out that keeps its worker busy: its first 8
/// children start next to it, the rest on the other worker's queues (where they need no
/// rescue). The queues are compared with the workers' initial ranges, so a trial counts only
/// if nothing was stolen meanwhile (a steal swaps queues between the ranges). Rescues, which
/// count as steals, wait a second here: a slow (debug, loaded) spawning loop would trigger them
/// in every trial.
#[test]
fn a_fan_out_places_its_later_children_on_the_other_worker() {
    watchdog(120, || {
        const PER_WORKER: usize = 64;
        let mut conclusive = 0;
        for _ in 0..20 {
            let system = ActorSystem::builder()
                .compaction(false)
                .workers(2)
                .tune("cpus=2") // (the layout of a host with a CPU per worker)
                .unwrap()
                .tune("stuck_after_us=1000000")
                .unwrap()
                .queues_per_worker(PER_WORKER)
                .stats(true)
                .build()
                .unwrap();
            let (tx, rx) = mpsc::channel();
            let parent = system.spawn(FanOut {
                children: 32,
                report: tx,
            });
            assert_eq!(
                parent.queue(),
                0,
                "the first actor spawned gets queue 0 (worker 0)"
            );
            parent.send(()).unwrap();
            let queues = rx.recv().unwrap();
            if system.stop().unwrap().steals > 0 {
                continue;
            }
            conclusive += 1;
            assert!(
                queues[..8].iter().all(|&q| q < PER_WORKER),
                "the first children start on their parent's worker: {queues:?}"
            );
            assert!(
                queues[8..].iter().all(|&q| q >= PER_WORKER),
                "the later children go to the other worker: {queues:?}"
            );
        }
        assert!(conclusive > 0, "every trial saw a steal: inconclusive");
    });
}

/// Runs one long behaviour: sends to the sink every 20 µs (each send is a point where its
/// worker may split its queue) until `done` reaches `need` or `GIVE_UP` passes; reports
/// whether it did.
struct Hog {
    sink: Arc<std::sync::OnceLock<Addr<Sink>>>,
    done: Arc<AtomicUsize>,
    need: usize,
    report: Option<mpsc::Sender<bool>>,
}
impl Actor for Hog {}
impl Receive<()> for Hog {
    fn receive(&mut self, (): (), _: &mut Context<'_, Self>) -> Allocation {
        let start = Instant::now();
        let sink = self.sink.get().unwrap();
        let reached = || self.done.load(Ordering::SeqCst) >= self.need;
        while !reached() && start.elapsed() < GIVE_UP {
            // A send every 20 µs: the other worker, which takes these, is idle in between.
            let t = Instant::now();
            while t.elapsed() < Duration::from_micros(20) {
                std::hint::spin_loop();
            }
            sink.send(()).unwrap();
        }
        if let Some(r) = &self.report {
            r.send(reached()).unwrap();
        }
        Allocation::Nodelete
    }
}

/// Takes messages and does nothing with them.
struct Sink;
impl Actor for Sink {}
impl Receive<()> for Sink {
    fn receive(&mut self, (): (), _: &mut Context<'_, Self>) -> Allocation {
        Allocation::Nodelete
    }
}

/// An actor that shares its queue with a long behaviour (placed there by the round-robin of
/// spawns from outside) gets its mail processed while that behaviour still runs: its worker,
/// asked by the idle one, splits the queue at the behaviour's next send, and the idle worker
/// takes the part split off. Without the split the mail waits for the whole behaviour (the
/// test gives up after 20 s).
#[test]
fn an_actor_behind_a_long_behaviour_in_its_queue_is_split_off() {
    watchdog(120, || {
        for stealing in stealing_heuristics() {
            const PER_WORKER: usize = 4;
            let system = ActorSystem::builder()
                .compaction(false)
                .workers(2)
                .queues_per_worker(PER_WORKER)
                .queue_stealing(stealing)
                .stats(true)
                .build()
                .unwrap();
            let (flagged, sink) = (Arc::new(AtomicUsize::new(0)), Arc::default());
            let ran = Arc::new(AtomicUsize::new(0));
            let (tx, rx) = mpsc::channel();
            // Tickets from outside go round-robin: the hog gets queue 0 (worker 0), the sink
            // queue PER_WORKER (worker 1), and the flag, 2 × PER_WORKER spawns later, queue 0.
            let hog = system.spawn(Hog {
                sink: Arc::clone(&sink),
                done: flagged.clone(),
                need: 1,
                report: Some(tx),
            });
            let before: Vec<Addr<Child>> = (1..PER_WORKER)
                .map(|_| system.spawn(Child { ran: ran.clone() }))
                .collect();
            let the_sink = system.spawn(Sink);
            let after: Vec<Addr<Child>> = (PER_WORKER + 1..2 * PER_WORKER)
                .map(|_| system.spawn(Child { ran: ran.clone() }))
                .collect();
            let flag = system.spawn(Child { ran: flagged });
            assert!(sink.set(the_sink.clone()).is_ok());
            assert_eq!((hog.queue(), flag.queue()), (0, 0));
            assert_eq!(system.handle().worker_of_queue(the_sink.queue()), 1);
            hog.send(()).unwrap();
            flag.send(()).unwrap();
            let ok = rx.recv().unwrap();
            for o in before.iter().chain(&after) {
                o.send(()).unwrap();
            }
            hog.send(crate::DeleteMsg).unwrap();
            the_sink.send(crate::DeleteMsg).unwrap();
            let stats = system.stop().unwrap();
            assert!(
                ok,
                "{stealing:?}: the flag's message waited for the whole long behaviour"
            );
            assert!(stats.moves > 0, "{stealing:?}: nothing was split off");
        }
    });
}

/// Counts numbered probes: they must arrive in order, one behaviour at a time; counts itself
/// in `finished` after the last.
struct Probed {
    next: u64,
    probes: u64,
    running: Arc<AtomicBool>,
    finished: Arc<AtomicUsize>,
    report: mpsc::Sender<Result<u64, String>>,
}
impl Actor for Probed {}
impl Receive<u64> for Probed {
    fn receive(&mut self, n: u64, _: &mut Context<'_, Self>) -> Allocation {
        if self.running.swap(true, Ordering::SeqCst) {
            let _ = self.report.send(Err("two behaviours at once".into()));
        }
        if n != self.next {
            let _ = self
                .report
                .send(Err(format!("probe {n} when {} was due", self.next)));
        }
        self.next = n + 1;
        self.running.store(false, Ordering::SeqCst);
        if self.next == self.probes {
            self.finished.fetch_add(1, Ordering::SeqCst);
            self.report.send(Ok(self.next)).unwrap();
        }
        Allocation::Nodelete
    }
}

/// A long behaviour ([`Hog`]) shares its queue with actors that an outside thread sends
/// numbered probes (it runs until they all have them, which they can only if its queue is
/// split): its queue is split, and every probe still arrives once,
/// in order, one behaviour at a time, on every stealing heuristic, with 2 and 3 workers.
#[test]
fn actors_split_off_keep_order_and_exclusion() {
    watchdog(300, || {
        for stealing in stealing_heuristics() {
            for workers in [2, 3] {
                const PROBED: usize = 24;
                const PROBES: u64 = 2_000;
                let system = ActorSystem::builder()
                    .compaction(false)
                    .workers(workers)
                    .queues_per_worker(2)
                    .queue_stealing(stealing)
                    .stats(true)
                    .build()
                    .unwrap();
                let (tx, rx) = mpsc::channel();
                let finished = Arc::new(AtomicUsize::new(0));
                // Spawns from outside (`queue_of_spawn`): the hog gets queue 0, and once every
                // queue has had one actor, the next run of spawns goes to queue 0 too, so most
                // probed actors share the hog's queue.
                let sink_cell = Arc::new(std::sync::OnceLock::new());
                let hog = system.spawn(Hog {
                    sink: sink_cell.clone(),
                    done: finished.clone(),
                    need: PROBED,
                    report: None,
                });
                let sink = system.spawn(Sink);
                assert!(sink_cell.set(sink.clone()).is_ok());
                let probed: Vec<_> = (0..PROBED)
                    .map(|_| {
                        system.spawn(Probed {
                            next: 0,
                            probes: PROBES,
                            running: Arc::default(),
                            finished: finished.clone(),
                            report: tx.clone(),
                        })
                    })
                    .collect();
                assert!(probed.iter().any(|p| p.queue() == hog.queue()));
                hog.send(()).unwrap();
                let prober = {
                    let probed = probed.clone();
                    std::thread::spawn(move || {
                        for n in 0..PROBES {
                            for p in &probed {
                                p.send(n).unwrap();
                            }
                        }
                    })
                };
                prober.join().unwrap();
                for _ in 0..PROBED {
                    let r = rx
                        .recv_timeout(Duration::from_secs(120))
                        .expect("an actor never got all its probes (a lost message?)");
                    assert_eq!(r, Ok(PROBES), "{stealing:?}, {workers} workers");
                }
                for p in &probed {
                    p.send(crate::DeleteMsg).unwrap();
                }
                hog.send(crate::DeleteMsg).unwrap();
                sink.send(crate::DeleteMsg).unwrap();
                let stats = system.stop().unwrap();
                assert!(
                    stats.moves > 0,
                    "nothing moved ({stealing:?}, {workers} workers): the test no longer \
                     exercises splits"
                );
            }
        }
    });
}

/// A stage of a chain: checks that its items come in order, one behaviour at a time, does a
/// little work on each and hands it on; the last stage counts what arrives.
struct ChainStage {
    next: Option<Addr<ChainStage>>,
    expect: u64,
    running: Arc<AtomicBool>,
    arrived: Arc<AtomicUsize>,
    report: mpsc::Sender<String>,
}
impl Actor for ChainStage {}
impl Receive<u64> for ChainStage {
    fn receive(&mut self, item: u64, _: &mut Context<'_, Self>) -> Allocation {
        if self.running.swap(true, Ordering::SeqCst) {
            let _ = self
                .report
                .send("two behaviours of one stage at once".into());
        }
        if item != self.expect {
            let _ = self
                .report
                .send(format!("item {item} when {} was due", self.expect));
        }
        self.expect = item + 1;
        let mut x = item;
        for _ in 0..50 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        std::hint::black_box(x);
        self.running.store(false, Ordering::SeqCst);
        match &self.next {
            Some(next) => next.send(item).unwrap(),
            None => {
                self.arrived.fetch_add(1, Ordering::SeqCst);
            }
        }
        Allocation::Nodelete
    }
}

/// A backlog split (rule 4, a backlog): a chain of stages spawned together from outside
/// shares one queue (rule 5), so a flood into its first stage moves through that queue in
/// one long visit of short behaviours while the other worker finds nothing to take. That
/// worker asks for the backlog to be split, and half of the stages with mail move to a queue
/// of its own; every stage still gets its items in order, one behaviour at a time. Without
/// the backlog split nothing moves: no behaviour is long, and sends inside one queue are
/// never counted for rule 2 (the test floods until something moved, for up to `GIVE_UP`,
/// then fails on `moves`).
#[test]
fn a_chain_sharing_one_queue_has_its_backlog_split_off() {
    watchdog(120, || {
        for stealing in stealing_heuristics() {
            let system = system(2, stealing);
            let m = system.queues();
            // One actor in each queue first, so that the stages share queue 0 (rule 5's first
            // run) and a split finds no vacant queue of worker 0's: it moves to worker 1's.
            let fillers: Vec<Addr<Child>> = (0..m)
                .map(|_| {
                    system.spawn(Child {
                        ran: Arc::default(),
                    })
                })
                .collect();
            const STAGES: usize = 16;
            const ITEMS: u64 = 10_000;
            let (tx, rx) = mpsc::channel();
            let arrived = Arc::new(AtomicUsize::new(0));
            let mut next = None;
            let mut stages = Vec::new();
            for _ in 0..STAGES {
                let stage = system.spawn(ChainStage {
                    next: next.take(),
                    expect: 0,
                    running: Arc::default(),
                    arrived: arrived.clone(),
                    report: tx.clone(),
                });
                assert_eq!(stage.queue(), 0, "{stealing:?}: the stages share queue 0");
                next = Some(stage.clone());
                stages.push(stage);
            }
            let first = next.expect("at least one stage");
            let mut item = 0;
            // Whether the other worker is awake to ask during a flood's long visit is up to
            // the OS: flood until something moved, or `GIVE_UP` (the failure without it).
            let start = Instant::now();
            for flood in 1.. {
                for _ in 0..ITEMS {
                    first.send(item).unwrap();
                    item += 1;
                }
                assert!(
                    wait_for(|| arrived.load(Ordering::SeqCst) == (flood * ITEMS) as usize),
                    "{stealing:?}: flood {flood} did not get through the chain"
                );
                if system.stats().unwrap().moves > 0 || start.elapsed() > GIVE_UP {
                    break;
                }
            }
            for a in &stages {
                a.send(crate::DeleteMsg).unwrap();
            }
            for f in &fillers {
                f.send(crate::DeleteMsg).unwrap();
            }
            let stats = system.stop().unwrap();
            drop(tx);
            let errors: Vec<String> = rx.iter().collect();
            assert!(errors.is_empty(), "{stealing:?}: {errors:?}");
            assert!(stats.moves > 0, "{stealing:?}: no backlog was split off");
        }
    });
}

/// Counts itself in when its message runs, then waits (at most `GIVE_UP`) for `n` in all.
struct Meet(Arc<AtomicUsize>, usize, mpsc::Sender<bool>);
impl Actor for Meet {}
impl Receive<()> for Meet {
    fn receive(&mut self, (): (), _: &mut Context<'_, Self>) -> Allocation {
        self.0.fetch_add(1, Ordering::SeqCst);
        let met = wait_for(|| self.0.load(Ordering::SeqCst) >= self.1);
        self.2.send(met).unwrap();
        Allocation::Nodelete
    }
}

/// One worker inside a long behaviour; two messages from outside land back to back in two
/// other queues of that worker while the others sleep. The first wakes a sleeper (the owner
/// is awake); the second, sent before that sleeper retired, sees nobody listed idle and wakes
/// nobody: the woken worker must pass a wake-up on for the mail still stuck behind the busy
/// worker (all three behaviours must run at once). Rounds repeat the race.
#[test]
fn mail_stuck_behind_a_busy_worker_is_rescued_though_a_wake_up_was_spent() {
    watchdog(300, || {
        for stealing in stealing_heuristics() {
            for round in 0..5 {
                let system = system(3, stealing);
                let count = Arc::new(AtomicUsize::new(0));
                let (tx, rx) = mpsc::channel();
                let meet = || system.spawn(Meet(count.clone(), 3, tx.clone()));
                let long = meet();
                let busy = system.handle().worker_of_queue(long.queue());
                // Two more on the same worker, in two other queues.
                let mut others = Vec::new();
                while others.len() < 2 {
                    let m = meet();
                    let q = m.queue();
                    if system.handle().worker_of_queue(q) == busy
                        && q != long.queue()
                        && others.iter().all(|o: &Addr<Meet>| o.queue() != q)
                    {
                        others.push(m);
                    }
                }
                all_asleep(&system, 3);
                long.send(()).unwrap();
                while count.load(Ordering::SeqCst) < 1 {
                    std::thread::yield_now();
                }
                for m in &others {
                    m.send(()).unwrap();
                }
                let met = [rx.recv().unwrap(), rx.recv().unwrap(), rx.recv().unwrap()];
                system.shutdown();
                assert_eq!(met, [true; 3], "{stealing:?}, round {round}");
            }
        }
    });
}
