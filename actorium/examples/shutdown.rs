//! Stopping a system: `shutdown()` ends every actor after the mail already queued for it
//! (each runs its `stopped` hook), `shutdown_timeout(d)` gives up on actors that take too
//! long and names them, `stop()` waits for actors to end by themselves, a behaviour can start
//! the graceful shutdown (`request_shutdown`), and dropping the system stops it at once.
//! `cargo run --example shutdown`.

use actorium::{Actor, ActorSystem, Allocation, Context, DeleteMsg, Receive};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Sums what it is sent; reports the total when it stops.
struct Summer {
    sum: u64,
    totals: Arc<AtomicU64>,
}
impl Actor for Summer {
    fn stopped(&mut self) {
        self.totals.fetch_add(self.sum, Ordering::SeqCst);
    }
}
impl Receive<u64> for Summer {
    fn receive(&mut self, n: u64, _: &mut Context<'_, Self>) -> Allocation {
        self.sum += n;
        Allocation::Nodelete
    }
}

/// Works for a second on each message (an actor that will not end in time).
struct Slow;
impl Actor for Slow {}
impl Receive<()> for Slow {
    fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
        std::thread::sleep(Duration::from_secs(1));
        Allocation::Nodelete
    }
}

fn main() {
    // 1. Graceful: 10,000 live actors, each with queued mail; every message is delivered
    //    before the actor ends, and every `stopped` hook runs.
    let system = ActorSystem::new().unwrap();
    let totals = Arc::new(AtomicU64::new(0));
    let actors: Vec<_> = (0..10_000)
        .map(|_| {
            system.spawn(Summer {
                sum: 0,
                totals: totals.clone(),
            })
        })
        .collect();
    for a in &actors {
        for n in 1..=10 {
            a.send(n).unwrap();
        }
    }
    system.shutdown();
    println!(
        "shutdown: total {} (expected {})",
        totals.load(Ordering::SeqCst),
        10_000 * 55
    );
    assert_eq!(totals.load(Ordering::SeqCst), 10_000 * 55);

    // 2. With a deadline: one actor has three seconds of mail queued; the shutdown gives up
    //    after 200 ms, names it and stops it at once (a behaviour already running is not
    //    interrupted: the call returns when it has finished, after about a second).
    let system = ActorSystem::builder().workers(2).build().unwrap();
    let slow = system.spawn(Slow);
    for _ in 0..3 {
        slow.send(()).unwrap();
    }
    let t0 = std::time::Instant::now();
    match system.shutdown_timeout(Duration::from_millis(200)) {
        Ok(_) => println!("shutdown_timeout: every actor ended"),
        Err(e) => println!("shutdown_timeout: {e}: {:?}", e.actors),
    }
    // The first behaviour was running at the deadline; the other two never start.
    println!("shutdown_timeout returned after {:?}", t0.elapsed());

    // 3. `stop()` waits until every actor has ended by itself
    //    (here, a poison pill).
    let system = ActorSystem::new().unwrap();
    let a = system.spawn(Summer {
        sum: 0,
        totals: totals.clone(),
    });
    a.send(DeleteMsg).unwrap();
    system.stop();
    println!("stop: returned once the only actor had ended");

    // 4. From inside: an admin actor starts the graceful shutdown and returns at once; the
    //    owner's `stop()` returns once every actor has ended (after its queued mail).
    let system = ActorSystem::new().unwrap();
    let totals = Arc::new(AtomicU64::new(0));
    let summer = system.spawn(Summer {
        sum: 0,
        totals: totals.clone(),
    });
    for n in 1..=10 {
        summer.send(n).unwrap();
    }
    system.spawn(Admin).send(Quit).unwrap();
    system.stop();
    println!(
        "request_shutdown: total {} (expected 55)",
        totals.load(Ordering::SeqCst)
    );
    assert_eq!(totals.load(Ordering::SeqCst), 55);
}

/// Shuts the system down when told to.
struct Admin;
struct Quit;
impl Actor for Admin {}
impl Receive<Quit> for Admin {
    fn receive(&mut self, _: Quit, ctx: &mut Context<'_, Self>) -> Allocation {
        ctx.system().request_shutdown();
        Allocation::Nodelete
    }
}
