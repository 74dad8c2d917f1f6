//! The remote benchmark's ractor_cluster peer: two `NodeServer`s on 127.0.0.1 (ractor's
//! documented way to cross processes), actors found through process groups.
//!
//!   ractor-cluster-remote server            a node with `echo` and `counter` (in the process
//!                                           groups `bench.echo`, `bench.counter`), listening
//!                                           on a free port of 127.0.0.1; prints
//!                                           `ready <port>` and serves until stdin closes
//!   ractor-cluster-remote client PORT N TELLS SPARSE
//!
//! `echo` answers `Ping(i)` with i + 1; `counter` counts and sums `Item(x)` casts and answers
//! `Take` with [count, sum], resetting both. The client connects its own node to the server's,
//! waits for both actors to appear in their groups, and measures from the async main task
//! (the default multi-thread tokio runtime): N sequential `call!`s (p50, p99), TELLS `cast`s
//! then one `Take` (every one counted and summed: the checksum), SPARSE calls one per 5 ms
//! (p50); it prints `RESULT call_p50_us=.. call_p99_us=.. tell_mps=.. sparse_p50_us=..` and
//! exits 0.

use ractor::{call, Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use ractor_cluster::{NodeServer, RactorClusterMessage};
use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::time::{Duration, Instant};

/// The process groups the server's actors join (a remote actor's message type cannot be
/// checked at run time: one group each).
const ECHO: &str = "bench.echo";
const COUNTER: &str = "bench.counter";
const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

#[derive(RactorClusterMessage)]
enum EchoMsg {
    #[rpc]
    Ping(u64, RpcReplyPort<u64>),
}

#[derive(RactorClusterMessage)]
enum CounterMsg {
    Item(u128),
    #[rpc]
    Take(RpcReplyPort<Vec<u64>>),
}

struct Echo;
impl Actor for Echo {
    type Msg = EchoMsg;
    type State = ();
    type Arguments = ();
    async fn pre_start(&self, me: ActorRef<EchoMsg>, _: ()) -> Result<(), ActorProcessingErr> {
        ractor::pg::join(ECHO.to_string(), vec![me.get_cell()]);
        Ok(())
    }
    async fn handle(
        &self,
        _: ActorRef<EchoMsg>,
        m: EchoMsg,
        _: &mut (),
    ) -> Result<(), ActorProcessingErr> {
        let EchoMsg::Ping(i, reply) = m;
        let _ = reply.send(i + 1);
        Ok(())
    }
}

struct Counter;
impl Actor for Counter {
    type Msg = CounterMsg;
    type State = (u64, u64);
    type Arguments = ();
    async fn pre_start(
        &self,
        me: ActorRef<CounterMsg>,
        _: (),
    ) -> Result<(u64, u64), ActorProcessingErr> {
        ractor::pg::join(COUNTER.to_string(), vec![me.get_cell()]);
        Ok((0, 0))
    }
    async fn handle(
        &self,
        _: ActorRef<CounterMsg>,
        m: CounterMsg,
        st: &mut (u64, u64),
    ) -> Result<(), ActorProcessingErr> {
        match m {
            CounterMsg::Item(x) => {
                st.0 += 1;
                st.1 = st.1.wrapping_add((x as u64) ^ ((x >> 64) as u64));
            }
            CounterMsg::Take(reply) => {
                let _ = reply.send(vec![st.0, st.1]);
                *st = (0, 0);
            }
        }
        Ok(())
    }
}

fn free_port() -> u16 {
    TcpListener::bind((LOOPBACK, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port on 127.0.0.1")
}

async fn node(name: &str) -> (ActorRef<ractor_cluster::NodeServerMessage>, u16) {
    let port = free_port();
    let server = NodeServer::new(
        port,
        "actorium-bench".into(),
        format!("{name}{}", std::process::id()),
        "127.0.0.1".into(),
        None,
        None,
    )
    .with_listen_addr(LOOPBACK);
    let (node, _) = Actor::spawn(None, server, ()).await.expect("a node server");
    (node, port)
}

/// Tells the benchmark a phase begins (`mark`) or ends (`mark COUNT`, the phase's round trips
/// or messages) and waits for a line on stdin: the benchmark reads both processes' CPU time
/// meanwhile. (A blocking read on a runtime thread: nothing runs in between anyway.)
fn mark(count: Option<u64>) {
    match count {
        Some(c) => println!("mark {c}"),
        None => println!("mark"),
    }
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

fn pct(v: &mut [Duration], p: usize) -> f64 {
    v.sort();
    v[(v.len() * p / 100).min(v.len() - 1)].as_secs_f64() * 1e6
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("server") => server().await,
        Some("client") if args.len() == 6 => {
            let num = |i: usize| args[i].parse::<u64>().expect("a number");
            let port = num(2) as u16;
            if let Err(e) = client(port, num(3), num(4), num(5)).await {
                eprintln!("ractor-cluster-remote: {e}");
                std::process::exit(1);
            }
        }
        _ => {
            eprintln!("usage: ractor-cluster-remote server | client PORT N TELLS SPARSE");
            std::process::exit(2);
        }
    }
}

async fn server() {
    let (_node, port) = node("abench_srv").await;
    let (_echo, _) = Actor::spawn(None, Echo, ()).await.expect("echo");
    let (_counter, _) = Actor::spawn(None, Counter, ()).await.expect("counter");
    println!("ready {port}");
    // Serves until the parent closes stdin.
    use tokio::io::AsyncReadExt;
    let mut buf = [0u8; 64];
    let mut stdin = tokio::io::stdin();
    while matches!(stdin.read(&mut buf).await, Ok(n) if n > 0) {}
}

async fn client(port: u16, n: u64, tells: u64, sparse: u64) -> Result<(), String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let (node, _) = node("abench_cli").await;
    ractor_cluster::client_connect(&node, (LOOPBACK, port))
        .await
        .map_err(|x| e(&x))?;
    // The server's actors, once the process group is synchronised.
    let deadline = Instant::now() + Duration::from_secs(20);
    let remote = |group: &str| {
        ractor::pg::get_members(&group.to_string())
            .into_iter()
            .find(|c| !c.get_id().is_local())
    };
    let (echo, counter) = loop {
        if let (Some(a), Some(b)) = (remote(ECHO), remote(COUNTER)) {
            break (
                ActorRef::<EchoMsg>::from(a),
                ActorRef::<CounterMsg>::from(b),
            );
        }
        if Instant::now() > deadline {
            return Err("the server's actors never appeared".into());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let mut lat = Vec::with_capacity(n as usize);
    mark(None);
    for i in 0..n {
        let t = Instant::now();
        let j = call!(echo, EchoMsg::Ping, i).map_err(|x| e(&x))?;
        lat.push(t.elapsed());
        if j != i + 1 {
            return Err("checksum: a wrong reply".into());
        }
    }
    mark(Some(n));
    let (p50, p99) = (pct(&mut lat, 50), pct(&mut lat, 99));
    mark(None);
    let t = Instant::now();
    let mut sum = 0u64;
    for i in 0..tells {
        let x = (u128::from(2 * i + 1) << 64) | u128::from(i);
        counter.cast(CounterMsg::Item(x)).map_err(|x| e(&x))?;
        sum = sum.wrapping_add(i ^ (2 * i + 1));
    }
    let got = call!(counter, CounterMsg::Take).map_err(|x| e(&x))?;
    let secs = t.elapsed().as_secs_f64();
    mark(Some(tells));
    if got != [tells, sum] {
        return Err(format!("checksum: {got:?} against {tells} tells"));
    }
    let mut sl = Vec::with_capacity(sparse as usize);
    for i in 0..sparse {
        tokio::time::sleep(Duration::from_millis(5)).await;
        let t = Instant::now();
        call!(echo, EchoMsg::Ping, i).map_err(|x| e(&x))?;
        sl.push(t.elapsed());
    }
    println!(
        "RESULT call_p50_us={p50:.2} call_p99_us={p99:.2} tell_mps={:.4} sparse_p50_us={:.2}",
        tells as f64 / secs / 1e6,
        if sl.is_empty() { 0.0 } else { pct(&mut sl, 50) }
    );
    Ok(())
}
