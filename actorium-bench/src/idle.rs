//! `actorium-bench idle`: what a quiet system costs, on actorium's executors and the Rust
//! peers: **idle CPU** (a system with one actor, idle for `secs`: CPU used), **wake-up
//! latency** (a message sent from an outside thread to the idle system until its behaviour
//! runs: median and p99 over `pings` sends spaced 1 ms apart) and **sparse load** (one message
//! every 5 ms from an outside thread for `secs`: CPU used). Each system runs in a child process
//! (`idle-exec`), so the CPU counted is its own.

use crate::harness::Fields;
use crate::suite::{caf_binary, erlang_ebin, prepare, SYSTEMS};
use actorium::{Actor, ActorSystem, Addr, Allocation, Context, Receive};
use actorium_peers::idle::{Latencies, Server};
use std::process::Command;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// actorium's executors measured.
pub const ACTORIUM: &[&str] = &[
    "actorium",
    "actorium-no-stealing",
    "actorium-policy-stealing",
    "actorium-policy-sharing",
];

struct Pinged(Arc<Latencies>);
impl Actor for Pinged {}
struct Ping(Instant);
impl Receive<Ping> for Pinged {
    fn receive(&mut self, p: Ping, _: &mut Context<'_, Self>) -> Allocation {
        self.0.record(p.0);
        Allocation::Nodelete
    }
}

struct ActoriumServer {
    addr: Addr<Pinged>,
    _system: ActorSystem,
}

impl Server for ActoriumServer {
    fn ping(&self, sent: Instant) {
        self.addr.send(Ping(sent)).expect("the actor lives");
    }
}

fn actorium_server(
    system: &str,
    threads: usize,
    lat: Arc<Latencies>,
) -> Result<Box<dyn Server>, String> {
    let b = crate::actorium_impl::builder_for(system, threads)?;
    let system = b.build().map_err(|e| e.to_string())?;
    let addr = system.spawn(Pinged(lat));
    Ok(Box::new(ActoriumServer {
        addr,
        _system: system,
    }))
}

fn cpu_now() -> f64 {
    // SAFETY: a zeroed rusage is valid for getrusage to overwrite.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    crate::harness::cpu_seconds(&ru)
}

fn wait_for(lat: &Latencies, n: usize) {
    let t0 = Instant::now();
    while lat.count() < n {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "pings lost: {} of {n}",
            lat.count()
        );
        thread::sleep(Duration::from_millis(1));
    }
}

/// The child: measures one system and prints `IDLE ...`.
pub fn exec(system: &str, threads: usize, secs: f64, pings: usize) -> Result<(), String> {
    let lat = Arc::new(Latencies::default());
    let server = if system.starts_with("actorium") {
        actorium_server(system, threads, lat.clone())?
    } else {
        actorium_peers::idle::server(system, threads, lat.clone())?
    };
    // Everything started and warm: one ping through.
    server.ping(Instant::now());
    wait_for(&lat, 1);
    thread::sleep(Duration::from_millis(200));
    lat.take();
    // 1. Idle.
    let (c0, t0) = (cpu_now(), Instant::now());
    thread::sleep(Duration::from_secs_f64(secs));
    let idle = (cpu_now() - c0) / t0.elapsed().as_secs_f64();
    // 2. Wake-up latency: each ping finds the system idle for 1 ms.
    let base = lat.count();
    for _ in 0..pings {
        thread::sleep(Duration::from_millis(1));
        server.ping(Instant::now());
    }
    wait_for(&lat, base + pings);
    let mut v = lat.take();
    v.sort_by(|a, b| a.total_cmp(b));
    let (med, p99) = (v[v.len() / 2], v[(v.len() - 1) * 99 / 100]);
    // 3. Sparse load: a message every 5 ms.
    let base = lat.count();
    let (c0, t0) = (cpu_now(), Instant::now());
    let mut sent = 0;
    while t0.elapsed().as_secs_f64() < secs {
        server.ping(Instant::now());
        sent += 1;
        thread::sleep(Duration::from_millis(5));
    }
    wait_for(&lat, base + sent);
    let sparse = cpu_now() - c0;
    drop(server);
    println!(
        "IDLE idle_pct={:.4} wake_med_us={med:.1} wake_p99_us={p99:.1} sparse_cpu_ms={:.2} sparse_msgs={sent}",
        idle * 100.0,
        sparse * 1e3
    );
    Ok(())
}

