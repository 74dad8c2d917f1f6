//! The workloads on ractor 0.16: a tokio multi-thread runtime with `worker_threads(T)`,
//! actors spawned with `Actor::spawn` (unsupervised, unnamed), messages sent with `cast`,
//! actors ended with `stop(None)`.

use crate::common::{self, complement, row_sum, tiny, Bench, Done, XorShift};
use ractor::{Actor, ActorProcessingErr, ActorRef, Message};
use std::collections::VecDeque;
use std::sync::{Arc, OnceLock};

type Handled = Result<(), ActorProcessingErr>;
type Started<S> = Result<S, ActorProcessingErr>;

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

/// Spawns an unsupervised, unnamed actor and returns its reference.
async fn spawn<A: Actor>(handler: A, args: A::Arguments) -> ActorRef<A::Msg> {
    match A::spawn(None, handler, args).await {
        Ok((actor, _join)) => actor,
        Err(e) => panic!("ractor: spawn failed: {e}"),
    }
}

/// Fire-and-forget send; every workload sends only to live actors.
#[inline]
fn send<M: Message>(to: &ActorRef<M>, msg: M) {
    if to.cast(msg).is_err() {
        panic!("ractor: message sent to a stopped actor");
    }
}

// ---- static-send ----------------------------------------------------------------------------
struct SelfSender;
struct Tick;
struct SelfSenderState {
    n: u64,
    count: u64,
    done: Arc<Done>,
}

impl Actor for SelfSender {
    type Msg = Tick;
    type State = SelfSenderState;
    type Arguments = SelfSenderState;

    async fn pre_start(&self, _: ActorRef<Tick>, args: Self::State) -> Started<Self::State> {
        Ok(args)
    }

    async fn handle(&self, myself: ActorRef<Tick>, t: Tick, st: &mut Self::State) -> Handled {
        st.count += 1;
        if st.count < st.n {
            send(&myself, t);
        } else {
            st.done.report(st.count);
            myself.stop(None);
        }
        Ok(())
    }
}

async fn static_send(n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let a = spawn(SelfSender, SelfSenderState { n, count: 0, done }).await;
    send(&a, Tick);
    drop(a);
    common::wait(rx).await
}

// ---- dynamic-send ---------------------------------------------------------------------------
struct Hop;
/// `Go(k, n)`.
struct Go(u64, u64);

impl Actor for Hop {
    type Msg = Go;
    type State = Arc<Done>;
    type Arguments = Arc<Done>;

    async fn pre_start(&self, _: ActorRef<Go>, done: Arc<Done>) -> Started<Arc<Done>> {
        Ok(done)
    }

    async fn handle(&self, myself: ActorRef<Go>, Go(k, n): Go, done: &mut Arc<Done>) -> Handled {
        if k < n {
            let next = spawn(Hop, done.clone()).await;
            send(&next, Go(k + 1, n));
        } else {
            done.report(k);
        }
        myself.stop(None);
        Ok(())
    }
}

async fn dynamic_send(n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let first = spawn(Hop, done).await;
    send(&first, Go(1, n));
    drop(first);
    common::wait(rx).await
}

// ---- executor -------------------------------------------------------------------------------
type Group = Arc<OnceLock<Vec<ActorRef<ExecMsg>>>>;

struct Member;
struct ExecMsg;
struct MemberState {
    group: Group,
    local: u64,
    size: u64,
    /// R = rounds * group.
    total: u64,
    sent: u64,
    recv: u64,
    done: Arc<Done>,
}

impl Actor for Member {
    type Msg = ExecMsg;
    type State = MemberState;
    type Arguments = MemberState;

    async fn pre_start(&self, _: ActorRef<ExecMsg>, args: Self::State) -> Started<Self::State> {
        Ok(args)
    }

