//! Sends into another worker's backlog (the message-centric executor's outbox,
//! `executor/message_centric/README.md`, "Sends into a backlog"): a behaviour's messages to an actor
//! whose queue, on another worker, already holds a backlog wait in its worker's outbox and are
//! queued in bulk. They arrive once each and in order; an actor that ends while some of them
//! still wait gets them as dead letters, and its cell outlives them; and none of this changes
//! where an actor runs. Every wait is on a flag another thread sets, under a watchdog.

mod common;

use actorium::{
    Actor, ActorSystem, Addr, Allocation, Context, QueueStealing, Receive, Restart, Strategy,
    Supervisor,
};
use common::{wait_for, watchdog};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

const PER_WORKER: usize = 4;

/// Flags the test and the actors wait on (each set once).
#[derive(Default)]
struct Flags {
    /// The receiver is in its gate behaviour: its queue can only grow.
    gated: AtomicBool,
    /// The receiver may leave its gate.
    open: AtomicBool,
    /// The flooder sent everything (its outbox may still hold the last ones).
    sent: AtomicBool,
    /// The flooder may end its behaviour (and its worker flush the outbox).
    release: AtomicBool,
    /// The receiver took a message out of order (a panic in a behaviour would be caught and
    /// reported, and the test would only time out).
    disorder: AtomicBool,
}

fn spin_until(flag: &AtomicBool) {
    // (The watchdog fails the test if the flag is never set.)
    while !flag.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
}

