//! Independent jobs on actors spawned from the main thread: N actors, one job each, on 2
//! workers. The first spawns get a queue each; later ones share queues in runs of 64
//! (placement rule 5), and long behaviours in one queue are split apart between two
//! behaviours (rule 4), so the jobs still run on both workers.
//!
//! With a third argument `actor`, a dispatcher actor spawns the jobs instead, one per request
//! it receives (a server spawning a worker per request): children start in the queues of the
//! dispatcher's worker other than its own, which idle workers steal (and after 8 in one visit,
//! in other workers' queues).
//!
//! ```text
//! cargo run --release -p actorium --example parallel_jobs -- 100 1000
//! cargo run --release -p actorium --example parallel_jobs -- 100 1000 actor
//! ```
//! (100 actors, a job of 1,000 µs each: ideally 50 ms on 2 workers.) Prints the time and the
//! executor's statistics.

use actorium::{Actor, ActorSystem, Allocation, Context, Receive};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Runs one job (a busy loop of the given µs) and reports its result.
struct Job(mpsc::Sender<u64>);
impl Actor for Job {}
impl Receive<u64> for Job {
    fn receive(&mut self, micros: u64, _: &mut Context<'_, Self>) -> Allocation {
        let start = Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_micros(micros) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        self.0.send(x).unwrap();
        Allocation::Delete
    }
}

/// Spawns a job per request, and sends it the request's length.
struct Dispatcher(mpsc::Sender<u64>);
impl Actor for Dispatcher {}
impl Receive<u64> for Dispatcher {
    fn receive(&mut self, micros: u64, ctx: &mut Context<'_, Self>) -> Allocation {
        ctx.spawn(Job(self.0.clone())).send(micros).unwrap();
        Allocation::Nodelete
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, default: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (n, micros) = (num(0, 100), num(1, 1_000));
    let from_actor = args.get(2).is_some_and(|a| a == "actor");
    let system = ActorSystem::builder()
        .workers(2)
        .stats(true)
        .build()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let start = Instant::now();
    let dispatcher = from_actor.then(|| system.spawn(Dispatcher(tx.clone())));
    let jobs: Vec<_> = match &dispatcher {
        Some(_) => Vec::new(),
        None => (0..n).map(|_| system.spawn(Job(tx.clone()))).collect(),
    };
    match &dispatcher {
        Some(d) => (0..n).for_each(|_| d.send(micros).unwrap()),
        None => jobs.iter().for_each(|j| j.send(micros).unwrap()),
    }
    for _ in 0..n {
        rx.recv().unwrap();
    }
    println!(
        "{n} jobs of {micros} µs on 2 workers: {:.1} ms (ideal {:.1} ms)",
        start.elapsed().as_secs_f64() * 1e3,
        (n * micros) as f64 / 2.0 / 1e3
    );
    drop(jobs);
    if let Some(d) = dispatcher {
        d.send(actorium::DeleteMsg).unwrap();
    }
    println!("{}", system.stop().unwrap());
}
