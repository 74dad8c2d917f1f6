//! A pipeline of stages, each spawned by the one before it (as a sieve spawns its next filter),
//! that an outside thread streams numbers through. Each stage does `work` rounds of arithmetic
//! on a number and forwards it; the last one sums. The shape where queue stealing should pay:
//! the stages are busy at once, and each hand-off is one message of a stream. Prints the time.
//!
//! ```text
//! cargo run --release -p actorium --example pipeline -- [workers] [stages] [messages] [work]
//! ```
//!
//! `STEALING=none` builds the system without queue stealing; `STATS=1` prints the system's
//! statistics (`STEALING=random`: random victims).

use actorium::{Actor, ActorSystem, Addr, Allocation, Context, QueueStealing, Receive};
use std::sync::mpsc;
use std::time::Instant;

struct Stage {
    next: Option<Addr<Stage>>,
    work: u64,
    sum: u64,
    seen: u64,
    messages: u64,
    done: mpsc::Sender<u64>,
}
impl Actor for Stage {}

/// Builds the rest of the chain: `n` more stages after this one.
struct Build(u64);
impl Receive<Build> for Stage {
    fn receive(&mut self, Build(n): Build, ctx: &mut Context<'_, Self>) -> Allocation {
        if n > 0 {
            let next = ctx.spawn(Stage {
                next: None,
                work: self.work,
                sum: 0,
                seen: 0,
                messages: self.messages,
                done: self.done.clone(),
            });
            next.send(Build(n - 1)).unwrap();
            self.next = Some(next);
        } else {
            // The last stage reports that the chain is built.
            self.done.send(0).unwrap();
        }
        Allocation::Nodelete
    }
}

struct Item(u64);
impl Receive<Item> for Stage {
    fn receive(&mut self, Item(mut x): Item, _: &mut Context<'_, Self>) -> Allocation {
        for _ in 0..self.work {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407)
                >> 1;
        }
        self.seen += 1;
        match &self.next {
            Some(next) => {
                next.send(Item(x)).unwrap();
                if self.seen == self.messages {
                    return Allocation::Delete;
                }
            }
            None => {
                self.sum = self.sum.wrapping_add(x);
                if self.seen == self.messages {
                    self.done.send(self.sum).unwrap();
                    return Allocation::Delete;
                }
            }
        }
        Allocation::Nodelete
    }
}

/// One stage's work on an item: `work` rounds of arithmetic.
fn step(mut x: u64, work: u64) -> u64 {
    for _ in 0..work {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407)
            >> 1;
    }
    x
}

fn main() {
    let arg = |i: usize, default: u64| {
        std::env::args()
            .nth(i)
            .map_or(default, |s| s.parse().expect("a number"))
    };
    let (workers, stages, messages, work) = (
        arg(1, 2) as usize,
        arg(2, 8).max(1),
        arg(3, 200_000).max(1),
        arg(4, 50),
    );
    let stealing = match std::env::var("STEALING").as_deref() {
        Ok("none") => QueueStealing::None,
        Ok("random") => QueueStealing::Random,
        _ => QueueStealing::LongestVictim,
    };
    let system = ActorSystem::builder()
        .workers(workers)
        .queue_stealing(stealing)
        .stats(std::env::var_os("STATS").is_some())
        .build()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let first = system.spawn(Stage {
        next: None,
        work,
        sum: 0,
        seen: 0,
        messages,
        done: tx,
    });
    first.send(Build(stages - 1)).unwrap();
    assert_eq!(rx.recv().unwrap(), 0, "the chain is built");
    let t0 = Instant::now();
    for i in 0..messages {
        first.send(Item(i)).unwrap();
    }
    let sum = rx.recv().unwrap();
    let secs = t0.elapsed().as_secs_f64();
    let expected = (0..messages).fold(0u64, |acc, i| {
        acc.wrapping_add((0..stages).fold(i, |x, _| step(x, work)))
    });
    assert_eq!(sum, expected, "every item passed every stage once");
    println!(
        "workers={workers} stages={stages} messages={messages} work={work} seconds={secs:.4} \
         checksum={sum}"
    );
    if let Some(s) = system.stats() {
        println!("{s}");
    }
    system.stop();
}
