//! The actorium-bench workloads (see `../../BENCHMARKS.md`) on the Rust peers.

use std::collections::BTreeMap;

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
    let _ = (threads, params);
    Err(format!("{system}/{bench}: not implemented yet"))
}
