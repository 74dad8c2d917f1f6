//! The benchmark suite: workloads, their parameters and expected checksums (see
//! `BENCHMARKS.md`; the formulas are `actorium_peers::common::expected_checksum`, shared with
//! the peers' own tests), and the systems they run on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Parameters of one workload run: `name = value`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Params(pub BTreeMap<String, u64>);

impl Params {
    fn of(pairs: &[(&str, u64)]) -> Self {
        Self(pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect())
    }

    /// The value of `name`; a missing parameter is a bug in the suite definition.
    pub fn get(&self, name: &str) -> u64 {
        *self
            .0
            .get(name)
            .unwrap_or_else(|| panic!("parameter `{name}` missing"))
    }

    /// `k=v` arguments for an implementation's command line.
    pub fn args(&self) -> Vec<String> {
        self.0.iter().map(|(k, v)| format!("{k}={v}")).collect()
    }

    /// Parses `k=v` arguments.
    pub fn parse(args: &[String]) -> Result<Self, String> {
        let mut m = BTreeMap::new();
        for a in args {
            let (k, v) = a
                .split_once('=')
                .ok_or_else(|| format!("expected k=v, got `{a}`"))?;
            let v = v
                .parse()
                .map_err(|_| format!("`{a}`: value is not a non-negative integer"))?;
            m.insert(k.to_string(), v);
        }
        Ok(Self(m))
    }

    /// `k=v k=v` for display.
    pub fn display(&self) -> String {
        self.args().join(" ")
    }
}

/// One workload of the suite.
pub struct Bench {
    pub name: &'static str,
    pub source: &'static str,
    /// The full suite's parameters (`--full`, and `exec` when none are given).
    default: Table,
    /// The main job's (the default run: about a third of the full work, so that every peer
    /// fits in about 10 minutes on 2 cores).
    standard: Table,
    /// `--quick` (CI's smoke run).
    quick: Table,
    /// What one "operation" is, for `per_op_ns`.
    pub op: &'static str,
    ops: fn(&Params) -> u64,
    /// Actor workloads or fork/join workloads (each group has its own table and systems).
    pub group: Group,
}

/// How much work each workload does: `--quick` (CI), the default run, or `--full`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    Quick,
    Standard,
    Full,
}

/// The two groups of workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// Message passing between actors (the Cforall actor system: Colby Parsons, MMath thesis,
    /// Waterloo 2023; and Savina).
    Actors,
    /// Divide-and-conquer tasks, as Java's fork/join: `join` and scopes.
    ForkJoin,
}

impl Group {
    pub const ALL: [Group; 2] = [Group::Actors, Group::ForkJoin];

    pub fn title(self) -> &'static str {
        match self {
            Group::Actors => "Actor workloads",
            Group::ForkJoin => "Fork/join workloads",
        }
    }
}

impl Bench {
    /// The full parameters, or the quick ones.
    pub fn params(&self, quick: bool) -> Params {
        Params::of(if quick { self.quick } else { self.default })
    }

    /// The parameters of a run of `size`.
    pub fn params_at(&self, size: Size) -> Params {
        Params::of(match size {
            Size::Quick => self.quick,
            Size::Standard => self.standard,
            Size::Full => self.default,
        })
    }

    pub fn ops(&self, p: &Params) -> u64 {
        (self.ops)(p)
    }

    /// The checksum a correct run must produce.
    pub fn expected(&self, p: &Params) -> u64 {
        actorium_peers::common::expected_checksum(self.name, &p.0)
    }
}

type Table = &'static [(&'static str, u64)];

