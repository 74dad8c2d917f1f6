//! The workloads of `BENCHMARKS.md` on actorium.

use crate::suite::Params;
use actorium::policy::{WorkSharing, WorkStealing};
use actorium::{
    Actor, ActorSystem, ActorSystemBuilder, Addr, Allocation, Context, QueueStealing, Receive,
};
use actorium_peers::common::{
    bb_item, busy, cig_round, complement, matrices, ring_checksum, row_sum, tiny, BbBook, BbSend,
    Round, XorShift,
};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Instant;

/// Completion: actors report values; main waits until `expected` reports arrived.
struct Done {
    sum: AtomicU64,
    remaining: AtomicU64,
    flag: Mutex<bool>,
    cv: Condvar,
}

impl Done {
    fn new(reports: u64) -> Arc<Self> {
        Arc::new(Self {
            sum: AtomicU64::new(0),
            remaining: AtomicU64::new(reports),
            flag: Mutex::new(false),
            cv: Condvar::new(),
        })
    }

    fn report(&self, v: u64) {
        self.sum.fetch_add(v, Ordering::Relaxed);
        if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            *self.flag.lock().unwrap() = true;
            self.cv.notify_all();
        }
    }

    fn wait(&self) -> u64 {
        let mut g = self.flag.lock().unwrap();
        while !*g {
            g = self.cv.wait(g).unwrap();
        }
        self.sum.load(Ordering::Acquire)
    }
}

/// Runs `bench` on an actorium system with `threads` workers; returns (seconds, checksum).
/// actorium's fork/join: [`actorium::join`] on the worker the workload runs on.
struct Fj;

impl actorium_peers::forkjoin::Ctx for Fj {
    #[inline]
    fn join<RA: Send, RB: Send>(
        &mut self,
        a: impl FnOnce(&mut Self) -> RA + Send,
        b: impl FnOnce(&mut Self) -> RB + Send,
    ) -> (RA, RB) {
        actorium::join(|| a(&mut Fj), || b(&mut Fj))
    }
}

/// actorium's systems: the default (the message-centric executor with longest-victim queue
/// stealing), its other stealing settings, and the actor-centric executor with CAF's policies.
pub const SYSTEMS: &[&str] = &[
    "actorium",
    "actorium-random-victim",
    "actorium-no-stealing",
    "actorium-policy-stealing",
    "actorium-policy-sharing",
];

/// Whether `system` runs the message-centric executor (it has message queues).
pub fn message_centric(system: &str) -> bool {
    !system.starts_with("actorium-policy")
}

/// A builder for actorium system `system` (one of [`SYSTEMS`]) with `threads` workers.
pub fn builder_for(system: &str, threads: usize) -> Result<ActorSystemBuilder, String> {
    let b = ActorSystem::builder().workers(threads);
    Ok(match system {
        "actorium" => b,
        "actorium-random-victim" => b.queue_stealing(QueueStealing::Random),
        "actorium-no-stealing" => b.queue_stealing(QueueStealing::None),
        "actorium-policy-stealing" => b.policy(WorkStealing::default()),
        "actorium-policy-sharing" => b.policy(WorkSharing),
        other => {
            return Err(format!(
                "unknown actorium system `{other}`; known: {SYSTEMS:?}"
            ))
        }
    })
}

