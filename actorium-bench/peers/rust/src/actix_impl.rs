//! The workloads on actix 0.13: `T` arbiters (one OS thread each) inside an `actix::System`
//! whose runner drives the workload from the calling thread; every actor is started with
//! `start_in_arbiter` on the next arbiter in round-robin order of creation (across the whole
//! run, also for actors created by actors); messages are sent with `do_send`; actors end with
//! `ctx.stop()` (from outside: a `Stop` message whose handler calls it).
//!
//! Two systems: `actix` runs with `T` arbiters; `actix-1` runs every actor on one arbiter
//! whatever `T` (the thread count the harness passes is ignored for placement): actix's usual
//! set-up, where the actors share one arbiter's event loop and every send stays on its thread.
//! Both are [`run`] with a different arbiter count; the workloads are the same.

use crate::common::{self, complement, row_sum, tiny, Bench, Done, XorShift};
use actix::prelude::*;
use actix::{ActorContext, Arbiter, ArbiterHandle, AsyncContext, System};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// Runs one workload on a fresh system with `arbiters` arbiters (`T` for `actix`, 1 for
/// `actix-1`); the clock starts once the arbiters run.
pub fn run(arbiters: usize, work: Bench) -> Result<(f64, u64), String> {
    let sys = System::new();
    let arbiters: Vec<Arbiter> = (0..arbiters).map(|_| Arbiter::new()).collect();
    let placer = Arc::new(Placer {
        arbiters: arbiters.iter().map(Arbiter::handle).collect(),
        next: AtomicUsize::new(0),
    });
    let result = sys.block_on(async move {
        let p = placer;
        let t0 = Instant::now();
        let sum = match work {
            Bench::StaticSend { n } => static_send(&p, n).await,
            Bench::DynamicSend { n } => dynamic_send(&p, n).await,
            Bench::Executor {
                actors,
                group,
                rounds,
            } => executor(&p, actors, group, rounds).await,
            Bench::Repeat { servers, reps } => repeat(&p, servers, reps).await,
            Bench::Matrix { n, x, y } => matrix(&p, n, x, y).await,
            Bench::PingPong { n } => ping_pong(&p, n).await,
            Bench::Counting { n } => counting(&p, n).await,
            Bench::ForkJoinThroughput { actors, msgs } => fj_throughput(&p, actors, msgs).await,
            Bench::ForkJoinCreation { n } => fj_creation(&p, n).await,
            Bench::Scale { n } => scale(&p, n).await,
            Bench::ThreadRing { actors, passes } => thread_ring(&p, actors, passes).await,
            Bench::Chameneos {
                creatures,
                meetings,
            } => chameneos(&p, creatures, meetings).await,
            Bench::Big { actors, pings } => big(&p, actors, pings).await,
            Bench::LogisticMap { series, terms } => logistic_map(&p, series, terms).await,
            Bench::Banking {
                accounts,
                transactions,
            } => banking(&p, accounts, transactions).await,
            Bench::Dictionary {
                workers,
                msgs,
                write,
            } => dictionary(&p, workers, msgs, write).await,
            Bench::BoundedBuffer {
                producers,
                consumers,
                items,
                buffer,
                cost,
            } => bounded_buffer(&p, producers, consumers, items, buffer, cost).await,
            Bench::SleepingBarber {
                customers,
                room,
                arrival,
                cut,
            } => sleeping_barber(&p, customers, room, arrival, cut).await,
            Bench::CigaretteSmokers {
                smokers,
                rounds,
                smoke,
            } => cigarette_smokers(&p, smokers, rounds, smoke).await,
        }?;
        Ok((t0.elapsed().as_secs_f64(), sum))
    });
    // Stop every arbiter (dropping what is left on it) and join its thread.
    let mut panicked = false;
    for arbiter in arbiters {
        arbiter.stop();
        panicked |= arbiter.join().is_err();
    }
    System::current().stop();
    drop(sys);
    if panicked {
        return Err("actix: an arbiter thread panicked".into());
    }
    result
}

/// Starts actors on the arbiters round-robin, in creation order.
struct Placer {
    arbiters: Vec<ArbiterHandle>,
    next: AtomicUsize,
}

impl Placer {
    /// Starts the actor `make(its own address)` on the next arbiter.
    ///
    /// Every actor keeps its own `Addr`. Actix stops an actor once no `Addr` is left and its
    /// mailbox looked empty, but it checks the address count *after* polling the mailbox: a
    /// message pushed between that poll and the check by a sender that then drops the last
    /// `Addr` (as in `start(..).do_send(..)` on a just-started actor) is lost with the actor.
    /// Without the own `Addr`, counting and dynamic-send occasionally lost their first message
    /// and never finished. Here actors end only through `ctx.stop()`, as the workloads say.
    fn start<A, F>(&self, make: F) -> Addr<A>
    where
        A: Actor<Context = Context<A>>,
        F: FnOnce(Addr<A>) -> A + Send + 'static,
    {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.arbiters.len();
        A::start_in_arbiter(&self.arbiters[i], move |ctx| make(ctx.address()))
    }

    /// Starts `make()` on the next arbiter, without an address of its own: only for actors
    /// whose caller holds an `Addr` until they have handled their mail (`scale`).
    fn start_plain<A, F>(&self, make: F) -> Addr<A>
    where
        A: Actor<Context = Context<A>>,
        F: FnOnce() -> A + Send + 'static,
    {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.arbiters.len();
        A::start_in_arbiter(&self.arbiters[i], move |_| make())
    }
}

/// Messages without a result.
macro_rules! message {
    ($($t:ty),* $(,)?) => {$(
        impl Message for $t {
            type Result = ();
        }
    )*};
}

/// Actors with the default context.
macro_rules! actor {
    ($($t:ty),* $(,)?) => {$(
        impl Actor for $t {
            type Context = Context<Self>;
        }
    )*};
}

/// Ends the receiving actor (`ctx.stop()`).
struct Stop;
message!(Stop);

