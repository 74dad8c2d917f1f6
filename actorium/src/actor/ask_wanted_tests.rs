//! `ReplyTo::is_wanted` for an asking actor: wanted while the asker lives (and its
//! `ask_timeout` is not up), not once it has ended, so that whoever holds ports for later
//! (a server, a remote node's table of asks) can let go of those nobody waits for.

use crate::{Actor, ActorSystem, Allocation, Ask, Context, Receive, Recipient, ReplyTo};
use std::sync::mpsc;
use std::time::Duration;

/// Keeps every port; on `()`, reports whether each is wanted.
struct Keeper {
    ports: Vec<ReplyTo<u32>>,
    out: mpsc::Sender<Vec<bool>>,
}
impl Actor for Keeper {}
impl Receive<Ask<u32, u32>> for Keeper {
    fn receive(&mut self, a: Ask<u32, u32>, _: &mut Context<'_, Self>) -> Allocation {
        self.ports.push(a.reply);
        Allocation::Nodelete
    }
}
impl Receive<()> for Keeper {
    fn receive(&mut self, (): (), _: &mut Context<'_, Self>) -> Allocation {
        let _ = self
            .out
            .send(self.ports.iter().map(ReplyTo::is_wanted).collect());
        Allocation::Nodelete
    }
}

/// Asks the keeper on `Some(timeout)` (with it) or `None` (without), then stays, or ends on
/// `true`.
struct Asker(Recipient<Ask<u32, u32>>);
impl Actor for Asker {}
impl Receive<Option<Duration>> for Asker {
    fn receive(&mut self, t: Option<Duration>, ctx: &mut Context<'_, Self>) -> Allocation {
        let then = |_: &mut Self, _, _: &mut Context<'_, Self>| Allocation::Nodelete;
        match t {
            Some(t) => ctx.ask_timeout(&self.0, 1, t, then).unwrap(),
            None => ctx.ask(&self.0, 1, then).unwrap(),
        }
        Allocation::Nodelete
    }
}
impl Receive<bool> for Asker {
    fn receive(&mut self, end: bool, _: &mut Context<'_, Self>) -> Allocation {
        if end {
            Allocation::Delete
        } else {
            Allocation::Nodelete
        }
    }
}

#[test]
fn an_asking_actor_wants_its_reply_until_it_ends_or_its_time_is_up() {
    let system = ActorSystem::builder().workers(2).build().unwrap();
    let (out, got) = mpsc::channel();
    let keeper = system.spawn(Keeper {
        ports: Vec::new(),
        out,
    });
    let to = keeper.recipient();
    let stays = system.spawn(Asker(to.clone()));
    let ends = system.spawn(Asker(to.clone()));
    let times_out = system.spawn(Asker(to.clone()));
    let wanted = || {
        keeper.send(()).unwrap();
        got.recv_timeout(Duration::from_secs(30)).unwrap()
    };
    // One ask at a time, each in the keeper before the next: the ports are in this order.
    let hour = Some(Duration::from_secs(3600));
    let asks = [
        (&stays, None),
        (&ends, hour),
        (&times_out, Some(Duration::from_millis(1))),
    ];
    for (k, (asker, t)) in asks.into_iter().enumerate() {
        asker.send(t).unwrap();
        let t0 = std::time::Instant::now();
        while wanted().len() <= k {
            assert!(t0.elapsed() < Duration::from_secs(30), "ask {k} never came");
            std::thread::yield_now();
        }
    }
    // The third's 1 ms comes to an end.
    let t0 = std::time::Instant::now();
    let mut w = wanted();
    while w[2] {
        assert!(t0.elapsed() < Duration::from_secs(30), "{w:?}");
        std::thread::yield_now();
        w = wanted();
    }
    assert_eq!(w, [true, true, false]);
    let ended = ends.monitor();
    ends.send(true).unwrap();
    ended.wait().unwrap();
    assert_eq!(wanted(), [true, false, false], "its asker ended");
    system.shutdown();
}
