//! The backpressure benchmark's pipes on the Rust peers (`actorium-bench backpressure`): a fast
//! producer sends `0..n` to a slow consumer whose mailbox (or channel) holds at most
//! `capacity` messages, waiting whenever it is full, (1) from an outside thread and (2) from a
//! producer actor (or task) of the same system. The consumer does [`work`] per message and
//! reports the sum after the last one. The measurement loop is the harness's; see
//! `actorium-bench/src/backpressure.rs`.

use crate::common::{runtime, tiny, ActixThread};
use std::sync::mpsc as std_mpsc;

/// A started consumer, and how to feed it.
pub trait Pipe {
    /// Sends `0..n` from the calling thread, waiting while the consumer is full; returns the
    /// consumer's checksum once it has handled all `n`.
    fn feed_from_thread(&mut self, n: u64) -> u64;
    /// The same from a producer actor (or task) of the system.
    fn feed_from_actor(&mut self, n: u64) -> u64;
}

/// The Rust peers that have a bounded mailbox (or channel).
pub const SYSTEMS: &[&str] = &["tokio-mpsc", "actix", "kameo"];

/// The slow consumer's work per message (64 modular steps: a few hundred nanoseconds).
#[inline]
pub fn work(x: u64) -> u64 {
    (0..64).fold(x, tiny)
}

/// The checksum of `0..n`.
pub fn expected(n: u64) -> u64 {
    (0..n).fold(0u64, |s, x| s.wrapping_add(work(x)))
}

/// Sums the work of the messages of one phase (`0..n`, in order) and reports the sum after
/// the last, then starts over.
pub struct Tally {
    sum: u64,
    next: u64,
    n: u64,
    done: std_mpsc::Sender<u64>,
}

impl Tally {
    pub fn new(done: std_mpsc::Sender<u64>) -> Self {
        Self {
            sum: 0,
            next: 0,
            n: 0,
            done,
        }
    }

    /// Handles `(x, n)`: message `x` of a phase of `n`.
    pub fn take(&mut self, x: u64, n: u64) {
        assert_eq!(x, self.next, "out of order");
        self.n = n;
        self.sum = self.sum.wrapping_add(work(x));
        self.next += 1;
        if self.next == self.n {
            let _ = self.done.send(self.sum);
            *self = Tally::new(self.done.clone());
        }
    }
}

/// Starts `system`'s consumer with `threads` threads and a bound of `capacity`.
pub fn start(system: &str, threads: usize, capacity: usize) -> Result<Box<dyn Pipe>, String> {
    Ok(match system {
        "tokio-mpsc" => Box::new(tokio_pipe::start(threads, capacity)?),
        "actix" => Box::new(actix_pipe::start(capacity)?),
        "kameo" => Box::new(kameo_pipe::start(threads, capacity)?),
        other => return Err(format!("no backpressure pipe for `{other}`")),
    })
}

mod tokio_pipe {
    use super::*;
    use tokio::sync::mpsc;

    pub struct P {
        tx: mpsc::Sender<(u64, u64)>,
        done: std_mpsc::Receiver<u64>,
        rt: tokio::runtime::Runtime,
    }

    pub fn start(threads: usize, capacity: usize) -> Result<P, String> {
        let rt = runtime(threads)?;
        let (tx, mut rx) = mpsc::channel::<(u64, u64)>(capacity);
        let (done_tx, done) = std_mpsc::channel();
        rt.spawn(async move {
            let mut tally = Tally::new(done_tx);
            while let Some((x, n)) = rx.recv().await {
                tally.take(x, n);
            }
        });
        Ok(P { tx, done, rt })
    }

    impl Pipe for P {
        fn feed_from_thread(&mut self, n: u64) -> u64 {
            for x in 0..n {
                self.tx.blocking_send((x, n)).expect("consumer runs");
            }
            self.done.recv().expect("a sum")
        }

        fn feed_from_actor(&mut self, n: u64) -> u64 {
            let tx = self.tx.clone();
            self.rt.spawn(async move {
                for x in 0..n {
                    tx.send((x, n)).await.expect("consumer runs");
                }
            });
            self.done.recv().expect("a sum")
        }
    }
}

mod actix_pipe {
    use super::*;
    use actix::prelude::*;

    struct Consumer {
        tally: Tally,
        capacity: usize,
    }
    impl Actor for Consumer {
        type Context = Context<Self>;
        fn started(&mut self, ctx: &mut Context<Self>) {
            ctx.set_mailbox_capacity(self.capacity);
        }
    }
    #[derive(Message)]
    #[rtype(result = "()")]
    struct Item(u64, u64);
    impl Handler<Item> for Consumer {
        type Result = ();
        fn handle(&mut self, Item(x, n): Item, _: &mut Context<Self>) {
            self.tally.take(x, n);
        }
    }