/// Implements `Handler<Stop>` for actors ended from outside.
macro_rules! stoppable {
    ($($t:ty),* $(,)?) => {$(
        impl Handler<Stop> for $t {
            type Result = ();

            fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
                ctx.stop();
            }
        }
    )*};
}

// ---- static-send ----------------------------------------------------------------------------
struct SelfSender {
    me: Addr<SelfSender>,
    n: u64,
    count: u64,
    done: Arc<Done>,
}
struct Tick;
actor!(SelfSender);
message!(Tick);

impl Handler<Tick> for SelfSender {
    type Result = ();

    fn handle(&mut self, t: Tick, ctx: &mut Context<Self>) {
        self.count += 1;
        if self.count < self.n {
            self.me.do_send(t);
        } else {
            self.done.report(self.count);
            ctx.stop();
        }
    }
}

async fn static_send(p: &Placer, n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let a = p.start(move |me| SelfSender {
        me,
        n,
        count: 0,
        done,
    });
    a.do_send(Tick);
    drop(a);
    common::wait(rx).await
}

// ---- dynamic-send ---------------------------------------------------------------------------
struct Hop {
    _me: Addr<Hop>,
    placer: Arc<Placer>,
    done: Arc<Done>,
}
/// `Go(k, n)`.
struct Go(u64, u64);
actor!(Hop);
message!(Go);

impl Handler<Go> for Hop {
    type Result = ();

    fn handle(&mut self, Go(k, n): Go, ctx: &mut Context<Self>) {
        if k < n {
            let (placer, done) = (self.placer.clone(), self.done.clone());
            let next = self.placer.start(move |_me| Hop { _me, placer, done });
            next.do_send(Go(k + 1, n));
        } else {
            self.done.report(k);
        }
        ctx.stop();
    }
}

async fn dynamic_send(p: &Arc<Placer>, n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let placer = p.clone();
    let first = p.start(move |_me| Hop { _me, placer, done });
    first.do_send(Go(1, n));
    drop(first);
    common::wait(rx).await
}

// ---- executor -------------------------------------------------------------------------------
type Group = Arc<OnceLock<Vec<Addr<Member>>>>;

struct Member {
    _me: Addr<Member>,
    group: Group,
    local: u64,
    size: u64,
    /// R = rounds * group.
    total: u64,
    sent: u64,
    recv: u64,
    done: Arc<Done>,
}
struct ExecMsg;
actor!(Member);
message!(ExecMsg);

impl Handler<ExecMsg> for Member {
    type Result = ();

    fn handle(&mut self, m: ExecMsg, ctx: &mut Context<Self>) {
        self.recv += 1;
        if self.sent < self.total {
            let to = (self.local + self.sent) % self.size;
            self.group.get().expect("group set")[to as usize].do_send(m);
            self.sent += 1;
        }
        if self.recv == self.total + 1 {
            self.done.report(self.recv);
            ctx.stop();
        }
    }
}

async fn executor(p: &Placer, actors: u64, size: u64, rounds: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(actors);
    let mut all = Vec::with_capacity(actors as usize);
    let mut groups: Vec<Group> = Vec::new();
    for i in 0..actors {
        if i % size == 0 {
            groups.push(Arc::new(OnceLock::new()));
        }
        let (group, done) = (groups.last().expect("a group").clone(), done.clone());
        all.push(p.start(move |_me| Member {
            _me,
            group,
            local: i % size,
            size,
            total: rounds * size,
            sent: 0,
            recv: 0,
            done,
        }));
    }
    drop(done);
    let size = size as usize;
    for (g, lock) in groups.iter().enumerate() {
        let _ = lock.set(all[g * size..(g + 1) * size].to_vec());
    }
    for a in &all {
        a.do_send(ExecMsg);
    }
    drop((all, groups));
    common::wait(rx).await
}

// ---- repeat ---------------------------------------------------------------------------------
struct Client {
    _me: Addr<Client>,
    servers: Vec<Addr<Server>>,
    reps_left: u64,
    pending: u64,
    sum: u64,
    done: Arc<Done>,
}
struct Server {
    _me: Addr<Server>,
    index: u64,
    client: Addr<Client>,
}
struct Servers(Vec<Addr<Server>>);
struct Start;
struct Req;
struct Rep(u64);
actor!(Client, Server);
message!(Servers, Start, Req, Rep);
stoppable!(Server);

impl Client {
    fn scatter(&mut self) {
        self.pending = self.servers.len() as u64;
        for s in &self.servers {
            s.do_send(Req);
        }
    }
}

impl Handler<Servers> for Client {
    type Result = ();

    fn handle(&mut self, Servers(list): Servers, _: &mut Context<Self>) {
        self.servers = list;
    }
}

impl Handler<Start> for Client {
    type Result = ();

    fn handle(&mut self, _: Start, _: &mut Context<Self>) {
        self.scatter();
    }
}

impl Handler<Rep> for Client {
    type Result = ();

    fn handle(&mut self, Rep(index): Rep, ctx: &mut Context<Self>) {
        self.sum += index + 1;
        self.pending -= 1;
        if self.pending == 0 {
            self.reps_left -= 1;
            if self.reps_left == 0 {
                for s in self.servers.drain(..) {
                    s.do_send(Stop);
                }
                self.done.report(self.sum);
                ctx.stop();
            } else {
                self.scatter();
            }
        }
    }
}

impl Handler<Req> for Server {
    type Result = ();

    fn handle(&mut self, _: Req, _: &mut Context<Self>) {
        self.client.do_send(Rep(self.index));
    }
}

async fn repeat(p: &Placer, servers: u64, reps: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let client = p.start(move |_me| Client {
        _me,
        servers: Vec::new(),
        reps_left: reps,
        pending: 0,
        sum: 0,
        done,
    });
    let list = (0..servers)
        .map(|index| {
            let client = client.clone();
            p.start(move |_me| Server { _me, index, client })
        })
        .collect();
    client.do_send(Servers(list));
    client.do_send(Start);
    drop(client);
    common::wait(rx).await
}