const EXECUTOR_DEFAULT: Table = &[("actors", 40_000), ("group", 100), ("rounds", 4)];
const EXECUTOR_QUICK: Table = &[("actors", 4_000), ("group", 100), ("rounds", 2)];
const BALANCE_DEFAULT: Table = &[("actors", 20_000), ("group", 100), ("rounds", 4)];
const BALANCE_QUICK: Table = &[("actors", 2_000), ("group", 100), ("rounds", 2)];
const EXECUTOR_STANDARD: Table = &[("actors", 12_000), ("group", 100), ("rounds", 3)];
const BALANCE_STANDARD: Table = &[("actors", 6_000), ("group", 100), ("rounds", 3)];

/// The thesis' executor workload and its placed variants (balance-one, balance-multi).
const fn executor_family(
    name: &'static str,
    default: Table,
    standard: Table,
    quick: Table,
) -> Bench {
    Bench {
        name,
        source: "Cforall thesis",
        default,
        standard,
        quick,
        op: "message",
        ops: executor_total,
        group: Group::Actors,
    }
}

fn executor_total(p: &Params) -> u64 {
    p.get("actors") * (p.get("rounds") * p.get("group") + 1)
}

/// The suite, in report order.
pub const BENCHES: &[Bench] = &[
    Bench {
        name: "static-send",
        source: "Cforall thesis",
        default: &[("n", 10_000_000)],
        quick: &[("n", 1_000_000)],
        standard: &[("n", 3_000_000)],
        op: "send",
        ops: |p| p.get("n"),
        group: Group::Actors,
    },
    Bench {
        name: "dynamic-send",
        source: "Cforall thesis",
        default: &[("n", 1_000_000)],
        quick: &[("n", 100_000)],
        standard: &[("n", 300_000)],
        op: "spawn+send",
        ops: |p| p.get("n"),
        group: Group::Actors,
    },
    executor_family(
        "executor",
        EXECUTOR_DEFAULT,
        EXECUTOR_STANDARD,
        EXECUTOR_QUICK,
    ),
    Bench {
        name: "repeat",
        source: "Cforall thesis",
        default: &[("servers", 100_000), ("reps", 20)],
        quick: &[("servers", 10_000), ("reps", 10)],
        standard: &[("servers", 30_000), ("reps", 15)],
        op: "message",
        ops: |p| 2 * p.get("servers") * p.get("reps"),
        group: Group::Actors,
    },
    Bench {
        name: "matrix",
        source: "Cforall thesis",
        default: &[("n", 1024)],
        quick: &[("n", 256)],
        standard: &[("n", 512)],
        op: "row",
        ops: |p| p.get("n"),
        group: Group::Actors,
    },
    executor_family(
        "balance-one",
        BALANCE_DEFAULT,
        BALANCE_STANDARD,
        BALANCE_QUICK,
    ),
    executor_family(
        "balance-multi",
        BALANCE_DEFAULT,
        BALANCE_STANDARD,
        BALANCE_QUICK,
    ),
    Bench {
        name: "ping-pong",
        source: "Savina",
        default: &[("n", 40_000)],
        quick: &[("n", 10_000)],
        standard: &[("n", 20_000)],
        op: "round trip",
        ops: |p| p.get("n"),
        group: Group::Actors,
    },
    Bench {
        name: "counting",
        source: "Savina",
        default: &[("n", 1_000_000)],
        quick: &[("n", 100_000)],
        standard: &[("n", 300_000)],
        op: "message",
        ops: |p| p.get("n"),
        group: Group::Actors,
    },
    Bench {
        name: "fork-join-throughput",
        source: "Savina",
        default: &[("actors", 60), ("msgs", 10_000)],
        quick: &[("actors", 60), ("msgs", 1_000)],
        standard: &[("actors", 60), ("msgs", 3_000)],
        op: "message",
        ops: |p| p.get("actors") * p.get("msgs"),
        group: Group::Actors,
    },
    Bench {
        name: "fork-join-creation",
        source: "Savina",
        default: &[("n", 40_000)],
        quick: &[("n", 10_000)],
        standard: &[("n", 20_000)],
        op: "actor",
        ops: |p| p.get("n"),
        group: Group::Actors,
    },
    Bench {
        name: "thread-ring",
        source: "Savina",
        default: &[("actors", 100), ("passes", 100_000)],
        quick: &[("actors", 100), ("passes", 10_000)],
        standard: &[("actors", 100), ("passes", 30_000)],
        op: "hop",
        ops: |p| p.get("passes") + 1,
        group: Group::Actors,
    },
    Bench {
        name: "chameneos",
        source: "Savina",
        default: &[("creatures", 100), ("meetings", 200_000)],
        quick: &[("creatures", 100), ("meetings", 20_000)],
        standard: &[("creatures", 100), ("meetings", 60_000)],
        op: "meeting",
        ops: |p| p.get("meetings"),
        group: Group::Actors,
    },
    Bench {
        name: "big",
        source: "Savina",
        default: &[("actors", 120), ("pings", 20_000)],
        quick: &[("actors", 120), ("pings", 2_000)],
        standard: &[("actors", 120), ("pings", 6_000)],
        op: "ping",
        ops: |p| p.get("actors") * p.get("pings"),
        group: Group::Actors,
    },
    Bench {
        name: "logistic-map",
        source: "Savina",
        default: &[("series", 10), ("terms", 25_000)],
        quick: &[("series", 10), ("terms", 2_500)],
        standard: &[("series", 10), ("terms", 8_000)],
        op: "term",
        ops: |p| p.get("series") * p.get("terms"),
        group: Group::Actors,
    },
    Bench {
        name: "banking",
        source: "Savina",
        default: &[("accounts", 1_000), ("transactions", 50_000)],
        quick: &[("accounts", 1_000), ("transactions", 5_000)],
        standard: &[("accounts", 1_000), ("transactions", 15_000)],
        op: "transfer",
        ops: |p| p.get("transactions"),
        group: Group::Actors,
    },
    Bench {
        name: "dictionary",
        source: "Savina",
        default: &[("workers", 20), ("msgs", 10_000), ("write", 10)],
        quick: &[("workers", 20), ("msgs", 1_000), ("write", 10)],
        standard: &[("workers", 20), ("msgs", 3_000), ("write", 10)],
        op: "request",
        ops: |p| p.get("workers") * p.get("msgs"),
        group: Group::Actors,
    },
    Bench {
        name: "bounded-buffer",
        source: "Savina",
        default: &[
            ("producers", 40),
            ("consumers", 40),
            ("items", 1_000),
            ("buffer", 50),
            ("cost", 25),
        ],
        quick: &[
            ("producers", 40),
            ("consumers", 40),
            ("items", 100),
            ("buffer", 50),
            ("cost", 25),
        ],
        standard: &[
            ("producers", 40),
            ("consumers", 40),
            ("items", 300),
            ("buffer", 50),
            ("cost", 25),
        ],
        op: "item",
        ops: |p| p.get("producers") * p.get("items"),
        group: Group::Actors,
    },
    Bench {
        name: "sleeping-barber",
        source: "Savina",
        default: &[
            ("customers", 5_000),
            ("room", 1_000),
            ("arrival", 1_000),
            ("cut", 1_000),
        ],
        quick: &[
            ("customers", 500),
            ("room", 1_000),
            ("arrival", 1_000),
            ("cut", 1_000),
        ],
        standard: &[
            ("customers", 1_500),
            ("room", 1_000),
            ("arrival", 1_000),
            ("cut", 1_000),
        ],
        op: "haircut",
        ops: |p| p.get("customers"),
        group: Group::Actors,
    },
    Bench {
        name: "cigarette-smokers",
        source: "Savina",
        default: &[("smokers", 200), ("rounds", 10_000), ("smoke", 1_000)],
        quick: &[("smokers", 200), ("rounds", 1_000), ("smoke", 1_000)],
        standard: &[("smokers", 200), ("rounds", 3_000), ("smoke", 1_000)],
        op: "round",
        ops: |p| p.get("rounds"),
        group: Group::Actors,
    },
    Bench {
        name: "pipeline-lanes",
        source: "pipeline",
        default: &[("items", 100_000), ("lanes", 4), ("cost", 200)],
        quick: &[("items", 10_000), ("lanes", 4), ("cost", 200)],
        standard: &[("items", 30_000), ("lanes", 4), ("cost", 200)],
        op: "item",
        ops: |p| p.get("items"),
        group: Group::Actors,
    },
    Bench {
        name: "pipeline-chain",
        source: "pipeline",
        default: &[("items", 20_000), ("stages", 60), ("cost", 40)],
        quick: &[("items", 2_000), ("stages", 60), ("cost", 40)],
        standard: &[("items", 6_000), ("stages", 60), ("cost", 40)],
        op: "hop",
        ops: |p| p.get("items") * p.get("stages"),
        group: Group::Actors,
    },
    Bench {
        name: "fib",
        source: "fork/join",
        default: &[("n", 32)],
        quick: &[("n", 27)],
        standard: &[("n", 30)],
        op: "join",
        // fib(n) makes fib(n + 1) - 1 joins.
        ops: |p| fib(p.get("n") + 1) - 1,
        group: Group::ForkJoin,
    },
    Bench {
        name: "quicksort",
        source: "fork/join",
        default: &[("n", 10_000_000), ("cutoff", 1_000)],
        quick: &[("n", 1_000_000), ("cutoff", 1_000)],
        standard: &[("n", 3_000_000), ("cutoff", 1_000)],
        op: "element",
        ops: |p| p.get("n"),
        group: Group::ForkJoin,
    },
    Bench {
        name: "nqueens",
        source: "fork/join",
        default: &[("n", 12)],
        quick: &[("n", 10)],
        standard: &[("n", 11)],
        op: "solution",
        ops: |p| actorium_peers::common::expected_checksum("nqueens", &p.0),
        group: Group::ForkJoin,
    },
    Bench {
        name: "matmul",
        source: "Savina (recursive)",
        default: &[("n", 1024), ("threshold", 16_384)],
        quick: &[("n", 256), ("threshold", 16_384)],
        standard: &[("n", 512), ("threshold", 16_384)],
        op: "multiply-add",
        ops: |p| p.get("n").pow(3),
        group: Group::ForkJoin,
    },
    Bench {
        name: "tree-sum-small",
        source: "chili/spice",
        default: &[("nodes", 1_023), ("reps", 20_000)],
        quick: &[("nodes", 1_023), ("reps", 2_000)],
        standard: &[("nodes", 1_023), ("reps", 6_000)],
        op: "node",
        ops: |p| p.get("nodes") * p.get("reps"),
        group: Group::ForkJoin,
    },
    Bench {
        name: "tree-sum-big",
        source: "chili/spice",
        default: &[("depth", 24)],
        quick: &[("depth", 20)],
        standard: &[("depth", 22)],
        op: "node",
        ops: |p| (1 << p.get("depth")) - 1,
        group: Group::ForkJoin,
    },
];

