//! The workloads on actix 0.13: `T` arbiters (one OS thread each) inside an `actix::System`
//! whose runner drives the workload from the calling thread; every actor is started with
//! `start_in_arbiter` on the next arbiter in round-robin order of creation (across the whole
//! run, also for actors created by actors); messages are sent with `do_send`; actors end with
//! `ctx.stop()` (from outside: a `Stop` message whose handler calls it).
//!
//! Two systems: `actix` runs with `T` arbiters; `actix-1` runs every actor on one arbiter
//! whatever `T` (the thread count the harness passes is ignored for placement): actix's usual
//! set-up, where the actors share one arbiter's event loop and every send stays on its thread.
//! Both are [`run`] with a different arbiter count; the workloads are the same.

use crate::common::{self, complement, row_sum, tiny, Bench, Done, XorShift};
use actix::prelude::*;
use actix::{ActorContext, Arbiter, ArbiterHandle, AsyncContext, System};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// Runs one workload on a fresh system with `arbiters` arbiters (`T` for `actix`, 1 for
/// `actix-1`); the clock starts once the arbiters run.
pub fn run(arbiters: usize, work: Bench) -> Result<(f64, u64), String> {
    let sys = System::new();
    let arbiters: Vec<Arbiter> = (0..arbiters).map(|_| Arbiter::new()).collect();
    let placer = Arc::new(Placer {
        arbiters: arbiters.iter().map(Arbiter::handle).collect(),
        next: AtomicUsize::new(0),
    });
    let result = sys.block_on(async move {
        let p = placer;
        let t0 = Instant::now();
        let sum = crate::common::run_workload!(work, &p)?;
        Ok((t0.elapsed().as_secs_f64(), sum))
    });
    // Stop every arbiter (dropping what is left on it) and join its thread.
    let mut panicked = false;
    for arbiter in arbiters {
        arbiter.stop();
        panicked |= arbiter.join().is_err();
    }
    System::current().stop();
    drop(sys);
    if panicked {
        return Err("actix: an arbiter thread panicked".into());
    }
    result
}

/// Starts actors on the arbiters round-robin, in creation order.
struct Placer {
    arbiters: Vec<ArbiterHandle>,
    next: AtomicUsize,
}

impl Placer {
    /// Starts the actor `make(its own address)` on the next arbiter.
    ///
    /// Every actor keeps its own `Addr`. Actix stops an actor once no `Addr` is left and its
    /// mailbox looked empty, but it checks the address count *after* polling the mailbox: a
    /// message pushed between that poll and the check by a sender that then drops the last
    /// `Addr` (as in `start(..).do_send(..)` on a just-started actor) is lost with the actor.
    /// Without the own `Addr`, counting and dynamic-send occasionally lost their first message
    /// and never finished. Here actors end only through `ctx.stop()`, as the workloads say.
    fn start<A, F>(&self, make: F) -> Addr<A>
    where
        A: Actor<Context = Context<A>>,
        F: FnOnce(Addr<A>) -> A + Send + 'static,
    {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.arbiters.len();
        A::start_in_arbiter(&self.arbiters[i], move |ctx| make(ctx.address()))
    }

    /// Starts `make()` on the next arbiter, without an address of its own: only for actors
    /// whose caller holds an `Addr` until they have handled their mail (`scale`).
    fn start_plain<A, F>(&self, make: F) -> Addr<A>
    where
        A: Actor<Context = Context<A>>,
        F: FnOnce() -> A + Send + 'static,
    {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.arbiters.len();
        A::start_in_arbiter(&self.arbiters[i], move |_| make())
    }
}

/// Messages without a result.
macro_rules! message {
    ($($t:ty),* $(,)?) => {$(
        impl Message for $t {
            type Result = ();
        }
    )*};
}

/// Actors with the default context.
macro_rules! actor {
    ($($t:ty),* $(,)?) => {$(
        impl Actor for $t {
            type Context = Context<Self>;
        }
    )*};
}

/// Ends the receiving actor (`ctx.stop()`).
struct Stop;
message!(Stop);

/// Implements `Handler<Stop>` for actors ended from outside.
macro_rules! stoppable {
    ($($t:ty),* $(,)?) => {$(
        impl Handler<Stop> for $t {
            type Result = ();

            fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
                ctx.stop();
            }
        }
    )*};
}

// ---- static-send ----------------------------------------------------------------------------
struct SelfSender {
    me: Addr<SelfSender>,
    n: u64,
    count: u64,
    done: Arc<Done>,
}
struct Tick;
actor!(SelfSender);
message!(Tick);

impl Handler<Tick> for SelfSender {
    type Result = ();

    fn handle(&mut self, t: Tick, ctx: &mut Context<Self>) {
        self.count += 1;
        if self.count < self.n {
            self.me.do_send(t);
        } else {
            self.done.report(self.count);
            ctx.stop();
        }
    }
}

async fn static_send(p: &Placer, n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let a = p.start(move |me| SelfSender {
        me,
        n,
        count: 0,
        done,
    });
    a.do_send(Tick);
    drop(a);
    common::wait(rx).await
}

// ---- dynamic-send ---------------------------------------------------------------------------
struct Hop {
    _me: Addr<Hop>,
    placer: Arc<Placer>,
    done: Arc<Done>,
}
/// `Go(k, n)`.
struct Go(u64, u64);
actor!(Hop);
message!(Go);

impl Handler<Go> for Hop {
    type Result = ();

    fn handle(&mut self, Go(k, n): Go, ctx: &mut Context<Self>) {
        if k < n {
            let (placer, done) = (self.placer.clone(), self.done.clone());
            let next = self.placer.start(move |_me| Hop { _me, placer, done });
            next.do_send(Go(k + 1, n));
        } else {
            self.done.report(k);
        }
        ctx.stop();
    }
}

