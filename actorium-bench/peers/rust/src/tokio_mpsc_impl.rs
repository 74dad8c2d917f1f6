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

// ---- ping-pong ------------------------------------------------------------------------------
enum PingMsg {
    Start,
    Ball,
}
struct Ball;

async fn ping(mut rx: Mailbox<PingMsg>, pong: Addr<Ball>, n: u64, done: Arc<Done>) {
    let mut count = 0;
    while let Some(m) = rx.recv().await {
        match m {
            PingMsg::Start => send(&pong, Ball),
            PingMsg::Ball => {
                count += 1;
                if count == n {
                    // Dropping pong's only sender ends pong.
                    drop(pong);
                    done.report(count);
                    return;
                }
                send(&pong, Ball);
            }
        }
    }
}

async fn pong(mut rx: Mailbox<Ball>, ping: Addr<PingMsg>) {
    while let Some(Ball) = rx.recv().await {
        send(&ping, PingMsg::Ball);
    }
}

async fn ping_pong(n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let (to_ping, mailbox) = unbounded_channel();
    let to_pong = {
        let to_ping = to_ping.clone();
        spawn(move |rx| pong(rx, to_ping))
    };
    tokio::spawn(ping(mailbox, to_pong, n, done));
    send(&to_ping, PingMsg::Start);
    drop(to_ping);
    common::wait(rx).await
}

// ---- counting -------------------------------------------------------------------------------
enum CounterMsg {
    Increment,
    Get(oneshot::Sender<u64>),
}
struct Start;

async fn counter(mut rx: Mailbox<CounterMsg>) {
    let mut total = 0;
    while let Some(m) = rx.recv().await {
        match m {
            CounterMsg::Increment => total += 1,
            CounterMsg::Get(reply) => {
                let _ = reply.send(total);
                return;
            }
        }
    }
}

async fn producer(mut rx: Mailbox<Start>, counter: Addr<CounterMsg>, n: u64, done: Arc<Done>) {
    if let Some(Start) = rx.recv().await {
        for _ in 0..n {
            send(&counter, CounterMsg::Increment);
        }
        let (reply, total) = oneshot::channel();
        send(&counter, CounterMsg::Get(reply));
        match total.await {
            Ok(t) => done.report(t),
            Err(_) => panic!("tokio-mpsc: the counter ended without replying"),
        }
    }
}

async fn counting(n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let to_counter = spawn(counter);
    let to_producer = spawn(move |rx| producer(rx, to_counter, n, done));
    send(&to_producer, Start);
    drop(to_producer);
    common::wait(rx).await
}

// ---- fork-join throughput / creation ------------------------------------------------------
struct Work(u64);

async fn fj_worker(mut rx: Mailbox<Work>, msgs: u64, done: Arc<Done>) {
    let (mut x, mut count) = (1, 0);
    while let Some(Work(r)) = rx.recv().await {
        x = tiny(x, r);
        count += 1;
        if count == msgs {
            std::hint::black_box(x);
            done.report(count);
            return;
        }
    }
}

fn start_fj_worker(msgs: u64, done: &Arc<Done>) -> Addr<Work> {
    let done = done.clone();
    spawn(move |rx| fj_worker(rx, msgs, done))
}

async fn fj_throughput(actors: u64, msgs: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(actors);
    let workers: Vec<_> = (0..actors).map(|_| start_fj_worker(msgs, &done)).collect();
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
        send(&start_fj_worker(1, &done), Work(i));
    }
    drop(done);
    common::wait(rx).await
}

async fn scale(n: u64) -> Result<u64, String> {
    common::scale(n, |d| start_fj_worker(1, d), |w, i| send(w, Work(i))).await
}

// ---- thread-ring ----------------------------------------------------------------------------
struct Token(u64);

/// A ring node. The one that reports returns; its successor's mailbox then has no sender left,
/// so the successor ends too, and so on round the ring (main keeps no sender).
async fn node(mut rx: Mailbox<Token>, index: u64, next: Addr<Token>, done: Arc<Done>) {
    while let Some(Token(k)) = rx.recv().await {
        if k > 0 {
            send(&next, Token(k - 1));
        } else {
            done.report(index);
            return;
        }
    }
}