    async fn handle(&self, me: ActorRef<ExecMsg>, m: ExecMsg, st: &mut Self::State) -> Handled {
        st.recv += 1;
        if st.sent < st.total {
            let to = (st.local + st.sent) % st.size;
            send(&st.group.get().expect("group set")[to as usize], m);
            st.sent += 1;
        }
        if st.recv == st.total + 1 {
            st.done.report(st.recv);
            me.stop(None);
        }
        Ok(())
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
        let state = MemberState {
            group: groups.last().expect("a group").clone(),
            local: i % size,
            size,
            total: rounds * size,
            sent: 0,
            recv: 0,
            done: done.clone(),
        };
        all.push(spawn(Member, state).await);
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
struct Client;
enum ClientMsg {
    Servers(Vec<ActorRef<Req>>),
    Start,
    Rep(u64),
}
struct ClientState {
    servers: Vec<ActorRef<Req>>,
    reps_left: u64,
    pending: u64,
    sum: u64,
    done: Arc<Done>,
}
struct Server;
struct Req;
struct ServerState {
    index: u64,
    client: ActorRef<ClientMsg>,
}

impl ClientState {
    fn scatter(&mut self) {
        self.pending = self.servers.len() as u64;
        for s in &self.servers {
            send(s, Req);
        }
    }
}

impl Actor for Client {
    type Msg = ClientMsg;
    type State = ClientState;
    type Arguments = ClientState;

    async fn pre_start(&self, _: ActorRef<ClientMsg>, args: Self::State) -> Started<Self::State> {
        Ok(args)
    }

    async fn handle(&self, me: ActorRef<ClientMsg>, m: ClientMsg, st: &mut ClientState) -> Handled {
        match m {
            ClientMsg::Servers(list) => st.servers = list,
            ClientMsg::Start => st.scatter(),
            ClientMsg::Rep(index) => {
                st.sum += index + 1;
                st.pending -= 1;
                if st.pending == 0 {
                    st.reps_left -= 1;
                    if st.reps_left == 0 {
                        for s in st.servers.drain(..) {
                            s.stop(None);
                        }
                        st.done.report(st.sum);
                        me.stop(None);
                    } else {
                        st.scatter();
                    }
                }
            }
        }
        Ok(())
    }
}

impl Actor for Server {
    type Msg = Req;
    type State = ServerState;
    type Arguments = ServerState;

    async fn pre_start(&self, _: ActorRef<Req>, args: Self::State) -> Started<Self::State> {
        Ok(args)
    }

    async fn handle(&self, _: ActorRef<Req>, _: Req, st: &mut ServerState) -> Handled {
        send(&st.client, ClientMsg::Rep(st.index));
        Ok(())
    }
}

async fn repeat(servers: u64, reps: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let client = spawn(
        Client,
        ClientState {
            servers: Vec::new(),
            reps_left: reps,
            pending: 0,
            sum: 0,
            done,
        },
    )
    .await;
    let mut list = Vec::with_capacity(servers as usize);
    for index in 0..servers {
        let state = ServerState {
            index,
            client: client.clone(),
        };
        list.push(spawn(Server, state).await);
    }
    send(&client, ClientMsg::Servers(list));
    send(&client, ClientMsg::Start);
    drop(client);
    common::wait(rx).await
}

// ---- matrix ---------------------------------------------------------------------------------
struct RowWorker;
struct Row(usize);
struct RowState {
    x: Arc<Vec<u64>>,
    y: Arc<Vec<u64>>,
    n: usize,
    done: Arc<Done>,
}

impl Actor for RowWorker {
    type Msg = Row;
    type State = RowState;
    type Arguments = RowState;

    async fn pre_start(&self, _: ActorRef<Row>, args: Self::State) -> Started<Self::State> {
        Ok(args)
    }

    async fn handle(&self, me: ActorRef<Row>, Row(i): Row, st: &mut RowState) -> Handled {
        st.done.report(row_sum(&st.x, &st.y, st.n, i));
        me.stop(None);
        Ok(())
    }
}

async fn matrix(n: usize, x: Arc<Vec<u64>>, y: Arc<Vec<u64>>) -> Result<u64, String> {
    let (done, rx) = Done::new(n as u64);
    for i in 0..n {
        let state = RowState {
            x: x.clone(),
            y: y.clone(),
            n,
            done: done.clone(),
        };
        send(&spawn(RowWorker, state).await, Row(i));
    }
    drop(done);
    common::wait(rx).await
}

// ---- ping-pong ------------------------------------------------------------------------------
struct Ping;
enum PingMsg {
    Start,
    Ball,
}
struct PingState {
    pong: ActorRef<PongMsg>,
    n: u64,
    count: u64,
    done: Arc<Done>,
}
struct Pong;
enum PongMsg {
    Hello(ActorRef<PingMsg>),
    Ball,
}

impl Actor for Ping {
    type Msg = PingMsg;
    type State = PingState;
    type Arguments = PingState;

    async fn pre_start(&self, _: ActorRef<PingMsg>, args: Self::State) -> Started<Self::State> {
        Ok(args)
    }

    async fn handle(&self, me: ActorRef<PingMsg>, m: PingMsg, st: &mut PingState) -> Handled {
        match m {
            PingMsg::Start => {
                send(&st.pong, PongMsg::Hello(me.clone()));
                send(&st.pong, PongMsg::Ball);
            }
            PingMsg::Ball => {
                st.count += 1;
                if st.count == st.n {
                    st.pong.stop(None);
                    st.done.report(st.count);
                    me.stop(None);
                } else {
                    send(&st.pong, PongMsg::Ball);
                }
            }
        }
        Ok(())
    }
}

impl Actor for Pong {
    type Msg = PongMsg;
    type State = Option<ActorRef<PingMsg>>;
    type Arguments = ();

    async fn pre_start(&self, _: ActorRef<PongMsg>, _: ()) -> Started<Self::State> {
        Ok(None)
    }

    async fn handle(&self, _: ActorRef<PongMsg>, m: PongMsg, ping: &mut Self::State) -> Handled {
        match m {
            PongMsg::Hello(p) => *ping = Some(p),
            PongMsg::Ball => send(ping.as_ref().expect("hello first"), PingMsg::Ball),
        }
        Ok(())
    }
}

async fn ping_pong(n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let pong = spawn(Pong, ()).await;
    let state = PingState {
        pong,
        n,
        count: 0,
        done,
    };
    let ping = spawn(Ping, state).await;
    send(&ping, PingMsg::Start);
    drop(ping);
    common::wait(rx).await
}

// ---- counting -------------------------------------------------------------------------------
struct Counter;
enum CounterMsg {
    Increment,
    Get(ActorRef<ProducerMsg>),
}
struct Producer;
enum ProducerMsg {
    Start,
    Total(u64),
}
struct ProducerState {
    counter: ActorRef<CounterMsg>,
    n: u64,
    done: Arc<Done>,
}

impl Actor for Counter {
    type Msg = CounterMsg;
    type State = u64;
    type Arguments = ();

    async fn pre_start(&self, _: ActorRef<CounterMsg>, _: ()) -> Started<u64> {
        Ok(0)
    }

    async fn handle(&self, me: ActorRef<CounterMsg>, m: CounterMsg, total: &mut u64) -> Handled {
        match m {
            CounterMsg::Increment => *total += 1,
            CounterMsg::Get(p) => {
                send(&p, ProducerMsg::Total(*total));
                me.stop(None);
            }
        }
        Ok(())
    }
}

impl Actor for Producer {
    type Msg = ProducerMsg;
    type State = ProducerState;
    type Arguments = ProducerState;

    async fn pre_start(&self, _: ActorRef<ProducerMsg>, args: Self::State) -> Started<Self::State> {
        Ok(args)
    }

    async fn handle(
        &self,
        me: ActorRef<ProducerMsg>,
        m: ProducerMsg,
        st: &mut Self::State,
    ) -> Handled {
        match m {
            ProducerMsg::Start => {
                for _ in 0..st.n {
                    send(&st.counter, CounterMsg::Increment);
                }
                send(&st.counter, CounterMsg::Get(me.clone()));
            }
            ProducerMsg::Total(t) => {
                st.done.report(t);
                me.stop(None);
            }
        }
        Ok(())
    }
}

async fn counting(n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let counter = spawn(Counter, ()).await;
    let producer = spawn(Producer, ProducerState { counter, n, done }).await;
    send(&producer, ProducerMsg::Start);
    drop(producer);
    common::wait(rx).await
}

// ---- fork-join throughput / creation ------------------------------------------------------
struct FjWorker;
struct Work(u64);
struct FjState {
    x: u64,
    count: u64,
    msgs: u64,
    done: Arc<Done>,
}

impl FjState {
    fn new(msgs: u64, done: &Arc<Done>) -> Self {
        FjState {
            x: 1,
            count: 0,
            msgs,
            done: done.clone(),
        }
    }
}

impl Actor for FjWorker {
    type Msg = Work;
    type State = FjState;
    type Arguments = FjState;

    async fn pre_start(&self, _: ActorRef<Work>, args: Self::State) -> Started<Self::State> {
        Ok(args)
    }

    async fn handle(&self, me: ActorRef<Work>, Work(r): Work, st: &mut FjState) -> Handled {
        st.x = tiny(st.x, r);
        st.count += 1;
        if st.count == st.msgs {
            std::hint::black_box(st.x);
            st.done.report(st.count);
            me.stop(None);
        }
        Ok(())
    }
}

async fn fj_throughput(actors: u64, msgs: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(actors);
    let mut workers = Vec::with_capacity(actors as usize);
    for _ in 0..actors {
        workers.push(spawn(FjWorker, FjState::new(msgs, &done)).await);
    }
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
        send(&spawn(FjWorker, FjState::new(1, &done)).await, Work(i));
    }
    drop(done);
    common::wait(rx).await
}

async fn scale(n: u64) -> Result<u64, String> {
    common::mark("start");
    let (done, rx) = Done::new(n);
    let mut workers = Vec::with_capacity(n as usize);
    for _ in 0..n {
        workers.push(spawn(FjWorker, FjState::new(1, &done)).await);
    }
    drop(done);
    common::mark("spawned");
    for (i, w) in workers.iter().enumerate() {
        send(w, Work(i as u64));
    }
    let sum = common::wait(rx).await;
    common::mark("messaged");
    sum
}

// ---- thread-ring ----------------------------------------------------------------------------
struct Node;
enum NodeMsg {
    SetNext(ActorRef<NodeMsg>),
    Token(u64),
}
struct NodeState {
    index: u64,
    next: Option<ActorRef<NodeMsg>>,
    done: Arc<Done>,
}

impl Actor for Node {
    type Msg = NodeMsg;
    type State = NodeState;
    type Arguments = (u64, Arc<Done>);

