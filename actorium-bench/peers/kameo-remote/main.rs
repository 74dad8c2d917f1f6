//! The remote benchmark's kameo peer: kameo's `remote` feature (libp2p) between two processes
//! on 127.0.0.1 — a swarm of TCP + noise + yamux only (no mDNS, no QUIC), the client given
//! the server's address, actors found through kameo's registry (Kademlia).
//!
//!   kameo-remote server            registers `echo` and `counter`, listens on a free port of
//!                                  127.0.0.1; prints `ready <port> <peer id>` and serves until
//!                                  stdin closes
//!   kameo-remote client PORT PEER N TELLS SPARSE
//!
//! `echo` answers `Ping(i)` with i + 1; `counter` counts and sums `Item(a, b)` tells and
//! answers `Count` with (count, sum). The client measures from the async main task (the default
//! multi-thread tokio runtime): N sequential remote `ask`s (p50, p99), TELLS (at most 10^5)
//! tells with 100 acknowledged ones in flight, then one `Count` (every tell counted and
//! summed: the checksum), SPARSE asks one per 5 ms (p50); it prints
//! `RESULT call_p50_us=.. call_p99_us=.. tell_mps=.. sparse_p50_us=..` and exits 0.

use futures::StreamExt;
use kameo::prelude::*;
use libp2p::{noise, swarm::SwarmEvent, tcp, yamux, Multiaddr, PeerId};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// Acknowledged tells in flight (kameo's default `max_concurrent_streams`).
const WINDOW: usize = 100;
/// The most tells measured: at about 10^4 a second, 10^5 give the rate in seconds.
const MAX_TELLS: u64 = 100_000;

#[derive(Actor, RemoteActor)]
struct Echo;

#[derive(Serialize, Deserialize)]
struct Ping(u64);

#[remote_message("bench.Ping")]
impl Message<Ping> for Echo {
    type Reply = u64;
    async fn handle(&mut self, Ping(i): Ping, _: &mut Context<Self, u64>) -> u64 {
        i + 1
    }
}

#[derive(Actor, RemoteActor, Default)]
struct Counter {
    count: u64,
    sum: u64,
}

#[derive(Serialize, Deserialize)]
struct Item(u64, u64);

#[derive(Serialize, Deserialize)]
struct Count;

#[remote_message("bench.Item")]
impl Message<Item> for Counter {
    type Reply = ();
    async fn handle(&mut self, Item(a, b): Item, _: &mut Context<Self, ()>) {
        self.count += 1;
        self.sum = self.sum.wrapping_add(a ^ b);
    }
}

#[remote_message("bench.Count")]
impl Message<Count> for Counter {
    type Reply = (u64, u64);
    async fn handle(&mut self, _: Count, _: &mut Context<Self, (u64, u64)>) -> (u64, u64) {
        (self.count, self.sum)
    }
}

/// Starts a swarm listening on 127.0.0.1 (TCP only); returns its peer id and, once known, the
/// port it listens on. `dial`: the server's address, given to the registry and dialled.
async fn swarm(dial: Option<(PeerId, Multiaddr)>) -> Result<(PeerId, u16), String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let mut swarm = libp2p::SwarmBuilder::with_new_identity()
        .with_tokio()
        .with_tcp(
            tcp::Config::default().nodelay(true),
            noise::Config::new,
            yamux::Config::default,
        )
        .map_err(|x| e(&x))?
        .with_behaviour(|key| {
            Ok(remote::Behaviour::new(
                key.public().to_peer_id(),
                remote::messaging::Config::default(),
            ))
        })
        .map_err(|x| e(&x))?
        .with_swarm_config(|c| c.with_idle_connection_timeout(Duration::from_secs(300)))
        .build();
    swarm.behaviour().init_global();
    swarm
        .listen_on("/ip4/127.0.0.1/tcp/0".parse().map_err(|x| e(&x))?)
        .map_err(|x| e(&x))?;
    if let Some((peer, addr)) = dial {
        swarm.add_peer_address(peer, addr.clone());
        swarm.dial(addr).map_err(|x| e(&x))?;
    }
    let me = *swarm.local_peer_id();
    let (port_tx, port_rx) = tokio::sync::oneshot::channel();
    let mut port_tx = Some(port_tx);
    tokio::spawn(async move {
        loop {
            if let SwarmEvent::NewListenAddr { address, .. } = swarm.select_next_some().await {
                let port = address.iter().find_map(|p| match p {
                    libp2p::multiaddr::Protocol::Tcp(port) => Some(port),
                    _ => None,
                });
                if let (Some(port), Some(tx)) = (port, port_tx.take()) {
                    let _ = tx.send(port);
                }
            }
        }
    });
    let port = port_rx.await.map_err(|x| e(&x))?;
    Ok((me, port))
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
    let r = match args.get(1).map(String::as_str) {
        Some("server") => server().await,
        Some("client") if args.len() == 7 => {
            let num = |i: usize| args[i].parse::<u64>().map_err(|x| x.to_string());
            match (num(2), args[3].parse::<PeerId>(), num(4), num(5), num(6)) {
                (Ok(port), Ok(peer), Ok(n), Ok(tells), Ok(sparse)) => {
                    client(port as u16, peer, n, tells, sparse).await
                }
                _ => Err("bad arguments".into()),
            }
        }
        _ => Err("usage: kameo-remote server | client PORT PEER N TELLS SPARSE".into()),
    };
    if let Err(e) = r {
        eprintln!("kameo-remote: {e}");
        std::process::exit(1);
    }
}