// ---- matrix ---------------------------------------------------------------------------------
struct RowWorker {
    _me: Addr<RowWorker>,
    x: Arc<Vec<u64>>,
    y: Arc<Vec<u64>>,
    n: usize,
    done: Arc<Done>,
}
struct Row(usize);
actor!(RowWorker);
message!(Row);

impl Handler<Row> for RowWorker {
    type Result = ();

    fn handle(&mut self, Row(i): Row, ctx: &mut Context<Self>) {
        self.done.report(row_sum(&self.x, &self.y, self.n, i));
        ctx.stop();
    }
}

async fn matrix(p: &Placer, n: usize, x: Arc<Vec<u64>>, y: Arc<Vec<u64>>) -> Result<u64, String> {
    let (done, rx) = Done::new(n as u64);
    for i in 0..n {
        let (x, y, done) = (x.clone(), y.clone(), done.clone());
        let w = p.start(move |_me| RowWorker { _me, x, y, n, done });
        w.do_send(Row(i));
    }
    drop(done);
    common::wait(rx).await
}

// ---- ping-pong ------------------------------------------------------------------------------
struct Ping {
    me: Addr<Ping>,
    pong: Addr<Pong>,
    n: u64,
    count: u64,
    done: Arc<Done>,
}
struct Pong {
    _me: Addr<Pong>,
    ping: Option<Addr<Ping>>,
}
struct Hello(Addr<Ping>);
struct Ball;
actor!(Ping, Pong);
message!(Hello, Ball);
stoppable!(Pong);

impl Handler<Start> for Ping {
    type Result = ();

    fn handle(&mut self, _: Start, _: &mut Context<Self>) {
        self.pong.do_send(Hello(self.me.clone()));
        self.pong.do_send(Ball);
    }
}

impl Handler<Ball> for Ping {
    type Result = ();

    fn handle(&mut self, b: Ball, ctx: &mut Context<Self>) {
        self.count += 1;
        if self.count == self.n {
            self.pong.do_send(Stop);
            self.done.report(self.count);
            ctx.stop();
        } else {
            self.pong.do_send(b);
        }
    }
}

impl Handler<Hello> for Pong {
    type Result = ();

    fn handle(&mut self, Hello(p): Hello, _: &mut Context<Self>) {
        self.ping = Some(p);
    }
}

impl Handler<Ball> for Pong {
    type Result = ();

    fn handle(&mut self, b: Ball, _: &mut Context<Self>) {
        self.ping.as_ref().expect("hello first").do_send(b);
    }
}

async fn ping_pong(p: &Placer, n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let pong = p.start(|_me| Pong { _me, ping: None });
    let ping = p.start(move |me| Ping {
        me,
        pong,
        n,
        count: 0,
        done,
    });
    ping.do_send(Start);
    drop(ping);
    common::wait(rx).await
}

// ---- counting -------------------------------------------------------------------------------
struct Counter {
    _me: Addr<Counter>,
    total: u64,
}
struct Producer {
    me: Addr<Producer>,
    counter: Addr<Counter>,
    n: u64,
    done: Arc<Done>,
}
struct Increment;
struct Get(Addr<Producer>);
struct Total(u64);
actor!(Counter, Producer);
message!(Increment, Get, Total);

impl Handler<Increment> for Counter {
    type Result = ();

    fn handle(&mut self, _: Increment, _: &mut Context<Self>) {
        self.total += 1;
    }
}

impl Handler<Get> for Counter {
    type Result = ();

    fn handle(&mut self, Get(p): Get, ctx: &mut Context<Self>) {
        p.do_send(Total(self.total));
        ctx.stop();
    }
}

impl Handler<Start> for Producer {
    type Result = ();

    fn handle(&mut self, _: Start, _: &mut Context<Self>) {
        for _ in 0..self.n {
            self.counter.do_send(Increment);
        }
        self.counter.do_send(Get(self.me.clone()));
    }
}

impl Handler<Total> for Producer {
    type Result = ();

    fn handle(&mut self, Total(t): Total, ctx: &mut Context<Self>) {
        self.done.report(t);
        ctx.stop();
    }
}

async fn counting(p: &Placer, n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let counter = p.start(|_me| Counter { _me, total: 0 });
    let producer = p.start(move |me| Producer {
        me,
        counter,
        n,
        done,
    });
    producer.do_send(Start);
    drop(producer);
    common::wait(rx).await
}

// ---- fork-join throughput / creation ------------------------------------------------------
struct FjWorker {
    _me: Addr<FjWorker>,
    x: u64,
    count: u64,
    msgs: u64,
    done: Arc<Done>,
}
struct Work(u64);
actor!(FjWorker);
message!(Work);

impl FjWorker {
    fn start(p: &Placer, msgs: u64, done: &Arc<Done>) -> Addr<FjWorker> {
        let done = done.clone();
        p.start(move |_me| FjWorker {
            _me,
            x: 1,
            count: 0,
            msgs,
            done,
        })
    }
}

impl Handler<Work> for FjWorker {
    type Result = ();

    fn handle(&mut self, Work(r): Work, ctx: &mut Context<Self>) {
        self.x = tiny(self.x, r);
        self.count += 1;
        if self.count == self.msgs {
            std::hint::black_box(self.x);
            self.done.report(self.count);
            ctx.stop();
        }
    }
}

async fn fj_throughput(p: &Placer, actors: u64, msgs: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(actors);
    let workers: Vec<_> = (0..actors)
        .map(|_| FjWorker::start(p, msgs, &done))
        .collect();
    drop(done);
    for r in 0..msgs {
        for w in &workers {
            w.do_send(Work(r));
        }
    }
    drop(workers);
    common::wait(rx).await
}

async fn fj_creation(p: &Placer, n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(n);
    for i in 0..n {
        FjWorker::start(p, 1, &done).do_send(Work(i));
    }
    drop(done);
    common::wait(rx).await
}

/// The fork-join worker without an address of its own (`scale` holds every address until the
/// end, so none is needed; an actix address costs two allocations).
struct ScaleWorker {
    x: u64,
    done: Arc<Done>,
}
actor!(ScaleWorker);

