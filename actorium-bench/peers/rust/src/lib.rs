//! The actorium-bench workloads (see `../../BENCHMARKS.md`) on the Rust peers.
//!
//! One module per framework ([`actix_impl`], [`ractor_impl`], [`kameo_impl`]); what they share
//! (parameters, the tiny computation, xorshift, the matrices, the completion latch) is in
//! [`common`].

use std::collections::BTreeMap;

pub mod actix_impl;
pub mod common;
pub mod kameo_impl;
pub mod ractor_impl;

use common::Bench;

/// Systems this crate implements.
pub const SYSTEMS: &[&str] = &["actix", "ractor", "kameo"];

/// Runs `bench` once on `system` with `threads` threads. Returns (seconds, checksum), or an
/// error; an error starting with "n/a" means the system cannot express the workload.
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
    // Parsing builds the matrices of `matrix`: before the runtime starts, outside the clock.
    let work = Bench::parse(system, bench, params)?;
    match system {
        "actix" => actix_impl::run(threads, work),
        "ractor" => ractor_impl::run(threads, work),
        _ => kameo_impl::run(threads, work),
    }
}