/// Runs `bench` once on actorium system `system`, with `queues_per_worker` message queues
/// per worker if given, and the hidden `tune` settings (`name=value`) if any (both for the
/// message-centric executor only).
pub fn run(
    system: &str,
    bench: &str,
    threads: usize,
    p: &Params,
    queues_per_worker: Option<usize>,
    tune: &[String],
) -> Result<(f64, u64), String> {
    let stats = std::env::var_os("ACTORIUM_BENCH_STATS").is_some();
    let mut builder = builder_for(system, threads)?.stats(stats);
    if (queues_per_worker.is_some() || !tune.is_empty()) && !message_centric(system) {
        return Err(format!(
            "--queues-per-worker and --tune apply to the message-centric systems, not to \
             `{system}`"
        ));
    }
    if let Some(k) = queues_per_worker {
        builder = builder.queues_per_worker(k);
    }
    for t in tune {
        // `compaction=0|1` is the public `ActorSystemBuilder::compaction`; the rest are hidden
        // placement settings.
        builder = match t.replace(' ', "").as_str() {
            "compaction=0" => builder.compaction(false),
            "compaction=1" => builder.compaction(true),
            _ => builder.tune(t)?,
        };
    }
    if !message_centric(system) && bench.starts_with("balance") {
        return Err(
            "n/a: placement on chosen workers needs the message-centric executor's \
                    queue tickets"
                .into(),
        );
    }
    if actorium_peers::forkjoin::BENCHES.contains(&bench) {
        // The input is built before the system starts, outside the clock.
        let work = actorium_peers::forkjoin::Work::parse(bench, &p.0)?;
        let system = builder.build().map_err(|e| e.to_string())?;
        // The whole computation on a worker (submitted to the pool's common queue); the
        // workload times itself there.
        let r = system.scope(|_| work.run(&mut Fj));
        if let Some(s) = system.stop() {
            eprintln!("{s}");
        }
        return Ok(r);
    }
    if bench.starts_with("pipeline-") {
        // Refuses what would never finish (no items, no lanes, no stages).
        actorium_peers::common::Bench::parse("actorium", bench, &p.0)?;
    }
    let system = builder.build().map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    let checksum = match bench {
        "static-send" => static_send(&system, p.get("n")),
        "dynamic-send" => dynamic_send(&system, p.get("n")),
        "executor" => executor(&system, p, None),
        "balance-one" => executor(&system, p, Some(Balance::One)),
        "balance-multi" => executor(&system, p, Some(Balance::Multi)),
        "repeat" => repeat(&system, p.get("servers"), p.get("reps")),
        "matrix" => return matrix(system, p.get("n") as usize),
        "ping-pong" => ping_pong(&system, p.get("n")),
        "counting" => counting(&system, p.get("n")),
        "fork-join-throughput" => fj_throughput(&system, p.get("actors"), p.get("msgs")),
        "fork-join-creation" => fj_creation(&system, p.get("n")),
        "scale" => scale(&system, p.get("n")),
        "thread-ring" => thread_ring(&system, p.get("actors"), p.get("passes")),
        "chameneos" => chameneos(&system, p.get("creatures"), p.get("meetings")),
        "big" => big(&system, p.get("actors"), p.get("pings")),
        "logistic-map" => logistic_map(&system, p.get("series"), p.get("terms")),
        "banking" => banking(&system, p.get("accounts"), p.get("transactions")),
        "dictionary" => dictionary(&system, p.get("workers"), p.get("msgs"), p.get("write")),
        "bounded-buffer" => bounded_buffer(&system, p),
        "sleeping-barber" => sleeping_barber(&system, p),
        "cigarette-smokers" => cigarette_smokers(&system, p),
        "pipeline-lanes" => pipeline_lanes(&system, p.get("items"), p.get("lanes"), p.get("cost")),
        "pipeline-chain" => pipeline_chain(&system, p.get("items"), p.get("stages"), p.get("cost")),
        other => return Err(format!("unknown benchmark `{other}`")),
    };
    let secs = t0.elapsed().as_secs_f64();
    if let Some(s) = system.stop() {
        eprintln!("{s}");
    }
    Ok((secs, checksum))
}

// ---- static-send ---------------------------------------------------------------------------
struct SelfSender {
    me: Option<Addr<SelfSender>>,
    n: u64,
    count: u64,
    done: Arc<Done>,
}
struct Tick;
impl Actor for SelfSender {
    fn started(&mut self, ctx: &mut Context<'_, Self>) {
        self.me = Some(ctx.address());
    }
}
impl Receive<Tick> for SelfSender {
    fn receive(&mut self, t: Tick, _: &mut Context<'_, Self>) -> Allocation {
        self.count += 1;
        if self.count < self.n {
            self.me.as_ref().unwrap().send(t).unwrap();
            return Allocation::Nodelete;
        }
        self.me = None;
        self.done.report(self.count);
        Allocation::Delete
    }
}

