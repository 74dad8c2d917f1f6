//! Exactly-once delivery, per-pair FIFO order and one behaviour at a time per actor, under
//! many concurrent senders: outside threads and behaviours, over a random topology.

mod common;

use actorium::policy::WorkStealing;
use actorium::{Actor, ActorSystem, Allocation, Context, FinishedMsg, QueueStealing, Receive};
use common::checked::{send_from_outside, Node, Shared, ACTORS, OUTSIDE_THREADS};
use common::{on_every_executor, settle, watchdog, EXECUTORS};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// 1,000,000 messages from outside threads, and as many again forwarded by behaviours.
const MSGS_PER_THREAD: u64 = 250_000;

/// Takes a queue ticket and ends at once: its only use is to leave other workers' queues empty.
struct Filler;
impl Actor for Filler {
    fn started(&mut self, ctx: &mut Context<'_, Self>) {
        ctx.address().send(actorium::DeleteMsg).unwrap();
    }
}

/// Runs the stress workload. With `on_worker_0`, every actor is placed on worker 0's queues
/// (tickets follow `queue_of_spawn`; the others are taken by fillers), so the other workers only get
/// work by stealing queues.
fn stress(builder: actorium::ActorSystemBuilder, on_worker_0: bool) -> actorium::Stats {
    let system = builder.stats(true).build().unwrap();
    let shared = Shared::new();
    let mut fillers = 0u64;
    let mut ticket = 0;
    let (addrs, handles): (Vec<_>, Vec<_>) = (0..ACTORS)
        .map(|id| {
            while on_worker_0
                && system
                    .handle()
                    .worker_of_queue(system.handle().queue_of_spawn(ticket))
                    != 0
            {
                system.spawn(Filler);
                fillers += 1;
                ticket += 1;
            }
            ticket += 1;
            let (a, h) = system.spawn_joinable(Node::new(id, shared.clone()));
            assert!(!on_worker_0 || system.handle().worker_of_queue(a.queue()) == 0);
            (a, h)
        })
        .unzip();
    assert!(shared.addrs.set(addrs.clone()).is_ok());

    let outside_sent = send_from_outside(&addrs, |n| n <= MSGS_PER_THREAD);

    let total = 2 * OUTSIDE_THREADS as u64 * MSGS_PER_THREAD;
    settle(&system, 120, "all messages delivered", || {
        shared.delivered.load(Ordering::Relaxed) >= total
    });
    for a in &addrs {
        a.send(FinishedMsg).unwrap();
    }
    let finals: Vec<Node> = handles
        .into_iter()
        .map(|h| h.join().expect("actor finished"))
        .collect();
    let stats = system.stop().unwrap();

    shared.check(&finals, &outside_sent, total, "delivery");
    assert_eq!(stats.messages_processed, total + ACTORS as u64 + fillers);
    assert_eq!(stats.messages_sent, total + ACTORS as u64 + fillers);
    assert_eq!(stats.dead_letters, 0);
    assert_eq!(stats.actors_created, ACTORS as u64 + fillers);
    // Gulps take messages only (local sends are not gulped). A split (placement rule 4) puts
    // the mail it moves back into a queue, where it is gulped again.
    // So does a worker that compaction deactivates mid-batch (it hands the rest back).
    assert!(
        stats.gulped <= stats.messages_sent || stats.moves > 0 || stats.worker_deactivations > 0,
        "{stats}"
    );
    stats
}

const HEURISTICS: [QueueStealing; 3] = [
    QueueStealing::None,
    QueueStealing::Random,
    QueueStealing::LongestVictim,
];

/// The actor-centric executor with each built-in policy, unlimited and limited throughput, and
/// more workers than cores.
#[test]
fn actor_centric_every_policy() {
    for &(name, ex) in &EXECUTORS[1..] {
        for (workers, max) in [(2, None), (3, Some(1)), (1, Some(7))] {
            eprintln!("--- {name}, {workers} workers, max_throughput {max:?}");
            watchdog(300, move || {
                let b = ex(ActorSystem::builder().workers(workers));
                let b = match max {
                    Some(m) => b.max_throughput(m),
                    None => b,
                };
                let s = stress(b, false);
                assert!(s.gulps > 0, "jobs gulp their mailboxes: {s}");
            });
        }
    }
}

