//! Random actor programs checked against a model.
//!
//! proptest generates small programs: actors (sometimes under a one-for-one, one-for-all or
//! rest-for-one supervisor, sometimes detached), outside threads that send, ask, poison,
//! resize, set timers, start relayed chains and run fork/join, and messages carrying
//! *scripts* that make the receiving behaviour send, spawn, ask (a continuation; or, on a
//! detached actor, a blocking wait), relay a chain of hundreds of messages across the actors
//! (placement moves them between queues as they talk), join, run a scope whose tasks spawn
//! tasks, panic or stop. Each program runs on every executor and stealing heuristic (the
//! message-centric executor with longest-victim, random and no queue stealing; the
//! actor-centric work-stealing and work-sharing policies, and a custom policy whose hooks
//! panic at random points, which must lose nothing; the actor-centric ones with the program's
//! `max_throughput`) with 1 to 4 workers, and ends in one of four ways: it quiesces, then
//! every actor is poisoned and `stop()` returns; `shutdown()` while outside threads still
//! send; the system is dropped while they still send and ask; or `shutdown_timeout` with a
//! time-out that often runs out. A ledger checks, on every run:
//!
//! - every message created is, exactly once, delivered, dropped undelivered (and then reported
//!   as a dead letter, unless the system was dropped), or returned by a
//!   refused send; a message is dropped undelivered only when its receiver was hit by a fault
//!   (a panic, a poison pill, `Context::stop`) or the run ends by `shutdown` or `drop`;
//! - per (sender, receiver), messages are delivered in send order, across restarts too;
//! - no actor runs two behaviours at once (its flag is shared by its incarnations);
//! - every ask resolves: from outside, `wait_timeout` returns the receiver's answer (an error
//!   only where a fault or the end reached it); inside, the continuation runs or is dropped
//!   with the asker, and never sees a wrong answer;
//! - without faults, the run delivers exactly the model's number of messages (each script
//!   is a tree of sends, so the model counts them before the run);
//! - fork/join inside behaviours and from outside computes right (scopes count their tasks);
//! - a blocking ask on a detached actor resolves, also when the system is dropped;
//! - `stop()`, `shutdown()` and `drop` return (a watchdog), and once the system is gone every
//!   actor state that was built has been dropped exactly once.
//!
//! The testing policy is left out: it runs jobs only when its caller asks (`run_once`), which
//! this harness's outside threads and ends do not do.
//!
//! Failing programs shrink to a minimal one, which proptest prints (and records in
//! `tests/random_programs.proptest-regressions`, replayed first by later runs). CI runs
//! `ACTORIUM_PROGRAMS` programs (default 64), each on all 24 (executor, workers) pairs. Soak mode, printing programs and messages per second as it goes:
//!
//! ```text
//! ACTORIUM_SOAK_SECS=1800 cargo test --release -p actorium --test random_programs -- --ignored soak --nocapture
//! ```
//!
//! It prints each failing program's seed; `ACTORIUM_REPLAY=<seed>` with `-- --ignored replay`
//! runs that program again.

mod common;

use actorium::policy::{
    Job, Policy, Resumable, Scheduler, SharedQueue, WorkSharing, WorkStealing, WorkerCtx,
};
use actorium::{
    Actor, ActorSystem, ActorSystemBuilder, Addr, Allocation, Ask, AskError, Context, DeleteMsg,
    DestroyMsg, Event, FinishedMsg, QueueStealing, Receive, Restart, SendError,
    Strategy as SupervisorStrategy, Supervisor, SystemHandle,
};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, Once, RwLock};
use std::time::{Duration, Instant};

// ---- programs ----------------------------------------------------------------------------

/// What a behaviour does with a message's script, hop by hop.
#[derive(Debug, Clone)]
enum Hop {
    /// Send a message (carrying `then`) to actor `to` (an index into every actor so far).
    Send { to: usize, then: Vec<Hop> },
    /// Spawn an actor and send it a message carrying `then`; a `faulty` one panics in its
    /// `started` hook (a fault: it ends before any message).
    Spawn { then: Vec<Hop>, faulty: bool },
    /// From now on this incarnation's `stopped` hook panics (when it ends, however it ends).
    ArmStopped,
    /// Ask actor `to` its id (`Context::ask`: the answer comes back as a continuation).
    Ask { to: usize },
    /// `ctx.join` computing fib(n) on the workers.
    Join { n: u8 },
    /// Send actor `to` a message that its receiver relays on, `hops` messages in all, each
    /// to another actor: chains that cross the actors back and forth, at volume (placement
    /// moves actors between queues as they talk; per-sender order must hold across them).
    Relay { to: usize, hops: u16 },
    /// `ctx.scope` with `n` tasks that each spawn one more, and a fork handle joined.
    Scope { n: u8 },
    /// Ask actor `to` and block for the answer (`Pending::wait_timeout`): a detached actor
    /// may (to a pooled actor); on a worker the wait is refused (`WouldBlock`).
    AskWait { to: usize },
    /// Panic (a fault: the actor ends, or its supervisor restarts it).
    Panic,
    /// `Context::stop` (a fault for the model: mail after it is dropped).
    Stop,
}

/// What an outside thread does.
#[derive(Debug, Clone)]
enum Step {
    Send {
        to: usize,
        script: Vec<Hop>,
    },
    /// `n` plain sends to actor `to` in a row (mail piles up: gulps, batches, steals).
    Burst {
        to: usize,
        n: u16,
    },
    /// `Addr::ask` and `wait_timeout`.
    Ask {
        to: usize,
    },
    /// A poison pill (a fault).
    Pill {
        to: usize,
        kind: Pill,
    },
    /// `send_after` with a delay of `micros`.
    Timer {
        to: usize,
        micros: u16,
        script: Vec<Hop>,
    },
    /// `add_workers(1)` or `remove_workers(1)`.
    Resize {
        add: bool,
    },
    /// `chains` relayed chains of `hops` messages each ([`Hop::Relay`]), started at once.
    Chatter {
        chains: u8,
        hops: u16,
    },
    /// `SystemHandle::join` (or `scope`, with tasks that spawn tasks) from this thread.
    ForkJoin {
        scope: bool,
    },
}

