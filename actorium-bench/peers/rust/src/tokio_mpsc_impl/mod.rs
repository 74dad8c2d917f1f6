//! The workloads on plain tokio, the peer a Rust user most often writes instead of an actor
//! library: a tokio multi-thread runtime with `worker_threads(T)`; an actor is a task spawned
//! with `tokio::spawn` that owns its state (the locals of its `async fn`) and loops on
//! `rx.recv().await`; its address is the `tokio::sync::mpsc::UnboundedSender` of its mailbox;
//! messages are sent with `send`. A task ends by returning (its mailbox goes with it), or, ended
//! from outside, when the last sender of its mailbox is dropped (`recv` gives `None`: the servers
//! of repeat, pong, the rest of the ring, sleeping-barber's barber) or on a `Stop` message where
//! its senders form a cycle that nobody drops (big; sleeping-barber's room, on `Close`).
//!
//! Unbounded channels: actors' mailboxes are unbounded, and the workloads (and the other systems)
//! assume fire-and-forget sends that never wait; with a bounded `mpsc::channel` every send would
//! await room, and tasks that send to their own group (executor) or to themselves could deadlock
//! on a full channel.
//!
//! Where an actor must know an address before that actor exists (the ring, executor's groups,
//! big's peers, ping and pong), the channels are created first and the tasks spawned with them,
//! as a tokio user would, instead of the set-up messages the actor libraries need (`SetNext`,
//! `Hello`, a `OnceLock` filled later). counting's `Get` carries a `oneshot::Sender` for the
//! reply, tokio's request/response idiom. main observes completion through the shared latch
//! [`Done`], as on the other peers.

use crate::common::{self, complement, row_sum, tiny, Bench, Done, XorShift};
use std::collections::VecDeque;
use std::future::Future;
use std::sync::Arc;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::sync::oneshot;

/// An actor's address: the sending half of its mailbox.
type Addr<M> = UnboundedSender<M>;
/// An actor's mailbox.
type Mailbox<M> = UnboundedReceiver<M>;

/// Runs one workload on a fresh runtime; the clock starts once the runtime is up.
pub fn run(threads: usize, work: Bench) -> Result<(f64, u64), String> {
    common::on_tokio(threads, move || async move {
        crate::common::run_workload!(work)
    })
}

/// Spawns the task `actor(its mailbox)` and returns its address.
fn spawn<M, F>(actor: impl FnOnce(Mailbox<M>) -> F) -> Addr<M>
where
    M: Send + 'static,
    F: Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = unbounded_channel();
    tokio::spawn(actor(rx));
    tx
}

/// Fire-and-forget send; every workload sends only to live tasks.
#[inline]
fn send<M>(to: &Addr<M>, msg: M) {
    if to.send(msg).is_err() {
        panic!("tokio-mpsc: message sent to an ended task");
    }
}

// ---- static-send ----------------------------------------------------------------------------
struct Tick;

async fn self_sender(me: Addr<Tick>, mut rx: Mailbox<Tick>, n: u64, done: Arc<Done>) {
    let mut count = 0;
    while let Some(t) = rx.recv().await {
        count += 1;
        if count < n {
            send(&me, t);
        } else {
            done.report(count);
            return;
        }
    }
}

async fn static_send(n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let (a, mailbox) = unbounded_channel();
    tokio::spawn(self_sender(a.clone(), mailbox, n, done));
    send(&a, Tick);
    drop(a);
    common::wait(rx).await
}

// ---- dynamic-send ---------------------------------------------------------------------------
/// `Go(k, n)`.
struct Go(u64, u64);

/// One link of the chain. Not an `async fn`: a task that spawns its own kind needs the `Send`
/// of its future declared (as an `async fn`, rustc cannot prove it: E0283).
#[allow(clippy::manual_async_fn)]
fn hop(mut rx: Mailbox<Go>, done: Arc<Done>) -> impl Future<Output = ()> + Send {
    async move {
        if let Some(Go(k, n)) = rx.recv().await {
            if k < n {
                let next_done = done.clone();
                send(&spawn(move |rx| hop(rx, next_done)), Go(k + 1, n));
            } else {
                done.report(k);
            }
        }
    }
}

