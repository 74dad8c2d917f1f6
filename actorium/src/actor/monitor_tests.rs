//! A watcher set by an actor goes at that actor's end: a long-lived actor keeps nothing of
//! the short-lived ones that watched it (its monitors table is looked at directly).

use crate::{
    Actor, ActorSystem, Addr, Allocation, Ask, Context, DestroyMsg, ExitReason, Receive, Restart,
    Strategy, Supervisor,
};
use std::time::{Duration, Instant};

struct Server;
impl Actor for Server {}

/// Monitors the server when it starts, then ends.
struct Client(Addr<Server>);
impl Actor for Client {
    fn started(&mut self, ctx: &mut Context<'_, Self>) {
        ctx.monitor(&self.0, |_, _, _| Allocation::Nodelete);
        ctx.stop();
    }
}

/// Links with the server when told; ends by a poison pill (its cell kept for a respawn).
struct Partner;
impl Actor for Partner {
    fn linked_exit(&mut self, _: ExitReason, _: &mut Context<'_, Self>) -> Allocation {
        Allocation::Nodelete
    }
}
impl Receive<Addr<Server>> for Partner {
    fn receive(&mut self, s: Addr<Server>, ctx: &mut Context<'_, Self>) -> Allocation {
        ctx.link(&s);
        Allocation::Nodelete
    }
}

/// Waits (10 s at most) until the server's system keeps `n` watchers.
fn settle_at(server: &Addr<Server>, n: usize) {
    let monitors = &server.cell().header.exec.shared().monitors;
    let deadline = Instant::now() + Duration::from_secs(10);
    while monitors.watchers() != n {
        assert!(
            Instant::now() < deadline,
            "{} watchers kept, {n} expected",
            monitors.watchers()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn monitors_of_ended_actors_are_not_kept() {
    let system = ActorSystem::builder().workers(2).build().unwrap();
    let server = system.spawn(Server);
    for _ in 0..1_000 {
        system.spawn(Client(server.clone()));
    }
    // Every client has set its monitor and ended.
    let deadline = Instant::now() + Duration::from_secs(10);
    while system.live_actors() > 1 {
        assert!(Instant::now() < deadline, "the clients did not end");
        std::thread::sleep(Duration::from_millis(1));
    }
    settle_at(&server, 0);
    system.shutdown();
}

#[test]
fn links_of_ended_incarnations_are_not_kept() {
    let system = ActorSystem::builder().workers(2).build().unwrap();
    let server = system.spawn(Server);
    let partner = system.spawn(Partner);
    for _ in 0..100 {
        partner.send(server.clone()).unwrap();
        // The link's two halves.
        settle_at(&server, 2);
        partner.send(DestroyMsg).unwrap();
        settle_at(&server, 0);
        let mut next = Partner;
        let deadline = Instant::now() + Duration::from_secs(10);
        while let Err(back) = partner.respawn(next) {
            assert!(Instant::now() < deadline, "the partner never ended");
            next = back;
            std::thread::yield_now();
        }
    }
    system.shutdown();
}

/// A supervised child that monitors the server when it starts, and fails when asked.
struct Watchful(Addr<Server>);
impl Actor for Watchful {
    fn started(&mut self, ctx: &mut Context<'_, Self>) {
        ctx.monitor(&self.0, |_, _, _| Allocation::Nodelete);
    }
}
impl Receive<Ask<bool, ()>> for Watchful {
    fn receive(&mut self, q: Ask<bool, ()>, _: &mut Context<'_, Self>) -> Allocation {
        assert!(!q.msg, "told to fail");
        q.reply.send(()).ok();
        Allocation::Nodelete
    }
}

#[test]
fn a_restarted_child_keeps_only_its_own_monitors() {
    let system = ActorSystem::builder().workers(2).build().unwrap();
    let server = system.spawn(Server);
    let sup =
        system.spawn(Supervisor::new(Strategy::OneForOne).intensity(100, Duration::from_secs(60)));
    let s = server.clone();
    let child = sup
        .supervise(Restart::Permanent, move || Watchful(s.clone()))
        .unwrap();
    for _ in 0..20 {
        let patience = Duration::from_secs(10);
        assert!(child.ask(true).unwrap().wait_timeout(patience).is_err());
        // Restarted (and its `started` ran: it comes first in its queue).
        assert_eq!(child.ask(false).unwrap().wait_timeout(patience), Ok(()));
    }
    // The last incarnation's monitor only.
    settle_at(&server, 1);
    system.shutdown();
}
