//! Workloads `ping-pong`, `counting`, `fork-join throughput / creation`, `thread-ring`,
//! `chameneos`, `big`, and the actors of `actorium-bench scale` (the system and its set-up: the
//! parent module).

use super::*;

// ---- ping-pong ------------------------------------------------------------------------------
struct Ping {
    pong: ActorRef<Pong>,
    n: u64,
    count: u64,
    done: Arc<Done>,
}
struct Pong {
    ping: Option<ActorRef<Ping>>,
}
struct Hello(ActorRef<Ping>);
struct Ball;
actor!(Ping, Pong);

impl Message<Start> for Ping {
    type Reply = ();

    async fn handle(&mut self, _: Start, ctx: &mut Context<Self, ()>) {
        send(&self.pong, Hello(ctx.actor_ref().clone()));
        send(&self.pong, Ball);
    }
}

impl Message<Ball> for Ping {
    type Reply = ();

    async fn handle(&mut self, b: Ball, ctx: &mut Context<Self, ()>) {
        self.count += 1;
        if self.count == self.n {
            stop(&self.pong).await;
            self.done.report(self.count);
            ctx.stop();
        } else {
            send(&self.pong, b);
        }
    }
}

impl Message<Hello> for Pong {
    type Reply = ();

    async fn handle(&mut self, Hello(p): Hello, _: &mut Context<Self, ()>) {
        self.ping = Some(p);
    }
}

impl Message<Ball> for Pong {
    type Reply = ();

    async fn handle(&mut self, b: Ball, _: &mut Context<Self, ()>) {
        send(self.ping.as_ref().expect("hello first"), b);
    }
}

pub(super) async fn ping_pong(n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let pong = spawn(Pong { ping: None });
    let ping = spawn(Ping {
        pong,
        n,
        count: 0,
        done,
    });
    send(&ping, Start);
    drop(ping);
    common::wait(rx).await
}

// ---- counting -------------------------------------------------------------------------------
struct Counter(u64);
struct Producer {
    counter: ActorRef<Counter>,
    n: u64,
    done: Arc<Done>,
}
struct Increment;
struct Get(ActorRef<Producer>);
struct Total(u64);
actor!(Counter, Producer);

impl Message<Increment> for Counter {
    type Reply = ();

    async fn handle(&mut self, _: Increment, _: &mut Context<Self, ()>) {
        self.0 += 1;
    }
}

impl Message<Get> for Counter {
    type Reply = ();

    async fn handle(&mut self, Get(p): Get, ctx: &mut Context<Self, ()>) {
        send(&p, Total(self.0));
        ctx.stop();
    }
}

impl Message<Start> for Producer {
    type Reply = ();

    async fn handle(&mut self, _: Start, ctx: &mut Context<Self, ()>) {
        for _ in 0..self.n {
            send(&self.counter, Increment);
        }
        send(&self.counter, Get(ctx.actor_ref().clone()));
    }
}

impl Message<Total> for Producer {
    type Reply = ();

    async fn handle(&mut self, Total(t): Total, ctx: &mut Context<Self, ()>) {
        self.done.report(t);
        ctx.stop();
    }
}

pub(super) async fn counting(n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let counter = spawn(Counter(0));
    let producer = spawn(Producer { counter, n, done });
    send(&producer, Start);
    drop(producer);
    common::wait(rx).await
}

// ---- fork-join throughput / creation ------------------------------------------------------
struct FjWorker {
    x: u64,
    count: u64,
    msgs: u64,
    done: Arc<Done>,
}
struct Work(u64);
actor!(FjWorker);

impl FjWorker {
    fn new(msgs: u64, done: &Arc<Done>) -> Self {
        FjWorker {
            x: 1,
            count: 0,
            msgs,
            done: done.clone(),
        }
    }
}

impl Message<Work> for FjWorker {
    type Reply = ();

    async fn handle(&mut self, Work(r): Work, ctx: &mut Context<Self, ()>) {
        self.x = tiny(self.x, r);
        self.count += 1;
        if self.count == self.msgs {
            std::hint::black_box(self.x);
            self.done.report(self.count);
            ctx.stop();
        }
    }
}

pub(super) async fn fj_throughput(actors: u64, msgs: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(actors);
    let workers: Vec<_> = (0..actors)
        .map(|_| spawn(FjWorker::new(msgs, &done)))
        .collect();
    drop(done);
    for r in 0..msgs {
        for w in &workers {
            send(w, Work(r));
        }
    }
    drop(workers);
    common::wait(rx).await
}

pub(super) async fn fj_creation(n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(n);
    for i in 0..n {
        send(&spawn(FjWorker::new(1, &done)), Work(i));
    }
    drop(done);
    common::wait(rx).await
}

pub(super) async fn scale(n: u64) -> Result<u64, String> {
    common::scale(n, |d| spawn(FjWorker::new(1, d)), |w, i| send(w, Work(i))).await
}

// ---- thread-ring ----------------------------------------------------------------------------
struct Node {
    index: u64,
    next: Option<ActorRef<Node>>,
    done: Arc<Done>,
}
struct SetNext(ActorRef<Node>);
struct Token(u64);
actor!(Node);

impl Message<SetNext> for Node {
    type Reply = ();

