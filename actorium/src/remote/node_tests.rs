//! Bad input on a node's inbox: random, mutated, truncated, oversized and mistyped frames are
//! dropped and reported, never a panic, and the node goes on serving. And what a node
//! remembers of lost nodes, and of what they left, stays bounded. (The way back after a loss,
//! between two real nodes, is tested in `peers_tests.rs`.)

use super::*;
use crate::actor::Ask;
use crate::remote::peers::{Loss, UpBy};
use crate::remote::wire::FrameStart;
use crate::remote::wire::RemoteMessage;
use crate::remote::RemoteConfig;
use crate::{Actor, ActorSystem, Allocation, Context, Receive};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::atomic::AtomicUsize;
use std::sync::mpsc;

#[derive(Serialize, Deserialize, Debug, PartialEq)]
pub(in crate::remote) struct Num(pub(in crate::remote) u64);
impl RemoteMessage for Num {
    const TAG: &'static str = "unit.Num";
}

/// Its decoding panics.
#[derive(Serialize, Debug)]
struct Boom;
impl<'de> Deserialize<'de> for Boom {
    fn deserialize<D: serde::Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
        panic!("a Deserialize that panics")
    }
}
impl RemoteMessage for Boom {
    const TAG: &'static str = "unit.Boom";
}

pub(in crate::remote) struct Sink(pub(in crate::remote) mpsc::Sender<u64>);
impl Actor for Sink {}
impl Receive<Num> for Sink {
    fn receive(&mut self, Num(n): Num, _: &mut Context<'_, Self>) -> Allocation {
        let _ = self.0.send(n);
        Allocation::Nodelete
    }
}
impl Receive<Boom> for Sink {
    fn receive(&mut self, _: Boom, _: &mut Context<'_, Self>) -> Allocation {
        Allocation::Nodelete
    }
}
impl Receive<Ask<Num, Num>> for Sink {
    fn receive(&mut self, a: Ask<Num, Num>, _: &mut Context<'_, Self>) -> Allocation {
        let _ = a.reply.send(Num(a.msg.0 + 1));
        Allocation::Nodelete
    }
}

/// A node serving a sink (exported as `Num`, `Boom` and `Ask<Num, Num>`), with a count of
/// the frames it reported dropped.
struct Fixture {
    _system: ActorSystem,
    node: Arc<NodeInner>,
    _closer: crate::remote::Node,
    sink: u64,
    got: mpsc::Receiver<u64>,
    dropped: Arc<AtomicUsize>,
}

fn fixture(max_frame: usize) -> Fixture {
    let dropped = Arc::new(AtomicUsize::new(0));
    let d = dropped.clone();
    let system = ActorSystem::builder()
        .workers(1)
        .on_event(move |e| {
            if let Event::RemoteFrameDropped { .. } = e {
                d.fetch_add(1, Ordering::Relaxed);
            }
        })
        .build()
        .unwrap();
    let node = system
        .remote(RemoteConfig::peer().max_frame(max_frame))
        .unwrap();
    let (tx, got) = mpsc::channel();
    let sink = system.spawn(Sink(tx));
    let inner = node.inner.clone();
    let id = inner.export::<Num>(&sink.recipient());
    inner.export::<Boom>(&sink.recipient());
    inner.export::<Ask<Num, Num>>(&sink.recipient());
    Fixture {
        _system: system,
        node: inner,
        _closer: node,
        sink: id,
        got,
        dropped,
    }
}

/// A frame without its sender's id (what `on_bytes` takes).
fn body(frame: Vec<u8>) -> Vec<u8> {
    frame[crate::remote::wire::packed_len(frame[0]).unwrap()..].to_vec()
}

impl Fixture {
    /// A frame for `handle`: no sender id (the tests give it as "00").
    fn encode<B: Serialize>(&self, head: &Head<'_>, b: &B) -> Vec<u8> {
        body(self.node.encode(head, b).unwrap())
    }

    fn tell(&self, n: u64) -> Vec<u8> {
        let head = Head::Tell {
            to: self.sink,
            tag: Num::TAG.as_bytes(),
        };
        self.encode(&head, &Num(n))
    }

    fn dropped(&self) -> usize {
        self.dropped.load(Ordering::Relaxed)
    }

