//! `spawn_with`: the state is built with the actor's own address, before any message, on
//! every executor.

mod common;

use actorium::{Actor, ActorSystem, Addr, Allocation, Context, ExitReason, Receive, WeakAddr};
use common::{on_every_executor, watchdog};
use std::sync::mpsc;

/// A ring node: the first one built the others with its own (weak) address.
struct Node {
    next: Option<Addr<Node>>,
    first: WeakAddr<Node>,
    started: bool,
    done: mpsc::Sender<(u64, u64)>,
}
impl Actor for Node {
    fn started(&mut self, _: &mut Context<'_, Self>) {
        self.started = true;
    }
}
/// (token, hops so far, hops to go)
impl Receive<(u64, u64, u64)> for Node {
    fn receive(
        &mut self,
        (t, hops, left): (u64, u64, u64),
        _: &mut Context<'_, Self>,
    ) -> Allocation {
        assert!(self.started, "a message ran before the started hook");
        if left == 0 {
            self.done.send((t, hops)).unwrap();
        } else {
            let next = match &self.next {
                Some(n) => n.clone(),
                None => self.first.upgrade().expect("the first node lives"),
            };
            next.send((t, hops + 1, left - 1)).unwrap();
        }
        Allocation::Nodelete
    }
}

#[test]
fn a_ring_wired_by_spawn_with_carries_every_token() {
    watchdog(120, || {
        on_every_executor(|name, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let (tx, rx) = mpsc::channel();
            const N: usize = 100;
            let first = system.spawn_with(move |ctx| {
                let me = ctx.address().downgrade();
                let mut next = None;
                for _ in 1..N {
                    next = Some(ctx.spawn(Node {
                        next,
                        first: me.clone(),
                        started: false,
                        done: tx.clone(),
                    }));
                }
                Node {
                    next,
                    first: me,
                    started: false,
                    done: tx,
                }
            });
            // Sent at once, so most likely before the state exists: they wait for it.
            for t in 0..50 {
                first.send((t, 0, 3 * N as u64)).unwrap();
            }
            let mut got: Vec<(u64, u64)> = (0..50)
                .map(|_| loop {
                    // A caller-driven system runs only when driven.
                    match rx.try_recv() {
                        Ok(v) => break v,
                        Err(_) if name.contains("testing") => {
                            system.run_once();
                        }
                        Err(_) => break rx.recv().unwrap(),
                    }
                })
                .collect();
            got.sort();
            assert_eq!(
                got,
                (0..50).map(|t| (t, 3 * N as u64)).collect::<Vec<_>>(),
                "{name}"
            );
            first.send(actorium::DeleteMsg).unwrap();
            drop(system);
        });
    });
}

struct Unbuildable;
impl Actor for Unbuildable {}
impl Receive<u8> for Unbuildable {
    fn receive(&mut self, _: u8, _: &mut Context<'_, Self>) -> Allocation {
        unreachable!("it has no state")
    }
}

#[test]
fn a_panicking_builder_ends_the_actor_as_panicked() {
    watchdog(120, || {
        on_every_executor(|name, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            // The builder waits for the monitor to be in place (without the gate, a builder
            // that ran first left the monitor to report `NotAlive`: seen under valgrind).
            let (go, gate) = std::sync::mpsc::channel::<()>();
            let a: Addr<Unbuildable> = system.spawn_with(move |_| {
                let _ = gate.recv();
                panic!("no state for you")
            });
            let down = a.monitor();
            let _ = a.send(1); // accepted or refused; never run
            drop(go);
            assert_eq!(
                down.wait(),
                Ok(ExitReason::Panicked("no state for you".into())),
                "{name}"
            );
            assert!(a.send(2).is_err());
            system.stop();
        });
    });
}

#[test]
fn spawn_with_on_a_stopping_system_gives_a_dead_address() {
    let system = ActorSystem::builder().workers(1).build().unwrap();
    let handle = system.handle();
    system.stop();
    let a: Addr<Unbuildable> = handle.spawn_with(|_| Unbuildable);
    assert_eq!(a.send(1).map_err(|e| e.0), Err(1));
}