async fn server() -> Result<(), String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let (me, port) = swarm(None).await?;
    let echo = Echo::spawn(Echo);
    echo.register("bench.echo").await.map_err(|x| e(&x))?;
    let counter = Counter::spawn(Counter::default());
    counter.register("bench.counter").await.map_err(|x| e(&x))?;
    println!("ready {port} {me}");
    // Serves until the parent closes stdin.
    use tokio::io::AsyncReadExt;
    let mut buf = [0u8; 64];
    let mut stdin = tokio::io::stdin();
    while matches!(stdin.read(&mut buf).await, Ok(n) if n > 0) {}
    Ok(())
}

async fn client(port: u16, peer: PeerId, n: u64, tells: u64, sparse: u64) -> Result<(), String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let addr: Multiaddr = format!("/ip4/127.0.0.1/tcp/{port}")
        .parse()
        .map_err(|x| e(&x))?;
    swarm(Some((peer, addr))).await?;
    // The server's actors, once the registry answers.
    let deadline = Instant::now() + Duration::from_secs(20);
    let (echo, counter) = loop {
        let echo = RemoteActorRef::<Echo>::lookup("bench.echo").await;
        let counter = RemoteActorRef::<Counter>::lookup("bench.counter").await;
        if let (Ok(Some(a)), Ok(Some(b))) = (echo, counter) {
            break (a, b);
        }
        if Instant::now() > deadline {
            return Err("the server's actors never appeared".into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    // Warm-up: the first requests may meet the connection the registry's query used closing
    // as the dialled one takes over.
    let warm = Instant::now() + Duration::from_secs(10);
    while echo.ask(&Ping(0)).await.is_err() {
        if Instant::now() > warm {
            return Err("the echo never answered".into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut lat = Vec::with_capacity(n as usize);
    mark(None);
    for i in 0..n {
        let t = Instant::now();
        let j = echo.ask(&Ping(i)).await.map_err(|x| e(&x))?;
        lat.push(t.elapsed());
        if j != i + 1 {
            return Err("checksum: a wrong reply".into());
        }
    }
    mark(Some(n));
    let (p50, p99) = (pct(&mut lat, 50), pct(&mut lat, 99));
    let tells = tells.min(MAX_TELLS);
    let (c0, s0) = counter.ask(&Count).await.map_err(|x| e(&x))?;
    mark(None);
    let t = Instant::now();
    let mut sum = s0;
    // Each remote message takes a stream of its own, and a connection has at most
    // `max_concurrent_streams` (100 by default): past that a fire-and-forget `send` is lost.
    // So the flood keeps 100 acknowledged tells (`send_ack`) in flight.
    let mut in_flight = futures::stream::FuturesUnordered::new();
    for i in 0..tells {
        if in_flight.len() == WINDOW {
            let r: Result<(), String> = in_flight.next().await.expect("a tell in flight");
            r?;
        }
        let c = counter.clone();
        in_flight.push(async move { c.tell(&Item(i, 2 * i + 1)).send_ack().await.map_err(|x| e(&x)) });
        sum = sum.wrapping_add(i ^ (2 * i + 1));
    }
    while let Some(r) = in_flight.next().await {
        r?;
    }
    let (count, got) = counter.ask(&Count).await.map_err(|x| e(&x))?;
    if (count - c0, got) != (tells, sum) {
        return Err(format!("checksum: {} tells of {tells}", count - c0));
    }
    let secs = t.elapsed().as_secs_f64();
    mark(Some(tells));
    let mut sl = Vec::with_capacity(sparse as usize);
    for i in 0..sparse {
        tokio::time::sleep(Duration::from_millis(5)).await;
        let t = Instant::now();
        echo.ask(&Ping(i)).await.map_err(|x| e(&x))?;
        sl.push(t.elapsed());
    }
    println!(
        "RESULT call_p50_us={p50:.2} call_p99_us={p99:.2} tell_mps={:.4} sparse_p50_us={:.2}",
        tells as f64 / secs / 1e6,
        if sl.is_empty() { 0.0 } else { pct(&mut sl, 50) }
    );
    Ok(())
}