    /// A good frame still arrives (the node goes on).
    fn still_serves(&self) {
        let n = 0xfeed;
        self.node.on_bytes("00", &self.tell(n));
        loop {
            let got = self
                .got
                .recv_timeout(std::time::Duration::from_secs(10))
                .unwrap();
            if got == n {
                return;
            }
        }
    }
}

#[test]
fn a_good_frame_is_delivered_and_reports_nothing() {
    let f = fixture(1 << 20);
    f.node.on_bytes("00", &f.tell(7));
    assert_eq!(f.got.recv().unwrap(), 7);
    assert_eq!(f.dropped(), 0);
}

#[test]
fn malformed_truncated_trailing_oversized_and_mistyped_frames_are_reported() {
    let f = fixture(256);
    let good = f.tell(5);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("an unknown head", vec![0xff, 0xff, 0xff]),
        ("truncated", good[..good.len() - 1].to_vec()),
        ("trailing bytes", [good.clone(), vec![0]].concat()),
        ("oversized", [good.clone(), vec![0; 300]].concat()),
        (
            "a tag the actor does not serve",
            f.encode(
                &Head::Tell {
                    to: f.sink,
                    tag: b"unit.Other",
                },
                &Num(1),
            ),
        ),
        (
            "an ask for a told type",
            f.encode(
                &Head::Ask {
                    to: f.sink,
                    tag: Num::TAG.as_bytes(),
                    ask: 1,
                },
                &Num(1),
            ),
        ),
        (
            "a decoding that panics",
            f.encode(
                &Head::Tell {
                    to: f.sink,
                    tag: Boom::TAG.as_bytes(),
                },
                &Boom,
            ),
        ),
        (
            "a reply to an ask never sent",
            f.encode(
                &Head::Reply {
                    ask: 99,
                    outcome: Outcome::Replied,
                },
                &Num(1),
            ),
        ),
    ];
    for (i, (what, bytes)) in cases.iter().enumerate() {
        f.node.on_bytes("00", bytes);
        assert_eq!(f.dropped(), i + 1, "{what}: reported once");
    }
    f.still_serves();
}

/// A frame encoded from its start (once per recipient) and the rest is the frame encoded
/// whole, byte for byte, and what the receiver decodes.
#[test]
fn a_frame_from_its_start_is_the_whole_frame() {
    let f = fixture(1 << 20);
    let n = &f.node;
    for to in [0, 1, 127, 128, 300, u64::MAX] {
        let start = n.encode(&FrameStart::Tell { to, tag: "t.T" }, &()).unwrap();
        let whole = n.encode(&Head::Tell { to, tag: b"t.T" }, &Num(9)).unwrap();
        assert_eq!(n.encode_after(&start, &(), &Num(9)).unwrap(), whole);
        for ask in [1, 200, u64::MAX] {
            let start = n.encode(&FrameStart::Ask { to, tag: "q~r" }, &()).unwrap();
            let head = Head::Ask {
                to,
                tag: b"q~r",
                ask,
            };
            let whole = n.encode(&head, &Num(9)).unwrap();
            assert_eq!(n.encode_after(&start, &ask, &Num(9)).unwrap(), whole);
        }
    }
}

#[test]
fn a_recipient_encodes_only_inside_a_message_to_a_remote_actor() {
    let f = fixture(1 << 20);
    let (tx, _rx) = mpsc::channel();
    let r: crate::Recipient<Num> = f._system.spawn(Sink(tx)).recipient();
    let e = postcard::to_allocvec(&r).unwrap_err();
    assert!(!e.to_string().is_empty());
}

