//! Per-sender order across placement moves, at volume.
//!
//! A few actors forward numbered messages to random peers (chains of hops), while an outside
//! thread sends them bursts. On the message-centric executor with queue stealing, placement
//! moves actors between queues as they talk (rule 2 and its merge), often into the queue that
//! another worker is processing at that moment; every receiver checks that what each sender
//! sent it arrives in send order, exactly once, and that no two behaviours of one actor
//! overlap. A sender moved into a held queue while its earlier messages still waited in that
//! queue's shared part must not overtake them through the local fast path (without the
//! guard, hundreds of messages per ten million arrive out of order).
//!
//! Run longer (a soak) with `ACTORIUM_ORDER_MESSAGES=50000000`.

mod common;

use actorium::{Actor, ActorSystem, Addr, Allocation, Context, QueueStealing, Receive};
use common::{watchdog, Rng};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Senders: the outside thread is sender 0, actor `i` is sender `1 + i`.
const OUTSIDE: usize = 0;

struct Shared {
    actors: usize,
    busy: Vec<AtomicBool>,
    overlaps: AtomicU64,
    out_of_order: AtomicU64,
    delivered: AtomicU64,
    addrs: OnceLock<Vec<Addr<Node>>>,
}

struct Msg {
    from: usize,
    seq: u64,
    /// Hops left: the receiver forwards a message with one fewer to a random peer.
    ttl: u8,
}

/// Per actor at its end: the next seq it expected from each sender, and what it sent to each
/// actor.
type Reports = Arc<std::sync::Mutex<Vec<(Vec<u64>, Vec<u64>)>>>;

struct Node {
    id: usize,
    shared: Arc<Shared>,
    rng: Rng,
    /// Next expected seq from each sender.
    expect: Vec<u64>,
    /// Seqs sent to each actor.
    sent: Vec<u64>,
    /// What this actor reported at its end: (expect, sent).
    report: Reports,
}

impl Actor for Node {
    fn stopped(&mut self) {
        let mut r = self.report.lock().unwrap();
        r[self.id] = (self.expect.clone(), self.sent.clone());
    }
}

impl Receive<Msg> for Node {
    fn receive(&mut self, m: Msg, _: &mut Context<'_, Self>) -> Allocation {
        let s = &*self.shared;
        if s.busy[self.id].swap(true, Ordering::SeqCst) {
            s.overlaps.fetch_add(1, Ordering::Relaxed);
        }
        if m.seq != self.expect[m.from] {
            s.out_of_order.fetch_add(1, Ordering::Relaxed);
        }
        self.expect[m.from] = self.expect[m.from].max(m.seq + 1);
        if m.ttl > 0 {
            let to = self.rng.below(s.actors);
            self.sent[to] += 1;
            let fwd = Msg {
                from: 1 + self.id,
                seq: self.sent[to],
                ttl: m.ttl - 1,
            };
            s.addrs.get().unwrap()[to].send(fwd).ok().unwrap();
        }
        s.busy[self.id].store(false, Ordering::SeqCst);
        s.delivered.fetch_add(1, Ordering::Relaxed);
        Allocation::Nodelete
    }
}

/// Runs the workload: `actors` actors, an outside thread sending bursts until about
/// `messages` deliveries are due; returns how many messages were delivered.
fn run(system: ActorSystem, actors: usize, messages: u64, seed: u64) -> u64 {
    let shared = Arc::new(Shared {
        actors,
        busy: (0..actors).map(|_| AtomicBool::new(false)).collect(),
        overlaps: AtomicU64::new(0),
        out_of_order: AtomicU64::new(0),
        delivered: AtomicU64::new(0),
        addrs: OnceLock::new(),
    });
    let report: Reports = Arc::new(std::sync::Mutex::new(vec![(vec![], vec![]); actors]));
    let addrs: Vec<_> = (0..actors)
        .map(|id| {
            system.spawn(Node {
                id,
                shared: shared.clone(),
                rng: Rng::new(seed * 7919 + id as u64),
                expect: vec![1; 1 + actors],
                sent: vec![0; actors],
                report: report.clone(),
            })
        })
        .collect();
    shared.addrs.set(addrs.clone()).ok().unwrap();
    let mut rng = Rng::new(seed);
    let mut outside_sent = vec![0u64; actors];
    let mut due = 0u64;
    while due < messages {
        // A burst: several messages to one actor, or spread, each a chain of hops.
        let burst = 1 + rng.below(64);
        let one = rng.below(2) == 0;
        let target = rng.below(actors);
        for _ in 0..burst {
            let to = if one { target } else { rng.below(actors) };
            let ttl = rng.below(16) as u8;
            outside_sent[to] += 1;
            addrs[to]
                .send(Msg {
                    from: OUTSIDE,
                    seq: outside_sent[to],
                    ttl,
                })
                .ok()
                .unwrap();
            due += 1 + u64::from(ttl);
        }
        // Let the backlog drain now and then, so that queues empty and actors move.
        while shared.delivered.load(Ordering::Relaxed) + 20_000 < due {
            std::thread::yield_now();
        }
    }
    while shared.delivered.load(Ordering::Relaxed) < due {
        std::thread::sleep(Duration::from_micros(200));
    }
    drop(addrs);
    let stats = system.shutdown().expect("statistics are on");
    let report = report.lock().unwrap();
    assert_eq!(
        shared.overlaps.load(Ordering::Relaxed),
        0,
        "behaviours overlapped"
    );
    assert_eq!(
        shared.out_of_order.load(Ordering::Relaxed),
        0,
        "per-sender order broken ({} messages delivered)",
        shared.delivered.load(Ordering::Relaxed)
    );
    assert_eq!(
        shared.delivered.load(Ordering::Relaxed),
        due,
        "delivered twice"
    );
    for (r, (expect, _)) in report.iter().enumerate() {
        assert_eq!(expect[OUTSIDE] - 1, outside_sent[r], "outside -> actor {r}");
        for (s, (_, sent)) in report.iter().enumerate() {
            assert_eq!(expect[1 + s] - 1, sent[r], "actor {s} -> actor {r}: lost");
        }
    }
    // What the test is about: actors moved between queues while they talked.
    assert!(
        stats.moves > 0,
        "no actor moved: the test checks nothing it is meant to"
    );
    eprintln!(
        "{due} messages, {} moves, {} steals, {} outboxed",
        stats.moves, stats.steals, stats.outboxed
    );
    due
}