    async fn pre_start(&self, _: ActorRef<NodeMsg>, a: (u64, Arc<Done>)) -> Started<NodeState> {
        let (index, done) = a;
        Ok(NodeState {
            index,
            next: None,
            done,
        })
    }

    async fn handle(&self, _: ActorRef<NodeMsg>, m: NodeMsg, st: &mut NodeState) -> Handled {
        match m {
            NodeMsg::SetNext(next) => st.next = Some(next),
            NodeMsg::Token(k) if k > 0 => send(
                st.next.as_ref().expect("ring closed"),
                NodeMsg::Token(k - 1),
            ),
            NodeMsg::Token(_) => st.done.report(st.index),
        }
        Ok(())
    }
}

async fn thread_ring(actors: u64, passes: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let mut nodes = Vec::with_capacity(actors as usize);
    for index in 0..actors {
        nodes.push(spawn(Node, (index, done.clone())).await);
    }
    drop(done);
    for (i, node) in nodes.iter().enumerate() {
        send(node, NodeMsg::SetNext(nodes[(i + 1) % nodes.len()].clone()));
    }
    send(&nodes[0], NodeMsg::Token(passes));
    let last = common::wait(rx).await?;
    for node in &nodes {
        node.stop(None);
    }
    Ok(common::ring_checksum(last, passes, actors))
}

// ---- chameneos ------------------------------------------------------------------------------
struct Mall;
/// `Meet(creature, colour)`.
struct Meet(ActorRef<CreatureMsg>, u8);
struct MallState {
    waiting: Option<(ActorRef<CreatureMsg>, u8)>,
    meetings: u64,
    limit: u64,
    creatures: u64,
    stops: u64,
}
struct Creature;
enum CreatureMsg {
    Start,
    Paired(u8),
    Stop,
}
struct CreatureState {
    mall: ActorRef<Meet>,
    colour: u8,
    met: u64,
    done: Arc<Done>,
}

impl Actor for Mall {
    type Msg = Meet;
    type State = MallState;
    type Arguments = MallState;

    async fn pre_start(&self, _: ActorRef<Meet>, args: Self::State) -> Started<Self::State> {
        Ok(args)
    }

    async fn handle(
        &self,
        me: ActorRef<Meet>,
        Meet(c, colour): Meet,
        st: &mut MallState,
    ) -> Handled {
        if st.meetings >= st.limit {
            send(&c, CreatureMsg::Stop);
            st.stops += 1;
            if let Some((w, _)) = st.waiting.take() {
                send(&w, CreatureMsg::Stop);
                st.stops += 1;
            }
            if st.stops == st.creatures {
                me.stop(None);
            }
            return Ok(());
        }
        match st.waiting.take() {
            None => st.waiting = Some((c, colour)),
            Some((w, wc)) => {
                st.meetings += 1;
                send(&w, CreatureMsg::Paired(colour));
                send(&c, CreatureMsg::Paired(wc));
            }
        }
        Ok(())
    }
}

impl Actor for Creature {
    type Msg = CreatureMsg;
    type State = CreatureState;
    type Arguments = CreatureState;

