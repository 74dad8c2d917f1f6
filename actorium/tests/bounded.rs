//! Bounded mailboxes: `spawn_bounded`, `try_send`, `send_wait`, `send_timeout`, `send_async`,
//! `Context::when_room` and `queued`, on every executor. Checked: the count never passes the
//! capacity (a consumer reads it in each behaviour), every message arrives exactly once and in
//! each sender's order, waiting senders hear an actor's end, a dropped waiting future gives
//! its place back, and actors without a capacity are not counted.

mod common;

use actorium::{
    Actor, ActorSystem, Addr, Allocation, Context, DeleteMsg, Receive, Recipient, Room,
    TrySendError,
};
use common::{block_on, on_every_executor, on_every_threaded_executor, settle, watchdog, Gate};
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// Records each message `(sender, seq)` and the queued count it saw; the first message waits at
/// a gate (so the test can fill the mailbox while it runs).
struct Consumer {
    me: Option<Addr<Consumer>>,
    gate: Arc<Gate>,
    gated: bool,
    seen: Arc<Mutex<Vec<(u32, u64)>>>,
    max_queued: Arc<AtomicUsize>,
}
impl Consumer {
    fn new(gate: Arc<Gate>) -> Self {
        Self {
            me: None,
            gate,
            gated: true,
            seen: Arc::default(),
            max_queued: Arc::default(),
        }
    }
}
impl Actor for Consumer {
    fn started(&mut self, ctx: &mut Context<'_, Self>) {
        self.me = Some(ctx.address());
    }
    fn stopped(&mut self) {
        self.me = None;
    }
}
impl Receive<(u32, u64)> for Consumer {
    fn receive(&mut self, m: (u32, u64), _: &mut Context<'_, Self>) -> Allocation {
        if std::mem::take(&mut self.gated) {
            self.gate.wait();
        }
        let q = self.me.as_ref().unwrap().queued().unwrap_or(0);
        self.max_queued.fetch_max(q, Ordering::SeqCst);
        self.seen.lock().unwrap().push(m);
        Allocation::Nodelete
    }
}
/// Ends the consumer (after the gate, if it is the first message).
impl Receive<()> for Consumer {
    fn receive(&mut self, _: (), ctx: &mut Context<'_, Self>) -> Allocation {
        if std::mem::take(&mut self.gated) {
            self.gate.wait();
        }
        ctx.stop();
        Allocation::Nodelete
    }
}

/// Each sender's messages arrive once each, in order.
fn check_order(seen: &[(u32, u64)], senders: u32, per_sender: u64) {
    let mut next = vec![0u64; senders as usize];
    for &(s, n) in seen {
        assert_eq!(n, next[s as usize], "sender {s}: out of order or repeated");
        next[s as usize] += 1;
    }
    assert!(next.iter().all(|&n| n == per_sender), "lost: {next:?}");
}

#[test]
fn try_send_stops_at_the_capacity_and_resumes_when_the_actor_drains() {
    watchdog(60, || {
        on_every_threaded_executor(|_, choose| {
            let system = choose(ActorSystem::builder()).build().unwrap();
            let gate = Arc::new(Gate::default());
            let c = Consumer::new(gate.clone());
            let (seen, max_q) = (c.seen.clone(), c.max_queued.clone());
            let a = system.spawn_bounded(c, 3);
            assert_eq!(a.capacity(), Some(3));
            a.send((0, 0)).unwrap();
            // Taken to run (and held at the gate): its place is free again.
            settle(&system, 30, "the first message to run", || {
                a.queued() == Some(0)
            });
            for n in 1..=3 {
                a.try_send((0, n)).unwrap();
            }
            assert_eq!(a.queued(), Some(3));
            match a.try_send((0, 4)) {
                Err(TrySendError::Full((0, 4))) => {}
                other => panic!("expected Full with the message back, got {other:?}"),
            }
            gate.open();
            settle(&system, 30, "the mailbox to drain", || {
                seen.lock().unwrap().len() == 4
            });
            a.try_send((0, 4)).unwrap();
            settle(&system, 30, "the last message", || {
                seen.lock().unwrap().len() == 5
            });
            check_order(&seen.lock().unwrap(), 1, 5);
            assert!(
                max_q.load(Ordering::SeqCst) <= 3,
                "more queued than the capacity"
            );
            system.shutdown();
            assert!(matches!(a.try_send((0, 9)), Err(TrySendError::Dead(_))));
        })
    });
}