#[test]
fn lost_nodes_are_remembered_up_to_a_bound() {
    let f = fixture(1 << 20);
    let id = |i: usize| format!("{i:032x}");
    f.node.node_down(&id(0));
    // A lost node whose token is not there is not waited for.
    let t0 = std::time::Instant::now();
    assert!(!f
        .node
        .wait_up(&id(0), Some(t0 + std::time::Duration::from_secs(60))));
    assert!(t0.elapsed() < std::time::Duration::from_secs(30));
    // A recipient of a lost node's actor, made while it is lost: ended.
    let stale = f.node.recipient::<Num>(&id(0), 7);
    assert!(!stale.is_alive());
    for i in 1..LOST_KEPT + 10 {
        f.node.node_down(&id(i));
    }
    {
        let t = f.node.tables();
        assert_eq!((t.down.len(), t.down_order.len()), (LOST_KEPT, LOST_KEPT));
        assert!(!t.is_down(&id(9)), "the oldest are forgotten");
        assert!(t.is_down(&id(10)) && t.is_down(&id(LOST_KEPT + 9)));
    }
    assert_eq!(
        f.node.publishers_lock().len(),
        LOST_KEPT,
        "and their publisher entries"
    );
    // Forgotten, then back: its actors are reached again (the stale recipient stays ended).
    f.node.node_up(&id(0), UpBy::Token);
    assert!(f.node.recipient::<Num>(&id(0), 7).is_alive());
    assert!(!stale.is_alive());
    // Its token seen again does not bring a lost node back (it must answer this node's
    // `Lost` first); its answer does.
    let last = id(LOST_KEPT + 9);
    f.node.node_up(&last, UpBy::Token);
    let epoch = f.node.tables().down[last.as_str()].epoch;
    assert!(f.node.tables().down[last.as_str()].token);
    f.node.revive(&last, epoch + 1);
    assert!(f.node.tables().is_down(&last), "an answer to another loss");
    f.node.revive(&last, epoch);
    assert!(!f.node.tables().is_down(&last));
    // Back up, then lost again: remembered once.
    f.node.node_down(&last);
    let t = f.node.tables();
    assert!(t.is_down(&last));
    assert_eq!((t.down.len(), t.down_order.len()), (LOST_KEPT, LOST_KEPT));
    assert!(t.is_down(&id(10)), "nothing else forgotten");
}

/// A lost node's token that ends again while it is coming back (seen again, its answer not
/// yet in) is a new loss: the answer to the old one does not bring it back.
#[test]
fn a_token_s_end_while_a_node_comes_back_is_a_new_loss() {
    let f = fixture(1 << 20);
    let x = format!("{:032x}", 77);
    f.node.node_up(&x, UpBy::Token);
    f.node.node_down(&x);
    let first = f.node.tables().down[x.as_str()];
    assert!(first.token, "a loss that is not its token's end");
    f.node.lose(&x, Loss::Token);
    f.node.node_up(&x, UpBy::Token);
    f.node.lose(&x, Loss::Token);
    let second = f.node.tables().down[x.as_str()];
    assert!(second.epoch > first.epoch && !second.token);
    f.node.revive(&x, first.epoch);
    assert!(f.node.tables().is_down(&x), "a later loss is not undone");
    f.node.revive(&x, second.epoch);
    assert!(
        f.node.tables().is_down(&x),
        "its token ended: it may be gone"
    );
    f.node.node_up(&x, UpBy::Token);
    f.node.revive(&x, second.epoch);
    assert!(
        !f.node.tables().is_down(&x),
        "its token is back, and so is it"
    );
}

