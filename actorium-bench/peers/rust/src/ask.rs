//! The ask benchmark's servers on the Rust peers (`actorium-bench ask`): one server actor (or
//! task) that answers `x` with `x + 1`, asked (1) from an outside thread, one request at a time,
//! in each library's documented way for synchronous code, and (2) by a client actor from
//! inside its handler, one request at a time (each library's request/reply inside an actor).
//! The measurement loop is the harness's; see `actorium-bench/src/ask.rs`.

use std::sync::Arc;

/// A started server (and client actor).
pub trait AskServer {
    /// One request from the calling (outside) thread; returns the reply.
    fn ask(&self, x: u64) -> u64;
    /// `n` sequential requests from the client actor to the server actor, from inside the
    /// client's handler; returns the sum of the replies.
    fn actor_asks(&self, n: u64) -> u64;
}

/// The Rust peers that have an ask server.
pub const SYSTEMS: &[&str] = &["tokio-mpsc", "actix", "ractor", "kameo"];

/// Starts `system`'s server with `threads` threads.
pub fn server(system: &str, threads: usize) -> Result<Box<dyn AskServer>, String> {
    Ok(match system {
        "tokio-mpsc" => Box::new(tokio_server::start(threads)?),
        "actix" => Box::new(actix_server::start()?),
        "ractor" => Box::new(ractor_server::start(threads)?),
        "kameo" => Box::new(kameo_server::start(threads)?),
        other => return Err(format!("no ask server for `{other}`")),
    })
}

use crate::common::{runtime, ActixThread};

mod tokio_server {
    use super::*;
    use tokio::sync::{mpsc, oneshot};

    type Req = (u64, oneshot::Sender<u64>);

    pub struct S {
        tx: mpsc::UnboundedSender<Req>,
        rt: tokio::runtime::Runtime,
    }

    pub fn start(threads: usize) -> Result<S, String> {
        let rt = runtime(threads)?;
        let (tx, mut rx) = mpsc::unbounded_channel::<Req>();
        rt.spawn(async move {
            while let Some((x, reply)) = rx.recv().await {
                let _ = reply.send(x + 1);
            }
        });
        Ok(S { tx, rt })
    }

    impl AskServer for S {
        fn ask(&self, x: u64) -> u64 {
            let (reply, rx) = oneshot::channel();
            self.tx.send((x, reply)).expect("server task runs");
            rx.blocking_recv().expect("a reply")
        }

        fn actor_asks(&self, n: u64) -> u64 {
            let tx = self.tx.clone();
            let client = self.rt.spawn(async move {
                let mut sum = 0;
                for x in 0..n {
                    let (reply, rx) = oneshot::channel();
                    tx.send((x, reply)).expect("server task runs");
                    sum += rx.await.expect("a reply");
                }
                sum
            });
            self.rt.block_on(client).expect("client task")
        }
    }
}

mod actix_server {
    use super::*;
    use actix::prelude::*;
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context as TaskContext, Poll, Wake, Waker};

    struct Srv;
    impl Actor for Srv {
        type Context = Context<Self>;
    }
    #[derive(Message)]
    #[rtype(result = "u64")]
    struct Req(u64);
    impl Handler<Req> for Srv {
        type Result = u64;
        fn handle(&mut self, r: Req, _: &mut Context<Self>) -> u64 {
            r.0 + 1
        }
    }

    struct Client(Addr<Srv>);
    impl Actor for Client {
        type Context = Context<Self>;
    }
    #[derive(Message)]
    #[rtype(result = "u64")]
    struct Run(u64);
    impl Handler<Run> for Client {
        type Result = ResponseFuture<u64>;
        fn handle(&mut self, r: Run, _: &mut Context<Self>) -> Self::Result {
            let srv = self.0.clone();
            Box::pin(async move {
                let mut sum = 0;
                for x in 0..r.0 {
                    sum += srv.send(Req(x)).await.expect("a reply");
                }
                sum
            })
        }
    }

    pub struct S {
        srv: Addr<Srv>,
        client: Addr<Client>,
        _system: ActixThread,
    }

    /// actix's best configuration for this: both actors on the system's one arbiter (actix
    /// runs an actor on one thread whatever the thread count; see the suite's `actix-1`).
    pub fn start() -> Result<S, String> {
        let (system, (srv, client)) = ActixThread::start(|| {
            let srv = Srv.start();
            (srv.clone(), Client(srv).start())
        })?;
        Ok(S {
            srv,
            client,
            _system: system,
        })
    }

    /// Polls `f` on the calling thread, parking it until woken (actix has no blocking send).
    fn block_on<F: Future>(f: F) -> F::Output {
        struct Unpark(std::thread::Thread);
        impl Wake for Unpark {
            fn wake(self: Arc<Self>) {
                self.0.unpark();
            }
        }
        let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
        let mut cx = TaskContext::from_waker(&waker);
        let mut f = pin!(f);
        loop {
            if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                return v;
            }
            std::thread::park();
        }
    }

    impl AskServer for S {
        fn ask(&self, x: u64) -> u64 {
            block_on(self.srv.send(Req(x))).expect("a reply")
        }

        fn actor_asks(&self, n: u64) -> u64 {
            block_on(self.client.send(Run(n))).expect("a reply")
        }
    }
}