#[test]
fn blocked_senders_on_threads_deliver_everything_in_order_within_the_capacity() {
    const SENDERS: u32 = 4;
    const EACH: u64 = 5_000;
    watchdog(120, || {
        on_every_threaded_executor(|_, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let gate = Arc::new(Gate::default());
            gate.open();
            let c = Consumer::new(gate);
            let (seen, max_q) = (c.seen.clone(), c.max_queued.clone());
            let a = system.spawn_bounded(c, 8);
            let r: Recipient<(u32, u64)> = a.recipient();
            let threads: Vec<_> = (0..SENDERS)
                .map(|s| {
                    let (a, r) = (a.clone(), r.clone());
                    std::thread::spawn(move || {
                        for n in 0..EACH {
                            // Half through the address, half through a recipient.
                            if s % 2 == 0 {
                                a.send_wait((s, n)).unwrap();
                            } else {
                                r.send_wait((s, n)).unwrap();
                            }
                        }
                    })
                })
                .collect();
            for t in threads {
                t.join().unwrap();
            }
            settle(&system, 60, "every message", || {
                seen.lock().unwrap().len() == (SENDERS as u64 * EACH) as usize
            });
            check_order(&seen.lock().unwrap(), SENDERS, EACH);
            assert!(
                max_q.load(Ordering::SeqCst) <= 8,
                "more queued than the capacity"
            );
            assert_eq!(a.queued(), Some(0));
            system.shutdown();
        })
    });
}

#[test]
fn send_async_waits_for_room_and_keeps_order() {
    const EACH: u64 = 3_000;
    watchdog(120, || {
        on_every_threaded_executor(|_, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let gate = Arc::new(Gate::default());
            gate.open();
            let c = Consumer::new(gate);
            let (seen, max_q) = (c.seen.clone(), c.max_queued.clone());
            let a = system.spawn_bounded(c, 4);
            let r: Recipient<(u32, u64)> = a.recipient();
            let t = std::thread::spawn(move || {
                block_on(async {
                    for n in 0..EACH {
                        r.send_async((1, n)).await.unwrap();
                    }
                })
            });
            block_on(async {
                for n in 0..EACH {
                    a.send_async((0, n)).await.unwrap();
                }
            });
            t.join().unwrap();
            settle(&system, 60, "every message", || {
                seen.lock().unwrap().len() == 2 * EACH as usize
            });
            check_order(&seen.lock().unwrap(), 2, EACH);
            assert!(max_q.load(Ordering::SeqCst) <= 4);
            system.shutdown();
        })
    });
}

/// Fills a gated consumer of capacity 1: one message held at the gate, one queued.
fn full_consumer(system: &ActorSystem, gate: &Arc<Gate>) -> (Addr<Consumer>, Consumer) {
    let c = Consumer::new(gate.clone());
    let shadow = Consumer {
        me: None,
        gate: gate.clone(),
        gated: false,
        seen: c.seen.clone(),
        max_queued: c.max_queued.clone(),
    };
    let a = system.spawn_bounded(c, 1);
    a.send((0, 0)).unwrap();
    settle(system, 30, "the first message to run", || {
        a.queued() == Some(0)
    });
    a.try_send((0, 1)).unwrap();
    assert!(a.try_send((0, 2)).unwrap_err().is_full());
    (a, shadow)
}

/// A gated consumer of capacity 1 whose running (gated) behaviour ends it, with one message
/// waiting behind.
fn ending_consumer(system: &ActorSystem, gate: &Arc<Gate>) -> Addr<Consumer> {
    let a = system.spawn_bounded(Consumer::new(gate.clone()), 1);
    a.send(()).unwrap();
    settle(system, 30, "the first message to run", || {
        a.queued() == Some(0)
    });
    a.try_send((0, 1)).unwrap();
    a
}