    async fn pre_start(&self, _: ActorRef<CreatureMsg>, args: Self::State) -> Started<Self::State> {
        Ok(args)
    }

    async fn handle(
        &self,
        me: ActorRef<CreatureMsg>,
        m: CreatureMsg,
        st: &mut Self::State,
    ) -> Handled {
        match m {
            CreatureMsg::Start => send(&st.mall, Meet(me, st.colour)),
            CreatureMsg::Paired(other) => {
                st.met += 1;
                st.colour = complement(st.colour, other);
                send(&st.mall, Meet(me, st.colour));
            }
            CreatureMsg::Stop => {
                st.done.report(st.met);
                me.stop(None);
            }
        }
        Ok(())
    }
}

async fn chameneos(creatures: u64, meetings: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(creatures);
    let mall = spawn(
        Mall,
        MallState {
            waiting: None,
            meetings: 0,
            limit: meetings,
            creatures,
            stops: 0,
        },
    )
    .await;
    let mut all = Vec::with_capacity(creatures as usize);
    for i in 0..creatures {
        let state = CreatureState {
            mall: mall.clone(),
            colour: (i % 3) as u8,
            met: 0,
            done: done.clone(),
        };
        all.push(spawn(Creature, state).await);
    }
    drop((done, mall));
    for c in &all {
        send(c, CreatureMsg::Start);
    }
    drop(all);
    common::wait(rx).await
}

// ---- big ------------------------------------------------------------------------------------
type Peers = Arc<OnceLock<Vec<ActorRef<BigMsg>>>>;

struct BigActor;
enum BigMsg {
    Start,
    Ping(u64),
    Pong,
}
struct BigState {
    peers: Peers,
    me: u64,
    rng: XorShift,
    sent: u64,
    pongs: u64,
    pings: u64,
    done: Arc<Done>,
}

impl BigState {
    fn ping(&mut self) {
        let peers = self.peers.get().expect("peers set");
        // Uniform among the other actors (the contract).
        let to = self.rng.other(self.me, peers.len() as u64);
        send(&peers[to as usize], BigMsg::Ping(self.me));
        self.sent += 1;
    }
}

impl Actor for BigActor {
    type Msg = BigMsg;
    type State = BigState;
    type Arguments = BigState;

    async fn pre_start(&self, _: ActorRef<BigMsg>, args: Self::State) -> Started<Self::State> {
        Ok(args)
    }

    async fn handle(&self, _: ActorRef<BigMsg>, m: BigMsg, st: &mut BigState) -> Handled {
        match m {
            BigMsg::Start => st.ping(),
            BigMsg::Ping(from) => send(
                &st.peers.get().expect("peers set")[from as usize],
                BigMsg::Pong,
            ),
            BigMsg::Pong => {
                st.pongs += 1;
                if st.sent < st.pings {
                    st.ping();
                } else if st.pongs == st.pings {
                    st.done.report(st.pongs);
                }
            }
        }
        Ok(())
    }
}

async fn big(actors: u64, pings: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(actors);
    let peers: Peers = Arc::new(OnceLock::new());
    let mut all = Vec::with_capacity(actors as usize);
    for me in 0..actors {
        let state = BigState {
            peers: peers.clone(),
            me,
            rng: XorShift::new(me),
            sent: 0,
            pongs: 0,
            pings,
            done: done.clone(),
        };
        all.push(spawn(BigActor, state).await);
    }
    drop(done);
    let _ = peers.set(all.clone());
    for a in &all {
        send(a, BigMsg::Start);
    }
    let total = common::wait(rx).await?;
    // Every actor answers pings until all are done: end them now.
    for a in &all {
        a.stop(None);
    }
    Ok(total)
}

// ---- dictionary (Savina's concurrent dictionary) ----------------------------------------------
struct Dictionary;
/// A request: the key, the value to write (`None`: read), and whom to answer.
struct DictOp(u64, Option<u64>, ActorRef<WorkerMsg>);

impl Actor for Dictionary {
    type Msg = DictOp;
    type State = common::DictMap;
    type Arguments = ();

    async fn pre_start(&self, _: ActorRef<DictOp>, _: ()) -> Started<Self::State> {
        Ok(common::DictMap::default())
    }

    async fn handle(&self, _: ActorRef<DictOp>, op: DictOp, map: &mut Self::State) -> Handled {
        let DictOp(key, value, from) = op;
        send(&from, WorkerMsg::Reply(map.apply(key, value)));
        Ok(())
    }
}

struct DictWorker;
enum WorkerMsg {
    Start,
    Reply(u64),
}
struct WorkerState {
    dict: ActorRef<DictOp>,
    id: u64,
    msgs: u64,
    write: u64,
    sent: u64,
    last: u64,
    sum: u64,
    done: Arc<Done>,
}

impl WorkerState {
    fn request(&mut self, me: &ActorRef<WorkerMsg>) {
        let (key, value) =
            common::dict_request(self.id, self.msgs, self.sent, self.write, &mut self.last);
        self.sent += 1;
        send(&self.dict, DictOp(key, value, me.clone()));
    }
}

impl Actor for DictWorker {
    type Msg = WorkerMsg;
    type State = WorkerState;
    type Arguments = WorkerState;

    async fn pre_start(&self, _: ActorRef<WorkerMsg>, args: WorkerState) -> Started<WorkerState> {
        Ok(args)
    }

