//! Asks, monitors and links from behaviours through any reference to an actor (`Addr` or
//! `Recipient`), and asks with a timeout, on every executor.

mod common;

use actorium::{
    Actor, ActorSystem, Allocation, Ask, AskError, Context, ExitReason, Receive, Recipient, ReplyTo,
};
use common::{on_every_executor, settle, watchdog};
use std::sync::mpsc;
use std::time::Duration;

/// Doubles.
struct Doubler;
impl Actor for Doubler {}
impl Receive<Ask<u32, u32>> for Doubler {
    fn receive(&mut self, a: Ask<u32, u32>, _: &mut Context<'_, Self>) -> Allocation {
        a.reply.send(a.msg * 2).ok();
        Allocation::Nodelete
    }
}

/// Adds one (another actor type answering the same question).
struct Incr;
impl Actor for Incr {}
impl Receive<Ask<u32, u32>> for Incr {
    fn receive(&mut self, a: Ask<u32, u32>, _: &mut Context<'_, Self>) -> Allocation {
        a.reply.send(a.msg + 1).ok();
        Allocation::Nodelete
    }
}

/// Keeps every reply port and never answers; ends on `()`.
struct Silent(Vec<ReplyTo<u32>>);
impl Actor for Silent {}
impl Receive<Ask<u32, u32>> for Silent {
    fn receive(&mut self, a: Ask<u32, u32>, _: &mut Context<'_, Self>) -> Allocation {
        self.0.push(a.reply);
        Allocation::Nodelete
    }
}
impl Receive<()> for Silent {
    fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
        Allocation::Delete
    }
}

/// What the client reports.
#[derive(Debug, PartialEq)]
enum Seen {
    Reply(usize, Result<u32, AskError>),
    Probe,
    Down(ExitReason),
}

/// Asks each of its recipients (and its doubler by address), with or without a timeout, and
/// reports every continuation; with a timeout, then sends itself a probe after three.
/// `timeout` is the one of the ask to recipient `silent`; the other asks get a thousand times
/// as long (a watchdog: their replies must win on a loaded machine too).
struct Client {
    to: Vec<Recipient<Ask<u32, u32>>>,
    by_addr: Option<actorium::Addr<Doubler>>,
    timeout: Option<Duration>,
    silent: usize,
    out: mpsc::Sender<Seen>,
}
impl Client {
    /// A client that asks nobody (it watches and links).
    fn watcher(out: mpsc::Sender<Seen>) -> Self {
        Self {
            to: Vec::new(),
            by_addr: None,
            timeout: None,
            silent: 0,
            out,
        }
    }
}
impl Actor for Client {}
impl Receive<u32> for Client {
    fn receive(&mut self, n: u32, ctx: &mut Context<'_, Self>) -> Allocation {
        let then = |i: usize| {
            move |me: &mut Self, reply, _: &mut Context<'_, Self>| {
                me.out.send(Seen::Reply(i, reply)).unwrap();
                Allocation::Nodelete
            }
        };
        let limit = |i: usize| {
            self.timeout
                .map(|d| if i == self.silent { d } else { d * 1000 })
        };
        for (i, r) in self.to.iter().enumerate() {
            match limit(i) {
                None => ctx.ask(r, n, then(i)).unwrap(),
                Some(d) => ctx.ask_timeout(r, n, d, then(i)).unwrap(),
            }
        }
        if let Some(a) = &self.by_addr {
            let i = self.to.len();
            match limit(i) {
                None => ctx.ask(a, n, then(i)).unwrap(),
                Some(d) => ctx.ask_timeout(a, n, d, then(i)).unwrap(),
            }
        }
        if let Some(d) = self.timeout {
            ctx.system()
                .send_after(ctx.address(), Probe, d * 3)
                .unwrap();
        }
        Allocation::Nodelete
    }
}
/// Sent by the system's timer after the silent recipient's timeout (set after it, from the
/// same behaviour): the timer thread fires in deadline order, and its messages to this actor
/// stay in order, so that timeout's continuation runs before this.
struct Probe;
impl Receive<Probe> for Client {
    fn receive(&mut self, _: Probe, _: &mut Context<'_, Self>) -> Allocation {
        self.out.send(Seen::Probe).unwrap();
        Allocation::Nodelete
    }
}
/// Makes the client fail.
struct Fail;
impl Receive<Fail> for Client {
    fn receive(&mut self, _: Fail, _: &mut Context<'_, Self>) -> Allocation {
        panic!("the client fails")
    }
}
/// Watches (and links to, if asked) a recipient.
struct Watch(Recipient<()>, bool);
impl Receive<Watch> for Client {
    fn receive(&mut self, Watch(r, link): Watch, ctx: &mut Context<'_, Self>) -> Allocation {
        ctx.monitor(&r, |me: &mut Self, why, _| {
            me.out.send(Seen::Down(why)).unwrap();
            Allocation::Nodelete
        });
        if link {
            ctx.link(&r);
        }
        Allocation::Nodelete
    }
}

