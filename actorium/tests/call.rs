//! One-call requests (`call`, `call_timeout`, `call_async`) through addresses and recipients,
//! with one error type, on every executor that runs on its own threads; a blocking call its
//! thread may not make sends nothing.

mod common;

use actorium::{Actor, ActorSystem, Addr, Allocation, Ask, AskError, Context, Receive, ReplyTo};
use common::{block_on, on_every_threaded_executor, watchdog};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

struct Squares;
impl Actor for Squares {}
impl Receive<Ask<u64, u64>> for Squares {
    fn receive(&mut self, a: Ask<u64, u64>, _: &mut Context<'_, Self>) -> Allocation {
        a.reply.send(a.msg * a.msg).ok();
        Allocation::Nodelete
    }
}
impl Receive<()> for Squares {
    fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
        Allocation::Delete
    }
}

/// Keeps every reply port and never answers.
struct Silent(Vec<ReplyTo<u64>>);
impl Actor for Silent {}
impl Receive<Ask<u64, u64>> for Silent {
    fn receive(&mut self, a: Ask<u64, u64>, _: &mut Context<'_, Self>) -> Allocation {
        self.0.push(a.reply);
        Allocation::Nodelete
    }
}

#[test]
fn a_call_sends_and_waits_with_one_error_type() {
    watchdog(60, || {
        on_every_threaded_executor(|_, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let sq = system.spawn(Squares);
            let r: actorium::Recipient<Ask<u64, u64>> = sq.recipient();
            assert_eq!(sq.call(3), Ok(9));
            assert_eq!(r.call(4), Ok(16));
            assert_eq!(sq.call_timeout(5, Duration::from_secs(30)), Ok(25));
            assert_eq!(r.call_timeout(6, Duration::from_secs(30)), Ok(36));
            assert_eq!(block_on(sq.call_async(7)), Ok(49));
            assert_eq!(block_on(r.call_async(8)), Ok(64));
            // No reply: the timeout.
            let silent = system.spawn(Silent(Vec::new()));
            assert_eq!(
                silent.call_timeout(1, Duration::from_millis(10)),
                Err(AskError::Timeout)
            );
            // An ended actor: the question is dropped, `Dead`.
            let down = sq.monitor();
            sq.send(()).unwrap();
            down.wait().unwrap();
            assert_eq!(sq.call(2), Err(AskError::Dead));
            assert_eq!(r.call(2), Err(AskError::Dead));
            assert_eq!(block_on(r.call_async(2)), Err(AskError::Dead));
            drop(system);
        });
    });
}

/// Counts the questions it answers.
struct Counter(Arc<AtomicU64>);
impl Actor for Counter {}
impl Receive<Ask<u64, u64>> for Counter {
    fn receive(&mut self, a: Ask<u64, u64>, _: &mut Context<'_, Self>) -> Allocation {
        a.reply.send(self.0.fetch_add(1, Ordering::SeqCst)).ok();
        Allocation::Nodelete
    }
}

/// Calls its counter from inside a behaviour of the same system, and reports what it got.
struct Caller(
    Addr<Counter>,
    mpsc::Sender<(Result<u64, AskError>, Result<u64, AskError>)>,
);
impl Actor for Caller {}
impl Receive<()> for Caller {
    fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
        let a = self.0.call(1);
        let b = self
            .0
            .recipient::<Ask<u64, u64>>()
            .call_timeout(1, Duration::from_secs(1));
        self.1.send((a, b)).unwrap();
        Allocation::Nodelete
    }
}

/// A call that would block a thread of the asked actor's own system is refused before its
/// question is sent: `WouldBlock` means that nothing happened (a caller may ask another way
/// without the question being answered twice).
#[test]
fn a_call_refused_as_would_block_sends_nothing() {
    watchdog(60, || {
        on_every_threaded_executor(|name, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let asked = Arc::new(AtomicU64::new(0));
            let counter = system.spawn(Counter(asked.clone()));
            let (tx, rx) = mpsc::channel();
            let caller = system.spawn(Caller(counter.clone(), tx));
            caller.send(()).unwrap();
            let (a, b) = rx.recv().unwrap();
            assert_eq!(a, Err(AskError::WouldBlock), "{name}");
            assert_eq!(b, Err(AskError::WouldBlock), "{name}");
            // From outside: the first question this counter ever answers.
            assert_eq!(counter.call(1), Ok(0), "{name}: a refused call was sent");
            system.shutdown();
            assert_eq!(asked.load(Ordering::SeqCst), 1, "{name}");
        });
    });
}