/// The command running subcommand `sub` (`idle`, `ask`) of a CAF or Erlang peer with `threads`
/// threads and `args`, built first if needed; `None` for any other system (actorium, the Rust
/// peers: run by this executable).
fn native_peer(
    s: &str,
    threads: usize,
    sub: &str,
    args: &[&str],
) -> Option<Result<Command, String>> {
    if !matches!(s, "caf-stealing" | "caf-sharing" | "erlang") {
        return None;
    }
    let sys = SYSTEMS.iter().find(|x| x.name == s).expect("a known peer");
    if let Err(why) = prepare(sys) {
        return Some(Err(why));
    }
    Some(Ok(if s == "erlang" {
        let mut c = Command::new("erl");
        c.arg("+S").arg(format!("{threads}:{threads}"));
        if sub == "scale" {
            // Room in the process table for every actor (the default is 262,144).
            let n: u64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(0);
            c.arg("+P")
                .arg((n + 4096).clamp(262_144, 134_217_727).to_string());
        }
        c.args(["-noshell", "-pa"]).arg(erlang_ebin());
        c.args(["-run", "actorium_bench", sub]).args(args);
        c
    } else {
        let mut c = Command::new(caf_binary());
        c.args([sub, s.trim_start_matches("caf-"), &threads.to_string()])
            .args(args);
        c
    }))
}

/// Runs system `s`'s `sub` measurement (`"idle"`, `"ask"`) in a child process, the CAF or
/// Erlang peer's own program or this executable's `<sub>-exec`, with `threads` workers and
/// `args`; returns its result line (the one starting with `tag`), or why there is none.
pub fn run_child(
    s: &str,
    threads: usize,
    sub: &str,
    args: &[&str],
    tag: &str,
) -> Result<Fields, String> {
    let cmd = match native_peer(s, threads, sub, args) {
        Some(c) => c?,
        None => {
            let mut c = Command::new(std::env::current_exe().expect("own executable"));
            c.arg(format!("{sub}-exec"))
                .arg(s)
                .arg(threads.to_string())
                .args(args);
            c
        }
    };
    Fields::of(cmd, tag).map_err(|why| format!("failed: {why}"))
}

/// The parent: runs each system in a child and returns a Markdown table.
pub fn run(systems: &[String], threads: usize, secs: f64, pings: usize) -> String {
    let mut md = format!(
        "{threads} worker threads; idle {secs} s; wake-up latency over {pings} sends spaced \
         1 ms apart from an outside thread; sparse load: one message every 5 ms for {secs} s. \
         CPU is the process's user + system time (getrusage).\n\n\
         | system | idle CPU (% of one core) | wake-up median | wake-up p99 | sparse load CPU |\n\
         |---|---|---|---|---|\n"
    );
    for s in systems {
        eprintln!("idle: {s} ...");
        let (secs_s, pings_s) = (secs.to_string(), pings.to_string());
        let line = match run_child(s, threads, "idle", &[&secs_s, &pings_s], "IDLE ") {
            Ok(line) => line,
            Err(why) => {
                md.push_str(&format!("| {s} | {why} | | | |\n"));
                continue;
            }
        };
        let get = |k: &str| line.get(k);
        md.push_str(&format!(
            "| {s} | {} % | {} µs | {} µs | {} ms |\n",
            get("idle_pct"),
            get("wake_med_us"),
            get("wake_p99_us"),
            get("sparse_cpu_ms")
        ));
    }
    md.push_str("\nCommand: `cargo run --release -p actorium-bench -- idle`.\n");
    md
}

/// Every system with an idle server: actorium's, the Rust peers', CAF's (its own measurement
/// loop in `peers/caf`, an outside thread sending with `anon_send`) and Erlang's (in
/// `peers/erlang`: the sender is an Erlang process, as Erlang has no outside threads, and its
/// CPU is read from `/proc/self/stat` in 10 ms ticks).
pub fn all_systems() -> Vec<String> {
    ACTORIUM
        .iter()
        .chain(actorium_peers::idle::SYSTEMS)
        .chain(&["caf-stealing", "caf-sharing", "erlang"])
        .map(|s| s.to_string())
        .collect()
}
