//! `actorium-bench remote`: remote actors between two processes on 127.0.0.1, with the floors
//! measured in the same run. A child process (`remote-exec`) serves a TCP echo, a raw Zenoh
//! session, and an actorium node (an echo that answers asks, a counter that sums tells); the
//! parent measures, in alternating rounds (medians over rounds):
//! - floors: raw TCP ping-pong (16 bytes, `TCP_NODELAY`), Zenoh put/subscribe ping-pong and
//!   get/queryable round trip, Zenoh raw 16-byte publish → subscribe throughput (blocking
//!   congestion control, as actorium's);
//! - actorium: ask round trip from a thread and from an actor (`ctx.ask`, one after the
//!   other), tell throughput (every tell counted and summed by the far actor: the checksum);
//! - sparse: one ask (and one Zenoh ping) every 5 ms: latency at low rates.
//!
//! CPU: user + system seconds of both processes over each throughput phase, per 10^6
//! messages, and over the back-to-back round trips of Zenoh and of asks from a thread, per
//! 10^6 round trips; the peers' over their round trips and their tells (their clients mark
//! each phase's start and end and wait while both processes' CPU time is read).
//!
//! Peers (`remote_peers`), when installed: Erlang distribution, CAF's middleman,
//! ractor_cluster and kameo's remote, one client run per round, in the same rounds.

use actorium::remote::{RemoteConfig, RemoteMessage};
use actorium::{Actor, ActorSystem, Allocation, Ask, AskError, Context, Receive, Recipient};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use zenoh::qos::CongestionControl;
use zenoh::Wait;

use crate::remote_peers::Peer;

#[derive(Serialize, Deserialize)]
struct Ping(u64);
impl RemoteMessage for Ping {
    const TAG: &'static str = "bench.Ping";
}
#[derive(Serialize, Deserialize)]
struct Pong(u64);
impl RemoteMessage for Pong {
    const TAG: &'static str = "bench.Pong";
}
/// A tell: 16 bytes of payload, as the Zenoh floor's.
#[derive(Serialize, Deserialize)]
struct Item(u64, u64);
impl RemoteMessage for Item {
    const TAG: &'static str = "bench.Item";
}
/// Asks the counter for (count, sum) and resets it.
#[derive(Serialize, Deserialize)]
struct Take;
impl RemoteMessage for Take {
    const TAG: &'static str = "bench.Take";
}
#[derive(Serialize, Deserialize)]
struct Tally(u64, u64);
impl RemoteMessage for Tally {
    const TAG: &'static str = "bench.Tally";
}

struct Echo;
impl Actor for Echo {}
impl Receive<Ask<Ping, Pong>> for Echo {
    fn receive(&mut self, a: Ask<Ping, Pong>, _: &mut Context<'_, Self>) -> Allocation {
        let _ = a.reply.send(Pong(a.msg.0 + 1));
        Allocation::Nodelete
    }
}

#[derive(Default)]
struct Counter(u64, u64);
impl Actor for Counter {}
impl Receive<Item> for Counter {
    fn receive(&mut self, Item(a, b): Item, _: &mut Context<'_, Self>) -> Allocation {
        self.0 += 1;
        self.1 = self.1.wrapping_add(a ^ b);
        Allocation::Nodelete
    }
}
impl Receive<Ask<Take, Tally>> for Counter {
    fn receive(&mut self, a: Ask<Take, Tally>, _: &mut Context<'_, Self>) -> Allocation {
        let _ = a.reply.send(Tally(self.0, self.1));
        (self.0, self.1) = (0, 0);
        Allocation::Nodelete
    }
}

fn zenoh_config(listen: Option<u16>, connect: Option<u16>) -> zenoh::Config {
    let mut c = zenoh::Config::default();
    c.insert_json5("scouting/multicast/enabled", "false")
        .unwrap();
    c.insert_json5("scouting/delay", "0").unwrap();
    let eps = |p: Option<u16>| match p {
        Some(p) => format!("[\"tcp/127.0.0.1:{p}\"]"),
        None => "[]".into(),
    };
    c.insert_json5("listen/endpoints", &eps(listen)).unwrap();
    c.insert_json5("connect/endpoints", &eps(connect)).unwrap();
    c
}