/// Polls `fut` once, with a waker that does nothing: it must wait (the mailbox is full).
fn poll_pending<F: Future>(fut: std::pin::Pin<&mut F>) {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    assert!(fut.poll(&mut cx).is_pending(), "the mailbox is full");
}

/// Waits until the consumer has seen `n` messages.
fn wait_seen(system: &ActorSystem, seen: &Mutex<Vec<(u32, u64)>>, n: usize) {
    settle(system, 30, "the consumer's messages", || {
        seen.lock().unwrap().len() == n
    });
}

#[test]
fn send_timeout_reports_full_and_gives_the_message_back() {
    watchdog(60, || {
        on_every_threaded_executor(|_, choose| {
            let system = choose(ActorSystem::builder()).build().unwrap();
            let gate = Arc::new(Gate::default());
            let (a, c) = full_consumer(&system, &gate);
            match a.send_timeout((0, 2), Duration::from_millis(20)) {
                Err(TrySendError::Full((0, 2))) => {}
                other => panic!("expected Full, got {other:?}"),
            }
            gate.open();
            a.send_timeout((0, 2), Duration::from_secs(30)).unwrap();
            wait_seen(&system, &c.seen, 3);
            check_order(&c.seen.lock().unwrap(), 1, 3);
            system.shutdown();
        })
    });
}

#[test]
fn a_dropped_waiting_future_gives_its_place_back() {
    watchdog(60, || {
        on_every_threaded_executor(|_, choose| {
            let system = choose(ActorSystem::builder()).build().unwrap();
            let gate = Arc::new(Gate::default());
            let (a, c) = full_consumer(&system, &gate);
            {
                let fut = a.send_async((0, 99));
                let mut fut = std::pin::pin!(fut);
                poll_pending(fut.as_mut());
            }
            gate.open();
            wait_seen(&system, &c.seen, 2);
            // The dropped future's place went back: nobody waits, there is room.
            assert_eq!(a.queued(), Some(0));
            a.try_send((0, 2)).unwrap();
            wait_seen(&system, &c.seen, 3);
            check_order(&c.seen.lock().unwrap(), 1, 3);
            system.shutdown();
        })
    });
}

#[test]
fn waiting_senders_hear_that_the_actor_ended() {
    watchdog(60, || {
        on_every_threaded_executor(|_, choose| {
            let system = choose(ActorSystem::builder()).build().unwrap();
            let gate = Arc::new(Gate::default());
            // The running behaviour (held at the gate) ends the actor; one message waits.
            let a = ending_consumer(&system, &gate);
            let (b, r) = (a.clone(), a.recipient::<(u32, u64)>());
            let thread = std::thread::spawn(move || b.send_wait((0, 2)));
            let task = std::thread::spawn(move || block_on(r.send_async((1, 0))));
            // Whether they began to wait before the actor ended or after, both waiting
            // senders get their messages back.
            gate.open();
            assert_eq!(thread.join().unwrap().unwrap_err().into_inner(), (0, 2));
            assert_eq!(task.join().unwrap().unwrap_err().into_inner(), (1, 0));
            system.shutdown();
        })
    });
}

