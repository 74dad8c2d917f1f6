//! Remote actors between two nodes of one process (two systems, two Zenoh sessions, real TCP
//! sockets on loopback, multicast off). Processes that end are in `remote_process.rs`.
#![cfg(feature = "remote")]

mod common;

use actorium::remote::{Listing, Node, RemoteConfig, RemoteError, RemoteMessage};
use actorium::{
    Actor, ActorSystem, Allocation, Ask, AskError, Context, DeleteMsg, ExitReason, Receive,
    Recipient,
};
use common::{free_port, watchdog};
use serde::{Deserialize, Serialize};
use std::sync::mpsc;
use std::time::Duration;

const FIND: Duration = Duration::from_secs(10);

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Num(u64);
impl RemoteMessage for Num {
    const TAG: &'static str = "test.Num";
}

#[derive(Serialize, Deserialize, Debug)]
struct Text(String);
impl RemoteMessage for Text {
    const TAG: &'static str = "test.Text";
}

/// A message that carries where to answer.
#[derive(Serialize, Deserialize)]
struct Ping {
    n: u64,
    reply_to: Recipient<Num>,
}
impl RemoteMessage for Ping {
    const TAG: &'static str = "test.Ping";
}

/// Two connected nodes, each of its own system: (system a, node a, system b, node b).
fn pair() -> (ActorSystem, Node, ActorSystem, Node) {
    let port = free_port();
    let sa = ActorSystem::new().unwrap();
    let a = sa
        .remote(RemoteConfig::peer().listen(format!("tcp/127.0.0.1:{port}")))
        .unwrap();
    let sb = ActorSystem::new().unwrap();
    let b = sb
        .remote(RemoteConfig::peer().connect(format!("tcp/127.0.0.1:{port}")))
        .unwrap();
    (sa, a, sb, b)
}

/// Records what it receives, in order.
struct Sink(mpsc::Sender<u64>);
impl Actor for Sink {}
impl Receive<Num> for Sink {
    fn receive(&mut self, Num(n): Num, _: &mut Context<'_, Self>) -> Allocation {
        let _ = self.0.send(n);
        Allocation::Nodelete
    }
}

/// Answers `Ask<Num, Num>` with the number doubled; `Ask<Text, Num>` with its length; ends
/// on `Text("end")`, panics on `Text("panic")`.
struct Doubler;
impl Actor for Doubler {}
impl Receive<Ask<Num, Num>> for Doubler {
    fn receive(&mut self, a: Ask<Num, Num>, _: &mut Context<'_, Self>) -> Allocation {
        let _ = a.reply.send(Num(a.msg.0 * 2));
        Allocation::Nodelete
    }
}
impl Receive<Text> for Doubler {
    fn receive(&mut self, Text(t): Text, _: &mut Context<'_, Self>) -> Allocation {
        match t.as_str() {
            "end" => Allocation::Delete,
            "panic" => panic!("asked to"),
            _ => Allocation::Nodelete,
        }
    }
}
impl Receive<Ping> for Doubler {
    fn receive(&mut self, p: Ping, _: &mut Context<'_, Self>) -> Allocation {
        let _ = p.reply_to.send(Num(p.n * 2));
        Allocation::Nodelete
    }
}

#[test]
fn tells_arrive_in_order_exactly_once_and_asks_are_answered() {
    watchdog(60, || {
        let (sa, a, _sb, b) = pair();
        let (tx, rx) = mpsc::channel();
        let sink = sa.spawn(Sink(tx));
        a.register::<Num>("sink", &sink).unwrap();
        let doubler = sa.spawn(Doubler);
        a.register::<Ask<Num, Num>>("doubler", &doubler).unwrap();

        let remote_sink = b.lookup::<Num>("sink", FIND).unwrap();
        let n = 20_000;
        for i in 0..n {
            remote_sink.send(Num(i)).unwrap();
        }
        for i in 0..n {
            assert_eq!(
                rx.recv_timeout(FIND).unwrap(),
                i,
                "in order, none lost or repeated"
            );
        }
        let remote = b.lookup::<Ask<Num, Num>>("doubler", FIND).unwrap();
        for i in 0..100 {
            assert_eq!(remote.ask(Num(i)).unwrap().wait().unwrap(), Num(2 * i));
        }
        // From async code: a Pending is a future.
        let r = common::block_on(remote.ask(Num(21)).unwrap()).unwrap();
        assert_eq!(r, Num(42));
        assert!(rx.try_recv().is_err(), "nothing twice");
    });
}