fn fib(n: u64) -> u64 {
    let (mut a, mut b) = (0u64, 1u64);
    for _ in 0..n {
        (a, b) = (b, a + b);
    }
    a
}

/// The family of the system named `name` (its own name if it is not in the suite).
pub fn family(name: &str) -> &'static str {
    SYSTEMS
        .iter()
        .find(|s| s.name == name)
        .map_or("other", |s| s.family)
}

pub fn bench(name: &str) -> Option<&'static Bench> {
    BENCHES.iter().find(|b| b.name == name)
}

/// How a system runs a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// In this binary (`actorium-bench exec ...`).
    InProcess,
    /// CAF 0.17, C++ binary built from `peers/caf`.
    Caf(&'static str),
    /// Erlang/OTP, module built from `peers/erlang`.
    Erlang,
    /// Intel TBB, C++ binary built from `peers/tbb`.
    Tbb,
    /// Java's ForkJoinPool, classes built from `peers/java`.
    Java,
}

pub struct System {
    pub name: &'static str,
    /// The family of configurations it belongs to (the best of each is reported too).
    pub family: &'static str,
    pub kind: Kind,
    /// How its threads are configured, for the report.
    pub threads_note: &'static str,
    /// The workload groups it runs.
    pub groups: &'static [Group],
}

