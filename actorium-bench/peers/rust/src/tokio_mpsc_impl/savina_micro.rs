//! Workloads `ping-pong`, `counting`, `fork-join throughput / creation`, `thread-ring`,
//! `chameneos`, `big`, and the actors of `actorium-bench scale` (the system and its set-up: the
//! parent module).

use super::*;

// ---- ping-pong ------------------------------------------------------------------------------
pub(super) enum PingMsg {
    Start,
    Ball,
}
pub(super) struct Ball;

pub(super) async fn ping(mut rx: Mailbox<PingMsg>, pong: Addr<Ball>, n: u64, done: Arc<Done>) {
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

pub(super) async fn pong(mut rx: Mailbox<Ball>, ping: Addr<PingMsg>) {
    while let Some(Ball) = rx.recv().await {
        send(&ping, PingMsg::Ball);
    }
}

pub(super) async fn ping_pong(n: u64) -> Result<u64, String> {
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
pub(super) enum CounterMsg {
    Increment,
    Get(oneshot::Sender<u64>),
}
pub(super) struct Start;

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

pub(super) async fn producer(
    mut rx: Mailbox<Start>,
    counter: Addr<CounterMsg>,
    n: u64,
    done: Arc<Done>,
) {
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

pub(super) async fn counting(n: u64) -> Result<u64, String> {
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

pub(super) async fn fj_throughput(actors: u64, msgs: u64) -> Result<u64, String> {
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

pub(super) async fn fj_creation(n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(n);
    for i in 0..n {
        send(&start_fj_worker(1, &done), Work(i));
    }
    drop(done);
    common::wait(rx).await
}

pub(super) async fn scale(n: u64) -> Result<u64, String> {
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

pub(super) async fn thread_ring(actors: u64, passes: u64) -> Result<u64, String> {
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

pub(super) async fn chameneos(creatures: u64, meetings: u64) -> Result<u64, String> {
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

pub(super) async fn big(actors: u64, pings: u64) -> Result<u64, String> {
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
