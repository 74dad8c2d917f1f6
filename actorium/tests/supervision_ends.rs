//! How a supervised actor's waiting mail ends: dropped one message at a time (destructors that
//! panic are reported, never abort the process), and never replayed past a shutdown's
//! deadline. On every executor that runs on its own threads.

mod common;

use actorium::{
    Actor, ActorSystem, Allocation, Ask, AskError, Context, Receive, ReplyTo, Restart, Strategy,
    Supervisor,
};
use common::{on_every_threaded_executor, watchdog};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(600);

/// A message whose destructor panics (also while another panic unwinds: dropped then, it
/// aborts the process).
struct Bomb;
impl Drop for Bomb {
    fn drop(&mut self) {
        panic!("a bomb went off");
    }
}

enum Msg {
    /// Blocks the worker until the sender is dropped (lets a test queue mail behind).
    Gate(mpsc::Receiver<()>),
    Boom,
    Bomb(#[allow(dead_code)] Bomb),
    Log(u32),
}

struct Child(Arc<Mutex<Vec<u32>>>);
impl Actor for Child {}
impl Receive<Msg> for Child {
    fn receive(&mut self, m: Msg, _: &mut Context<'_, Self>) -> Allocation {
        match m {
            Msg::Gate(rx) => {
                let _ = rx.recv();
            }
            Msg::Boom => panic!("boom"),
            Msg::Bomb(b) => std::mem::forget(b),
            Msg::Log(n) => self.0.lock().unwrap().push(n),
        }
        Allocation::Nodelete
    }
}

/// Two messages whose destructors panic wait for a restart that never comes (a temporary
/// child): dropped together, the second panic came while the first unwound and aborted the
/// process. Each is dropped on its own now, and the system shuts down.
#[test]
fn waiting_mail_whose_destructors_panic_is_dropped_one_message_at_a_time() {
    watchdog(120, || {
        on_every_threaded_executor(|name, choose| {
            let panics = Arc::new(AtomicU32::new(0));
            let p = panics.clone();
            let system = choose(ActorSystem::builder().workers(2))
                .on_event(move |e| {
                    if matches!(e, actorium::Event::Panic { .. }) {
                        p.fetch_add(1, Ordering::SeqCst);
                    }
                })
                .build()
                .unwrap();
            let sup = system.spawn(Supervisor::new(Strategy::OneForOne).intensity(10, LONG));
            let log = Arc::new(Mutex::new(Vec::new()));
            let l = log.clone();
            let child = sup
                .supervise(Restart::Temporary, move || Child(l.clone()))
                .unwrap();
            let down = child.monitor();
            let (tx, rx) = mpsc::channel();
            child.send(Msg::Gate(rx)).unwrap();
            child.send(Msg::Boom).unwrap();
            // Queued before the panic: they wait for the supervisor's decision.
            child.send(Msg::Bomb(Bomb)).unwrap();
            child.send(Msg::Bomb(Bomb)).unwrap();
            drop(tx);
            assert!(
                matches!(down.wait(), Ok(actorium::ExitReason::Panicked(_))),
                "{name}"
            );
            system.shutdown();
            // The behaviour's panic and both destructors'.
            assert!(panics.load(Ordering::SeqCst) >= 3, "{name}: {panics:?}");
            assert!(log.lock().unwrap().is_empty());
        });
    });
}

/// Keeps every reply port and never answers.
struct Silent(Vec<ReplyTo<()>>);
impl Actor for Silent {}
impl Receive<Ask<(), ()>> for Silent {
    fn receive(&mut self, a: Ask<(), ()>, _: &mut Context<'_, Self>) -> Allocation {
        self.0.push(a.reply);
        Allocation::Nodelete
    }
}

/// A restart in progress when a shutdown's deadline passes does not replay the mail that
/// waited for it: no queued behaviour starts after the deadline.
#[test]
fn a_restart_does_not_replay_waiting_mail_past_a_shutdown_deadline() {
    watchdog(120, || {
        on_every_threaded_executor(|name, choose| {
            let system = choose(ActorSystem::builder().workers(1)).build().unwrap();
            // The second incarnation's factory says it runs, then waits for an answer from
            // another system that never comes: its worker's wait gives up when its own system
            // aborts (the signal of the abort).
            let other = ActorSystem::new().unwrap();
            let silent = other.spawn(Silent(Vec::new()));
            let (restarting_tx, restarting) = mpsc::channel();
            let log = Arc::new(Mutex::new(Vec::new()));
            let (l, mut calls) = (log.clone(), 0);
            let factory = move || {
                calls += 1;
                if calls == 2 {
                    restarting_tx.send(()).unwrap();
                    let answer = silent.ask(()).unwrap().wait();
                    assert_eq!(answer, Err(AskError::Dropped));
                }
                Child(l.clone())
            };
            let sup = system.spawn(Supervisor::new(Strategy::OneForOne).intensity(10, LONG));
            let child = sup.supervise(Restart::Permanent, factory).unwrap();
            let (tx, rx) = mpsc::channel();
            child.send(Msg::Gate(rx)).unwrap();
            child.send(Msg::Boom).unwrap();
            for n in 0..100 {
                child.send(Msg::Log(n)).unwrap();
            }
            drop(tx);
            restarting.recv().unwrap();
            let timed_out = system.shutdown_timeout(Duration::from_millis(1)).is_err();
            assert!(timed_out, "{name}");
            assert_eq!(*log.lock().unwrap(), Vec::<u32>::new(), "{name}");
            other.shutdown();
        });
    });
}