impl Handler<Work> for ScaleWorker {
    type Result = ();

    fn handle(&mut self, Work(r): Work, ctx: &mut Context<Self>) {
        self.x = tiny(self.x, r);
        std::hint::black_box(self.x);
        self.done.report(1);
        ctx.stop();
    }
}

async fn scale(p: &Placer, n: u64) -> Result<u64, String> {
    let spawn = |d: &Arc<Done>| {
        let done = d.clone();
        p.start_plain(move || ScaleWorker { x: 1, done })
    };
    common::scale(n, spawn, |w: &Addr<ScaleWorker>, i| w.do_send(Work(i))).await
}

// ---- thread-ring ----------------------------------------------------------------------------
struct Node {
    _me: Addr<Node>,
    index: u64,
    next: Option<Addr<Node>>,
    done: Arc<Done>,
}
struct SetNext(Addr<Node>);
struct Token(u64);
actor!(Node);
message!(SetNext, Token);
stoppable!(Node);

impl Handler<SetNext> for Node {
    type Result = ();

    fn handle(&mut self, SetNext(next): SetNext, _: &mut Context<Self>) {
        self.next = Some(next);
    }
}

impl Handler<Token> for Node {
    type Result = ();

    fn handle(&mut self, Token(k): Token, _: &mut Context<Self>) {
        if k > 0 {
            self.next
                .as_ref()
                .expect("ring closed")
                .do_send(Token(k - 1));
        } else {
            self.done.report(self.index);
        }
    }
}

async fn thread_ring(p: &Placer, actors: u64, passes: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let nodes: Vec<_> = (0..actors)
        .map(|index| {
            let done = done.clone();
            p.start(move |_me| Node {
                _me,
                index,
                next: None,
                done,
            })
        })
        .collect();
    drop(done);
    for (i, node) in nodes.iter().enumerate() {
        node.do_send(SetNext(nodes[(i + 1) % nodes.len()].clone()));
    }
    nodes[0].do_send(Token(passes));
    let last = common::wait(rx).await?;
    for node in &nodes {
        node.do_send(Stop);
    }
    Ok(common::ring_checksum(last, passes, actors))
}

// ---- chameneos ------------------------------------------------------------------------------
struct Mall {
    _me: Addr<Mall>,
    waiting: Option<(Addr<Creature>, u8)>,
    meetings: u64,
    limit: u64,
    creatures: u64,
    stops: u64,
}
struct Creature {
    me: Addr<Creature>,
    mall: Addr<Mall>,
    colour: u8,
    met: u64,
    done: Arc<Done>,
}
/// `Meet(creature, colour)`.
struct Meet(Addr<Creature>, u8);
struct Paired(u8);
actor!(Mall, Creature);
message!(Meet, Paired);

impl Handler<Meet> for Mall {
    type Result = ();

    fn handle(&mut self, Meet(c, colour): Meet, ctx: &mut Context<Self>) {
        if self.meetings >= self.limit {
            c.do_send(Stop);
            self.stops += 1;
            if let Some((w, _)) = self.waiting.take() {
                w.do_send(Stop);
                self.stops += 1;
            }
            if self.stops == self.creatures {
                ctx.stop();
            }
            return;
        }
        match self.waiting.take() {
            None => self.waiting = Some((c, colour)),
            Some((w, wc)) => {
                self.meetings += 1;
                w.do_send(Paired(colour));
                c.do_send(Paired(wc));
            }
        }
    }
}

impl Handler<Start> for Creature {
    type Result = ();

    fn handle(&mut self, _: Start, _: &mut Context<Self>) {
        self.mall.do_send(Meet(self.me.clone(), self.colour));
    }
}

impl Handler<Paired> for Creature {
    type Result = ();

    fn handle(&mut self, Paired(other): Paired, _: &mut Context<Self>) {
        self.met += 1;
        self.colour = complement(self.colour, other);
        self.mall.do_send(Meet(self.me.clone(), self.colour));
    }
}

impl Handler<Stop> for Creature {
    type Result = ();

    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        self.done.report(self.met);
        ctx.stop();
    }
}

async fn chameneos(p: &Placer, creatures: u64, meetings: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(creatures);
    let mall = p.start(move |_me| Mall {
        _me,
        waiting: None,
        meetings: 0,
        limit: meetings,
        creatures,
        stops: 0,
    });
    let all: Vec<_> = (0..creatures)
        .map(|i| {
            let (mall, done) = (mall.clone(), done.clone());
            p.start(move |me| Creature {
                me,
                mall,
                colour: (i % 3) as u8,
                met: 0,
                done,
            })
        })
        .collect();
    drop((done, mall));
    for c in &all {
        c.do_send(Start);
    }
    drop(all);
    common::wait(rx).await
}

// ---- big ------------------------------------------------------------------------------------
type Peers = Arc<OnceLock<Vec<Addr<BigActor>>>>;

struct BigActor {
    _me: Addr<BigActor>,
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
actor!(BigActor);
message!(BigPing, BigPong);
stoppable!(BigActor);

impl BigActor {
    fn ping(&mut self) {
        let peers = self.peers.get().expect("peers set");
        // Uniform among the other actors (the contract).
        let to = self.rng.other(self.me, peers.len() as u64);
        peers[to as usize].do_send(BigPing(self.me));
        self.sent += 1;
    }
}

impl Handler<Start> for BigActor {
    type Result = ();

    fn handle(&mut self, _: Start, _: &mut Context<Self>) {
        self.ping();
    }
}

impl Handler<BigPing> for BigActor {
    type Result = ();

    fn handle(&mut self, BigPing(from): BigPing, _: &mut Context<Self>) {
        self.peers.get().expect("peers set")[from as usize].do_send(BigPong);
    }
}

impl Handler<BigPong> for BigActor {
    type Result = ();