#[test]
fn a_recipient_travels_inside_a_message_and_answers_reach_it() {
    watchdog(60, || {
        let (sa, a, sb, b) = pair();
        let doubler = sa.spawn(Doubler);
        a.register::<Ping>("doubler", &doubler).unwrap();
        let (tx, rx) = mpsc::channel();
        let sink = sb.spawn(Sink(tx));
        let remote = b.lookup::<Ping>("doubler", FIND).unwrap();
        for n in 0..50 {
            remote
                .send(Ping {
                    n,
                    reply_to: sink.recipient(),
                })
                .unwrap();
        }
        for n in 0..50 {
            assert_eq!(rx.recv_timeout(FIND).unwrap(), 2 * n);
        }
    });
}

#[test]
fn remote_recipients_of_one_actor_are_equal_and_a_local_lookup_finds_the_local_actor() {
    watchdog(60, || {
        let (sa, a, _sb, b) = pair();
        let doubler = sa.spawn(Doubler);
        a.register::<Text>("d", &doubler).unwrap();
        let r1 = b.lookup::<Text>("d", FIND).unwrap();
        let r2 = b.lookup::<Text>("d", FIND).unwrap();
        assert_eq!(r1, r2);
        // Hashed by actor too: one entry for the two.
        let set: std::collections::HashSet<_> = [r1.clone(), r2.clone()].into_iter().collect();
        assert_eq!(set.len(), 1);
        assert_eq!(b.lookup_all::<Text>("d", FIND).unwrap(), vec![r1.clone()]);
        // On its own node, the name gives the local actor.
        let here = a.lookup::<Text>("d", FIND).unwrap();
        assert_eq!(here, doubler.recipient::<Text>());
    });
}

#[test]
fn a_lookup_of_another_protocol_or_a_bad_name_finds_nothing() {
    watchdog(60, || {
        let (sa, a, _sb, b) = pair();
        a.register::<Text>("d", &sa.spawn(Doubler)).unwrap();
        // Wait until the name is seen, then ask for the wrong protocol.
        b.lookup::<Text>("d", FIND).unwrap();
        let short = Duration::from_millis(300);
        assert_eq!(
            b.lookup::<Num>("d", short).unwrap_err(),
            RemoteError::NotFound("d".into())
        );
        assert!(matches!(
            b.lookup::<Num>("a/b", short),
            Err(RemoteError::BadName(_))
        ));
        assert!(matches!(
            a.register::<Text>("*", &sa.spawn(Doubler)),
            Err(RemoteError::BadName(_))
        ));
    });
}

#[test]
fn a_monitor_hears_a_remote_actor_end_and_why() {
    watchdog(60, || {
        let (sa, a, _sb, b) = pair();
        let d1 = sa.spawn(Doubler);
        let d2 = sa.spawn(Doubler);
        a.register::<Text>("one", &d1).unwrap();
        a.register::<Text>("two", &d2).unwrap();
        let r1 = b.lookup::<Text>("one", FIND).unwrap();
        let r2 = b.lookup::<Text>("two", FIND).unwrap();
        let m1 = r1.monitor();
        let m2 = r2.monitor();
        r1.send(Text("end".into())).unwrap();
        r2.send(Text("panic".into())).unwrap();
        assert_eq!(m1.wait_timeout(FIND).unwrap(), ExitReason::Normal);
        assert_eq!(
            m2.wait_timeout(FIND).unwrap(),
            ExitReason::Panicked("asked to".into())
        );
        // Known ended: a send returns the message.
        assert!(r1.send(Text("late".into())).is_err());
        assert!(!r1.is_alive());
        // Its names went with it.
        assert!(b.lookup::<Text>("one", Duration::from_millis(300)).is_err());
    });
}

