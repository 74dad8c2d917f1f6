//! actorium-bench: the Cforall-thesis and Savina workloads on actorium and its peers, side by
//! side, in one run. See `BENCHMARKS.md` (this crate) for the workloads and
//! `docs/BENCHMARKS.md` (repository root) for the latest results.
//!
//! ```text
//! cargo run --release -p actorium-bench -- [--full | --quick] [--only a,b] [--systems x,y] \
//!     [--threads N] [--runs R] [--json FILE] [--out DIR]
//! ```
//!
//! The default run (the main job) runs every workload at its standard size (about a third of
//! the full suite's work) on actorium's executors and every installed peer, 3 runs each, so
//! that it finishes in about 10 minutes on 2 cores; `--full` runs the full sizes, 5 runs, the
//! stealing ablations (`actorium-random-victim`, `actorium-no-stealing`) and the 1-thread
//! sweep; `--quick` is CI's smoke run.
//!
//! Runs are interleaved: for each workload, each round runs every system once, in turn
//! (A B C A B C ...), so that a slow phase of the machine hits every system alike. The exit
//! status is 0 when every actorium run passed its checksum; a peer that fails or times out
//! is that peer's cell, labelled, and listed at the end.

mod actorium_impl;
mod ask;
mod backpressure;
mod harness;
mod idle;
mod remote;
mod remote_peers;
mod report;
mod resize;
mod scale;
mod suite;
mod threads;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use report::Record;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use suite::{Params, Size, BENCHES, SYSTEMS};

