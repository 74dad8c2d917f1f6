//! `actorium-bench backpressure`: a fast producer and a slow consumer whose mailbox holds at
//! most `capacity` messages (default 1,000), on actorium and the Rust peers with bounded
//! mailboxes or channels (tokio's `mpsc::channel`, actix's `set_mailbox_capacity`, kameo's
//! `mailbox::bounded`). The producer sends `0..n` as fast as the bound lets it, (1) from an
//! outside thread and (2) from an actor (or task) of the system; the consumer does a fixed
//! computation per message (64 modular steps, a few hundred nanoseconds) and checksums them.
//! Measured: throughput of each phase and the child process's peak resident memory.
//! `actorium-unbounded` sends without a bound (plain `send`): what the bound saves. Each
//! system runs in a child process (`backpressure-exec`).

use actorium::{Actor, ActorSystem, Addr, Allocation, Context, Receive, Room, TrySendError};
use actorium_peers::backpressure::{expected, Pipe, Tally};
use std::sync::mpsc;
use std::time::Instant;

/// Every system `backpressure` runs by default.
pub fn all_systems() -> Vec<String> {
    ["actorium", "actorium-policy-stealing", "actorium-unbounded"]
        .iter()
        .chain(actorium_peers::backpressure::SYSTEMS)
        .map(|s| s.to_string())
        .collect()
}

struct Consumer(Tally);
impl Actor for Consumer {}
impl Receive<(u64, u64)> for Consumer {
    fn receive(&mut self, (x, n): (u64, u64), _: &mut Context<'_, Self>) -> Allocation {
        self.0.take(x, n);
        Allocation::Nodelete
    }
}