const ACTORS: &[Group] = &[Group::Actors];
const BOTH: &[Group] = &[Group::Actors, Group::ForkJoin];
const FORK_JOIN: &[Group] = &[Group::ForkJoin];

impl System {
    /// Whether it runs `b`.
    pub fn runs(&self, b: &Bench) -> bool {
        self.groups.contains(&b.group)
    }
}

/// Ablations of the default system's queue stealing, run only by `--full` (or when named in
/// `--systems`).
pub const FULL_ONLY: &[&str] = &["actorium-random-victim", "actorium-no-stealing"];

/// Every system, in report order. Register new actorium executors here as they land.
pub const SYSTEMS: &[System] = &[
    System {
        name: "actorium",
        family: "actorium",
        kind: Kind::InProcess,
        threads_note: "`workers(T)`, 16 queues per worker, longest-victim queue stealing (default)",
        groups: BOTH,
    },
    System {
        name: "actorium-random-victim",
        family: "actorium",
        kind: Kind::InProcess,
        threads_note: "as above, random-victim queue stealing",
        groups: ACTORS,
    },
    System {
        name: "actorium-no-stealing",
        family: "actorium",
        kind: Kind::InProcess,
        threads_note: "as above, no stealing",
        groups: ACTORS,
    },
    System {
        name: "actorium-policy-stealing",
        family: "actorium",
        kind: Kind::InProcess,
        threads_note:
            "actor-centric executor, `workers(T)`, work stealing with CAF's polling tiers",
        groups: BOTH,
    },
    System {
        name: "actorium-policy-sharing",
        family: "actorium",
        kind: Kind::InProcess,
        threads_note: "actor-centric executor, `workers(T)`, work sharing",
        groups: ACTORS,
    },
    System {
        name: "actix",
        family: "actix",
        kind: Kind::InProcess,
        threads_note: "T arbiters, actors round-robin",
        groups: ACTORS,
    },
    System {
        name: "actix-1",
        family: "actix",
        kind: Kind::InProcess,
        threads_note: "1 arbiter, every actor on it (T ignored)",
        groups: ACTORS,
    },
    System {
        name: "ractor",
        family: "ractor",
        kind: Kind::InProcess,
        threads_note: "tokio, `worker_threads(T)`",
        groups: ACTORS,
    },
    System {
        name: "kameo",
        family: "kameo",
        kind: Kind::InProcess,
        threads_note: "tokio, `worker_threads(T)`",
        groups: ACTORS,
    },
    System {
        name: "tokio-mpsc",
        family: "tokio-mpsc",
        kind: Kind::InProcess,
        threads_note: "tokio, `worker_threads(T)`, a task per actor, unbounded `mpsc` mailboxes",
        groups: ACTORS,
    },
    System {
        name: "caf-stealing",
        family: "caf",
        kind: Kind::Caf("stealing"),
        threads_note: "`scheduler.max-threads = T`, policy stealing",
        groups: ACTORS,
    },
    System {
        name: "caf-sharing",
        family: "caf",
        kind: Kind::Caf("sharing"),
        threads_note: "`scheduler.max-threads = T`, policy sharing",
        groups: ACTORS,
    },
    System {
        name: "erlang",
        family: "erlang",
        kind: Kind::Erlang,
        threads_note: "`erl +S T:T`",
        groups: ACTORS,
    },
    System {
        name: "sequential",
        family: "sequential",
        kind: Kind::InProcess,
        threads_note: "the fork/join code with `join` running both closures in turn (T ignored)",
        groups: FORK_JOIN,
    },
    System {
        name: "rayon",
        family: "rayon",
        kind: Kind::InProcess,
        threads_note: "`ThreadPoolBuilder::num_threads(T)`, `rayon::join`",
        groups: FORK_JOIN,
    },
    System {
        name: "chili",
        family: "chili",
        kind: Kind::InProcess,
        threads_note: "`Config { thread_count: T }` (the caller is one of them), `Scope::join`",
        groups: FORK_JOIN,
    },
    System {
        name: "tbb",
        family: "tbb",
        kind: Kind::Tbb,
        threads_note: "oneTBB, `task_arena(T)`, `parallel_invoke`",
        groups: FORK_JOIN,
    },
    System {
        name: "java-forkjoin",
        family: "java-forkjoin",
        kind: Kind::Java,
        threads_note: "Java 17 `new ForkJoinPool(T)`, `fork`/`compute`/`join`; the second of two runs in one JVM (JIT warmed)",
        groups: FORK_JOIN,
    },
];