/// The ports the child serves on: actorium node, raw Zenoh, TCP echo.
#[derive(Clone, Copy)]
pub struct Ports {
    node: u16,
    zenoh: u16,
    tcp: u16,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The child: serves until its stdin closes.
pub fn exec(node_port: u16, zenoh_port: u16, tcp_port: u16) -> Result<(), String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    // TCP echo (one connection at a time).
    let listener = TcpListener::bind(("127.0.0.1", tcp_port)).map_err(|x| e(&x))?;
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let Ok(mut s) = s else { continue };
            let _ = s.set_nodelay(true);
            let mut buf = [0u8; 16];
            while s.read_exact(&mut buf).is_ok() {
                if s.write_all(&buf).is_err() {
                    break;
                }
            }
        }
    });
    // Raw Zenoh: ping → pong, and a flood counter that answers on `done` once told how many.
    let z = zenoh::open(zenoh_config(Some(zenoh_port), None))
        .wait()
        .map_err(|x| e(&x))?;
    let pong = z
        .declare_publisher("bench/pong")
        .congestion_control(CongestionControl::Block)
        .wait()
        .map_err(|x| e(&x))?;
    let _ping = z
        .declare_subscriber("bench/ping")
        .callback(move |s| {
            let _ = pong.put(s.payload().clone()).wait();
        })
        .wait()
        .map_err(|x| e(&x))?;
    let _query = z
        .declare_queryable("bench/query")
        .callback(|q| {
            let _ = q.reply(q.key_expr().clone(), vec![0u8; 16]).wait();
        })
        .wait()
        .map_err(|x| e(&x))?;
    let done = z
        .declare_publisher("bench/done")
        .congestion_control(CongestionControl::Block)
        .wait()
        .map_err(|x| e(&x))?;
    let count = std::sync::Mutex::new(0u64);
    let _flood = z
        .declare_subscriber("bench/flood")
        .callback(move |s| {
            let b = s.payload().to_bytes();
            let mut c = count.lock().unwrap();
            *c += 1;
            // The last message carries the total (first 8 bytes) with a marker.
            if b.len() == 16 && b[8..] == [0xff; 8] {
                let total = u64::from_le_bytes(b[..8].try_into().unwrap());
                let ok = *c == total;
                *c = 0;
                let _ = done.put(vec![u8::from(ok)]).wait();
            }
        })
        .wait()
        .map_err(|x| e(&x))?;
    // actorium.
    let system = ActorSystem::new().map_err(|x| e(&x))?;
    let node = system
        .remote(RemoteConfig::peer().listen(format!("tcp/127.0.0.1:{node_port}")))
        .map_err(|x| e(&x))?;
    node.register::<Ask<Ping, Pong>>("echo", &system.spawn(Echo))
        .map_err(|x| e(&x))?;
    let counter = system.spawn(Counter::default());
    node.register::<Item>("counter", &counter)
        .map_err(|x| e(&x))?;
    node.register::<Ask<Take, Tally>>("counter", &counter)
        .map_err(|x| e(&x))?;
    println!("remote-exec-ready");
    // Until the parent goes.
    let _ = std::io::stdin().read(&mut [0u8; 1]);
    Ok(())
}

/// CPU seconds (user + system) of this process and of `child`.
fn cpu(child: u32) -> f64 {
    let own = {
        // SAFETY: getrusage writes the struct it is given.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
        let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
        t(u.ru_utime) + t(u.ru_stime)
    };
    own + proc_cpu(child).unwrap_or(0.0)
}

/// CPU seconds (user + system) of process `pid` so far, from `/proc` (`None` where it cannot
/// be read: the process is gone, or this is not Linux).
pub(crate) fn proc_cpu(pid: u32) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = s.rsplit(')').next()?.to_string();
    let f: Vec<&str> = rest.split_whitespace().collect();
    // Fields 14 and 15 (utime, stime), counted from the state at index 0 = field 3.
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    Some(ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64)
}

