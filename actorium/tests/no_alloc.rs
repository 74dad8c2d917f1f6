//! No heap allocation per send in steady state: a counting global allocator watches sends from
//! a behaviour to itself, between actors on different workers, and from an outside thread.

mod common;

use actorium::{Actor, ActorSystem, Addr, Allocation, Context, DeleteMsg, Receive};
use common::wait_for;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded contract.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded contract.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const WARMUP: u64 = 10_000;
const MEASURED: u64 = 100_000;

/// Re-sends a 24-byte message to itself (or to a peer) and records the allocation count at
/// the start and the end of the measured window.
struct Looper {
    me: Option<Addr<Looper>>,
    peer: Option<Addr<Looper>>,
    n: u64,
    window: Arc<[AtomicU64; 2]>,
}
struct Payload([u64; 3]);
struct Peer(Addr<Looper>);
impl Actor for Looper {
    fn started(&mut self, ctx: &mut Context<'_, Self>) {
        self.me = Some(ctx.address());
    }
}
impl Receive<Peer> for Looper {
    fn receive(&mut self, p: Peer, _: &mut Context<'_, Self>) -> Allocation {
        self.peer = Some(p.0);
        Allocation::Nodelete
    }
}
impl Receive<Payload> for Looper {
    fn receive(&mut self, m: Payload, _: &mut Context<'_, Self>) -> Allocation {
        self.n += 1;
        if self.n == WARMUP {
            self.window[0].store(ALLOCS.load(Ordering::SeqCst), Ordering::SeqCst);
        }
        if self.n == WARMUP + MEASURED {
            self.window[1].store(ALLOCS.load(Ordering::SeqCst), Ordering::SeqCst);
            self.me = None;
            self.peer = None;
            return Allocation::Delete;
        }
        let to = self.peer.as_ref().or(self.me.as_ref()).unwrap();
        to.send(Payload([m.0[0] + 1, m.0[1], m.0[2]])).unwrap();
        Allocation::Nodelete
    }
}

/// Counts what it receives.
struct Sink(Arc<AtomicU64>);
impl Actor for Sink {}
impl Receive<Payload> for Sink {
    fn receive(&mut self, _: Payload, _: &mut Context<'_, Self>) -> Allocation {
        self.0.fetch_add(1, Ordering::SeqCst);
        Allocation::Nodelete
    }
}

fn looper(window: &Arc<[AtomicU64; 2]>) -> Looper {
    Looper {
        me: None,
        peer: None,
        n: 0,
        window: window.clone(),
    }
}

fn window() -> Arc<[AtomicU64; 2]> {
    Arc::new([AtomicU64::new(0), AtomicU64::new(0)])
}

fn allocations(w: &[AtomicU64; 2]) -> u64 {
    w[1].load(Ordering::SeqCst) - w[0].load(Ordering::SeqCst)
}

/// Spins until `cond`, failing after a minute (`wait_for` sleeps 200 µs per check: too slow
/// for the thousands of round trips below).
fn spin_until(what: &str, cond: impl Fn() -> bool) {
    let t0 = std::time::Instant::now();
    while !cond() {
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::hint::spin_loop();
    }
}

/// One test function: the counter is global, so the scenarios must not overlap. It runs on the
/// test thread; a timer thread (no allocation while it sleeps, unlike a channel-based watchdog
/// waiting beside the measurement) ends the process if it hangs.
#[test]
fn steady_state_sends_do_not_allocate() {
    std::thread::spawn(|| {
        std::thread::sleep(std::time::Duration::from_secs(300));
        eprintln!("steady_state_sends_do_not_allocate: not finished after 300 s (hang)");
        std::process::abort();
    });
    steady_state();
}