#[test]
fn closing_a_node_fails_its_pending_asks_and_monitors_with_node_down() {
    watchdog(60, || {
        let (sa, a, _sb, b) = pair();
        a.register::<Ask<Num, Num>>("silent", &sa.spawn(Silent(Vec::new())))
            .unwrap();
        let r = b.lookup::<Ask<Num, Num>>("silent", FIND).unwrap();
        let monitor = r.monitor();
        let pending = r.ask(Num(1)).unwrap();
        // (Whether the ask reached it or not, closing its node fails it.)
        a.close();
        assert_eq!(pending.wait_timeout(FIND), Err(AskError::NodeDown));
        assert_eq!(monitor.wait_timeout(FIND).unwrap(), ExitReason::NodeDown);
        // Later sends give the message back; a new ask fails at once.
        assert!(r.ask(Num(2)).is_err());
    });
}

#[test]
fn an_actor_asks_a_remote_actor_with_a_continuation() {
    watchdog(60, || {
        struct Asker(
            Recipient<Ask<Num, Num>>,
            mpsc::Sender<Result<Num, AskError>>,
        );
        impl Actor for Asker {}
        impl Receive<u64> for Asker {
            fn receive(&mut self, n: u64, ctx: &mut Context<'_, Self>) -> Allocation {
                let _ = ctx.ask(&self.0, Num(n), |me: &mut Self, r, _| {
                    let _ = me.1.send(r);
                    Allocation::Nodelete
                });
                Allocation::Nodelete
            }
        }
        let (sa, a, sb, b) = pair();
        a.register::<Ask<Num, Num>>("doubler", &sa.spawn(Doubler))
            .unwrap();
        let remote = b.lookup::<Ask<Num, Num>>("doubler", FIND).unwrap();
        let (tx, rx) = mpsc::channel();
        let asker = sb.spawn(Asker(remote, tx));
        for n in 0..20 {
            asker.send(n).unwrap();
        }
        let mut got: Vec<u64> = (0..20)
            .map(|_| rx.recv_timeout(FIND).unwrap().unwrap().0)
            .collect();
        got.sort();
        assert_eq!(got, (0..20).map(|n| 2 * n).collect::<Vec<_>>());
    });
}

/// Keeps every question unanswered (its ports held).
struct Silent(Vec<actorium::ReplyTo<Num>>);
impl Actor for Silent {}
impl Receive<Ask<Num, Num>> for Silent {
    fn receive(&mut self, a: Ask<Num, Num>, _: &mut Context<'_, Self>) -> Allocation {
        self.0.push(a.reply);
        Allocation::Nodelete
    }
}
impl Receive<Text> for Silent {
    fn receive(&mut self, _: Text, _: &mut Context<'_, Self>) -> Allocation {
        Allocation::Delete
    }
}

#[test]
fn an_actor_s_timed_ask_and_monitor_of_a_remote_actor_hear_the_timeout_and_the_end() {
    watchdog(60, || {
        /// On `u64`: asks with a 50 ms limit, and monitors the remote actor.
        struct Asker(
            Recipient<Ask<Num, Num>>,
            mpsc::Sender<Result<Result<Num, AskError>, ExitReason>>,
        );
        impl Actor for Asker {}
        impl Receive<u64> for Asker {
            fn receive(&mut self, n: u64, ctx: &mut Context<'_, Self>) -> Allocation {
                let limit = Duration::from_millis(50);
                ctx.ask_timeout(&self.0, Num(n), limit, |me: &mut Self, r, _| {
                    let _ = me.1.send(Ok(r));
                    Allocation::Nodelete
                })
                .unwrap();
                ctx.monitor(&self.0, |me: &mut Self, why, _| {
                    let _ = me.1.send(Err(why));
                    Allocation::Nodelete
                });
                Allocation::Nodelete
            }
        }
        let (sa, a, sb, b) = pair();
        let silent = sa.spawn(Silent(Vec::new()));
        a.register::<Ask<Num, Num>>("silent", &silent).unwrap();
        a.register::<Text>("silent", &silent).unwrap();
        let asks = b.lookup::<Ask<Num, Num>>("silent", FIND).unwrap();
        let end = b.lookup::<Text>("silent", FIND).unwrap();
        let (tx, rx) = mpsc::channel();
        sb.spawn(Asker(asks, tx)).send(1).unwrap();
        assert_eq!(rx.recv_timeout(FIND).unwrap(), Ok(Err(AskError::Timeout)));
        end.send(Text("end".into())).unwrap();
        assert_eq!(rx.recv_timeout(FIND).unwrap(), Err(ExitReason::Normal));
    });
}