async fn thread_ring(actors: u64, passes: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let (nodes, mailboxes): (Vec<_>, Vec<_>) = (0..actors).map(|_| unbounded_channel()).unzip();
    for (index, mailbox) in (0..actors).zip(mailboxes) {
        let next = nodes[((index + 1) % actors) as usize].clone();
        tokio::spawn(node(mailbox, index, next, done.clone()));
    }
    drop(done);
    send(&nodes[0], Token(passes));
    drop(nodes);
    let last = common::wait(rx).await?;
    Ok(common::ring_checksum(last, passes, actors))
}

// ---- chameneos ------------------------------------------------------------------------------
/// `Meet(creature, colour)`.
struct Meet(Addr<CreatureMsg>, u8);
enum CreatureMsg {
    Start,
    Paired(u8),
    Stop,
}

async fn mall(mut rx: Mailbox<Meet>, limit: u64, creatures: u64) {
    let mut waiting: Option<(Addr<CreatureMsg>, u8)> = None;
    let (mut meetings, mut stops) = (0, 0);
    while let Some(Meet(c, colour)) = rx.recv().await {
        if meetings >= limit {
            send(&c, CreatureMsg::Stop);
            stops += 1;
            if let Some((w, _)) = waiting.take() {
                send(&w, CreatureMsg::Stop);
                stops += 1;
            }
            if stops == creatures {
                return;
            }
            continue;
        }
        match waiting.take() {
            None => waiting = Some((c, colour)),
            Some((w, wc)) => {
                meetings += 1;
                send(&w, CreatureMsg::Paired(colour));
                send(&c, CreatureMsg::Paired(wc));
            }
        }
    }
}

async fn creature(
    me: Addr<CreatureMsg>,
    mut rx: Mailbox<CreatureMsg>,
    mall: Addr<Meet>,
    mut colour: u8,
    done: Arc<Done>,
) {
    let mut met = 0;
    while let Some(m) = rx.recv().await {
        match m {
            CreatureMsg::Start => send(&mall, Meet(me.clone(), colour)),
            CreatureMsg::Paired(other) => {
                met += 1;
                colour = complement(colour, other);
                send(&mall, Meet(me.clone(), colour));
            }
            CreatureMsg::Stop => {
                done.report(met);
                return;
            }
        }
    }
}

async fn chameneos(creatures: u64, meetings: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(creatures);
    let to_mall = spawn(|rx| mall(rx, meetings, creatures));
    let all: Vec<_> = (0..creatures)
        .map(|i| {
            let (c, mailbox) = unbounded_channel();
            let colour = (i % 3) as u8;
            tokio::spawn(creature(
                c.clone(),
                mailbox,
                to_mall.clone(),
                colour,
                done.clone(),
            ));
            c
        })
        .collect();
    drop((done, to_mall));
    for c in &all {
        send(c, CreatureMsg::Start);
    }
    drop(all);
    common::wait(rx).await
}

// ---- big ------------------------------------------------------------------------------------
enum BigMsg {
    Start,
    Ping(u64),
    Pong,
    Stop,
}

async fn big_actor(
    mut rx: Mailbox<BigMsg>,
    peers: Arc<[Addr<BigMsg>]>,
    me: u64,
    pings: u64,
    done: Arc<Done>,
) {
    let mut rng = XorShift::new(me);
    let (mut sent, mut pongs) = (0, 0);
    // Uniform among the other actors (the contract).
    let mut ping = || {
        let to = rng.other(me, peers.len() as u64);
        send(&peers[to as usize], BigMsg::Ping(me));
    };
    while let Some(m) = rx.recv().await {
        match m {
            BigMsg::Start => {
                ping();
                sent += 1;
            }
            BigMsg::Ping(from) => send(&peers[from as usize], BigMsg::Pong),
            BigMsg::Pong => {
                pongs += 1;
                if sent < pings {
                    ping();
                    sent += 1;
                } else if pongs == pings {
                    done.report(pongs);
                }
            }
            BigMsg::Stop => return,
        }
    }
}

async fn big(actors: u64, pings: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(actors);
    let (all, mailboxes): (Vec<_>, Vec<_>) = (0..actors).map(|_| unbounded_channel()).unzip();
    let peers: Arc<[Addr<BigMsg>]> = Arc::from(all.as_slice());
    for (me, mailbox) in (0..actors).zip(mailboxes) {
        tokio::spawn(big_actor(mailbox, peers.clone(), me, pings, done.clone()));
    }
    drop((done, peers));
    for a in &all {
        send(a, BigMsg::Start);
    }
    let total = common::wait(rx).await?;
    // Every actor answers pings until all are done, and each holds every address: end them now.
    for a in &all {
        send(a, BigMsg::Stop);
    }
    Ok(total)
}