fn static_send(s: &ActorSystem, n: u64) -> u64 {
    let done = Done::new(1);
    let a = s.spawn(SelfSender {
        me: None,
        n,
        count: 0,
        done: done.clone(),
    });
    a.send(Tick).unwrap();
    done.wait()
}

// ---- dynamic-send --------------------------------------------------------------------------
struct Hop(Arc<Done>);
struct Go(u64, u64);
impl Actor for Hop {}
impl Receive<Go> for Hop {
    fn receive(&mut self, Go(k, n): Go, ctx: &mut Context<'_, Self>) -> Allocation {
        if k < n {
            ctx.spawn(Hop(self.0.clone())).send(Go(k + 1, n)).unwrap();
        } else {
            self.0.report(k);
        }
        Allocation::Delete
    }
}

fn dynamic_send(s: &ActorSystem, n: u64) -> u64 {
    let done = Done::new(1);
    s.spawn(Hop(done.clone())).send(Go(1, n)).unwrap();
    done.wait()
}

// ---- executor, balance-one, balance-multi ---------------------------------------------------
#[derive(Clone, Copy)]
pub(crate) enum Balance {
    One,
    Multi,
}

type Group = Arc<OnceLock<Vec<Addr<Member>>>>;

struct Member {
    group: Group,
    local: u64,
    size: u64,
    total: u64, // R = rounds * group
    sent: u64,
    recv: u64,
    done: Arc<Done>,
}
struct Msg;
impl Actor for Member {}
impl Receive<Msg> for Member {
    fn receive(&mut self, _: Msg, _: &mut Context<'_, Self>) -> Allocation {
        self.recv += 1;
        if self.sent < self.total {
            let to = (self.local + self.sent) % self.size;
            self.group.get().unwrap()[to as usize].send(Msg).unwrap();
            self.sent += 1;
        }
        if self.recv == self.total + 1 {
            self.done.report(self.recv);
            return Allocation::Delete;
        }
        Allocation::Nodelete
    }
}

/// Receives one message and terminates (the balance benchmarks' filler).
struct Dummy;
impl Actor for Dummy {}
impl Receive<Msg> for Dummy {
    fn receive(&mut self, _: Msg, _: &mut Context<'_, Self>) -> Allocation {
        Allocation::Delete
    }
}

pub(crate) fn executor(s: &ActorSystem, p: &Params, balance: Option<Balance>) -> u64 {
    let (actors, size, rounds) = (p.get("actors"), p.get("group"), p.get("rounds"));
    let done = Done::new(actors);
    // Which workers carry the load; the others get dummies (placement by queue ticket).
    let loaded = |w: usize| match balance {
        None => true,
        Some(Balance::One) => w == 0,
        Some(Balance::Multi) => w % 2 == 0,
    };
    let mut all = Vec::with_capacity(actors as usize);
    let mut groups: Vec<Group> = Vec::new();
    let mut dummies = Vec::new();
    // Nothing else spawns on this fresh system: the k-th spawn lands on queue
    // `queue_of_spawn(k)` (the actor-centric executor has no queues: no balance variants).
    // (Placement's hidden view, for this workload only: see `SystemHandle::queue_of_spawn`.)
    let h = s.handle();
    let queues = !h.is_actor_centric();
    let mut ticket = 0usize;
    while (all.len() as u64) < actors {
        let q = if queues { h.queue_of_spawn(ticket) } else { 0 };
        ticket += 1;
        if balance.is_some() && !loaded(h.worker_of_queue(q)) {
            let d = s.spawn(Dummy);
            debug_assert!(!queues || d.queue() == q);
            dummies.push(d);
            continue;
        }
        let i = all.len() as u64;
        if i % size == 0 {
            groups.push(Arc::new(OnceLock::new()));
        }
        let a = s.spawn(Member {
            group: groups.last().unwrap().clone(),
            local: i % size,
            size,
            total: rounds * size,
            sent: 0,
            recv: 0,
            done: done.clone(),
        });
        debug_assert!(!queues || a.queue() == q);
        all.push(a);
    }
    for (g, lock) in groups.iter().enumerate() {
        let members = all[g * size as usize..(g + 1) * size as usize].to_vec();
        assert!(lock.set(members).is_ok());
    }
    for d in &dummies {
        d.send(Msg).unwrap();
    }
    for a in &all {
        a.send(Msg).unwrap();
    }
    drop(all);
    drop(groups);
    done.wait()
}