    async fn handle(&self, me: ActorRef<WorkerMsg>, m: WorkerMsg, st: &mut WorkerState) -> Handled {
        match m {
            WorkerMsg::Start => st.request(&me),
            WorkerMsg::Reply(v) => {
                st.sum += v;
                if st.sent < st.msgs {
                    st.request(&me);
                } else {
                    st.done.report(st.sum);
                    me.stop(None);
                }
            }
        }
        Ok(())
    }
}

async fn dictionary(workers: u64, msgs: u64, write: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(workers);
    let dict = spawn(Dictionary, ()).await;
    let mut all = Vec::with_capacity(workers as usize);
    for id in 0..workers {
        let state = WorkerState {
            dict: dict.clone(),
            id,
            msgs,
            write,
            sent: 0,
            last: 0,
            sum: 0,
            done: done.clone(),
        };
        all.push(spawn(DictWorker, state).await);
    }
    drop(done);
    for w in &all {
        send(w, WorkerMsg::Start);
    }
    let total = common::wait(rx).await?;
    dict.stop(None);
    Ok(total)
}

// ---- banking (Savina's bank transaction) -----------------------------------------------------
type Accounts = Arc<OnceLock<Vec<ActorRef<AccountMsg>>>>;
struct Teller;
enum TellerMsg {
    Start,
    Completed,
    Balance(u64, u64),
}
struct TellerState {
    accounts: Accounts,
    transactions: u64,
    completed: u64,
    balances: Vec<(u64, u64)>,
    done: Arc<Done>,
}
struct Account;
enum AccountMsg {
    Transfer(u64, u64),
    Credit(u64, u64),
    Credited,
    Report,
}
struct AccountState {
    index: u64,
    balance: u64,
    accounts: Accounts,
    teller: ActorRef<TellerMsg>,
}

impl TellerState {
    fn ask_balances(&self) {
        for a in self.accounts.get().expect("accounts set") {
            send(a, AccountMsg::Report);
        }
    }
}

impl Actor for Teller {
    type Msg = TellerMsg;
    type State = TellerState;
    type Arguments = TellerState;

    async fn pre_start(&self, _: ActorRef<TellerMsg>, args: TellerState) -> Started<TellerState> {
        Ok(args)
    }

    async fn handle(&self, _: ActorRef<TellerMsg>, m: TellerMsg, st: &mut TellerState) -> Handled {
        match m {
            TellerMsg::Start => {
                let accounts = st.accounts.get().expect("accounts set");
                for t in 0..st.transactions {
                    let (from, to, amount) = common::bank_transfer(t, accounts.len() as u64);
                    send(&accounts[from as usize], AccountMsg::Transfer(to, amount));
                }
                if st.transactions == 0 {
                    st.ask_balances();
                }
            }
            TellerMsg::Completed => {
                st.completed += 1;
                if st.completed == st.transactions {
                    st.ask_balances();
                }
            }
            TellerMsg::Balance(i, b) => {
                st.balances.push((i, b));
                if st.balances.len() == st.accounts.get().expect("accounts set").len() {
                    st.done.report(common::bank_checksum(st.balances.drain(..)));
                }
            }
        }
        Ok(())
    }
}

impl Actor for Account {
    type Msg = AccountMsg;
    type State = AccountState;
    type Arguments = AccountState;

    async fn pre_start(
        &self,
        _: ActorRef<AccountMsg>,
        args: AccountState,
    ) -> Started<AccountState> {
        Ok(args)
    }

    async fn handle(
        &self,
        _: ActorRef<AccountMsg>,
        m: AccountMsg,
        st: &mut AccountState,
    ) -> Handled {
        let accounts = st.accounts.get().expect("accounts set");
        match m {
            AccountMsg::Transfer(to, amount) => {
                st.balance -= amount;
                send(&accounts[to as usize], AccountMsg::Credit(st.index, amount));
            }
            AccountMsg::Credit(from, amount) => {
                st.balance += amount;
                send(&accounts[from as usize], AccountMsg::Credited);
            }
            AccountMsg::Credited => send(&st.teller, TellerMsg::Completed),
            AccountMsg::Report => send(&st.teller, TellerMsg::Balance(st.index, st.balance)),
        }
        Ok(())
    }
}

async fn banking(accounts: u64, transactions: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let all: Accounts = Arc::new(OnceLock::new());
    let teller = spawn(
        Teller,
        TellerState {
            accounts: all.clone(),
            transactions,
            completed: 0,
            balances: Vec::new(),
            done,
        },
    )
    .await;
    let mut list = Vec::with_capacity(accounts as usize);
    for index in 0..accounts {
        let state = AccountState {
            index,
            balance: common::BANK_INITIAL,
            accounts: all.clone(),
            teller: teller.clone(),
        };
        list.push(spawn(Account, state).await);
    }
    let _ = all.set(list.clone());
    send(&teller, TellerMsg::Start);
    let total = common::wait(rx).await?;
    for a in &list {
        a.stop(None);
    }
    teller.stop(None);
    Ok(total)
}

// ---- logistic-map (Savina's logistic map series) ---------------------------------------------
struct LogMaster;
enum MasterMsg {
    Start,
    TermDone(u64),
}
struct MasterState {
    series: Arc<OnceLock<Vec<ActorRef<SeriesMsg>>>>,
    rounds: common::TermRounds,
    done: Arc<Done>,
}
struct Series;
enum SeriesMsg {
    NextTerm,
    Computed(u64),
}
struct SeriesState {
    term: u64,
    computer: ActorRef<(u64, ActorRef<SeriesMsg>)>,
    master: ActorRef<MasterMsg>,
}
struct RateComputer;

impl MasterState {
    fn round(&self) {
        for s in self.series.get().expect("series set") {
            send(s, SeriesMsg::NextTerm);
        }
    }
}

impl Actor for LogMaster {
    type Msg = MasterMsg;
    type State = MasterState;
    type Arguments = MasterState;

