//! Request/reply: a bank account actor answers balance questions and withdrawals; a thread asks
//! and waits, async code awaits, and a teller actor asks from inside its behaviour without
//! blocking its worker (the reply continues the teller). `cargo run --example ask`.

use actorium::{Actor, ActorSystem, Addr, Allocation, Ask, AskError, Context, Receive};
use std::future::Future;
use std::pin::pin;
use std::sync::{mpsc, Arc};
use std::task::{Context as TaskContext, Poll, Wake, Waker};
use std::time::Duration;

struct Account {
    balance: u64,
}
impl Actor for Account {}

struct Balance;
impl Receive<Ask<Balance, u64>> for Account {
    fn receive(&mut self, a: Ask<Balance, u64>, _: &mut Context<'_, Self>) -> Allocation {
        a.reply.send(self.balance).ok();
        Allocation::Nodelete
    }
}

struct Withdraw(u64);
impl Receive<Ask<Withdraw, Result<u64, String>>> for Account {
    fn receive(
        &mut self,
        a: Ask<Withdraw, Result<u64, String>>,
        _: &mut Context<'_, Self>,
    ) -> Allocation {
        let answer = match self.balance.checked_sub(a.msg.0) {
            Some(left) => {
                self.balance = left;
                Ok(left)
            }
            None => Err(format!("only {} left", self.balance)),
        };
        a.reply.send(answer).ok();
        Allocation::Nodelete
    }
}

/// Withdraws on behalf of customers: asks the account, reports when the answer comes.
struct Teller {
    account: Addr<Account>,
    log: mpsc::Sender<String>,
}
impl Actor for Teller {}
impl Receive<u64> for Teller {
    fn receive(&mut self, amount: u64, ctx: &mut Context<'_, Self>) -> Allocation {
        ctx.ask(
            &self.account,
            Withdraw(amount),
            move |me: &mut Self, reply, _| {
                let line = match reply {
                    Ok(Ok(left)) => format!("teller: withdrew {amount}, {left} left"),
                    Ok(Err(why)) => format!("teller: refused {amount}: {why}"),
                    Err(e) => format!("teller: no answer: {e}"),
                };
                me.log.send(line).ok();
                Allocation::Nodelete
            },
        )
        .expect("the account is open");
        Allocation::Nodelete
    }
}

/// A minimal executor for the async part (any runtime works: tokio, smol, ...).
fn block_on<F: Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = TaskContext::from_waker(&waker);
    let mut f = pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let system = ActorSystem::new()?;
    let account = system.spawn(Account { balance: 100 });

    // From a thread: ask and wait (with a timeout).
    let balance = account.ask(Balance)?.wait_timeout(Duration::from_secs(1))?;
    println!("thread: balance {balance}");

    // From async code: await.
    let left = block_on(async { account.ask(Withdraw(30))?.await })?;
    println!("async: withdrew 30, {left:?}");

    // From an actor: the reply continues the teller, the worker never blocks.
    let (log, lines) = mpsc::channel();
    let teller = system.spawn(Teller {
        account: account.clone(),
        log,
    });
    teller.send(50).unwrap();
    teller.send(50).unwrap();
    for _ in 0..2 {
        println!("{}", lines.recv()?);
    }

    // Errors instead of hangs: an ended actor returns the question.
    drop(system); // stops every actor now
    let err: AskError = account.ask(Balance).map(|_| ()).unwrap_err().into();
    println!("after shutdown: {err}");
    Ok(())
}