// ---- dictionary (Savina's concurrent dictionary) ----------------------------------------------
/// A request: the key, the value to write (`None`: read), and whom to answer.
struct DictOp(u64, Option<u64>, Addr<u64>);

async fn dictionary_actor(mut rx: Mailbox<DictOp>) {
    let mut map = common::DictMap::default();
    while let Some(DictOp(key, value, from)) = rx.recv().await {
        send(&from, map.apply(key, value));
    }
}

#[allow(clippy::too_many_arguments)]
async fn dict_worker(
    mut rx: Mailbox<u64>,
    me: Addr<u64>,
    dict: Addr<DictOp>,
    id: u64,
    msgs: u64,
    write: u64,
    done: Arc<Done>,
) {
    let (mut last, mut sum) = (0, 0);
    for i in 0..msgs {
        let (key, value) = common::dict_request(id, msgs, i, write, &mut last);
        send(&dict, DictOp(key, value, me.clone()));
        match rx.recv().await {
            Some(v) => sum += v,
            None => return,
        }
    }
    done.report(sum);
}

async fn dictionary(workers: u64, msgs: u64, write: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(workers);
    let (dict, dict_rx) = unbounded_channel();
    tokio::spawn(dictionary_actor(dict_rx));
    for id in 0..workers {
        let (me, mailbox) = unbounded_channel();
        tokio::spawn(dict_worker(
            mailbox,
            me,
            dict.clone(),
            id,
            msgs,
            write,
            done.clone(),
        ));
    }
    drop((done, dict));
    common::wait(rx).await
}

// ---- banking (Savina's bank transaction) -----------------------------------------------------
enum AccountMsg {
    Transfer { to: u64, amount: u64 },
    Credit { from: u64, amount: u64 },
    Credited,
    Report,
    Stop,
}
enum TellerMsg {
    Completed,
    Balance(u64, u64),
}

async fn account(
    mut rx: Mailbox<AccountMsg>,
    index: u64,
    accounts: Arc<[Addr<AccountMsg>]>,
    teller: Addr<TellerMsg>,
) {
    let mut balance = common::BANK_INITIAL;
    while let Some(m) = rx.recv().await {
        match m {
            AccountMsg::Transfer { to, amount } => {
                balance -= amount;
                send(
                    &accounts[to as usize],
                    AccountMsg::Credit {
                        from: index,
                        amount,
                    },
                );
            }
            AccountMsg::Credit { from, amount } => {
                balance += amount;
                send(&accounts[from as usize], AccountMsg::Credited);
            }
            AccountMsg::Credited => send(&teller, TellerMsg::Completed),
            AccountMsg::Report => send(&teller, TellerMsg::Balance(index, balance)),
            AccountMsg::Stop => return,
        }
    }
}

async fn teller(
    mut rx: Mailbox<TellerMsg>,
    accounts: Arc<[Addr<AccountMsg>]>,
    transactions: u64,
    done: Arc<Done>,
) {
    let n = accounts.len() as u64;
    for t in 0..transactions {
        let (from, to, amount) = common::bank_transfer(t, n);
        send(
            &accounts[from as usize],
            AccountMsg::Transfer { to, amount },
        );
    }
    let mut completed = 0;
    while completed < transactions {
        match rx.recv().await {
            Some(TellerMsg::Completed) => completed += 1,
            _ => return,
        }
    }
    for a in accounts.iter() {
        send(a, AccountMsg::Report);
    }
    let mut balances = Vec::with_capacity(n as usize);
    while (balances.len() as u64) < n {
        match rx.recv().await {
            Some(TellerMsg::Balance(i, b)) => balances.push((i, b)),
            _ => return,
        }
    }
    done.report(common::bank_checksum(balances.into_iter()));
}

