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
        crate::common::run_workload!(work)
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

// The workloads of the Savina suite (the set-up above is shared; macros are defined first).
mod pipelines;
mod savina_concurrency;
mod savina_micro;
mod savina_puzzles;
use pipelines::*;
use savina_concurrency::*;
use savina_micro::*;
use savina_puzzles::*;