    async fn pre_start(&self, _: ActorRef<MasterMsg>, args: MasterState) -> Started<MasterState> {
        Ok(args)
    }

    async fn handle(&self, _: ActorRef<MasterMsg>, m: MasterMsg, st: &mut MasterState) -> Handled {
        match m {
            MasterMsg::Start => match st.rounds.start() {
                Some(sum) => st.done.report(sum),
                None => st.round(),
            },
            MasterMsg::TermDone(x) => match st.rounds.answer(x) {
                common::Round::Next => st.round(),
                common::Round::Done(sum) => st.done.report(sum),
                common::Round::Wait => {}
            },
        }
        Ok(())
    }
}

impl Actor for Series {
    type Msg = SeriesMsg;
    type State = SeriesState;
    type Arguments = SeriesState;

    async fn pre_start(&self, _: ActorRef<SeriesMsg>, args: SeriesState) -> Started<SeriesState> {
        Ok(args)
    }

    async fn handle(&self, me: ActorRef<SeriesMsg>, m: SeriesMsg, st: &mut SeriesState) -> Handled {
        match m {
            SeriesMsg::NextTerm => send(&st.computer, (st.term, me)),
            SeriesMsg::Computed(x) => {
                st.term = x;
                send(&st.master, MasterMsg::TermDone(x));
            }
        }
        Ok(())
    }
}

impl Actor for RateComputer {
    type Msg = (u64, ActorRef<SeriesMsg>);
    type State = u64;
    type Arguments = u64;

    async fn pre_start(&self, _: ActorRef<Self::Msg>, index: u64) -> Started<u64> {
        Ok(index)
    }

    async fn handle(&self, _: ActorRef<Self::Msg>, m: Self::Msg, index: &mut u64) -> Handled {
        let (x, from) = m;
        send(&from, SeriesMsg::Computed(common::logmap_next(*index, x)));
        Ok(())
    }
}

async fn logistic_map(series: u64, terms: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let list = Arc::new(OnceLock::new());
    let master = spawn(
        LogMaster,
        MasterState {
            series: list.clone(),
            rounds: common::TermRounds::new(series, terms),
            done,
        },
    )
    .await;
    let mut computers = Vec::with_capacity(series as usize);
    let mut all = Vec::with_capacity(series as usize);
    for index in 0..series {
        let computer = spawn(RateComputer, index).await;
        let state = SeriesState {
            term: common::logmap_start(index),
            computer: computer.clone(),
            master: master.clone(),
        };
        all.push(spawn(Series, state).await);
        computers.push(computer);
    }
    let _ = list.set(all.clone());
    send(&master, MasterMsg::Start);
    let total = common::wait(rx).await?;
    for a in &all {
        a.stop(None);
    }
    for c in &computers {
        c.stop(None);
    }
    master.stop(None);
    Ok(total)
}

// ---- bounded-buffer (Savina's producer–consumer with a bounded buffer) ---------------------
/// The manager's producers and consumers, set once all are spawned.
type BbPeers = Arc<OnceLock<(Vec<ActorRef<Produce>>, Vec<ActorRef<ConsumerMsg>>)>>;
struct BbManager;
enum BbManagerMsg {
    Start,
    /// An item and the index of its producer.
    Item(u64, usize),
    ProducerDone,
    /// Consumer `c` is available.
    Available(usize),
}
struct BbManagerState {
    peers: BbPeers,
    book: common::BbBook,
}
struct BbProducer;
struct Produce;
struct BbProducerState {
    index: u64,
    items: u64,
    made: u64,
    cost: u64,
    manager: ActorRef<BbManagerMsg>,
}
struct BbConsumer;
enum ConsumerMsg {
    Consume(u64),
    ReportSum,
}
struct BbConsumerState {
    index: usize,
    cost: u64,
    sum: u64,
    manager: ActorRef<BbManagerMsg>,
    done: Arc<Done>,
}

impl Actor for BbManager {
    type Msg = BbManagerMsg;
    type State = BbManagerState;
    type Arguments = BbManagerState;

    async fn pre_start(&self, _: ActorRef<Self::Msg>, args: Self::State) -> Started<Self::State> {
        Ok(args)
    }

    async fn handle(
        &self,
        me: ActorRef<BbManagerMsg>,
        m: BbManagerMsg,
        st: &mut BbManagerState,
    ) -> Handled {
        let (producers, consumers) = st.peers.get().expect("peers set");
        let step = match m {
            BbManagerMsg::Start => {
                for p in producers {
                    send(p, Produce);
                }
                return Ok(());
            }
            BbManagerMsg::Item(x, p) => st.book.item(x, p),
            BbManagerMsg::Available(c) => st.book.available(c),
            BbManagerMsg::ProducerDone => st.book.producer_done(),
        };
        if let Some((c, x)) = step.consume {
            send(&consumers[c], ConsumerMsg::Consume(x));
        }
        if let Some(p) = step.produce {
            send(&producers[p], Produce);
        }
        if step.finished {
            // Every item consumed: collect the sums.
            for c in consumers {
                send(c, ConsumerMsg::ReportSum);
            }
            me.stop(None);
        }
        Ok(())
    }
}

impl Actor for BbProducer {
    type Msg = Produce;
    type State = BbProducerState;
    type Arguments = BbProducerState;

    async fn pre_start(&self, _: ActorRef<Produce>, args: Self::State) -> Started<Self::State> {
        Ok(args)
    }

    async fn handle(&self, me: ActorRef<Produce>, _: Produce, st: &mut BbProducerState) -> Handled {
        if st.made < st.items {
            let x = common::bb_item(st.index, st.made, st.items, st.cost);
            st.made += 1;
            send(&st.manager, BbManagerMsg::Item(x, st.index as usize));
        } else {
            send(&st.manager, BbManagerMsg::ProducerDone);
            // Never asked again.
            me.stop(None);
        }
        Ok(())
    }
}

impl Actor for BbConsumer {
    type Msg = ConsumerMsg;
    type State = BbConsumerState;
    type Arguments = BbConsumerState;