async fn banking(accounts: u64, transactions: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let (teller_addr, teller_rx) = unbounded_channel();
    let (all, mailboxes): (Vec<_>, Vec<_>) = (0..accounts).map(|_| unbounded_channel()).unzip();
    let all: Arc<[Addr<AccountMsg>]> = Arc::from(all.as_slice());
    for (index, mailbox) in (0..accounts).zip(mailboxes) {
        tokio::spawn(account(mailbox, index, all.clone(), teller_addr.clone()));
    }
    tokio::spawn(teller(teller_rx, all.clone(), transactions, done));
    drop(teller_addr);
    let total = common::wait(rx).await?;
    // Each account holds every address: end them now.
    for a in all.iter() {
        send(a, AccountMsg::Stop);
    }
    Ok(total)
}

// ---- logistic-map (Savina's logistic map series) ---------------------------------------------
enum SeriesMsg {
    NextTerm,
    Computed(u64),
}

async fn rate_computer(mut rx: Mailbox<(u64, Addr<SeriesMsg>)>, index: u64) {
    while let Some((x, from)) = rx.recv().await {
        send(&from, SeriesMsg::Computed(common::logmap_next(index, x)));
    }
}

async fn series_actor(
    mut rx: Mailbox<SeriesMsg>,
    me: Addr<SeriesMsg>,
    index: u64,
    computer: Addr<(u64, Addr<SeriesMsg>)>,
    master: Addr<u64>,
) {
    let mut term = common::logmap_start(index);
    while let Some(m) = rx.recv().await {
        match m {
            SeriesMsg::NextTerm => send(&computer, (term, me.clone())),
            SeriesMsg::Computed(x) => {
                term = x;
                send(&master, x);
            }
        }
    }
}

async fn logistic_map(series: u64, terms: u64) -> Result<u64, String> {
    let (master, mut master_rx) = unbounded_channel::<u64>();
    let mut all = Vec::with_capacity(series as usize);
    for index in 0..series {
        let (computer, computer_rx) = unbounded_channel();
        tokio::spawn(rate_computer(computer_rx, index));
        let (me, rx) = unbounded_channel();
        tokio::spawn(series_actor(
            rx,
            me.clone(),
            index,
            computer,
            master.clone(),
        ));
        all.push(me);
    }
    drop(master);
    // The master: a task of its own, as the other implementations' master actor.
    let driver = tokio::spawn(async move {
        if terms == 0 {
            return (0..series).map(common::logmap_start).sum();
        }
        let mut sum = 0;
        for step in 0..terms {
            for s in &all {
                send(s, SeriesMsg::NextTerm);
            }
            for _ in 0..series {
                let x = master_rx.recv().await.expect("a series ended");
                if step + 1 == terms {
                    sum += x;
                }
            }
        }
        sum
    });
    driver.await.map_err(|e| format!("tokio: {e}"))
}

// ---- bounded-buffer (Savina's producer–consumer with a bounded buffer) ---------------------
enum ManagerMsg {
    Start,
    /// `Item(item, producer)`.
    Item(u64, usize),
    ProducerDone,
    /// A consumer is available: `Available(consumer)`.
    Available(usize),
}
struct Produce;
enum ConsumerMsg {
    Consume(u64),
    ReportSum,
}

/// The manager. It returns once it has asked the consumers for their sums; every producer has
/// ended by then, and no consumer sends to it again.
async fn bb_manager(
    mut rx: Mailbox<ManagerMsg>,
    producers: Vec<Addr<Produce>>,
    consumers: Vec<Addr<ConsumerMsg>>,
    capacity: usize,
) {
    let mut book = common::BbBook::new(producers.len(), consumers.len(), capacity);
    while let Some(m) = rx.recv().await {
        let step = match m {
            ManagerMsg::Start => {
                for p in &producers {
                    send(p, Produce);
                }
                continue;
            }
            ManagerMsg::Item(x, p) => book.item(x, p),
            ManagerMsg::Available(c) => book.available(c),
            ManagerMsg::ProducerDone => book.producer_done(),
        };
        if let Some((c, x)) = step.consume {
            send(&consumers[c], ConsumerMsg::Consume(x));
        }
        if let Some(p) = step.produce {
            send(&producers[p], Produce);
        }
        if step.finished {
            // Every item consumed: collect the sums.
            for c in &consumers {
                send(c, ConsumerMsg::ReportSum);
            }
            return;
        }
    }
}

async fn bb_producer(
    mut rx: Mailbox<Produce>,
    index: u64,
    items: u64,
    cost: u64,
    manager: Addr<ManagerMsg>,
) {
    let mut made = 0;
    while let Some(Produce) = rx.recv().await {
        if made == items {
            send(&manager, ManagerMsg::ProducerDone);
            // Never asked again.
            return;
        }
        let x = common::bb_item(index, made, items, cost);
        made += 1;
        send(&manager, ManagerMsg::Item(x, index as usize));
    }
}