fn steady_state() {
    let system = ActorSystem::builder().workers(2).build().unwrap();

    // Thread start-up allocates, and a worker may start late (a dormant worker's thread
    // starts when compaction first activates it): activate every worker (an add of none),
    // and make each run a behaviour (one actor per queue, tickets are round-robin) before
    // measuring anything. Compaction may deactivate and activate them again later: that
    // allocates nothing.
    assert_eq!(system.add_workers(0).unwrap(), 2);
    let warm = Arc::new(AtomicU64::new(0));
    for _ in 0..system.queues() {
        let w = warm.clone();
        system.spawn(Sink(w)).send(Payload([0; 3])).unwrap();
    }
    wait_for(60, "every worker to start", || {
        warm.load(Ordering::SeqCst) == system.queues() as u64
    });

    // 1. A behaviour sending to its own actor.
    let w = window();
    let a = system.spawn(looper(&w));
    a.send(Payload([0; 3])).unwrap();
    wait_for(60, "self-sends", || w[1].load(Ordering::SeqCst) != 0);
    assert_eq!(
        allocations(&w),
        0,
        "self-send allocated in steady state: {:?}",
        w
    );

    // 2. Ping-pong between actors on different workers (queue tickets 1 and 17 of 32).
    let w = window();
    let x = system.spawn(looper(&w));
    let filler: Vec<_> = (0..15).map(|_| system.spawn(looper(&window()))).collect();
    let y = system.spawn(looper(&w));
    x.send(Peer(y.clone())).unwrap();
    y.send(Peer(x.clone())).unwrap();
    x.send(Payload([0; 3])).unwrap();
    wait_for(60, "ping-pong", || w[1].load(Ordering::SeqCst) != 0);
    assert_eq!(
        allocations(&w),
        0,
        "cross-worker sends allocated in steady state"
    );
    for f in &filler {
        f.send(DeleteMsg).unwrap();
    }
    // Whichever of x and y reached the end of its window deleted itself; end the other.
    let _ = x.send(DeleteMsg);
    let _ = y.send(DeleteMsg);
    drop((x, y, filler));

    // 3. Sends from an outside thread, each waited for.
    let got = Arc::new(AtomicU64::new(0));
    let sink = system.spawn(Sink(got.clone()));
    let mut before = 0;
    for i in 1..=WARMUP + MEASURED {
        if i == WARMUP + 1 {
            before = ALLOCS.load(Ordering::SeqCst);
        }
        sink.send(Payload([i; 3])).unwrap();
        spin_until("an outside send", || got.load(Ordering::SeqCst) == i);
    }
    assert_eq!(
        ALLOCS.load(Ordering::SeqCst) - before,
        0,
        "outside sends allocated in steady state"
    );

    // A message over 32 bytes travels boxed: one allocation per send (documented boundary).
    struct Big([u64; 8]);
    impl Receive<Big> for Sink {
        fn receive(&mut self, b: Big, _: &mut Context<'_, Self>) -> Allocation {
            self.0.fetch_add(b.0[0], Ordering::SeqCst);
            Allocation::Nodelete
        }
    }
    let before = ALLOCS.load(Ordering::SeqCst);
    let start = got.load(Ordering::SeqCst);
    for i in 1..=100 {
        sink.send(Big([1; 8])).unwrap();
        spin_until("a boxed send", || got.load(Ordering::SeqCst) == start + i);
    }
    assert_eq!(ALLOCS.load(Ordering::SeqCst) - before, 100);
    sink.send(DeleteMsg).unwrap();
    drop(system); // the warm-up sinks are still alive: dropping stops them

    // The actor-centric executor: mailboxes hold envelopes by value too, and jobs move through
    // deques (stealing) or one queue (sharing) that keep their buffers.
    for (name, policy) in [("work stealing", true), ("work sharing", false)] {
        let b = ActorSystem::builder().workers(2).stats(true);
        let system = if policy {
            b.policy(actorium::policy::WorkStealing::default())
        } else {
            b.policy(actorium::policy::WorkSharing)
        }
        .build()
        .unwrap();
        let warm = Arc::new(AtomicU64::new(0));
        let sinks: Vec<_> = (0..8).map(|_| system.spawn(Sink(warm.clone()))).collect();
        for s in &sinks {
            s.send(Payload([0; 3])).unwrap();
        }
        wait_for(60, "warm-up", || warm.load(Ordering::SeqCst) == 8);
        // Both workers have been through their idle path (steals included) at least once, so
        // one-time set-up there (crossbeam-epoch registers a thread on its first pin) is done.
        wait_for(60, "both workers asleep", || {
            system.stats().unwrap().sleeps >= 2
        });

        let w = window();
        let a = system.spawn(looper(&w));
        a.send(Payload([0; 3])).unwrap();
        wait_for(60, "self-sends", || w[1].load(Ordering::SeqCst) != 0);
        assert_eq!(allocations(&w), 0, "{name}: self-sends allocated");

        let w = window();
        let x = system.spawn(looper(&w));
        let y = system.spawn(looper(&w));
        x.send(Peer(y.clone())).unwrap();
        y.send(Peer(x.clone())).unwrap();
        x.send(Payload([0; 3])).unwrap();
        wait_for(60, "ping-pong", || w[1].load(Ordering::SeqCst) != 0);
        assert_eq!(allocations(&w), 0, "{name}: ping-pong allocated");
        let _ = x.send(DeleteMsg);
        let _ = y.send(DeleteMsg);
        drop((x, y, sinks));
        drop(system);
    }
}
