//! Workloads `ping-pong`, `counting`, `fork-join throughput / creation`, `thread-ring`,
//! `chameneos`, `big`, and the actors of `actorium-bench scale` (the system and its set-up: the
//! parent module).

use super::*;

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

pub(super) async fn ping_pong(n: u64) -> Result<u64, String> {
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

pub(super) async fn counting(n: u64) -> Result<u64, String> {
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

pub(super) async fn fj_throughput(actors: u64, msgs: u64) -> Result<u64, String> {
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

pub(super) async fn fj_creation(n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(n);
    for i in 0..n {
        send(&spawn(FjWorker, FjState::new(1, &done)).await, Work(i));
    }
    drop(done);
    common::wait(rx).await
}

pub(super) async fn scale(n: u64) -> Result<u64, String> {
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

pub(super) async fn thread_ring(actors: u64, passes: u64) -> Result<u64, String> {
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

pub(super) async fn chameneos(creatures: u64, meetings: u64) -> Result<u64, String> {
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

pub(super) async fn big(actors: u64, pings: u64) -> Result<u64, String> {
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