#[derive(Parser, Debug)]
#[command(
    version,
    about = "actorium side by side with CAF, Erlang/OTP, actix, ractor, kameo and plain tokio tasks"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
    /// Small parameters and 3 runs each (CI's smoke run).
    #[arg(long)]
    quick: bool,
    /// The full suite: full-size parameters, 5 runs each, the stealing ablations, the 1-thread
    /// sweep of actorium's systems (`--sweep`), and a 300 s limit per run (the default run:
    /// standard sizes, 3 runs, 60 s, to finish in about 10 minutes).
    #[arg(long, conflicts_with = "quick")]
    full: bool,
    /// Only these benchmarks (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Only these systems (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    systems: Vec<String>,
    /// Threads for every system (default: available parallelism).
    #[arg(long)]
    threads: Option<usize>,
    /// Runs per (benchmark, system); the median is reported (default 3, or 5 with --full).
    #[arg(long)]
    runs: Option<usize>,
    /// Write machine-readable results to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Directory for results.md and the chart.
    #[arg(long, default_value = "bench-out")]
    out: PathBuf,
    /// Seconds one run may take before it is killed and reported as failed (default 60, or
    /// 300 with --full). A system that fails or times out is not run again on that workload.
    #[arg(long)]
    timeout: Option<u64>,
    /// Also run every actorium system on 1 thread, and report its time on `--threads` against
    /// its time on 1 (parallelism that pays for itself: at most 1.1× on every workload).
    #[arg(long)]
    sweep: bool,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Runs one workload once in this process and prints `RESULT seconds=.. checksum=..`
    /// (what the harness runs in a child process for every Rust system).
    #[command(hide = true)]
    Exec {
        bench: String,
        system: String,
        threads: usize,
        params: Vec<String>,
        /// Message queues per worker on actorium's message-centric executor (its default
        /// otherwise: 1 queue for 1 worker, 16 per worker for more): to tell what the queues
        /// cost from what the workers do.
        #[arg(long)]
        queues_per_worker: Option<usize>,
        /// A setting of the message-centric executor's placement, stealing or idle spin,
        /// `name=value` (repeatable; `executor/message_centric/tuning.rs` lists them): an A/B
        /// of a setting with one build (`scripts/alternate.sh`).
        #[arg(long)]
        tune: Vec<String>,
    },
    /// Idle benchmarks on actorium's executors and the Rust peers: idle CPU, wake-up
    /// latency, sparse-load CPU (writes OUT/idle.md).
    Idle {
        /// Seconds of the idle and of the sparse-load phase.
        #[arg(long, default_value_t = 10.0)]
        secs: f64,
        /// Pings of the wake-up phase (spaced 1 ms apart).
        #[arg(long, default_value_t = 10_000)]
        pings: usize,
        #[arg(long)]
        threads: Option<usize>,
    },
    /// One system's idle benchmarks, in this process (what `idle` runs in a child).
    #[command(hide = true)]
    IdleExec {
        system: String,
        threads: usize,
        secs: f64,
        pings: usize,
    },
    /// Live resizing: time to add and remove a worker while the `executor` workload runs,
    /// and the workload's slowdown under continuous resizing (writes OUT/resize.md).
    Resize {
        /// Add/remove cycles timed.
        #[arg(long, default_value_t = 200)]
        cycles: usize,
        /// Runs of each throughput case (medians).
        #[arg(long, default_value_t = 5)]
        runs: usize,
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Request/reply: sequential asks from an outside thread (round trip median, p99) and
    /// from inside an actor, on actorium's executors and the Rust peers (writes OUT/ask.md).
    Ask {
        /// Asks in each phase.
        #[arg(long, default_value_t = 1_000_000)]
        n: u64,
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Backpressure: a fast producer and a slow consumer whose mailbox holds `--capacity`
    /// messages, from a thread and from an actor, on actorium and the Rust peers with bounded
    /// mailboxes: throughput and peak memory (writes OUT/backpressure.md).
    Backpressure {
        /// Messages in each phase.
        #[arg(long, default_value_t = 500_000)]
        n: u64,
        /// The consumer's mailbox capacity.
        #[arg(long, default_value_t = 1_000)]
        capacity: usize,
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Remote actors between two processes on 127.0.0.1, with raw TCP and Zenoh floors
    /// measured in the same run: ask round trips, tell throughput, sparse asks, CPU; the
    /// peers are Erlang, CAF, ractor_cluster and kameo, or those named in `--systems`
    /// (`--systems actorium`: none) (writes OUT/remote.md).
    Remote {
        /// Round trips per latency case.
        #[arg(long, default_value_t = 20_000)]
        n: u64,
        /// Messages per throughput case.
        #[arg(long, default_value_t = 1_000_000)]
        tells: u64,
        /// Sparse round trips (one per 5 ms).
        #[arg(long, default_value_t = 200)]
        sparse: u64,
        /// Alternating rounds.
        #[arg(long, default_value_t = 5)]
        rounds: usize,
    },
    /// The server process of `remote` (node port, raw Zenoh port, TCP echo port).
    #[command(hide = true)]
    RemoteExec { node: u16, zenoh: u16, tcp: u16 },
    /// One system's backpressure benchmark, in this process (what `backpressure` runs in a
    /// child).
    #[command(hide = true)]
    BackpressureExec {
        system: String,
        threads: usize,
        n: u64,
        capacity: usize,
    },
    /// One system's ask benchmark, in this process (what `ask` runs in a child).
    #[command(hide = true)]
    AskExec {
        system: String,
        threads: usize,
        n: u64,
    },
    /// Scale: `--n` actors (default 10,000,000) spawned and kept alive, then messaged once
    /// each, on actorium's executors; `--peer-n` (default 1,000,000) on the peers: spawn
    /// rate, time to message all, bytes per actor (writes OUT/scale.md).
    Scale {
        #[arg(long, default_value_t = 10_000_000)]
        n: u64,
        #[arg(long, default_value_t = 1_000_000)]
        peer_n: u64,
        #[arg(long)]
        threads: Option<usize>,
    },
    /// One system's scale run, in this process (what `scale` runs in a child).
    #[command(hide = true)]
    ScaleExec {
        system: String,
        threads: usize,
        n: u64,
    },
    /// One report of runs at several thread counts, from their `--json` files (what
    /// `scripts/device-sweep.sh` writes): each system's time at each count against its time on
    /// 1 thread, and actorium against the fastest peer at each count (writes OUT/threads.md).
    ThreadsTable {
        /// The JSON files (`--json` of earlier runs), any thread counts.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Lists the benchmarks and systems.
    List,
}

fn available_parallelism() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

fn main() {
    let cli = Cli::parse();
    match cli.cmd {
        Some(Cmd::Exec {
            ref bench,
            ref system,
            threads,
            ref params,
            queues_per_worker,
            ref tune,
        }) => exec(bench, system, threads, params, queues_per_worker, tune),
        Some(Cmd::Idle {
            secs,
            pings,
            threads,
        }) => {
            let systems = systems_or(&cli, idle::all_systems);
            let md = idle::run(
                &systems,
                threads.unwrap_or_else(available_parallelism),
                secs,
                pings,
            );
            write_report(&cli, "idle.md", md, false);
        }
        Some(Cmd::IdleExec {
            ref system,
            threads,
            secs,
            pings,
        }) => {
            if let Err(e) = idle::exec(system, threads, secs, pings) {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
        Some(Cmd::Resize {
            cycles,
            runs,
            threads,
        }) => {
            let md = resize::run(
                threads.unwrap_or_else(available_parallelism),
                cycles,
                runs,
                cli.quick,
            );
            write_report(&cli, "resize.md", md, false);
        }
        Some(Cmd::Ask { n, threads }) => {
            let systems = systems_or(&cli, ask::all_systems);
            let n = if cli.quick { n.min(100_000) } else { n };
            let md = ask::run(&systems, threads.unwrap_or_else(available_parallelism), n);
            write_report(&cli, "ask.md", md, true);
        }
        Some(Cmd::Backpressure {
            n,
            capacity,
            threads,
        }) => {
            let systems = systems_or(&cli, backpressure::all_systems);
            let n = if cli.quick { n.min(50_000) } else { n };
            let threads = threads.unwrap_or_else(available_parallelism);
            let md = backpressure::run(&systems, threads, n, capacity);
            write_report(&cli, "backpressure.md", md, true);
        }
        Some(Cmd::Remote {
            n,
            tells,
            sparse,
            rounds,
        }) => {
            let (n, tells, sparse, rounds) = if cli.quick {
                (
                    n.min(2_000),
                    tells.min(100_000),
                    sparse.min(20),
                    rounds.min(1),
                )
            } else {
                (n, tells, sparse, rounds)
            };
            match remote::run(n, tells, rounds, sparse, &cli.systems) {
                Ok(md) => write_report(&cli, "remote.md", md, true),
                Err(e) => {
                    eprintln!("remote benchmark failed: {e}");
                    std::process::exit(1);
                }
            }
        }
        Some(Cmd::RemoteExec { node, zenoh, tcp }) => {
            if let Err(e) = remote::exec(node, zenoh, tcp) {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
        Some(Cmd::BackpressureExec {
            ref system,
            threads,
            n,
            capacity,
        }) => {
            if let Err(e) = backpressure::exec(system, threads, n, capacity) {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
        Some(Cmd::AskExec {
            ref system,
            threads,
            n,
        }) => {
            if let Err(e) = ask::exec(system, threads, n) {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
        Some(Cmd::Scale { n, peer_n, threads }) => {
            let systems = systems_or(&cli, scale::all_systems);
            let (n, peer_n) = if cli.quick {
                (n.min(100_000), peer_n.min(100_000))
            } else {
                (n, peer_n)
            };
            let md = scale::run(
                &systems,
                threads.unwrap_or_else(available_parallelism),
                n,
                peer_n,
            );
            println!("{md}");
            let _ = std::fs::create_dir_all(&cli.out);
            let path = cli.out.join("scale.md");
            let failed = md.lines().any(|l| l.contains("failed"));
            if let Err(e) = std::fs::write(&path, md) {
                eprintln!("{}: {e}", path.display());
            }
            if failed {
                std::process::exit(1);
            }
        }
        Some(Cmd::ScaleExec {
            ref system,
            threads,
            n,
        }) => {
            if let Err(e) = scale::exec(system, threads, n) {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
        Some(Cmd::ThreadsTable { ref files }) => match threads::load(files) {
            Ok(cells) => {
                let md = threads::markdown(&cells);
                write_report(&cli, "threads.md", md, false);
            }
            Err(e) => {
                eprintln!("actorium-bench: {e}");
                std::process::exit(2);
            }
        },
        Some(Cmd::List) => {
            for b in BENCHES {
                println!(
                    "{:<22} {:<15} default: {}",
                    b.name,
                    b.source,
                    b.params(false).display()
                );
            }
            for s in SYSTEMS {
                println!("{:<26} {}", s.name, s.threads_note);
            }
        }
        None => std::process::exit(suite_main(&cli)),
    }
}

/// Child mode: run one workload, print the result line.
fn exec(
    bench: &str,
    system: &str,
    threads: usize,
    params: &[String],
    qpw: Option<usize>,
    tune: &[String],
) {
    let fail = |code: i32, msg: String| -> ! {
        eprintln!("{msg}");
        std::process::exit(code)
    };
    let mut params = Params::parse(params).unwrap_or_else(|e| fail(2, e));
    // Parameters not given take the benchmark's defaults (so `exec` is handy by hand).
    if let Some(b) = suite::bench(bench) {
        for (k, v) in b.params(false).0 {
            params.0.entry(k).or_insert(v);
        }
    }
    let result = if system.starts_with("actorium") {
        actorium_impl::run(system, bench, threads, &params, qpw, tune)
    } else if qpw.is_some() || !tune.is_empty() {
        Err(format!(
            "--queues-per-worker and --tune apply to actorium's message-centric systems, \
             not to `{system}`"
        ))
    } else if actorium_peers::SYSTEMS.contains(&system) {
        actorium_peers::run(system, bench, threads, &params.0)
    } else {
        Err(format!("unknown in-process system `{system}`"))
    };
    match result {
        Ok((secs, sum)) => println!("RESULT seconds={secs:.9} checksum={sum}"),
        Err(e) if e.starts_with("n/a") => fail(harness::EXIT_NOT_APPLICABLE, e),
        Err(e) => fail(1, e),
    }
}

fn select<T>(
    names: &[String],
    all: &'static [T],
    name: fn(&T) -> &str,
    what: &str,
) -> Result<Vec<&'static T>, String> {
    if names.is_empty() {
        return Ok(all.iter().collect());
    }
    names
        .iter()
        .map(|n| {
            all.iter().find(|x| name(x) == n).ok_or_else(|| {
                let valid: Vec<&str> = all.iter().map(name).collect();
                format!("unknown {what} `{n}`; valid: {}", valid.join(", "))
            })
        })
        .collect()
}

fn suite_main(cli: &Cli) -> i32 {
    let selected = select(&cli.only, BENCHES, |b| b.name, "benchmark")
        .and_then(|b| Ok((b, select(&cli.systems, SYSTEMS, |s| s.name, "system")?)));
    let (benches, mut systems) = match selected {
        Ok(bs) => bs,
        Err(e) => {
            eprintln!("actorium-bench: {e}");
            return 2;
        }
    };
    if cli.systems.is_empty() && !cli.full {
        systems.retain(|s| !suite::FULL_ONLY.contains(&s.name));
    }
    let size = if cli.quick {
        Size::Quick
    } else if cli.full {
        Size::Full
    } else {
        Size::Standard
    };
    let threads = cli.threads.unwrap_or_else(available_parallelism);
    if threads == 0 {
        eprintln!("actorium-bench: --threads must be at least 1");
        return 2;
    }
    let runs = cli.runs.unwrap_or(if cli.full { 5 } else { 3 }).max(1);
    let timeout = Duration::from_secs(cli.timeout.unwrap_or(if cli.full { 300 } else { 60 }));

    // Build (or find) the foreign peers once.
    let ready: Vec<Result<(), String>> = systems.iter().map(|s| suite::prepare(s)).collect();
    for (s, r) in systems.iter().zip(&ready) {
        if let Err(e) = r {
            eprintln!("{}: {e}", s.name);
        }
    }

    // The sweep's second thread count: actorium's systems on 1 thread (nothing to sweep when
    // the main count is 1 already).
    let sweep = (cli.sweep || cli.full) && threads > 1;
    if cli.sweep && !sweep {
        eprintln!("actorium-bench: --sweep with 1 thread: nothing to compare, no sweep");
    }
    let swept = |s: &suite::System| sweep && s.name.starts_with("actorium");
    // Every (system, thread count) that runs a benchmark: its arms.
    let arms_of = |b: &suite::Bench| -> Vec<(usize, usize)> {
        systems
            .iter()
            .enumerate()
            .filter(|(_, s)| s.runs(b))
            .flat_map(|(k, s)| {
                let counts = if swept(s) {
                    vec![threads, 1]
                } else {
                    vec![threads]
                };
                counts.into_iter().map(move |t| (k, t))
            })
            .collect()
    };
    let total = benches
        .iter()
        .map(|b| arms_of(b).len() * runs)
        .sum::<usize>() as u64;
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} {msg}")
            .unwrap()
            .progress_chars("=> "),
    );
    let started = Instant::now();
    // `records` at `threads`; `singles`, the sweep's actorium runs on 1 thread.
    let mut records = Vec::new();
    let mut singles = Vec::new();
    for b in &benches {
        let params = b.params_at(size);
        let arms = arms_of(b);
        let recs = measure_interleaved(&bar, &systems, &ready, &arms, b, &params, runs, timeout);
        say(&bar, summary_line(b, &recs, threads));
        for rec in recs {
            if rec.threads == threads {
                records.push(rec);
            } else {
                singles.push(rec);
            }
        }
    }
    bar.finish_and_clear();

    // One table per group of workloads, with the systems that run it.
    let groups: Vec<GroupTable> = suite::Group::ALL
        .iter()
        .filter_map(|&g| {
            let benches: Vec<String> = benches
                .iter()
                .filter(|b| b.group == g)
                .map(|b| b.name.to_string())
                .collect();
            let systems: Vec<String> = systems
                .iter()
                .filter(|s| s.groups.contains(&g))
                .map(|s| s.name.to_string())
                .collect();
            (!benches.is_empty() && !systems.is_empty()).then(|| GroupTable {
                table: report::markdown(&records, &benches, &systems),
                group: g,
                benches,
                systems,
            })
        })
        .collect();
    for g in &groups {
        println!("## {}\n\n{}", g.group.title(), g.table);
        if let Some(t) =
            report::markdown_scaling(&records, &singles, &g.benches, &g.systems, threads)
        {
            println!("{t}");
        }
    }
    println!(
        "{} benchmarks × {} systems × {runs} runs, {threads} threads{} in {:.0} s",
        benches.len(),
        systems.len(),
        size_note(cli),
        started.elapsed().as_secs_f64()
    );
    if let Err(e) = write_outputs(cli, &records, &singles, &groups, threads, runs) {
        eprintln!("actorium-bench: {e}");
        return 1;
    }
    // Peers' failures are their cells (listed here); only actorium's fail the run.
    let (ours, theirs): (Vec<&Record>, Vec<&Record>) = records
        .iter()
        .chain(&singles)
        .filter(|r| r.is_error())
        .partition(|r| r.system.starts_with("actorium"));
    if !theirs.is_empty() {
        eprintln!("peers that failed (their cells say so; the run still passes):");
        for r in &theirs {
            eprintln!(
                "  {} on {}, {} threads: {} {}",
                r.benchmark,
                r.system,
                r.threads,
                r.status,
                r.note.as_deref().unwrap_or("")
            );
        }
    }
    for r in &ours {
        eprintln!(
            "error: {} on {}, {} threads: {} {}",
            r.benchmark,
            r.system,
            r.threads,
            r.status,
            r.note.as_deref().unwrap_or("")
        );
    }
    i32::from(!ours.is_empty())
}

/// One group's workloads, systems and main table.
struct GroupTable {
    group: suite::Group,
    benches: Vec<String>,
    systems: Vec<String>,
    table: String,
}

/// How the run was sized, for the report.
fn size_note(cli: &Cli) -> &'static str {
    if cli.quick {
        ", --quick sizes"
    } else if cli.full {
        ", full sizes (--full)"
    } else {
        ", standard sizes (the default run; --full for the full sizes)"
    }
}

/// All `runs` of benchmark `b` on every arm (a system and a thread count), interleaved: each
/// round runs every arm once, in turn, so that a slow phase of the machine hits them alike.
/// An arm whose run fails (or times out) is not run again; a record that is not `ok` is also
/// printed above the progress bar.
#[allow(clippy::too_many_arguments)]
fn measure_interleaved(
    bar: &ProgressBar,
    systems: &[&suite::System],
    ready: &[Result<(), String>],
    arms: &[(usize, usize)],
    b: &suite::Bench,
    params: &suite::Params,
    runs: usize,
    timeout: Duration,
) -> Vec<Record> {
    let mut results: Vec<Vec<Result<harness::Measured, harness::RunError>>> =
        vec![Vec::with_capacity(runs); arms.len()];
    let mut done = vec![false; arms.len()];
    for (k, &(sys, _)) in arms.iter().enumerate() {
        if ready[sys].is_err() {
            done[k] = true;
            bar.inc(runs as u64);
        }
    }
    for i in 0..runs {
        for (k, &(sys, threads)) in arms.iter().enumerate() {
            if done[k] {
                continue;
            }
            let s = systems[sys];
            bar.set_message(format!(
                "{} on {}, {threads} threads (round {}/{runs})",
                b.name,
                s.name,
                i + 1
            ));
            let r = harness::run_once(s, b, threads, params, timeout);
            if r.is_err() {
                done[k] = true;
                bar.inc((runs - i - 1) as u64);
            }
            results[k].push(r);
            bar.inc(1);
        }
    }
    arms.iter()
        .zip(results)
        .map(|(&(sys, threads), results)| {
            let s = systems[sys];
            let rec = match &ready[sys] {
                Err(why) => Record::unavailable(b, s.name, threads, params, why),
                Ok(()) => Record::from_runs(b, s.name, threads, params, &results),
            };
            if rec.status != "ok" && rec.status != "not installed" {
                say(
                    bar,
                    format!(
                        "{} on {}, {threads} threads: {} {}",
                        b.name,
                        s.name,
                        rec.status,
                        rec.note.as_deref().unwrap_or("")
                    ),
                );
            }
            rec
        })
        .collect()
}

/// A line above the progress bar, or on standard error when there is no bar (not a terminal:
/// a CI log still shows one line per workload as the run goes).
fn say(bar: &ProgressBar, line: String) {
    if bar.is_hidden() {
        eprintln!("{line}");
    } else {
        bar.println(line);
    }
}

/// One line per finished workload: the default actorium system's median and the fastest peer's.
fn summary_line(b: &suite::Bench, recs: &[Record], threads: usize) -> String {
    let at = |r: &&Record| r.threads == threads && r.median_s.is_some();
    let ours = recs
        .iter()
        .filter(at)
        .filter(|r| r.system.starts_with("actorium"))
        .min_by(|x, y| x.median_s.unwrap().total_cmp(&y.median_s.unwrap()));
    let peer = recs
        .iter()
        .filter(at)
        .filter(|r| !r.system.starts_with("actorium") && r.system != "sequential")
        .min_by(|x, y| x.median_s.unwrap().total_cmp(&y.median_s.unwrap()));
    let cell = |r: Option<&Record>| match r {
        Some(r) => format!("{} {}", r.system, report::fmt_time(r.median_s.unwrap())),
        None => "none".into(),
    };
    format!(
        "{:<22} best actorium: {:<40} best peer: {}",
        b.name,
        cell(ours),
        cell(peer)
    )
}

fn write_outputs(
    cli: &Cli,
    records: &[Record],
    singles: &[Record],
    groups: &[GroupTable],
    threads: usize,
    runs: usize,
) -> Result<(), String> {
    std::fs::create_dir_all(&cli.out).map_err(|e| format!("{}: {e}", cli.out.display()))?;
    let mut md = format!(
        "# actorium-bench results\n\n{threads} threads, {runs} runs each (median){}. Runs \
         are interleaved: for each workload, each round runs every system once, in turn, so \
         that a slow phase of the machine hits every system alike.\n",
        size_note(cli),
    );
    let mut charts = Vec::new();
    for g in groups {
        let systems_note = SYSTEMS
            .iter()
            .filter(|s| g.systems.iter().any(|n| n == s.name))
            .map(|s| format!("{} ({})", s.name, s.threads_note))
            .collect::<Vec<_>>()
            .join("; ");
        md.push_str(&format!(
            "\n## {}\n\n{}\n### Each family at its best\n\n{}\n### Peak RSS\n\n{}\nSystems: \
             {systems_note}.\n",
            g.group.title(),
            g.table,
            report::markdown_best(records, &g.benches, &g.systems, suite::family),
            report::markdown_rss(records, &g.benches, &g.systems),
        ));
        let svg = cli.out.join(match g.group {
            suite::Group::Actors => "ratios.svg",
            suite::Group::ForkJoin => "ratios-forkjoin.svg",
        });
        if let Some(t) = report::markdown_scaling(records, singles, &g.benches, &g.systems, threads)
        {
            md.push_str(&format!("\n{t}"));
        }
        report::chart(records, &g.benches, &g.systems, &svg)?;
        charts.push(svg.display().to_string());
    }
    let md_path = cli.out.join("results.md");
    std::fs::write(&md_path, md).map_err(|e| format!("{}: {e}", md_path.display()))?;
    if let Some(path) = &cli.json {
        // Every record, the sweep's 1-thread ones too (each names its thread count).
        let all: Vec<&Record> = records.iter().chain(singles).collect();
        let json = serde_json::to_string_pretty(&all).map_err(|e| e.to_string())?;
        std::fs::write(path, json).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    eprintln!("wrote {} and {}", md_path.display(), charts.join(", "));
    Ok(())
}

/// Prints a subcommand's Markdown report and writes it to `OUT/file`; with `fail_on_failed`,
/// exits 1 if a system's cell says it failed.
fn write_report(cli: &Cli, file: &str, md: String, fail_on_failed: bool) {
    println!("{md}");
    let _ = std::fs::create_dir_all(&cli.out);
    let path = cli.out.join(file);
    let failed = fail_on_failed && md.contains("| failed");
    if let Err(e) = std::fs::write(&path, md) {
        eprintln!("{}: {e}", path.display());
    }
    if failed {
        std::process::exit(1);
    }
}

/// The systems named with `--systems`, or else a subcommand's default list.
fn systems_or(cli: &Cli, all: fn() -> Vec<String>) -> Vec<String> {
    if cli.systems.is_empty() {
        all()
    } else {
        cli.systems.clone()
    }
}
