//! `actorium-bench ask`: request/reply round trips on actorium's executors and the Rust peers.
//! A server actor answers `x` with `x + 1`; it is asked (1) `n` times from an outside thread,
//! one request at a time (the round trip of each is timed: median and p99), and (2) `n` times by
//! a client actor from inside its behaviour, one at a time (each reply continues the client;
//! total time / n). Both check the sum of the replies. Each system runs in a child process
//! (`ask-exec`).

use actorium::{Actor, ActorSystem, Addr, Allocation, Ask, Context, Receive, ReplyTo};
use actorium_peers::ask::AskServer;
use std::time::Instant;

/// actorium's executors measured.
pub const ACTORIUM: &[&str] = &[
    "actorium",
    "actorium-no-stealing",
    "actorium-policy-stealing",
    "actorium-policy-sharing",
];

/// Every system `ask` runs by default.
pub fn all_systems() -> Vec<String> {
    ACTORIUM
        .iter()
        .chain(actorium_peers::ask::SYSTEMS)
        .chain(&["caf-stealing", "caf-sharing", "erlang"])
        .map(|s| s.to_string())
        .collect()
}

struct Srv;
impl Actor for Srv {}
impl Receive<Ask<u64, u64>> for Srv {
    fn receive(&mut self, a: Ask<u64, u64>, _: &mut Context<'_, Self>) -> Allocation {
        a.reply.send(a.msg + 1).ok();
        Allocation::Nodelete
    }
}

/// Asks the server `n` times in a row from its behaviours: each reply's continuation sends
/// the next request; the last answers the outside caller.
struct Client {
    srv: Addr<Srv>,
}
impl Actor for Client {}

struct Round {
    next: u64,
    n: u64,
    sum: u64,
    done: Option<ReplyTo<u64>>,
}

fn step(me: &mut Client, mut r: Round, ctx: &mut Context<'_, Client>) -> Allocation {
    if r.next == r.n {
        if let Some(done) = r.done.take() {
            done.send(r.sum).ok();
        }
        return Allocation::Nodelete;
    }
    let x = r.next;
    r.next += 1;
    ctx.ask(&me.srv, x, move |me: &mut Client, reply, ctx| {
        r.sum += reply.expect("the server replies");
        step(me, r, ctx)
    })
    .expect("the server lives");
    Allocation::Nodelete
}

impl Receive<Ask<u64, u64>> for Client {
    fn receive(&mut self, a: Ask<u64, u64>, ctx: &mut Context<'_, Self>) -> Allocation {
        let r = Round {
            next: 0,
            n: a.msg,
            sum: 0,
            done: Some(a.reply),
        };
        step(self, r, ctx)
    }
}

struct ActoriumServer {
    srv: Addr<Srv>,
    client: Addr<Client>,
    _system: ActorSystem,
}

impl AskServer for ActoriumServer {
    fn ask(&self, x: u64) -> u64 {
        self.srv.ask(x).expect("alive").wait().expect("a reply")
    }

    fn actor_asks(&self, n: u64) -> u64 {
        self.client.ask(n).expect("alive").wait().expect("a reply")
    }
}

fn actorium_server(system: &str, threads: usize) -> Result<Box<dyn AskServer>, String> {
    let b = crate::actorium_impl::builder_for(system, threads)?;
    let system = b.build().map_err(|e| e.to_string())?;
    let srv = system.spawn(Srv);
    let client = system.spawn(Client { srv: srv.clone() });
    Ok(Box::new(ActoriumServer {
        srv,
        client,
        _system: system,
    }))
}

/// The child: measures one system and prints `ASK ...`.
pub fn exec(system: &str, threads: usize, n: u64) -> Result<(), String> {
    let server = if system.starts_with("actorium") {
        actorium_server(system, threads)?
    } else {
        actorium_peers::ask::server(system, threads)?
    };
    // Warm-up.
    for x in 0..1_000 {
        assert_eq!(server.ask(x), x + 1);
    }
    assert_eq!(server.actor_asks(1_000), 1_000 * 1_001 / 2);
    // 1. From an outside thread, one at a time.
    let mut lat = Vec::with_capacity(n as usize);
    let mut sum = 0u64;
    let t0 = Instant::now();
    for x in 0..n {
        let t = Instant::now();
        sum = sum.wrapping_add(server.ask(x));
        lat.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let outside = t0.elapsed().as_secs_f64();
    if sum != n * (n + 1) / 2 {
        return Err(format!("checksum: {sum}, expected {}", n * (n + 1) / 2));
    }
    lat.sort_by(|a, b| a.total_cmp(b));
    let (med, p99) = (lat[lat.len() / 2], lat[(lat.len() - 1) * 99 / 100]);
    // 2. From inside an actor, one at a time.
    let t0 = Instant::now();
    let sum = server.actor_asks(n);
    let inside = t0.elapsed().as_secs_f64();
    if sum != n * (n + 1) / 2 {
        return Err(format!("checksum (in actors): {sum}"));
    }
    drop(server);
    println!(
        "ASK med_us={med:.2} p99_us={p99:.2} outside_s={outside:.4} inside_s={inside:.4} \
         inside_us={:.3} checksum={sum}",
        inside / n as f64 * 1e6
    );
    Ok(())
}

/// The parent: runs each system in a child and returns a Markdown table.
pub fn run(systems: &[String], threads: usize, n: u64) -> String {
    let mut md = format!(
        "{threads} worker threads; {n} sequential asks (x -> x + 1) from an outside thread \
         (each round trip timed), then {n} from a client actor inside its behaviour (total \
         / n); replies checksummed.\n\n\
         | system | outside: median | outside: p99 | outside: total | in an actor: per ask | in an actor: total |\n\
         |---|---|---|---|---|---|\n"
    );
    for s in systems {
        eprintln!("ask: {s} ...");
        let n_s = n.to_string();
        let line = match crate::idle::run_child(s, threads, "ask", &[&n_s], "ASK ") {
            Ok(line) => line,
            Err(why) => {
                md.push_str(&format!("| {s} | {why} | | | | |\n"));
                continue;
            }
        };
        let get = |k: &str| line.get(k);
        md.push_str(&format!(
            "| {s} | {} µs | {} µs | {} s | {} µs | {} s |\n",
            get("med_us"),
            get("p99_us"),
            get("outside_s"),
            get("inside_us"),
            get("inside_s"),
        ));
    }
    md.push_str(
        "\nHow each asks. actorium: `Addr::ask(..).wait()` from the thread, `Context::ask` \
         (a continuation) in the actor. actix: `Addr::send(..)` polled on the thread; in the \
         actor a `ResponseFuture` awaiting `send`; both actors on one arbiter (actix's best \
         configuration). ractor: `call!` via the runtime's `block_on`, and awaited in the \
         client's handler. kameo: `ask(..).await` via `block_on`, and in the handler. \
         tokio-mpsc: an mpsc request carrying a `oneshot` sender; `blocking_recv` on the \
         thread, awaited in a client task. CAF: `request(..).receive(..)` from a \
         `scoped_actor`, and `request(..).then(..)` chained in an event-based client. Erlang: \
         `gen_server:call` from a process (Erlang has no outside threads: the \"outside\" caller \
         is a process of the same VM), and from a client gen_server's `handle_call`.\n\nCommand: `cargo run --release -p actorium-bench -- ask`.\n",
    );
    md
}