#[derive(Debug, Clone, Copy)]
enum Pill {
    Delete,
    Destroy,
    Finished,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum End {
    /// Wait until every message is accounted for, poison every actor, `stop()`.
    Quiesce,
    /// `shutdown()` once outside thread 0 has made `end_after` steps (the others go on).
    Shutdown,
    /// `drop(system)` at the same point.
    Drop,
    /// `shutdown_timeout` at the same point, with a time-out that often runs out (then the
    /// system is stopped at once, as dropped).
    ShutdownTimeout,
}

#[derive(Debug, Clone)]
struct Program {
    actors: usize,
    /// The first actors are children of a supervisor (permanent restarts).
    supervised: bool,
    /// Its strategy: 0 one-for-one, 1 one-for-all, 2 rest-for-one (children restart in place
    /// with their mail, so a sibling's restart excuses no lost message either).
    strategy: u8,
    /// Its intensity: restarts allowed per second before it gives up (and its children end).
    intensity: u32,
    /// One list of steps per outside thread.
    threads: Vec<Vec<Step>>,
    end: End,
    end_after: usize,
    /// Detached actors, spawned after the others (never supervised).
    detached: usize,
    /// `max_throughput` on the actor-centric executors (`None`: unlimited, the default).
    throughput: Option<usize>,
}

const MAX_TO: usize = 16;

fn hop() -> impl Strategy<Value = Hop> {
    let leaf = prop_oneof![
        6 => (0..MAX_TO).prop_map(|to| Hop::Send { to, then: vec![] }),
        2 => (0..MAX_TO).prop_map(|to| Hop::Ask { to }),
        1 => (0u8..14).prop_map(|n| Hop::Join { n }),
        1 => Just(Hop::Panic),
        1 => Just(Hop::Stop),
        1 => Just(Hop::ArmStopped),
        1 => ((0..MAX_TO), (1u16..600)).prop_map(|(to, hops)| Hop::Relay { to, hops }),
        1 => (0u8..5).prop_map(|n| Hop::Scope { n }),
        1 => (0..MAX_TO).prop_map(|to| Hop::AskWait { to }),
    ];
    leaf.prop_recursive(3, 24, 3, |inner| {
        prop_oneof![
            3 => ((0..MAX_TO), prop::collection::vec(inner.clone(), 0..3))
                .prop_map(|(to, then)| Hop::Send { to, then }),
            1 => (prop::collection::vec(inner, 0..3), prop::bool::weighted(0.2))
                .prop_map(|(then, faulty)| Hop::Spawn { then, faulty }),
        ]
    })
}

fn script() -> impl Strategy<Value = Vec<Hop>> {
    prop::collection::vec(hop(), 0..4)
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => ((0..MAX_TO), script()).prop_map(|(to, script)| Step::Send { to, script }),
        1 => ((0..MAX_TO), (1u16..400)).prop_map(|(to, n)| Step::Burst { to, n }),
        2 => (0..MAX_TO).prop_map(|to| Step::Ask { to }),
        1 => ((0..MAX_TO), prop_oneof![Just(Pill::Delete), Just(Pill::Destroy),
                                       Just(Pill::Finished)])
            .prop_map(|(to, kind)| Step::Pill { to, kind }),
        1 => ((0..MAX_TO), (0u16..2000), script())
            .prop_map(|(to, micros, script)| Step::Timer { to, micros, script }),
        2 => any::<bool>().prop_map(|add| Step::Resize { add }),
        1 => ((1u8..8), (1u16..2000)).prop_map(|(chains, hops)| Step::Chatter { chains, hops }),
        1 => any::<bool>().prop_map(|scope| Step::ForkJoin { scope }),
    ]
}

fn program() -> impl Strategy<Value = Program> {
    (
        1usize..7,
        any::<bool>(),
        prop_oneof![Just(1u32), Just(1000)],
        prop::collection::vec(prop::collection::vec(step(), 0..10), 1..4),
        prop_oneof![
            3 => Just(End::Quiesce),
            1 => Just(End::Shutdown),
            1 => Just(End::Drop),
            1 => Just(End::ShutdownTimeout),
        ],
        0usize..10,
        // Half the programs have no faults, so the model's message count is checked exactly.
        any::<bool>(),
        0u8..3,
        0usize..3,
        prop_oneof![Just(None), Just(Some(1)), Just(Some(8))],
    )
        .prop_map(
            |(
                actors,
                supervised,
                intensity,
                threads,
                end,
                end_after,
                faults,
                strategy,
                detached,
                throughput,
            )| {
                let mut p = Program {
                    actors,
                    supervised,
                    strategy,
                    intensity,
                    threads,
                    end,
                    end_after,
                    detached,
                    throughput,
                };
                if !faults {
                    p.remove_faults();
                }
                p
            },
        )
}

fn strip(script: &mut Vec<Hop>) {
    script.retain(|h| !matches!(h, Hop::Panic | Hop::Stop));
    for h in script {
        match h {
            Hop::Send { then, .. } => strip(then),
            Hop::Spawn { then, faulty } => {
                *faulty = false;
                strip(then);
            }
            _ => {}
        }
    }
}

fn script_messages(script: &[Hop]) -> u64 {
    script
        .iter()
        .map(|h| match h {
            Hop::Send { then, .. } | Hop::Spawn { then, .. } => 1 + script_messages(then),
            Hop::Ask { .. } | Hop::AskWait { .. } => 1,
            Hop::Relay { hops, .. } => u64::from(*hops),
            _ => 0,
        })
        .sum()
}

fn script_spawns(script: &[Hop]) -> u64 {
    script
        .iter()
        .map(|h| match h {
            Hop::Send { then, .. } => script_spawns(then),
            Hop::Spawn { then, .. } => 1 + script_spawns(then),
            _ => 0,
        })
        .sum()
}

fn has_fault(script: &[Hop]) -> bool {
    script.iter().any(|h| match h {
        Hop::Panic | Hop::Stop | Hop::Spawn { faulty: true, .. } => true,
        Hop::Send { then, .. } | Hop::Spawn { then, .. } => has_fault(then),
        _ => false,
    })
}

impl Program {
    fn remove_faults(&mut self) {
        for t in &mut self.threads {
            t.retain(|s| !matches!(s, Step::Pill { .. }));
            for s in t {
                if let Step::Send { script, .. } | Step::Timer { script, .. } = s {
                    strip(script);
                }
            }
        }
    }

    fn scripts(&self) -> impl Iterator<Item = &[Hop]> {
        self.threads.iter().flatten().filter_map(|s| match s {
            Step::Send { script, .. } | Step::Timer { script, .. } => Some(&script[..]),
            _ => None,
        })
    }

    /// The model: how many messages the program creates at most (exactly, without faults).
    fn messages(&self) -> u64 {
        let steps: u64 = self
            .threads
            .iter()
            .flatten()
            .map(|s| match s {
                Step::Send { .. } | Step::Timer { .. } | Step::Ask { .. } => 1,
                Step::Burst { n, .. } => u64::from(*n),
                Step::Chatter { chains, hops } => u64::from(*chains) * u64::from(*hops),
                _ => 0,
            })
            .sum();
        steps + self.scripts().map(script_messages).sum::<u64>()
    }

    /// Actors the program can spawn (at most: a fault can stop a script).
    fn max_actors(&self) -> usize {
        self.actors + self.detached + self.scripts().map(script_spawns).sum::<u64>() as usize
    }

    fn has_faults(&self) -> bool {
        self.scripts().any(has_fault)
            || self
                .threads
                .iter()
                .flatten()
                .any(|s| matches!(s, Step::Pill { .. }))
    }
}

