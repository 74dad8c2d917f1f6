//! Workloads `ping-pong`, `counting`, `fork-join throughput / creation`, `thread-ring`,
//! `chameneos`, `big`, and the actors of `actorium-bench scale` (the system and its set-up: the
//! parent module).

use super::*;

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

pub(super) async fn ping_pong(p: &Placer, n: u64) -> Result<u64, String> {
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

pub(super) async fn counting(p: &Placer, n: u64) -> Result<u64, String> {
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

pub(super) async fn fj_throughput(p: &Placer, actors: u64, msgs: u64) -> Result<u64, String> {
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

pub(super) async fn fj_creation(p: &Placer, n: u64) -> Result<u64, String> {
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

pub(super) async fn scale(p: &Placer, n: u64) -> Result<u64, String> {
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

pub(super) async fn thread_ring(p: &Placer, actors: u64, passes: u64) -> Result<u64, String> {
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

pub(super) async fn chameneos(p: &Placer, creatures: u64, meetings: u64) -> Result<u64, String> {
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

pub(super) async fn big(p: &Placer, actors: u64, pings: u64) -> Result<u64, String> {
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