#[test]
fn a_link_across_nodes_takes_the_local_actor_down_with_a_failing_remote_one() {
    watchdog(60, || {
        struct Linker(mpsc::Sender<()>);
        impl Actor for Linker {}
        impl Receive<Recipient<Text>> for Linker {
            fn receive(&mut self, r: Recipient<Text>, ctx: &mut Context<'_, Self>) -> Allocation {
                ctx.link(&r);
                let _ = self.0.send(());
                Allocation::Nodelete
            }
        }
        let (sa, a, sb, b) = pair();
        a.register::<Text>("d", &sa.spawn(Doubler)).unwrap();
        let remote = b.lookup::<Text>("d", FIND).unwrap();
        let (tx, linked) = mpsc::channel();
        let linker = sb.spawn(Linker(tx));
        let down = linker.monitor();
        linker.send(remote.clone()).unwrap();
        linked.recv_timeout(FIND).unwrap();
        remote.send(Text("panic".into())).unwrap();
        assert_eq!(down.wait_timeout(FIND).unwrap(), ExitReason::Linked);
    });
}

#[test]
fn a_remote_actor_linked_to_a_local_one_hears_its_failure() {
    watchdog(60, || {
        /// Links itself with the recipient it is sent; reports its own end.
        struct Linker;
        impl Actor for Linker {}
        impl Receive<Recipient<Text>> for Linker {
            fn receive(&mut self, r: Recipient<Text>, ctx: &mut Context<'_, Self>) -> Allocation {
                ctx.link(&r);
                Allocation::Nodelete
            }
        }
        impl Receive<Text> for Linker {
            fn receive(&mut self, _: Text, _: &mut Context<'_, Self>) -> Allocation {
                panic!("failing on purpose")
            }
        }
        let (sa, a, sb, b) = pair();
        // The far actor (on a) ends when the linker (on b) fails.
        let far = sa.spawn(Doubler);
        a.register::<Text>("far", &far).unwrap();
        let far_down = far.monitor();
        let remote = b.lookup::<Text>("far", FIND).unwrap();
        let linker = sb.spawn(Linker);
        linker.send(remote).unwrap();
        // The linker's end comes after its link (its `Link` and `Exit` frames are in order).
        linker.send(Text("x".into())).unwrap();
        assert_eq!(far_down.wait_timeout(FIND).unwrap(), ExitReason::Linked);
    });
}

#[test]
fn closing_a_node_tells_its_actors_that_remote_ones_linked_with() {
    watchdog(60, || {
        /// Links itself with the far actor, then pings it (after the link, in order).
        struct Linker;
        impl Actor for Linker {}
        type Far = (Recipient<Text>, Recipient<Ping>, Recipient<Num>);
        impl Receive<Far> for Linker {
            fn receive(&mut self, (t, p, r): Far, ctx: &mut Context<'_, Self>) -> Allocation {
                ctx.link(&t);
                let _ = p.send(Ping { n: 1, reply_to: r });
                Allocation::Nodelete
            }
        }
        let (sa, a, sb, b) = pair();
        let far = sa.spawn(Doubler);
        a.register::<Text>("far", &far).unwrap();
        a.register::<Ping>("far-ping", &far).unwrap();
        let far_down = far.monitor();
        let t = b.lookup::<Text>("far", FIND).unwrap();
        let p = b.lookup::<Ping>("far-ping", FIND).unwrap();
        let (tx, answers) = mpsc::channel();
        let sink = sb.spawn(Sink(tx));
        sb.spawn(Linker).send((t, p, sink.recipient())).unwrap();
        // The ping was answered: the link reached the far node before it.
        assert_eq!(answers.recv_timeout(FIND).unwrap(), 2);
        // Its node closes: the far actor's link to the linker is lost, and it hears so (by
        // default a failure: it ends too).
        a.close();
        assert_eq!(far_down.wait_timeout(FIND).unwrap(), ExitReason::Linked);
    });
}