    async fn pre_start(&self, _: ActorRef<ConsumerMsg>, args: Self::State) -> Started<Self::State> {
        Ok(args)
    }

    async fn handle(
        &self,
        me: ActorRef<ConsumerMsg>,
        m: ConsumerMsg,
        st: &mut BbConsumerState,
    ) -> Handled {
        match m {
            ConsumerMsg::Consume(x) => {
                st.sum = st.sum.wrapping_add(common::busy(x, st.cost));
                send(&st.manager, BbManagerMsg::Available(st.index));
            }
            ConsumerMsg::ReportSum => {
                st.done.report(st.sum);
                me.stop(None);
            }
        }
        Ok(())
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
    let manager = spawn(
        BbManager,
        BbManagerState {
            peers: peers.clone(),
            book: common::BbBook::new(producers as usize, consumers, capacity),
        },
    )
    .await;
    let mut ps = Vec::with_capacity(producers as usize);
    for index in 0..producers {
        let state = BbProducerState {
            index,
            items,
            made: 0,
            cost,
            manager: manager.clone(),
        };
        ps.push(spawn(BbProducer, state).await);
    }
    let mut cs = Vec::with_capacity(consumers);
    for index in 0..consumers {
        let state = BbConsumerState {
            index,
            cost,
            sum: 0,
            manager: manager.clone(),
            done: done.clone(),
        };
        cs.push(spawn(BbConsumer, state).await);
    }
    drop(done);
    let _ = peers.set((ps, cs));
    send(&manager, BbManagerMsg::Start);
    drop((manager, peers));
    common::wait(rx).await
}

// ---- sleeping-barber (Savina's sleeping barber) ---------------------------------------------
struct Factory;
enum FactoryMsg {
    Start,
    /// A customer the room turned away, with its token: send it in again.
    Returned(ActorRef<CustomerMsg>, u64),
    /// `Served(id, value)`.
    Served(u64, u64),
}
struct FactoryState {
    customers: u64,
    arrival: u64,
    room: ActorRef<RoomMsg>,
    served: u64,
    sum: u64,
    done: Arc<Done>,
}
struct WaitingRoom;
enum RoomMsg {
    /// A customer and its token.
    Enter(ActorRef<CustomerMsg>, u64),
    Next,
    Close,
}
struct RoomState {
    chairs: usize,
    seated: VecDeque<(ActorRef<CustomerMsg>, u64)>,
    barber: Arc<OnceLock<ActorRef<BarberMsg>>>,
    asleep: bool,
}
struct Barber;
enum BarberMsg {
    /// A customer and its token.
    Cut(ActorRef<CustomerMsg>, u64),
    Close,
}
struct BarberState {
    cut: u64,
    room: ActorRef<RoomMsg>,
}
struct Customer;
enum CustomerMsg {
    Full,
    Done(u64),
}
struct CustomerState {
    id: u64,
    token: u64,
    factory: ActorRef<FactoryMsg>,
}

impl FactoryState {
    fn finish(&self, me: &ActorRef<FactoryMsg>) {
        self.done.report(self.sum);
        me.stop(None);
    }
}

impl Actor for Factory {
    type Msg = FactoryMsg;
    type State = FactoryState;
    type Arguments = FactoryState;

    async fn pre_start(
        &self,
        _: ActorRef<FactoryMsg>,
        args: FactoryState,
    ) -> Started<FactoryState> {
        Ok(args)
    }

    async fn handle(
        &self,
        me: ActorRef<FactoryMsg>,
        m: FactoryMsg,
        st: &mut FactoryState,
    ) -> Handled {
        match m {
            FactoryMsg::Start => {
                for id in 0..st.customers {
                    let token = common::busy(id, st.arrival);
                    let state = CustomerState {
                        id,
                        token,
                        factory: me.clone(),
                    };
                    let c = spawn(Customer, state).await;
                    send(&st.room, RoomMsg::Enter(c, token));
                }
                if st.customers == 0 {
                    st.finish(&me);
                }
            }
            FactoryMsg::Returned(c, token) => send(&st.room, RoomMsg::Enter(c, token)),
            FactoryMsg::Served(_id, v) => {
                st.sum = st.sum.wrapping_add(v);
                st.served += 1;
                if st.served == st.customers {
                    st.finish(&me);
                }
            }
        }
        Ok(())
    }
}

impl Actor for WaitingRoom {
    type Msg = RoomMsg;
    type State = RoomState;
    type Arguments = RoomState;

    async fn pre_start(&self, _: ActorRef<RoomMsg>, args: RoomState) -> Started<RoomState> {
        Ok(args)
    }

    async fn handle(&self, me: ActorRef<RoomMsg>, m: RoomMsg, st: &mut RoomState) -> Handled {
        let barber = st.barber.get().expect("barber set");
        match m {
            RoomMsg::Enter(c, token) => {
                if st.seated.len() == st.chairs {
                    send(&c, CustomerMsg::Full);
                } else if st.asleep {
                    st.asleep = false;
                    send(barber, BarberMsg::Cut(c, token));
                } else {
                    st.seated.push_back((c, token));
                }
            }
            RoomMsg::Next => match st.seated.pop_front() {
                Some((c, token)) => send(barber, BarberMsg::Cut(c, token)),
                None => st.asleep = true,
            },
            RoomMsg::Close => me.stop(None),
        }
        Ok(())
    }
}

impl Actor for Barber {
    type Msg = BarberMsg;
    type State = BarberState;
    type Arguments = BarberState;