// ---- repeat ---------------------------------------------------------------------------------
struct Client {
    servers: Vec<Addr<Server>>,
    reps_left: u64,
    pending: u64,
    sum: u64,
    done: Arc<Done>,
}
struct Server {
    index: u64,
    client: Addr<Client>,
}
struct Servers(Vec<Addr<Server>>);
struct Start;
struct Req;
struct Rep(u64);
impl Actor for Client {}
impl Actor for Server {}
impl Client {
    fn scatter(&mut self) {
        self.pending = self.servers.len() as u64;
        for s in &self.servers {
            s.send(Req).unwrap();
        }
    }
}
impl Receive<Servers> for Client {
    fn receive(&mut self, s: Servers, _: &mut Context<'_, Self>) -> Allocation {
        self.servers = s.0;
        Allocation::Nodelete
    }
}
impl Receive<Start> for Client {
    fn receive(&mut self, _: Start, _: &mut Context<'_, Self>) -> Allocation {
        self.scatter();
        Allocation::Nodelete
    }
}
impl Receive<Rep> for Client {
    fn receive(&mut self, r: Rep, _: &mut Context<'_, Self>) -> Allocation {
        self.sum += r.0 + 1;
        self.pending -= 1;
        if self.pending == 0 {
            self.reps_left -= 1;
            if self.reps_left == 0 {
                for s in self.servers.drain(..) {
                    s.send(actorium::DeleteMsg).unwrap();
                }
                self.done.report(self.sum);
                return Allocation::Delete;
            }
            self.scatter();
        }
        Allocation::Nodelete
    }
}
impl Receive<Req> for Server {
    fn receive(&mut self, _: Req, _: &mut Context<'_, Self>) -> Allocation {
        self.client.send(Rep(self.index)).unwrap();
        Allocation::Nodelete
    }
}

fn repeat(s: &ActorSystem, servers: u64, reps: u64) -> u64 {
    let done = Done::new(1);
    let client = s.spawn(Client {
        servers: Vec::new(),
        reps_left: reps,
        pending: 0,
        sum: 0,
        done: done.clone(),
    });
    let list = (0..servers)
        .map(|index| {
            s.spawn(Server {
                index,
                client: client.clone(),
            })
        })
        .collect();
    client.send(Servers(list)).unwrap();
    client.send(Start).unwrap();
    done.wait()
}

// ---- matrix ---------------------------------------------------------------------------------
struct RowWorker {
    x: Arc<Vec<u64>>,
    y: Arc<Vec<u64>>,
    n: usize,
    done: Arc<Done>,
}
struct Row(usize);
impl Actor for RowWorker {}
impl Receive<Row> for RowWorker {
    fn receive(&mut self, Row(i): Row, _: &mut Context<'_, Self>) -> Allocation {
        self.done.report(row_sum(&self.x, &self.y, self.n, i));
        Allocation::Delete
    }
}

/// Matrix builds its data before the clock, so it times itself.
fn matrix(system: ActorSystem, n: usize) -> Result<(f64, u64), String> {
    let (x, y) = matrices(n);
    let t0 = Instant::now();
    let done = Done::new(n as u64);
    for i in 0..n {
        let w = RowWorker {
            x: x.clone(),
            y: y.clone(),
            n,
            done: done.clone(),
        };
        system.spawn(w).send(Row(i)).unwrap();
    }
    let sum = done.wait();
    let secs = t0.elapsed().as_secs_f64();
    if let Some(s) = system.stop() {
        eprintln!("{s}");
    }
    Ok((secs, sum))
}

// The workloads of the Savina suite (the set-up above is shared; macros are defined first).
mod pipelines;
mod savina_concurrency;
mod savina_micro;
mod savina_puzzles;
use pipelines::*;
use savina_concurrency::*;
use savina_micro::*;
use savina_puzzles::*;
