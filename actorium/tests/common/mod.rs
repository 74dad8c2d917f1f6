//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::sync::mpsc;
use std::time::Duration;

/// Runs `f` on its own thread and fails the test if it does not finish within `secs`: a hang
/// (say, a `stop()` that never returns) fails instead of blocking CI.
pub fn watchdog<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let t = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(v) => {
            t.join().unwrap();
            v
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            // The closure panicked: re-raise its panic here.
            std::panic::resume_unwind(t.join().unwrap_err())
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("watchdog: not finished after {secs} s (hang)")
        }
    }
}

/// A small deterministic PRNG (xorshift64*), so topologies are random but reproducible.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The process's CPU time so far, user and system, in clock ticks (1/100 s: Linux's
/// `USER_HZ`).
pub fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // The fields after the command name (in parentheses): utime and stime are the 12th and
    // 13th of them.
    let rest = &stat[stat.rfind(')').unwrap() + 1..];
    let f: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .map(|x| x.parse().unwrap())
        .collect();
    f[0] + f[1]
}

/// Waits (sleeping briefly between checks) until `cond` holds, failing after `secs`.
pub fn wait_for(secs: u64, what: &str, cond: impl FnMut() -> bool) {
    poll(secs, what, cond, || false)
}

/// Checks `cond` until it holds, failing after `secs`; between checks runs `step`, and sleeps
/// briefly when it did nothing.
fn poll(secs: u64, what: &str, mut cond: impl FnMut() -> bool, mut step: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    while !cond() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        if !step() {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

use actorium::policy::{Testing, WorkSharing, WorkStealing};
use actorium::{Actor, ActorSystem, ActorSystemBuilder, Allocation, Context, Receive};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Chooses an executor on a builder.
pub type ExecutorChoice = fn(ActorSystemBuilder) -> ActorSystemBuilder;

/// Every executor and built-in policy: the semantics tests run on each.
pub const EXECUTORS: &[(&str, ExecutorChoice)] = &[
    ("message-centric", |b| b),
    ("actor-centric work stealing", |b| {
        b.policy(WorkStealing::default())
    }),
    ("actor-centric work sharing", |b| b.policy(WorkSharing)),
    ("actor-centric testing", |b| b.policy(Testing)),
];

/// Runs `f` once per executor, naming it on stderr (shown when a test fails).
pub fn on_every_executor(mut f: impl FnMut(&str, ExecutorChoice)) {
    for &(name, choose) in EXECUTORS {
        eprintln!("--- executor: {name}");
        f(name, choose);
    }
}

/// [`on_every_executor`], but only those that run on their own threads (not the caller-driven
/// testing policy): for tests that block a thread outside the system.
pub fn on_every_threaded_executor(mut f: impl FnMut(&str, ExecutorChoice)) {
    on_every_executor(|name, choose| {
        if !name.contains("testing") {
            f(name, choose)
        }
    })
}

/// A minimal `block_on`: polls `f`, parking the thread until its waker is called.
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

/// A gate threads wait on until the test opens it.
#[derive(Default)]
pub struct Gate(std::sync::Mutex<bool>, std::sync::Condvar);
impl Gate {
    pub fn wait(&self) {
        let mut open = self.0.lock().unwrap();
        while !*open {
            open = self.1.wait(open).unwrap();
        }
    }
    pub fn open(&self) {
        *self.0.lock().unwrap() = true;
        self.1.notify_all();
    }
}

/// Meets the others at a barrier inside its behaviour, then counts itself: `n` of them can
/// only finish if `n` workers run them at once.
pub struct Meeter(pub Arc<std::sync::Barrier>, pub Arc<AtomicU64>);
impl Actor for Meeter {}
impl Receive<()> for Meeter {
    fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
        self.0.wait();
        self.1.fetch_add(1, Ordering::SeqCst);
        Allocation::Delete
    }
}

/// [`wait_for`] that also drives a caller-driven system (the testing policy runs jobs only
/// when asked).
pub fn settle(system: &ActorSystem, secs: u64, what: &str, cond: impl FnMut() -> bool) {
    poll(secs, what, cond, || system.run_once())
}

/// Counts to a target by sending itself messages, then adds one to `done` and deletes itself.
pub struct Counter {
    pub left: u64,
    pub done: Arc<AtomicU64>,
}
impl Actor for Counter {
    fn started(&mut self, ctx: &mut Context<'_, Self>) {
        ctx.address().send(()).unwrap();
    }
}
impl Receive<()> for Counter {
    fn receive(&mut self, _: (), ctx: &mut Context<'_, Self>) -> Allocation {
        self.left -= 1;
        if self.left == 0 {
            self.done.fetch_add(1, Ordering::SeqCst);
            return Allocation::Delete;
        }
        ctx.address().send(()).unwrap();
        Allocation::Nodelete
    }
}

/// fib(n) with a join at every level (fork/join tests).
pub fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = actorium::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

/// fib(n), sequentially: the value the fork/join version must give.
pub fn fib_seq(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}

/// The checked delivery workload shared by `delivery.rs` and `resize.rs`: [`ACTORS`] actors
/// that check, per sender, that sequence numbers arrive in order and once, and that no two of
/// their behaviours overlap; each message from an outside thread asks its receiver to forward
/// one to a random actor.
pub mod checked {
    use super::Rng;
    use actorium::{Actor, Addr, Allocation, Context, Receive};
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::{Arc, OnceLock};

    /// Outside sender threads.
    pub const OUTSIDE_THREADS: usize = 4;
    /// Actors.
    pub const ACTORS: usize = 64;

    pub struct Shared {
        /// In-behaviour flags: set on entry, cleared on exit; finding one set is an overlap.
        pub busy: Vec<AtomicBool>,
        pub overlaps: AtomicU64,
        pub order_violations: AtomicU64,
        pub delivered: AtomicU64,
        pub addrs: OnceLock<Vec<Addr<Node>>>,
    }

    impl Shared {
        pub fn new() -> Arc<Self> {
            Arc::new(Self {
                busy: (0..ACTORS).map(|_| AtomicBool::new(false)).collect(),
                overlaps: AtomicU64::new(0),
                order_violations: AtomicU64::new(0),
                delivered: AtomicU64::new(0),
                addrs: OnceLock::new(),
            })
        }
    }

    /// The `seq`-th message (1-based) from sender `from` (outside thread `0..T`, or actor
    /// `T + i`) to its receiver; `forward` asks the receiver to send one on.
    pub struct Msg {
        pub from: usize,
        pub seq: u64,
        pub forward: bool,
    }

    pub struct Node {
        pub id: usize,
        pub shared: Arc<Shared>,
        pub rng: Rng,
        /// Next expected seq from each sender.
        pub expect: Vec<u64>,
        /// Seqs sent to each actor.
        pub sent: Vec<u64>,
    }

    impl Node {
        pub fn new(id: usize, shared: Arc<Shared>) -> Self {
            Self {
                id,
                shared,
                rng: Rng::new(1000 + id as u64),
                expect: vec![1; OUTSIDE_THREADS + ACTORS],
                sent: vec![0; ACTORS],
            }
        }
    }

    impl Shared {
        /// The workload's checks once every actor has finished (`finals`, by id) and
        /// `total` messages were delivered: no overlap, per-pair FIFO, nothing delivered twice,
        /// and exactly once: what each receiver saw from each sender (outside thread `t` sent
        /// `outside_sent[t]`) is what that sender sent it.
        pub fn check(&self, finals: &[Node], outside_sent: &[Vec<u64>], total: u64, what: &str) {
            assert_eq!(
                self.overlaps.load(Ordering::Relaxed),
                0,
                "{what}: two behaviours of one actor overlapped"
            );
            assert_eq!(
                self.order_violations.load(Ordering::Relaxed),
                0,
                "{what}: per-pair FIFO order broken"
            );
            assert_eq!(
                self.delivered.load(Ordering::Relaxed),
                total,
                "{what}: a message was delivered twice"
            );
            for (r, node) in finals.iter().enumerate() {
                for (t, sent) in outside_sent.iter().enumerate() {
                    assert_eq!(
                        node.expect[t] - 1,
                        sent[r],
                        "{what}: thread {t} -> actor {r}"
                    );
                }
                for (s, sender) in finals.iter().enumerate() {
                    assert_eq!(
                        node.expect[OUTSIDE_THREADS + s] - 1,
                        sender.sent[r],
                        "{what}: actor {s} -> actor {r}"
                    );
                }
            }
        }
    }

    /// Starts [`OUTSIDE_THREADS`] threads, thread `t` sending messages (asking for a forward)
    /// to random actors of `addrs` while `more(n)` holds for its `n`-th (1-based); returns what
    /// each sent to each actor.
    pub fn send_from_outside(
        addrs: &[Addr<Node>],
        more: impl Fn(u64) -> bool + Clone + Send + 'static,
    ) -> Vec<Vec<u64>> {
        let threads: Vec<_> = (0..OUTSIDE_THREADS)
            .map(|t| {
                let (addrs, more) = (addrs.to_vec(), more.clone());
                std::thread::spawn(move || {
                    let mut rng = Rng::new(t as u64 + 1);
                    let mut sent = vec![0u64; ACTORS];
                    let mut n = 0;
                    while more(n + 1) {
                        n += 1;
                        let to = rng.below(ACTORS);
                        sent[to] += 1;
                        let m = Msg {
                            from: t,
                            seq: sent[to],
                            forward: true,
                        };
                        addrs[to].send(m).unwrap();
                    }
                    sent
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    }

    impl Actor for Node {}

    impl Receive<Msg> for Node {
        fn receive(&mut self, m: Msg, _: &mut Context<'_, Self>) -> Allocation {
            let s = &*self.shared;
            if s.busy[self.id].swap(true, Ordering::SeqCst) {
                s.overlaps.fetch_add(1, Ordering::Relaxed);
            }
            if m.seq != self.expect[m.from] {
                s.order_violations.fetch_add(1, Ordering::Relaxed);
            }
            self.expect[m.from] = m.seq + 1;
            if m.forward {
                let to = self.rng.below(ACTORS);
                self.sent[to] += 1;
                let fwd = Msg {
                    from: OUTSIDE_THREADS + self.id,
                    seq: self.sent[to],
                    forward: false,
                };
                s.addrs.get().unwrap()[to].send(fwd).unwrap();
            }
            // Give other workers a chance to overlap, if the executor allowed it.
            if m.seq % 64 == 0 {
                std::hint::spin_loop();
            }
            s.busy[self.id].store(false, Ordering::SeqCst);
            s.delivered.fetch_add(1, Ordering::Relaxed);
            Allocation::Nodelete
        }
    }
}

/// An actor whose behaviour runs a scope with one task and waits until another worker has
/// taken that task (so the behaviour's worker never pops it), then says whether one did.
/// The behaviour's worker is left showing tasks it no longer has, until it next looks at its
/// deque (fork/join tests of how workers end and sleep after that).
pub struct TaskGiver(pub mpsc::Sender<bool>);

impl Actor for TaskGiver {}

impl Receive<()> for TaskGiver {
    fn receive(&mut self, _: (), ctx: &mut Context<'_, Self>) -> Allocation {
        let taken = std::sync::atomic::AtomicBool::new(false);
        let me = std::thread::current().id();
        ctx.scope(|s| {
            s.spawn(|_| taken.store(std::thread::current().id() != me, Ordering::SeqCst));
            // Until the other worker has taken the task (bounded: on a loaded machine the
            // thief may come late; the caller then checks less, never wrongly).
            let t0 = std::time::Instant::now();
            while !taken.load(Ordering::SeqCst) && t0.elapsed() < Duration::from_secs(2) {
                std::hint::spin_loop();
            }
        });
        let _ = self.0.send(taken.load(Ordering::SeqCst));
        Allocation::Nodelete
    }
}

/// A port on 127.0.0.1 that nothing listens on now, for a node to listen on (the tests that
/// must give a node's port to another before it listens). Chosen at random below 32768, where
/// the system's own ports for outgoing connections (32768–60999 on Linux, 49152 and up
/// elsewhere) never come from: a port that `bind(0)` frees could be taken by another test's
/// outgoing connection before the node listens on it. Never the same port twice in one test
/// binary (its tests run at once).
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static DRAWS: AtomicU64 = AtomicU64::new(0);
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        ^ u64::from(std::process::id()) << 32
        ^ DRAWS
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut rng = Rng::new(seed | 1);
    let mut given = GIVEN.lock().unwrap_or_else(|p| p.into_inner());
    let mut last = None;
    for _ in 0..1_000 {
        let port = 20_000 + (rng.next() % 12_768) as u16;
        if given.contains(&port) {
            continue;
        }
        match std::net::TcpListener::bind(("127.0.0.1", port)) {
            Ok(_) => {
                given.push(port);
                return port;
            }
            Err(e) => last = Some(e),
        }
    }
    panic!("no free port on 127.0.0.1 below 32768 in 1,000 tries: {last:?}")
}