    async fn pre_start(&self, _: ActorRef<BarberMsg>, args: BarberState) -> Started<BarberState> {
        Ok(args)
    }

    async fn handle(&self, me: ActorRef<BarberMsg>, m: BarberMsg, st: &mut BarberState) -> Handled {
        match m {
            BarberMsg::Cut(c, token) => {
                send(&c, CustomerMsg::Done(common::busy(token, st.cut)));
                send(&st.room, RoomMsg::Next);
            }
            BarberMsg::Close => {
                // After the last `Next` this barber sent the room.
                send(&st.room, RoomMsg::Close);
                me.stop(None);
            }
        }
        Ok(())
    }
}

impl Actor for Customer {
    type Msg = CustomerMsg;
    type State = CustomerState;
    type Arguments = CustomerState;

    async fn pre_start(
        &self,
        _: ActorRef<CustomerMsg>,
        args: CustomerState,
    ) -> Started<CustomerState> {
        Ok(args)
    }

    async fn handle(
        &self,
        me: ActorRef<CustomerMsg>,
        m: CustomerMsg,
        st: &mut CustomerState,
    ) -> Handled {
        match m {
            CustomerMsg::Full => send(&st.factory, FactoryMsg::Returned(me, st.token)),
            CustomerMsg::Done(v) => {
                send(&st.factory, FactoryMsg::Served(st.id, v));
                me.stop(None);
            }
        }
        Ok(())
    }
}

async fn sleeping_barber(customers: u64, room: u64, arrival: u64, cut: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let chairs = room as usize;
    let slot = Arc::new(OnceLock::new());
    let room = spawn(
        WaitingRoom,
        RoomState {
            chairs,
            seated: VecDeque::with_capacity(chairs),
            barber: slot.clone(),
            asleep: true,
        },
    )
    .await;
    let barber = spawn(
        Barber,
        BarberState {
            cut,
            room: room.clone(),
        },
    )
    .await;
    let _ = slot.set(barber.clone());
    let factory = spawn(
        Factory,
        FactoryState {
            customers,
            arrival,
            room,
            served: 0,
            sum: 0,
            done,
        },
    )
    .await;
    send(&factory, FactoryMsg::Start);
    drop(factory);
    let total = common::wait(rx).await?;
    // The barber closes the room after its last `Next`, so no message finds the room gone.
    send(&barber, BarberMsg::Close);
    Ok(total)
}

// ---- cigarette-smokers (Savina's cigarette smokers) -----------------------------------------
struct Arbiter;
enum ArbiterMsg {
    Start,
    Started,
}
struct ArbiterState {
    smokers: Arc<OnceLock<Vec<ActorRef<SmokerMsg>>>>,
    rounds: u64,
    smoke: u64,
    /// Rounds started (smokers that answered `Started`).
    started: u64,
}
struct Smoker;
enum SmokerMsg {
    /// `Smoke(round, time)`.
    Smoke(u64, u64),
    Exit,
}
struct SmokerState {
    arbiter: ActorRef<ArbiterMsg>,
    sum: u64,
    done: Arc<Done>,
}

impl ArbiterState {
    /// Starts round `self.started`, or tells every smoker to exit after the last one.
    fn next_round(&self, me: &ActorRef<ArbiterMsg>) {
        let smokers = self.smokers.get().expect("smokers set");
        if self.started == self.rounds {
            for s in smokers {
                send(s, SmokerMsg::Exit);
            }
            me.stop(None);
            return;
        }
        let round = self.started;
        let (smoker, time) = common::cig_round(round, smokers.len() as u64, self.smoke);
        send(&smokers[smoker as usize], SmokerMsg::Smoke(round, time));
    }
}

impl Actor for Arbiter {
    type Msg = ArbiterMsg;
    type State = ArbiterState;
    type Arguments = ArbiterState;

    async fn pre_start(
        &self,
        _: ActorRef<ArbiterMsg>,
        args: ArbiterState,
    ) -> Started<ArbiterState> {
        Ok(args)
    }

    async fn handle(
        &self,
        me: ActorRef<ArbiterMsg>,
        m: ArbiterMsg,
        st: &mut ArbiterState,
    ) -> Handled {
        match m {
            ArbiterMsg::Start => st.next_round(&me),
            ArbiterMsg::Started => {
                st.started += 1;
                st.next_round(&me);
            }
        }
        Ok(())
    }
}

impl Actor for Smoker {
    type Msg = SmokerMsg;
    type State = SmokerState;
    type Arguments = SmokerState;

    async fn pre_start(&self, _: ActorRef<SmokerMsg>, args: SmokerState) -> Started<SmokerState> {
        Ok(args)
    }

    async fn handle(&self, me: ActorRef<SmokerMsg>, m: SmokerMsg, st: &mut SmokerState) -> Handled {
        match m {
            SmokerMsg::Smoke(round, time) => {
                send(&st.arbiter, ArbiterMsg::Started);
                st.sum = st.sum.wrapping_add(common::busy(round, time));
            }
            SmokerMsg::Exit => {
                st.done.report(st.sum);
                me.stop(None);
            }
        }
        Ok(())
    }
}

async fn cigarette_smokers(smokers: u64, rounds: u64, smoke: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(smokers);
    let list = Arc::new(OnceLock::new());
    let arbiter = spawn(
        Arbiter,
        ArbiterState {
            smokers: list.clone(),
            rounds,
            smoke,
            started: 0,
        },
    )
    .await;
    let mut all = Vec::with_capacity(smokers as usize);
    for _ in 0..smokers {
        let state = SmokerState {
            arbiter: arbiter.clone(),
            sum: 0,
            done: done.clone(),
        };
        all.push(spawn(Smoker, state).await);
    }
    drop(done);
    let _ = list.set(all);
    send(&arbiter, ArbiterMsg::Start);
    drop((arbiter, list));
    common::wait(rx).await
}