/// Dropping a system releases everyone waiting for room at its full actor: a thread in
/// `send_wait` and a `send_async` future return (with their messages if not sent), and a
/// behaviour's `when_room` continuation, with what it captured, does not outlive the system.
#[test]
fn dropping_the_system_releases_waiting_senders() {
    watchdog(60, || {
        on_every_threaded_executor(|_, choose| {
            let system = choose(ActorSystem::builder()).build().unwrap();
            let gate = Arc::new(Gate::default());
            let (a, _) = full_consumer(&system, &gate);
            let (b, c) = (a.clone(), a.clone());
            let sender = std::thread::spawn(move || b.send_wait((0, 2)));
            let future = std::thread::spawn(move || block_on(c.send_async((1, 2))));
            let token = Arc::new(());
            let held = Arc::downgrade(&token);
            let (tx, queued) = mpsc::channel();
            let w = system.spawn(RoomWaiter {
                to: a.clone(),
                token: Some(token),
                queued: tx,
            });
            w.send(()).unwrap();
            queued.recv_timeout(Duration::from_secs(30)).unwrap();
            // Dropping waits for the running (gated) behaviour: open the gate from another
            // thread. Whether a sender was served before the drop stopped the actor or not,
            // it returns (the watchdog fails a hang), with its message if it was not sent.
            let g = gate.clone();
            let opener = std::thread::spawn(move || g.open());
            drop(system);
            opener.join().unwrap();
            if let Err(e) = sender.join().unwrap() {
                assert_eq!(e.into_inner(), (0, 2));
            }
            if let Err(e) = future.join().unwrap() {
                assert_eq!(e.into_inner(), (1, 2));
            }
            assert!(!a.is_alive() && !w.is_alive());
            assert!(
                held.upgrade().is_none(),
                "a when_room continuation outlived its system"
            );
        })
    });
}

/// Calls `when_room` on its target when told, with a continuation that holds `token`; says
/// when it has.
struct RoomWaiter {
    to: Addr<Consumer>,
    token: Option<Arc<()>>,
    queued: mpsc::Sender<()>,
}
impl Actor for RoomWaiter {}
impl Receive<()> for RoomWaiter {
    fn receive(&mut self, _: (), ctx: &mut Context<'_, Self>) -> Allocation {
        let token = self.token.take().expect("told once");
        ctx.when_room(
            &self.to,
            move |_: &mut RoomWaiter, room: Room<(u32, u64)>, _| {
                drop(token);
                let _ = room.send((1, 0));
                Allocation::Nodelete
            },
        );
        let _ = self.queued.send(());
        Allocation::Nodelete
    }
}