// ---- the ledger --------------------------------------------------------------------------

const CREATED: u8 = 0;
const DELIVERED: u8 = 1;
const DROPPED: u8 = 2;
const RETURNED: u8 = 3;

/// Sender keys: outside thread `t` is `t`; actor `i` is `ACTOR_KEY + i`; every timer message
/// has a key of its own (timers promise no order between them).
const ACTOR_KEY: u64 = 1 << 20;
const TIMER_KEY: u64 = 1 << 40;

struct Ledger {
    /// How the run ended: the program's end, with a `shutdown_timeout` resolved to
    /// `Shutdown` (it finished in time) or `Drop` (it stopped the system at once).
    end: Mutex<End>,
    /// Actors `detached.start..detached.end` are detached.
    detached: std::ops::Range<usize>,
    /// Per message id: CREATED, then exactly one of the others.
    state: Vec<AtomicU8>,
    /// Per message: its receiver (a stable actor id), sender key and sequence number; whether
    /// it is a timer's; whether its send was accepted before the end began (shutdown must
    /// deliver those); for a refused send, whether the end had begun when it was refused.
    to: Vec<AtomicUsize>,
    from: Vec<AtomicU64>,
    seq_of: Vec<AtomicU64>,
    timer: Vec<AtomicBool>,
    before_end: Vec<AtomicBool>,
    refused_at_end: Vec<AtomicBool>,
    next_id: AtomicU64,
    next_timer: AtomicU64,
    /// Messages created and not yet delivered, dropped or returned.
    pending: AtomicU64,
    delivered: AtomicU64,
    /// Next sequence number per (sender, receiver), and the last one delivered.
    seq: Mutex<HashMap<(u64, usize), u64>>,
    last: Mutex<HashMap<(u64, usize), u64>>,
    /// The first `supervised` actors are a supervisor's children: a fault restarts them in
    /// place with their mail, so it excuses nothing, unless the supervisor gives up.
    supervised: usize,
    /// The supervisor's strategy (`Program::strategy`).
    strategy: u8,
    gave_up: AtomicBool,
    /// Per unsupervised actor: ended by a panic or `Context::stop` (its mail may be dropped),
    /// or sent a poison pill (mail queued before it must still be delivered).
    faulted: Vec<AtomicBool>,
    pilled: Vec<AtomicBool>,
    /// (sender, receiver, the sender's last sequence number to it before the pill).
    pills: Mutex<Vec<(u64, usize, u64)>>,
    /// Per actor: in a behaviour now (shared by its incarnations).
    busy: Vec<Arc<AtomicBool>>,
    /// Per actor: states built and dropped.
    built: Vec<AtomicU64>,
    dropped: Vec<AtomicU64>,
    next_actor: AtomicUsize,
    /// Every actor so far, by stable id (index `to % len` in scripts).
    addrs: RwLock<Vec<Addr<Node>>>,
    /// Asks from behaviours whose continuation has neither run nor been dropped.
    asks_open: AtomicU64,
    /// Questions whose ask resolved to an error (each must not have been delivered, unless
    /// the ask was a blocking wait on a thread of the system, which gives up when the system
    /// is dropped), and continuations dropped unrun (the asker's id and the question: the
    /// asker must have ended, or the question been refused).
    failed_asks: Mutex<Vec<(usize, String, bool)>>,
    lost_continuations: Mutex<Vec<(usize, usize)>>,
    /// The end (shutdown or drop) has begun.
    ending: AtomicBool,
    /// Messages (not a timer's: a timer cancelled at the end drops a message never sent)
    /// dropped undelivered, and the dead letters the runtime reported (`Event::DeadLetters`):
    /// every message dropped undelivered must be reported (the runtime counts other envelopes
    /// too, so the reports may exceed the drops).
    dropped_sent: AtomicU64,
    dead_letters: AtomicU64,
    violations: Mutex<Vec<String>>,
}

impl Ledger {
    fn new(p: &Program) -> Arc<Self> {
        let n = p.messages() as usize;
        let a = p.max_actors();
        let v = |f: fn() -> AtomicBool| (0..n).map(|_| f()).collect::<Vec<_>>();
        Arc::new(Self {
            end: Mutex::new(p.end),
            detached: p.actors..p.actors + p.detached,
            state: (0..n).map(|_| AtomicU8::new(CREATED)).collect(),
            to: (0..n).map(|_| AtomicUsize::new(usize::MAX)).collect(),
            from: (0..n).map(|_| AtomicU64::new(0)).collect(),
            seq_of: (0..n).map(|_| AtomicU64::new(0)).collect(),
            timer: v(|| AtomicBool::new(false)),
            before_end: v(|| AtomicBool::new(false)),
            refused_at_end: v(|| AtomicBool::new(false)),
            next_id: AtomicU64::new(0),
            next_timer: AtomicU64::new(0),
            pending: AtomicU64::new(0),
            delivered: AtomicU64::new(0),
            seq: Mutex::new(HashMap::new()),
            last: Mutex::new(HashMap::new()),
            supervised: if p.supervised { p.actors } else { 0 },
            strategy: p.strategy,
            gave_up: AtomicBool::new(false),
            faulted: (0..a).map(|_| AtomicBool::new(false)).collect(),
            pilled: (0..a).map(|_| AtomicBool::new(false)).collect(),
            pills: Mutex::new(Vec::new()),
            busy: (0..a).map(|_| Arc::new(AtomicBool::new(false))).collect(),
            built: (0..a).map(|_| AtomicU64::new(0)).collect(),
            dropped: (0..a).map(|_| AtomicU64::new(0)).collect(),
            next_actor: AtomicUsize::new(0),
            addrs: RwLock::new(Vec::new()),
            asks_open: AtomicU64::new(0),
            failed_asks: Mutex::new(Vec::new()),
            lost_continuations: Mutex::new(Vec::new()),
            ending: AtomicBool::new(false),
            violations: Mutex::new(Vec::new()),
            dropped_sent: AtomicU64::new(0),
            dead_letters: AtomicU64::new(0),
        })
    }

    /// How the run ended (see the field).
    fn end(&self) -> End {
        *self.end.lock().unwrap()
    }

    fn violation(&self, what: String) {
        let mut v = self.violations.lock().unwrap();
        if v.len() < 20 {
            v.push(what);
        }
    }

    /// Whether actor `a` may have ended for good before the end: a fault on an unsupervised
    /// actor, or its supervisor gave up.
    fn may_have_ended(&self, a: usize) -> bool {
        if a < self.supervised {
            self.gave_up.load(Ordering::SeqCst)
        } else {
            self.faulted[a].load(Ordering::SeqCst) || self.pilled[a].load(Ordering::SeqCst)
        }
    }