fn collect(system: &ActorSystem, rx: &mpsc::Receiver<Seen>, n: usize) -> Vec<Seen> {
    let mut got = Vec::new();
    settle(system, 30, "the client's reports", || {
        while let Ok(s) = rx.try_recv() {
            got.push(s);
        }
        got.len() >= n
    });
    got
}

#[test]
fn a_behaviour_asks_through_recipients_of_any_actor_type() {
    watchdog(60, || {
        on_every_executor(|_, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let (out, rx) = mpsc::channel();
            let to = vec![system.spawn(Doubler).recipient(), system.spawn(Incr).into()];
            let client = system.spawn(Client {
                to,
                by_addr: Some(system.spawn(Doubler)),
                timeout: None,
                silent: 0,
                out,
            });
            client.send(20).unwrap();
            let mut got = collect(&system, &rx, 3);
            got.sort_by_key(|s| format!("{s:?}"));
            assert_eq!(
                got,
                [
                    Seen::Reply(0, Ok(40)),
                    Seen::Reply(1, Ok(21)),
                    Seen::Reply(2, Ok(40))
                ]
            );
            drop(system);
        });
    });
}

#[test]
fn an_ask_with_a_timeout_hears_the_reply_or_the_timeout_exactly_once() {
    watchdog(60, || {
        on_every_executor(|name, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let (out, rx) = mpsc::channel();
            let silent = system.spawn(Silent(Vec::new()));
            let timeout = Duration::from_millis(20);
            let client = system.spawn(Client {
                to: vec![system.spawn(Doubler).recipient(), silent.recipient()],
                by_addr: Some(system.spawn(Doubler)),
                timeout: Some(timeout),
                silent: 1,
                out,
            });
            client.send(4).unwrap();
            // The replies come (their asks' limits are long); the silent actor's ask times
            // out, and the probe comes after that timeout.
            let got = collect(&system, &rx, 4);
            assert!(got.contains(&Seen::Reply(0, Ok(8))), "{got:?}");
            let timed_out = got
                .iter()
                .position(|s| *s == Seen::Reply(1, Err(AskError::Timeout)));
            assert!(timed_out.is_some(), "{got:?}");
            assert!(got.contains(&Seen::Reply(2, Ok(8))), "{got:?}");
            let probe = got.iter().position(|s| *s == Seen::Probe);
            assert!(probe > timed_out, "the probe before the timeout: {got:?}");
            assert_eq!(got.len(), 4, "{got:?}");
            // The silent actor ends, dropping the port it kept: its ask has had its answer
            // (the timeout), so nothing more comes.
            let down = silent.monitor();
            silent.send(()).unwrap();
            if !name.contains("testing") {
                down.wait().unwrap();
            } else {
                settle(&system, 30, "the silent actor ends", || !silent.is_alive());
            }
            client.send(Probe).unwrap();
            assert_eq!(collect(&system, &rx, 1), [Seen::Probe]);
            drop(system);
        });
    });
}

