//! The workloads on kameo 0.22: a tokio multi-thread runtime with `worker_threads(T)`, actors
//! spawned with `spawn_with_mailbox(.., mailbox::unbounded())`, messages sent with
//! `tell(..).try_send()`, actors ended with `ctx.stop()` from inside or `stop_gracefully()` from
//! outside.
//!
//! Unbounded mailboxes: kameo's default is a bounded mailbox of 64, whose `tell` waits for room;
//! the workloads (and the other systems) assume fire-and-forget sends that never block, and
//! actors that send to their own group (executor) or to themselves could deadlock on a full
//! bounded mailbox.

use crate::common::{self, complement, row_sum, tiny, Bench, Done, XorShift};
use kameo::actor::{ActorRef, Spawn};
use kameo::error::Infallible;
use kameo::mailbox;
use kameo::message::{Context, Message};
use kameo::Actor;
use std::collections::VecDeque;
use std::sync::{Arc, OnceLock};

/// Runs one workload on a fresh runtime; the clock starts once the runtime is up.
pub fn run(threads: usize, work: Bench) -> Result<(f64, u64), String> {
    crate::common::on_tokio(threads, move || async move {
        match work {
            Bench::StaticSend { n } => static_send(n).await,
            Bench::DynamicSend { n } => dynamic_send(n).await,
            Bench::Executor {
                actors,
                group,
                rounds,
            } => executor(actors, group, rounds).await,
            Bench::Repeat { servers, reps } => repeat(servers, reps).await,
            Bench::Matrix { n, x, y } => matrix(n, x, y).await,
            Bench::PingPong { n } => ping_pong(n).await,
            Bench::Counting { n } => counting(n).await,
            Bench::ForkJoinThroughput { actors, msgs } => fj_throughput(actors, msgs).await,
            Bench::ForkJoinCreation { n } => fj_creation(n).await,
            Bench::Scale { n } => scale(n).await,
            Bench::ThreadRing { actors, passes } => thread_ring(actors, passes).await,
            Bench::Chameneos {
                creatures,
                meetings,
            } => chameneos(creatures, meetings).await,
            Bench::Big { actors, pings } => big(actors, pings).await,
            Bench::LogisticMap { series, terms } => logistic_map(series, terms).await,
            Bench::Banking {
                accounts,
                transactions,
            } => banking(accounts, transactions).await,
            Bench::Dictionary {
                workers,
                msgs,
                write,
            } => dictionary(workers, msgs, write).await,
            Bench::BoundedBuffer {
                producers,
                consumers,
                items,
                buffer,
                cost,
            } => bounded_buffer(producers, consumers, items, buffer, cost).await,
            Bench::SleepingBarber {
                customers,
                room,
                arrival,
                cut,
            } => sleeping_barber(customers, room, arrival, cut).await,
            Bench::CigaretteSmokers {
                smokers,
                rounds,
                smoke,
            } => cigarette_smokers(smokers, rounds, smoke).await,
        }
    })
}

/// Every actor here is its own start argument.
macro_rules! actor {
    ($($t:ty),* $(,)?) => {$(
        impl Actor for $t {
            type Args = Self;
            type Error = Infallible;

            async fn on_start(args: Self, _: ActorRef<Self>) -> Result<Self, Infallible> {
                Ok(args)
            }
        }
    )*};
}

/// Spawns an actor with an unbounded mailbox.
fn spawn<A: Actor<Args = A>>(actor: A) -> ActorRef<A> {
    A::spawn_with_mailbox(actor, mailbox::unbounded())
}

/// Fire-and-forget send; every workload sends only to live actors.
#[inline]
fn send<A: Message<M>, M: Send + 'static>(to: &ActorRef<A>, msg: M) {
    if to.tell(msg).try_send().is_err() {
        panic!("kameo: message sent to a stopped actor");
    }
}

/// Asks `a` to stop once its mailbox is drained.
async fn stop<A: Actor>(a: &ActorRef<A>) {
    let _ = a.stop_gracefully().await;
}