/// A node's `Lost` whose answer could not be queued (the outbox held too many such) leaves it
/// lost, its frames taken; its next `Lost` (a repeat) is answered then, and it comes back.
/// Its frames are dropped while it is lost and not yet heard from, taken once it said `Lost`.
#[test]
fn a_lost_whose_answer_was_refused_is_answered_at_its_repeat() {
    let f = fixture(1 << 20);
    let x = format!("{:032x}", 78);
    f.node.node_up(&x, UpBy::Token);
    f.node.node_down(&x);
    f.node.on_bytes(&x, &f.tell(1)); // (dropped: 2 is the first to arrive)
    let full = crate::remote::outbox::OUTBOX_MAX;
    f.node.handshakes_waiting.store(full, Ordering::Relaxed);
    let lost = f.encode(&Head::Lost { epoch: 1 }, &());
    f.node.on_bytes(&x, &lost);
    {
        let t = f.node.tables();
        let l = t.down[x.as_str()];
        assert!(l.answering && !l.back_owed, "taken, its answer not owed");
    }
    f.node.on_bytes(&x, &f.tell(2));
    let wait = std::time::Duration::from_secs(30);
    assert_eq!(f.got.recv_timeout(wait).unwrap(), 2, "1 dropped, 2 taken");
    f.node.handshakes_waiting.store(0, Ordering::Relaxed);
    f.node.on_bytes(&x, &lost);
    let t0 = std::time::Instant::now();
    while f.node.tables().is_down(&x) {
        assert!(t0.elapsed() < wait, "answered, and back");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert!(f.node.tables().up.contains(x.as_str()));
}

/// Frames whose sender ids nothing vouches for (made up, or from nodes whose tokens were
/// never seen) keep at most `HEARD_KEPT` nodes up, with their watches; a node whose token is
/// seen, before or after its frames, is never forgotten for them; a lost node's frames do not
/// bring it back (its token does).
#[test]
fn nodes_known_only_from_their_frames_are_kept_up_to_a_bound() {
    let f = fixture(1 << 20);
    let id = |i: usize| format!("{i:032x}");
    let monitor = f.encode(&Head::Monitor { to: f.sink }, &());
    let (before, after, again) = (id(1 << 40), id(1 << 41), id(1 << 42));
    // Seen by its token, then heard from.
    f.node.node_up(&before, UpBy::Token);
    f.node.on_bytes(&before, &monitor);
    // Heard from, then seen by its token.
    f.node.on_bytes(&after, &monitor);
    f.node.node_up(&after, UpBy::Token);
    // Heard from, lost, then a frame from it (one in flight when it was lost): it stays lost.
    f.node.on_bytes(&again, &monitor);
    f.node.node_down(&again);
    f.node.on_bytes(&again, &monitor);
    {
        let t = f.node.tables();
        assert!(t.is_down(&again) && !t.up.contains(again.as_str()));
        assert!(t.heard.is_empty() && t.heard_order.is_empty());
    }
    // A frame that gives this node's own id: refused (and reported), not heard of as a node.
    f.node.on_bytes(&f.node.id.clone(), &monitor);
    assert!(!f.node.tables().heard.contains(&*f.node.id));
    assert_eq!(f.dropped(), 1);
    for i in 0..HEARD_KEPT + 100 {
        f.node.on_bytes(&id(i), &monitor);
    }
    let t = f.node.tables();
    assert_eq!(
        t.up.len(),
        HEARD_KEPT + 2,
        "the last heard, and the two seen"
    );
    assert_eq!(
        (t.heard.len(), t.heard_order.len()),
        (HEARD_KEPT, HEARD_KEPT)
    );
    for seen in [&before, &after] {
        assert!(t.up.contains(seen.as_str()) && !t.is_down(seen));
    }
    assert!(t.is_down(&again), "still lost");
    // 100 forgotten, oldest first.
    assert!(
        t.is_down(&id(0)) && !t.up.contains(id(0).as_str()),
        "the oldest: lost"
    );
    assert!(t.is_down(&id(99)) && !t.is_down(&id(100)));
    assert!(t.up.contains(id(100).as_str()) && t.up.contains(id(HEARD_KEPT + 99).as_str()));
    // Those heard of, and the two seen.
    let watchers = &t.exports[&f.sink].watched_by;
    assert_eq!(
        watchers.len(),
        HEARD_KEPT + 2,
        "watches of lost nodes go with them"
    );
    assert_eq!(
        t.watching.len(),
        HEARD_KEPT + 2,
        "and their entries by node"
    );
    drop(t);
    assert_eq!(f.dropped(), 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Random bytes: no panic; every frame that is not handled is reported.
    #[test]
    fn random_frames_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let f = fixture(1 << 20);
        let before = f.dropped();
        let r = f.node.handle("00", &bytes);
        f.node.on_bytes("00", &bytes);
        prop_assert_eq!(f.dropped() - before, usize::from(r.is_err()));
    }

    /// Random whole frames (the sender's id too): no panic, at most one report each.
    #[test]
    fn random_whole_frames_never_panic(
        id in "[0-9a-f]{0,40}",
        bytes in proptest::collection::vec(any::<u8>(), 0..64),
        len_byte in any::<Option<u8>>(),
    ) {
        let f = fixture(1 << 20);
        let mut frame = crate::remote::wire::pack_id(&id).unwrap_or_default();
        if let (Some(n), Some(first)) = (len_byte, frame.first_mut()) {
            *first = n;
        }
        frame.extend_from_slice(&bytes);
        let before = f.dropped();
        f.node.on_frame_bytes(&frame);
        prop_assert!(f.dropped() - before <= 1);
    }

    /// A good frame with bytes changed, cut or added: no panic, and a frame that is not
    /// delivered is reported; the node still serves.
    #[test]
    fn mutated_frames_never_panic(
        n in any::<u64>(),
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4),
        cut in any::<Option<usize>>(),
    ) {
        let f = fixture(1 << 20);
        let mut bytes = f.tell(n);
        for (at, x) in flips {
            let at = at % bytes.len();
            bytes[at] ^= x | 1;
        }
        if let Some(c) = cut {
            bytes.truncate(c % (bytes.len() + 1));
        }
        let before = f.dropped();
        let r = f.node.handle("00", &bytes);
        f.node.on_bytes("00", &bytes);
        prop_assert_eq!(f.dropped() - before, usize::from(r.is_err()));
        f.still_serves();
    }
}