async fn bb_consumer(
    mut rx: Mailbox<ConsumerMsg>,
    index: usize,
    cost: u64,
    manager: Addr<ManagerMsg>,
    done: Arc<Done>,
) {
    let mut sum = 0u64;
    while let Some(m) = rx.recv().await {
        match m {
            ConsumerMsg::Consume(x) => {
                sum = sum.wrapping_add(common::busy(x, cost));
                send(&manager, ManagerMsg::Available(index));
            }
            ConsumerMsg::ReportSum => {
                done.report(sum);
                return;
            }
        }
    }
}

async fn bounded_buffer(
    producers: u64,
    consumers: u64,
    items: u64,
    buffer: u64,
    cost: u64,
) -> Result<u64, String> {
    let (done, rx) = Done::new(consumers);
    let (manager, manager_rx) = unbounded_channel();
    let producer_list = (0..producers)
        .map(|index| {
            let manager = manager.clone();
            spawn(move |rx| bb_producer(rx, index, items, cost, manager))
        })
        .collect();
    let consumer_list = (0..consumers as usize)
        .map(|index| {
            let (manager, done) = (manager.clone(), done.clone());
            spawn(move |rx| bb_consumer(rx, index, cost, manager, done))
        })
        .collect();
    drop(done);
    tokio::spawn(bb_manager(
        manager_rx,
        producer_list,
        consumer_list,
        buffer as usize,
    ));
    send(&manager, ManagerMsg::Start);
    drop(manager);
    common::wait(rx).await
}

// ---- sleeping-barber (Savina's sleeping barber) ---------------------------------------------
enum FactoryMsg {
    Start,
    /// A customer told `Full`: `Returned(customer, token)`.
    Returned(Addr<CustomerMsg>, u64),
    /// `Served(id, v)`.
    Served(u64, u64),
}
enum RoomMsg {
    /// `Enter(customer, token)`.
    Enter(Addr<CustomerMsg>, u64),
    Next,
    /// Every customer is served: end once the barber is asleep.
    Close,
}
/// `Cut(customer, token)`.
struct Cut(Addr<CustomerMsg>, u64);
enum CustomerMsg {
    Full,
    Done(u64),
}

async fn factory(
    me: Addr<FactoryMsg>,
    mut rx: Mailbox<FactoryMsg>,
    room: Addr<RoomMsg>,
    customers: u64,
    arrival: u64,
    done: Arc<Done>,
) {
    let (mut served, mut sum) = (0, 0u64);
    while let Some(m) = rx.recv().await {
        let all_served = match m {
            FactoryMsg::Start => {
                for id in 0..customers {
                    let token = common::busy(id, arrival);
                    let (c, mailbox) = unbounded_channel();
                    tokio::spawn(customer(c.clone(), mailbox, id, token, me.clone()));
                    send(&room, RoomMsg::Enter(c, token));
                }
                customers == 0
            }
            FactoryMsg::Returned(c, token) => {
                send(&room, RoomMsg::Enter(c, token));
                false
            }
            FactoryMsg::Served(_id, v) => {
                sum = sum.wrapping_add(v);
                served += 1;
                served == customers
            }
        };
        if all_served {
            // Close the room (which ends the barber), and report.
            send(&room, RoomMsg::Close);
            done.report(sum);
            return;
        }
    }
}

/// The waiting room. The room and the barber hold each other's address: closed, the room ends
/// once the barber is asleep (his last `Next` handled, so he sends it nothing more), and its
/// end, dropping the barber's only address, ends him.
async fn waiting_room(mut rx: Mailbox<RoomMsg>, barber: Addr<Cut>, chairs: usize) {
    // Seated customers with their tokens, longest-seated first.
    let mut seated: VecDeque<(Addr<CustomerMsg>, u64)> = VecDeque::with_capacity(chairs);
    let (mut asleep, mut closing) = (true, false);
    while let Some(m) = rx.recv().await {
        match m {
            RoomMsg::Enter(c, token) => {
                if seated.len() == chairs {
                    send(&c, CustomerMsg::Full);
                } else if asleep {
                    asleep = false;
                    send(&barber, Cut(c, token));
                } else {
                    seated.push_back((c, token));
                }
            }
            RoomMsg::Next => match seated.pop_front() {
                Some((c, token)) => send(&barber, Cut(c, token)),
                None => asleep = true,
            },
            RoomMsg::Close => closing = true,
        }
        if closing && asleep {
            return;
        }
    }
}