// ---- static-send ----------------------------------------------------------------------------
struct SelfSender {
    n: u64,
    count: u64,
    done: Arc<Done>,
}
struct Tick;
actor!(SelfSender);

impl Message<Tick> for SelfSender {
    type Reply = ();

    async fn handle(&mut self, t: Tick, ctx: &mut Context<Self, ()>) {
        self.count += 1;
        if self.count < self.n {
            send(ctx.actor_ref(), t);
        } else {
            self.done.report(self.count);
            ctx.stop();
        }
    }
}

async fn static_send(n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let a = spawn(SelfSender { n, count: 0, done });
    send(&a, Tick);
    drop(a);
    common::wait(rx).await
}

// ---- dynamic-send ---------------------------------------------------------------------------
struct Hop(Arc<Done>);
/// `Go(k, n)`.
struct Go(u64, u64);
actor!(Hop);

impl Message<Go> for Hop {
    type Reply = ();

    async fn handle(&mut self, Go(k, n): Go, ctx: &mut Context<Self, ()>) {
        if k < n {
            send(&spawn(Hop(self.0.clone())), Go(k + 1, n));
        } else {
            self.0.report(k);
        }
        ctx.stop();
    }
}

async fn dynamic_send(n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    send(&spawn(Hop(done)), Go(1, n));
    common::wait(rx).await
}

// ---- executor -------------------------------------------------------------------------------
type Group = Arc<OnceLock<Vec<ActorRef<Member>>>>;

struct Member {
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

impl Message<ExecMsg> for Member {
    type Reply = ();

    async fn handle(&mut self, m: ExecMsg, ctx: &mut Context<Self, ()>) {
        self.recv += 1;
        if self.sent < self.total {
            let to = (self.local + self.sent) % self.size;
            send(&self.group.get().expect("group set")[to as usize], m);
            self.sent += 1;
        }
        if self.recv == self.total + 1 {
            self.done.report(self.recv);
            ctx.stop();
        }
    }
}

async fn executor(actors: u64, size: u64, rounds: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(actors);
    let mut all = Vec::with_capacity(actors as usize);
    let mut groups: Vec<Group> = Vec::new();
    for i in 0..actors {
        if i % size == 0 {
            groups.push(Arc::new(OnceLock::new()));
        }
        all.push(spawn(Member {
            group: groups.last().expect("a group").clone(),
            local: i % size,
            size,
            total: rounds * size,
            sent: 0,
            recv: 0,
            done: done.clone(),
        }));
    }
    drop(done);
    let size = size as usize;
    for (g, lock) in groups.iter().enumerate() {
        let _ = lock.set(all[g * size..(g + 1) * size].to_vec());
    }
    for a in &all {
        send(a, ExecMsg);
    }
    drop((all, groups));
    common::wait(rx).await
}

// ---- repeat ---------------------------------------------------------------------------------
struct Client {
    servers: Vec<ActorRef<Server>>,
    reps_left: u64,
    pending: u64,
    sum: u64,
    done: Arc<Done>,
}
struct Server {
    index: u64,
    client: ActorRef<Client>,
}
struct Servers(Vec<ActorRef<Server>>);
struct Start;
struct Req;
struct Rep(u64);
actor!(Client, Server);

impl Client {
    fn scatter(&mut self) {
        self.pending = self.servers.len() as u64;
        for s in &self.servers {
            send(s, Req);
        }
    }
}

impl Message<Servers> for Client {
    type Reply = ();

    async fn handle(&mut self, Servers(list): Servers, _: &mut Context<Self, ()>) {
        self.servers = list;
    }
}

impl Message<Start> for Client {
    type Reply = ();

    async fn handle(&mut self, _: Start, _: &mut Context<Self, ()>) {
        self.scatter();
    }
}

impl Message<Rep> for Client {
    type Reply = ();

