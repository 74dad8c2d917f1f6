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
        builder = builder.tune(t)?;
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

// ---- ping-pong ------------------------------------------------------------------------------
struct Ping {
    pong: Option<Addr<Pong>>,
    n: u64,
    count: u64,
    done: Arc<Done>,
}
struct Pong {
    ping: Option<Addr<Ping>>,
}
struct Ball;
struct Meet(Addr<Pong>);
struct MeetBack(Addr<Ping>);
impl Actor for Ping {}
impl Actor for Pong {}
impl Receive<Meet> for Ping {
    fn receive(&mut self, Meet(p): Meet, ctx: &mut Context<'_, Self>) -> Allocation {
        p.send(MeetBack(ctx.address())).unwrap();
        p.send(Ball).unwrap();
        self.pong = Some(p);
        Allocation::Nodelete
    }
}
impl Receive<Ball> for Ping {
    fn receive(&mut self, b: Ball, _: &mut Context<'_, Self>) -> Allocation {
        self.count += 1;
        let pong = self.pong.as_ref().unwrap();
        if self.count == self.n {
            pong.send(actorium::DeleteMsg).unwrap();
            self.pong = None;
            self.done.report(self.count);
            return Allocation::Delete;
        }
        pong.send(b).unwrap();
        Allocation::Nodelete
    }
}
impl Receive<MeetBack> for Pong {
    fn receive(&mut self, MeetBack(p): MeetBack, _: &mut Context<'_, Self>) -> Allocation {
        self.ping = Some(p);
        Allocation::Nodelete
    }
}
impl Receive<Ball> for Pong {
    fn receive(&mut self, b: Ball, _: &mut Context<'_, Self>) -> Allocation {
        self.ping.as_ref().unwrap().send(b).unwrap();
        Allocation::Nodelete
    }
}

fn ping_pong(s: &ActorSystem, n: u64) -> u64 {
    let done = Done::new(1);
    let ping = s.spawn(Ping {
        pong: None,
        n,
        count: 0,
        done: done.clone(),
    });
    let pong = s.spawn(Pong { ping: None });
    ping.send(Meet(pong)).unwrap();
    done.wait()
}