#[test]
fn many_senders_default_sharding() {
    for h in HEURISTICS {
        watchdog(300, move || {
            stress(ActorSystem::builder().workers(2).queue_stealing(h), false)
        });
    }
}

/// Few queues: many actors share each queue, so behaviours send through the local fast path
/// and the lock path alike.
#[test]
fn many_senders_few_queues_more_workers_than_cores() {
    for h in HEURISTICS {
        watchdog(300, move || {
            stress(
                ActorSystem::builder()
                    .workers(3)
                    .queues(3)
                    .queue_stealing(h),
                false,
            )
        });
    }
}

/// One worker, one queue (the single-worker default).
#[test]
fn many_senders_single_worker() {
    watchdog(300, || stress(ActorSystem::builder().workers(1), false));
}

/// All actors on worker 0's queues: the other workers can only help by stealing whole queues,
/// which must keep exactly-once delivery, per-pair order and one behaviour at a time.
///
/// Every run checks the guarantees. Whether a thief is awake while worker 0's queues hold a
/// backlog depends on the OS scheduler (2 vCPUs, 3 workers), so the evidence that stealing
/// happened at all may take a few runs: up to five, and at least one must steal.
#[test]
fn stolen_queues_keep_every_guarantee() {
    const RUNS: usize = 5;
    for h in HEURISTICS {
        for workers in [2, 3] {
            let run = move || {
                watchdog(300, move || {
                    stress(
                        // (Compaction off: every worker active, the others' queues empty.)
                        ActorSystem::builder()
                            .workers(workers)
                            .queues_per_worker(8)
                            .queue_stealing(h)
                            .compaction(false),
                        true,
                    )
                })
            };
            if h == QueueStealing::None {
                let stats = run();
                assert_eq!(stats.steal_attempts, 0, "{h:?}: {stats}");
                continue;
            }
            let mut tries = 1;
            let mut last = run();
            while last.steals == 0 && tries < RUNS {
                last = run();
                tries += 1;
            }
            assert!(
                last.steals > 0,
                "{h:?} with {workers} workers stole nothing in {RUNS} runs; last: {last}"
            );
            if tries > 1 {
                eprintln!("{h:?}, {workers} workers: stole on run {tries}");
            }
        }
    }
}

/// Sends itself numbered messages (two after every even one, none after an odd one, so some
/// wait in its batch while it runs), checking that they arrive in order, until a message from
/// outside stops it (or it has sent [`SELF_SEND_CAP`]: a bound on its memory if the outside
/// message is kept out).
struct Looper {
    next: u64,
    sent: u64,
    out_of_order: u64,
    seen: Arc<AtomicU64>,
    /// Where it reports `(out_of_order, next)` when stopped, if anywhere.
    report: Option<mpsc::Sender<(u64, u64)>>,
}

impl Looper {
    fn new(seen: Arc<AtomicU64>, report: Option<mpsc::Sender<(u64, u64)>>) -> Self {
        Looper {
            next: 0,
            sent: 0,
            out_of_order: 0,
            seen,
            report,
        }
    }
}
const SELF_SEND_CAP: u64 = 5_000_000;
struct Seq(u64);
struct Stop;
impl Actor for Looper {
    fn started(&mut self, ctx: &mut Context<'_, Self>) {
        ctx.address().send(Seq(0)).unwrap();
        self.sent = 1;
    }
}
impl Receive<Seq> for Looper {
    fn receive(&mut self, Seq(k): Seq, ctx: &mut Context<'_, Self>) -> Allocation {
        if k != self.next {
            self.out_of_order += 1;
        }
        self.next = k + 1;
        self.seen.store(self.next, Ordering::Relaxed);
        if k % 2 == 0 && self.sent < SELF_SEND_CAP {
            for _ in 0..2 {
                ctx.address().send(Seq(self.sent)).unwrap();
                self.sent += 1;
            }
        }
        Allocation::Nodelete
    }
}
impl Receive<Stop> for Looper {
    fn receive(&mut self, _: Stop, _: &mut Context<'_, Self>) -> Allocation {
        if let Some(r) = &self.report {
            r.send((self.out_of_order, self.next)).unwrap();
        }
        Allocation::Finished
    }
}