    async fn handle(&mut self, Rep(index): Rep, ctx: &mut Context<Self, ()>) {
        self.sum += index + 1;
        self.pending -= 1;
        if self.pending == 0 {
            self.reps_left -= 1;
            if self.reps_left == 0 {
                for s in self.servers.drain(..) {
                    stop(&s).await;
                }
                self.done.report(self.sum);
                ctx.stop();
            } else {
                self.scatter();
            }
        }
    }
}

impl Message<Req> for Server {
    type Reply = ();

    async fn handle(&mut self, _: Req, _: &mut Context<Self, ()>) {
        send(&self.client, Rep(self.index));
    }
}

async fn repeat(servers: u64, reps: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let client = spawn(Client {
        servers: Vec::new(),
        reps_left: reps,
        pending: 0,
        sum: 0,
        done,
    });
    let list = (0..servers)
        .map(|index| {
            spawn(Server {
                index,
                client: client.clone(),
            })
        })
        .collect();
    send(&client, Servers(list));
    send(&client, Start);
    drop(client);
    common::wait(rx).await
}

// ---- matrix ---------------------------------------------------------------------------------
struct RowWorker {
    x: Arc<Vec<u64>>,
    y: Arc<Vec<u64>>,
    n: usize,
    done: Arc<Done>,
}
struct Row(usize);
actor!(RowWorker);

impl Message<Row> for RowWorker {
    type Reply = ();

