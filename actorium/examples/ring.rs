//! Many actors exchanging messages: `--actors` actors in a ring, `--tokens` tokens travelling
//! around it concurrently, each for `--hops` hops. Prints throughput and the executor's
//! statistics, and checks that every hop happened exactly once.
//!
//! Run: `cargo run --release --example ring -- --actors 100000 --tokens 1000 --hops 2000`

use actorium::{Actor, ActorSystem, Addr, Allocation, Context, DeleteMsg, Receive};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

struct Node {
    next: Option<Addr<Node>>,
    hops: Arc<AtomicU64>,
    seen: u64,
}
struct SetNext(Addr<Node>);
struct Token {
    left: u32,
}

impl Actor for Node {}

impl Receive<SetNext> for Node {
    fn receive(&mut self, m: SetNext, _: &mut Context<'_, Self>) -> Allocation {
        self.next = Some(m.0);
        Allocation::Nodelete
    }
}

impl Receive<Token> for Node {
    fn receive(&mut self, t: Token, _: &mut Context<'_, Self>) -> Allocation {
        self.seen += 1;
        if t.left > 0 {
            self.next
                .as_ref()
                .unwrap()
                .send(Token { left: t.left - 1 })
                .unwrap();
        }
        Allocation::Nodelete
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.hops.fetch_add(self.seen, Ordering::Relaxed);
    }
}

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse().expect("a number"))
        .unwrap_or(default)
}

fn main() {
    let actors = arg("--actors", 100_000) as usize;
    let tokens = arg("--tokens", 1_000);
    let hops = arg("--hops", 2_000) as u32;
    let system = ActorSystem::builder()
        .stats(true)
        .build()
        .expect("actor system");
    let counted = Arc::new(AtomicU64::new(0));

    let t0 = Instant::now();
    let nodes: Vec<_> = (0..actors)
        .map(|_| {
            system.spawn(Node {
                next: None,
                hops: counted.clone(),
                seen: 0,
            })
        })
        .collect();
    for (i, n) in nodes.iter().enumerate() {
        n.send(SetNext(nodes[(i + 1) % actors].clone())).unwrap();
    }
    let spawned = t0.elapsed();

    let t1 = Instant::now();
    for k in 0..tokens {
        nodes[(k as usize * actors / tokens as usize) % actors]
            .send(Token { left: hops })
            .unwrap();
    }
    // Wait for the tokens to finish, then end every actor.
    let expected = tokens * (hops as u64 + 1);
    while system.stats().unwrap().messages_processed < expected + actors as u64 {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let ran = t1.elapsed();
    for n in &nodes {
        n.send(DeleteMsg).unwrap();
    }
    drop(nodes);
    let stats = system.stop().unwrap();

    let got = counted.load(Ordering::Relaxed);
    println!(
        "{actors} actors spawned and linked in {:.1} ms; {tokens} tokens x {} hops in {:.1} ms: {:.1} ns/hop",
        spawned.as_secs_f64() * 1e3,
        hops + 1,
        ran.as_secs_f64() * 1e3,
        ran.as_nanos() as f64 / expected as f64
    );
    println!("{stats}");
    assert_eq!(got, expected, "hops counted by the actors");
    println!("checksum ok: {got} hops");
}