fn messages() -> u64 {
    std::env::var("ACTORIUM_ORDER_MESSAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12_000_000)
}

#[test]
fn per_sender_order_holds_across_placement_moves() {
    let total = messages();
    let configs: &[(&str, usize, usize, QueueStealing)] = &[
        (
            "2 workers, longest victim, 4 actors",
            2,
            4,
            QueueStealing::LongestVictim,
        ),
        ("2 workers, random, 4 actors", 2, 4, QueueStealing::Random),
        (
            "3 workers, longest victim, 6 actors",
            3,
            6,
            QueueStealing::LongestVictim,
        ),
        (
            "2 workers, longest victim, 40 actors",
            2,
            40,
            QueueStealing::LongestVictim,
        ),
    ];
    for (i, &(name, workers, actors, stealing)) in configs.iter().enumerate() {
        eprintln!("--- {name}");
        let n = total / configs.len() as u64;
        watchdog(300, move || {
            let system = ActorSystem::builder()
                .workers(workers)
                .queue_stealing(stealing)
                .stats(true)
                .build()
                .unwrap();
            run(system, actors, n, 11 + i as u64)
        });
    }
}

/// A fork/join task taken from another worker, while a behaviour waits in a join, runs as
/// outside code: its sends go through the locks. Actor T's behaviour joins `a` and `b`; an
/// idle worker takes `b`, which sends T message 1 (through the lock: T's queue is held by T's
/// worker) and forks `b2`; T's worker, waiting for `b`, takes `b2` (the helping rule), which
/// sends T message 2. Run as T's behaviour, `b2`'s send took the local fast path into the
/// held batch and message 2 ran before message 1.
#[test]
fn a_task_taken_while_helping_sends_after_what_its_forker_sent_before() {
    use actorium::policy::WorkStealing;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Seen {
        got: Mutex<Vec<u32>>,
        /// Rounds in which `b` ran on another worker and `b2` on T's.
        checked: AtomicU64,
    }
    struct T(Arc<Seen>);
    impl Actor for T {}
    struct Go;
    impl Receive<Go> for T {
        fn receive(&mut self, _: Go, ctx: &mut Context<'_, Self>) -> Allocation {
            let me = ctx.address();
            let here = std::thread::current().id();
            let b_started = AtomicBool::new(false);
            let b2_started = AtomicBool::new(false);
            let (b_elsewhere, b2_here) = (AtomicBool::new(false), AtomicBool::new(false));
            let wait = |flag: &AtomicBool| {
                let t0 = std::time::Instant::now();
                while !flag.load(Ordering::SeqCst) && t0.elapsed() < Duration::from_secs(1) {
                    std::hint::spin_loop();
                }
            };
            ctx.join(
                || wait(&b_started),
                || {
                    b_started.store(true, Ordering::SeqCst);
                    b_elsewhere.store(std::thread::current().id() != here, Ordering::SeqCst);
                    me.send(1u32).ok().unwrap();
                    actorium::join(
                        || wait(&b2_started),
                        || {
                            b2_started.store(true, Ordering::SeqCst);
                            b2_here.store(std::thread::current().id() == here, Ordering::SeqCst);
                            me.send(2u32).ok().unwrap();
                        },
                    );
                },
            );
            if b_elsewhere.load(Ordering::SeqCst) && b2_here.load(Ordering::SeqCst) {
                self.0.checked.fetch_add(1, Ordering::SeqCst);
            }
            Allocation::Nodelete
        }
    }
    impl Receive<u32> for T {
        fn receive(&mut self, m: u32, _: &mut Context<'_, Self>) -> Allocation {
            self.0.got.lock().unwrap().push(m);
            Allocation::Nodelete
        }
    }
    type Choose = fn(actorium::ActorSystemBuilder) -> actorium::ActorSystemBuilder;
    let executors: [(&str, Choose); 3] = [
        ("message-centric", |b| b),
        ("message-centric, no stealing", |b| {
            b.queue_stealing(QueueStealing::None)
        }),
        ("work stealing", |b| b.policy(WorkStealing::default())),
    ];
    for (name, choose) in executors {
        let checked = watchdog(120, move || {
            let seen = Arc::new(Seen::default());
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let t = system.spawn(T(seen.clone()));
            for round in 0..20 {
                seen.got.lock().unwrap().clear();
                t.send(Go).ok().unwrap();
                while seen.got.lock().unwrap().len() < 2 {
                    std::thread::sleep(Duration::from_micros(100));
                }
                let got = seen.got.lock().unwrap().clone();
                assert_eq!(
                    got,
                    [1, 2],
                    "{name}, round {round}: message 2 overtook message 1"
                );
            }
            system.shutdown();
            seen.checked.load(Ordering::SeqCst)
        });
        // The rounds where the tasks ran where the test wants them (nearly all).
        assert!(
            checked > 0,
            "{name}: b2 never ran on T's worker while b ran elsewhere"
        );
    }
}