mod ractor_server {
    use super::*;
    use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

    struct Srv;
    impl Actor for Srv {
        type Msg = (u64, RpcReplyPort<u64>);
        type State = ();
        type Arguments = ();
        async fn pre_start(&self, _: ActorRef<Self::Msg>, _: ()) -> Result<(), ActorProcessingErr> {
            Ok(())
        }
        async fn handle(
            &self,
            _: ActorRef<Self::Msg>,
            (x, reply): Self::Msg,
            _: &mut (),
        ) -> Result<(), ActorProcessingErr> {
            let _ = reply.send(x + 1);
            Ok(())
        }
    }

    struct Client;
    impl Actor for Client {
        type Msg = (u64, RpcReplyPort<u64>);
        type State = ActorRef<(u64, RpcReplyPort<u64>)>;
        type Arguments = ActorRef<(u64, RpcReplyPort<u64>)>;
        async fn pre_start(
            &self,
            _: ActorRef<Self::Msg>,
            srv: Self::Arguments,
        ) -> Result<Self::State, ActorProcessingErr> {
            Ok(srv)
        }
        async fn handle(
            &self,
            _: ActorRef<Self::Msg>,
            (n, reply): Self::Msg,
            srv: &mut Self::State,
        ) -> Result<(), ActorProcessingErr> {
            let mut sum = 0;
            for x in 0..n {
                sum += ractor::call!(srv, |rp| (x, rp)).expect("a reply");
            }
            let _ = reply.send(sum);
            Ok(())
        }
    }

    pub struct S {
        srv: ActorRef<(u64, RpcReplyPort<u64>)>,
        client: ActorRef<(u64, RpcReplyPort<u64>)>,
        rt: tokio::runtime::Runtime,
    }

    pub fn start(threads: usize) -> Result<S, String> {
        let rt = runtime(threads)?;
        let (srv, client) = rt.block_on(async {
            let (srv, _) = Srv::spawn(None, Srv, ())
                .await
                .map_err(|e| format!("ractor: {e}"))?;
            let (client, _) = Client::spawn(None, Client, srv.clone())
                .await
                .map_err(|e| format!("ractor: {e}"))?;
            Ok::<_, String>((srv, client))
        })?;
        Ok(S { srv, client, rt })
    }

    impl AskServer for S {
        fn ask(&self, x: u64) -> u64 {
            self.rt
                .block_on(async { ractor::call!(self.srv, |rp| (x, rp)) })
                .expect("a reply")
        }

        fn actor_asks(&self, n: u64) -> u64 {
            self.rt
                .block_on(async { ractor::call!(self.client, |rp| (n, rp)) })
                .expect("a reply")
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

    struct Srv;
    impl Actor for Srv {
        type Args = Self;
        type Error = Infallible;
        async fn on_start(args: Self, _: ActorRef<Self>) -> Result<Self, Infallible> {
            Ok(args)
        }
    }
    struct Req(u64);
    impl Message<Req> for Srv {
        type Reply = u64;
        async fn handle(&mut self, r: Req, _: &mut Context<Self, u64>) -> u64 {
            r.0 + 1
        }
    }

    struct Client(ActorRef<Srv>);
    impl Actor for Client {
        type Args = Self;
        type Error = Infallible;
        async fn on_start(args: Self, _: ActorRef<Self>) -> Result<Self, Infallible> {
            Ok(args)
        }
    }
    struct Run(u64);
    impl Message<Run> for Client {
        type Reply = u64;
        async fn handle(&mut self, r: Run, _: &mut Context<Self, u64>) -> u64 {
            let mut sum = 0;
            for x in 0..r.0 {
                sum += self.0.ask(Req(x)).await.expect("a reply");
            }
            sum
        }
    }

    pub struct S {
        srv: ActorRef<Srv>,
        client: ActorRef<Client>,
        rt: tokio::runtime::Runtime,
    }

    pub fn start(threads: usize) -> Result<S, String> {
        let rt = runtime(threads)?;
        let (srv, client) = rt.block_on(async {
            let srv = Srv::spawn_with_mailbox(Srv, mailbox::unbounded());
            let client = Client::spawn_with_mailbox(Client(srv.clone()), mailbox::unbounded());
            (srv, client)
        });
        Ok(S { srv, client, rt })
    }

    impl AskServer for S {
        fn ask(&self, x: u64) -> u64 {
            self.rt
                .block_on(async { self.srv.ask(Req(x)).await })
                .expect("a reply")
        }

        fn actor_asks(&self, n: u64) -> u64 {
            self.rt
                .block_on(async { self.client.ask(Run(n)).await })
                .expect("a reply")
        }
    }
}
