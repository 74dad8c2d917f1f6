//! Load and scale: a million actors spawned from outside and kept alive, each sent
//! one message, then `stop()` — on the message-centric executor and the actor-centric
//! work-stealing policy. Every message is delivered once, every state dropped once, and the
//! system stops (a watchdog). The 10,000,000-actor measurement, with bytes per actor and the
//! peers beside it, is `actorium-bench scale`.

mod common;

use actorium::policy::WorkStealing;
use actorium::{Actor, ActorSystem, Addr, Allocation, Context, Receive};
use common::watchdog;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const ACTORS: u64 = 1_000_000;

struct Counts {
    got: AtomicU64,
    sum: AtomicU64,
    dropped: AtomicU64,
}

/// Ends after its one message.
struct One {
    id: u64,
    counts: Arc<Counts>,
}
impl Actor for One {}
impl Receive<u64> for One {
    fn receive(&mut self, x: u64, _: &mut Context<'_, Self>) -> Allocation {
        self.counts.got.fetch_add(1, Ordering::Relaxed);
        self.counts.sum.fetch_add(x ^ self.id, Ordering::Relaxed);
        Allocation::Delete
    }
}
impl Drop for One {
    fn drop(&mut self) {
        self.counts.dropped.fetch_add(1, Ordering::Relaxed);
    }
}

fn a_million(name: &'static str, system: ActorSystem) {
    watchdog(600, move || {
        let counts = Arc::new(Counts {
            got: AtomicU64::new(0),
            sum: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
        });
        let actors: Vec<Addr<One>> = (0..ACTORS)
            .map(|id| {
                system.spawn(One {
                    id,
                    counts: counts.clone(),
                })
            })
            .collect();
        assert_eq!(
            system.live_actors(),
            ACTORS as usize,
            "{name}: all alive at once"
        );
        for (i, a) in actors.iter().enumerate() {
            a.send(i as u64).unwrap();
        }
        drop(actors);
        system.stop();
        assert_eq!(
            counts.got.load(Ordering::Relaxed),
            ACTORS,
            "{name}: delivered"
        );
        // Each actor got its own index: x ^ id = 0.
        assert_eq!(
            counts.sum.load(Ordering::Relaxed),
            0,
            "{name}: each its own message"
        );
        assert_eq!(
            counts.dropped.load(Ordering::Relaxed),
            ACTORS,
            "{name}: states dropped"
        );
    });
}

#[test]
fn a_million_actors_on_the_message_centric_executor() {
    a_million(
        "message-centric",
        ActorSystem::builder().workers(2).build().unwrap(),
    );
}

#[test]
fn a_million_actors_on_the_actor_centric_executor() {
    let system = ActorSystem::builder()
        .workers(2)
        .policy(WorkStealing::default())
        .build()
        .unwrap();
    a_million("actor-centric work stealing", system);
}
