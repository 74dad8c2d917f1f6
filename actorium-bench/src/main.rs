//! actorium-bench: micro-benchmarks of actorium's message-centric executor.
//!
//! `cargo run --release -p actorium-bench -- [static-send|dynamic-send|ping-pong|thread-ring|idle|all] [--workers N] [--scale F]`
//!
//! Every benchmark checks a checksum and exits non-zero when it is wrong.

use actorium::{Actor, ActorSystem, Addr, Allocation, Context, Receive};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

fn system(workers: usize) -> ActorSystem {
    ActorSystem::builder()
        .workers(workers)
        .build()
        .expect("actor system")
}

fn check(name: &str, got: u64, want: u64) {
    if got != want {
        eprintln!("{name}: checksum mismatch: got {got}, expected {want}");
        std::process::exit(1);
    }
}

fn report(name: &str, ops: u64, unit: &str, elapsed: Duration) {
    let ns = elapsed.as_nanos() as f64 / ops as f64;
    println!(
        "{name:<14} {ops:>11} {unit:<6} {:>9.3} s {ns:>9.1} ns/{unit}",
        elapsed.as_secs_f64()
    );
}

// ---- static send: one actor re-sends one message to itself --------------------------------
struct SelfSender {
    me: Option<Addr<SelfSender>>,
    left: u64,
    count: u64,
}
struct Tick;
impl Actor for SelfSender {
    fn started(&mut self, ctx: &mut Context<'_, Self>) {
        self.me = Some(ctx.address());
    }
}
impl Receive<Tick> for SelfSender {
    fn receive(&mut self, t: Tick, _: &mut Context<'_, Self>) -> Allocation {
        self.count += 1;
        if self.count == self.left {
            self.me = None;
            return Allocation::Finished;
        }
        self.me.as_ref().unwrap().send(t).unwrap();
        Allocation::Nodelete
    }
}

fn static_send(workers: usize, n: u64) {
    let sys = system(workers);
    let (a, h) = sys.spawn_joinable(SelfSender {
        me: None,
        left: n,
        count: 0,
    });
    let t = Instant::now();
    a.send(Tick).unwrap();
    let fin = h.join().unwrap();
    let el = t.elapsed();
    sys.stop();
    check("static-send", fin.count, n);
    report("static-send", n, "send", el);
}

// ---- dynamic send: each receive spawns a new actor and sends it one message ----------------
static DYN_LAST: AtomicU64 = AtomicU64::new(0);
struct Hop;
struct Go(u64, u64);
impl Actor for Hop {}
impl Receive<Go> for Hop {
    fn receive(&mut self, Go(k, n): Go, ctx: &mut Context<'_, Self>) -> Allocation {
        if k < n {
            ctx.spawn(Hop).send(Go(k + 1, n)).unwrap();
        } else {
            DYN_LAST.store(k, Ordering::Relaxed);
        }
        Allocation::Delete
    }
}

fn dynamic_send(workers: usize, n: u64) {
    let sys = system(workers);
    let t = Instant::now();
    sys.spawn(Hop).send(Go(1, n)).unwrap();
    sys.stop();
    let el = t.elapsed();
    check("dynamic-send", DYN_LAST.load(Ordering::Relaxed), n);
    report("dynamic-send", n, "send", el);
}

// ---- ping-pong -------------------------------------------------------------------------------
struct Ping {
    pong: Option<Addr<Pong>>,
    left: u64,
    count: u64,
}
struct Pong {
    ping: Option<Addr<Ping>>,
}
struct Ball;
struct Meet(Addr<Pong>);
struct MeetBack(Addr<Ping>);
impl Actor for Ping {}
impl Actor for Pong {}
impl Receive<Meet> for Ping {
    fn receive(&mut self, Meet(p): Meet, ctx: &mut Context<'_, Self>) -> Allocation {
        p.send(MeetBack(ctx.address())).unwrap();
        p.send(Ball).unwrap();
        self.pong = Some(p);
        Allocation::Nodelete
    }
}
impl Receive<Ball> for Ping {
    fn receive(&mut self, b: Ball, _: &mut Context<'_, Self>) -> Allocation {
        self.count += 1;
        let pong = self.pong.as_ref().unwrap();
        if self.count == self.left {
            pong.send(actorium::DeleteMsg).unwrap();
            self.pong = None;
            return Allocation::Finished;
        }
        pong.send(b).unwrap();
        Allocation::Nodelete
    }
}
impl Receive<MeetBack> for Pong {
    fn receive(&mut self, MeetBack(p): MeetBack, _: &mut Context<'_, Self>) -> Allocation {
        self.ping = Some(p);
        Allocation::Nodelete
    }
}
impl Receive<Ball> for Pong {
    fn receive(&mut self, b: Ball, _: &mut Context<'_, Self>) -> Allocation {
        self.ping.as_ref().unwrap().send(b).unwrap();
        Allocation::Nodelete
    }
}
impl Drop for Pong {
    fn drop(&mut self) {
        self.ping = None;
    }
}