/// Ends on `()`.
struct Mortal;
impl Actor for Mortal {}
impl Receive<()> for Mortal {
    fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
        Allocation::Delete
    }
}
/// Fails on `()`.
struct Fragile;
impl Actor for Fragile {}
impl Receive<()> for Fragile {
    fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
        panic!("fragile")
    }
}

#[test]
fn monitors_and_links_take_recipients() {
    watchdog(60, || {
        on_every_executor(|name, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            // From a behaviour: a monitor through a recipient hears the end.
            let (out, rx) = mpsc::channel();
            let client = system.spawn(Client::watcher(out));
            let mortal: Recipient<()> = system.spawn(Mortal).into();
            // From a thread: a recipient's monitor.
            let down = mortal.monitor();
            client.send(Watch(mortal.clone(), false)).unwrap();
            // (The monitor is set once the client has run `Watch`: a probe behind it says so.)
            client.send(Probe).unwrap();
            assert_eq!(collect(&system, &rx, 1), [Seen::Probe]);
            mortal.send(()).unwrap();
            assert_eq!(collect(&system, &rx, 1), [Seen::Down(ExitReason::Normal)]);
            if !name.contains("testing") {
                assert_eq!(down.wait().unwrap(), ExitReason::Normal);
            }
            // A link through a recipient: the fragile actor's failure takes the client down.
            let client_down = client.monitor();
            let fragile: Recipient<()> = system.spawn(Fragile).into();
            client.send(Watch(fragile.clone(), true)).unwrap();
            client.send(Probe).unwrap();
            assert_eq!(collect(&system, &rx, 1), [Seen::Probe]);
            fragile.send(()).unwrap();
            let got = collect(&system, &rx, 1);
            assert!(
                matches!(got[..], [Seen::Down(ExitReason::Panicked(_))]),
                "{got:?}"
            );
            settle(&system, 30, "the linked client ends", || !client.is_alive());
            if !name.contains("testing") {
                assert_eq!(client_down.wait().unwrap(), ExitReason::Linked);
            }
            // The other way: a failing client takes down a peer it linked to through a
            // recipient (the peer's half of the link reaches it by its recipient).
            let (out, rx) = mpsc::channel();
            let client = system.spawn(Client::watcher(out));
            let peer: Recipient<()> = system.spawn(Mortal).into();
            let peer_down = peer.monitor();
            client.send(Watch(peer.clone(), true)).unwrap();
            client.send(Probe).unwrap();
            assert_eq!(collect(&system, &rx, 1), [Seen::Probe]);
            client.send(Fail).unwrap();
            settle(&system, 30, "the linked peer ends", || !peer.is_alive());
            if !name.contains("testing") {
                assert_eq!(peer_down.wait().unwrap(), ExitReason::Linked);
            }
            drop(system);
        });
    });
}

/// A list of weak recipients keeps no ended subscriber: upgrades fail once it has ended and
/// nothing else holds it; a live one upgrades and receives.
#[test]
fn weak_recipients_do_not_keep_ended_actors() {
    watchdog(60, || {
        on_every_executor(|_, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let (live, ended) = (system.spawn(Mortal), system.spawn(Mortal));
            let subscribers: Vec<actorium::WeakRecipient<()>> = [&live, &ended]
                .iter()
                .map(|a| Recipient::<()>::from(*a).downgrade())
                .collect();
            assert!(subscribers.iter().all(|w| w.upgrade().is_some()));
            ended.send(()).unwrap(); // `Mortal` ends on `()`
            drop(ended);
            settle(&system, 30, "the ended subscriber's cell goes", || {
                subscribers[1].upgrade().is_none()
            });
            let alive = subscribers[0].upgrade().expect("a live actor's cell stays");
            assert!(alive.is_alive());
            drop(alive);
            assert!(subscribers[0].upgrade().is_some(), "the system holds it");
            drop(live);
            drop(system);
        });
    });
}