    /// Whether supervised child `a` may have been restarted after a fault: its own, or, by the
    /// supervisor's strategy, a sibling's (one-for-all: any; rest-for-one: one before it).
    fn restarted_by_fault(&self, a: usize) -> bool {
        let mut siblings = match self.strategy {
            0 => a..a + 1,
            1 => 0..self.supervised,
            _ => 0..a + 1,
        };
        siblings.any(|j| self.faulted[j].load(Ordering::SeqCst))
    }

    /// A fault (a panic, `Context::stop`; for a supervised child, a pill too) hits actor `a`.
    fn fault(&self, a: usize) {
        self.faulted[a].store(true, Ordering::SeqCst);
    }

    /// A new message from `from` to actor `to` (a stable id); `None` past the model's bound
    /// (a violation: the model counts every message a program can make).
    fn create(self: &Arc<Self>, from: u64, to: usize) -> Option<Tag> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst) as usize;
        if id >= self.state.len() {
            self.violation("the program made more messages than its model allows".into());
            return None;
        }
        let seq = {
            let mut s = self.seq.lock().unwrap();
            let e = s.entry((from, to)).or_insert(0);
            *e += 1;
            *e
        };
        self.to[id].store(to, Ordering::SeqCst);
        self.from[id].store(from, Ordering::SeqCst);
        self.seq_of[id].store(seq, Ordering::SeqCst);
        self.pending.fetch_add(1, Ordering::SeqCst);
        Some(Tag {
            id,
            from,
            seq,
            ledger: Some(self.clone()),
        })
    }

    fn settle(&self, id: usize, to: u8) -> bool {
        match self.state[id].compare_exchange(CREATED, to, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => {
                self.pending.fetch_sub(1, Ordering::SeqCst);
                if to == DROPPED && !self.timer[id].load(Ordering::SeqCst) {
                    self.dropped_sent.fetch_add(1, Ordering::SeqCst);
                }
                true
            }
            Err(was) => {
                self.violation(format!(
                    "message {id}: {} after it was already {}",
                    name(to),
                    name(was)
                ));
                false
            }
        }
    }

    /// Actor `me` runs the message `tag`: exactly once, in order per sender.
    fn deliver(&self, mut tag: Tag, me: usize) {
        tag.ledger = None;
        let to = self.to[tag.id].load(Ordering::SeqCst);
        if to != me {
            self.violation(format!(
                "message {} for actor {to} delivered to actor {me}",
                tag.id
            ));
        }
        let mut last = self.last.lock().unwrap();
        let l = last.entry((tag.from, me)).or_insert(0);
        if tag.seq <= *l {
            self.violation(format!(
                "sender {:#x} -> actor {me}: message {} delivered after message {}",
                tag.from, tag.seq, *l
            ));
        }
        *l = tag.seq;
        drop(last);
        if self.settle(tag.id, DELIVERED) {
            self.delivered.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A send was accepted (`Ok`).
    fn accepted(&self, id: usize) {
        if !self.ending.load(Ordering::SeqCst) {
            self.before_end[id].store(true, Ordering::SeqCst);
        }
    }

    /// A refused send gave the message back.
    fn returned(&self, mut tag: Tag) {
        tag.ledger = None;
        // Read after the refusal: a refusal caused by the end sees `ending` set.
        self.refused_at_end[tag.id].store(self.ending.load(Ordering::SeqCst), Ordering::SeqCst);
        self.settle(tag.id, RETURNED);
    }

    fn addr(&self, to: usize) -> (usize, Addr<Node>) {
        let a = self.addrs.read().unwrap();
        let i = to % a.len();
        (i, a[i].clone())
    }

    /// Sends a message carrying `script` from `from` to actor `to` (an index).
    fn send(self: &Arc<Self>, from: u64, to: usize, script: Vec<Hop>) {
        let (to, addr) = self.addr(to);
        let Some(tag) = self.create(from, to) else {
            return;
        };
        let id = tag.id;
        match addr.send(Msg { tag, script }) {
            Ok(()) => self.accepted(id),
            Err(SendError(m)) => self.returned(m.tag),
        }
    }

    /// Once the system is gone: every message dropped or refused, every failed ask and every
    /// continuation dropped unrun must have an excuse.
    fn judge(&self) {
        let made = (self.next_id.load(Ordering::SeqCst) as usize).min(self.state.len());
        let pills = self.pills.lock().unwrap().clone();
        let end = self.end();
        for id in 0..made {
            let to = self.to[id].load(Ordering::SeqCst);
            let (from, seq) = (
                self.from[id].load(Ordering::SeqCst),
                self.seq_of[id].load(Ordering::SeqCst),
            );
            match self.state[id].load(Ordering::SeqCst) {
                DROPPED => {
                    // Queued before a pill from the same sender: delivered before the pill.
                    // (Only where it was the one pill: after another sender's, anything goes.)
                    let before_pill = pills.iter().filter(|p| p.1 == to).count() == 1
                        && pills
                            .iter()
                            .any(|&(f, t, s)| f == from && t == to && seq <= s);
                    let excused = end == End::Drop
                        || (self.may_have_ended(to)
                            && !(before_pill
                                && !self.faulted[to].load(Ordering::SeqCst)
                                && to >= self.supervised))
                        || (end == End::Shutdown
                            && (!self.before_end[id].load(Ordering::SeqCst)
                                || self.timer[id].load(Ordering::SeqCst)
                                // A supervised child between two incarnations when the
                                // shutdown began is not restarted: the mail that waited for
                                // the restart is dropped (documented on `Supervisor`).
                                // So is one a sibling's failure had it restart (one-for-
                                // all, rest-for-one).
                                || (to < self.supervised && self.restarted_by_fault(to))));
                    if !excused {
                        self.violation(format!(
                            "message {id} (sender {from:#x}, #{seq}) to actor {to} dropped \
                             undelivered with no fault or end to excuse it"
                        ));
                    }
                }
                RETURNED
                    if !self.may_have_ended(to)
                        && !self.refused_at_end[id].load(Ordering::SeqCst) =>
                {
                    self.violation(format!(
                        "a send to actor {to}, which had not ended, was refused"
                    ));
                }
                _ => {}
            }
        }
        for (q, what, blocking) in self.failed_asks.lock().unwrap().iter() {
            if self.state[*q].load(Ordering::SeqCst) == DELIVERED
                && !(*blocking && end == End::Drop)
            {
                self.violation(format!("question {q} was answered, yet its ask {what}"));
            }
        }
        for &(asker, q) in self.lost_continuations.lock().unwrap().iter() {
            // A refused question drops its continuation with it.
            let refused = self.state[q].load(Ordering::SeqCst) == RETURNED;
            if end == End::Quiesce && !refused && !self.may_have_ended(asker) {
                self.violation(format!(
                    "actor {asker}'s ask continuation was dropped unrun, yet it had not ended"
                ));
            }
        }
    }
}

fn name(s: u8) -> &'static str {
    ["created", "delivered", "dropped", "returned"][s as usize]
}