struct Receiver {
    flags: Arc<Flags>,
    next: u64,
    received: Arc<AtomicU64>,
    drops: Arc<AtomicU64>,
}
impl Actor for Receiver {}
struct Gate;
struct Num(u64);
impl Receive<Gate> for Receiver {
    fn receive(&mut self, _: Gate, _: &mut Context<'_, Self>) -> Allocation {
        self.flags.gated.store(true, Ordering::SeqCst);
        spin_until(&self.flags.open);
        Allocation::Nodelete
    }
}
impl Receive<Num> for Receiver {
    fn receive(&mut self, Num(i): Num, _: &mut Context<'_, Self>) -> Allocation {
        if i != self.next {
            // A message overtook another, or was lost.
            self.flags.disorder.store(true, Ordering::SeqCst);
        }
        self.next += 1;
        self.received.store(self.next, Ordering::SeqCst);
        Allocation::Nodelete
    }
}
impl Drop for Receiver {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

struct Flooder {
    /// Dropped once the flood is sent: then only its messages refer to the receiver.
    to: Option<Addr<Receiver>>,
    flags: Arc<Flags>,
}
impl Actor for Flooder {}
/// What the flooder's behaviour does once it has sent its flood, instead of waiting for
/// `release`: given the receiver's address, the flags and the behaviour's context.
type Then = Box<dyn FnOnce(&Addr<Receiver>, &Arc<Flags>, &Context<'_, Flooder>) + Send>;
struct Flood(u64, Option<Then>);
impl Receive<Flood> for Flooder {
    fn receive(&mut self, Flood(n, then): Flood, ctx: &mut Context<'_, Self>) -> Allocation {
        let to = self.to.take().expect("one flood");
        for i in 0..n {
            to.send(Num(i)).unwrap_or_else(|_| panic!("{i}: refused"));
        }
        self.flags.sent.store(true, Ordering::SeqCst);
        match then {
            Some(then) => then(&to, &self.flags, ctx),
            None => {
                drop(to);
                spin_until(&self.flags.release);
            }
        }
        Allocation::Nodelete
    }
}

struct Setup {
    system: ActorSystem,
    flooder: Addr<Flooder>,
    receiver: Addr<Receiver>,
    flags: Arc<Flags>,
    received: Arc<AtomicU64>,
    drops: Arc<AtomicU64>,
}

/// A flooder on worker 0 and a receiver on worker 1 (tickets from outside go round-robin),
/// the receiver held in its gate behaviour, so that its queue keeps a backlog; the flooder
/// has sent it `n` messages and holds its behaviour until `release` (or runs `then`).
fn flooded(stealing: QueueStealing, n: u64) -> Setup {
    flooded_then(stealing, n, None)
}

/// [`flooded`], the receiver a permanent child of a supervisor (spawned in the place of the
/// last filler, so that the queues are the same).
fn flooded_supervised(n: u64) -> Setup {
    flood_setup(QueueStealing::LongestVictim, n, None, true)
}

/// [`flooded`], the flooder's behaviour going on with `then` once the flood is sent.
fn flooded_then(stealing: QueueStealing, n: u64, then: Option<Then>) -> Setup {
    flood_setup(stealing, n, then, false)
}

fn flood_setup(stealing: QueueStealing, n: u64, then: Option<Then>, supervised: bool) -> Setup {
    // (Compaction off: the setup places actors on both workers' queues from the start.)
    let system = ActorSystem::builder()
        .workers(2)
        .compaction(false)
        .queues_per_worker(PER_WORKER)
        .queue_stealing(stealing)
        .stats(true)
        .build()
        .unwrap();
    let flags = Arc::new(Flags::default());
    let (received, drops): (Arc<AtomicU64>, Arc<AtomicU64>) = (Arc::default(), Arc::default());
    // Queue 0: a placeholder, so that the flooder can be given its address first.
    let placeholder = system.spawn(Receiver {
        flags: Arc::new(Flags::default()),
        next: 0,
        received: Arc::default(),
        drops: Arc::default(),
    });
    let fillers: Vec<_> = (1..PER_WORKER - usize::from(supervised))
        .map(|_| {
            system.spawn(Flooder {
                to: Some(placeholder.clone()),
                flags: flags.clone(),
            })
        })
        .collect();
    let receiver = if supervised {
        let sup = system.spawn(Supervisor::new(Strategy::OneForOne));
        let (f, r, d) = (flags.clone(), received.clone(), drops.clone());
        sup.supervise(Restart::Permanent, move || Receiver {
            flags: f.clone(),
            next: 0,
            received: Arc::clone(&r),
            drops: Arc::clone(&d),
        })
        .unwrap()
    } else {
        system.spawn(Receiver {
            flags: flags.clone(),
            next: 0,
            received: Arc::clone(&received),
            drops: Arc::clone(&drops),
        })
    };
    // Queues 0..PER_WORKER are worker 0's, the next PER_WORKER worker 1's.
    let flooder = system.spawn(Flooder {
        to: Some(receiver.clone()),
        flags: flags.clone(),
    });
    // (`stop` waits for every actor to end.)
    for f in &fillers {
        f.send(actorium::DeleteMsg).unwrap();
    }
    placeholder.send(actorium::DeleteMsg).unwrap();
    assert_eq!(system.handle().worker_of_queue(receiver.queue()), 1);
    let flooder = if system.handle().worker_of_queue(flooder.queue()) == 0 {
        flooder
    } else {
        // (Round-robin put it past worker 1's range: one more for worker 0.)
        let mut again = None;
        for _ in 0..2 * PER_WORKER {
            let f = system.spawn(Flooder {
                to: Some(receiver.clone()),
                flags: flags.clone(),
            });
            if again.is_none() && system.handle().worker_of_queue(f.queue()) == 0 {
                again = Some(f);
            } else {
                f.send(actorium::DeleteMsg).unwrap();
            }
        }
        flooder.send(actorium::DeleteMsg).unwrap();
        again.expect("some spawn lands on worker 0")
    };
    receiver.send(Gate).unwrap();
    spin_until(&flags.gated);
    flooder.send(Flood(n, then)).unwrap();
    spin_until(&flags.sent);
    Setup {
        system,
        flooder,
        receiver,
        flags,
        received,
        drops,
    }
}

#[test]
fn sends_into_another_worker_s_backlog_arrive_once_and_in_order_through_the_outbox() {
    watchdog(120, || {
        for stealing in [QueueStealing::LongestVictim, QueueStealing::None] {
            const N: u64 = 20_000;
            let s = flooded(stealing, N);
            s.flags.release.store(true, Ordering::SeqCst);
            s.flags.open.store(true, Ordering::SeqCst);
            wait_for(60, "every message", || {
                s.received.load(Ordering::SeqCst) == N
            });
            assert!(
                !s.flags.disorder.load(Ordering::SeqCst),
                "{stealing:?}: a message overtook another, or was lost"
            );
            s.receiver.send(actorium::DeleteMsg).unwrap();
            s.flooder.send(actorium::DeleteMsg).unwrap();
            let stats = s.system.stop().unwrap();
            // All but the first `outbox_backlog` (32) or so went through the outbox.
            assert!(
                stats.outboxed >= N - 100,
                "{stealing:?}: only {} of {N} sends went through the outbox",
                stats.outboxed
            );
            assert_eq!(stats.dead_letters, 0);
        }
    });
}

/// An actor to end from outside, behind what is queued for it.
struct End(std::sync::mpsc::Sender<()>);
impl Receive<End> for Receiver {
    fn receive(&mut self, End(tx): End, _: &mut Context<'_, Self>) -> Allocation {
        tx.send(()).unwrap();
        Allocation::Delete
    }
}

/// The receiver ends while the flooder's behaviour still runs, with the last of its messages
/// in its worker's outbox: those are queued when the behaviour ends, after the receiver's end,
/// and are dead letters. By then nothing but those messages refers to the receiver (the
/// flooder and the test dropped their addresses). Its reclaim waits for them (its queue is
/// pinned), so they never touch a freed cell: under valgrind, a reclaim that did not wait
/// shows as invalid reads. Its state is dropped once.
#[test]
fn an_actor_that_ends_while_mail_for_it_waits_in_an_outbox_gets_it_as_dead_letters() {
    watchdog(120, || {
        // 1,000 sends: 32 direct, then the outbox, queued every 64, so the last 8 wait in
        // the outbox until the flooder's behaviour ends.
        const N: u64 = 1_000;
        let Setup {
            system,
            flooder,
            receiver,
            flags,
            received,
            drops,
        } = flooded(QueueStealing::LongestVictim, N);
        // Queued behind every message queued so far (a poison pill would do as well).
        let (tx, rx) = std::sync::mpsc::channel();
        receiver.send(End(tx)).unwrap();
        drop(receiver);
        flags.open.store(true, Ordering::SeqCst);
        rx.recv().unwrap();
        wait_for(60, "the receiver's state to be dropped", || {
            drops.load(Ordering::SeqCst) == 1
        });
        let taken = received.load(Ordering::SeqCst);
        assert!(
            taken < N,
            "no message waited in the outbox: all {N} were queued before the behaviour ended"
        );
        flags.release.store(true, Ordering::SeqCst);
        flooder.send(actorium::DeleteMsg).unwrap();
        let stats = system.stop().unwrap();
        assert_eq!(
            stats.dead_letters,
            N - taken,
            "the messages left in the outbox are dead letters"
        );
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        assert_eq!(received.load(Ordering::SeqCst), taken);
        assert!(!flags.disorder.load(Ordering::SeqCst), "out of order");
    });
}

/// A graceful shutdown asks each actor to end behind the mail already sent to it, the mail
/// a behaviour sent that still waits in its worker's outbox included: the receiver gets the
/// whole flood, and no message is a dead letter. (A request queued at once went ahead of
/// the last messages, which the flooder's worker queued only when its behaviour ended: the
/// receiver ended first.) The shutdown asks while the flooder still holds those messages,
/// and the test waits a moment for the receiver to end early, which only a request that
/// overtook them would allow: a slow machine makes the test weaker, never wrong.
///
/// Also for a supervised receiver: its supervisor, asked to end too, ends its children, and
/// that request must wait for the outbox as well.
#[test]
fn a_graceful_shutdown_ends_an_actor_after_the_mail_an_outbox_kept_for_it() {
    for supervised in [false, true] {
        shutdown_after_the_outbox(supervised);
    }
}

fn shutdown_after_the_outbox(supervised: bool) {
    struct Probe;
    impl Actor for Probe {}
    watchdog(120, move || {
        const N: u64 = 1_000;
        let Setup {
            system,
            flooder,
            receiver,
            flags,
            received,
            drops,
        } = if supervised {
            flooded_supervised(N)
        } else {
            flooded(QueueStealing::LongestVictim, N)
        };
        drop((flooder, receiver));
        let handle = system.handle();
        let shutdown = std::thread::spawn(move || system.shutdown());
        // Spawns from outside are refused once the shutdown has begun.
        wait_for(60, "the shutdown to begin", || {
            handle.try_spawn(Probe).is_err()
        });
        flags.open.store(true, Ordering::SeqCst);
        let since = std::time::Instant::now();
        while drops.load(Ordering::SeqCst) == 0
            && since.elapsed() < std::time::Duration::from_millis(200)
        {
            std::thread::yield_now();
        }
        let early = received.load(Ordering::SeqCst);
        assert!(early < N, "no message waited in the outbox");
        flags.release.store(true, Ordering::SeqCst);
        let stats = shutdown.join().unwrap().unwrap();
        assert_eq!(
            received.load(Ordering::SeqCst),
            N,
            "the receiver ended before the mail the outbox kept for it ({early} of {N} taken \
             when it ended)"
        );
        assert_eq!(stats.dead_letters, 0);
        assert!(stats.outboxed > 0, "no send went through the outbox");
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        assert!(!flags.disorder.load(Ordering::SeqCst), "out of order");
    });
}

/// The request to end an actor waits for the outboxes that hold its mail, but not for a
/// behaviour that goes on sending to it: the flooder sends until a send fails, which comes
/// only once the receiver has ended. The shutdown must end (before, the request waited for
/// the flooder's pin, which its behaviour held for ever), and every message accepted was
/// delivered or is a dead letter.
#[test]
fn a_shutdown_ends_an_actor_that_a_behaviour_floods_until_a_send_fails() {
    watchdog(120, || {
        const N: u64 = 1_000;
        let accepted = Arc::new(AtomicU64::new(0));
        let a = accepted.clone();
        let then: Then = Box::new(move |to, _, _| {
            let mut i = N;
            while to.send(Num(i)).is_ok() {
                i += 1;
            }
            a.store(i, Ordering::SeqCst);
        });
        let Setup {
            system,
            flooder,
            receiver,
            flags,
            received,
            drops,
        } = flooded_then(QueueStealing::LongestVictim, N, Some(then));
        drop((flooder, receiver));
        let shutdown = std::thread::spawn(move || system.shutdown());
        flags.open.store(true, Ordering::SeqCst);
        let stats = shutdown.join().unwrap().unwrap();
        let (sent, got) = (
            accepted.load(Ordering::SeqCst),
            received.load(Ordering::SeqCst),
        );
        assert!(got >= N, "the flood before the shutdown: {got} of {N}");
        assert_eq!(
            got + stats.dead_letters,
            sent,
            "accepted: {sent}, delivered: {got}"
        );
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        assert!(!flags.disorder.load(Ordering::SeqCst), "out of order");
    });
}

/// A respawn waits for the mail that an outbox kept for the old incarnation: that mail is
/// queued ahead of the new incarnation's start, as dead letters, and the new state receives
/// none of it. (The respawn is made from another thread while the flooder still holds the
/// mail; the test waits a moment for it to return early, which only a respawn that does not
/// wait would do: a slow machine makes the test weaker, never wrong.)
#[test]
fn a_respawn_waits_for_mail_kept_for_the_old_incarnation() {
    watchdog(120, || {
        const N: u64 = 1_000;
        let Setup {
            system,
            flooder,
            receiver,
            flags,
            received,
            drops,
        } = flooded(QueueStealing::LongestVictim, N);
        receiver.send(actorium::DestroyMsg).unwrap();
        flags.open.store(true, Ordering::SeqCst);
        wait_for(60, "the receiver to be destroyed", || !receiver.is_alive());
        let taken = received.load(Ordering::SeqCst);
        assert!(taken < N, "no message waited in the outbox");
        let (new_received, new_drops) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let respawned = Arc::new(AtomicBool::new(false));
        let respawner = {
            let (receiver, respawned) = (receiver.clone(), respawned.clone());
            let state = Receiver {
                flags: Arc::new(Flags::default()),
                next: 0,
                received: Arc::clone(&new_received),
                drops: Arc::clone(&new_drops),
            };
            std::thread::spawn(move || {
                let ok = receiver.respawn(state).is_ok();
                respawned.store(true, Ordering::SeqCst);
                ok
            })
        };
        let since = std::time::Instant::now();
        while !respawned.load(Ordering::SeqCst)
            && since.elapsed() < std::time::Duration::from_millis(200)
        {
            std::thread::yield_now();
        }
        flags.release.store(true, Ordering::SeqCst);
        assert!(respawner.join().unwrap(), "the respawn was refused");
        let system = Setup {
            system,
            flooder,
            receiver,
            flags,
            received,
            drops,
        };
        after_the_respawn(system, N - taken, &new_received, &new_drops);
    });
}

/// A fork/join task of the flooder's behaviour, run by the other worker, sends after the
/// flood: its message comes after every message of the flood, also the last ones, which the
/// behaviour's worker kept in its outbox until the fork. The receiver's worker runs the task:
/// it goes idle once the receiver leaves its gate and has taken its mail, and steals it (the
/// behaviour's half of the join waits until the task has run).
#[test]
fn a_task_forked_by_a_behaviour_sends_after_what_the_behaviour_sent_before_the_fork() {
    watchdog(120, || {
        // 1,000 sends: the last 8 wait in the outbox until a flush (as above).
        const N: u64 = 1_000;
        let elsewhere = Arc::new(AtomicBool::new(false));
        let then: Then = {
            let elsewhere = elsewhere.clone();
            Box::new(move |to, flags, ctx| {
                let here = std::thread::current().id();
                let ran = AtomicBool::new(false);
                ctx.join(
                    || {
                        flags.open.store(true, Ordering::SeqCst);
                        spin_until(&ran);
                    },
                    || {
                        to.send(Num(N)).unwrap();
                        elsewhere.store(std::thread::current().id() != here, Ordering::SeqCst);
                        ran.store(true, Ordering::SeqCst);
                    },
                );
            })
        };
        let s = flooded_then(QueueStealing::LongestVictim, N, Some(then));
        wait_for(60, "every message", || {
            s.received.load(Ordering::SeqCst) == N + 1
        });
        assert!(
            elsewhere.load(Ordering::SeqCst),
            "the task ran on the other worker"
        );
        assert!(
            !s.flags.disorder.load(Ordering::SeqCst),
            "the task's message overtook the behaviour's kept ones"
        );
        s.receiver.send(actorium::DeleteMsg).unwrap();
        s.flooder.send(actorium::DeleteMsg).unwrap();
        let stats = s.system.stop().unwrap();
        assert!(stats.outboxed > 0, "nothing went through the outbox");
        assert_eq!(stats.dead_letters, 0);
    });
}

/// The same respawn, made by a fork/join task of the flooder's behaviour that the other
/// worker runs while the behaviour waits for it in the join: the fork flushed the outbox, so
/// the respawn does not wait for a pin that only the waiting behaviour's worker could take
/// back (which would never end).
#[test]
fn a_respawn_by_a_task_the_flooder_waits_for_does_not_wait_for_the_flooder_s_outbox() {
    watchdog(120, || {
        const N: u64 = 1_000;
        let (new_received, new_drops) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let respawned = Arc::new(AtomicU64::new(0));
        let then: Then = {
            let state = Receiver {
                flags: Arc::new(Flags::default()),
                next: 0,
                received: Arc::clone(&new_received),
                drops: Arc::clone(&new_drops),
            };
            let respawned = respawned.clone();
            Box::new(move |to, flags, ctx| {
                spin_until(&flags.release);
                let done = AtomicBool::new(false);
                ctx.join(
                    || {
                        while !done.load(Ordering::SeqCst) {
                            std::thread::yield_now();
                        }
                    },
                    || {
                        let ok = to.respawn(state).is_ok();
                        respawned.store(if ok { 1 } else { 2 }, Ordering::SeqCst);
                        done.store(true, Ordering::SeqCst);
                    },
                );
            })
        };
        let Setup {
            system,
            flooder,
            receiver,
            flags,
            received,
            drops,
        } = flooded_then(QueueStealing::LongestVictim, N, Some(then));
        receiver.send(actorium::DestroyMsg).unwrap();
        flags.open.store(true, Ordering::SeqCst);
        wait_for(60, "the receiver to be destroyed", || !receiver.is_alive());
        let taken = received.load(Ordering::SeqCst);
        assert!(taken < N, "no message waited in the outbox");
        flags.release.store(true, Ordering::SeqCst);
        wait_for(60, "the respawn", || respawned.load(Ordering::SeqCst) != 0);
        assert_eq!(
            respawned.load(Ordering::SeqCst),
            1,
            "the respawn was refused"
        );
        let system = Setup {
            system,
            flooder,
            receiver,
            flags,
            received,
            drops,
        };
        after_the_respawn(system, N - taken, &new_received, &new_drops);
    });
}

/// After a respawn of the flooded receiver: a message reaches the new incarnation, and none of
/// the old one's did; the `dead` messages kept for the old one were dead letters; each state
/// was dropped once.
fn after_the_respawn(s: Setup, dead: u64, new_received: &AtomicU64, new_drops: &AtomicU64) {
    s.receiver.send(Num(0)).unwrap();
    wait_for(60, "the new incarnation's first message", || {
        new_received.load(Ordering::SeqCst) > 0
    });
    s.receiver.send(actorium::DeleteMsg).unwrap();
    s.flooder.send(actorium::DeleteMsg).unwrap();
    let stats = s.system.stop().unwrap();
    assert_eq!(
        new_received.load(Ordering::SeqCst),
        1,
        "mail sent to the old incarnation reached the new one"
    );
    assert_eq!(stats.dead_letters, dead);
    assert_eq!(s.drops.load(Ordering::SeqCst), 1);
    assert_eq!(new_drops.load(Ordering::SeqCst), 1);
}

/// Messages from several senders, each numbered from 0; the receiver checks each sender's
/// order and counts what it took.
struct Tally {
    next: Vec<u64>,
    taken: Arc<AtomicU64>,
    disorder: Arc<AtomicBool>,
    gate: Arc<Flags>,
}
impl Actor for Tally {}
struct Nth(usize, u64);
impl Receive<Nth> for Tally {
    fn receive(&mut self, Nth(s, i): Nth, _: &mut Context<'_, Self>) -> Allocation {
        if i != self.next[s] {
            self.disorder.store(true, Ordering::SeqCst);
        }
        self.next[s] = i + 1;
        self.taken.fetch_add(1, Ordering::SeqCst);
        Allocation::Nodelete
    }
}
impl Receive<Gate> for Tally {
    fn receive(&mut self, _: Gate, _: &mut Context<'_, Self>) -> Allocation {
        self.gate.gated.store(true, Ordering::SeqCst);
        spin_until(&self.gate.open);
        Allocation::Nodelete
    }
}

/// Sends to the tally, numbered as sender `.0`, until a send fails; stores how many it sent.
struct Pump(usize, Addr<Tally>, Arc<AtomicU64>);
impl Actor for Pump {}
struct Go;
impl Receive<Go> for Pump {
    fn receive(&mut self, _: Go, _: &mut Context<'_, Self>) -> Allocation {
        let mut i = 0;
        while self.1.send(Nth(self.0, i)).is_ok() {
            i += 1;
            self.2.store(i, Ordering::SeqCst);
        }
        Allocation::Nodelete
    }
}

/// As [`a_shutdown_ends_an_actor_that_a_behaviour_floods_until_a_send_fails`], with four
/// flooders on four other workers: each pinned the receiver's queue again after each flush,
/// so the request to end it, parked until no worker pins the queue, waited until all four
/// happened to be between a flush and their next send at once (now no pin is taken while a
/// request is parked). Every message accepted is delivered, in each sender's order, or is a
/// dead letter. (On 2 CPUs the old wait lasted milliseconds, not for ever: this test checks
/// the promise, and does not fail on the old code.)
#[test]
fn a_shutdown_ends_an_actor_that_several_workers_flood_until_their_sends_fail() {
    const PUMPS: usize = 4;
    watchdog(120, || {
        let system = ActorSystem::builder()
            .workers(PUMPS + 1)
            .compaction(false)
            .queues_per_worker(PER_WORKER)
            .stats(true)
            .build()
            .unwrap();
        let (taken, disorder, gate) = (Arc::default(), Arc::default(), Arc::new(Flags::default()));
        let tally = system.spawn(Tally {
            next: vec![0; PUMPS],
            taken: Arc::clone(&taken),
            disorder: Arc::clone(&disorder),
            gate: gate.clone(),
        });
        let home = system.handle().worker_of_queue(tally.queue());
        // One pump on each other worker (spawns from outside go round-robin over the queues);
        // the others end at once.
        let sent: Vec<Arc<AtomicU64>> = (0..PUMPS).map(|_| Arc::default()).collect();
        let mut pumps: Vec<Option<Addr<Pump>>> = (0..=PUMPS).map(|_| None).collect();
        while pumps
            .iter()
            .enumerate()
            .any(|(w, p)| w != home && p.is_none())
        {
            let s = pumps.iter().flatten().count();
            let p = system.spawn(Pump(s, tally.clone(), sent[s].clone()));
            let w = system.handle().worker_of_queue(p.queue());
            if w != home && pumps[w].is_none() {
                pumps[w] = Some(p);
            } else {
                p.send(actorium::DeleteMsg).unwrap();
            }
        }
        tally.send(Gate).unwrap();
        spin_until(&gate.gated);
        for p in pumps.iter().flatten() {
            p.send(Go).unwrap();
        }
        // Every pump is sending into the tally's backlog.
        wait_for(60, "every pump to send", || {
            sent.iter().all(|s| s.load(Ordering::SeqCst) >= 1_000)
        });
        drop((tally, pumps));
        let shutdown = std::thread::spawn(move || system.shutdown());
        gate.open.store(true, Ordering::SeqCst);
        let stats = shutdown.join().unwrap().unwrap();
        let accepted: u64 = sent.iter().map(|s| s.load(Ordering::SeqCst)).sum();
        assert_eq!(
            taken.load(Ordering::SeqCst) + stats.dead_letters,
            accepted,
            "taken: {}, dead letters: {}",
            taken.load(Ordering::SeqCst),
            stats.dead_letters
        );
        assert!(stats.outboxed > 0, "no send went through the outbox");
        assert!(!disorder.load(Ordering::SeqCst), "out of order");
    });
}
