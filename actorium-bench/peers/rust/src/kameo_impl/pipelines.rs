//! Workloads `pipeline-lanes` and `pipeline-chain`: the driver task sends every item.

use super::*;
use crate::common::{chain_stage, lane_work};

struct Item(u64);

/// Adds what arrives and reports the sum after `items`.
struct Sink {
    items: u64,
    got: u64,
    sum: u64,
    done: Arc<Done>,
}
actor!(Sink);

impl Message<Item> for Sink {
    type Reply = ();

    async fn handle(&mut self, Item(x): Item, ctx: &mut Context<Self, ()>) {
        self.sum = self.sum.wrapping_add(x);
        self.got += 1;
        if self.got == self.items {
            self.done.report(self.sum);
            ctx.stop();
        }
    }
}

fn sink(items: u64, done: Arc<Done>) -> ActorRef<Sink> {
    spawn(Sink {
        items,
        got: 0,
        sum: 0,
        done,
    })
}

// ---- pipeline-lanes -------------------------------------------------------------------------
struct Splitter(Vec<ActorRef<Lane>>);
struct Lane {
    cost: u64,
    merger: ActorRef<Merger>,
}
struct Merger(ActorRef<Sink>);
actor!(Splitter, Lane, Merger);

impl Message<Item> for Splitter {
    type Reply = ();

    async fn handle(&mut self, Item(i): Item, _: &mut Context<Self, ()>) {
        send(&self.0[(i % self.0.len() as u64) as usize], Item(i));
    }
}

impl Message<Item> for Lane {
    type Reply = ();

    async fn handle(&mut self, Item(i): Item, _: &mut Context<Self, ()>) {
        send(&self.merger, Item(lane_work(i, self.cost)));
    }
}

impl Message<Item> for Merger {
    type Reply = ();

    async fn handle(&mut self, item: Item, _: &mut Context<Self, ()>) {
        send(&self.0, item);
    }
}

pub(super) async fn pipeline_lanes(items: u64, lanes: u64, cost: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let merger = spawn(Merger(sink(items, done)));
    let lanes: Vec<_> = (0..lanes)
        .map(|_| {
            spawn(Lane {
                cost,
                merger: merger.clone(),
            })
        })
        .collect();
    let splitter = spawn(Splitter(lanes.clone()));
    for i in 0..items {
        send(&splitter, Item(i));
    }
    let sum = common::wait(rx).await?;
    stop(&splitter).await;
    for l in &lanes {
        stop(l).await;
    }
    stop(&merger).await;
    Ok(sum)
}

// ---- pipeline-chain -------------------------------------------------------------------------
enum Next {
    Stage(ActorRef<Stage>),
    Sink(ActorRef<Sink>),
}
struct Stage {
    index: u64,
    cost: u64,
    next: Next,
}
actor!(Stage);

impl Message<Item> for Stage {
    type Reply = ();

    async fn handle(&mut self, Item(x): Item, _: &mut Context<Self, ()>) {
        let y = Item(chain_stage(x, self.index, self.cost));
        match &self.next {
            Next::Stage(a) => send(a, y),
            Next::Sink(a) => send(a, y),
        }
    }
}

pub(super) async fn pipeline_chain(items: u64, stages: u64, cost: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let mut next = Next::Sink(sink(items, done));
    let mut chain = Vec::new();
    for index in (0..stages).rev() {
        let a = spawn(Stage { index, cost, next });
        chain.push(a.clone());
        next = Next::Stage(a);
    }
    let Next::Stage(first) = next else {
        unreachable!("stages is positive")
    };
    for i in 0..items {
        send(&first, Item(i));
    }
    let sum = common::wait(rx).await?;
    for a in &chain {
        stop(a).await;
    }
    Ok(sum)
}