/// Two nodes whose actors have the same number, fed on one thread: each frame reaches its own
/// node's actor (the route a thread reuses is its node's), and a protocol the actor does not
/// serve is still refused after one it serves.
#[test]
fn a_reused_route_stays_with_its_node_and_protocol() {
    let (a, b) = (fixture(1 << 20), fixture(1 << 20));
    assert_eq!(a.sink, b.sink, "the set-up: the same number on both nodes");
    let wait = std::time::Duration::from_secs(10);
    for n in 0..4 {
        a.node.on_bytes("00", &a.tell(n));
        b.node.on_bytes("00", &b.tell(100 + n));
        assert_eq!(a.got.recv_timeout(wait).unwrap(), n);
        assert_eq!(b.got.recv_timeout(wait).unwrap(), 100 + n);
    }
    let other = Head::Tell {
        to: a.sink,
        tag: b"unit.Other",
    };
    assert!(a.node.handle("00", &a.encode(&other, &Num(1))).is_err());
    assert!(a.got.try_recv().is_err() && b.got.try_recv().is_err());
}

#[test]
fn a_full_outbox_drops_and_reports_what_it_cannot_hold() {
    let f = fixture(1 << 20);
    // As if a peer that does not read had filled it.
    f.node
        .outbox_waiting
        .store(crate::remote::outbox::OUTBOX_MAX, Ordering::Relaxed);
    let frame = f
        .node
        .encode(
            &Head::Down {
                actor: 1,
                reason: crate::remote::wire::WireExit::NotAlive,
            },
            &(),
        )
        .unwrap();
    f.node.put_later(&"nobody".into(), frame);
    assert_eq!(f.dropped(), 1, "the dropped frame is reported");
    assert_eq!(
        f.node.outbox_waiting.load(Ordering::Relaxed),
        crate::remote::outbox::OUTBOX_MAX,
        "nothing more waits"
    );
    f.node.outbox_waiting.store(0, Ordering::Relaxed);
    f.still_serves();
}

/// Ends at its first `Num` if `.0`; outlives what it is linked with.
struct Short(bool);
impl Actor for Short {
    fn linked_exit(&mut self, _: crate::ExitReason, _: &mut Context<'_, Self>) -> Allocation {
        Allocation::Nodelete
    }
}
impl Receive<Num> for Short {
    fn receive(&mut self, _: Num, _: &mut Context<'_, Self>) -> Allocation {
        if self.0 {
            Allocation::Delete
        } else {
            Allocation::Nodelete
        }
    }
}

