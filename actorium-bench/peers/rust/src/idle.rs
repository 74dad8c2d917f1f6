//! The idle benchmarks' servers on the Rust peers (`actorium-bench idle`): a runtime with one
//! actor (or task) that records, for every ping an outside thread sends it, the time from the
//! send to its handler. The measurement loop is the harness's; see `actorium-bench/src/idle.rs`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Latencies recorded by a server's handler (µs), in arrival order.
#[derive(Default)]
pub struct Latencies {
    v: Mutex<Vec<f64>>,
    n: AtomicUsize,
}

impl Latencies {
    /// A ping sent at `sent` reached the handler now.
    pub fn record(&self, sent: Instant) {
        let us = sent.elapsed().as_secs_f64() * 1e6;
        self.v.lock().unwrap().push(us);
        self.n.fetch_add(1, Ordering::Release);
    }

    /// Pings received so far.
    pub fn count(&self) -> usize {
        self.n.load(Ordering::Acquire)
    }

    /// Takes the recorded latencies.
    pub fn take(&self) -> Vec<f64> {
        std::mem::take(&mut *self.v.lock().unwrap())
    }
}

/// A started server: pings go to its one actor from the calling (outside) thread.
pub trait Server {
    fn ping(&self, sent: Instant);
}

/// The Rust peers that have an idle server.
pub const SYSTEMS: &[&str] = &["tokio-mpsc", "actix", "ractor", "kameo"];

/// Starts `system`'s server with `threads` threads.
pub fn server(
    system: &str,
    threads: usize,
    lat: Arc<Latencies>,
) -> Result<Box<dyn Server>, String> {
    Ok(match system {
        "tokio-mpsc" => Box::new(tokio_server::start(threads, lat)?),
        "actix" => Box::new(actix_server::start(threads, lat)?),
        "ractor" => Box::new(ractor_server::start(threads, lat)?),
        "kameo" => Box::new(kameo_server::start(threads, lat)?),
        other => return Err(format!("no idle server for `{other}`")),
    })
}

use crate::common::{runtime, ActixThread};

mod tokio_server {
    use super::*;
    use tokio::sync::mpsc;

    pub struct S {
        tx: mpsc::UnboundedSender<Instant>,
        _rt: tokio::runtime::Runtime,
    }

    pub fn start(threads: usize, lat: Arc<Latencies>) -> Result<S, String> {
        let rt = runtime(threads)?;
        let (tx, mut rx) = mpsc::unbounded_channel::<Instant>();
        rt.spawn(async move {
            while let Some(t) = rx.recv().await {
                lat.record(t);
            }
        });
        Ok(S { tx, _rt: rt })
    }

    impl Server for S {
        fn ping(&self, sent: Instant) {
            self.tx.send(sent).expect("server task runs");
        }
    }
}

mod actix_server {
    use super::*;
    use actix::prelude::*;

    struct Srv(Arc<Latencies>);
    impl Actor for Srv {
        type Context = Context<Self>;
    }
    #[derive(Message)]
    #[rtype(result = "()")]
    struct Ping(Instant);
    impl Handler<Ping> for Srv {
        type Result = ();
        fn handle(&mut self, p: Ping, _: &mut Context<Self>) {
            self.0.record(p.0);
        }
    }

    pub struct S {
        addr: Addr<Srv>,
        _system: ActixThread,
    }

    /// actix's usual set-up: a system on its own thread, the actor on an arbiter of it (one
    /// arbiter: actix runs an actor on one thread whatever the thread count).
    pub fn start(_threads: usize, lat: Arc<Latencies>) -> Result<S, String> {
        let (system, addr) = ActixThread::start(move || Srv(lat).start())?;
        Ok(S {
            addr,
            _system: system,
        })
    }

    impl Server for S {
        fn ping(&self, sent: Instant) {
            self.addr.do_send(Ping(sent));
        }
    }
}

mod ractor_server {
    use super::*;
    use ractor::{Actor, ActorProcessingErr, ActorRef};

    struct Srv;
    impl Actor for Srv {
        type Msg = Instant;
        type State = Arc<Latencies>;
        type Arguments = Arc<Latencies>;
        async fn pre_start(
            &self,
            _: ActorRef<Instant>,
            lat: Arc<Latencies>,
        ) -> Result<Arc<Latencies>, ActorProcessingErr> {
            Ok(lat)
        }
        async fn handle(
            &self,
            _: ActorRef<Instant>,
            t: Instant,
            lat: &mut Arc<Latencies>,
        ) -> Result<(), ActorProcessingErr> {
            lat.record(t);
            Ok(())
        }
    }

    pub struct S {
        actor: ActorRef<Instant>,
        _rt: tokio::runtime::Runtime,
    }

    pub fn start(threads: usize, lat: Arc<Latencies>) -> Result<S, String> {
        let rt = runtime(threads)?;
        let (actor, _) = rt
            .block_on(Srv::spawn(None, Srv, lat))
            .map_err(|e| format!("ractor: {e}"))?;
        Ok(S { actor, _rt: rt })
    }

    impl Server for S {
        fn ping(&self, sent: Instant) {
            self.actor.cast(sent).expect("server actor runs");
        }
    }
}

mod kameo_server {
    use super::*;
    use kameo::actor::{ActorRef, Spawn};
    use kameo::error::Infallible;
    use kameo::mailbox;
    use kameo::message::{Context, Message};
    use kameo::Actor;

    struct Srv(Arc<Latencies>);
    impl Actor for Srv {
        type Args = Self;
        type Error = Infallible;
        async fn on_start(args: Self, _: ActorRef<Self>) -> Result<Self, Infallible> {
            Ok(args)
        }
    }
    struct Ping(Instant);
    impl Message<Ping> for Srv {
        type Reply = ();
        async fn handle(&mut self, p: Ping, _: &mut Context<Self, ()>) {
            self.0.record(p.0);
        }
    }

    pub struct S {
        actor: ActorRef<Srv>,
        _rt: tokio::runtime::Runtime,
    }

    pub fn start(threads: usize, lat: Arc<Latencies>) -> Result<S, String> {
        let rt = runtime(threads)?;
        let actor =
            rt.block_on(async move { Srv::spawn_with_mailbox(Srv(lat), mailbox::unbounded()) });
        Ok(S { actor, _rt: rt })
    }

    impl Server for S {
        fn ping(&self, sent: Instant) {
            if self.actor.tell(Ping(sent)).try_send().is_err() {
                panic!("kameo: the server actor stopped");
            }
        }
    }
}