/// The bench crate's directory (peers live under it).
pub fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn caf_binary() -> PathBuf {
    crate_dir().join("peers/caf/build/caf-bench")
}

pub fn erlang_ebin() -> PathBuf {
    crate_dir().join("peers/erlang/ebin")
}

pub fn tbb_binary() -> PathBuf {
    crate_dir().join("peers/tbb/build/tbb-bench")
}

pub fn java_classes() -> PathBuf {
    crate_dir().join("peers/java/build")
}

/// Whether a system can run here; for foreign peers, builds them (once) if their toolchain is
/// installed. `Err` says why not ("not installed: ...").
pub fn prepare(sys: &System) -> Result<(), String> {
    match sys.kind {
        Kind::InProcess => Ok(()),
        Kind::Caf(_) => {
            if !Path::new("/usr/include/caf/all.hpp").exists() {
                return Err("not installed (libcaf-dev; run scripts/install-peers.sh)".into());
            }
            build_once("caf", &caf_binary())
        }
        Kind::Erlang => {
            if Command::new("erl").arg("-version").output().is_err() {
                return Err("not installed (erlang-nox; run scripts/install-peers.sh)".into());
            }
            build_once("erlang", &erlang_ebin().join("actorium_bench.beam"))
        }
        Kind::Tbb => {
            if !Path::new("/usr/include/tbb/parallel_invoke.h").exists()
                && !Path::new("/usr/include/oneapi/tbb/parallel_invoke.h").exists()
            {
                return Err("not installed (libtbb-dev; run scripts/install-peers.sh)".into());
            }
            build_once("tbb", &tbb_binary())
        }
        Kind::Java => {
            if Command::new("javac").arg("-version").output().is_err() {
                return Err("not installed (a JDK; run scripts/install-peers.sh)".into());
            }
            build_once("java", &java_classes().join("ForkJoinBench.class"))
        }
    }
}

pub(crate) fn build_once(peer: &str, product: &Path) -> Result<(), String> {
    let dir = crate_dir().join("peers").join(peer);
    let src_newer = std::fs::read_dir(&dir)
        .map_err(|e| e.to_string())?
        .flatten()
        .filter(|e| e.path().is_file())
        .filter_map(|e| e.metadata().ok()?.modified().ok())
        .max();
    let built = product.metadata().and_then(|m| m.modified()).ok();
    if matches!((built, src_newer), (Some(b), Some(s)) if b >= s) {
        return Ok(());
    }
    let out = Command::new("bash")
        .arg(dir.join("build.sh"))
        .output()
        .map_err(|e| format!("build of {peer} failed to start: {e}"))?;
    if out.status.success() && product.exists() {
        Ok(())
    } else {
        Err(format!(
            "build failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}
