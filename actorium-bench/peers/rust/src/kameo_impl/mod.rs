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
        crate::common::run_workload!(work)
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

// The workloads of the Savina suite (the set-up above is shared; macros are defined first).
mod pipelines;
mod savina_concurrency;
mod savina_micro;
mod savina_puzzles;
use pipelines::*;
use savina_concurrency::*;
use savina_micro::*;
use savina_puzzles::*;
