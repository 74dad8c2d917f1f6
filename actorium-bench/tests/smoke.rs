//! End to end: the harness runs real child processes, checks checksums, and writes the
//! documented outputs.

use std::process::Command;

fn bench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_actorium-bench"))
}

#[test]
fn quick_run_writes_table_json_and_chart() {
    let dir = std::env::temp_dir().join(format!("actorium-bench-smoke-{}", std::process::id()));
    let json = dir.join("r.json");
    let out = bench()
        .args([
            "--quick",
            "--systems",
            "actorium",
            "--only",
            "ping-pong,counting,matrix",
        ])
        .args([
            "--runs",
            "2",
            "--threads",
            "2",
            "--timeout",
            "120",
            "--json",
        ])
        .arg(&json)
        .arg("--out")
        .arg(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("| ping-pong |") && stdout.contains("| matrix |"),
        "{stdout}"
    );
    let records: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let records = records.as_array().unwrap();
    assert_eq!(records.len(), 3);
    for r in records {
        assert_eq!(r["checksum_ok"], true, "{r}");
        assert_eq!(r["runs"].as_array().unwrap().len(), 2);
        assert!(r["median_s"].as_f64().unwrap() > 0.0);
        assert!(r["peak_rss_mb"].as_f64().unwrap() > 0.0);
        assert!(r["cpu_s"].as_f64().is_some() && r["per_op_ns"].as_f64().is_some());
        assert_eq!(r["threads"], 2);
    }
    assert!(std::fs::read_to_string(dir.join("results.md"))
        .unwrap()
        .contains("| counting |"));
    assert!(std::fs::read_to_string(dir.join("ratios.svg"))
        .unwrap()
        .contains("<svg"));
}

#[test]
fn unknown_names_are_refused_with_the_valid_ones() {
    let out = bench().args(["--only", "no-such-bench"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown benchmark `no-such-bench`") && err.contains("ping-pong"),
        "{err}"
    );
    let out = bench().args(["--systems", "akka"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn exec_prints_one_result_line() {
    let out = bench()
        .args([
            "exec",
            "thread-ring",
            "actorium",
            "2",
            "actors=10",
            "passes=1000",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.starts_with("RESULT "))
            .count(),
        1
    );
    let out = bench()
        .args(["exec", "thread-ring", "actorium", "2", "actors=ten"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// `--queues-per-worker` reaches the executor: a chain of spawns on 1 worker runs on the
/// local fast path of its one queue (a few gulps), and with 16 queues each hop is a visit of
/// another queue (a gulp per hop; placement rule 1). Refused for systems without queues.
#[test]
fn exec_takes_the_queues_per_worker() {
    let gulps = |extra: &[&str]| -> u64 {
        let out = bench()
            .args(["exec", "dynamic-send", "actorium", "1", "n=1000"])
            .args(extra)
            .env("ACTORIUM_BENCH_STATS", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let stats = String::from_utf8_lossy(&out.stderr);
        let line = stats
            .lines()
            .find(|l| l.trim_start().starts_with("gulps "))
            .unwrap_or_else(|| panic!("no gulp count in {stats}"));
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    let one = gulps(&[]);
    let sixteen = gulps(&["--queues-per-worker", "16"]);
    assert!(one < 100, "1 queue: {one} gulps for 1,000 hops");
    assert!(sixteen >= 900, "16 queues: {sixteen} gulps for 1,000 hops");
    for system in ["actorium-policy-stealing", "actix"] {
        let out = bench()
            .args(["exec", "big", system, "1", "--queues-per-worker", "2"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{system}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--queues-per-worker"), "{system}: {err}");
    }
}

/// The pipelines on each of actorium's executors and 1 and 2 workers: the checksum of the
/// contract's formula; a pipeline that could never finish (no items, lanes or stages) is
/// refused, not run.
#[test]
fn pipelines_on_actorium_give_the_contract_s_checksum() {
    let cases: &[(&str, &[(&str, u64)])] = &[
        (
            "pipeline-lanes",
            &[("items", 500), ("lanes", 3), ("cost", 20)],
        ),
        (
            "pipeline-chain",
            &[("items", 200), ("stages", 7), ("cost", 5)],
        ),
    ];
    for &(bench_name, kv) in cases {
        let params: std::collections::BTreeMap<String, u64> =
            kv.iter().map(|&(k, v)| (k.to_string(), v)).collect();
        let want = actorium_peers::common::expected_checksum(bench_name, &params);
        let args: Vec<String> = kv.iter().map(|(k, v)| format!("{k}={v}")).collect();
        for system in [
            "actorium",
            "actorium-policy-stealing",
            "actorium-policy-sharing",
        ] {
            for threads in ["1", "2"] {
                let out = bench()
                    .args(["exec", bench_name, system, threads])
                    .args(&args)
                    .output()
                    .unwrap();
                assert!(out.status.success(), "{system}/{bench_name}: {out:?}");
                let stdout = String::from_utf8_lossy(&out.stdout);
                let got: u64 = stdout
                    .split("checksum=")
                    .nth(1)
                    .and_then(|s| s.trim().parse().ok())
                    .unwrap_or_else(|| panic!("no checksum in {stdout}"));
                assert_eq!(got, want, "{system}/{bench_name} on {threads} threads");
            }
        }
    }
    for bad in [
        ["pipeline-lanes", "items=0"],
        ["pipeline-lanes", "lanes=0"],
        ["pipeline-chain", "stages=0"],
    ] {
        let out = bench()
            .args(["exec", bad[0], "actorium", "2", bad[1]])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{bad:?}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("must be positive"),
            "{bad:?}: {out:?}"
        );
    }
}
