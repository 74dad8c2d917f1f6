//! Unit tests and models of the message-centric executor: `loom_*` under `--cfg loom`,
//! `shuttle` under `--cfg shuttle`, the rest in every test build.

#[cfg(not(loom))]
mod executor;
#[cfg(loom)]
mod loom_ownership;
#[cfg(loom)]
mod loom_swap;
#[cfg(loom)]
mod loom_work_queue;
#[cfg(not(any(loom, shuttle)))]
mod placement;
#[cfg(not(loom))]
mod ranges;
#[cfg(shuttle)]
mod shuttle;
#[cfg(not(loom))]
mod spawn;

/// What the tests of this folder use: the executor's items, as the code they test sees them.
#[allow(unused_imports)]
mod prelude {
    pub(super) use super::super::exec::*;
    pub(super) use super::super::placement::affinity::*;
    pub(super) use super::super::placement::balance::*;
    pub(super) use super::super::placement::batching::*;
    pub(super) use super::super::ranges::*;
    pub(super) use super::super::row::*;
    pub(super) use super::super::steal::*;
    pub(super) use super::super::visit::*;
    pub(super) use super::super::work_queue::*;
    pub(super) use super::super::*;
    pub(super) use crate::core::copy_queue::CopyQueue;
    pub(super) use crate::core::envelope::Envelope;
    pub(super) use crate::core::{Header, WorkerRef};
    pub(super) use crate::runtime::worker::{self as rt, Idleness, Turn, Unit};
    pub(super) use std::cell::Cell;
    pub(super) use std::time::{Duration, Instant};

    /// The executor's default settings.
    #[allow(dead_code)]
    pub(super) fn t() -> Tuning {
        Tuning::default()
    }
}
