//! Workloads `pipeline-lanes` (a fan-out of busy lanes) and `pipeline-chain` (a long chain of
//! busy stages): the driver sends every item from outside the system.

use super::*;
use actorium_peers::common::{chain_stage, lane_work};

/// The end of both pipelines: adds what arrives and reports the sum after `items`.
struct Sink {
    items: u64,
    got: u64,
    sum: u64,
    done: Arc<Done>,
}
struct Item(u64);
impl Actor for Sink {}
impl Receive<Item> for Sink {
    fn receive(&mut self, Item(x): Item, _: &mut Context<'_, Self>) -> Allocation {
        self.sum = self.sum.wrapping_add(x);
        self.got += 1;
        if self.got == self.items {
            self.done.report(self.sum);
            return Allocation::Delete;
        }
        Allocation::Nodelete
    }
}

// ---- pipeline-lanes -------------------------------------------------------------------------
struct Splitter {
    lanes: Vec<Addr<Lane>>,
}
struct Lane {
    cost: u64,
    merger: Addr<Merger>,
}
struct Merger {
    sink: Addr<Sink>,
}
impl Actor for Splitter {}
impl Actor for Lane {}
impl Actor for Merger {}
impl Receive<Item> for Splitter {
    fn receive(&mut self, Item(i): Item, _: &mut Context<'_, Self>) -> Allocation {
        let lane = &self.lanes[(i % self.lanes.len() as u64) as usize];
        lane.send(Item(i)).unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Item> for Lane {
    fn receive(&mut self, Item(i): Item, _: &mut Context<'_, Self>) -> Allocation {
        self.merger.send(Item(lane_work(i, self.cost))).unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Item> for Merger {
    fn receive(&mut self, item: Item, _: &mut Context<'_, Self>) -> Allocation {
        self.sink.send(item).unwrap();
        Allocation::Nodelete
    }
}

pub(super) fn pipeline_lanes(s: &ActorSystem, items: u64, lanes: u64, cost: u64) -> u64 {
    let done = Done::new(1);
    let sink = s.spawn(Sink {
        items,
        got: 0,
        sum: 0,
        done: done.clone(),
    });
    let merger = s.spawn(Merger { sink });
    let lanes: Vec<_> = (0..lanes)
        .map(|_| {
            s.spawn(Lane {
                cost,
                merger: merger.clone(),
            })
        })
        .collect();
    let splitter = s.spawn(Splitter {
        lanes: lanes.clone(),
    });
    for i in 0..items {
        splitter.send(Item(i)).unwrap();
    }
    let sum = done.wait();
    splitter.send(actorium::DeleteMsg).unwrap();
    for l in &lanes {
        l.send(actorium::DeleteMsg).unwrap();
    }
    merger.send(actorium::DeleteMsg).unwrap();
    sum
}

// ---- pipeline-chain -------------------------------------------------------------------------
enum Next {
    Stage(Addr<Stage>),
    Sink(Addr<Sink>),
}
struct Stage {
    index: u64,
    cost: u64,
    next: Next,
}
impl Actor for Stage {}
impl Receive<Item> for Stage {
    fn receive(&mut self, Item(x): Item, _: &mut Context<'_, Self>) -> Allocation {
        let y = Item(chain_stage(x, self.index, self.cost));
        match &self.next {
            Next::Stage(a) => a.send(y).unwrap(),
            Next::Sink(a) => a.send(y).unwrap(),
        }
        Allocation::Nodelete
    }
}

pub(super) fn pipeline_chain(s: &ActorSystem, items: u64, stages: u64, cost: u64) -> u64 {
    let done = Done::new(1);
    let mut next = Next::Sink(s.spawn(Sink {
        items,
        got: 0,
        sum: 0,
        done: done.clone(),
    }));
    let mut chain = Vec::new();
    for index in (0..stages).rev() {
        let a = s.spawn(Stage { index, cost, next });
        chain.push(a.clone());
        next = Next::Stage(a);
    }
    let Next::Stage(first) = next else {
        unreachable!("stages is positive")
    };
    for i in 0..items {
        first.send(Item(i)).unwrap();
    }
    let sum = done.wait();
    for a in &chain {
        a.send(actorium::DeleteMsg).unwrap();
    }
    sum
}
