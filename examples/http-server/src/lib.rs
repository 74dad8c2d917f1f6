//! An HTTP server whose handlers ask actors: axum on a tokio runtime in front, an actorium
//! system behind. A handler is an `async fn` that asks an actor and `.await`s the reply (an
//! actorium [`actorium::Pending`] is a plain `Future`, so no adapter is needed), while the
//! actors run on actorium's workers, not on tokio's.
//!
//! Routes: `GET /count` (the total), `POST /add/{n}` (adds `n`, answers the new total),
//! `GET /slow` (asks an actor that never answers: 503 after the ask's timeout).
//!
//! Run it with `cargo run -p actorium-http-example` (listens on 127.0.0.1:3000, or the address
//! in `ACTORIUM_HTTP_ADDR`).

use actorium::{Actor, ActorSystem, Addr, Allocation, Ask, AskError, Context, Receive, ReplyTo};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::Router;
use std::time::Duration;

/// The actor behind the routes: a running total.
pub struct Total(u64);
impl Actor for Total {}

/// Question: the total.
pub struct Get;
impl Receive<Ask<Get, u64>> for Total {
    fn receive(&mut self, a: Ask<Get, u64>, _: &mut Context<'_, Self>) -> Allocation {
        a.reply.send(self.0).ok();
        Allocation::Nodelete
    }
}

/// Question: add to the total, answer the new one.
pub struct Add(pub u64);
impl Receive<Ask<Add, u64>> for Total {
    fn receive(&mut self, a: Ask<Add, u64>, _: &mut Context<'_, Self>) -> Allocation {
        self.0 += a.msg.0;
        a.reply.send(self.0).ok();
        Allocation::Nodelete
    }
}

/// An actor that keeps every question and never answers (to show timeouts).
pub struct Sleepy(Vec<ReplyTo<u64>>);
impl Actor for Sleepy {}
impl Receive<Ask<Get, u64>> for Sleepy {
    fn receive(&mut self, a: Ask<Get, u64>, _: &mut Context<'_, Self>) -> Allocation {
        self.0.push(a.reply);
        Allocation::Nodelete
    }
}

/// What the handlers share: the actors' addresses (cheap to clone).
#[derive(Clone)]
pub struct Actors {
    total: Addr<Total>,
    sleepy: Addr<Sleepy>,
}

impl Actors {
    /// Spawns the actors on `system`.
    pub fn spawn(system: &ActorSystem) -> Self {
        Self {
            total: system.spawn(Total(0)),
            sleepy: system.spawn(Sleepy(Vec::new())),
        }
    }
}

fn unavailable(e: AskError) -> (StatusCode, String) {
    (StatusCode::SERVICE_UNAVAILABLE, format!("{e}\n"))
}

async fn count(State(a): State<Actors>) -> Result<String, (StatusCode, String)> {
    let total = a
        .total
        .ask(Get)
        .map_err(AskError::from)
        .map_err(unavailable)?;
    Ok(format!("{}\n", total.await.map_err(unavailable)?))
}

async fn add(State(a): State<Actors>, Path(n): Path<u64>) -> Result<String, (StatusCode, String)> {
    let total = a
        .total
        .ask(Add(n))
        .map_err(AskError::from)
        .map_err(unavailable)?;
    Ok(format!("{}\n", total.await.map_err(unavailable)?))
}

async fn slow(State(a): State<Actors>) -> Result<String, (StatusCode, String)> {
    let pending = a
        .sleepy
        .ask(Get)
        .map_err(AskError::from)
        .map_err(unavailable)?;
    // The runtime's timer bounds an ask from async code.
    match tokio::time::timeout(Duration::from_millis(100), pending).await {
        Ok(reply) => Ok(format!("{}\n", reply.map_err(unavailable)?)),
        Err(_) => Err(unavailable(AskError::Timeout)),
    }
}

/// The routes.
pub fn router(actors: Actors) -> Router {
    Router::new()
        .route("/count", get(count))
        .route("/add/{n}", post(add))
        .route("/slow", get(slow))
        .with_state(actors)
}

/// Serves `actors` on `listener` until the process ends.
pub async fn serve(listener: tokio::net::TcpListener, actors: Actors) -> std::io::Result<()> {
    axum::serve(listener, router(actors)).await
}