/// Sends `0..total` to its sink as fast as the sink's room allows, from behaviours: with
/// `try_send` until full, then `when_room`.
struct Source {
    next: u64,
    total: u64,
    sink: Addr<Consumer>,
    /// Continuations run (each with room).
    rooms: Arc<AtomicUsize>,
    /// Times the sink was found full.
    fulls: Arc<AtomicUsize>,
}
impl Source {
    fn pump(&mut self, ctx: &mut Context<'_, Self>) {
        while self.next < self.total {
            match self.sink.try_send((0, self.next)) {
                Ok(()) => self.next += 1,
                Err(TrySendError::Full(_)) => {
                    self.fulls.fetch_add(1, Ordering::SeqCst);
                    ctx.when_room(
                        &self.sink,
                        |me: &mut Source, room: Room<(u32, u64)>, ctx| {
                            me.rooms.fetch_add(1, Ordering::SeqCst);
                            room.send((0, me.next)).unwrap();
                            me.next += 1;
                            me.pump(ctx);
                            Allocation::Nodelete
                        },
                    );
                    return;
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
}
impl Actor for Source {}
impl Receive<()> for Source {
    fn receive(&mut self, _: (), ctx: &mut Context<'_, Self>) -> Allocation {
        self.pump(ctx);
        Allocation::Nodelete
    }
}

#[test]
fn a_behaviour_waits_for_room_with_a_continuation() {
    const TOTAL: u64 = 20_000;
    watchdog(120, || {
        on_every_executor(|name, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            // The sink's first message waits until the source has found it full (on the
            // caller-driven executor the source's first behaviour fills it before the sink
            // runs at all, and a gate would hold the only thread).
            let gate = Arc::new(Gate::default());
            if name.contains("testing") {
                gate.open();
            }
            let c = Consumer::new(gate.clone());
            let (seen, max_q) = (c.seen.clone(), c.max_queued.clone());
            let sink = system.spawn_bounded(c, 16);
            let fulls = Arc::new(AtomicUsize::new(0));
            let rooms = Arc::new(AtomicUsize::new(0));
            let source = system.spawn(Source {
                next: 0,
                total: TOTAL,
                sink,
                rooms: rooms.clone(),
                fulls: fulls.clone(),
            });
            source.send(()).unwrap();
            settle(&system, 60, "the sink to be full", || {
                fulls.load(Ordering::SeqCst) > 0
            });
            gate.open();
            settle(&system, 60, "every message", || {
                seen.lock().unwrap().len() == TOTAL as usize
            });
            check_order(&seen.lock().unwrap(), 1, TOTAL);
            assert!(max_q.load(Ordering::SeqCst) <= 16);
            assert!(rooms.load(Ordering::SeqCst) > 0, "the sink was never full");
            source.send(DeleteMsg).unwrap();
            system.shutdown();
        })
    });
}

#[test]
fn when_room_on_an_ended_actor_runs_with_a_room_that_gives_the_message_back() {
    struct Asker(Addr<Consumer>, mpsc::Sender<Option<(u32, u64)>>);
    impl Actor for Asker {}
    impl Receive<()> for Asker {
        fn receive(&mut self, _: (), ctx: &mut Context<'_, Self>) -> Allocation {
            ctx.when_room(&self.0, |me: &mut Asker, room: Room<(u32, u64)>, _| {
                let back = room.send((7, 7)).err().map(|e| e.into_inner());
                me.1.send(back).unwrap();
                Allocation::Nodelete
            });
            Allocation::Nodelete
        }
    }
    watchdog(60, || {
        on_every_executor(|_, choose| {
            let system = choose(ActorSystem::builder()).build().unwrap();
            let gate = Arc::new(Gate::default());
            gate.open();
            let sink = system.spawn_bounded(Consumer::new(gate), 1);
            sink.send(()).unwrap();
            settle(&system, 30, "the sink to end", || !sink.is_alive());
            let (tx, rx) = mpsc::channel();
            system.spawn(Asker(sink, tx)).send(()).unwrap();
            let mut got = None;
            settle(&system, 30, "the continuation", || {
                got = rx.try_recv().ok();
                got.is_some()
            });
            assert_eq!(got.unwrap(), Some((7, 7)));
            system.shutdown();
        })
    });
}

#[test]
fn actors_without_a_capacity_are_not_counted_and_never_full() {
    watchdog(60, || {
        on_every_executor(|_, choose| {
            let system = choose(ActorSystem::builder()).build().unwrap();
            let gate = Arc::new(Gate::default());
            gate.open();
            let c = Consumer::new(gate);
            let seen = c.seen.clone();
            let a = system.spawn(c);
            assert_eq!((a.queued(), a.capacity()), (None, None));
            for n in 0..1_000 {
                a.try_send((0, n)).unwrap();
            }
            a.send_timeout((0, 1_000), Duration::ZERO).unwrap();
            settle(&system, 30, "every message", || {
                seen.lock().unwrap().len() == 1_001
            });
            system.shutdown();
        })
    });
}

#[test]
fn send_counts_past_the_capacity_without_refusing() {
    watchdog(60, || {
        on_every_threaded_executor(|_, choose| {
            let system = choose(ActorSystem::builder()).build().unwrap();
            let gate = Arc::new(Gate::default());
            let (a, c) = full_consumer(&system, &gate);
            for n in 2..10 {
                a.send((0, n)).unwrap();
            }
            assert_eq!(a.queued(), Some(9));
            assert!(a.try_send((0, 10)).unwrap_err().is_full());
            gate.open();
            wait_seen(&system, &c.seen, 10);
            assert_eq!(a.queued(), Some(0));
            system.shutdown();
        })
    });
}

#[test]
#[should_panic(expected = "capacity of at least 1")]
fn a_capacity_of_zero_is_refused() {
    let system = ActorSystem::new().unwrap();
    let _ = system.spawn_bounded(Consumer::new(Arc::default()), 0);
}

#[test]
fn send_wait_in_a_behaviour_on_a_full_mailbox_panics_with_what_to_use() {
    struct Blocker(Addr<Consumer>, mpsc::Sender<String>);
    impl Actor for Blocker {}
    impl Receive<()> for Blocker {
        fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
            let a = self.0.clone();
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| a.send_wait((0, 5))));
            let msg = match r {
                Err(p) => p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_default(),
                Ok(_) => "no panic".into(),
            };
            self.1.send(msg).unwrap();
            Allocation::Nodelete
        }
    }
    watchdog(60, || {
        on_every_threaded_executor(|_, choose| {
            // Two workers: the gated consumer holds one.
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let gate = Arc::new(Gate::default());
            let (a, _) = full_consumer(&system, &gate);
            let (tx, rx) = mpsc::channel();
            system.spawn(Blocker(a, tx)).send(()).unwrap();
            let msg = rx.recv_timeout(Duration::from_secs(30)).unwrap();
            assert!(msg.contains("when_room"), "{msg}");
            gate.open();
            system.shutdown();
        })
    });
}