#[test]
fn a_name_watch_sees_actors_come_and_go() {
    watchdog(60, || {
        let (sa, a, _sb, b) = pair();
        let (tx, rx) = mpsc::channel();
        let _watch = b
            .watch_name::<Text, _>("pool", move |l| {
                let _ = tx.send(matches!(l, Listing::Up(_)));
            })
            .unwrap();
        let d = sa.spawn(Doubler);
        a.register::<Text>("pool", &d).unwrap();
        assert!(rx.recv_timeout(FIND).unwrap(), "up");
        d.send(DeleteMsg).unwrap();
        assert!(!rx.recv_timeout(FIND).unwrap(), "down");
    });
}

#[test]
fn a_late_reply_arrives_and_a_dropped_reply_port_is_reported_as_dropped() {
    watchdog(60, || {
        /// Keeps the first question; answers it when the second comes; drops the port of any
        /// question of 0.
        struct Late(Option<actorium::ReplyTo<Num>>);
        impl Actor for Late {}
        impl Receive<Ask<Num, Num>> for Late {
            fn receive(&mut self, a: Ask<Num, Num>, _: &mut Context<'_, Self>) -> Allocation {
                if a.msg.0 == 0 {
                    return Allocation::Nodelete; // the port is dropped
                }
                match self.0.take() {
                    None => self.0 = Some(a.reply),
                    Some(first) => {
                        let _ = first.send(Num(1));
                        let _ = a.reply.send(Num(2));
                    }
                }
                Allocation::Nodelete
            }
        }
        let (sa, a, _sb, b) = pair();
        a.register::<Ask<Num, Num>>("late", &sa.spawn(Late(None)))
            .unwrap();
        let r = b.lookup::<Ask<Num, Num>>("late", FIND).unwrap();
        let mut first = r.ask(Num(1)).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(first.try_get().is_none(), "kept, not answered yet");
        let second = r.ask(Num(1)).unwrap();
        assert_eq!(first.wait().unwrap(), Num(1));
        assert_eq!(second.wait().unwrap(), Num(2));
        assert_eq!(r.ask(Num(0)).unwrap().wait(), Err(AskError::Dropped));
    });
}

#[test]
fn an_ask_to_an_ended_remote_actor_hears_dead() {
    watchdog(60, || {
        let (sa, a, _sb, b) = pair();
        let d = sa.spawn(Doubler);
        a.register::<Ask<Num, Num>>("d", &d).unwrap();
        a.register::<Text>("d", &d).unwrap();
        let asks = b.lookup::<Ask<Num, Num>>("d", FIND).unwrap();
        let tells = b.lookup::<Text>("d", FIND).unwrap();
        // Not monitored from b: b learns of the end only from the ask's answer. (On a, the
        // export's own watcher was set before this monitor, and runs first.)
        let ended = d.monitor();
        tells.send(Text("end".into())).unwrap();
        ended.wait().unwrap();
        assert_eq!(asks.ask(Num(1)).unwrap().wait(), Err(AskError::Dead));
    });
}

#[test]
fn unregister_removes_the_name_and_the_actor_lives_on() {
    watchdog(60, || {
        let (sa, a, _sb, b) = pair();
        let d = sa.spawn(Doubler);
        a.register::<Ask<Num, Num>>("d", &d).unwrap();
        let r = b.lookup::<Ask<Num, Num>>("d", FIND).unwrap();
        a.unregister("d");
        common::wait_for(20, "the name to vanish", || {
            b.lookup_all::<Ask<Num, Num>>("d", Duration::from_millis(200))
                .unwrap()
                .is_empty()
        });
        assert_eq!(
            r.ask(Num(4)).unwrap().wait().unwrap(),
            Num(8),
            "still served"
        );
    });
}

