//! Every accepted message is accounted for at a graceful end: delivered, or reported as a
//! dead letter (`Event::DeadLetters`, and `Stats::dead_letters`). Outside threads keep sending
//! to many actors while `shutdown()` (or poison and `stop()`) ends the system; a send is
//! accepted (`Ok`) or gives the message back (`Err`). What the actors received plus what was
//! reported must equal what was accepted, on every executor.

mod common;

use actorium::{Actor, ActorSystem, Allocation, Context, DeleteMsg, Event, Receive};
use common::{on_every_executor, watchdog};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

struct Sink(Arc<AtomicU64>);
impl Actor for Sink {}
impl Receive<u64> for Sink {
    fn receive(&mut self, _: u64, _: &mut Context<'_, Self>) -> Allocation {
        self.0.fetch_add(1, Ordering::Relaxed);
        Allocation::Nodelete
    }
}

fn rounds() -> u64 {
    std::env::var("ACTORIUM_UNDELIVERED_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20)
}

#[test]
fn every_accepted_message_is_delivered_or_reported_at_a_graceful_end() {
    watchdog(300, || {
        on_every_executor(|name, choose| {
            if name.contains("testing") {
                return; // caller-driven: nobody runs its jobs while outside threads send
            }
            for round in 0..rounds() {
                for workers in 1..=3 {
                    let poison = round % 2 == 1;
                    // Short turns (actor-centric): an actor's job goes back to its policy's
                    // queue after each few messages, also once it has ended and only dead
                    // letters are left.
                    let throughput = [None, Some(1), Some(4)][(round % 3) as usize]
                        .filter(|_| name.contains("actor-centric"));
                    let reported = Arc::new(AtomicU64::new(0));
                    let r = reported.clone();
                    let mut b = choose(ActorSystem::builder().workers(workers));
                    if let Some(n) = throughput {
                        b = b.max_throughput(n);
                    }
                    let system = b
                        .stats(true)
                        .on_event(move |e| {
                            if let Event::DeadLetters { count, .. } = e {
                                r.fetch_add(*count, Ordering::Relaxed);
                            }
                        })
                        .build()
                        .unwrap();
                    let received = Arc::new(AtomicU64::new(0));
                    let actors: Vec<_> = (0..32)
                        .map(|_| system.spawn(Sink(received.clone())))
                        .collect();
                    let go = Arc::new(AtomicBool::new(true));
                    let senders: Vec<_> = (0..2)
                        .map(|t| {
                            let (actors, go) = (actors.clone(), go.clone());
                            std::thread::spawn(move || {
                                let mut accepted = 0u64;
                                let mut i = t as usize;
                                while go.load(Ordering::Relaxed) {
                                    i = i.wrapping_mul(31).wrapping_add(7);
                                    if actors[i % actors.len()].send(i as u64).is_ok() {
                                        accepted += 1;
                                    }
                                }
                                accepted
                            })
                        })
                        .collect();
                    std::thread::sleep(Duration::from_millis(2));
                    let stats = if poison {
                        for a in &actors {
                            let _ = a.send(DeleteMsg);
                        }
                        let h = {
                            let go = go.clone();
                            std::thread::spawn(move || {
                                std::thread::sleep(Duration::from_millis(1));
                                go.store(false, Ordering::Relaxed);
                            })
                        };
                        let s = system.stop();
                        h.join().unwrap();
                        s
                    } else {
                        system.shutdown()
                    };
                    go.store(false, Ordering::Relaxed);
                    let accepted: u64 = senders.into_iter().map(|t| t.join().unwrap()).sum();
                    let (received, reported) = (
                        received.load(Ordering::Relaxed),
                        reported.load(Ordering::Relaxed),
                    );
                    let stats = stats.expect("statistics are on");
                    assert_eq!(
                        received + reported,
                        accepted,
                        "{name}, {workers} workers, round {round} ({}, max_throughput \
                         {throughput:?}): {received} received, {reported} reported as dead \
                         letters, {accepted} accepted",
                        if poison { "poison + stop" } else { "shutdown" }
                    );
                    // The deletes that reached an ended actor are dead letters too.
                    assert!(
                        stats.dead_letters >= reported,
                        "{name}: Stats::dead_letters {} < {reported} reported",
                        stats.dead_letters
                    );
                }
            }
        });
    });
}
