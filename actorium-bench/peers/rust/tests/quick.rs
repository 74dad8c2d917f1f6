//! Every workload on every system with the `--quick` parameters of `BENCHMARKS.md` and two
//! threads; checks the checksum against the contract's formula. Prints the seconds:
//! `cargo test --release -p actorium-peers --test quick -- --nocapture --test-threads=1`.
//!
//! The `#[ignore]`d `defaults_*` tests time the default parameters once per system.

use actorium_peers::common::expected_checksum as expected;
use actorium_peers::{run, ACTOR_SYSTEMS as SYSTEMS, FORK_JOIN_SYSTEMS};
use std::collections::BTreeMap;

const THREADS: usize = 2;

fn params(kv: &[(&str, u64)]) -> BTreeMap<String, u64> {
    kv.iter().map(|&(k, v)| (k.to_string(), v)).collect()
}

fn check(bench: &str, kv: &[(&str, u64)], threads: usize) {
    let p = params(kv);
    let want = expected(bench, &p);
    for system in SYSTEMS {
        match run(system, bench, threads, &p) {
            Ok((secs, sum)) => {
                eprintln!("{bench:<22} {system:<10} T={threads} {secs:>9.4} s  checksum={sum}");
                assert_eq!(sum, want, "{system}/{bench}: checksum");
                assert!(secs > 0.0, "{system}/{bench}: seconds");
            }
            Err(e) => panic!("{system}/{bench}: {e}"),
        }
    }
}

fn check_na(bench: &str, kv: &[(&str, u64)]) {
    let p = params(kv);
    for system in SYSTEMS {
        match run(system, bench, THREADS, &p) {
            Ok(r) => panic!("{system}/{bench}: expected n/a, got {r:?}"),
            Err(e) => {
                eprintln!("{bench:<22} {system:<10} {e}");
                assert!(e.starts_with("n/a"), "{system}/{bench}: {e}");
            }
        }
    }
}

macro_rules! quick {
    ($($name:ident: $bench:literal, [$(($k:literal, $v:expr)),*];)*) => {$(
        #[test]
        fn $name() {
            check($bench, &[$(($k, $v)),*], THREADS);
        }
    )*};
}

quick! {
    static_send: "static-send", [("n", 1_000_000)];
    dynamic_send: "dynamic-send", [("n", 100_000)];
    executor: "executor", [("actors", 4_000), ("group", 100), ("rounds", 2)];
    repeat: "repeat", [("servers", 10_000), ("reps", 10)];
    matrix: "matrix", [("n", 256)];
    ping_pong: "ping-pong", [("n", 10_000)];
    counting: "counting", [("n", 100_000)];
    fork_join_throughput: "fork-join-throughput", [("actors", 60), ("msgs", 1_000)];
    fork_join_creation: "fork-join-creation", [("n", 10_000)];
    thread_ring: "thread-ring", [("actors", 100), ("passes", 10_000)];
    chameneos: "chameneos", [("creatures", 100), ("meetings", 20_000)];
    big: "big", [("actors", 120), ("pings", 2_000)];
    pipeline_lanes: "pipeline-lanes", [("items", 10_000), ("lanes", 4), ("cost", 200)];
    pipeline_chain: "pipeline-chain", [("items", 2_000), ("stages", 60), ("cost", 40)];
    pipeline_one_lane: "pipeline-lanes", [("items", 1), ("lanes", 1), ("cost", 0)];
    pipeline_one_stage: "pipeline-chain", [("items", 3), ("stages", 1), ("cost", 5)];
}

/// The fork/join workloads on the fork/join peers (and each refused by the actor peers, and
/// the actor workloads by the fork/join peers).
#[test]
fn fork_join_workloads() {
    let cases: &[(&str, &[(&str, u64)])] = &[
        ("fib", &[("n", 20)]),
        ("quicksort", &[("n", 100_000), ("cutoff", 1_000)]),
        ("nqueens", &[("n", 8)]),
        ("matmul", &[("n", 128), ("threshold", 256)]),
        ("tree-sum-small", &[("nodes", 1_023), ("reps", 10)]),
        ("tree-sum-big", &[("depth", 12)]),
    ];
    for &(bench, kv) in cases {
        let p = params(kv);
        let want = expected(bench, &p);
        for system in FORK_JOIN_SYSTEMS {
            for threads in [1, THREADS] {
                let (secs, sum) = run(system, bench, threads, &p).unwrap();
                eprintln!("{bench:<22} {system:<10} T={threads} {secs:>9.4} s  checksum={sum}");
                assert_eq!(sum, want, "{system}/{bench}: checksum");
            }
        }
        let e = run("actix", bench, THREADS, &p).unwrap_err();
        assert!(e.starts_with("n/a"), "{e}");
    }
    let e = run("rayon", "ping-pong", THREADS, &params(&[("n", 10)])).unwrap_err();
    assert!(e.starts_with("n/a"), "{e}");
    // An uneven matrix (odd blocks multiply sequentially) and a sort at its smallest.
    let p = params(&[("n", 7), ("threshold", 4)]);
    assert_eq!(
        run("rayon", "matmul", 2, &p).unwrap().1,
        expected("matmul", &p)
    );
    let p = params(&[("n", 1), ("cutoff", 1)]);
    assert_eq!(
        run("chili", "quicksort", 2, &p).unwrap().1,
        expected("quicksort", &p)
    );
}