    fn handle(&mut self, _: BigPong, _: &mut Context<Self>) {
        self.pongs += 1;
        if self.sent < self.pings {
            self.ping();
        } else if self.pongs == self.pings {
            self.done.report(self.pongs);
        }
    }
}

async fn big(p: &Placer, actors: u64, pings: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(actors);
    let peers: Peers = Arc::new(OnceLock::new());
    let all: Vec<_> = (0..actors)
        .map(|me| {
            let (peers, done) = (peers.clone(), done.clone());
            p.start(move |_me| BigActor {
                _me,
                peers,
                me,
                rng: XorShift::new(me),
                sent: 0,
                pongs: 0,
                pings,
                done,
            })
        })
        .collect();
    drop(done);
    let _ = peers.set(all.clone());
    for a in &all {
        a.do_send(Start);
    }
    let total = common::wait(rx).await?;
    // Every actor answers pings until all are done: end them now.
    for a in &all {
        a.do_send(Stop);
    }
    Ok(total)
}

// ---- dictionary (Savina's concurrent dictionary) ----------------------------------------------
struct Dictionary {
    _me: Addr<Dictionary>,
    map: common::DictMap,
}
struct DictWorker {
    me: Addr<DictWorker>,
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
actor!(Dictionary, DictWorker);
message!(DictOp, DictReply);
stoppable!(Dictionary);

impl Handler<DictOp> for Dictionary {
    type Result = ();

    fn handle(&mut self, DictOp(key, value, from): DictOp, _: &mut Context<Self>) {
        let reply = self.map.apply(key, value);
        from.do_send(DictReply(reply));
    }
}

impl DictWorker {
    fn request(&mut self) {
        let (key, value) =
            common::dict_request(self.id, self.msgs, self.sent, self.write, &mut self.last);
        self.sent += 1;
        self.dict.do_send(DictOp(key, value, self.me.clone()));
    }
}

impl Handler<Start> for DictWorker {
    type Result = ();

    fn handle(&mut self, _: Start, _: &mut Context<Self>) {
        self.request();
    }
}

impl Handler<DictReply> for DictWorker {
    type Result = ();

    fn handle(&mut self, DictReply(v): DictReply, ctx: &mut Context<Self>) {
        self.sum += v;
        if self.sent < self.msgs {
            self.request();
        } else {
            self.done.report(self.sum);
            ctx.stop();
        }
    }
}

async fn dictionary(p: &Placer, workers: u64, msgs: u64, write: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(workers);
    let dict = p.start(|_me| Dictionary {
        _me,
        map: common::DictMap::default(),
    });
    let all: Vec<_> = (0..workers)
        .map(|id| {
            let (dict, done) = (dict.clone(), done.clone());
            p.start(move |me| DictWorker {
                me,
                dict,
                id,
                msgs,
                write,
                sent: 0,
                last: 0,
                sum: 0,
                done,
            })
        })
        .collect();
    drop(done);
    for w in &all {
        w.do_send(Start);
    }
    let total = common::wait(rx).await?;
    dict.do_send(Stop);
    Ok(total)
}

// ---- banking (Savina's bank transaction) -----------------------------------------------------
type Accounts = Arc<OnceLock<Vec<Addr<Account>>>>;
struct Teller {
    _me: Addr<Teller>,
    accounts: Accounts,
    transactions: u64,
    completed: u64,
    balances: Vec<(u64, u64)>,
    done: Arc<Done>,
}
struct Account {
    _me: Addr<Account>,
    index: u64,
    balance: u64,
    accounts: Accounts,
    teller: Addr<Teller>,
}
struct Transfer(u64, u64);
struct Credit(u64, u64);
struct Credited;
struct Completed;
struct Report;
struct Balance(u64, u64);
actor!(Teller, Account);
message!(Transfer, Credit, Credited, Completed, Report, Balance);
stoppable!(Teller, Account);

impl Teller {
    fn ask_balances(&self) {
        for a in self.accounts.get().expect("accounts set") {
            a.do_send(Report);
        }
    }
}

impl Handler<Start> for Teller {
    type Result = ();

    fn handle(&mut self, _: Start, _: &mut Context<Self>) {
        let accounts = self.accounts.get().expect("accounts set");
        for t in 0..self.transactions {
            let (from, to, amount) = common::bank_transfer(t, accounts.len() as u64);
            accounts[from as usize].do_send(Transfer(to, amount));
        }
        if self.transactions == 0 {
            self.ask_balances();
        }
    }
}

impl Handler<Completed> for Teller {
    type Result = ();

    fn handle(&mut self, _: Completed, _: &mut Context<Self>) {
        self.completed += 1;
        if self.completed == self.transactions {
            self.ask_balances();
        }
    }
}

impl Handler<Balance> for Teller {
    type Result = ();

    fn handle(&mut self, Balance(i, b): Balance, _: &mut Context<Self>) {
        self.balances.push((i, b));
        if self.balances.len() == self.accounts.get().expect("accounts set").len() {
            self.done
                .report(common::bank_checksum(self.balances.drain(..)));
        }
    }
}

impl Handler<Transfer> for Account {
    type Result = ();

    fn handle(&mut self, Transfer(to, amount): Transfer, _: &mut Context<Self>) {
        self.balance -= amount;
        self.accounts.get().expect("accounts set")[to as usize].do_send(Credit(self.index, amount));
    }
}

impl Handler<Credit> for Account {
    type Result = ();

    fn handle(&mut self, Credit(from, amount): Credit, _: &mut Context<Self>) {
        self.balance += amount;
        self.accounts.get().expect("accounts set")[from as usize].do_send(Credited);
    }
}

impl Handler<Credited> for Account {
    type Result = ();

    fn handle(&mut self, _: Credited, _: &mut Context<Self>) {
        self.teller.do_send(Completed);
    }
}

impl Handler<Report> for Account {
    type Result = ();

