//! Workloads `pipeline-lanes` and `pipeline-chain`: the driver task sends every item. Every
//! stage takes the same message, so each holds the next one's `ActorRef<Item>`.

use super::*;
use crate::common::{chain_stage, lane_work};

struct Item(u64);

/// Adds what arrives and reports the sum after `items`.
struct Sink;
struct SinkState {
    items: u64,
    got: u64,
    sum: u64,
    done: Arc<Done>,
}

impl Actor for Sink {
    type Msg = Item;
    type State = SinkState;
    type Arguments = (u64, Arc<Done>);

    async fn pre_start(&self, _: ActorRef<Item>, a: (u64, Arc<Done>)) -> Started<SinkState> {
        let (items, done) = a;
        Ok(SinkState {
            items,
            got: 0,
            sum: 0,
            done,
        })
    }

    async fn handle(&self, myself: ActorRef<Item>, Item(x): Item, st: &mut SinkState) -> Handled {
        st.sum = st.sum.wrapping_add(x);
        st.got += 1;
        if st.got == st.items {
            st.done.report(st.sum);
            myself.stop(None);
        }
        Ok(())
    }
}

// ---- pipeline-lanes -------------------------------------------------------------------------
struct Splitter;
struct Lane;
struct Merger;

impl Actor for Splitter {
    type Msg = Item;
    type State = Vec<ActorRef<Item>>;
    type Arguments = Vec<ActorRef<Item>>;

    async fn pre_start(&self, _: ActorRef<Item>, lanes: Self::State) -> Started<Self::State> {
        Ok(lanes)
    }

    async fn handle(&self, _: ActorRef<Item>, Item(i): Item, lanes: &mut Self::State) -> Handled {
        send(&lanes[(i % lanes.len() as u64) as usize], Item(i));
        Ok(())
    }
}

impl Actor for Lane {
    type Msg = Item;
    /// (cost, merger)
    type State = (u64, ActorRef<Item>);
    type Arguments = (u64, ActorRef<Item>);

    async fn pre_start(&self, _: ActorRef<Item>, a: Self::State) -> Started<Self::State> {
        Ok(a)
    }

    async fn handle(&self, _: ActorRef<Item>, Item(i): Item, st: &mut Self::State) -> Handled {
        send(&st.1, Item(lane_work(i, st.0)));
        Ok(())
    }
}

impl Actor for Merger {
    type Msg = Item;
    type State = ActorRef<Item>;
    type Arguments = ActorRef<Item>;

    async fn pre_start(&self, _: ActorRef<Item>, sink: Self::State) -> Started<Self::State> {
        Ok(sink)
    }

    async fn handle(&self, _: ActorRef<Item>, item: Item, sink: &mut Self::State) -> Handled {
        send(sink, item);
        Ok(())
    }
}

pub(super) async fn pipeline_lanes(items: u64, lanes: u64, cost: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let sink = spawn(Sink, (items, done)).await;
    let merger = spawn(Merger, sink).await;
    let mut lane_refs = Vec::with_capacity(lanes as usize);
    for _ in 0..lanes {
        lane_refs.push(spawn(Lane, (cost, merger.clone())).await);
    }
    let splitter = spawn(Splitter, lane_refs.clone()).await;
    for i in 0..items {
        send(&splitter, Item(i));
    }
    let sum = common::wait(rx).await?;
    splitter.stop(None);
    for l in &lane_refs {
        l.stop(None);
    }
    merger.stop(None);
    Ok(sum)
}

// ---- pipeline-chain -------------------------------------------------------------------------
struct Stage;

impl Actor for Stage {
    type Msg = Item;
    /// (index, cost, next)
    type State = (u64, u64, ActorRef<Item>);
    type Arguments = (u64, u64, ActorRef<Item>);

    async fn pre_start(&self, _: ActorRef<Item>, a: Self::State) -> Started<Self::State> {
        Ok(a)
    }

    async fn handle(&self, _: ActorRef<Item>, Item(x): Item, st: &mut Self::State) -> Handled {
        send(&st.2, Item(chain_stage(x, st.0, st.1)));
        Ok(())
    }
}

pub(super) async fn pipeline_chain(items: u64, stages: u64, cost: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let mut next = spawn(Sink, (items, done)).await;
    let mut chain = Vec::with_capacity(stages as usize);
    for index in (0..stages).rev() {
        next = spawn(Stage, (index, cost, next)).await;
        chain.push(next.clone());
    }
    for i in 0..items {
        send(&next, Item(i));
    }
    let sum = common::wait(rx).await?;
    for a in &chain {
        a.stop(None);
    }
    Ok(sum)
}