fn ping_pong(workers: usize, n: u64) {
    let sys = system(workers);
    let (ping, h) = sys.spawn_joinable(Ping {
        pong: None,
        left: n,
        count: 0,
    });
    let pong = sys.spawn(Pong { ping: None });
    let t = Instant::now();
    ping.send(Meet(pong)).unwrap();
    let fin = h.join().unwrap();
    let el = t.elapsed();
    sys.stop();
    check("ping-pong", fin.count, n);
    report("ping-pong", n, "trip", el);
}

// ---- thread ring -----------------------------------------------------------------------------
struct Node {
    next: Option<Addr<Node>>,
    passes: u64,
}
struct Link(Addr<Node>);
struct Token(u64);
impl Actor for Node {}
impl Receive<Link> for Node {
    fn receive(&mut self, Link(n): Link, _: &mut Context<'_, Self>) -> Allocation {
        self.next = Some(n);
        Allocation::Nodelete
    }
}
static RING_DONE: AtomicU64 = AtomicU64::new(0);
impl Receive<Token> for Node {
    fn receive(&mut self, Token(left): Token, _: &mut Context<'_, Self>) -> Allocation {
        self.passes += 1;
        let next = self.next.take().unwrap();
        if left == 0 {
            RING_DONE.fetch_add(1, Ordering::Relaxed);
            // Tell the ring to end: every node ends when it sees a token with u64::MAX.
            let _ = next.send(Token(u64::MAX));
            return Allocation::Delete;
        }
        if left == u64::MAX {
            let _ = next.send(Token(u64::MAX));
            return Allocation::Delete;
        }
        next.send(Token(left - 1)).unwrap();
        self.next = Some(next);
        Allocation::Nodelete
    }
}

fn thread_ring(workers: usize, actors: usize, hops: u64) {
    let sys = system(workers);
    let nodes: Vec<_> = (0..actors)
        .map(|_| {
            sys.spawn(Node {
                next: None,
                passes: 0,
            })
        })
        .collect();
    for (i, node) in nodes.iter().enumerate() {
        node.send(Link(nodes[(i + 1) % actors].clone())).unwrap();
    }
    let first = nodes[0].clone();
    drop(nodes);
    let t = Instant::now();
    first.send(Token(hops)).unwrap();
    sys.stop();
    let el = t.elapsed();
    check("thread-ring", RING_DONE.swap(0, Ordering::Relaxed), 1);
    report("thread-ring", hops, "hop", el);
}

// ---- idle CPU --------------------------------------------------------------------------------
fn cpu_time() -> Duration {
    // SAFETY: getrusage writes into the zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a rusage.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn idle(workers: usize, secs: u64) {
    let sys = system(workers);
    std::thread::sleep(Duration::from_millis(200));
    let (c0, t0) = (cpu_time(), Instant::now());
    std::thread::sleep(Duration::from_secs(secs));
    let (c1, el) = (cpu_time(), t0.elapsed());
    sys.stop();
    let pct = (c1 - c0).as_secs_f64() / el.as_secs_f64() * 100.0;
    println!(
        "idle           {workers} workers, {secs} s: {:.4} % of one core ({:?} CPU)",
        pct,
        c1 - c0
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut which = "all".to_string();
    let mut workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut scale = 1.0f64;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--workers" => {
                workers = args[i + 1].parse().expect("--workers N");
                i += 1;
            }
            "--scale" => {
                scale = args[i + 1].parse().expect("--scale F");
                i += 1;
            }
            w => which = w.to_string(),
        }
        i += 1;
    }
    let n = |base: f64| (base * scale).max(1.0) as u64;
    let all = which == "all";
    if all || which == "static-send" {
        static_send(workers, n(10_000_000.0));
    }
    if all || which == "dynamic-send" {
        dynamic_send(workers, n(1_000_000.0));
    }
    if all || which == "ping-pong" {
        ping_pong(workers, n(1_000_000.0));
    }
    if all || which == "thread-ring" {
        thread_ring(workers, 100, n(10_000_000.0));
    }
    if which == "idle" || (all && scale >= 1.0) {
        idle(workers, if all { 10 } else { n(10.0) });
    }
}
