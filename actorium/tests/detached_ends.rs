//! Detached actors blocked in asks, at every way a system ends.
//!
//! A detached actor (a thread of its own) may block in `Pending::wait` for another actor of
//! its system. However the system then ends, the wait must resolve: with the reply when the
//! end lets the asked actor run (`stop`, `shutdown`), or with `AskError::Dropped` when it
//! stops everything at once (`drop`, an expired `shutdown_timeout`). A drop that joined the
//! detached threads before it disposed of the queued mail that would resolve the ask would
//! never return: these tests hang (and their watchdogs fail) if it does.

mod common;

use actorium::Receive;
use actorium::{Actor, ActorSystem, Addr, Allocation, Ask, AskError, Context, DeleteMsg};
use common::{on_every_executor, watchdog, ExecutorChoice};
use std::sync::mpsc;
use std::time::Duration;

/// Answers after being busy for a while.
struct Slow(Duration);
impl Actor for Slow {}
impl Receive<Ask<u32, u32>> for Slow {
    fn receive(&mut self, a: Ask<u32, u32>, _: &mut Context<'_, Self>) -> Allocation {
        std::thread::sleep(self.0);
        let _ = a.reply.send(a.msg + 1);
        Allocation::Nodelete
    }
}
impl Receive<()> for Slow {
    fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
        std::thread::sleep(self.0);
        Allocation::Nodelete
    }
}

/// On its message, asks its target and blocks until the answer; says when it is about to
/// wait, and what it got.
struct Asker {
    target: Addr<Slow>,
    waiting: mpsc::Sender<()>,
    got: mpsc::Sender<Result<u32, AskError>>,
    timeout: Option<Duration>,
}
impl Actor for Asker {}
impl Receive<u32> for Asker {
    fn receive(&mut self, m: u32, _: &mut Context<'_, Self>) -> Allocation {
        let asked = self.target.ask(m);
        // The question is queued: from now on the end may come.
        let _ = self.waiting.send(());
        let r = match asked {
            Ok(p) => match self.timeout {
                Some(t) => p.wait_timeout(t),
                None => p.wait(),
            },
            Err(_) => Err(AskError::Dropped),
        };
        let _ = self.got.send(r);
        Allocation::Nodelete
    }
}

#[derive(Debug, Clone, Copy)]
enum End {
    Drop,
    ShutdownTimeout,
    Shutdown,
    PoisonStop,
}

/// One worker: the slow actor is busy with an earlier message when the ask comes, so the ask
/// waits in its queue; the system ends while the asker blocks.
fn blocked_ask_at_the_end(
    choose: ExecutorChoice,
    end: End,
    detached_target: bool,
    timeout: Option<Duration>,
) {
    let system = choose(ActorSystem::builder().workers(1)).build().unwrap();
    let busy = Duration::from_millis(100);
    let slow = if detached_target {
        system.spawn_detached(Slow(busy))
    } else {
        system.spawn(Slow(busy))
    };
    slow.send(()).unwrap();
    let (tx, rx) = mpsc::channel();
    let (waiting, asking) = mpsc::channel();
    let asker = system.spawn_detached(Asker {
        target: slow.clone(),
        waiting,
        got: tx,
        timeout,
    });
    asker.send(41).unwrap();
    // The asker's behaviour has begun: it asks and blocks (the slow actor is still in its
    // first behaviour, 100 ms), whenever the end comes now.
    asking.recv().unwrap();
    let graceful = match end {
        End::Drop => {
            drop(system);
            false
        }
        End::ShutdownTimeout => {
            // Runs out (the slow actor is 100 ms into its first behaviour), unless this thread
            // stalled that long since the asker's behaviour began: then it is a graceful end.
            system.shutdown_timeout(Duration::from_millis(10)).is_ok()
        }
        End::Shutdown => {
            system.shutdown();
            true
        }
        End::PoisonStop => {
            // The asker ends after its answer, the slow actor after the ask.
            asker.send(DeleteMsg).unwrap();
            slow.send(DeleteMsg).unwrap();
            system.stop();
            true
        }
    };
    let got = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the asker never finished");
    if graceful {
        assert_eq!(got, Ok(42), "{end:?}: the ask was answered before the end");
    } else {
        assert!(
            got == Err(AskError::Dropped) || got == Ok(42),
            "{end:?}: {got:?}"
        );
    }
}

#[test]
fn a_detached_actor_blocked_in_an_ask_never_holds_up_the_end() {
    watchdog(120, || {
        on_every_executor(|name, choose| {
            if name.contains("testing") {
                return; // caller-driven: nothing runs the slow actor's jobs during the end
            }
            for end in [
                End::Drop,
                End::ShutdownTimeout,
                End::Shutdown,
                End::PoisonStop,
            ] {
                for detached_target in [false, true] {
                    // (A wait with a time-out that ran to its end would answer `Timeout`,
                    // which `blocked_ask_at_the_end` refuses.)
                    for timeout in [None, Some(Duration::from_secs(30))] {
                        blocked_ask_at_the_end(choose, end, detached_target, timeout);
                    }
                }
            }
        });
    });
}

/// Blocks until its gate opens (or is dropped), then answers.
struct Gated(mpsc::Receiver<()>);
impl Actor for Gated {}
impl Receive<Ask<u32, u32>> for Gated {
    fn receive(&mut self, a: Ask<u32, u32>, _: &mut Context<'_, Self>) -> Allocation {
        let _ = self.0.recv();
        let _ = a.reply.send(a.msg + 1);
        Allocation::Nodelete
    }
}

/// Asks an actor of another system and blocks (allowed: it is not its own system).
struct CrossAsker {
    target: Addr<Gated>,
    waiting: mpsc::Sender<()>,
    got: mpsc::Sender<Result<u32, AskError>>,
}
impl Actor for CrossAsker {}
impl Receive<u32> for CrossAsker {
    fn receive(&mut self, m: u32, _: &mut Context<'_, Self>) -> Allocation {
        let asked = self.target.ask(m);
        let _ = self.waiting.send(());
        let r = asked.map_err(|_| AskError::Dropped).and_then(|p| p.wait());
        let _ = self.got.send(r);
        Allocation::Nodelete
    }
}

/// A behaviour (pooled or detached) blocked in an ask to an actor of *another* system that
/// does not answer: dropping its own system ends the wait (`AskError::Dropped`) instead of
/// waiting for that other system.
#[test]
fn a_thread_blocked_in_an_ask_to_another_system_never_holds_up_its_own_drop() {
    watchdog(60, || {
        on_every_executor(|name, choose| {
            if name.contains("testing") {
                return;
            }
            for detached in [false, true] {
                let other = ActorSystem::new().unwrap();
                let (open, gate) = mpsc::channel();
                let target = other.spawn_detached(Gated(gate));
                let system = choose(ActorSystem::builder().workers(1)).build().unwrap();
                let (tx, rx) = mpsc::channel();
                let (waiting, asking) = mpsc::channel();
                let asker = CrossAsker {
                    target,
                    waiting,
                    got: tx,
                };
                let asker = if detached {
                    system.spawn_detached(asker)
                } else {
                    system.spawn(asker)
                };
                asker.send(1).unwrap();
                // Its behaviour has begun: it asks the gated actor and blocks.
                asking.recv().unwrap();
                drop(system);
                assert_eq!(
                    rx.recv_timeout(Duration::from_secs(30)),
                    Ok(Err(AskError::Dropped)),
                    "{name}, detached {detached}"
                );
                drop(open);
                other.shutdown();
            }
        });
    });
}