/// Travels in every message: dropped without delivery, it records a dead letter (judged at
/// the end: allowed only where a fault or the end reached the receiver).
struct Tag {
    id: usize,
    from: u64,
    seq: u64,
    ledger: Option<Arc<Ledger>>,
}

impl Drop for Tag {
    fn drop(&mut self) {
        if let Some(l) = self.ledger.take() {
            l.settle(self.id, DROPPED);
        }
    }
}

struct Msg {
    tag: Tag,
    script: Vec<Hop>,
}

/// An ask's question.
struct Question(Tag);

/// Held by a behaviour's ask continuation: resolved when it runs or is dropped (dropped
/// unrun, it records its asker: that actor must have ended).
struct AskToken {
    ledger: Arc<Ledger>,
    asker: usize,
    question: usize,
    ran: bool,
}

impl Drop for AskToken {
    fn drop(&mut self) {
        if !self.ran {
            self.ledger
                .lost_continuations
                .lock()
                .unwrap()
                .push((self.asker, self.question));
        }
        self.ledger.asks_open.fetch_sub(1, Ordering::SeqCst);
    }
}

// ---- the actor ---------------------------------------------------------------------------

struct Node {
    id: usize,
    ledger: Arc<Ledger>,
    busy: Arc<AtomicBool>,
    /// Injected faults in the hooks.
    panic_in_started: bool,
    panic_in_stopped: bool,
}

impl Node {
    /// A new state of actor `id` (counted: every state built must be dropped once).
    fn build(ledger: &Arc<Ledger>, id: usize) -> Self {
        ledger.built[id].fetch_add(1, Ordering::SeqCst);
        Node {
            id,
            ledger: ledger.clone(),
            busy: ledger.busy[id].clone(),
            panic_in_started: false,
            panic_in_stopped: false,
        }
    }

    fn enter(&self) {
        if self.busy.swap(true, Ordering::SeqCst) {
            self.ledger
                .violation(format!("actor {} ran two behaviours at once", self.id));
        }
    }

    fn leave(&self) {
        self.busy.store(false, Ordering::SeqCst);
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if self.busy.load(Ordering::SeqCst) {
            self.ledger.violation(format!(
                "actor {}'s state dropped during a behaviour",
                self.id
            ));
        }
        self.ledger.dropped[self.id].fetch_add(1, Ordering::SeqCst);
    }
}

impl Actor for Node {
    fn started(&mut self, _: &mut Context<'_, Self>) {
        if self.panic_in_started {
            std::panic::panic_any(Injected);
        }
    }

    fn stopped(&mut self) {
        if self.panic_in_stopped {
            std::panic::panic_any(Injected);
        }
    }
}

fn fib(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

/// Where a relayed chain goes next from actor `me` (an index into every actor so far).
fn relay_next(to: usize, me: usize, hops: u16) -> usize {
    to.wrapping_mul(5)
        .wrapping_add(me + usize::from(hops) * 3 + 1)
        % MAX_TO
}

/// The body of a scope of `n` tasks that each spawn one more (each counted in `count`), and
/// a fork handle joined: returns what the fork gave.
fn scope_body<'a>(s: &actorium::Scope<'a>, n: u8, count: &'a AtomicU64) -> u64 {
    for _ in 0..n {
        s.spawn(move |s| {
            s.spawn(move |_| {
                count.fetch_add(1, Ordering::Relaxed);
            });
            count.fetch_add(1, Ordering::Relaxed);
        });
    }
    s.fork(|| fib(12)).join()
}

/// Whether a scope of [`scope_body`] ended right.
fn scope_ok(fork: u64, count: &AtomicU64, n: u8) -> bool {
    fork == fib(12) && count.load(Ordering::Relaxed) == 2 * u64::from(n)
}

impl Receive<Msg> for Node {
    fn receive(&mut self, m: Msg, ctx: &mut Context<'_, Self>) -> Allocation {
        self.enter();
        let l = self.ledger.clone();
        let me = ACTOR_KEY + self.id as u64;
        let mut stop = false;
        for hop in m.script {
            match hop {
                Hop::Send { to, then } => l.send(me, to, then),
                Hop::Spawn { then, faulty } => {
                    // The id is the actor's index among all actors (allocated under the lock).
                    let id = {
                        let mut all = l.addrs.write().unwrap();
                        let id = l.next_actor.fetch_add(1, Ordering::SeqCst);
                        let mut child = Node::build(&l, id);
                        if faulty {
                            l.fault(id);
                            child.panic_in_started = true;
                        }
                        all.push(ctx.spawn(child));
                        id
                    };
                    l.send(me, id, then);
                }
                Hop::ArmStopped => self.panic_in_stopped = true,
                Hop::Ask { to } => {
                    let (to, addr) = l.addr(to);
                    let Some(tag) = l.create(me, to) else {
                        continue;
                    };
                    let q = tag.id;
                    l.asks_open.fetch_add(1, Ordering::SeqCst);
                    let mut token = AskToken {
                        ledger: l.clone(),
                        asker: self.id,
                        question: q,
                        ran: false,
                    };
                    let asked = ctx.ask(&addr, Question(tag), move |me: &mut Self, reply, _| {
                        token.ran = true;
                        me.enter();
                        match reply {
                            Ok(id) if id == to => {}
                            Ok(id) => me
                                .ledger
                                .violation(format!("asked actor {to}, actor {id} answered")),
                            Err(e) => me.ledger.failed_asks.lock().unwrap().push((
                                q,
                                format!("from actor {} failed: {e:?}", me.id),
                                false,
                            )),
                        }
                        me.leave();
                        drop(token);
                        Allocation::Nodelete
                    });
                    match asked {
                        Ok(()) => l.accepted(q),
                        Err(SendError(Question(tag))) => l.returned(tag),
                    }
                }
                Hop::Relay { to, hops } => {
                    let next = if hops > 1 {
                        vec![Hop::Relay {
                            to: relay_next(to, self.id, hops),
                            hops: hops - 1,
                        }]
                    } else {
                        Vec::new()
                    };
                    l.send(me, to, next);
                }
                Hop::Scope { n } => {
                    let count = AtomicU64::new(0);
                    let fork = ctx.scope(|s| scope_body(s, n, &count));
                    if !scope_ok(fork, &count, n) {
                        l.violation(format!("ctx.scope of {n} tasks gave a wrong result"));
                    }
                }
                Hop::AskWait { to } => {
                    let (to, addr) = l.addr(to);
                    if l.detached.contains(&to) {
                        // Detached actors that wait for each other would deadlock (user
                        // code's): block only on pooled actors; a plain message instead.
                        l.send(me, to, Vec::new());
                        continue;
                    }
                    let Some(tag) = l.create(me, to) else {
                        continue;
                    };
                    let q = tag.id;
                    match addr.ask(Question(tag)) {
                        Err(SendError(Question(tag))) => l.returned(tag),
                        Ok(pending) => {
                            l.accepted(q);
                            match pending.wait_timeout(Duration::from_secs(60)) {
                                Ok(id) if id == to => {}
                                Ok(id) => {
                                    l.violation(format!("asked actor {to}, actor {id} answered"))
                                }
                                // On a worker: refused (the question is still delivered).
                                Err(AskError::WouldBlock) => {}
                                Err(AskError::Timeout) => l.violation(format!(
                                    "a blocking ask to actor {to} did not resolve in 60 s"
                                )),
                                Err(e) => l.failed_asks.lock().unwrap().push((
                                    q,
                                    format!("blocking, from actor {} failed: {e:?}", self.id),
                                    true,
                                )),
                            }
                        }
                    }
                }
                Hop::Join { n } => {
                    let n = u64::from(n);
                    let (a, b) = ctx.join(|| fib(n + 1), || fib(n));
                    if a + b != fib(n + 2) {
                        l.violation(format!("ctx.join gave fib({}) = {}", n + 2, a + b));
                    }
                }
                Hop::Panic => {
                    l.fault(self.id);
                    l.deliver(m.tag, self.id);
                    self.leave();
                    std::panic::panic_any(Injected);
                }
                Hop::Stop => {
                    l.fault(self.id);
                    stop = true;
                }
            }
        }
        if stop {
            ctx.stop();
        }
        l.deliver(m.tag, self.id);
        self.leave();
        Allocation::Nodelete
    }
}

