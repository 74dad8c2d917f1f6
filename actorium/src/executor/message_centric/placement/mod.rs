//! Placement: the message-centric executor's heuristics, apart from its mechanism. Each part
//! is called through a few hooks of the mechanism (`send.rs`, `visit.rs`, `unit.rs`,
//! `steal.rs`, `exec.rs`), keeps its own per-worker state in the worker's [`Local`], has a
//! switch that turns it off alone (for tests and A/B runs), and keeps its settings in
//! [`Tuning`]. `README.md` of the executor, "Placement", says what each rule is for, and
//! `docs/DESIGN.md` gives each its invariant, its test and its benchmark.
//!
//! [`Local`]: super::visit::Local
//! [`Tuning`]: super::tuning::Tuning

pub(crate) mod affinity;
pub(crate) mod balance;
pub(crate) mod batching;