#[test]
fn two_clients_reach_each_other_through_a_router() {
    watchdog(60, || {
        let port = free_port();
        let router_system = ActorSystem::new().unwrap();
        let _router = router_system
            .remote(RemoteConfig::router().listen(format!("tcp/127.0.0.1:{port}")))
            .unwrap();
        let client = || {
            let s = ActorSystem::new().unwrap();
            let n = s
                .remote(RemoteConfig::client().connect(format!("tcp/127.0.0.1:{port}")))
                .unwrap();
            (s, n)
        };
        let (s1, c1) = client();
        let (_s2, c2) = client();
        c1.register::<Ask<Num, Num>>("d", &s1.spawn(Doubler))
            .unwrap();
        let r = c2.lookup::<Ask<Num, Num>>("d", FIND).unwrap();
        assert_eq!(r.ask(Num(5)).unwrap().wait().unwrap(), Num(10));
        let down = r.monitor();
        c1.close();
        assert_eq!(down.wait_timeout(FIND).unwrap(), ExitReason::NodeDown);
    });
}

#[test]
fn a_flood_of_tells_into_a_slow_actor_loses_nothing() {
    // (10^7 tells: about 40 s in a debug build on two cores.)
    watchdog(300, || {
        /// Counts, slowly at first (so the flood queues on the way), and reports the count and
        /// whether every number came in order.
        struct Slow {
            next: u64,
            in_order: bool,
        }
        impl Actor for Slow {}
        impl Receive<Num> for Slow {
            fn receive(&mut self, Num(n): Num, _: &mut Context<'_, Self>) -> Allocation {
                if n < 1000 {
                    std::thread::sleep(Duration::from_micros(200));
                }
                self.in_order &= n == self.next;
                self.next += 1;
                Allocation::Nodelete
            }
        }
        impl Receive<Ask<Text, Num>> for Slow {
            fn receive(&mut self, a: Ask<Text, Num>, _: &mut Context<'_, Self>) -> Allocation {
                let _ = a
                    .reply
                    .send(Num(if self.in_order { self.next } else { u64::MAX }));
                Allocation::Nodelete
            }
        }
        let n: u64 = std::env::var("ACTORIUM_REMOTE_FLOOD")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(10_000_000);
        let (sa, a, _sb, b) = pair();
        let slow = sa.spawn(Slow {
            next: 0,
            in_order: true,
        });
        a.register::<Num>("slow", &slow).unwrap();
        a.register::<Ask<Text, Num>>("slow", &slow).unwrap();
        let tells = b.lookup::<Num>("slow", FIND).unwrap();
        let count = b.lookup::<Ask<Text, Num>>("slow", FIND).unwrap();
        for i in 0..n {
            tells.send(Num(i)).unwrap();
        }
        // The ask comes after every tell (one pair, one order).
        assert_eq!(
            count.ask(Text(String::new())).unwrap().wait().unwrap(),
            Num(n)
        );
    });
}

/// `Num` as another program might define it: the same tag, another shape.
#[derive(Serialize, Deserialize)]
struct NotNum(String);
impl RemoteMessage for NotNum {
    const TAG: &'static str = "test.Num";
}

#[test]
fn an_ask_the_far_node_cannot_decode_is_answered_dropped() {
    watchdog(60, || {
        let (sa, a, _sb, b) = pair();
        a.register::<Ask<Num, Num>>("d", &sa.spawn(Doubler))
            .unwrap();
        let wrong = b.lookup::<Ask<NotNum, Num>>("d", FIND).unwrap();
        assert_eq!(
            wrong.ask(NotNum("not a number".into())).unwrap().wait(),
            Err(AskError::Dropped)
        );
        // The node goes on.
        let right = b.lookup::<Ask<Num, Num>>("d", FIND).unwrap();
        assert_eq!(right.ask(Num(3)).unwrap().wait().unwrap(), Num(6));
    });
}

