//! Workloads `pipeline-lanes` and `pipeline-chain`: the driver sends every item.

use super::*;
use crate::common::{chain_stage, lane_work};

struct Item(u64);
message!(Item);

/// Adds what arrives and reports the sum after `items`.
struct Sink {
    _me: Addr<Sink>,
    items: u64,
    got: u64,
    sum: u64,
    done: Arc<Done>,
}
actor!(Sink);

impl Handler<Item> for Sink {
    type Result = ();

    fn handle(&mut self, Item(x): Item, ctx: &mut Context<Self>) {
        self.sum = self.sum.wrapping_add(x);
        self.got += 1;
        if self.got == self.items {
            self.done.report(self.sum);
            ctx.stop();
        }
    }
}

fn sink(p: &Placer, items: u64, done: Arc<Done>) -> Addr<Sink> {
    p.start(move |_me| Sink {
        _me,
        items,
        got: 0,
        sum: 0,
        done,
    })
}

// ---- pipeline-lanes -------------------------------------------------------------------------
struct Splitter {
    _me: Addr<Splitter>,
    lanes: Vec<Addr<Lane>>,
}
struct Lane {
    _me: Addr<Lane>,
    cost: u64,
    merger: Addr<Merger>,
}
struct Merger {
    _me: Addr<Merger>,
    sink: Addr<Sink>,
}
actor!(Splitter, Lane, Merger);
stoppable!(Splitter, Lane, Merger);

impl Handler<Item> for Splitter {
    type Result = ();

    fn handle(&mut self, Item(i): Item, _: &mut Context<Self>) {
        self.lanes[(i % self.lanes.len() as u64) as usize].do_send(Item(i));
    }
}

impl Handler<Item> for Lane {
    type Result = ();

    fn handle(&mut self, Item(i): Item, _: &mut Context<Self>) {
        self.merger.do_send(Item(lane_work(i, self.cost)));
    }
}

impl Handler<Item> for Merger {
    type Result = ();

    fn handle(&mut self, item: Item, _: &mut Context<Self>) {
        self.sink.do_send(item);
    }
}

pub(super) async fn pipeline_lanes(
    p: &Placer,
    items: u64,
    lanes: u64,
    cost: u64,
) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let sink = sink(p, items, done);
    let merger = p.start(move |_me| Merger { _me, sink });
    let lanes: Vec<_> = (0..lanes)
        .map(|_| {
            let merger = merger.clone();
            p.start(move |_me| Lane { _me, cost, merger })
        })
        .collect();
    let splitter = {
        let lanes = lanes.clone();
        p.start(move |_me| Splitter { _me, lanes })
    };
    for i in 0..items {
        splitter.do_send(Item(i));
    }
    let sum = common::wait(rx).await?;
    splitter.do_send(Stop);
    for l in &lanes {
        l.do_send(Stop);
    }
    merger.do_send(Stop);
    Ok(sum)
}

// ---- pipeline-chain -------------------------------------------------------------------------
enum Next {
    Stage(Addr<Stage>),
    Sink(Addr<Sink>),
}
struct Stage {
    _me: Addr<Stage>,
    index: u64,
    cost: u64,
    next: Next,
}
actor!(Stage);
stoppable!(Stage);

impl Handler<Item> for Stage {
    type Result = ();

    fn handle(&mut self, Item(x): Item, _: &mut Context<Self>) {
        let y = Item(chain_stage(x, self.index, self.cost));
        match &self.next {
            Next::Stage(a) => a.do_send(y),
            Next::Sink(a) => a.do_send(y),
        }
    }
}

pub(super) async fn pipeline_chain(
    p: &Placer,
    items: u64,
    stages: u64,
    cost: u64,
) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let mut next = Next::Sink(sink(p, items, done));
    let mut chain = Vec::new();
    for index in (0..stages).rev() {
        let a = p.start(move |_me| Stage {
            _me,
            index,
            cost,
            next,
        });
        chain.push(a.clone());
        next = Next::Stage(a);
    }
    let Next::Stage(first) = next else {
        unreachable!("stages is positive")
    };
    for i in 0..items {
        first.do_send(Item(i));
    }
    let sum = common::wait(rx).await?;
    for a in &chain {
        a.do_send(Stop);
    }
    Ok(sum)
}