    fn handle(&mut self, _: Report, _: &mut Context<Self>) {
        self.teller.do_send(Balance(self.index, self.balance));
    }
}

async fn banking(p: &Placer, accounts: u64, transactions: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let all: Accounts = Arc::new(OnceLock::new());
    let teller = {
        let all = all.clone();
        p.start(move |_me| Teller {
            _me,
            accounts: all,
            transactions,
            completed: 0,
            balances: Vec::new(),
            done,
        })
    };
    let list: Vec<_> = (0..accounts)
        .map(|index| {
            let (all, teller) = (all.clone(), teller.clone());
            p.start(move |_me| Account {
                _me,
                index,
                balance: common::BANK_INITIAL,
                accounts: all,
                teller,
            })
        })
        .collect();
    let _ = all.set(list.clone());
    teller.do_send(Start);
    let total = common::wait(rx).await?;
    for a in &list {
        a.do_send(Stop);
    }
    teller.do_send(Stop);
    Ok(total)
}

// ---- logistic-map (Savina's logistic map series) ---------------------------------------------
struct LogMaster {
    _me: Addr<LogMaster>,
    series: Arc<OnceLock<Vec<Addr<Series>>>>,
    rounds: common::TermRounds,
    done: Arc<Done>,
}
struct Series {
    me: Addr<Series>,
    term: u64,
    computer: Addr<RateComputer>,
    master: Addr<LogMaster>,
}
struct RateComputer {
    _me: Addr<RateComputer>,
    index: u64,
}
struct NextTerm;
struct Compute(u64, Addr<Series>);
struct Computed(u64);
struct TermDone(u64);
actor!(LogMaster, Series, RateComputer);
message!(NextTerm, Compute, Computed, TermDone);
stoppable!(LogMaster, Series, RateComputer);

impl LogMaster {
    fn round(&self) {
        for s in self.series.get().expect("series set") {
            s.do_send(NextTerm);
        }
    }
}

impl Handler<Start> for LogMaster {
    type Result = ();

    fn handle(&mut self, _: Start, _: &mut Context<Self>) {
        match self.rounds.start() {
            Some(sum) => self.done.report(sum),
            None => self.round(),
        }
    }
}

impl Handler<TermDone> for LogMaster {
    type Result = ();

    fn handle(&mut self, TermDone(x): TermDone, _: &mut Context<Self>) {
        match self.rounds.answer(x) {
            common::Round::Next => self.round(),
            common::Round::Done(sum) => self.done.report(sum),
            common::Round::Wait => {}
        }
    }
}

impl Handler<NextTerm> for Series {
    type Result = ();

    fn handle(&mut self, _: NextTerm, _: &mut Context<Self>) {
        self.computer.do_send(Compute(self.term, self.me.clone()));
    }
}

impl Handler<Computed> for Series {
    type Result = ();

    fn handle(&mut self, Computed(x): Computed, _: &mut Context<Self>) {
        self.term = x;
        self.master.do_send(TermDone(x));
    }
}

impl Handler<Compute> for RateComputer {
    type Result = ();

    fn handle(&mut self, Compute(x, from): Compute, _: &mut Context<Self>) {
        from.do_send(Computed(common::logmap_next(self.index, x)));
    }
}

async fn logistic_map(p: &Placer, series: u64, terms: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let list = Arc::new(OnceLock::new());
    let master = {
        let list = list.clone();
        p.start(move |_me| LogMaster {
            _me,
            series: list,
            rounds: common::TermRounds::new(series, terms),
            done,
        })
    };
    let computers: Vec<_> = (0..series)
        .map(|index| p.start(move |_me| RateComputer { _me, index }))
        .collect();
    let all: Vec<_> = (0..series)
        .map(|index| {
            let (computer, master) = (computers[index as usize].clone(), master.clone());
            p.start(move |me| Series {
                me,
                term: common::logmap_start(index),
                computer,
                master,
            })
        })
        .collect();
    let _ = list.set(all.clone());
    master.do_send(Start);
    let total = common::wait(rx).await?;
    for a in &all {
        a.do_send(Stop);
    }
    for c in &computers {
        c.do_send(Stop);
    }
    master.do_send(Stop);
    Ok(total)
}

// ---- bounded-buffer (Savina's producer–consumer with a bounded buffer) ---------------------
struct BbManager {
    _me: Addr<BbManager>,
    producers: Vec<Addr<BbProducer>>,
    consumers: Vec<Addr<BbConsumer>>,
    book: common::BbBook,
}
struct BbProducer {
    _me: Addr<BbProducer>,
    index: u64,
    items: u64,
    made: u64,
    cost: u64,
    manager: Addr<BbManager>,
}
struct BbConsumer {
    _me: Addr<BbConsumer>,
    index: usize,
    cost: u64,
    sum: u64,
    manager: Addr<BbManager>,
    done: Arc<Done>,
}
/// The manager's producers and consumers (sent before `Start`).
struct BbPeers(Vec<Addr<BbProducer>>, Vec<Addr<BbConsumer>>);
struct Produce;
/// `BbItem(item, producer)`.
struct BbItem(u64, usize);
struct ProducerDone;
struct Consume(u64);
struct ConsumerAvailable(usize);
struct ReportSum;
actor!(BbManager, BbProducer, BbConsumer);
message!(
    BbPeers,
    Produce,
    BbItem,
    ProducerDone,
    Consume,
    ConsumerAvailable,
    ReportSum
);

impl BbManager {
    /// Sends what a step of the bookkeeping says; when every item is consumed, asks the
    /// consumers for their sums and ends.
    fn apply(&self, step: common::BbSend, ctx: &mut Context<Self>) {
        if let Some((c, x)) = step.consume {
            self.consumers[c].do_send(Consume(x));
        }
        if let Some(p) = step.produce {
            self.producers[p].do_send(Produce);
        }
        if step.finished {
            for c in &self.consumers {
                c.do_send(ReportSum);
            }
            ctx.stop();
        }
    }
}

impl Handler<BbPeers> for BbManager {
    type Result = ();

    fn handle(&mut self, BbPeers(producers, consumers): BbPeers, _: &mut Context<Self>) {
        self.producers = producers;
        self.consumers = consumers;
    }
}

impl Handler<Start> for BbManager {
    type Result = ();