#[test]
fn a_dropped_future_that_was_given_room_gives_it_back() {
    watchdog(60, || {
        on_every_threaded_executor(|_, choose| {
            let system = choose(ActorSystem::builder()).build().unwrap();
            let gate = Arc::new(Gate::default());
            let (a, c) = full_consumer(&system, &gate);
            {
                let fut = a.send_async((0, 99));
                let mut fut = std::pin::pin!(fut);
                let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
                assert!(
                    fut.as_mut().poll(&mut cx).is_pending(),
                    "the mailbox is full"
                );
                gate.open();
                // The queued message is taken to run: its place goes to the waiting future,
                // which holds it (never polled again) ...
                wait_seen(&system, &c.seen, 2);
                assert_eq!(a.queued(), Some(1));
            }
            // ... until it is dropped.
            assert_eq!(a.queued(), Some(0));
            a.try_send((0, 2)).unwrap();
            wait_seen(&system, &c.seen, 3);
            check_order(&c.seen.lock().unwrap(), 1, 3);
            system.shutdown();
        })
    });
}

#[test]
fn a_waiting_when_room_hears_the_end_with_a_room_that_gives_the_message_back() {
    /// Waits for room in `sink`, tells the test it waits, then reports what `Room::send`
    /// gave back.
    struct Waiter(
        Addr<Consumer>,
        mpsc::Sender<&'static str>,
        mpsc::Sender<(u32, u64)>,
    );
    impl Actor for Waiter {}
    impl Receive<()> for Waiter {
        fn receive(&mut self, _: (), ctx: &mut Context<'_, Self>) -> Allocation {
            assert!(self.0.try_send((5, 5)).unwrap_err().is_full());
            ctx.when_room(&self.0, |me: &mut Waiter, room: Room<(u32, u64)>, _| {
                let back = room.send((5, 5)).unwrap_err().into_inner();
                me.2.send(back).unwrap();
                Allocation::Nodelete
            });
            self.1.send("waiting").unwrap();
            Allocation::Nodelete
        }
    }
    watchdog(60, || {
        on_every_threaded_executor(|_, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let gate = Arc::new(Gate::default());
            // The running behaviour (held at the gate) ends the actor; one message waits.
            let a = ending_consumer(&system, &gate);
            let (waiting_tx, waiting) = mpsc::channel();
            let (back_tx, back) = mpsc::channel();
            system
                .spawn(Waiter(a.clone(), waiting_tx, back_tx))
                .send(())
                .unwrap();
            assert_eq!(waiting.recv_timeout(Duration::from_secs(30)), Ok("waiting"));
            gate.open();
            assert_eq!(back.recv_timeout(Duration::from_secs(30)), Ok((5, 5)));
            // The queued message's place comes back when it is dropped as a dead letter.
            settle(&system, 30, "no place left held", || a.queued() == Some(0));
            system.shutdown();
        })
    });
}

#[test]
fn send_wait_on_a_caller_driven_system_runs_its_jobs_meanwhile() {
    watchdog(60, || {
        let system = ActorSystem::builder()
            .policy(actorium::policy::Testing)
            .build()
            .unwrap();
        let gate = Arc::new(Gate::default());
        gate.open();
        let c = Consumer::new(gate);
        let seen = c.seen.clone();
        let a = system.spawn_bounded(c, 2);
        for n in 0..10 {
            // Nothing runs unless this thread runs it: the wait must.
            a.send_wait((0, n)).unwrap();
        }
        settle(&system, 30, "every message", || {
            seen.lock().unwrap().len() == 10
        });
        check_order(&seen.lock().unwrap(), 1, 10);
        system.shutdown();
    });
}