impl Receive<Ask<Question, usize>> for Node {
    fn receive(&mut self, q: Ask<Question, usize>, _: &mut Context<'_, Self>) -> Allocation {
        self.enter();
        self.ledger.deliver(q.msg.0, self.id);
        q.reply.send(self.id).ok();
        self.leave();
        Allocation::Nodelete
    }
}

/// The payload of injected panics (kept off standard error).
struct Injected;

// ---- running a program -------------------------------------------------------------------

type Choice = fn(ActorSystemBuilder) -> ActorSystemBuilder;

const EXECUTORS: &[(&str, Choice)] = &[
    ("message-centric, longest-victim stealing", |b| {
        b.queue_stealing(QueueStealing::LongestVictim)
    }),
    ("message-centric, random stealing", |b| {
        b.queue_stealing(QueueStealing::Random)
    }),
    ("message-centric, no stealing", |b| {
        b.queue_stealing(QueueStealing::None)
    }),
    // (The three above run with compaction on, the default.)
    ("message-centric, compaction off", |b| b.compaction(false)),
    (
        "message-centric, a worker deactivated or activated at random every window",
        |b| b.tune("compaction_chaos=1").expect("a known setting"),
    ),
    ("actor-centric, work stealing", |b| {
        b.policy(WorkStealing::default())
    }),
    ("actor-centric, work sharing", |b| b.policy(WorkSharing)),
    ("actor-centric, a custom policy whose hooks panic", |b| {
        b.policy(PanickyHooks::default())
    }),
];

/// Panics injected into policy hooks so far (the runs must include some).
static HOOK_PANICS: AtomicU64 = AtomicU64::new(0);

/// A custom policy (work sharing on the library's [`SharedQueue`]) whose hooks panic at
/// pseudo-random points, about one call in 16: user code in a policy that fails must cost no
/// message, no worker and no shutdown.
#[derive(Default)]
struct PanickyHooks {
    calls: AtomicU64,
}

impl PanickyHooks {
    fn maybe_panic(&self) {
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        // splitmix64: a fixed pseudo-random pattern over the calls.
        let mut z = n.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        if (z ^ (z >> 31)) % 16 == 0 {
            HOOK_PANICS.fetch_add(1, Ordering::Relaxed);
            std::panic::panic_any(Injected);
        }
    }
}

impl Policy for PanickyHooks {
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
    fn dequeue(&self, me: &mut WorkerCtx<'_, Self>) -> Option<Job> {
        Some(me.scheduler().coordinator().pop_blocking())
    }
    fn before_resume(&self, _: &mut WorkerCtx<'_, Self>, _: &Job) {
        self.maybe_panic();
    }
    fn after_resume(&self, _: &mut WorkerCtx<'_, Self>, _: &Job, _: Resumable) {
        self.maybe_panic();
    }
    fn after_completion(&self, _: &mut WorkerCtx<'_, Self>, _: &Job) {
        self.maybe_panic();
    }
    fn helps_with_tasks(&self) -> bool {
        false
    }
}

/// What one run did.
#[derive(Default, Debug, Clone, Copy)]
struct Ran {
    messages: u64,
}

fn quiet_injected_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<Injected>().is_none() {
                default(info);
            }
        }));
    });
}