    async fn handle(&mut self, Row(i): Row, ctx: &mut Context<Self, ()>) {
        self.done.report(row_sum(&self.x, &self.y, self.n, i));
        ctx.stop();
    }
}

async fn matrix(n: usize, x: Arc<Vec<u64>>, y: Arc<Vec<u64>>) -> Result<u64, String> {
    let (done, rx) = Done::new(n as u64);
    for i in 0..n {
        let w = spawn(RowWorker {
            x: x.clone(),
            y: y.clone(),
            n,
            done: done.clone(),
        });
        send(&w, Row(i));
    }
    drop(done);
    common::wait(rx).await
}

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

async fn ping_pong(n: u64) -> Result<u64, String> {
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

async fn counting(n: u64) -> Result<u64, String> {
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

async fn fj_throughput(actors: u64, msgs: u64) -> Result<u64, String> {
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

async fn fj_creation(n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(n);
    for i in 0..n {
        send(&spawn(FjWorker::new(1, &done)), Work(i));
    }
    drop(done);
    common::wait(rx).await
}

async fn scale(n: u64) -> Result<u64, String> {
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

async fn thread_ring(actors: u64, passes: u64) -> Result<u64, String> {
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

async fn chameneos(creatures: u64, meetings: u64) -> Result<u64, String> {
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

async fn big(actors: u64, pings: u64) -> Result<u64, String> {
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

// ---- dictionary (Savina's concurrent dictionary) ----------------------------------------------
struct Dictionary {
    map: common::DictMap,
}
struct DictWorker {
    dict: ActorRef<Dictionary>,
    id: u64,
    msgs: u64,
    write: u64,
    sent: u64,
    last: u64,
    sum: u64,
    done: Arc<Done>,
}
/// A request: the key, the value to write (`None`: read), and whom to answer.
struct DictOp(u64, Option<u64>, ActorRef<DictWorker>);
struct DictReply(u64);
actor!(Dictionary, DictWorker);

impl Message<DictOp> for Dictionary {
    type Reply = ();

    async fn handle(&mut self, DictOp(key, value, from): DictOp, _: &mut Context<Self, ()>) {
        let reply = self.map.apply(key, value);
        send(&from, DictReply(reply));
    }
}

impl DictWorker {
    fn request(&mut self, me: &ActorRef<DictWorker>) {
        let (key, value) =
            common::dict_request(self.id, self.msgs, self.sent, self.write, &mut self.last);
        self.sent += 1;
        send(&self.dict, DictOp(key, value, me.clone()));
    }
}

impl Message<Start> for DictWorker {
    type Reply = ();

    async fn handle(&mut self, _: Start, ctx: &mut Context<Self, ()>) {
        self.request(ctx.actor_ref());
    }
}

impl Message<DictReply> for DictWorker {
    type Reply = ();

    async fn handle(&mut self, DictReply(v): DictReply, ctx: &mut Context<Self, ()>) {
        self.sum += v;
        if self.sent < self.msgs {
            self.request(ctx.actor_ref());
        } else {
            self.done.report(self.sum);
        }
    }
}

async fn dictionary(workers: u64, msgs: u64, write: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(workers);
    let dict = spawn(Dictionary {
        map: common::DictMap::default(),
    });
    let all: Vec<_> = (0..workers)
        .map(|id| {
            spawn(DictWorker {
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
    drop(done);
    for w in &all {
        send(w, Start);
    }
    let total = common::wait(rx).await?;
    for w in &all {
        stop(w).await;
    }
    stop(&dict).await;
    Ok(total)
}

// ---- banking (Savina's bank transaction) -----------------------------------------------------
type Accounts = Arc<OnceLock<Vec<ActorRef<Account>>>>;
struct Teller {
    accounts: Accounts,
    transactions: u64,
    completed: u64,
    balances: Vec<(u64, u64)>,
    done: Arc<Done>,
}
struct Account {
    index: u64,
    balance: u64,
    accounts: Accounts,
    teller: ActorRef<Teller>,
}
struct Transfer(u64, u64);
struct Credit(u64, u64);
struct Credited;
struct Completed;
struct Report;
struct Balance(u64, u64);
actor!(Teller, Account);

impl Teller {
    fn ask_balances(&self) {
        for a in self.accounts.get().expect("accounts set") {
            send(a, Report);
        }
    }
}

impl Message<Start> for Teller {
    type Reply = ();

    async fn handle(&mut self, _: Start, _: &mut Context<Self, ()>) {
        let accounts = self.accounts.get().expect("accounts set");
        for t in 0..self.transactions {
            let (from, to, amount) = common::bank_transfer(t, accounts.len() as u64);
            send(&accounts[from as usize], Transfer(to, amount));
        }
        if self.transactions == 0 {
            self.ask_balances();
        }
    }
}

impl Message<Completed> for Teller {
    type Reply = ();

    async fn handle(&mut self, _: Completed, _: &mut Context<Self, ()>) {
        self.completed += 1;
        if self.completed == self.transactions {
            self.ask_balances();
        }
    }
}

impl Message<Balance> for Teller {
    type Reply = ();

    async fn handle(&mut self, Balance(i, b): Balance, _: &mut Context<Self, ()>) {
        self.balances.push((i, b));
        if self.balances.len() == self.accounts.get().expect("accounts set").len() {
            self.done
                .report(common::bank_checksum(self.balances.drain(..)));
        }
    }
}

impl Message<Transfer> for Account {
    type Reply = ();

    async fn handle(&mut self, Transfer(to, amount): Transfer, _: &mut Context<Self, ()>) {
        self.balance -= amount;
        send(
            &self.accounts.get().expect("accounts set")[to as usize],
            Credit(self.index, amount),
        );
    }
}

impl Message<Credit> for Account {
    type Reply = ();

    async fn handle(&mut self, Credit(from, amount): Credit, _: &mut Context<Self, ()>) {
        self.balance += amount;
        send(
            &self.accounts.get().expect("accounts set")[from as usize],
            Credited,
        );
    }
}

impl Message<Credited> for Account {
    type Reply = ();

    async fn handle(&mut self, _: Credited, _: &mut Context<Self, ()>) {
        send(&self.teller, Completed);
    }
}

impl Message<Report> for Account {
    type Reply = ();

    async fn handle(&mut self, _: Report, _: &mut Context<Self, ()>) {
        send(&self.teller, Balance(self.index, self.balance));
    }
}

async fn banking(accounts: u64, transactions: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let all: Accounts = Arc::new(OnceLock::new());
    let teller = spawn(Teller {
        accounts: all.clone(),
        transactions,
        completed: 0,
        balances: Vec::new(),
        done,
    });
    let list: Vec<_> = (0..accounts)
        .map(|index| {
            spawn(Account {
                index,
                balance: common::BANK_INITIAL,
                accounts: all.clone(),
                teller: teller.clone(),
            })
        })
        .collect();
    let _ = all.set(list.clone());
    send(&teller, Start);
    let total = common::wait(rx).await?;
    for a in &list {
        stop(a).await;
    }
    stop(&teller).await;
    Ok(total)
}

// ---- logistic-map (Savina's logistic map series) ---------------------------------------------
struct LogMaster {
    series: Arc<OnceLock<Vec<ActorRef<Series>>>>,
    rounds: common::TermRounds,
    done: Arc<Done>,
}
struct Series {
    term: u64,
    computer: ActorRef<RateComputer>,
    master: ActorRef<LogMaster>,
}
struct RateComputer {
    index: u64,
}
struct NextTerm;
struct Compute(u64, ActorRef<Series>);
struct Computed(u64);
struct TermDone(u64);
actor!(LogMaster, Series, RateComputer);

impl LogMaster {
    fn round(&self) {
        for s in self.series.get().expect("series set") {
            send(s, NextTerm);
        }
    }
}

impl Message<Start> for LogMaster {
    type Reply = ();

    async fn handle(&mut self, _: Start, _: &mut Context<Self, ()>) {
        match self.rounds.start() {
            Some(sum) => self.done.report(sum),
            None => self.round(),
        }
    }
}

impl Message<TermDone> for LogMaster {
    type Reply = ();

    async fn handle(&mut self, TermDone(x): TermDone, _: &mut Context<Self, ()>) {
        match self.rounds.answer(x) {
            common::Round::Next => self.round(),
            common::Round::Done(sum) => self.done.report(sum),
            common::Round::Wait => {}
        }
    }
}

impl Message<NextTerm> for Series {
    type Reply = ();

    async fn handle(&mut self, _: NextTerm, ctx: &mut Context<Self, ()>) {
        send(&self.computer, Compute(self.term, ctx.actor_ref().clone()));
    }
}

impl Message<Computed> for Series {
    type Reply = ();

    async fn handle(&mut self, Computed(x): Computed, _: &mut Context<Self, ()>) {
        self.term = x;
        send(&self.master, TermDone(x));
    }
}

impl Message<Compute> for RateComputer {
    type Reply = ();

    async fn handle(&mut self, Compute(x, from): Compute, _: &mut Context<Self, ()>) {
        send(&from, Computed(common::logmap_next(self.index, x)));
    }
}

async fn logistic_map(series: u64, terms: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let list = Arc::new(OnceLock::new());
    let master = spawn(LogMaster {
        series: list.clone(),
        rounds: common::TermRounds::new(series, terms),
        done,
    });
    let computers: Vec<_> = (0..series)
        .map(|index| spawn(RateComputer { index }))
        .collect();
    let all: Vec<_> = (0..series)
        .map(|index| {
            spawn(Series {
                term: common::logmap_start(index),
                computer: computers[index as usize].clone(),
                master: master.clone(),
            })
        })
        .collect();
    let _ = list.set(all.clone());
    send(&master, Start);
    let total = common::wait(rx).await?;
    for a in &all {
        stop(a).await;
    }
    for c in &computers {
        stop(c).await;
    }
    stop(&master).await;
    Ok(total)
}

// ---- bounded-buffer (Savina's producer–consumer with a bounded buffer) ---------------------
/// The manager's producers and consumers, set once all are spawned.
type BbPeers = Arc<OnceLock<(Vec<ActorRef<BbProducer>>, Vec<ActorRef<BbConsumer>>)>>;
struct BbManager {
    peers: BbPeers,
    book: common::BbBook,
}
struct BbProducer {
    index: u64,
    items: u64,
    made: u64,
    cost: u64,
    manager: ActorRef<BbManager>,
}
struct BbConsumer {
    index: usize,
    cost: u64,
    sum: u64,
    manager: ActorRef<BbManager>,
    done: Arc<Done>,
}
struct Produce;
/// An item and the index of its producer.
struct BbItem(u64, usize);
struct ProducerDone;
struct Consume(u64);
/// Consumer `c` is available.
struct ConsumerAvailable(usize);
struct ReportSum;
actor!(BbManager, BbProducer, BbConsumer);

impl BbManager {
    /// Sends what a step of the bookkeeping says; when every item is consumed, asks the
    /// consumers for their sums and ends.
    fn apply(&self, step: common::BbSend, ctx: &mut Context<Self, ()>) {
        let (producers, consumers) = self.peers.get().expect("peers set");
        if let Some((c, x)) = step.consume {
            send(&consumers[c], Consume(x));
        }
        if let Some(p) = step.produce {
            send(&producers[p], Produce);
        }
        if step.finished {
            for c in consumers {
                send(c, ReportSum);
            }
            ctx.stop();
        }
    }
}

impl Message<Start> for BbManager {
    type Reply = ();

    async fn handle(&mut self, _: Start, _: &mut Context<Self, ()>) {
        for p in &self.peers.get().expect("peers set").0 {
            send(p, Produce);
        }
    }
}

impl Message<BbItem> for BbManager {
    type Reply = ();

    async fn handle(&mut self, BbItem(x, p): BbItem, ctx: &mut Context<Self, ()>) {
        let step = self.book.item(x, p);
        self.apply(step, ctx);
    }
}

impl Message<ConsumerAvailable> for BbManager {
    type Reply = ();

    async fn handle(
        &mut self,
        ConsumerAvailable(c): ConsumerAvailable,
        ctx: &mut Context<Self, ()>,
    ) {
        let step = self.book.available(c);
        self.apply(step, ctx);
    }
}

impl Message<ProducerDone> for BbManager {
    type Reply = ();

    async fn handle(&mut self, _: ProducerDone, ctx: &mut Context<Self, ()>) {
        let step = self.book.producer_done();
        self.apply(step, ctx);
    }
}

impl Message<Produce> for BbProducer {
    type Reply = ();

    async fn handle(&mut self, _: Produce, ctx: &mut Context<Self, ()>) {
        if self.made < self.items {
            let x = common::bb_item(self.index, self.made, self.items, self.cost);
            self.made += 1;
            send(&self.manager, BbItem(x, self.index as usize));
        } else {
            send(&self.manager, ProducerDone);
            // Never asked again.
            ctx.stop();
        }
    }
}

impl Message<Consume> for BbConsumer {
    type Reply = ();

    async fn handle(&mut self, Consume(x): Consume, _: &mut Context<Self, ()>) {
        self.sum = self.sum.wrapping_add(common::busy(x, self.cost));
        send(&self.manager, ConsumerAvailable(self.index));
    }
}

impl Message<ReportSum> for BbConsumer {
    type Reply = ();

    async fn handle(&mut self, _: ReportSum, ctx: &mut Context<Self, ()>) {
        self.done.report(self.sum);
        ctx.stop();
    }
}

async fn bounded_buffer(
    producers: u64,
    consumers: u64,
    items: u64,
    capacity: u64,
    cost: u64,
) -> Result<u64, String> {
    let (done, rx) = Done::new(consumers);
    let peers: BbPeers = Arc::new(OnceLock::new());
    let (consumers, capacity) = (consumers as usize, capacity as usize);
    let manager = spawn(BbManager {
        peers: peers.clone(),
        book: common::BbBook::new(producers as usize, consumers, capacity),
    });
    let ps: Vec<_> = (0..producers)
        .map(|index| {
            spawn(BbProducer {
                index,
                items,
                made: 0,
                cost,
                manager: manager.clone(),
            })
        })
        .collect();
    let cs: Vec<_> = (0..consumers)
        .map(|index| {
            spawn(BbConsumer {
                index,
                cost,
                sum: 0,
                manager: manager.clone(),
                done: done.clone(),
            })
        })
        .collect();
    drop(done);
    let _ = peers.set((ps, cs));
    send(&manager, Start);
    drop((manager, peers));
    common::wait(rx).await
}

// ---- sleeping-barber (Savina's sleeping barber) ---------------------------------------------
struct Factory {
    customers: u64,
    arrival: u64,
    room: ActorRef<WaitingRoom>,
    served: u64,
    sum: u64,
    done: Arc<Done>,
}
struct WaitingRoom {
    chairs: usize,
    seated: VecDeque<(ActorRef<Customer>, u64)>,
    barber: Arc<OnceLock<ActorRef<Barber>>>,
    asleep: bool,
}
struct Barber {
    cut: u64,
    room: ActorRef<WaitingRoom>,
}
struct Customer {
    id: u64,
    token: u64,
    factory: ActorRef<Factory>,
}
/// A customer and its token.
struct Enter(ActorRef<Customer>, u64);
struct Full;
/// A customer the room turned away, with its token: send it in again.
struct Returned(ActorRef<Customer>, u64);
/// A customer and its token.
struct Cut(ActorRef<Customer>, u64);
struct NextCustomer;
struct HaircutDone(u64);
/// `Served(id, value)`.
struct Served(u64, u64);
struct Close;
actor!(Factory, WaitingRoom, Barber, Customer);

impl Factory {
    fn finish(&self, ctx: &mut Context<Self, ()>) {
        self.done.report(self.sum);
        ctx.stop();
    }
}

impl Message<Start> for Factory {
    type Reply = ();

    async fn handle(&mut self, _: Start, ctx: &mut Context<Self, ()>) {
        for id in 0..self.customers {
            let token = common::busy(id, self.arrival);
            let c = spawn(Customer {
                id,
                token,
                factory: ctx.actor_ref().clone(),
            });
            send(&self.room, Enter(c, token));
        }
        if self.customers == 0 {
            self.finish(ctx);
        }
    }
}

impl Message<Returned> for Factory {
    type Reply = ();

    async fn handle(&mut self, Returned(c, token): Returned, _: &mut Context<Self, ()>) {
        send(&self.room, Enter(c, token));
    }
}

impl Message<Served> for Factory {
    type Reply = ();

    async fn handle(&mut self, Served(_id, v): Served, ctx: &mut Context<Self, ()>) {
        self.sum = self.sum.wrapping_add(v);
        self.served += 1;
        if self.served == self.customers {
            self.finish(ctx);
        }
    }
}

impl Message<Enter> for WaitingRoom {
    type Reply = ();

    async fn handle(&mut self, Enter(c, token): Enter, _: &mut Context<Self, ()>) {
        if self.seated.len() == self.chairs {
            send(&c, Full);
        } else if self.asleep {
            self.asleep = false;
            send(self.barber.get().expect("barber set"), Cut(c, token));
        } else {
            self.seated.push_back((c, token));
        }
    }
}

impl Message<NextCustomer> for WaitingRoom {
    type Reply = ();

    async fn handle(&mut self, _: NextCustomer, _: &mut Context<Self, ()>) {
        match self.seated.pop_front() {
            Some((c, token)) => send(self.barber.get().expect("barber set"), Cut(c, token)),
            None => self.asleep = true,
        }
    }
}

impl Message<Close> for WaitingRoom {
    type Reply = ();

    async fn handle(&mut self, _: Close, ctx: &mut Context<Self, ()>) {
        ctx.stop();
    }
}

impl Message<Cut> for Barber {
    type Reply = ();

    async fn handle(&mut self, Cut(c, token): Cut, _: &mut Context<Self, ()>) {
        send(&c, HaircutDone(common::busy(token, self.cut)));
        send(&self.room, NextCustomer);
    }
}

impl Message<Close> for Barber {
    type Reply = ();

    async fn handle(&mut self, c: Close, ctx: &mut Context<Self, ()>) {
        // After the last `NextCustomer` this barber sent the room.
        send(&self.room, c);
        ctx.stop();
    }
}

impl Message<Full> for Customer {
    type Reply = ();

    async fn handle(&mut self, _: Full, ctx: &mut Context<Self, ()>) {
        send(&self.factory, Returned(ctx.actor_ref().clone(), self.token));
    }
}

impl Message<HaircutDone> for Customer {
    type Reply = ();

    async fn handle(&mut self, HaircutDone(v): HaircutDone, ctx: &mut Context<Self, ()>) {
        send(&self.factory, Served(self.id, v));
        ctx.stop();
    }
}

async fn sleeping_barber(customers: u64, room: u64, arrival: u64, cut: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let chairs = room as usize;
    let slot = Arc::new(OnceLock::new());
    let room = spawn(WaitingRoom {
        chairs,
        seated: VecDeque::with_capacity(chairs),
        barber: slot.clone(),
        asleep: true,
    });
    let barber = spawn(Barber {
        cut,
        room: room.clone(),
    });
    let _ = slot.set(barber.clone());
    let factory = spawn(Factory {
        customers,
        arrival,
        room,
        served: 0,
        sum: 0,
        done,
    });
    send(&factory, Start);
    drop(factory);
    let total = common::wait(rx).await?;
    // The barber closes the room after its last `NextCustomer`, so no message finds the room
    // gone.
    send(&barber, Close);
    Ok(total)
}

// ---- cigarette-smokers (Savina's cigarette smokers) -----------------------------------------
struct Arbiter {
    smokers: Arc<OnceLock<Vec<ActorRef<Smoker>>>>,
    rounds: u64,
    smoke: u64,
    /// Rounds started (smokers that answered `StartedSmoking`).
    started: u64,
}
struct Smoker {
    arbiter: ActorRef<Arbiter>,
    sum: u64,
    done: Arc<Done>,
}
struct Smoke {
    round: u64,
    time: u64,
}
struct StartedSmoking;
struct ExitSmoker;
actor!(Arbiter, Smoker);

impl Arbiter {
    /// Starts round `self.started`, or tells every smoker to exit after the last one.
    fn next_round(&self, ctx: &mut Context<Self, ()>) {
        let smokers = self.smokers.get().expect("smokers set");
        if self.started == self.rounds {
            for s in smokers {
                send(s, ExitSmoker);
            }
            ctx.stop();
            return;
        }
        let round = self.started;
        let (smoker, time) = common::cig_round(round, smokers.len() as u64, self.smoke);
        send(&smokers[smoker as usize], Smoke { round, time });
    }
}

impl Message<Start> for Arbiter {
    type Reply = ();

    async fn handle(&mut self, _: Start, ctx: &mut Context<Self, ()>) {
        self.next_round(ctx);
    }
}

impl Message<StartedSmoking> for Arbiter {
    type Reply = ();

    async fn handle(&mut self, _: StartedSmoking, ctx: &mut Context<Self, ()>) {
        self.started += 1;
        self.next_round(ctx);
    }
}

impl Message<Smoke> for Smoker {
    type Reply = ();

    async fn handle(&mut self, Smoke { round, time }: Smoke, _: &mut Context<Self, ()>) {
        send(&self.arbiter, StartedSmoking);
        self.sum = self.sum.wrapping_add(common::busy(round, time));
    }
}

impl Message<ExitSmoker> for Smoker {
    type Reply = ();

    async fn handle(&mut self, _: ExitSmoker, ctx: &mut Context<Self, ()>) {
        self.done.report(self.sum);
        ctx.stop();
    }
}

async fn cigarette_smokers(smokers: u64, rounds: u64, smoke: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(smokers);
    let list = Arc::new(OnceLock::new());
    let arbiter = spawn(Arbiter {
        smokers: list.clone(),
        rounds,
        smoke,
        started: 0,
    });
    let all: Vec<_> = (0..smokers)
        .map(|_| {
            spawn(Smoker {
                arbiter: arbiter.clone(),
                sum: 0,
                done: done.clone(),
            })
        })
        .collect();
    drop(done);
    let _ = list.set(all);
    send(&arbiter, Start);
    drop((arbiter, list));
    common::wait(rx).await
}