// ---- counting -------------------------------------------------------------------------------
struct Counter(u64);
struct Producer {
    counter: Addr<Counter>,
    n: u64,
    done: Arc<Done>,
}
struct Increment;
struct Get(Addr<Producer>);
struct Total(u64);
impl Actor for Counter {}
impl Actor for Producer {}
impl Receive<Increment> for Counter {
    fn receive(&mut self, _: Increment, _: &mut Context<'_, Self>) -> Allocation {
        self.0 += 1;
        Allocation::Nodelete
    }
}
impl Receive<Get> for Counter {
    fn receive(&mut self, Get(p): Get, _: &mut Context<'_, Self>) -> Allocation {
        p.send(Total(self.0)).unwrap();
        Allocation::Delete
    }
}
impl Receive<Start> for Producer {
    fn receive(&mut self, _: Start, ctx: &mut Context<'_, Self>) -> Allocation {
        for _ in 0..self.n {
            self.counter.send(Increment).unwrap();
        }
        self.counter.send(Get(ctx.address())).unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Total> for Producer {
    fn receive(&mut self, t: Total, _: &mut Context<'_, Self>) -> Allocation {
        self.done.report(t.0);
        Allocation::Delete
    }
}

fn counting(s: &ActorSystem, n: u64) -> u64 {
    let done = Done::new(1);
    let counter = s.spawn(Counter(0));
    let producer = s.spawn(Producer {
        counter,
        n,
        done: done.clone(),
    });
    producer.send(Start).unwrap();
    done.wait()
}

// ---- fork-join throughput / creation -------------------------------------------------------
struct FjWorker {
    x: u64,
    count: u64,
    msgs: u64,
    done: Arc<Done>,
}
struct Work(u64);
impl Actor for FjWorker {}
impl Receive<Work> for FjWorker {
    fn receive(&mut self, Work(r): Work, _: &mut Context<'_, Self>) -> Allocation {
        self.x = tiny(self.x, r);
        self.count += 1;
        if self.count == self.msgs {
            std::hint::black_box(self.x);
            self.done.report(self.count);
            return Allocation::Delete;
        }
        Allocation::Nodelete
    }
}

fn fj_throughput(s: &ActorSystem, actors: u64, msgs: u64) -> u64 {
    let done = Done::new(actors);
    let workers: Vec<_> = (0..actors)
        .map(|_| {
            s.spawn(FjWorker {
                x: 1,
                count: 0,
                msgs,
                done: done.clone(),
            })
        })
        .collect();
    for r in 0..msgs {
        for w in &workers {
            w.send(Work(r)).unwrap();
        }
    }
    done.wait()
}

fn fj_creation(s: &ActorSystem, n: u64) -> u64 {
    let done = Done::new(n);
    for i in 0..n {
        s.spawn(FjWorker {
            x: 1,
            count: 0,
            msgs: 1,
            done: done.clone(),
        })
        .send(Work(i))
        .unwrap();
    }
    done.wait()
}

/// `actorium-bench scale`: `n` fork-join workers spawned from this thread and kept alive
/// (their addresses held), then sent one message each; the two phases are marked.
fn scale(s: &ActorSystem, n: u64) -> u64 {
    actorium_peers::common::mark("start");
    let done = Done::new(n);
    let workers: Vec<Addr<FjWorker>> = (0..n)
        .map(|_| {
            s.spawn(FjWorker {
                x: 1,
                count: 0,
                msgs: 1,
                done: done.clone(),
            })
        })
        .collect();
    actorium_peers::common::mark("spawned");
    for (i, w) in workers.iter().enumerate() {
        w.send(Work(i as u64)).unwrap();
    }
    let sum = done.wait();
    actorium_peers::common::mark("messaged");
    sum
}

// ---- thread-ring ----------------------------------------------------------------------------
struct Node {
    index: u64,
    next: Option<Addr<Node>>,
    done: Arc<Done>,
}
struct SetNext(Addr<Node>);
struct Token(u64);
impl Actor for Node {}
impl Receive<SetNext> for Node {
    fn receive(&mut self, SetNext(n): SetNext, _: &mut Context<'_, Self>) -> Allocation {
        self.next = Some(n);
        Allocation::Nodelete
    }
}
impl Receive<Token> for Node {
    fn receive(&mut self, Token(k): Token, _: &mut Context<'_, Self>) -> Allocation {
        if k > 0 {
            self.next.as_ref().unwrap().send(Token(k - 1)).unwrap();
        } else {
            self.done.report(self.index);
        }
        Allocation::Nodelete
    }
}

fn thread_ring(s: &ActorSystem, actors: u64, passes: u64) -> u64 {
    let done = Done::new(1);
    let nodes: Vec<_> = (0..actors)
        .map(|index| {
            s.spawn(Node {
                index,
                next: None,
                done: done.clone(),
            })
        })
        .collect();
    for (i, n) in nodes.iter().enumerate() {
        n.send(SetNext(nodes[(i + 1) % nodes.len()].clone()))
            .unwrap();
    }
    nodes[0].send(Token(passes)).unwrap();
    let last = done.wait();
    for n in &nodes {
        n.send(actorium::DeleteMsg).unwrap();
    }
    ring_checksum(last, passes, actors)
}

// ---- chameneos ------------------------------------------------------------------------------
struct Mall {
    waiting: Option<(Addr<Creature>, u8)>,
    meetings: u64,
    limit: u64,
}
struct Creature {
    mall: Addr<Mall>,
    colour: u8,
    met: u64,
    done: Arc<Done>,
}
struct MeetReq(Addr<Creature>, u8);
struct Paired(u8);
struct Stop;
impl Actor for Mall {}
impl Actor for Creature {}
impl Receive<MeetReq> for Mall {
    fn receive(&mut self, MeetReq(c, colour): MeetReq, _: &mut Context<'_, Self>) -> Allocation {
        if self.meetings >= self.limit {
            c.send(Stop).unwrap();
            if let Some((w, _)) = self.waiting.take() {
                w.send(Stop).unwrap();
            }
            return Allocation::Nodelete;
        }
        match self.waiting.take() {
            None => self.waiting = Some((c, colour)),
            Some((w, wc)) => {
                self.meetings += 1;
                w.send(Paired(colour)).unwrap();
                c.send(Paired(wc)).unwrap();
            }
        }
        Allocation::Nodelete
    }
}
impl Receive<Paired> for Creature {
    fn receive(&mut self, Paired(other): Paired, ctx: &mut Context<'_, Self>) -> Allocation {
        self.met += 1;
        self.colour = complement(self.colour, other);
        self.mall.send(MeetReq(ctx.address(), self.colour)).unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Stop> for Creature {
    fn receive(&mut self, _: Stop, _: &mut Context<'_, Self>) -> Allocation {
        self.done.report(self.met);
        Allocation::Delete
    }
}
impl Receive<Start> for Creature {
    fn receive(&mut self, _: Start, ctx: &mut Context<'_, Self>) -> Allocation {
        self.mall.send(MeetReq(ctx.address(), self.colour)).unwrap();
        Allocation::Nodelete
    }
}

fn chameneos(s: &ActorSystem, creatures: u64, meetings: u64) -> u64 {
    let done = Done::new(creatures);
    let mall = s.spawn(Mall {
        waiting: None,
        meetings: 0,
        limit: meetings,
    });
    let cs: Vec<_> = (0..creatures)
        .map(|i| {
            s.spawn(Creature {
                mall: mall.clone(),
                colour: (i % 3) as u8,
                met: 0,
                done: done.clone(),
            })
        })
        .collect();
    for c in &cs {
        c.send(Start).unwrap();
    }
    let total = done.wait();
    mall.send(actorium::DeleteMsg).unwrap();
    total
}

// ---- big ------------------------------------------------------------------------------------
type Peers = Arc<OnceLock<Vec<Addr<BigActor>>>>;
struct BigActor {
    peers: Peers,
    me: u64,
    rng: XorShift,
    sent: u64,
    pongs: u64,
    pings: u64,
    done: Arc<Done>,
}
struct BigPing(u64);
struct BigPong;
impl Actor for BigActor {}
impl BigActor {
    fn ping(&mut self) {
        let peers = self.peers.get().unwrap();
        let to = self.rng.other(self.me, peers.len() as u64);
        peers[to as usize].send(BigPing(self.me)).unwrap();
        self.sent += 1;
    }
}
impl Receive<Start> for BigActor {
    fn receive(&mut self, _: Start, _: &mut Context<'_, Self>) -> Allocation {
        self.ping();
        Allocation::Nodelete
    }
}
impl Receive<BigPing> for BigActor {
    fn receive(&mut self, BigPing(from): BigPing, _: &mut Context<'_, Self>) -> Allocation {
        self.peers.get().unwrap()[from as usize]
            .send(BigPong)
            .unwrap();
        Allocation::Nodelete
    }
}
impl Receive<BigPong> for BigActor {
    fn receive(&mut self, _: BigPong, _: &mut Context<'_, Self>) -> Allocation {
        self.pongs += 1;
        if self.sent < self.pings {
            self.ping();
        } else if self.pongs == self.pings {
            self.done.report(self.pongs);
        }
        Allocation::Nodelete
    }
}

fn big(s: &ActorSystem, actors: u64, pings: u64) -> u64 {
    let done = Done::new(actors);
    let peers: Peers = Arc::new(OnceLock::new());
    let all: Vec<_> = (0..actors)
        .map(|i| {
            s.spawn(BigActor {
                peers: peers.clone(),
                me: i,
                rng: XorShift::new(i),
                sent: 0,
                pongs: 0,
                pings,
                done: done.clone(),
            })
        })
        .collect();
    assert!(peers.set(all.clone()).is_ok());
    for a in &all {
        a.send(Start).unwrap();
    }
    let total = done.wait();
    // Actors hold the peer list (a cycle through `peers`): end them explicitly.
    for a in &all {
        a.send(actorium::DeleteMsg).unwrap();
    }
    total
}

// ---- dictionary (Savina's concurrent dictionary) ---------------------------------------------
struct Dictionary(actorium_peers::common::DictMap);
struct DictWorker {
    dict: Addr<Dictionary>,
    id: u64,
    msgs: u64,
    write: u64,
    sent: u64,
    last: u64,
    sum: u64,
    done: Arc<Done>,
}
/// A request: the key, the value to write (`None`: read), and whom to answer.
struct DictOp(u64, Option<u64>, Addr<DictWorker>);
struct DictReply(u64);
impl Actor for Dictionary {}
impl Actor for DictWorker {}
impl Receive<DictOp> for Dictionary {
    fn receive(
        &mut self,
        DictOp(key, value, from): DictOp,
        _: &mut Context<'_, Self>,
    ) -> Allocation {
        from.send(DictReply(self.0.apply(key, value))).unwrap();
        Allocation::Nodelete
    }
}
impl DictWorker {
    fn request(&mut self, ctx: &mut Context<'_, Self>) {
        let (key, value) = actorium_peers::common::dict_request(
            self.id,
            self.msgs,
            self.sent,
            self.write,
            &mut self.last,
        );
        self.sent += 1;
        self.dict.send(DictOp(key, value, ctx.address())).unwrap();
    }
}
impl Receive<Start> for DictWorker {
    fn receive(&mut self, _: Start, ctx: &mut Context<'_, Self>) -> Allocation {
        self.request(ctx);
        Allocation::Nodelete
    }
}
impl Receive<DictReply> for DictWorker {
    fn receive(&mut self, DictReply(v): DictReply, ctx: &mut Context<'_, Self>) -> Allocation {
        self.sum += v;
        if self.sent < self.msgs {
            self.request(ctx);
            Allocation::Nodelete
        } else {
            self.done.report(self.sum);
            Allocation::Delete
        }
    }
}

fn dictionary(s: &ActorSystem, workers: u64, msgs: u64, write: u64) -> u64 {
    let done = Done::new(workers);
    let dict = s.spawn(Dictionary(Default::default()));
    let all: Vec<_> = (0..workers)
        .map(|id| {
            s.spawn(DictWorker {
                dict: dict.clone(),
                id,
                msgs,
                write,
                sent: 0,
                last: 0,
                sum: 0,
                done: done.clone(),
            })
        })
        .collect();
    for w in &all {
        w.send(Start).unwrap();
    }
    let total = done.wait();
    dict.send(actorium::DeleteMsg).unwrap();
    total
}

// ---- banking (Savina's bank transaction) -----------------------------------------------------
type Accounts = Arc<OnceLock<Vec<Addr<Account>>>>;
struct Teller {
    accounts: Accounts,
    transactions: u64,
    completed: u64,
    reported: u64,
    sum: u64,
    done: Arc<Done>,
}
struct Account {
    index: u64,
    balance: u64,
    accounts: Accounts,
    teller: Addr<Teller>,
}
struct Transfer {
    to: u64,
    amount: u64,
}
struct Credit {
    from: u64,
    amount: u64,
}
struct Credited;
struct Completed;
struct Report;
struct AccountBalance(u64, u64);
impl Actor for Teller {}
impl Actor for Account {}
impl Teller {
    fn ask_balances(&self) {
        for a in self.accounts.get().unwrap() {
            a.send(Report).unwrap();
        }
    }
}
impl Receive<Start> for Teller {
    fn receive(&mut self, _: Start, _: &mut Context<'_, Self>) -> Allocation {
        let accounts = self.accounts.get().unwrap();
        for t in 0..self.transactions {
            let (from, to, amount) =
                actorium_peers::common::bank_transfer(t, accounts.len() as u64);
            accounts[from as usize]
                .send(Transfer { to, amount })
                .unwrap();
        }
        if self.transactions == 0 {
            self.ask_balances();
        }
        Allocation::Nodelete
    }
}
impl Receive<Completed> for Teller {
    fn receive(&mut self, _: Completed, _: &mut Context<'_, Self>) -> Allocation {
        self.completed += 1;
        if self.completed == self.transactions {
            self.ask_balances();
        }
        Allocation::Nodelete
    }
}
impl Receive<AccountBalance> for Teller {
    fn receive(
        &mut self,
        AccountBalance(i, b): AccountBalance,
        _: &mut Context<'_, Self>,
    ) -> Allocation {
        self.sum = self.sum.wrapping_add((i + 1).wrapping_mul(b));
        self.reported += 1;
        if self.reported == self.accounts.get().unwrap().len() as u64 {
            self.done.report(self.sum);
        }
        Allocation::Nodelete
    }
}
impl Receive<Transfer> for Account {
    fn receive(&mut self, t: Transfer, _: &mut Context<'_, Self>) -> Allocation {
        self.balance -= t.amount;
        self.accounts.get().unwrap()[t.to as usize]
            .send(Credit {
                from: self.index,
                amount: t.amount,
            })
            .unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Credit> for Account {
    fn receive(&mut self, c: Credit, _: &mut Context<'_, Self>) -> Allocation {
        self.balance += c.amount;
        self.accounts.get().unwrap()[c.from as usize]
            .send(Credited)
            .unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Credited> for Account {
    fn receive(&mut self, _: Credited, _: &mut Context<'_, Self>) -> Allocation {
        self.teller.send(Completed).unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Report> for Account {
    fn receive(&mut self, _: Report, _: &mut Context<'_, Self>) -> Allocation {
        self.teller
            .send(AccountBalance(self.index, self.balance))
            .unwrap();
        Allocation::Nodelete
    }
}

fn banking(s: &ActorSystem, accounts: u64, transactions: u64) -> u64 {
    let done = Done::new(1);
    let all: Accounts = Arc::new(OnceLock::new());
    let teller = s.spawn(Teller {
        accounts: all.clone(),
        transactions,
        completed: 0,
        reported: 0,
        sum: 0,
        done: done.clone(),
    });
    let list: Vec<_> = (0..accounts)
        .map(|index| {
            s.spawn(Account {
                index,
                balance: actorium_peers::common::BANK_INITIAL,
                accounts: all.clone(),
                teller: teller.clone(),
            })
        })
        .collect();
    assert!(all.set(list.clone()).is_ok());
    teller.send(Start).unwrap();
    let total = done.wait();
    // The accounts hold each other's addresses (through `all`): end them explicitly.
    for a in &list {
        a.send(actorium::DeleteMsg).unwrap();
    }
    teller.send(actorium::DeleteMsg).unwrap();
    total
}

// ---- logistic-map (Savina's logistic map series) ---------------------------------------------
struct LogMaster {
    series: Arc<OnceLock<Vec<Addr<Series>>>>,
    rounds: actorium_peers::common::TermRounds,
    done: Arc<Done>,
}
struct Series {
    term: u64,
    computer: Addr<RateComputer>,
    master: Addr<LogMaster>,
}
struct RateComputer {
    index: u64,
}
struct NextTerm;
struct Compute(u64, Addr<Series>);
struct Computed(u64);
struct TermDone(u64);
impl Actor for LogMaster {}
impl Actor for Series {}
impl Actor for RateComputer {}
impl LogMaster {
    fn round(&self) {
        for s in self.series.get().unwrap() {
            s.send(NextTerm).unwrap();
        }
    }
}
impl Receive<Start> for LogMaster {
    fn receive(&mut self, _: Start, _: &mut Context<'_, Self>) -> Allocation {
        match self.rounds.start() {
            Some(sum) => self.done.report(sum),
            None => self.round(),
        }
        Allocation::Nodelete
    }
}
impl Receive<TermDone> for LogMaster {
    fn receive(&mut self, TermDone(x): TermDone, _: &mut Context<'_, Self>) -> Allocation {
        match self.rounds.answer(x) {
            Round::Next => self.round(),
            Round::Done(sum) => self.done.report(sum),
            Round::Wait => {}
        }
        Allocation::Nodelete
    }
}
impl Receive<NextTerm> for Series {
    fn receive(&mut self, _: NextTerm, ctx: &mut Context<'_, Self>) -> Allocation {
        self.computer
            .send(Compute(self.term, ctx.address()))
            .unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Computed> for Series {
    fn receive(&mut self, Computed(x): Computed, _: &mut Context<'_, Self>) -> Allocation {
        self.term = x;
        self.master.send(TermDone(x)).unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Compute> for RateComputer {
    fn receive(&mut self, Compute(x, from): Compute, _: &mut Context<'_, Self>) -> Allocation {
        from.send(Computed(actorium_peers::common::logmap_next(self.index, x)))
            .unwrap();
        Allocation::Nodelete
    }
}

fn logistic_map(s: &ActorSystem, series: u64, terms: u64) -> u64 {
    let done = Done::new(1);
    let list = Arc::new(OnceLock::new());
    let master = s.spawn(LogMaster {
        series: list.clone(),
        rounds: actorium_peers::common::TermRounds::new(series, terms),
        done: done.clone(),
    });
    let computers: Vec<_> = (0..series)
        .map(|index| s.spawn(RateComputer { index }))
        .collect();
    let all: Vec<_> = (0..series)
        .map(|index| {
            s.spawn(Series {
                term: actorium_peers::common::logmap_start(index),
                computer: computers[index as usize].clone(),
                master: master.clone(),
            })
        })
        .collect();
    assert!(list.set(all.clone()).is_ok());
    master.send(Start).unwrap();
    let total = done.wait();
    for a in &all {
        a.send(actorium::DeleteMsg).unwrap();
    }
    for c in &computers {
        c.send(actorium::DeleteMsg).unwrap();
    }
    master.send(actorium::DeleteMsg).unwrap();
    total
}

// ---- bounded-buffer (Savina's producer–consumer with a bounded buffer) ---------------------
struct BbManager {
    producers: Vec<Addr<BbProducer>>,
    consumers: Vec<Addr<BbConsumer>>,
    book: BbBook,
}
type BbManagerAddr = Arc<OnceLock<Addr<BbManager>>>;
struct BbProducer {
    index: u64,
    items: u64,
    made: u64,
    cost: u64,
    manager: BbManagerAddr,
}
struct BbConsumer {
    index: usize,
    cost: u64,
    sum: u64,
    manager: BbManagerAddr,
    done: Arc<Done>,
}
struct Produce;
struct BbItem(u64, usize);
struct ProducerDone;
struct Consume(u64);
struct ConsumerAvailable(usize);
struct ReportSum;
impl Actor for BbManager {}
impl Actor for BbProducer {}
impl Actor for BbConsumer {}
impl BbManager {
    /// Sends what a step of the bookkeeping says; when every item is consumed, asks the
    /// consumers for their sums and ends.
    fn apply(&self, step: BbSend) -> Allocation {
        if let Some((c, x)) = step.consume {
            self.consumers[c].send(Consume(x)).unwrap();
        }
        if let Some(p) = step.produce {
            self.producers[p].send(Produce).unwrap();
        }
        if step.finished {
            for c in &self.consumers {
                c.send(ReportSum).unwrap();
            }
            return Allocation::Delete;
        }
        Allocation::Nodelete
    }
}
impl Receive<Start> for BbManager {
    fn receive(&mut self, _: Start, _: &mut Context<'_, Self>) -> Allocation {
        for p in &self.producers {
            p.send(Produce).unwrap();
        }
        Allocation::Nodelete
    }
}
impl Receive<BbItem> for BbManager {
    fn receive(&mut self, BbItem(x, p): BbItem, _: &mut Context<'_, Self>) -> Allocation {
        let step = self.book.item(x, p);
        self.apply(step)
    }
}
impl Receive<ConsumerAvailable> for BbManager {
    fn receive(
        &mut self,
        ConsumerAvailable(c): ConsumerAvailable,
        _: &mut Context<'_, Self>,
    ) -> Allocation {
        let step = self.book.available(c);
        self.apply(step)
    }
}
impl Receive<ProducerDone> for BbManager {
    fn receive(&mut self, _: ProducerDone, _: &mut Context<'_, Self>) -> Allocation {
        let step = self.book.producer_done();
        self.apply(step)
    }
}
impl Receive<Produce> for BbProducer {
    fn receive(&mut self, _: Produce, _: &mut Context<'_, Self>) -> Allocation {
        let manager = self.manager.get().unwrap();
        if self.made == self.items {
            manager.send(ProducerDone).unwrap();
            // Never asked again: end (the manager's address goes with the state).
            return Allocation::Delete;
        }
        let x = bb_item(self.index, self.made, self.items, self.cost);
        self.made += 1;
        manager.send(BbItem(x, self.index as usize)).unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Consume> for BbConsumer {
    fn receive(&mut self, Consume(x): Consume, _: &mut Context<'_, Self>) -> Allocation {
        self.sum = self.sum.wrapping_add(busy(x, self.cost));
        self.manager
            .get()
            .unwrap()
            .send(ConsumerAvailable(self.index))
            .unwrap();
        Allocation::Nodelete
    }
}
impl Receive<ReportSum> for BbConsumer {
    fn receive(&mut self, _: ReportSum, _: &mut Context<'_, Self>) -> Allocation {
        self.done.report(self.sum);
        Allocation::Delete
    }
}

fn bounded_buffer(s: &ActorSystem, p: &Params) -> u64 {
    let (producers, consumers) = (p.get("producers"), p.get("consumers") as usize);
    let (items, cost, capacity) = (p.get("items"), p.get("cost"), p.get("buffer") as usize);
    let done = Done::new(consumers as u64);
    // Every actor spawned from main, as on the peers; the manager's address reaches the others
    // through `manager` once it exists (a cycle, ended by the actors themselves at the end).
    let manager: BbManagerAddr = Arc::new(OnceLock::new());
    let producer_addrs = (0..producers)
        .map(|index| {
            s.spawn(BbProducer {
                index,
                items,
                made: 0,
                cost,
                manager: manager.clone(),
            })
        })
        .collect();
    let consumer_addrs = (0..consumers)
        .map(|index| {
            s.spawn(BbConsumer {
                index,
                cost,
                sum: 0,
                manager: manager.clone(),
                done: done.clone(),
            })
        })
        .collect();
    let m = s.spawn(BbManager {
        producers: producer_addrs,
        consumers: consumer_addrs,
        book: BbBook::new(producers as usize, consumers, capacity),
    });
    assert!(manager.set(m.clone()).is_ok());
    m.send(Start).unwrap();
    done.wait()
}

// ---- sleeping-barber (Savina's sleeping barber) ---------------------------------------------
struct Factory {
    customers: u64,
    arrival: u64,
    room: Addr<WaitingRoom>,
    barber: Addr<Barber>,
    served: u64,
    sum: u64,
    done: Arc<Done>,
}
struct WaitingRoom {
    chairs: usize,
    seated: VecDeque<(Addr<Customer>, u64)>,
    barber: Addr<Barber>,
    asleep: bool,
}
struct Barber {
    cut: u64,
    room: Arc<OnceLock<Addr<WaitingRoom>>>,
}
struct Customer {
    id: u64,
    token: u64,
    factory: Addr<Factory>,
}
struct Enter(Addr<Customer>, u64);
struct Full;
struct Returned(Addr<Customer>, u64);
struct Cut(Addr<Customer>, u64);
struct NextCustomer;
struct HaircutDone(u64);
struct Served(u64, u64);
struct CloseRoom;
struct CloseBarber;
impl Actor for Factory {}
impl Actor for WaitingRoom {}
impl Actor for Barber {}
impl Actor for Customer {}
impl Factory {
    fn finish(&self) -> Allocation {
        self.done.report(self.sum);
        // The room and the barber hold each other: the barber ends, and ends the room after
        // its last `NextCustomer` (one sender, so in that order).
        self.barber.send(CloseBarber).unwrap();
        Allocation::Delete
    }
}
impl Receive<Start> for Factory {
    fn receive(&mut self, _: Start, ctx: &mut Context<'_, Self>) -> Allocation {
        for id in 0..self.customers {
            let token = busy(id, self.arrival);
            let c = ctx.spawn(Customer {
                id,
                token,
                factory: ctx.address(),
            });
            self.room.send(Enter(c, token)).unwrap();
        }
        if self.customers == 0 {
            return self.finish();
        }
        Allocation::Nodelete
    }
}
impl Receive<Returned> for Factory {
    fn receive(&mut self, Returned(c, token): Returned, _: &mut Context<'_, Self>) -> Allocation {
        self.room.send(Enter(c, token)).unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Served> for Factory {
    fn receive(&mut self, Served(_id, v): Served, _: &mut Context<'_, Self>) -> Allocation {
        self.sum = self.sum.wrapping_add(v);
        self.served += 1;
        if self.served == self.customers {
            return self.finish();
        }
        Allocation::Nodelete
    }
}
impl Receive<Enter> for WaitingRoom {
    fn receive(&mut self, Enter(c, token): Enter, _: &mut Context<'_, Self>) -> Allocation {
        if self.seated.len() == self.chairs {
            c.send(Full).unwrap();
        } else if self.asleep {
            self.asleep = false;
            self.barber.send(Cut(c, token)).unwrap();
        } else {
            self.seated.push_back((c, token));
        }
        Allocation::Nodelete
    }
}
impl Receive<NextCustomer> for WaitingRoom {
    fn receive(&mut self, _: NextCustomer, _: &mut Context<'_, Self>) -> Allocation {
        match self.seated.pop_front() {
            Some((c, token)) => self.barber.send(Cut(c, token)).unwrap(),
            None => self.asleep = true,
        }
        Allocation::Nodelete
    }
}
impl Receive<CloseRoom> for WaitingRoom {
    fn receive(&mut self, _: CloseRoom, _: &mut Context<'_, Self>) -> Allocation {
        Allocation::Delete
    }
}
impl Receive<CloseBarber> for Barber {
    fn receive(&mut self, _: CloseBarber, _: &mut Context<'_, Self>) -> Allocation {
        self.room.get().unwrap().send(CloseRoom).unwrap();
        Allocation::Delete
    }
}
impl Receive<Cut> for Barber {
    fn receive(&mut self, Cut(c, token): Cut, _: &mut Context<'_, Self>) -> Allocation {
        c.send(HaircutDone(busy(token, self.cut))).unwrap();
        self.room.get().unwrap().send(NextCustomer).unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Full> for Customer {
    fn receive(&mut self, _: Full, ctx: &mut Context<'_, Self>) -> Allocation {
        self.factory
            .send(Returned(ctx.address(), self.token))
            .unwrap();
        Allocation::Nodelete
    }
}
impl Receive<HaircutDone> for Customer {
    fn receive(&mut self, HaircutDone(v): HaircutDone, _: &mut Context<'_, Self>) -> Allocation {
        self.factory.send(Served(self.id, v)).unwrap();
        Allocation::Delete
    }
}

fn sleeping_barber(s: &ActorSystem, p: &Params) -> u64 {
    let done = Done::new(1);
    let (chairs, cut) = (p.get("room") as usize, p.get("cut"));
    // Spawned from main, as on the peers; the barber learns the room's address once it exists.
    let room_addr = Arc::new(OnceLock::new());
    let barber = s.spawn(Barber {
        cut,
        room: room_addr.clone(),
    });
    let room = s.spawn(WaitingRoom {
        chairs,
        seated: VecDeque::with_capacity(chairs),
        barber: barber.clone(),
        asleep: true,
    });
    assert!(room_addr.set(room.clone()).is_ok());
    let factory = s.spawn(Factory {
        customers: p.get("customers"),
        arrival: p.get("arrival"),
        room,
        barber,
        served: 0,
        sum: 0,
        done: done.clone(),
    });
    factory.send(Start).unwrap();
    done.wait()
}

// ---- cigarette-smokers (Savina's cigarette smokers) -----------------------------------------
struct Arbiter {
    smokers: Vec<Addr<Smoker>>,
    rounds: u64,
    smoke: u64,
    started: u64,
}
struct Smoker {
    arbiter: Arc<OnceLock<Addr<Arbiter>>>,
    sum: u64,
    done: Arc<Done>,
}
struct Smoke {
    round: u64,
    time: u64,
}
struct StartedSmoking;
struct ExitSmoker;
impl Actor for Arbiter {}
impl Actor for Smoker {}
impl Arbiter {
    /// Starts round `self.started`, or ends every smoker after the last one.
    fn next_round(&mut self) -> Allocation {
        if self.started == self.rounds {
            for s in &self.smokers {
                s.send(ExitSmoker).unwrap();
            }
            return Allocation::Delete;
        }
        let round = self.started;
        let (smoker, time) = cig_round(round, self.smokers.len() as u64, self.smoke);
        self.smokers[smoker as usize]
            .send(Smoke { round, time })
            .unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Start> for Arbiter {
    fn receive(&mut self, _: Start, _: &mut Context<'_, Self>) -> Allocation {
        self.next_round()
    }
}
impl Receive<StartedSmoking> for Arbiter {
    fn receive(&mut self, _: StartedSmoking, _: &mut Context<'_, Self>) -> Allocation {
        self.started += 1;
        self.next_round()
    }
}
impl Receive<Smoke> for Smoker {
    fn receive(&mut self, m: Smoke, _: &mut Context<'_, Self>) -> Allocation {
        self.arbiter.get().unwrap().send(StartedSmoking).unwrap();
        self.sum = self.sum.wrapping_add(busy(m.round, m.time));
        Allocation::Nodelete
    }
}
impl Receive<ExitSmoker> for Smoker {
    fn receive(&mut self, _: ExitSmoker, _: &mut Context<'_, Self>) -> Allocation {
        self.done.report(self.sum);
        Allocation::Delete
    }
}

fn cigarette_smokers(s: &ActorSystem, p: &Params) -> u64 {
    let smokers = p.get("smokers");
    let done = Done::new(smokers);
    let (rounds, smoke) = (p.get("rounds"), p.get("smoke"));
    // Spawned from main, as on the peers; the arbiter's address reaches the smokers once it
    // exists.
    let arbiter_addr = Arc::new(OnceLock::new());
    let list = (0..smokers)
        .map(|_| {
            s.spawn(Smoker {
                arbiter: arbiter_addr.clone(),
                sum: 0,
                done: done.clone(),
            })
        })
        .collect();
    let arbiter = s.spawn(Arbiter {
        smokers: list,
        rounds,
        smoke,
        started: 0,
    });
    assert!(arbiter_addr.set(arbiter.clone()).is_ok());
    arbiter.send(Start).unwrap();
    done.wait()
}
