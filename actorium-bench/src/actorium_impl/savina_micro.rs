//! Workloads `ping-pong`, `counting`, `fork-join throughput / creation`, `thread-ring`,
//! `chameneos`, `big`, and the actors of `actorium-bench scale` (the system and its set-up: the
//! parent module).

use super::*;

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

pub(super) fn ping_pong(s: &ActorSystem, n: u64) -> u64 {
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

pub(super) fn counting(s: &ActorSystem, n: u64) -> u64 {
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

pub(super) fn fj_throughput(s: &ActorSystem, actors: u64, msgs: u64) -> u64 {
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

pub(super) fn fj_creation(s: &ActorSystem, n: u64) -> u64 {
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
pub(super) fn scale(s: &ActorSystem, n: u64) -> u64 {
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

pub(super) fn thread_ring(s: &ActorSystem, actors: u64, passes: u64) -> u64 {
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

pub(super) fn chameneos(s: &ActorSystem, creatures: u64, meetings: u64) -> u64 {
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

pub(super) fn big(s: &ActorSystem, actors: u64, pings: u64) -> u64 {
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