async fn dynamic_send(p: &Arc<Placer>, n: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let placer = p.clone();
    let first = p.start(move |_me| Hop { _me, placer, done });
    first.do_send(Go(1, n));
    drop(first);
    common::wait(rx).await
}

// ---- executor -------------------------------------------------------------------------------
type Group = Arc<OnceLock<Vec<Addr<Member>>>>;

struct Member {
    _me: Addr<Member>,
    group: Group,
    local: u64,
    size: u64,
    /// R = rounds * group.
    total: u64,
    sent: u64,
    recv: u64,
    done: Arc<Done>,
}
struct ExecMsg;
actor!(Member);
message!(ExecMsg);

impl Handler<ExecMsg> for Member {
    type Result = ();

    fn handle(&mut self, m: ExecMsg, ctx: &mut Context<Self>) {
        self.recv += 1;
        if self.sent < self.total {
            let to = (self.local + self.sent) % self.size;
            self.group.get().expect("group set")[to as usize].do_send(m);
            self.sent += 1;
        }
        if self.recv == self.total + 1 {
            self.done.report(self.recv);
            ctx.stop();
        }
    }
}

async fn executor(p: &Placer, actors: u64, size: u64, rounds: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(actors);
    let mut all = Vec::with_capacity(actors as usize);
    let mut groups: Vec<Group> = Vec::new();
    for i in 0..actors {
        if i % size == 0 {
            groups.push(Arc::new(OnceLock::new()));
        }
        let (group, done) = (groups.last().expect("a group").clone(), done.clone());
        all.push(p.start(move |_me| Member {
            _me,
            group,
            local: i % size,
            size,
            total: rounds * size,
            sent: 0,
            recv: 0,
            done,
        }));
    }
    drop(done);
    let size = size as usize;
    for (g, lock) in groups.iter().enumerate() {
        let _ = lock.set(all[g * size..(g + 1) * size].to_vec());
    }
    for a in &all {
        a.do_send(ExecMsg);
    }
    drop((all, groups));
    common::wait(rx).await
}

// ---- repeat ---------------------------------------------------------------------------------
struct Client {
    _me: Addr<Client>,
    servers: Vec<Addr<Server>>,
    reps_left: u64,
    pending: u64,
    sum: u64,
    done: Arc<Done>,
}
struct Server {
    _me: Addr<Server>,
    index: u64,
    client: Addr<Client>,
}
struct Servers(Vec<Addr<Server>>);
struct Start;
struct Req;
struct Rep(u64);
actor!(Client, Server);
message!(Servers, Start, Req, Rep);
stoppable!(Server);

impl Client {
    fn scatter(&mut self) {
        self.pending = self.servers.len() as u64;
        for s in &self.servers {
            s.do_send(Req);
        }
    }
}

impl Handler<Servers> for Client {
    type Result = ();

    fn handle(&mut self, Servers(list): Servers, _: &mut Context<Self>) {
        self.servers = list;
    }
}

impl Handler<Start> for Client {
    type Result = ();

    fn handle(&mut self, _: Start, _: &mut Context<Self>) {
        self.scatter();
    }
}

impl Handler<Rep> for Client {
    type Result = ();

    fn handle(&mut self, Rep(index): Rep, ctx: &mut Context<Self>) {
        self.sum += index + 1;
        self.pending -= 1;
        if self.pending == 0 {
            self.reps_left -= 1;
            if self.reps_left == 0 {
                for s in self.servers.drain(..) {
                    s.do_send(Stop);
                }
                self.done.report(self.sum);
                ctx.stop();
            } else {
                self.scatter();
            }
        }
    }
}

impl Handler<Req> for Server {
    type Result = ();

    fn handle(&mut self, _: Req, _: &mut Context<Self>) {
        self.client.do_send(Rep(self.index));
    }
}

async fn repeat(p: &Placer, servers: u64, reps: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let client = p.start(move |_me| Client {
        _me,
        servers: Vec::new(),
        reps_left: reps,
        pending: 0,
        sum: 0,
        done,
    });
    let list = (0..servers)
        .map(|index| {
            let client = client.clone();
            p.start(move |_me| Server { _me, index, client })
        })
        .collect();
    client.do_send(Servers(list));
    client.do_send(Start);
    drop(client);
    common::wait(rx).await
}

// ---- matrix ---------------------------------------------------------------------------------
struct RowWorker {
    _me: Addr<RowWorker>,
    x: Arc<Vec<u64>>,
    y: Arc<Vec<u64>>,
    n: usize,
    done: Arc<Done>,
}
struct Row(usize);
actor!(RowWorker);
message!(Row);

impl Handler<Row> for RowWorker {
    type Result = ();

    fn handle(&mut self, Row(i): Row, ctx: &mut Context<Self>) {
        self.done.report(row_sum(&self.x, &self.y, self.n, i));
        ctx.stop();
    }
}

async fn matrix(p: &Placer, n: usize, x: Arc<Vec<u64>>, y: Arc<Vec<u64>>) -> Result<u64, String> {
    let (done, rx) = Done::new(n as u64);
    for i in 0..n {
        let (x, y, done) = (x.clone(), y.clone(), done.clone());
        let w = p.start(move |_me| RowWorker { _me, x, y, n, done });
        w.do_send(Row(i));
    }
    drop(done);
    common::wait(rx).await
}

// The workloads of the Savina suite (the set-up above is shared; macros are defined first).
mod pipelines;
mod savina_concurrency;
mod savina_micro;
mod savina_puzzles;
use pipelines::*;
use savina_concurrency::*;
use savina_micro::*;
use savina_puzzles::*;