    fn handle(&mut self, _: Start, _: &mut Context<Self>) {
        for p in &self.producers {
            p.do_send(Produce);
        }
    }
}

impl Handler<BbItem> for BbManager {
    type Result = ();

    fn handle(&mut self, BbItem(x, p): BbItem, ctx: &mut Context<Self>) {
        let step = self.book.item(x, p);
        self.apply(step, ctx);
    }
}

impl Handler<ConsumerAvailable> for BbManager {
    type Result = ();

    fn handle(&mut self, ConsumerAvailable(c): ConsumerAvailable, ctx: &mut Context<Self>) {
        let step = self.book.available(c);
        self.apply(step, ctx);
    }
}

impl Handler<ProducerDone> for BbManager {
    type Result = ();

    fn handle(&mut self, _: ProducerDone, ctx: &mut Context<Self>) {
        let step = self.book.producer_done();
        self.apply(step, ctx);
    }
}

impl Handler<Produce> for BbProducer {
    type Result = ();

    fn handle(&mut self, _: Produce, ctx: &mut Context<Self>) {
        if self.made == self.items {
            self.manager.do_send(ProducerDone);
            // Never asked again.
            ctx.stop();
            return;
        }
        let x = common::bb_item(self.index, self.made, self.items, self.cost);
        self.made += 1;
        self.manager.do_send(BbItem(x, self.index as usize));
    }
}

impl Handler<Consume> for BbConsumer {
    type Result = ();

    fn handle(&mut self, Consume(x): Consume, _: &mut Context<Self>) {
        self.sum = self.sum.wrapping_add(common::busy(x, self.cost));
        self.manager.do_send(ConsumerAvailable(self.index));
    }
}

impl Handler<ReportSum> for BbConsumer {
    type Result = ();

    fn handle(&mut self, _: ReportSum, ctx: &mut Context<Self>) {
        self.done.report(self.sum);
        ctx.stop();
    }
}

async fn bounded_buffer(
    p: &Placer,
    producers: u64,
    consumers: u64,
    items: u64,
    buffer: u64,
    cost: u64,
) -> Result<u64, String> {
    let (done, rx) = Done::new(consumers);
    let capacity = buffer as usize;
    let manager = p.start(move |_me| BbManager {
        _me,
        producers: Vec::new(),
        consumers: Vec::new(),
        book: common::BbBook::new(producers as usize, consumers as usize, capacity),
    });
    let producer_list = (0..producers)
        .map(|index| {
            let manager = manager.clone();
            p.start(move |_me| BbProducer {
                _me,
                index,
                items,
                made: 0,
                cost,
                manager,
            })
        })
        .collect();
    let consumer_list = (0..consumers as usize)
        .map(|index| {
            let (manager, done) = (manager.clone(), done.clone());
            p.start(move |_me| BbConsumer {
                _me,
                index,
                cost,
                sum: 0,
                manager,
                done,
            })
        })
        .collect();
    drop(done);
    manager.do_send(BbPeers(producer_list, consumer_list));
    manager.do_send(Start);
    drop(manager);
    common::wait(rx).await
}

// ---- sleeping-barber (Savina's sleeping barber) ---------------------------------------------
struct Factory {
    me: Addr<Factory>,
    /// Customers are placed like every other actor (round-robin, in creation order).
    placer: Arc<Placer>,
    room: Addr<WaitingRoom>,
    customers: u64,
    arrival: u64,
    served: u64,
    sum: u64,
    done: Arc<Done>,
}
struct WaitingRoom {
    _me: Addr<WaitingRoom>,
    chairs: usize,
    /// Seated customers with their tokens, longest-seated first.
    seated: VecDeque<(Addr<Customer>, u64)>,
    barber: Option<Addr<Barber>>,
    asleep: bool,
}
struct Barber {
    _me: Addr<Barber>,
    cut: u64,
    room: Addr<WaitingRoom>,
}
struct Customer {
    me: Addr<Customer>,
    id: u64,
    token: u64,
    factory: Addr<Factory>,
}
struct SetBarber(Addr<Barber>);
/// `Enter(customer, token)`.
struct Enter(Addr<Customer>, u64);
struct Full;
/// A customer told `Full`, back at the factory: `Returned(customer, token)`.
struct Returned(Addr<Customer>, u64);
/// `Cut(customer, token)`.
struct Cut(Addr<Customer>, u64);
struct NextCustomer;
/// The spec's `Done(v)`.
struct HaircutDone(u64);
/// `Served(id, v)`.
struct Served(u64, u64);
actor!(Factory, WaitingRoom, Barber, Customer);
message!(
    SetBarber,
    Enter,
    Full,
    Returned,
    Cut,
    NextCustomer,
    HaircutDone,
    Served
);
stoppable!(Barber);

impl Factory {
    /// Reports the sum to main and ends, with the room (which ends the barber).
    fn finish(&self, ctx: &mut Context<Self>) {
        self.done.report(self.sum);
        self.room.do_send(Stop);
        ctx.stop();
    }
}

impl Handler<Start> for Factory {
    type Result = ();

    fn handle(&mut self, _: Start, ctx: &mut Context<Self>) {
        for id in 0..self.customers {
            let token = common::busy(id, self.arrival);
            let factory = self.me.clone();
            let c = self.placer.start(move |me| Customer {
                me,
                id,
                token,
                factory,
            });
            self.room.do_send(Enter(c, token));
        }
        if self.customers == 0 {
            self.finish(ctx);
        }
    }
}

impl Handler<Returned> for Factory {
    type Result = ();

    fn handle(&mut self, Returned(c, token): Returned, _: &mut Context<Self>) {
        self.room.do_send(Enter(c, token));
    }
}

impl Handler<Served> for Factory {
    type Result = ();

    fn handle(&mut self, Served(_id, v): Served, ctx: &mut Context<Self>) {
        self.sum = self.sum.wrapping_add(v);
        self.served += 1;
        if self.served == self.customers {
            self.finish(ctx);
        }
    }
}

impl WaitingRoom {
    fn barber(&self) -> &Addr<Barber> {
        self.barber.as_ref().expect("barber set")
    }
}

impl Handler<SetBarber> for WaitingRoom {
    type Result = ();