fn pct(v: &mut [Duration], p: usize) -> f64 {
    v.sort();
    v[(v.len() * p / 100).min(v.len() - 1)].as_secs_f64() * 1e6
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Asks one after the other from inside an actor, timing each round trip (from the ask to
/// its continuation); tells the times when done.
struct Asker {
    echo: Recipient<Ask<Ping, Pong>>,
    left: u64,
    lat: Vec<Duration>,
    done: mpsc::Sender<Result<Vec<Duration>, AskError>>,
}
impl Asker {
    fn next(&mut self, ctx: &mut Context<'_, Self>) {
        if self.left == 0 {
            let _ = self.done.send(Ok(std::mem::take(&mut self.lat)));
            return;
        }
        let i = self.left;
        let t = Instant::now();
        let asked = ctx.ask(&self.echo, Ping(i), move |me: &mut Self, r, ctx| {
            match r {
                Ok(Pong(j)) if j == i + 1 => {
                    me.lat.push(t.elapsed());
                    me.left -= 1;
                    me.next(ctx);
                }
                Ok(_) => panic!("checksum: a wrong reply"),
                Err(e) => {
                    let _ = me.done.send(Err(e));
                }
            }
            Allocation::Nodelete
        });
        asked.expect("the echo lives");
    }
}
impl Actor for Asker {}
impl Receive<u64> for Asker {
    fn receive(&mut self, n: u64, ctx: &mut Context<'_, Self>) -> Allocation {
        self.left = n;
        self.lat = Vec::with_capacity(n as usize);
        self.next(ctx);
        Allocation::Nodelete
    }
}

/// One round's numbers, by case.
type Round = Vec<(String, f64)>;

struct Rows(Round);
impl Rows {
    fn push(&mut self, case: impl Into<String>, v: f64) {
        self.0.push((case.into(), v));
    }
}

/// Runs the benchmark: `n` round trips per latency case, `tells` per throughput case,
/// `rounds` alternating rounds, with the peers named in `peers` (every installed one when it
/// is empty). Returns the markdown report.
pub fn run(
    n: u64,
    tells: u64,
    rounds: usize,
    sparse: u64,
    peers: &[String],
) -> Result<String, String> {
    let ports = Ports {
        node: free_port(),
        zenoh: free_port(),
        tcp: free_port(),
    };
    let mut child: Child = Command::new(std::env::current_exe().map_err(|e| e.to_string())?)
        .args([
            "remote-exec",
            &ports.node.to_string(),
            &ports.zenoh.to_string(),
            &ports.tcp.to_string(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    loop {
        match lines.next() {
            Some(Ok(l)) if l.contains("remote-exec-ready") => break,
            Some(Ok(_)) => {}
            _ => return Err("the server process did not start".into()),
        }
    }
    std::thread::spawn(move || lines.for_each(drop));
    let pid = child.id();
    let r = measure(ports, pid, n, tells, rounds, sparse, peers);
    drop(child.stdin.take());
    let _ = child.wait();
    r
}

fn measure(
    ports: Ports,
    pid: u32,
    n: u64,
    tells: u64,
    rounds: usize,
    sparse: u64,
    peers: &[String],
) -> Result<String, String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let find = Duration::from_secs(20);
    // TCP.
    let mut tcp = TcpStream::connect(("127.0.0.1", ports.tcp)).map_err(|x| e(&x))?;
    tcp.set_nodelay(true).map_err(|x| e(&x))?;
    // Raw Zenoh.
    let z = zenoh::open(zenoh_config(None, Some(ports.zenoh)))
        .wait()
        .map_err(|x| e(&x))?;
    let ping = z
        .declare_publisher("bench/ping")
        .congestion_control(CongestionControl::Block)
        .wait()
        .map_err(|x| e(&x))?;
    let flood = z
        .declare_publisher("bench/flood")
        .congestion_control(CongestionControl::Block)
        .wait()
        .map_err(|x| e(&x))?;
    let (pong_tx, pong_rx) = mpsc::channel::<()>();
    let _pong = z
        .declare_subscriber("bench/pong")
        .callback(move |_| {
            let _ = pong_tx.send(());
        })
        .wait()
        .map_err(|x| e(&x))?;
    let (done_tx, done_rx) = mpsc::channel::<bool>();
    let _done = z
        .declare_subscriber("bench/done")
        .callback(move |s| {
            let _ = done_tx.send(s.payload().to_bytes().first() == Some(&1));
        })
        .wait()
        .map_err(|x| e(&x))?;
    // Wait until the child's subscribers are known: a ping answered.
    let ready = Instant::now();
    loop {
        ping.put(vec![0u8; 16]).wait().map_err(|x| e(&x))?;
        if pong_rx.recv_timeout(Duration::from_millis(100)).is_ok() {
            break;
        }
        if ready.elapsed() > find {
            return Err("the raw Zenoh session did not answer".into());
        }
    }
    while pong_rx.try_recv().is_ok() {}
    // actorium.
    let system = ActorSystem::new().map_err(|x| e(&x))?;
    let node = system
        .remote(RemoteConfig::peer().connect(format!("tcp/127.0.0.1:{}", ports.node)))
        .map_err(|x| e(&x))?;
    let echo = node
        .lookup::<Ask<Ping, Pong>>("echo", find)
        .map_err(|x| e(&x))?;
    let items = node.lookup::<Item>("counter", find).map_err(|x| e(&x))?;
    let take = node
        .lookup::<Ask<Take, Tally>>("counter", find)
        .map_err(|x| e(&x))?;
    let (adone_tx, adone_rx) = mpsc::channel();
    let asker = system.spawn(Asker {
        echo: echo.clone(),
        left: 0,
        lat: Vec::new(),
        done: adone_tx,
    });

    let peers = Peer::start_all(peers);
    // A peer whose round fails is reported, and not run again (its cells: the rounds it
    // finished).
    let mut failed = vec![false; peers.len()];
    let mut all: Vec<Round> = Vec::new();
    for _ in 0..rounds {
        let mut round = Rows(Vec::new());
        for (peer, failed) in peers.iter().zip(&mut failed) {
            let r = if *failed {
                Err(String::new())
            } else {
                peer.round(n, tells, sparse)
            };
            let [p50, p99, mps, sparse_p50, call_cpu, tell_cpu] = r.unwrap_or_else(|why| {
                if !*failed {
                    eprintln!("remote: the {} peer failed: {why}", peer.name);
                    *failed = true;
                }
                [f64::NAN; 6]
            });
            let name = peer.name;
            round.push(format!("{name} call p50 (µs)"), p50);
            round.push(format!("{name} call p99 (µs)"), p99);
            round.push(format!("{name} tell throughput (M msg/s)"), mps);
            round.push(format!("{name} sparse call p50 (µs)"), sparse_p50);
            round.push(format!("{name} call CPU s / 10^6 round trips"), call_cpu);
            round.push(format!("{name} tell CPU s / 10^6 msgs"), tell_cpu);
        }
        // TCP ping-pong.
        let mut lat = Vec::with_capacity(n as usize);
        let mut buf = [0u8; 16];
        for _ in 0..n {
            let t = Instant::now();
            tcp.write_all(&buf).map_err(|x| e(&x))?;
            tcp.read_exact(&mut buf).map_err(|x| e(&x))?;
            lat.push(t.elapsed());
        }
        round.push("tcp ping-pong p50 (µs)", pct(&mut lat, 50));
        round.push("tcp ping-pong p99 (µs)", pct(&mut lat, 99));
        // Zenoh ping-pong.
        let mut lat = Vec::with_capacity(n as usize);
        let c0 = cpu(pid);
        for _ in 0..n {
            let t = Instant::now();
            ping.put(vec![0u8; 16]).wait().map_err(|x| e(&x))?;
            pong_rx.recv_timeout(find).map_err(|x| e(&x))?;
            lat.push(t.elapsed());
        }
        let per = (cpu(pid) - c0) * 1e6 / n as f64;
        round.push("zenoh ping-pong p50 (µs)", pct(&mut lat, 50));
        round.push("zenoh ping-pong p99 (µs)", pct(&mut lat, 99));
        round.push("zenoh ping-pong CPU s / 10^6 round trips", per);
        // Zenoh get/queryable: until the one reply.
        let mut lat = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let t = Instant::now();
            let replies = z.get("bench/query").wait().map_err(|x| e(&x))?;
            let reply = replies.recv().map_err(|x| e(&x))?;
            lat.push(t.elapsed());
            reply
                .result()
                .map_err(|_| "the queryable answered an error")?;
        }
        round.push("zenoh get/queryable p50 (µs)", pct(&mut lat, 50));
        round.push("zenoh get/queryable p99 (µs)", pct(&mut lat, 99));
        // actorium ask from a thread.
        let mut lat = Vec::with_capacity(n as usize);
        let c0 = cpu(pid);
        for i in 0..n {
            let t = Instant::now();
            let Pong(j) = echo
                .ask(Ping(i))
                .map_err(|x| e(&x))?
                .wait()
                .map_err(|x| e(&x))?;
            lat.push(t.elapsed());
            if j != i + 1 {
                return Err("checksum: a wrong reply".into());
            }
        }
        let per = (cpu(pid) - c0) * 1e6 / n as f64;
        round.push("actorium ask (thread) p50 (µs)", pct(&mut lat, 50));
        round.push("actorium ask (thread) p99 (µs)", pct(&mut lat, 99));
        round.push("actorium ask (thread) CPU s / 10^6 round trips", per);
        // actorium ask from an actor.
        asker.send(n).map_err(|x| e(&x))?;
        let mut lat = adone_rx.recv().map_err(|x| e(&x))?.map_err(|x| e(&x))?;
        round.push("actorium ask (ctx.ask) p50 (µs)", pct(&mut lat, 50));
        round.push("actorium ask (ctx.ask) p99 (µs)", pct(&mut lat, 99));
        // Zenoh raw throughput.
        let c0 = cpu(pid);
        let t = Instant::now();
        for i in 0..tells - 1 {
            let mut m = [0u8; 16];
            m[..8].copy_from_slice(&i.to_le_bytes());
            flood.put(m.to_vec()).wait().map_err(|x| e(&x))?;
        }
        let mut last = [0xffu8; 16];
        last[..8].copy_from_slice(&tells.to_le_bytes());
        flood.put(last.to_vec()).wait().map_err(|x| e(&x))?;
        if !done_rx
            .recv_timeout(Duration::from_secs(120))
            .map_err(|x| e(&x))?
        {
            return Err("checksum: the Zenoh flood lost messages".into());
        }
        let secs = t.elapsed().as_secs_f64();
        round.push("zenoh throughput (M msg/s)", tells as f64 / secs / 1e6);
        round.push(
            "zenoh CPU s / 10^6 msgs",
            (cpu(pid) - c0) * 1e6 / tells as f64,
        );
        // actorium tells.
        let c0 = cpu(pid);
        let t = Instant::now();
        let mut sum = 0u64;
        for i in 0..tells {
            items.send(Item(i, 2 * i + 1)).map_err(|x| e(&x))?;
            sum = sum.wrapping_add(i ^ (2 * i + 1));
        }
        let Tally(count, got) = take
            .ask(Take)
            .map_err(|x| e(&x))?
            .wait()
            .map_err(|x| e(&x))?;
        let secs = t.elapsed().as_secs_f64();
        if (count, got) != (tells, sum) {
            return Err(format!("checksum: {count} tells counted of {tells}"));
        }
        round.push(
            "actorium tell throughput (M msg/s)",
            tells as f64 / secs / 1e6,
        );
        round.push(
            "actorium tell CPU s / 10^6 msgs",
            (cpu(pid) - c0) * 1e6 / tells as f64,
        );
        // Sparse: one every 5 ms.
        let mut zl = Vec::new();
        let mut al = Vec::new();
        for i in 0..sparse {
            std::thread::sleep(Duration::from_millis(5));
            let t = Instant::now();
            ping.put(vec![0u8; 16]).wait().map_err(|x| e(&x))?;
            pong_rx.recv_timeout(find).map_err(|x| e(&x))?;
            zl.push(t.elapsed());
            std::thread::sleep(Duration::from_millis(5));
            let t = Instant::now();
            let Pong(j) = echo
                .ask(Ping(i))
                .map_err(|x| e(&x))?
                .wait()
                .map_err(|x| e(&x))?;
            al.push(t.elapsed());
            if j != i + 1 {
                return Err("checksum: a wrong sparse reply".into());
            }
        }
        round.push("zenoh sparse ping-pong p50 (µs)", pct(&mut zl, 50));
        round.push("zenoh sparse ping-pong p99 (µs)", pct(&mut zl, 99));
        round.push("actorium sparse ask p50 (µs)", pct(&mut al, 50));
        round.push("actorium sparse ask p99 (µs)", pct(&mut al, 99));
        all.push(round.0);
    }
    let mut md = format!(
        "# Remote: two processes on 127.0.0.1\n\n{n} round trips per latency case, {tells} \
         messages per throughput case, {sparse} sparse round trips (one per 5 ms); medians \
         of {rounds} alternating rounds. CPU: both processes. Peers measured in the same \
         rounds: {}.\n\n| measure | median | min | max |\n|---|---|---|---|\n",
        if peers.is_empty() {
            "none (installed by scripts/install-peers.sh; chosen with --systems)".to_string()
        } else {
            peers.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
        }
    );
    for (i, (name, _)) in all[0].iter().enumerate() {
        let mut v: Vec<f64> = all.iter().map(|r| r[i].1).filter(|x| !x.is_nan()).collect();
        if v.is_empty() {
            md += &format!("| {name} | failed | | |\n");
            continue;
        }
        let (lo, hi) = v
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
        let f = |x: f64| match x.abs() < 1.0 {
            true => format!("{x:.3}"),
            false => format!("{x:.2}"),
        };
        let name = match v.len() < all.len() {
            true => format!("{name} ({} of {} rounds)", v.len(), all.len()),
            false => name.clone(),
        };
        md += &format!(
            "| {name} | {} | {} | {} |\n",
            f(median(&mut v)),
            f(lo),
            f(hi)
        );
    }
    Ok(md)
}