async fn barber(mut rx: Mailbox<Cut>, room: Addr<RoomMsg>, cut: u64) {
    while let Some(Cut(c, token)) = rx.recv().await {
        send(&c, CustomerMsg::Done(common::busy(token, cut)));
        send(&room, RoomMsg::Next);
    }
}

async fn customer(
    me: Addr<CustomerMsg>,
    mut rx: Mailbox<CustomerMsg>,
    id: u64,
    token: u64,
    factory: Addr<FactoryMsg>,
) {
    while let Some(m) = rx.recv().await {
        match m {
            CustomerMsg::Full => send(&factory, FactoryMsg::Returned(me.clone(), token)),
            CustomerMsg::Done(v) => {
                send(&factory, FactoryMsg::Served(id, v));
                return;
            }
        }
    }
}

async fn sleeping_barber(customers: u64, room: u64, arrival: u64, cut: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let (to_room, room_rx) = unbounded_channel();
    let (to_barber, barber_rx) = unbounded_channel();
    let barber_task = tokio::spawn(barber(barber_rx, to_room.clone(), cut));
    let room_task = tokio::spawn(waiting_room(room_rx, to_barber, room as usize));
    let (to_factory, factory_rx) = unbounded_channel();
    tokio::spawn(factory(
        to_factory.clone(),
        factory_rx,
        to_room,
        customers,
        arrival,
        done,
    ));
    send(&to_factory, FactoryMsg::Start);
    drop(to_factory);
    let total = common::wait(rx).await?;
    // The barber's last `Next` may still be on its way when the factory reports: wait for the
    // room and the barber to end (the room once closed and the barber asleep, the barber with
    // the room), so that dropping the runtime cancels no task that is about to send.
    for task in [room_task, barber_task] {
        task.await.map_err(|e| format!("tokio: {e}"))?;
    }
    Ok(total)
}

// ---- cigarette-smokers (Savina's cigarette smokers) -----------------------------------------
enum ArbiterMsg {
    Start,
    Started,
}
enum SmokerMsg {
    /// `Smoke(round, time)`.
    Smoke(u64, u64),
    Exit,
}

/// The arbiter: after the last round's `Started` (no smoker sends it anything more), it tells
/// every smoker to exit and ends.
async fn cig_arbiter(
    mut rx: Mailbox<ArbiterMsg>,
    smokers: Vec<Addr<SmokerMsg>>,
    rounds: u64,
    smoke: u64,
) {
    let mut started = 0;
    while let Some(m) = rx.recv().await {
        if let ArbiterMsg::Started = m {
            started += 1;
        }
        if started == rounds {
            for s in &smokers {
                send(s, SmokerMsg::Exit);
            }
            return;
        }
        let (smoker, time) = common::cig_round(started, smokers.len() as u64, smoke);
        send(&smokers[smoker as usize], SmokerMsg::Smoke(started, time));
    }
}

async fn smoker(mut rx: Mailbox<SmokerMsg>, arbiter: Addr<ArbiterMsg>, done: Arc<Done>) {
    let mut sum = 0u64;
    while let Some(m) = rx.recv().await {
        match m {
            SmokerMsg::Smoke(round, time) => {
                send(&arbiter, ArbiterMsg::Started);
                sum = sum.wrapping_add(common::busy(round, time));
            }
            SmokerMsg::Exit => {
                done.report(sum);
                return;
            }
        }
    }
}

async fn cigarette_smokers(smokers: u64, rounds: u64, smoke: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(smokers);
    let (arbiter, arbiter_rx) = unbounded_channel();
    let list = (0..smokers)
        .map(|_| {
            let (arbiter, done) = (arbiter.clone(), done.clone());
            spawn(move |rx| smoker(rx, arbiter, done))
        })
        .collect();
    drop(done);
    tokio::spawn(cig_arbiter(arbiter_rx, list, rounds, smoke));
    send(&arbiter, ArbiterMsg::Start);
    drop(arbiter);
    common::wait(rx).await
}