    fn handle(&mut self, SetBarber(b): SetBarber, _: &mut Context<Self>) {
        self.barber = Some(b);
    }
}

impl Handler<Enter> for WaitingRoom {
    type Result = ();

    fn handle(&mut self, Enter(c, token): Enter, _: &mut Context<Self>) {
        if self.seated.len() == self.chairs {
            c.do_send(Full);
        } else if self.asleep {
            self.asleep = false;
            self.barber().do_send(Cut(c, token));
        } else {
            self.seated.push_back((c, token));
        }
    }
}

impl Handler<NextCustomer> for WaitingRoom {
    type Result = ();

    fn handle(&mut self, _: NextCustomer, _: &mut Context<Self>) {
        match self.seated.pop_front() {
            Some((c, token)) => self.barber().do_send(Cut(c, token)),
            None => self.asleep = true,
        }
    }
}

impl Handler<Stop> for WaitingRoom {
    type Result = ();

    /// The room and the barber hold each other's address: the room ends both.
    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        self.barber().do_send(Stop);
        ctx.stop();
    }
}

impl Handler<Cut> for Barber {
    type Result = ();

    fn handle(&mut self, Cut(c, token): Cut, _: &mut Context<Self>) {
        c.do_send(HaircutDone(common::busy(token, self.cut)));
        self.room.do_send(NextCustomer);
    }
}

impl Handler<Full> for Customer {
    type Result = ();

    fn handle(&mut self, _: Full, _: &mut Context<Self>) {
        self.factory.do_send(Returned(self.me.clone(), self.token));
    }
}

impl Handler<HaircutDone> for Customer {
    type Result = ();

    fn handle(&mut self, HaircutDone(v): HaircutDone, ctx: &mut Context<Self>) {
        self.factory.do_send(Served(self.id, v));
        ctx.stop();
    }
}

async fn sleeping_barber(
    p: &Arc<Placer>,
    customers: u64,
    room: u64,
    arrival: u64,
    cut: u64,
) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let chairs = room as usize;
    let room = p.start(move |_me| WaitingRoom {
        _me,
        chairs,
        seated: VecDeque::with_capacity(chairs),
        barber: None,
        asleep: true,
    });
    let barber = {
        let room = room.clone();
        p.start(move |_me| Barber { _me, cut, room })
    };
    room.do_send(SetBarber(barber));
    let placer = p.clone();
    let factory = p.start(move |me| Factory {
        me,
        placer,
        room,
        customers,
        arrival,
        served: 0,
        sum: 0,
        done,
    });
    factory.do_send(Start);
    drop(factory);
    common::wait(rx).await
}

// ---- cigarette-smokers (Savina's cigarette smokers) -----------------------------------------
/// The arbiter (`actix::Arbiter` is the thread).
struct CigArbiter {
    _me: Addr<CigArbiter>,
    smokers: Vec<Addr<Smoker>>,
    rounds: u64,
    smoke: u64,
    started: u64,
}
struct Smoker {
    _me: Addr<Smoker>,
    arbiter: Addr<CigArbiter>,
    sum: u64,
    done: Arc<Done>,
}
/// The arbiter's smokers (sent before `Start`).
struct Smokers(Vec<Addr<Smoker>>);
/// `Smoke(round, time)`.
struct Smoke(u64, u64);
struct Started;
struct Exit;
actor!(CigArbiter, Smoker);
message!(Smokers, Smoke, Started, Exit);

impl CigArbiter {
    /// Starts round `self.started`, or, after the last one, tells every smoker to exit and ends.
    fn next_round(&mut self, ctx: &mut Context<Self>) {
        if self.started == self.rounds {
            for s in &self.smokers {
                s.do_send(Exit);
            }
            ctx.stop();
            return;
        }
        let round = self.started;
        let (smoker, time) = common::cig_round(round, self.smokers.len() as u64, self.smoke);
        self.smokers[smoker as usize].do_send(Smoke(round, time));
    }
}

impl Handler<Smokers> for CigArbiter {
    type Result = ();

    fn handle(&mut self, Smokers(list): Smokers, _: &mut Context<Self>) {
        self.smokers = list;
    }
}

impl Handler<Start> for CigArbiter {
    type Result = ();

    fn handle(&mut self, _: Start, ctx: &mut Context<Self>) {
        self.next_round(ctx);
    }
}

impl Handler<Started> for CigArbiter {
    type Result = ();

    fn handle(&mut self, _: Started, ctx: &mut Context<Self>) {
        self.started += 1;
        self.next_round(ctx);
    }
}

impl Handler<Smoke> for Smoker {
    type Result = ();

    fn handle(&mut self, Smoke(round, time): Smoke, _: &mut Context<Self>) {
        self.arbiter.do_send(Started);
        self.sum = self.sum.wrapping_add(common::busy(round, time));
    }
}

impl Handler<Exit> for Smoker {
    type Result = ();

    fn handle(&mut self, _: Exit, ctx: &mut Context<Self>) {
        self.done.report(self.sum);
        ctx.stop();
    }
}

async fn cigarette_smokers(
    p: &Placer,
    smokers: u64,
    rounds: u64,
    smoke: u64,
) -> Result<u64, String> {
    let (done, rx) = Done::new(smokers);
    let arbiter = p.start(move |_me| CigArbiter {
        _me,
        smokers: Vec::new(),
        rounds,
        smoke,
        started: 0,
    });
    let list = (0..smokers)
        .map(|_| {
            let (arbiter, done) = (arbiter.clone(), done.clone());
            p.start(move |_me| Smoker {
                _me,
                arbiter,
                sum: 0,
                done,
            })
        })
        .collect();
    drop(done);
    arbiter.do_send(Smokers(list));
    arbiter.do_send(Start);
    drop(arbiter);
    common::wait(rx).await
}