/// An actor that keeps sending itself messages gets them in order, and still gets the mail of
/// other senders: a send from the thread running an actor to that actor may skip its inbox
/// (the actor-centric executor's local sends, like the message-centric executor's), but only
/// within a budget renewed when the inbox is gulped. Many budgets' worth of self-sends run
/// before the outside message is sent; without the budget it would never arrive.
#[test]
fn self_sends_keep_their_order_and_let_other_mail_in() {
    let run = |name: &str, b: actorium::ActorSystemBuilder| {
        eprintln!("--- {name}");
        let name = name.to_string();
        watchdog(120, move || {
            let system = b.build().unwrap();
            let seen = Arc::new(AtomicU64::new(0));
            let (a, h) = system.spawn_joinable(Looper::new(seen.clone(), None));
            settle(&system, 60, "10,000 self-sends", || {
                seen.load(Ordering::Relaxed) >= 10_000
            });
            a.send(Stop).unwrap();
            // Read after the send: at least this many self-sends ran before `Stop` was queued.
            let queued_at = seen.load(Ordering::Relaxed);
            let end = h.join().expect("stopped by the outside message");
            assert_eq!(
                end.out_of_order, 0,
                "{name}: self-sends overtook each other"
            );
            assert!(end.next >= 10_000);
            assert_bounded(&name, end.next - queued_at);
            system.stop();
        });
    };
    on_every_executor(|name, choose| {
        for workers in [1, 2] {
            run(
                &format!("{name}, {workers} workers"),
                choose(ActorSystem::builder().workers(workers)),
            );
        }
    });
    // Jobs cut short by a small throughput limit resume with their batch half run.
    run(
        "actor-centric work stealing, max_throughput 7",
        ActorSystem::builder()
            .workers(2)
            .max_throughput(7)
            .policy(WorkStealing::default()),
    );
}

/// Before `Stop` runs: the rest of the budget of local sends (1,024 at most, renewed only by
/// the gulp that takes `Stop`) and the few self-messages pending (two at most); the bound
/// leaves room for a budget up to four times as large.
fn assert_bounded(name: &str, after: u64) {
    assert!(
        after <= 4 * 1024 + 16,
        "{name}: {after} self-sends ran while the outside message waited"
    );
}

/// The same on an actor of its own thread (a detached actor runs the mailbox protocol too).
#[test]
fn a_detached_actors_self_sends_keep_their_order_and_let_other_mail_in() {
    for (name, choose) in &EXECUTORS[..2] {
        eprintln!("--- {name}");
        let name = name.to_string();
        let choose = *choose;
        watchdog(120, move || {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let seen = Arc::new(AtomicU64::new(0));
            let (tx, rx) = mpsc::channel();
            let a = system.spawn_detached(Looper::new(seen.clone(), Some(tx)));
            common::wait_for(60, "10,000 self-sends", || {
                seen.load(Ordering::Relaxed) >= 10_000
            });
            a.send(Stop).unwrap();
            let queued_at = seen.load(Ordering::Relaxed);
            let (out_of_order, next) = rx
                .recv_timeout(Duration::from_secs(60))
                .expect("stopped by the outside message");
            assert_eq!(out_of_order, 0, "{name}: self-sends overtook each other");
            assert_bounded(&name, next - queued_at);
            system.stop();
        });
    }
}
