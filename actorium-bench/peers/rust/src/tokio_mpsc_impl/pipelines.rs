//! Workloads `pipeline-lanes` and `pipeline-chain`: the driver task sends every item. Each
//! stage ends when its mailbox has no sender left (the driver drops its sender after the last
//! item), so the pipeline winds down behind the last item.

use super::*;
use crate::common::{chain_stage, lane_work};

/// Adds what arrives and reports the sum after `items`.
async fn sink(mut rx: Mailbox<u64>, items: u64, done: Arc<Done>) {
    let (mut got, mut sum) = (0, 0u64);
    while let Some(x) = rx.recv().await {
        sum = sum.wrapping_add(x);
        got += 1;
        if got == items {
            done.report(sum);
            return;
        }
    }
}

// ---- pipeline-lanes -------------------------------------------------------------------------
async fn splitter(mut rx: Mailbox<u64>, lanes: Vec<Addr<u64>>) {
    while let Some(i) = rx.recv().await {
        send(&lanes[(i % lanes.len() as u64) as usize], i);
    }
}

async fn lane(mut rx: Mailbox<u64>, cost: u64, merger: Addr<u64>) {
    while let Some(i) = rx.recv().await {
        send(&merger, lane_work(i, cost));
    }
}

async fn merger(mut rx: Mailbox<u64>, sink: Addr<u64>) {
    while let Some(x) = rx.recv().await {
        send(&sink, x);
    }
}

pub(super) async fn pipeline_lanes(items: u64, lanes: u64, cost: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let sink = spawn(|m| sink(m, items, done));
    let merger = spawn(|m| merger(m, sink));
    let lanes = (0..lanes)
        .map(|_| {
            let merger = merger.clone();
            spawn(move |m| lane(m, cost, merger))
        })
        .collect();
    drop(merger);
    let splitter = spawn(|m| splitter(m, lanes));
    for i in 0..items {
        send(&splitter, i);
    }
    drop(splitter);
    common::wait(rx).await
}

// ---- pipeline-chain -------------------------------------------------------------------------
async fn stage(mut rx: Mailbox<u64>, index: u64, cost: u64, next: Addr<u64>) {
    while let Some(x) = rx.recv().await {
        send(&next, chain_stage(x, index, cost));
    }
}

pub(super) async fn pipeline_chain(items: u64, stages: u64, cost: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let mut next = spawn(|m| sink(m, items, done));
    for index in (0..stages).rev() {
        next = spawn(move |m| stage(m, index, cost, next));
    }
    for i in 0..items {
        send(&next, i);
    }
    drop(next);
    common::wait(rx).await
}