/// What each node left here is filed under that node: its loss takes exactly its own (its
/// watches and links of local actors, its actors' recipients and watches), nothing of another
/// node's, and an exported actor's end takes its own entries and names, nobody else's.
#[test]
fn a_loss_takes_what_its_node_left_and_nothing_else() {
    let f = fixture(1 << 20);
    let (x, y) = (format!("{:032x}", 1), format!("{:032x}", 2));
    let short = f._system.spawn(Short(true));
    let short_id = f.node.export::<Num>(&short.recipient());
    f.node.register::<Num>("short", &short.recipient()).unwrap();
    f.node
        .register::<Num>("keeper", &short.recipient())
        .unwrap();
    let keeper = f._system.spawn(Short(false)).recipient();
    let keeper_id = f.node.export::<Num>(&keeper);
    f.node.register::<Num>("keeper", &keeper).unwrap();
    let mut made = Vec::new();
    for n in [&x, &y] {
        for to in [keeper_id, short_id] {
            f.node.on_bytes(n, &f.encode(&Head::Monitor { to }, &()));
            f.node.on_bytes(n, &f.encode(&Head::Link { to }, &()));
        }
        let r = f.node.recipient::<Num>(n, 5);
        let watch = r.monitor();
        made.push((r, watch));
    }
    let counts = |f: &Fixture| {
        let t = f.node.tables();
        (t.watching.len(), t.proxies.len(), t.watched.len())
    };
    assert_eq!(counts(&f), (4, 2, 2));
    f.node.node_down(&x);
    assert_eq!(counts(&f), (2, 1, 1), "x's own, and only those");
    {
        let t = f.node.tables();
        for e in [&t.exports[&keeper_id], &t.exports[&short_id]] {
            assert!(!e.watched_by.contains(x.as_str()) && e.watched_by.contains(y.as_str()));
            assert!(!e.linked_by.contains_key(x.as_str()) && e.linked_by[y.as_str()] == 1);
        }
        assert!(t.watching.get(&y, keeper_id).is_some() && t.watching.get(&y, short_id).is_some());
    }
    assert!(!made[0].0.is_alive() && made[1].0.is_alive());
    // y unlinks from the keeper: its watch stays filed.
    f.node.on_bytes(
        &y,
        &f.encode(
            &Head::Exit {
                to: keeper_id,
                reason: crate::remote::wire::WireExit::Normal,
            },
            &(),
        ),
    );
    assert!(f.node.tables().watching.get(&y, keeper_id).is_some());
    // `short` ends: its entries and its names go, the keeper's stay.
    short.send(Num(0)).unwrap();
    let t0 = std::time::Instant::now();
    while f.node.tables().exports.contains_key(&short_id) {
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(30),
            "short never ended"
        );
        std::thread::yield_now();
    }
    let t = f.node.tables();
    assert_eq!(t.watching.len(), 1);
    assert!(t.watching.get(&y, keeper_id).is_some());
    assert!(!t.names.contains_key("short"));
    assert_eq!(
        t.names["keeper"].keys().map(|k| k.1).collect::<Vec<_>>(),
        [keeper_id]
    );
    drop(t);
    // Unregistered: gone; the actor is still served.
    f.node.unregister("keeper");
    let t = f.node.tables();
    assert!(t.names.is_empty() && t.exports[&keeper_id].named.is_empty());
}

/// Takes the node's tables when dropped (as a reply port to another node does, dropped with
/// the continuation that holds it).
struct TakesTables(Arc<NodeInner>);
impl Drop for TakesTables {
    fn drop(&mut self) {
        drop(self.0.tables());
    }
}

/// Asks a remote actor from a behaviour (its continuation holding a `TakesTables`), then
/// ends.
struct AskThenEnd(crate::Recipient<Ask<Num, Num>>, Arc<NodeInner>);
impl Actor for AskThenEnd {}
impl Receive<()> for AskThenEnd {
    fn receive(&mut self, (): (), ctx: &mut Context<'_, Self>) -> Allocation {
        let held = TakesTables(self.1.clone());
        let then = move |_: &mut Self, _, _: &mut Context<'_, Self>| {
            drop(held);
            Allocation::Nodelete
        };
        ctx.ask(&self.0, Num(1), then).unwrap();
        Allocation::Delete
    }
}

/// The asks of actors that ended since are let go of (at the table's next sweep), as those
/// of threads that stopped waiting: an actor's ask to a remote actor that keeps its port does
/// not stay filed for ever after the actor is gone. They are dropped outside the tables'
/// lock (a continuation's drop may take it: here each does).
#[test]
fn the_asks_of_actors_that_ended_are_swept() {
    let f = fixture(1 << 20);
    let x = format!("{:032x}", 3);
    f.node
        .on_bytes(&x, &f.encode(&Head::Monitor { to: f.sink }, &()));
    let far = f.node.recipient::<Ask<Num, Num>>(&x, 5);
    let (node, system) = (f.node.clone(), f._system.handle());
    let (done, swept) = mpsc::channel();
    std::thread::spawn(move || {
        for _ in 0..1_100 {
            let a = system.spawn(AskThenEnd(far.clone(), node.clone()));
            let ended = a.monitor();
            a.send(()).unwrap();
            ended.wait().unwrap();
        }
        let _ = done.send(());
    });
    swept
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the sweep deadlocked (a port dropped under the tables' lock)");
    let filed = f.node.tables().asks.len();
    assert!(filed < 100, "{filed} asks filed for actors that have ended");
}