/// Answers `Ask<Num, Text>` with a text of that many bytes.
struct Wordy;
impl Actor for Wordy {}
impl Receive<Ask<Num, Text>> for Wordy {
    fn receive(&mut self, a: Ask<Num, Text>, _: &mut Context<'_, Self>) -> Allocation {
        let _ = a.reply.send(Text("x".repeat(a.msg.0 as usize)));
        Allocation::Nodelete
    }
}

#[test]
fn a_lookup_without_a_time_limit_finds_what_is_there() {
    watchdog(60, || {
        let (sa, a, _sb, b) = pair();
        a.register::<Ask<Num, Num>>("d", &sa.spawn(Doubler))
            .unwrap();
        let d = b.lookup::<Ask<Num, Num>>("d", Duration::MAX).unwrap();
        assert_eq!(d.ask(Num(4)).unwrap().wait().unwrap(), Num(8));
    });
}

#[test]
fn a_reply_larger_than_the_asking_node_takes_fails_the_ask_with_dropped() {
    watchdog(60, || {
        let port = free_port();
        let sa = ActorSystem::new().unwrap();
        let a = sa
            .remote(
                RemoteConfig::peer()
                    .listen(format!("tcp/127.0.0.1:{port}"))
                    .max_frame(4096),
            )
            .unwrap();
        let sb = ActorSystem::new().unwrap();
        let b = sb
            .remote(RemoteConfig::peer().connect(format!("tcp/127.0.0.1:{port}")))
            .unwrap();
        b.register::<Ask<Num, Text>>("wordy", &sb.spawn(Wordy))
            .unwrap();
        let wordy = a.lookup::<Ask<Num, Text>>("wordy", FIND).unwrap();
        // The reply is dropped at `a` (past its largest frame): the ask hears it, no hang.
        assert_eq!(
            wordy.ask(Num(100_000)).unwrap().wait().map(|t| t.0.len()),
            Err(AskError::Dropped)
        );
        // The node goes on.
        assert_eq!(wordy.ask(Num(10)).unwrap().wait().unwrap().0.len(), 10);
    });
}

#[test]
fn an_ask_to_a_node_this_one_cannot_reach_fails_with_node_down() {
    watchdog(60, || {
        // a and c each reach only b (gossip off): a hears of c's actor through b. (The
        // lease bounds how long a looks for c; the default 10 s, so that a loaded machine's
        // stall of the keep-alives does not take the link a-b down.)
        let port = free_port();
        let cfg = |c: RemoteConfig| c.zenoh("scouting/gossip/enabled", "false");
        let sb = ActorSystem::new().unwrap();
        let b = sb
            .remote(cfg(
                RemoteConfig::peer().listen(format!("tcp/127.0.0.1:{port}"))
            ))
            .unwrap();
        let node = |s: &ActorSystem| {
            s.remote(cfg(
                RemoteConfig::peer().connect(format!("tcp/127.0.0.1:{port}"))
            ))
            .unwrap()
        };
        let (sa, sc) = (ActorSystem::new().unwrap(), ActorSystem::new().unwrap());
        let (a, c) = (node(&sa), node(&sc));
        c.register::<Ask<Num, Num>>("far", &sc.spawn(Doubler))
            .unwrap();
        /// Hands the recipient it is given to whoever asks.
        struct Broker(Option<Recipient<Ask<Num, Num>>>);
        impl Actor for Broker {}
        #[derive(Serialize, Deserialize)]
        struct Give(Recipient<Ask<Num, Num>>);
        impl RemoteMessage for Give {
            const TAG: &'static str = "test.Give";
        }
        impl Receive<Give> for Broker {
            fn receive(&mut self, Give(r): Give, _: &mut Context<'_, Self>) -> Allocation {
                self.0 = Some(r);
                Allocation::Nodelete
            }
        }
        #[derive(Serialize, Deserialize)]
        struct Get;
        impl RemoteMessage for Get {
            const TAG: &'static str = "test.Get";
        }
        impl Receive<Ask<Get, Give>> for Broker {
            fn receive(&mut self, a: Ask<Get, Give>, _: &mut Context<'_, Self>) -> Allocation {
                if let Some(r) = self.0.clone() {
                    let _ = a.reply.send(Give(r));
                }
                Allocation::Nodelete
            }
        }
        let broker = sb.spawn(Broker(None));
        b.register::<Ask<Get, Give>>("broker", &broker).unwrap();
        broker
            .send(Give(b.lookup::<Ask<Num, Num>>("far", FIND).unwrap()))
            .unwrap();
        let get = a.lookup::<Ask<Get, Give>>("broker", FIND).unwrap();
        let Give(far) = get.ask(Get).unwrap().wait().unwrap();
        // b reaches it; a does not: a's ask fails within the lease instead of hanging.
        assert_eq!(far.ask(Num(1)).unwrap().wait(), Err(AskError::NodeDown));
    });
}