async fn dynamic_send(n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    send(&spawn(|rx| hop(rx, done)), Go(1, n));
    common::wait(rx).await
}

// ---- executor -------------------------------------------------------------------------------
struct ExecMsg;

/// `total` = R = rounds * group.
async fn member(
    mut rx: Mailbox<ExecMsg>,
    group: Arc<[Addr<ExecMsg>]>,
    local: u64,
    total: u64,
    done: Arc<Done>,
) {
    let size = group.len() as u64;
    let (mut sent, mut recv) = (0, 0);
    while let Some(m) = rx.recv().await {
        recv += 1;
        if sent < total {
            send(&group[((local + sent) % size) as usize], m);
            sent += 1;
        }
        if recv == total + 1 {
            done.report(recv);
            return;
        }
    }
}

async fn executor(actors: u64, size: u64, rounds: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(actors);
    let (all, mailboxes): (Vec<_>, Vec<_>) = (0..actors).map(|_| unbounded_channel()).unzip();
    let groups: Vec<Arc<[Addr<ExecMsg>]>> = all.chunks(size as usize).map(Arc::from).collect();
    for (i, mailbox) in (0..actors).zip(mailboxes) {
        let group = groups[(i / size) as usize].clone();
        tokio::spawn(member(
            mailbox,
            group,
            i % size,
            rounds * size,
            done.clone(),
        ));
    }
    drop((done, groups));
    for a in &all {
        send(a, ExecMsg);
    }
    drop(all);
    common::wait(rx).await
}

// ---- repeat ---------------------------------------------------------------------------------
enum ClientMsg {
    Start,
    Rep(u64),
}
struct Req;

/// Sends `Req` to every server; returns the number of replies to wait for.
fn scatter(servers: &[Addr<Req>]) -> u64 {
    for s in servers {
        send(s, Req);
    }
    servers.len() as u64
}

async fn client(mut rx: Mailbox<ClientMsg>, servers: Vec<Addr<Req>>, reps: u64, done: Arc<Done>) {
    let (mut reps_left, mut pending, mut sum) = (reps, 0, 0);
    while let Some(m) = rx.recv().await {
        match m {
            ClientMsg::Start => pending = scatter(&servers),
            ClientMsg::Rep(index) => {
                sum += index + 1;
                pending -= 1;
                if pending == 0 {
                    reps_left -= 1;
                    if reps_left == 0 {
                        // The servers' last senders: dropping them ends the servers.
                        drop(servers);
                        done.report(sum);
                        return;
                    }
                    pending = scatter(&servers);
                }
            }
        }
    }
}

async fn server(mut rx: Mailbox<Req>, index: u64, client: Addr<ClientMsg>) {
    while let Some(Req) = rx.recv().await {
        send(&client, ClientMsg::Rep(index));
    }
}

async fn repeat(servers: u64, reps: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let (to_client, mailbox) = unbounded_channel();
    let list = (0..servers)
        .map(|index| {
            let to_client = to_client.clone();
            spawn(move |rx| server(rx, index, to_client))
        })
        .collect();
    tokio::spawn(client(mailbox, list, reps, done));
    send(&to_client, ClientMsg::Start);
    drop(to_client);
    common::wait(rx).await
}

// ---- matrix ---------------------------------------------------------------------------------
struct Row(usize);

async fn row_worker(
    mut rx: Mailbox<Row>,
    x: Arc<Vec<u64>>,
    y: Arc<Vec<u64>>,
    n: usize,
    done: Arc<Done>,
) {
    if let Some(Row(i)) = rx.recv().await {
        done.report(row_sum(&x, &y, n, i));
    }
}

async fn matrix(n: usize, x: Arc<Vec<u64>>, y: Arc<Vec<u64>>) -> Result<u64, String> {
    let (done, rx) = Done::new(n as u64);
    for i in 0..n {
        let (x, y, done) = (x.clone(), y.clone(), done.clone());
        send(&spawn(move |rx| row_worker(rx, x, y, n, done)), Row(i));
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
