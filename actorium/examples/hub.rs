//! A hub that clients ask for permission in fine-grained rounds (request, grant, request...),
//! a shape where, on two workers, every message would cross threads unless the clients live
//! next to the hub (placement rule 2 moves them there). Prints the time for `rounds` rounds of every client.
//!
//! ```text
//! cargo run --release -p actorium --example hub -- [workers] [clients] [rounds]
//! ```
//!
//! `STEALING=none` builds the system without queue stealing (and so without the placement
//! rules built on it); `STATS=1` prints the system's statistics.

use actorium::{Actor, ActorSystem, Addr, Allocation, Context, QueueStealing, Receive};
use std::sync::mpsc;
use std::time::Instant;

struct Hub {
    grants: u64,
}
impl Actor for Hub {}

struct Request(Addr<Client>);
impl Receive<Request> for Hub {
    fn receive(&mut self, Request(from): Request, _: &mut Context<'_, Self>) -> Allocation {
        self.grants += 1;
        from.send(Grant).unwrap();
        Allocation::Nodelete
    }
}

struct Client {
    hub: Addr<Hub>,
    left: u64,
    done: mpsc::Sender<u64>,
}
impl Actor for Client {}

struct Grant;
impl Receive<Grant> for Client {
    fn receive(&mut self, _: Grant, ctx: &mut Context<'_, Self>) -> Allocation {
        if self.left == 0 {
            self.done.send(1).unwrap();
            return Allocation::Delete;
        }
        self.left -= 1;
        self.hub.send(Request(ctx.address())).unwrap();
        Allocation::Nodelete
    }
}

fn main() {
    let arg = |i: usize, default: u64| {
        std::env::args()
            .nth(i)
            .map_or(default, |s| s.parse().expect("a number"))
    };
    let (workers, clients, rounds) = (arg(1, 2) as usize, arg(2, 20), arg(3, 2_000));
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
    let hub = system.spawn(Hub { grants: 0 });
    let (tx, rx) = mpsc::channel();
    let all: Vec<_> = (0..clients)
        .map(|_| {
            system.spawn(Client {
                hub: hub.clone(),
                left: rounds,
                done: tx.clone(),
            })
        })
        .collect();
    let t0 = Instant::now();
    for c in &all {
        c.send(Grant).unwrap();
    }
    let finished: u64 = (0..clients).map(|_| rx.recv().unwrap()).sum();
    let secs = t0.elapsed().as_secs_f64();
    assert_eq!(finished, clients);
    println!(
        "workers={workers} clients={clients} rounds={rounds} seconds={secs:.4} \
         ({:.0} ns a round trip)",
        secs * 1e9 / (clients * rounds) as f64
    );
    if let Some(s) = system.stats() {
        println!("{s}");
    }
    hub.send(actorium::DeleteMsg).unwrap();
    system.stop();
}