    /// Sends its phase with `send(..).await` (actix's send that waits for mailbox room; it
    /// also waits for the handler's `()`).
    struct Producer(Addr<Consumer>);
    impl Actor for Producer {
        type Context = Context<Self>;
    }
    #[derive(Message)]
    #[rtype(result = "()")]
    struct Run(u64);
    impl Handler<Run> for Producer {
        type Result = ResponseFuture<()>;
        fn handle(&mut self, Run(n): Run, _: &mut Context<Self>) -> Self::Result {
            let c = self.0.clone();
            Box::pin(async move {
                for x in 0..n {
                    c.send(Item(x, n)).await.expect("consumer runs");
                }
            })
        }
    }

    pub struct P {
        consumer: Addr<Consumer>,
        producer: Addr<Producer>,
        done: std_mpsc::Receiver<u64>,
        _system: ActixThread,
    }

    /// Both actors on the system's one arbiter (actix runs an actor on one thread).
    pub fn start(capacity: usize) -> Result<P, String> {
        let (done_tx, done) = std_mpsc::channel();
        let (system, (consumer, producer)) = ActixThread::start(move || {
            let c = Consumer {
                tally: Tally::new(done_tx),
                capacity,
            }
            .start();
            (c.clone(), Producer(c).start())
        })?;
        Ok(P {
            consumer,
            producer,
            done,
            _system: system,
        })
    }

    impl Pipe for P {
        /// actix has no blocking send: `try_send`, yielding the thread while the mailbox is
        /// full (its `send` future would also wait for each reply).
        fn feed_from_thread(&mut self, n: u64) -> u64 {
            for x in 0..n {
                let mut item = Item(x, n);
                loop {
                    match self.consumer.try_send(item) {
                        Ok(()) => break,
                        Err(SendError::Full(back)) => {
                            item = back;
                            std::thread::yield_now();
                        }
                        Err(SendError::Closed(_)) => panic!("consumer stopped"),
                    }
                }
            }
            self.done.recv().expect("a sum")
        }

        fn feed_from_actor(&mut self, n: u64) -> u64 {
            self.producer.do_send(Run(n));
            self.done.recv().expect("a sum")
        }
    }
}

mod kameo_pipe {
    use super::*;
    use kameo::actor::{ActorRef, Spawn};
    use kameo::error::Infallible;
    use kameo::mailbox;
    use kameo::message::{Context, Message};
    use kameo::Actor;

    struct Consumer(Tally);
    impl Actor for Consumer {
        type Args = Self;
        type Error = Infallible;
        async fn on_start(args: Self, _: ActorRef<Self>) -> Result<Self, Infallible> {
            Ok(args)
        }
    }
    struct Item(u64, u64);
    impl Message<Item> for Consumer {
        type Reply = ();
        async fn handle(&mut self, Item(x, n): Item, _: &mut Context<Self, ()>) {
            self.0.take(x, n);
        }
    }

    /// Sends its phase with `tell(..).await`, which waits for room in a bounded mailbox.
    struct Producer(ActorRef<Consumer>);
    impl Actor for Producer {
        type Args = Self;
        type Error = Infallible;
        async fn on_start(args: Self, _: ActorRef<Self>) -> Result<Self, Infallible> {
            Ok(args)
        }
    }
    struct Run(u64);
    impl Message<Run> for Producer {
        type Reply = ();
        async fn handle(&mut self, Run(n): Run, _: &mut Context<Self, ()>) {
            for x in 0..n {
                self.0.tell(Item(x, n)).await.expect("consumer runs");
            }
        }
    }

    pub struct P {
        consumer: ActorRef<Consumer>,
        producer: ActorRef<Producer>,
        done: std_mpsc::Receiver<u64>,
        _rt: tokio::runtime::Runtime,
    }

    pub fn start(threads: usize, capacity: usize) -> Result<P, String> {
        let rt = runtime(threads)?;
        let (done_tx, done) = std_mpsc::channel();
        let (consumer, producer) = rt.block_on(async {
            let c = Consumer::spawn_with_mailbox(
                Consumer(Tally::new(done_tx)),
                mailbox::bounded(capacity),
            );
            let p = Producer::spawn_with_mailbox(Producer(c.clone()), mailbox::unbounded());
            (c, p)
        });
        Ok(P {
            consumer,
            producer,
            done,
            _rt: rt,
        })
    }

    impl Pipe for P {
        fn feed_from_thread(&mut self, n: u64) -> u64 {
            for x in 0..n {
                self.consumer
                    .tell(Item(x, n))
                    .blocking_send()
                    .expect("consumer runs");
            }
            self.done.recv().expect("a sum")
        }

        fn feed_from_actor(&mut self, n: u64) -> u64 {
            self.producer
                .tell(Run(n))
                .blocking_send()
                .expect("producer runs");
            self.done.recv().expect("a sum")
        }
    }
}
