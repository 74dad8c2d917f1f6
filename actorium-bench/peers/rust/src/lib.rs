//! The actorium-bench workloads (see `actorium-bench/BENCHMARKS.md`) on the Rust peers.
//!
//! One module per peer ([`actix_impl`], [`ractor_impl`], [`kameo_impl`], and
//! [`tokio_mpsc_impl`]: plain tokio tasks with `mpsc` channels, no actor library); what they
//! share (parameters, the checksums, the tiny computation, xorshift, the matrices, the
//! completion latch, the tokio runtime set-up) is in [`common`]. The fork/join workloads,
//! written once over a `join` trait, run on rayon, chili and a sequential baseline
//! ([`forkjoin`]). The request/reply benchmark is [`ask`], the bounded-mailbox benchmark [`backpressure`], the idle
//! benchmarks [`idle`]. Two
//! systems run on actix: `actix` (`T` arbiters, actors round-robin) and `actix-1` (one arbiter
//! for every actor, whatever `T`).

use std::collections::BTreeMap;

pub mod actix_impl;
pub mod ask;
pub mod backpressure;
pub mod common;
pub mod forkjoin;
pub mod idle;
pub mod kameo_impl;
pub mod ractor_impl;
pub mod tokio_mpsc_impl;

use common::Bench;

/// Systems this crate implements: actor workloads on [`ACTOR_SYSTEMS`], fork/join workloads
/// ([`forkjoin`]) on [`FORK_JOIN_SYSTEMS`].
pub const SYSTEMS: &[&str] = &[
    "actix",
    "actix-1",
    "ractor",
    "kameo",
    "tokio-mpsc",
    "sequential",
    "rayon",
    "chili",
];

/// The systems that run the actor workloads.
pub const ACTOR_SYSTEMS: &[&str] = &["actix", "actix-1", "ractor", "kameo", "tokio-mpsc"];

/// The systems that run the fork/join workloads.
pub const FORK_JOIN_SYSTEMS: &[&str] = &["sequential", "rayon", "chili"];

/// Runs `bench` once on `system` with `threads` threads (`actix-1` ignores it: one arbiter).
/// Returns (seconds, checksum), or an error; an error starting with "n/a" means the system
/// cannot express the workload.
pub fn run(
    system: &str,
    bench: &str,
    threads: usize,
    params: &BTreeMap<String, u64>,
) -> Result<(f64, u64), String> {
    if !SYSTEMS.contains(&system) {
        return Err(format!("unknown system `{system}`"));
    }
    if threads == 0 {
        return Err("threads must be positive".into());
    }
    let fork_join = forkjoin::BENCHES.contains(&bench);
    let fj_system = FORK_JOIN_SYSTEMS.contains(&system);
    if fork_join != fj_system {
        return Err(format!("n/a: {system} does not run {bench}"));
    }
    if fork_join {
        return forkjoin::run(system, bench, threads, params);
    }
    // Parsing builds the matrices of `matrix`: before the runtime starts, outside the clock.
    let work = Bench::parse(system, bench, params)?;
    match system {
        "actix" => actix_impl::run(threads, work),
        "actix-1" => actix_impl::run(1, work),
        "ractor" => ractor_impl::run(threads, work),
        "kameo" => kameo_impl::run(threads, work),
        _ => tokio_mpsc_impl::run(threads, work),
    }
}