/// Sends a phase from its behaviours: `try_send` until the consumer is full, then
/// `Context::when_room` (or, unbounded, plain sends).
struct Producer {
    consumer: Addr<Consumer>,
    next: u64,
    n: u64,
    bounded: bool,
}
impl Producer {
    fn pump(&mut self, ctx: &mut Context<'_, Self>) {
        while self.next < self.n {
            let item = (self.next, self.n);
            if !self.bounded {
                self.consumer.send(item).expect("consumer lives");
                self.next += 1;
                continue;
            }
            match self.consumer.try_send(item) {
                Ok(()) => self.next += 1,
                Err(TrySendError::Full(_)) => {
                    ctx.when_room(&self.consumer, |me: &mut Producer, room: Room<_>, ctx| {
                        room.send((me.next, me.n)).expect("consumer lives");
                        me.next += 1;
                        me.pump(ctx);
                        Allocation::Nodelete
                    });
                    return;
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
}
impl Actor for Producer {}
impl Receive<u64> for Producer {
    fn receive(&mut self, n: u64, ctx: &mut Context<'_, Self>) -> Allocation {
        (self.next, self.n) = (0, n);
        self.pump(ctx);
        Allocation::Nodelete
    }
}

struct ActoriumPipe {
    consumer: Addr<Consumer>,
    producer: Addr<Producer>,
    done: mpsc::Receiver<u64>,
    bounded: bool,
    _system: ActorSystem,
}

impl Pipe for ActoriumPipe {
    fn feed_from_thread(&mut self, n: u64) -> u64 {
        for x in 0..n {
            if self.bounded {
                self.consumer.send_wait((x, n)).expect("consumer lives");
            } else {
                self.consumer.send((x, n)).expect("consumer lives");
            }
        }
        self.done.recv().expect("a sum")
    }

    fn feed_from_actor(&mut self, n: u64) -> u64 {
        self.producer.send(n).expect("producer lives");
        self.done.recv().expect("a sum")
    }
}

fn actorium_pipe(system: &str, threads: usize, capacity: usize) -> Result<ActoriumPipe, String> {
    let bounded = !system.ends_with("-unbounded");
    let base = system.strip_suffix("-unbounded").unwrap_or(system);
    let system = crate::actorium_impl::builder_for(base, threads)?
        .build()
        .map_err(|e| e.to_string())?;
    let (tx, done) = mpsc::channel();
    let consumer = if bounded {
        system.spawn_bounded(Consumer(Tally::new(tx)), capacity)
    } else {
        system.spawn(Consumer(Tally::new(tx)))
    };
    let producer = system.spawn(Producer {
        consumer: consumer.clone(),
        next: 0,
        n: 0,
        bounded,
    });
    Ok(ActoriumPipe {
        consumer,
        producer,
        done,
        bounded,
        _system: system,
    })
}

/// The peak resident memory of this process so far, in MiB (`VmHWM`).
fn peak_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// The child: measures one system and prints `BP ...`.
pub fn exec(system: &str, threads: usize, n: u64, capacity: usize) -> Result<(), String> {
    let want = expected(n);
    let mut pipe: Box<dyn Pipe> = if system.starts_with("actorium") {
        Box::new(actorium_pipe(system, threads, capacity)?)
    } else {
        actorium_peers::backpressure::start(system, threads, capacity)?
    };
    // Warm-up.
    let w = 10_000.min(n);
    for got in [pipe.feed_from_thread(w), pipe.feed_from_actor(w)] {
        if got != expected(w) {
            return Err(format!("warm-up checksum: {got}"));
        }
    }
    let t0 = Instant::now();
    let got = pipe.feed_from_thread(n);
    let thread_s = t0.elapsed().as_secs_f64();
    if got != want {
        return Err(format!("checksum (thread): {got}, expected {want}"));
    }
    let t0 = Instant::now();
    let got = pipe.feed_from_actor(n);
    let actor_s = t0.elapsed().as_secs_f64();
    if got != want {
        return Err(format!("checksum (actor): {got}, expected {want}"));
    }
    let peak = peak_mib();
    drop(pipe);
    println!(
        "BP thread_s={thread_s:.4} actor_s={actor_s:.4} thread_mps={:.3} actor_mps={:.3} \
         peak_mib={peak:.1} checksum={got}",
        n as f64 / thread_s / 1e6,
        n as f64 / actor_s / 1e6,
    );
    Ok(())
}

/// The parent: runs each system in a child and returns a Markdown table.
pub fn run(systems: &[String], threads: usize, n: u64, capacity: usize) -> String {
    let mut md = format!(
        "{threads} worker threads; {n} messages from a fast producer to a slow consumer (64 \
         modular steps each) whose mailbox holds at most {capacity}; checksummed.\n\n\
         | system | from a thread: M msg/s | from an actor: M msg/s | peak memory (MiB) |\n\
         |---|---|---|---|\n"
    );
    let (n_s, cap_s) = (n.to_string(), capacity.to_string());
    for s in systems {
        eprintln!("backpressure: {s} ...");
        let line = match crate::idle::run_child(s, threads, "backpressure", &[&n_s, &cap_s], "BP ")
        {
            Ok(line) => line,
            Err(why) => {
                md.push_str(&format!("| {s} | {why} | | |\n"));
                continue;
            }
        };
        md.push_str(&format!(
            "| {s} | {} | {} | {} |\n",
            line.get("thread_mps"),
            line.get("actor_mps"),
            line.get("peak_mib"),
        ));
    }
    md.push_str(
        "\nHow each waits for room. actorium: `Addr::send_wait` from the thread; in the \
         producer actor `try_send` until full, then `Context::when_room` (a continuation; the \
         worker never blocks). actorium-unbounded: plain `send` (no bound: the queue grows). \
         tokio-mpsc: `mpsc::channel(capacity)`, `blocking_send` from the thread, `send().await` \
         in a producer task. actix: `set_mailbox_capacity`; from the thread `try_send`, \
         yielding while full (actix has no blocking send); in the producer actor \
         `send(..).await`, which waits for room and for the handler's result; both actors on \
         one arbiter. kameo: `mailbox::bounded(capacity)`, `tell(..).blocking_send()` from the \
         thread, `tell(..).await` in the producer actor.\n\nCommand: `cargo run --release -p \
         actorium-bench -- backpressure`.\n",
    );
    md
}
