//! Supervision: a supervision tree whose workers crash on bad input and are restarted in
//! place, keeping their address and the mail that waited for them; a flaky cache that gives up
//! is escalated to the top supervisor, which restarts the whole subtree. Events (restarts,
//! panics) go to a hook. `cargo run --example supervision`.

use actorium::{
    Actor, ActorSystem, Allocation, Ask, Context, Event, ExitReason, Receive, Restart, Strategy,
    Supervisor,
};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Parses numbers; panics on anything else (let it crash).
struct Parser {
    incarnation: u32,
}
impl Actor for Parser {}
impl Receive<Ask<&'static str, (u32, i64)>> for Parser {
    fn receive(
        &mut self,
        q: Ask<&'static str, (u32, i64)>,
        _: &mut Context<'_, Self>,
    ) -> Allocation {
        let n: i64 = q.msg.parse().expect("not a number");
        q.reply.send((self.incarnation, n)).ok();
        Allocation::Nodelete
    }
}

/// Its factory fails while the backend is "unavailable".
struct Cache;
impl Actor for Cache {}
impl Receive<Ask<(), &'static str>> for Cache {
    fn receive(&mut self, q: Ask<(), &'static str>, _: &mut Context<'_, Self>) -> Allocation {
        q.reply.send("cache ready").ok();
        Allocation::Nodelete
    }
}

fn main() {
    // The event hook below reports every caught panic: keep the default hook's copy quiet.
    std::panic::set_hook(Box::new(|_| {}));
    let system = ActorSystem::builder()
        .on_event(|e| match e {
            Event::ChildRestarted {
                child, id, reason, ..
            } => {
                println!("  [event] restart {child} {id}: {reason}")
            }
            Event::SupervisorGaveUp {
                child,
                restarts,
                period,
                ..
            } => {
                println!(
                    "  [event] gave up on {child}: more than {restarts} restarts in {period:?}"
                )
            }
            Event::Panic { message, .. } => println!("  [event] panic caught: {message}"),
            _ => {}
        })
        .build()
        .unwrap();

    // top (one-for-one, 1 restart in 5 s, Erlang's default)
    // ├── parsers (one-for-one, 10 restarts in 1 s): two parsers
    // └── caches (one-for-all, 2 restarts in 1 s): a cache that fails its first 3 starts
    let top = system.spawn(Supervisor::new(Strategy::OneForOne));
    let top_down = top.monitor();
    let parsers = top
        .supervise_supervisor(
            Restart::Permanent,
            Supervisor::new(Strategy::OneForOne).intensity(10, Duration::from_secs(1)),
        )
        .unwrap();
    let starts = Arc::new(AtomicU32::new(0));
    let counter = starts.clone();
    let parser = parsers
        .supervise(Restart::Permanent, move || Parser {
            incarnation: counter.fetch_add(1, Ordering::SeqCst) + 1,
        })
        .unwrap();

    println!("asking the parser:");
    for input in ["1", "oops", "2", "x", "3"] {
        match parser.ask(input).unwrap().wait() {
            Ok((inc, n)) => println!("  {input:>4} -> {n} (incarnation {inc})"),
            Err(e) => println!("  {input:>4} -> no answer: {e}"),
        }
    }

    println!("a cache that fails its first three starts:");
    let caches = top
        .supervise_supervisor(
            Restart::Permanent,
            Supervisor::new(Strategy::OneForAll).intensity(2, Duration::from_secs(1)),
        )
        .unwrap();
    let failures = Arc::new(AtomicU32::new(3));
    let f = failures.clone();
    let cache = caches
        .supervise(Restart::Permanent, move || {
            if f.load(Ordering::SeqCst) > 0 {
                f.fetch_sub(1, Ordering::SeqCst);
                panic!("cache backend unavailable");
            }
            Cache
        })
        .unwrap();
    // Its supervisor gives up after 3 failures; the top supervisor restarts it (its first
    // restart in 5 s), which restarts the cache: the fourth try works. This question waits in
    // the cache's cell through all of it, and the fourth incarnation answers it.
    let down = cache.monitor();
    println!("  asked meanwhile: {:?}", cache.ask(()).unwrap().wait());
    assert_eq!(failures.load(Ordering::SeqCst), 0);

    system.shutdown(); // ends the tree: supervisors restart nothing during shutdown
    println!("cache ended: {:?}", down.wait().unwrap());
    assert_eq!(top_down.wait().unwrap(), ExitReason::Shutdown);
    println!("parser incarnations: {}", starts.load(Ordering::SeqCst));
}
