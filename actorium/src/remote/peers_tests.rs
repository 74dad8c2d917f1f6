//! A loss one side alone sees, between two real nodes on 127.0.0.1 (`peers.rs`'s way back):
//! heard on both sides, no gap the sender does not hear of, and both come back.

use super::super::node::tests::{Num, Sink};
use crate::actor::Ask;
use crate::remote::RemoteConfig;
use crate::{Actor, ActorSystem, Allocation, AskError, Context, ExitReason, Receive};
use std::sync::mpsc;

/// Two systems, each with a node on 127.0.0.1, the second connected to the first.
fn two_nodes() -> (
    ActorSystem,
    crate::remote::Node,
    ActorSystem,
    crate::remote::Node,
) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
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

/// Keeps the reply ports of the asks it takes, unanswered.
struct Keeper(Vec<crate::ReplyTo<Num>>);
impl Actor for Keeper {}
impl Receive<Ask<Num, Num>> for Keeper {
    fn receive(&mut self, a: Ask<Num, Num>, _: &mut Context<'_, Self>) -> Allocation {
        self.0.push(a.reply);
        Allocation::Nodelete
    }
}

/// A loss that one side alone sees (made here by hand while the link is fine: `a` holds `b`
/// as lost, as when `a` gave up waiting for `b`'s token or forgot it among many) is heard on
/// both: `a` tells `b`, so that what waits on `a` at `b` hears `NodeDown` too (an ask whose
/// reply `a` would no longer send does not hang, a monitor does not go quiet), and frames
/// lost meanwhile are never a silent gap. Then both come back: new lookups and recipients
/// reach the other side, the old ones stay ended.
#[test]
fn a_loss_one_side_alone_sees_is_heard_on_both_and_both_come_back() {
    let long = std::time::Duration::from_secs(30);
    let (sa, a, sb, b) = two_nodes();
    let (tx, got) = mpsc::channel();
    b.register::<Num>("sink", &sb.spawn(Sink(tx))).unwrap();
    let (atx, _agot) = mpsc::channel();
    let asink = sa.spawn(Sink(atx));
    a.register::<Ask<Num, Num>>("echo", &asink).unwrap();
    a.register::<Ask<Num, Num>>("keeper", &sa.spawn(Keeper(Vec::new())))
        .unwrap();
    let found = a.lookup::<Num>("sink", long).unwrap();
    let kept = b.lookup::<Ask<Num, Num>>("keeper", long).unwrap();
    let echo = b.lookup::<Ask<Num, Num>>("echo", long).unwrap();
    assert_eq!(
        echo.ask(Num(1)).unwrap().wait_timeout(long).unwrap(),
        Num(2)
    );
    let pending = kept.ask(Num(1)).unwrap();
    let down = echo.monitor();
    found.send(Num(7)).unwrap();
    assert_eq!(got.recv_timeout(long).unwrap(), 7);
    // The ask has reached the keeper (its monitor, sent after it, has reached `a`).
    let a_id = a.inner.id.clone();
    let b_id = b.inner.id.clone();
    let t = std::time::Instant::now();
    let watched = || {
        let t = a.inner.tables();
        t.exports.values().any(|e| e.watched_by.contains(&*b_id))
    };
    while !watched() {
        assert!(t.elapsed() < long, "the monitor reaches a");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    a.inner.node_down(&b_id);
    assert!(!found.is_alive());
    assert!(found.send(Num(8)).is_err(), "sends from a fail at once");
    // `b` hears it: its ask and its monitor end with `NodeDown`, its old recipients too.
    assert_eq!(pending.wait_timeout(long), Err(AskError::NodeDown));
    assert_eq!(down.wait_timeout(long).unwrap(), ExitReason::NodeDown);
    assert!(!echo.is_alive() && !kept.is_alive());
    // Both come back: new lookups reach the other side both ways.
    let echo = b.lookup::<Ask<Num, Num>>("echo", long).unwrap();
    assert!(echo.is_alive());
    assert_eq!(
        echo.ask(Num(5)).unwrap().wait_timeout(long).unwrap(),
        Num(6)
    );
    let again = a.lookup::<Num>("sink", long).unwrap();
    assert!(again.is_alive() && !found.is_alive());
    again.send(Num(9)).unwrap();
    assert_eq!(
        got.recv_timeout(long).unwrap(),
        9,
        "8 was refused, not lost"
    );
    assert!(!a.inner.tables().is_down(&b_id) && !b.inner.tables().is_down(&a_id));
}

/// Numbered tells from `b` to `a` while `a` alone holds `b` as lost: what `a` drops is a gap
/// that `b` hears of (`NodeDown`) before it sends the next number `a` takes; nothing arrives
/// twice or out of order.
#[test]
fn tells_through_a_loss_one_side_alone_sees_leave_no_unseen_gap() {
    let long = std::time::Duration::from_secs(30);
    let (sa, a, _sb, b) = two_nodes();
    let (tx, got) = mpsc::channel();
    a.register::<Num>("rx", &sa.spawn(Sink(tx))).unwrap();
    let b_id = b.inner.id.clone();
    let n = 20_000;
    let mut rx = b.lookup::<Num>("rx", long).unwrap();
    let mut down = rx.monitor();
    let mut resumed = Vec::new();
    // (On past `n` until `b` has heard of the loss: a machine too slow to hear it within the
    // sends may lose all the rest, as the promise allows.)
    let mut i = 0;
    let t0 = std::time::Instant::now();
    while i < n || resumed.is_empty() {
        assert!(t0.elapsed() < 2 * long, "b hears of the loss");
        if i == n / 4 {
            a.inner.node_down(&b_id);
        }
        let mut msg = Num(i);
        while let Err(e) = rx.send(msg) {
            msg = e.into_inner();
            assert_eq!(down.wait_timeout(long).unwrap(), ExitReason::NodeDown);
            rx = b.lookup::<Num>("rx", long).unwrap();
            assert!(rx.is_alive());
            down = rx.monitor();
            resumed.push(i);
        }
        i += 1;
    }
    let last = i - 1;
    let mut seen = Vec::new();
    while seen.last() != Some(&last) {
        seen.push(got.recv_timeout(long).expect("the last tell arrives"));
    }
    assert_eq!(resumed.len(), 1, "one loss, heard once: {resumed:?}");
    for w in seen.windows(2) {
        assert!(w[1] > w[0], "strictly increasing: {} after {}", w[1], w[0]);
        if w[1] != w[0] + 1 {
            assert!(
                resumed.contains(&w[1]),
                "a gap before {} (after {}) with no NodeDown: {resumed:?}",
                w[1],
                w[0]
            );
        }
    }
}