    async fn handle(&mut self, SetNext(next): SetNext, _: &mut Context<Self, ()>) {
        self.next = Some(next);
    }
}

impl Message<Token> for Node {
    type Reply = ();

    async fn handle(&mut self, Token(k): Token, _: &mut Context<Self, ()>) {
        if k > 0 {
            send(self.next.as_ref().expect("ring closed"), Token(k - 1));
        } else {
            self.done.report(self.index);
        }
    }
}

pub(super) async fn thread_ring(actors: u64, passes: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let nodes: Vec<_> = (0..actors)
        .map(|index| {
            spawn(Node {
                index,
                next: None,
                done: done.clone(),
            })
        })
        .collect();
    drop(done);
    for (i, node) in nodes.iter().enumerate() {
        send(node, SetNext(nodes[(i + 1) % nodes.len()].clone()));
    }
    send(&nodes[0], Token(passes));
    let last = common::wait(rx).await?;
    for node in &nodes {
        stop(node).await;
    }
    Ok(common::ring_checksum(last, passes, actors))
}

// ---- chameneos ------------------------------------------------------------------------------
struct Mall {
    waiting: Option<(ActorRef<Creature>, u8)>,
    meetings: u64,
    limit: u64,
    creatures: u64,
    stops: u64,
}
struct Creature {
    mall: ActorRef<Mall>,
    colour: u8,
    met: u64,
    done: Arc<Done>,
}
/// `Meet(creature, colour)`.
struct Meet(ActorRef<Creature>, u8);
struct Paired(u8);
struct Stop;
actor!(Mall, Creature);

impl Message<Meet> for Mall {
    type Reply = ();

    async fn handle(&mut self, Meet(c, colour): Meet, ctx: &mut Context<Self, ()>) {
        if self.meetings >= self.limit {
            send(&c, Stop);
            self.stops += 1;
            if let Some((w, _)) = self.waiting.take() {
                send(&w, Stop);
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
                send(&w, Paired(colour));
                send(&c, Paired(wc));
            }
        }
    }
}

impl Message<Start> for Creature {
    type Reply = ();

    async fn handle(&mut self, _: Start, ctx: &mut Context<Self, ()>) {
        send(&self.mall, Meet(ctx.actor_ref().clone(), self.colour));
    }
}

impl Message<Paired> for Creature {
    type Reply = ();

    async fn handle(&mut self, Paired(other): Paired, ctx: &mut Context<Self, ()>) {
        self.met += 1;
        self.colour = complement(self.colour, other);
        send(&self.mall, Meet(ctx.actor_ref().clone(), self.colour));
    }
}

impl Message<Stop> for Creature {
    type Reply = ();

    async fn handle(&mut self, _: Stop, ctx: &mut Context<Self, ()>) {
        self.done.report(self.met);
        ctx.stop();
    }
}

pub(super) async fn chameneos(creatures: u64, meetings: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(creatures);
    let mall = spawn(Mall {
        waiting: None,
        meetings: 0,
        limit: meetings,
        creatures,
        stops: 0,
    });
    let all: Vec<_> = (0..creatures)
        .map(|i| {
            spawn(Creature {
                mall: mall.clone(),
                colour: (i % 3) as u8,
                met: 0,
                done: done.clone(),
            })
        })
        .collect();
    drop((done, mall));
    for c in &all {
        send(c, Start);
    }
    drop(all);
    common::wait(rx).await
}

// ---- big ------------------------------------------------------------------------------------
type Peers = Arc<OnceLock<Vec<ActorRef<BigActor>>>>;

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
actor!(BigActor);

impl BigActor {
    fn ping(&mut self) {
        let peers = self.peers.get().expect("peers set");
        // Uniform among the other actors (the contract).
        let to = self.rng.other(self.me, peers.len() as u64);
        send(&peers[to as usize], BigPing(self.me));
        self.sent += 1;
    }
}

impl Message<Start> for BigActor {
    type Reply = ();

    async fn handle(&mut self, _: Start, _: &mut Context<Self, ()>) {
        self.ping();
    }
}

impl Message<BigPing> for BigActor {
    type Reply = ();

    async fn handle(&mut self, BigPing(from): BigPing, _: &mut Context<Self, ()>) {
        send(
            &self.peers.get().expect("peers set")[from as usize],
            BigPong,
        );
    }
}

impl Message<BigPong> for BigActor {
    type Reply = ();

    async fn handle(&mut self, _: BigPong, _: &mut Context<Self, ()>) {
        self.pongs += 1;
        if self.sent < self.pings {
            self.ping();
        } else if self.pongs == self.pings {
            self.done.report(self.pongs);
        }
    }
}

pub(super) async fn big(actors: u64, pings: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(actors);
    let peers: Peers = Arc::new(OnceLock::new());
    let all: Vec<_> = (0..actors)
        .map(|me| {
            spawn(BigActor {
                peers: peers.clone(),
                me,
                rng: XorShift::new(me),
                sent: 0,
                pongs: 0,
                pings,
                done: done.clone(),
            })
        })
        .collect();
    drop(done);
    let _ = peers.set(all.clone());
    for a in &all {
        send(a, Start);
    }
    let total = common::wait(rx).await?;
    // Every actor answers pings until all are done: end them now.
    for a in &all {
        stop(a).await;
    }
    Ok(total)
}