#[test]
fn the_end_of_the_actor_wakes_waiters_even_when_a_dead_letter_s_place_would_not() {
    // A future that waits and is never polled again holds the place a dead letter gives back:
    // only the actor's end itself can tell the blocked thread behind it.
    watchdog(60, || {
        on_every_threaded_executor(|_, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let gate = Arc::new(Gate::default());
            let a = ending_consumer(&system, &gate);
            let fut = a.send_async((1, 0));
            let mut fut = std::pin::pin!(fut);
            poll_pending(fut.as_mut());
            let (b, (tx, rx)) = (a.clone(), mpsc::channel());
            let thread = std::thread::spawn(move || {
                tx.send(()).unwrap();
                b.send_wait((0, 2))
            });
            rx.recv().unwrap();
            gate.open();
            assert_eq!(thread.join().unwrap().unwrap_err().into_inner(), (0, 2));
            system.shutdown();
        })
    });
}

#[test]
fn a_respawned_bounded_actor_keeps_its_capacity() {
    struct Once(Arc<AtomicUsize>);
    impl Actor for Once {}
    impl Receive<u32> for Once {
        fn receive(&mut self, n: u32, _: &mut Context<'_, Self>) -> Allocation {
            self.0.fetch_add(1, Ordering::SeqCst);
            if n == 0 {
                Allocation::Destroy
            } else {
                Allocation::Nodelete
            }
        }
    }
    watchdog(60, || {
        on_every_executor(|_, choose| {
            let system = choose(ActorSystem::builder()).build().unwrap();
            let count = Arc::new(AtomicUsize::new(0));
            let a = system.spawn_bounded(Once(count.clone()), 4);
            a.send(0).unwrap();
            settle(&system, 30, "the first incarnation to end", || {
                !a.is_alive()
            });
            assert!(matches!(a.try_send(1), Err(TrySendError::Dead(1))));
            a.respawn(Once(count.clone()))
                .map_err(|_| "respawn")
                .unwrap();
            assert_eq!((a.queued(), a.capacity()), (Some(0), Some(4)));
            for n in 1..=4 {
                a.try_send(n).unwrap();
            }
            settle(&system, 30, "the second incarnation's mail", || {
                count.load(Ordering::SeqCst) == 5
            });
            assert_eq!(a.queued(), Some(0));
            a.send(0).unwrap();
            system.shutdown();
        })
    });
}

#[test]
fn a_detached_sender_waiting_for_room_does_not_hold_up_its_system_s_drop() {
    /// Waits (on its own thread) for room in a consumer of another system, and reports.
    struct Pusher(Addr<Consumer>, mpsc::Sender<&'static str>);
    impl Actor for Pusher {}
    impl Receive<()> for Pusher {
        fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
            self.1.send("waiting").unwrap();
            let r = self.0.send_wait((0, 2));
            self.1
                .send(if r.is_err() { "gave up" } else { "sent" })
                .unwrap();
            Allocation::Nodelete
        }
    }
    watchdog(60, || {
        on_every_threaded_executor(|_, choose| {
            // The consumer's system: its consumer stays full until the end of the test.
            let other = ActorSystem::builder().workers(2).build().unwrap();
            let gate = Arc::new(Gate::default());
            let (a, _) = full_consumer(&other, &gate);
            let system = choose(ActorSystem::builder()).build().unwrap();
            let (tx, rx) = mpsc::channel();
            system.spawn_detached(Pusher(a, tx)).send(()).unwrap();
            assert_eq!(rx.recv_timeout(Duration::from_secs(30)), Ok("waiting"));
            // Whether the pusher is parked already or about to: the drop ends its wait.
            drop(system);
            assert_eq!(rx.recv_timeout(Duration::from_secs(30)), Ok("gave up"));
            gate.open();
            other.shutdown();
        })
    });
}