#[test]
fn balance_one() {
    check_na(
        "balance-one",
        &[("actors", 2_000), ("group", 100), ("rounds", 2)],
    );
}

#[test]
fn balance_multi() {
    check_na(
        "balance-multi",
        &[("actors", 2_000), ("group", 100), ("rounds", 2)],
    );
}

/// Edge cases: one thread, and parameters at their smallest.
#[test]
fn small_and_single_threaded() {
    check("static-send", &[("n", 1)], 1);
    check("dynamic-send", &[("n", 1)], 1);
    check("executor", &[("actors", 0), ("group", 5), ("rounds", 3)], 1);
    check(
        "executor",
        &[("actors", 10), ("group", 5), ("rounds", 0)],
        3,
    );
    check("repeat", &[("servers", 1), ("reps", 1)], 1);
    check("matrix", &[("n", 1)], 1);
    check("matrix", &[("n", 7)], 3);
    check("counting", &[("n", 0)], 1);
    check("fork-join-throughput", &[("actors", 0), ("msgs", 1)], 1);
    check("fork-join-creation", &[("n", 0)], 1);
    check("thread-ring", &[("actors", 1), ("passes", 0)], 1);
    check("chameneos", &[("creatures", 2), ("meetings", 0)], 1);
    check("chameneos", &[("creatures", 3), ("meetings", 5)], 2);
    check("big", &[("actors", 2), ("pings", 1)], 1);
    check("thread-ring", &[("actors", 3), ("passes", 7)], 2);
}

#[test]
fn bad_input_is_an_error() {
    let p = params(&[("n", 10)]);
    assert!(run("nope", "static-send", 2, &p).is_err());
    assert!(run("actix", "nope", 2, &p).is_err());
    assert!(run("ractor", "static-send", 0, &p).is_err());
    assert!(run("kameo", "executor", 2, &p).is_err()); // missing parameters
    let uneven = params(&[("actors", 10), ("group", 3), ("rounds", 1)]);
    assert!(run("kameo", "executor", 2, &uneven).is_err());
    // big pings the *other* actors: one actor alone has none.
    let alone = params(&[("actors", 1), ("pings", 1)]);
    for system in SYSTEMS {
        assert!(run(system, "big", 2, &alone).is_err(), "{system}");
    }
}

macro_rules! defaults {
    ($($name:ident: $bench:literal, [$(($k:literal, $v:expr)),*];)*) => {$(
        #[test]
        #[ignore = "timing at the default parameters; run with --ignored --test-threads=1"]
        fn $name() {
            check($bench, &[$(($k, $v)),*], THREADS);
        }
    )*};
}

defaults! {
    defaults_static_send: "static-send", [("n", 10_000_000)];
    defaults_dynamic_send: "dynamic-send", [("n", 1_000_000)];
    defaults_executor: "executor", [("actors", 40_000), ("group", 100), ("rounds", 4)];
    defaults_repeat: "repeat", [("servers", 100_000), ("reps", 20)];
    defaults_matrix: "matrix", [("n", 1024)];
    defaults_ping_pong: "ping-pong", [("n", 40_000)];
    defaults_counting: "counting", [("n", 1_000_000)];
    defaults_fork_join_throughput: "fork-join-throughput", [("actors", 60), ("msgs", 10_000)];
    defaults_fork_join_creation: "fork-join-creation", [("n", 40_000)];
    defaults_thread_ring: "thread-ring", [("actors", 100), ("passes", 100_000)];
    defaults_chameneos: "chameneos", [("creatures", 100), ("meetings", 200_000)];
    defaults_big: "big", [("actors", 120), ("pings", 20_000)];
    defaults_pipeline_lanes: "pipeline-lanes", [("items", 100_000), ("lanes", 4), ("cost", 200)];
    defaults_pipeline_chain: "pipeline-chain", [("items", 20_000), ("stages", 60), ("cost", 40)];
}