/// Runs `p` once on `choice` (`centric`: an actor-centric executor) with `workers` workers;
/// `Err` lists what broke.
fn run(p: &Program, choice: Choice, workers: usize, centric: bool) -> Result<Ran, String> {
    let ledger = Ledger::new(p);
    // Room for two more workers: further adds are refused, as removing the last is.
    let mut builder = choice(
        ActorSystem::builder()
            .workers(workers)
            .max_workers(workers + 2),
    );
    if let Some(n) = p.throughput.filter(|_| centric) {
        builder = builder.max_throughput(n);
    }
    let system = builder
        // Quiet (the injected panics and dead letters are expected), but a supervisor that
        // gives up ends its children: from then on their mail may be dropped.
        .on_event({
            let l = Arc::downgrade(&ledger);
            move |e: &Event<'_>| match (e, l.upgrade()) {
                (Event::SupervisorGaveUp { .. }, Some(l)) => {
                    l.gave_up.store(true, Ordering::SeqCst)
                }
                (Event::DeadLetters { count, .. }, Some(l)) => {
                    l.dead_letters.fetch_add(*count, Ordering::SeqCst);
                }
                _ => {}
            }
        })
        .build()
        .map_err(|e| format!("build: {e}"))?;
    let handle = system.handle();
    let sup = p.supervised.then(|| {
        system.spawn(
            Supervisor::new(match p.strategy {
                0 => SupervisorStrategy::OneForOne,
                1 => SupervisorStrategy::OneForAll,
                _ => SupervisorStrategy::RestForOne,
            })
            .intensity(p.intensity, Duration::from_secs(1)),
        )
    });
    for _ in 0..p.actors {
        let id = ledger.next_actor.fetch_add(1, Ordering::SeqCst);
        let addr = match &sup {
            Some(sup) => {
                let l = ledger.clone();
                sup.supervise(Restart::Permanent, move || Node::build(&l, id))
                    .map_err(|e| format!("supervise: {e}"))?
            }
            None => system.spawn(Node::build(&ledger, id)),
        };
        ledger.addrs.write().unwrap().push(addr);
    }
    for _ in 0..p.detached {
        let id = ledger.next_actor.fetch_add(1, Ordering::SeqCst);
        let addr = system.spawn_detached(Node::build(&ledger, id));
        ledger.addrs.write().unwrap().push(addr);
    }

    // Outside threads; thread 0 tells the main thread when it has made `end_after` steps.
    let (at_end, end_now) = mpsc::channel::<()>();
    let threads: Vec<_> = p
        .threads
        .iter()
        .enumerate()
        .map(|(t, steps)| {
            let (l, h, steps) = (ledger.clone(), handle.clone(), steps.clone());
            let at_end = (t == 0).then(|| at_end.clone());
            let end_after = p.end_after;
            std::thread::spawn(move || outside(t as u64, &l, &h, steps, at_end, end_after))
        })
        .collect();
    drop(at_end);

    let mut broke = Vec::new();
    // Shutdown and drop come while outside threads still send and ask (thread 0 has made
    // `end_after` steps), under a watchdog: neither may hang.
    let system = match p.end {
        End::Quiesce => Some(system),
        End::Shutdown | End::Drop | End::ShutdownTimeout => {
            let (l, end, after) = (ledger.clone(), p.end, p.end_after as u64);
            common::watchdog(120, move || {
                let _ = end_now.recv();
                l.ending.store(true, Ordering::SeqCst);
                match end {
                    End::Shutdown => {
                        system.shutdown();
                    }
                    End::ShutdownTimeout => {
                        // 1 to 91 ms: often out before the actors end, sometimes not.
                        let r = system.shutdown_timeout(Duration::from_millis(1 + after * 10));
                        *l.end.lock().unwrap() = if r.is_ok() { End::Shutdown } else { End::Drop };
                    }
                    _ => drop(system),
                }
            });
            None
        }
    };
    for t in threads {
        if let Err(e) = t.join() {
            std::panic::resume_unwind(e);
        }
    }
    if let Some(system) = system {
        let (l, sup) = (ledger.clone(), sup.clone());
        let r = common::watchdog(120, move || -> Result<(), String> {
            let deadline = Instant::now() + Duration::from_secs(60);
            while l.pending.load(Ordering::SeqCst) > 0 || l.asks_open.load(Ordering::SeqCst) > 0 {
                if Instant::now() > deadline {
                    return Err(format!(
                        "not quiescent after 60 s: {} messages neither delivered nor dropped, \
                         {} asks unresolved",
                        l.pending.load(Ordering::SeqCst),
                        l.asks_open.load(Ordering::SeqCst)
                    ));
                }
                std::thread::sleep(Duration::from_micros(200));
            }
            // Poison everyone (the supervisor ends its children), then stop() returns.
            l.ending.store(true, Ordering::SeqCst);
            if let Some(sup) = &sup {
                let _ = sup.send(DeleteMsg);
            }
            for a in l.addrs.read().unwrap().iter() {
                let _ = a.send(DeleteMsg);
            }
            drop(sup);
            system.stop();
            Ok(())
        });
        if let Err(e) = r {
            broke.push(e);
        }
    }
    drop(sup);
    drop(handle);
    // Everything is gone: break the ledger's cycle through the addresses.
    let addrs = std::mem::take(&mut *ledger.addrs.write().unwrap());
    drop(addrs);

    let l = &ledger;
    l.judge();
    broke.extend(l.violations.lock().unwrap().drain(..));
    let pending = l.pending.load(Ordering::SeqCst);
    if pending > 0 {
        let lost: Vec<String> = (0..l.next_id.load(Ordering::SeqCst) as usize)
            .filter(|&i| l.state[i].load(Ordering::SeqCst) == CREATED)
            .map(|i| {
                format!(
                    "{i} (from {:#x} to actor {})",
                    l.from[i].load(Ordering::SeqCst),
                    l.to[i].load(Ordering::SeqCst)
                )
            })
            .collect();
        broke.push(format!(
            "{pending} messages neither delivered, dropped nor returned after the system is \
             gone: {}",
            lost.join(", ")
        ));
    }
    // Nothing accepted is lost silently: what a fault or a graceful end dropped undelivered
    // was reported as dead letters. (Dropping the system drops its queued mail unreported:
    // "stop now", documented on `ActorSystem`.)
    let (dropped, reported) = (
        l.dropped_sent.load(Ordering::SeqCst),
        l.dead_letters.load(Ordering::SeqCst),
    );
    if l.end() != End::Drop && dropped > reported {
        broke.push(format!(
            "{dropped} messages dropped undelivered, only {reported} dead letters reported"
        ));
    }
    let open = l.asks_open.load(Ordering::SeqCst);
    if open > 0 {
        broke.push(format!("{open} asks from behaviours never resolved"));
    }
    let made = l.next_id.load(Ordering::SeqCst);
    let delivered = l.delivered.load(Ordering::SeqCst);
    if p.end == End::Quiesce && !p.has_faults() && made != p.messages() {
        broke.push(format!(
            "the model says {} messages, the run made {made}",
            p.messages()
        ));
    }
    if p.end == End::Quiesce && !p.has_faults() && delivered != made {
        broke.push(format!(
            "without faults every message is delivered: {delivered} of {made}"
        ));
    }
    for id in 0..l.next_actor.load(Ordering::SeqCst) {
        let (b, d) = (
            l.built[id].load(Ordering::SeqCst),
            l.dropped[id].load(Ordering::SeqCst),
        );
        if b != d {
            broke.push(format!(
                "actor {id}: {b} states built, {d} dropped once the system is gone"
            ));
        }
    }
    if broke.is_empty() {
        Ok(Ran {
            messages: delivered,
        })
    } else {
        Err(broke.join("\n"))
    }
}

