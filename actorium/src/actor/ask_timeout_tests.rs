//! `Context::ask_timeout`: a reply cancels the ask's timer, so a finished ask keeps nothing
//! until its deadline (a million answered asks with an hour's timeout keep no million timers).

use crate::{Actor, ActorSystem, Allocation, Ask, AskError, Context, Receive, Recipient};
use std::sync::mpsc;
use std::time::Duration;

struct Doubler;
impl Actor for Doubler {}
impl Receive<Ask<u32, u32>> for Doubler {
    fn receive(&mut self, a: Ask<u32, u32>, _: &mut Context<'_, Self>) -> Allocation {
        let _ = a.reply.send(a.msg * 2);
        Allocation::Nodelete
    }
}

/// Asks with an hour's timeout; reports each reply and the system's pending timers when its
/// continuation runs.
struct Client {
    to: Recipient<Ask<u32, u32>>,
    out: mpsc::Sender<(Result<u32, AskError>, usize)>,
}
impl Actor for Client {}
impl Receive<u32> for Client {
    fn receive(&mut self, n: u32, ctx: &mut Context<'_, Self>) -> Allocation {
        let hour = Duration::from_secs(3600);
        ctx.ask_timeout(&self.to, n, hour, |me: &mut Self, r, ctx| {
            let pending = ctx.cell.header.exec.shared().timers.pending();
            let _ = me.out.send((r, pending));
            Allocation::Nodelete
        })
        .unwrap();
        Allocation::Nodelete
    }
}

#[test]
fn a_reply_cancels_the_timer_of_its_ask() {
    let system = ActorSystem::builder().workers(2).build().unwrap();
    let to = system.spawn(Doubler).recipient();
    let (out, got) = mpsc::channel();
    let client = system.spawn(Client { to, out });
    for n in 0..20 {
        client.send(n).unwrap();
        let (r, pending) = got.recv_timeout(Duration::from_secs(30)).unwrap();
        assert_eq!(r, Ok(n * 2));
        assert_eq!(pending, 0, "an answered ask still holds its timer");
    }
    system.shutdown();
}
