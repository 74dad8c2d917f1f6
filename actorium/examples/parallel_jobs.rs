//! Independent jobs on actors spawned from the main thread: N actors, one job each, on 2
//! workers. The first spawns get a queue each; later ones share queues in runs of 64
//! (placement rule 5), and long behaviours in one queue are split apart between two
//! behaviours (rule 4), so the jobs still run on both workers.
//!
//! ```text
//! cargo run --release -p actorium --example parallel_jobs -- 100 1000
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

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<u64>());
    let n = args.next().and_then(Result::ok).unwrap_or(100);
    let micros = args.next().and_then(Result::ok).unwrap_or(1_000);
    let system = ActorSystem::builder()
        .workers(2)
        .stats(true)
        .build()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let start = Instant::now();
    let jobs: Vec<_> = (0..n).map(|_| system.spawn(Job(tx.clone()))).collect();
    for j in &jobs {
        j.send(micros).unwrap();
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
    println!("{}", system.stop().unwrap());
}