/// Outside thread `t`: its steps in order.
fn outside(
    t: u64,
    l: &Arc<Ledger>,
    h: &SystemHandle,
    steps: Vec<Step>,
    at_end: Option<mpsc::Sender<()>>,
    end_after: usize,
) {
    let mut at_end = at_end;
    for (i, s) in steps.into_iter().enumerate() {
        if i == end_after {
            if let Some(tx) = at_end.take() {
                let _ = tx.send(());
            }
        }
        match s {
            Step::Send { to, script } => l.send(t, to, script),
            Step::Burst { to, n } => {
                for _ in 0..n {
                    l.send(t, to, Vec::new());
                }
            }
            Step::Ask { to } => {
                let (to, addr) = l.addr(to);
                let Some(tag) = l.create(t, to) else {
                    continue;
                };
                let q = tag.id;
                match addr.ask(Question(tag)) {
                    Err(SendError(Question(tag))) => l.returned(tag),
                    Ok(pending) => {
                        l.accepted(q);
                        match pending.wait_timeout(Duration::from_secs(60)) {
                            Ok(id) if id == to => {}
                            Ok(id) => l.violation(format!("asked actor {to}, actor {id} answered")),
                            Err(AskError::Timeout) => {
                                l.violation(format!("an ask to actor {to} did not resolve in 60 s"))
                            }
                            Err(e) => l.failed_asks.lock().unwrap().push((
                                q,
                                format!("from thread {t} failed: {e:?}"),
                                false,
                            )),
                        }
                    }
                }
            }
            Step::Pill { to, kind } => {
                let (to, addr) = l.addr(to);
                if to < l.supervised {
                    // A supervised child ends its incarnation and is restarted in place.
                    l.fault(to);
                } else {
                    // Mail this thread queued before the pill must still be delivered.
                    let last = l.seq.lock().unwrap().get(&(t, to)).copied().unwrap_or(0);
                    l.pills.lock().unwrap().push((t, to, last));
                    l.pilled[to].store(true, Ordering::SeqCst);
                }
                let _ = match kind {
                    Pill::Delete => addr.send(DeleteMsg).is_ok(),
                    Pill::Destroy => addr.send(DestroyMsg).is_ok(),
                    Pill::Finished => addr.send(FinishedMsg).is_ok(),
                };
            }
            Step::Timer { to, micros, script } => {
                let (to, addr) = l.addr(to);
                let key = TIMER_KEY + l.next_timer.fetch_add(1, Ordering::SeqCst);
                let Some(tag) = l.create(key, to) else {
                    continue;
                };
                let id = tag.id;
                l.timer[id].store(true, Ordering::SeqCst);
                let m = Msg { tag, script };
                match h.send_after(&addr, m, Duration::from_micros(u64::from(micros))) {
                    Ok(_) => l.accepted(id),
                    Err(SendError(m)) => l.returned(m.tag),
                }
            }
            Step::Chatter { chains, hops } => {
                for c in 0..chains {
                    let to = usize::from(c) * 3 + t as usize;
                    let next = if hops > 1 {
                        vec![Hop::Relay {
                            to: relay_next(to, c.into(), hops),
                            hops: hops - 1,
                        }]
                    } else {
                        Vec::new()
                    };
                    l.send(t, to, next);
                }
            }
            Step::ForkJoin { scope } => {
                let ok = if scope {
                    let count = AtomicU64::new(0);
                    let fork = h.scope(|s| scope_body(s, 3, &count));
                    scope_ok(fork, &count, 3)
                } else {
                    h.join(|| fib(14), || fib(13)) == (fib(14), fib(13))
                };
                if !ok {
                    l.violation("fork/join from outside gave a wrong result".into());
                }
            }
            Step::Resize { add } => {
                // Refusals (too many, the last worker, a stopping system) are fine here.
                let _ = if add {
                    h.add_workers(1)
                } else {
                    h.remove_workers(1)
                };
            }
        }
    }
    drop(at_end);
}

/// A panic's message.
fn panic_text(e: &(dyn std::any::Any + Send)) -> String {
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic".into())
}

/// Runs `p` on every executor with 1 to 4 workers.
fn run_everywhere(p: &Program) -> Result<u64, String> {
    quiet_injected_panics();
    let mut messages = 0;
    for &(name, choice) in EXECUTORS {
        for workers in 1..=4 {
            // A hang (the watchdog) or a panic in the harness is a failure of this run too.
            let centric = name.starts_with("actor-centric");
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run(p, choice, workers, centric)
            }))
            .unwrap_or_else(|e| Err(panic_text(&*e)))
            .map_err(|e| format!("{name}, {workers} workers:\n{e}"))?;
            messages += ran.messages;
        }
    }
    Ok(messages)
}

fn programs_per_run() -> u32 {
    std::env::var("ACTORIUM_PROGRAMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

/// Programs and messages checked so far by this process (printed with `--nocapture`).
static CHECKED: (AtomicU64, AtomicU64) = (AtomicU64::new(0), AtomicU64::new(0));

proptest! {
    #![proptest_config(Config {
        cases: programs_per_run(),
        max_shrink_iters: 200,
        ..Config::default()
    })]

    #[test]
    fn random_programs_keep_every_guarantee(p in program()) {
        let r = run_everywhere(&p);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
        let delivered = r.unwrap();
        let programs = CHECKED.0.fetch_add(1, Ordering::Relaxed) + 1;
        let messages = CHECKED.1.fetch_add(delivered, Ordering::Relaxed) + delivered;
        let hooks = HOOK_PANICS.load(Ordering::Relaxed);
        eprintln!(
            "checked {programs} programs (x 24 runs), {messages} messages delivered, \
             {hooks} policy hook panics injected"
        );
        // The panicking policy first panics at its 7th hook call (then about one call in 16,
        // a fixed pattern), so a small program (a few jobs before an early drop) may inject
        // none: checked once a run has had 16 programs (or all of them, if fewer), never per
        // program (a CI run failed so when its first program was small).
        prop_assert!(
            hooks > 0 || programs < u64::from(programs_per_run().min(16)),
            "{programs} programs in this run and no panic injected by the panicking policy \
             in any of them"
        );
    }
}

/// The program of `seed` (what soak mode runs and prints).
fn program_of(seed: u64) -> Program {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    );
    program().new_tree(&mut runner).unwrap().current()
}

/// Soak mode: random programs for `ACTORIUM_SOAK_SECS` seconds (default 60), printing
/// programs and messages per second; the first failure prints its seed and program.
#[test]
#[ignore = "soak mode: minutes to hours, run by hand"]
fn soak() {
    let secs: u64 = std::env::var("ACTORIUM_SOAK_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let start = Instant::now();
    let mut seed: u64 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let (mut programs, mut messages, mut last) = (0u64, 0u64, Instant::now());
    while start.elapsed() < Duration::from_secs(secs) {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        let p = program_of(seed);
        match run_everywhere(&p) {
            Ok(m) => messages += m,
            Err(e) => panic!("seed {seed} (replay: ACTORIUM_REPLAY={seed}) failed:\n{e}\n{p:#?}"),
        }
        programs += 1;
        if last.elapsed() > Duration::from_secs(10) {
            let t = start.elapsed().as_secs_f64();
            println!(
                "{t:.0} s: {programs} programs ({:.1}/s), {messages} messages ({:.0}/s)",
                programs as f64 / t,
                messages as f64 / t
            );
            last = Instant::now();
        }
    }
    println!("soak: {programs} programs, {messages} messages delivered, no failure");
}

/// Replays the program of `ACTORIUM_REPLAY=<seed>` (a seed soak mode printed),
/// `ACTORIUM_REPLAY_TIMES` times (default 1: a race may need several).
#[test]
#[ignore = "replays a seed given by ACTORIUM_REPLAY"]
fn replay() {
    let seed: u64 = std::env::var("ACTORIUM_REPLAY")
        .expect("set ACTORIUM_REPLAY to a seed printed by soak mode")
        .parse()
        .expect("ACTORIUM_REPLAY must be a number");
    let times: u64 = std::env::var("ACTORIUM_REPLAY_TIMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let p = program_of(seed);
    println!("{p:#?}");
    for i in 0..times {
        if times > 1 {
            eprintln!("replay {i}");
        }
        run_everywhere(&p).unwrap_or_else(|e| panic!("replay {i}: {e}"));
    }
}
