//! Bad input through the engine itself: a plain Zenoh session (a stranger to actorium, on
//! 127.0.0.1, multicast off) publishes random frames, and mutations of real ones, on a node's
//! inbox key. None panics or stops the node; the random frames are dropped and nearly all
//! reported as an `Event::RemoteFrameDropped`; the node goes on answering asks from another
//! node.
#![cfg(feature = "remote")]

mod common;

use actorium::remote::{RemoteConfig, RemoteMessage};
use actorium::{Actor, ActorSystem, Allocation, Ask, Context, Event, Receive};
use common::{free_port, watchdog, Rng};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use zenoh::Wait;

const FIND: Duration = Duration::from_secs(30);

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Num(u64);
impl RemoteMessage for Num {
    const TAG: &'static str = "frames.Num";
}

struct Doubler;
impl Actor for Doubler {}
impl Receive<Num> for Doubler {
    fn receive(&mut self, _: Num, _: &mut Context<'_, Self>) -> Allocation {
        Allocation::Nodelete
    }
}
impl Receive<Ask<Num, Num>> for Doubler {
    fn receive(&mut self, a: Ask<Num, Num>, _: &mut Context<'_, Self>) -> Allocation {
        let _ = a.reply.send(Num(a.msg.0 * 2));
        Allocation::Nodelete
    }
}

/// Waits (30 s at most) until `done`.
fn wait_until(what: &str, done: impl Fn() -> bool) {
    let t0 = Instant::now();
    while !done() {
        assert!(t0.elapsed() < FIND, "{what}: not after {FIND:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The count once it has stopped moving for 300 ms (the frames put are in).
fn settled(count: &AtomicUsize) -> usize {
    let mut last = (usize::MAX, Instant::now());
    while last.1.elapsed() < Duration::from_millis(300) {
        let now = count.load(Ordering::SeqCst);
        if now != last.0 {
            last = (now, Instant::now());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    last.0
}

#[test]
fn random_and_mutated_frames_on_a_node_s_inbox_are_dropped_and_reported() {
    watchdog(120, || {
        let port = free_port();
        let dropped = Arc::new(AtomicUsize::new(0));
        let d = dropped.clone();
        let sa = ActorSystem::builder()
            .on_event(move |e| {
                if let Event::RemoteFrameDropped { .. } = e {
                    d.fetch_add(1, Ordering::SeqCst);
                }
            })
            .build()
            .unwrap();
        let a = sa
            .remote(RemoteConfig::peer().listen(format!("tcp/127.0.0.1:{port}")))
            .unwrap();
        let doubler = sa.spawn(Doubler);
        a.register::<Num>("d", &doubler).unwrap();
        a.register::<Ask<Num, Num>>("d", &doubler).unwrap();
        let sb = ActorSystem::new().unwrap();
        let b = sb
            .remote(RemoteConfig::peer().connect(format!("tcp/127.0.0.1:{port}")))
            .unwrap();
        let asks = b.lookup::<Ask<Num, Num>>("d", FIND).unwrap();
        let tells = b.lookup::<Num>("d", FIND).unwrap();

        // The stranger: a plain Zenoh peer on loopback, subscribed to a's inbox (it sees b's
        // frames to a: real ones to mutate) and publishing on it.
        let mut c = zenoh::Config::default();
        for (k, v) in [
            ("mode", "\"peer\"".to_string()),
            ("scouting/multicast/enabled", "false".into()),
            ("listen/endpoints", "[\"tcp/127.0.0.1:0\"]".into()),
            ("connect/endpoints", format!("[\"tcp/127.0.0.1:{port}\"]")),
        ] {
            c.insert_json5(k, &v).unwrap();
        }
        let stranger = zenoh::open(c).wait().unwrap();
        let inbox = format!("actorium/inbox/{}", a.id());
        let real = Arc::new(Mutex::new(Vec::<Vec<u8>>::new()));
        let r = real.clone();
        let watch = stranger
            .declare_subscriber(&inbox)
            .callback(move |s| r.lock().unwrap().push(s.payload().to_bytes().to_vec()))
            .wait()
            .unwrap();
        let publisher = stranger
            .declare_publisher(&inbox)
            .congestion_control(zenoh::qos::CongestionControl::Block)
            .wait()
            .unwrap();
        wait_until("the stranger's publisher matches a's inbox", || {
            publisher.matching_status().wait().unwrap().matching()
        });
        // Real frames from b to a, seen by the stranger too (b's publisher matches both).
        wait_until("the stranger sees b's frames", || {
            tells.send(Num(1)).unwrap();
            assert_eq!(asks.ask(Num(4)).unwrap().wait_timeout(FIND), Ok(Num(8)));
            real.lock().unwrap().len() >= 2
        });
        assert_eq!(dropped.load(Ordering::SeqCst), 0, "b's own frames are good");
        // (Taken now: the stranger's subscription would see its own frames too.)
        drop(watch);
        let real = real.lock().unwrap().clone();

        // Random frames: dropped, nearly all reported (one that reads as a tell to a number no
        // actor has is a dead letter, dropped without a report as a tell to an ended actor is).
        let mut rng = Rng::new(43);
        let random = 500;
        for _ in 0..random {
            let len = rng.next() as usize % 64;
            let frame: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            publisher.put(frame).wait().unwrap();
        }
        wait_until("nine in ten random frames reported", || {
            dropped.load(Ordering::SeqCst) >= random * 9 / 10
        });
        let after_random = settled(&dropped);
        assert!(
            (random * 9 / 10..=random).contains(&after_random),
            "{after_random} of {random} random frames reported"
        );
        // Mutations of real frames (a byte changed, cut short, or grown): some stay good
        // frames (a changed number), none panics or stops the node.
        for i in 0..500 {
            let mut f = real[i % real.len()].clone();
            let at = rng.next() as usize % f.len();
            match rng.next() % 3 {
                0 => f[at] ^= 1 << (rng.next() % 8),
                1 => f.truncate(at),
                _ => f.extend((0..1 + rng.next() % 8).map(|_| rng.next() as u8)),
            }
            publisher.put(f).wait().unwrap();
        }
        // Once the reports stop (the frames are in), the node still answers b.
        wait_until("a mutated frame reported", || {
            dropped.load(Ordering::SeqCst) > after_random
        });
        let reported = settled(&dropped) - after_random;
        assert!(reported > 0, "no mutated frame was reported");
        assert!(reported <= 500, "more reports than frames ({reported})");
        assert_eq!(asks.ask(Num(21)).unwrap().wait_timeout(FIND), Ok(Num(42)));
    });
}