#[test]
fn a_timer_sends_to_a_remote_recipient() {
    watchdog(60, || {
        let (sa, a, sb, b) = pair();
        let (tx, rx) = mpsc::channel();
        a.register::<Num>("sink", &sa.spawn(Sink(tx))).unwrap();
        let remote = b.lookup::<Num>("sink", FIND).unwrap();
        sb.send_after(remote, Num(77), Duration::from_millis(5))
            .unwrap();
        assert_eq!(rx.recv_timeout(FIND).unwrap(), 77);
    });
}

/// A name watch's callback runs on one of Zenoh's threads, which must never block: a blocking
/// wait for a reply there (which that very thread may have to carry) and a lookup are refused
/// with `WouldBlock`, a `send_wait` into a full mailbox panics (caught), and the same ask
/// waited for from another thread is answered.
#[test]
fn a_name_watch_s_callback_may_not_block_on_a_reply_or_a_lookup() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    /// Sets `.0` and holds its first message's behaviour until `.1` is set: its mailbox (of
    /// 1) then fills.
    struct Stuck(Arc<AtomicBool>, Arc<AtomicBool>);
    impl Actor for Stuck {}
    impl Receive<Num> for Stuck {
        fn receive(&mut self, _: Num, _: &mut Context<'_, Self>) -> Allocation {
            self.0.store(true, Ordering::SeqCst);
            while !self.1.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
            Allocation::Nodelete
        }
    }
    watchdog(60, || {
        let (sa, a, sb, b) = pair();
        let (inside, open) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let stuck = sb.spawn_bounded(Stuck(inside.clone(), open.clone()), 1);
        stuck.send(Num(0)).unwrap();
        while !inside.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        stuck.try_send(Num(0)).unwrap();
        assert!(stuck.try_send(Num(0)).is_err(), "full");
        let (tx, rx) = mpsc::channel();
        let node = b.clone();
        let _watch = b
            .watch_name::<Ask<Num, Num>, _>("doubler", move |l| {
                if let Listing::Up(r) = l {
                    let waited = r.ask(Num(1)).unwrap().wait();
                    let called = r.call(Num(2));
                    let looked = node.lookup::<Ask<Num, Num>>("doubler", FIND).map(|_| ());
                    let full = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        stuck.send_wait(Num(0))
                    }));
                    let _ = tx.send((waited, called, looked, full.is_err(), r));
                }
            })
            .unwrap();
        a.register::<Ask<Num, Num>>("doubler", &sa.spawn(Doubler))
            .unwrap();
        let (waited, called, looked, refused, r) = rx.recv_timeout(FIND).unwrap();
        open.store(true, Ordering::SeqCst);
        assert_eq!(waited, Err(AskError::WouldBlock));
        assert_eq!(called, Err(AskError::WouldBlock));
        assert!(
            matches!(looked, Err(RemoteError::WouldBlock)),
            "lookup: {looked:?}"
        );
        assert!(
            refused,
            "send_wait into a full mailbox blocked a Zenoh thread"
        );
        // From this thread, the same recipient answers.
        assert_eq!(r.ask(Num(3)).unwrap().wait_timeout(FIND), Ok(Num(6)));
    });
}
