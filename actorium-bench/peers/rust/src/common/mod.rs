//! What the peers share: the parsed workload, parameter lookup, the expected checksums
//! ([`expected_checksum`]), the tiny computation, xorshift, the matrices, the completion latch,
//! the tokio runtime set-up and an actix system on a thread of its own; the Savina workloads'
//! shared rules are in [`savina`].

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;

mod savina;
pub use savina::*;

/// How long the driver waits for completion before giving up (a lost message or a panicked
/// actor would otherwise hang the process).
pub const WAIT_LIMIT: Duration = Duration::from_secs(600);

/// One workload with its parameters; `Matrix` carries its data, built before the clock.
pub enum Bench {
    StaticSend {
        n: u64,
    },
    DynamicSend {
        n: u64,
    },
    Executor {
        actors: u64,
        group: u64,
        rounds: u64,
    },
    Repeat {
        servers: u64,
        reps: u64,
    },
    Matrix {
        n: usize,
        x: Arc<Vec<u64>>,
        y: Arc<Vec<u64>>,
    },
    PingPong {
        n: u64,
    },
    Counting {
        n: u64,
    },
    ForkJoinThroughput {
        actors: u64,
        msgs: u64,
    },
    ForkJoinCreation {
        n: u64,
    },
    /// `actorium-bench scale`: `n` actors spawned and kept alive, then sent one message each
    /// (the fork-join workers with one message each, the two phases marked: [`mark`]).
    Scale {
        n: u64,
    },
    ThreadRing {
        actors: u64,
        passes: u64,
    },
    Chameneos {
        creatures: u64,
        meetings: u64,
    },
    Dictionary {
        workers: u64,
        msgs: u64,
        write: u64,
    },
    Banking {
        accounts: u64,
        transactions: u64,
    },
    LogisticMap {
        series: u64,
        terms: u64,
    },
    BoundedBuffer {
        producers: u64,
        consumers: u64,
        items: u64,
        buffer: u64,
        cost: u64,
    },
    SleepingBarber {
        customers: u64,
        room: u64,
        arrival: u64,
        cut: u64,
    },
    CigaretteSmokers {
        smokers: u64,
        rounds: u64,
        smoke: u64,
    },
    Big {
        actors: u64,
        pings: u64,
    },
    /// The driver → a splitter → `lanes` busy lanes → a merger → a sink.
    PipelineLanes {
        items: u64,
        lanes: u64,
        cost: u64,
    },
    /// The driver → `stages` busy stages in a chain → a sink.
    PipelineChain {
        items: u64,
        stages: u64,
        cost: u64,
    },
}

/// The one dispatch of a peer's `run`: awaits the workload function of `$work`'s variant, each
/// of the same name in the calling module (`static_send`, `executor`, `pipeline_chain`...),
/// with `$pre` (actix's placer) before the workload's parameters.
macro_rules! run_workload {
    ($work:expr $(, $pre:expr)*) => {
        match $work {
            $crate::common::Bench::StaticSend { n } => static_send($($pre,)* n).await,
            $crate::common::Bench::DynamicSend { n } => dynamic_send($($pre,)* n).await,
            $crate::common::Bench::Executor { actors, group, rounds } => {
                executor($($pre,)* actors, group, rounds).await
            }
            $crate::common::Bench::Repeat { servers, reps } => {
                repeat($($pre,)* servers, reps).await
            }
            $crate::common::Bench::Matrix { n, x, y } => matrix($($pre,)* n, x, y).await,
            $crate::common::Bench::PingPong { n } => ping_pong($($pre,)* n).await,
            $crate::common::Bench::Counting { n } => counting($($pre,)* n).await,
            $crate::common::Bench::ForkJoinThroughput { actors, msgs } => {
                fj_throughput($($pre,)* actors, msgs).await
            }
            $crate::common::Bench::ForkJoinCreation { n } => fj_creation($($pre,)* n).await,
            $crate::common::Bench::Scale { n } => scale($($pre,)* n).await,
            $crate::common::Bench::ThreadRing { actors, passes } => {
                thread_ring($($pre,)* actors, passes).await
            }
            $crate::common::Bench::Chameneos { creatures, meetings } => {
                chameneos($($pre,)* creatures, meetings).await
            }
            $crate::common::Bench::Big { actors, pings } => big($($pre,)* actors, pings).await,
            $crate::common::Bench::LogisticMap { series, terms } => {
                logistic_map($($pre,)* series, terms).await
            }
            $crate::common::Bench::Banking { accounts, transactions } => {
                banking($($pre,)* accounts, transactions).await
            }
            $crate::common::Bench::Dictionary { workers, msgs, write } => {
                dictionary($($pre,)* workers, msgs, write).await
            }
            $crate::common::Bench::BoundedBuffer { producers, consumers, items, buffer, cost } => {
                bounded_buffer($($pre,)* producers, consumers, items, buffer, cost).await
            }
            $crate::common::Bench::SleepingBarber { customers, room, arrival, cut } => {
                sleeping_barber($($pre,)* customers, room, arrival, cut).await
            }
            $crate::common::Bench::CigaretteSmokers { smokers, rounds, smoke } => {
                cigarette_smokers($($pre,)* smokers, rounds, smoke).await
            }
            $crate::common::Bench::PipelineLanes { items, lanes, cost } => {
                pipeline_lanes($($pre,)* items, lanes, cost).await
            }
            $crate::common::Bench::PipelineChain { items, stages, cost } => {
                pipeline_chain($($pre,)* items, stages, cost).await
            }
        }
    };
}
pub(crate) use run_workload;

/// Looks up parameter `name`.
pub fn param(params: &BTreeMap<String, u64>, name: &str) -> Result<u64, String> {
    params
        .get(name)
        .copied()
        .ok_or_else(|| format!("missing parameter `{name}`"))
}

pub fn positive(params: &BTreeMap<String, u64>, name: &str) -> Result<u64, String> {
    match param(params, name)? {
        0 => Err(format!("parameter `{name}` must be positive")),
        v => Ok(v),
    }
}

impl Bench {
    /// Parses `bench` for `framework` (named in the n/a message of the balance workloads).
    /// Builds the matrices of `matrix`, so call it before starting the runtime.
    pub fn parse(framework: &str, bench: &str, p: &BTreeMap<String, u64>) -> Result<Bench, String> {
        Ok(match bench {
            "static-send" => Bench::StaticSend {
                n: positive(p, "n")?,
            },
            "dynamic-send" => Bench::DynamicSend {
                n: positive(p, "n")?,
            },
            "executor" => {
                let (actors, group, rounds) = (
                    param(p, "actors")?,
                    positive(p, "group")?,
                    param(p, "rounds")?,
                );
                if actors % group != 0 {
                    return Err(format!(
                        "actors={actors} is not a multiple of group={group}"
                    ));
                }
                Bench::Executor {
                    actors,
                    group,
                    rounds,
                }
            }
            "balance-one" | "balance-multi" => {
                return Err(format!(
                    "n/a: {framework} has no control over which thread runs an actor"
                ))
            }
            "repeat" => Bench::Repeat {
                servers: positive(p, "servers")?,
                reps: positive(p, "reps")?,
            },
            "matrix" => {
                let n = param(p, "n")? as usize;
                let (x, y) = matrices(n);
                Bench::Matrix { n, x, y }
            }
            "ping-pong" => Bench::PingPong {
                n: positive(p, "n")?,
            },
            "counting" => Bench::Counting { n: param(p, "n")? },
            "fork-join-throughput" => Bench::ForkJoinThroughput {
                actors: param(p, "actors")?,
                msgs: positive(p, "msgs")?,
            },
            "fork-join-creation" => Bench::ForkJoinCreation { n: param(p, "n")? },
            "scale" => Bench::Scale { n: param(p, "n")? },
            "thread-ring" => Bench::ThreadRing {
                actors: positive(p, "actors")?,
                passes: param(p, "passes")?,
            },
            "chameneos" => {
                let creatures = param(p, "creatures")?;
                if creatures < 2 {
                    return Err("chameneos needs at least 2 creatures".into());
                }
                Bench::Chameneos {
                    creatures,
                    meetings: param(p, "meetings")?,
                }
            }
            "big" => {
                let actors = positive(p, "actors")?;
                if actors < 2 {
                    // Each actor pings the *other* actors.
                    return Err("big needs at least 2 actors".into());
                }
                Bench::Big {
                    actors,
                    pings: positive(p, "pings")?,
                }
            }
            "dictionary" => {
                let write = param(p, "write")?;
                if !(1..=100).contains(&write) {
                    return Err("dictionary: `write` is a percentage, 1 to 100".into());
                }
                Bench::Dictionary {
                    workers: positive(p, "workers")?,
                    msgs: positive(p, "msgs")?,
                    write,
                }
            }
            "logistic-map" => Bench::LogisticMap {
                series: positive(p, "series")?,
                terms: param(p, "terms")?,
            },
            "banking" => {
                let accounts = param(p, "accounts")?;
                if accounts < 2 {
                    return Err("banking needs at least 2 accounts".into());
                }
                Bench::Banking {
                    accounts,
                    transactions: param(p, "transactions")?,
                }
            }
            "bounded-buffer" => Bench::BoundedBuffer {
                producers: positive(p, "producers")?,
                consumers: positive(p, "consumers")?,
                items: param(p, "items")?,
                buffer: positive(p, "buffer")?,
                cost: param(p, "cost")?,
            },
            "sleeping-barber" => Bench::SleepingBarber {
                customers: param(p, "customers")?,
                room: positive(p, "room")?,
                arrival: param(p, "arrival")?,
                cut: param(p, "cut")?,
            },
            "cigarette-smokers" => Bench::CigaretteSmokers {
                smokers: positive(p, "smokers")?,
                rounds: param(p, "rounds")?,
                smoke: positive(p, "smoke")?,
            },
            "pipeline-lanes" => Bench::PipelineLanes {
                items: positive(p, "items")?,
                lanes: positive(p, "lanes")?,
                cost: param(p, "cost")?,
            },
            "pipeline-chain" => Bench::PipelineChain {
                items: positive(p, "items")?,
                stages: positive(p, "stages")?,
                cost: param(p, "cost")?,
            },
            other => return Err(format!("unknown benchmark `{other}`")),
        })
    }
}

/// The tiny computation of the fork-join workloads.
#[inline]
pub fn tiny(x: u64, r: u64) -> u64 {
    (x.wrapping_mul(31).wrapping_add(r)) % 1_000_003
}

/// The chameneos colour change: the complement of two different colours, else unchanged.
#[inline]
pub fn complement(a: u8, b: u8) -> u8 {
    if a == b {
        a
    } else {
        3 - a - b
    }
}

/// The per-actor random generator of `big` (xorshift64, seeded with the actor's index).
pub struct XorShift(u64);

impl XorShift {
    pub fn new(index: u64) -> Self {
        XorShift(0x9E37_79B9_7F4A_7C15 ^ (index + 1))
    }

    /// A peer index in `0..bound`.
    #[inline]
    pub fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound
    }

    /// A peer index in `0..n` other than `me` (`n >= 2`), uniform among the others.
    #[inline]
    pub fn other(&mut self, me: u64, n: u64) -> u64 {
        let to = self.below(n - 1);
        if to >= me {
            to + 1
        } else {
            to
        }
    }
}

/// `X[i][j] = (i + 2j) % 7` and `Y[i][j] = (3i + j) % 5`, row-major `n × n`.
pub fn matrices(n: usize) -> (Arc<Vec<u64>>, Arc<Vec<u64>>) {
    let x = (0..n * n)
        .map(|e| ((e / n + 2 * (e % n)) % 7) as u64)
        .collect();
    let y = (0..n * n)
        .map(|e| ((3 * (e / n) + e % n) % 5) as u64)
        .collect();
    (Arc::new(x), Arc::new(y))
}

/// The sum of row `i` of `X·Y`.
pub fn row_sum(x: &[u64], y: &[u64], n: usize, i: usize) -> u64 {
    let mut z = vec![0u64; n];
    let xi = &x[i * n..(i + 1) * n];
    for (k, &xik) in xi.iter().enumerate() {
        let yk = &y[k * n..(k + 1) * n];
        for (zj, &ykj) in z.iter_mut().zip(yk) {
            *zj += xik * ykj;
        }
    }
    z.iter().sum()
}

/// Completion latch: actors `report` values (summed); the `reports`-th report sends the sum
/// to the driver over a oneshot channel.
pub struct Done {
    sum: AtomicU64,
    remaining: AtomicU64,
    tx: Mutex<Option<oneshot::Sender<u64>>>,
}

impl Done {
    /// A latch waiting for `reports` reports, and the receiver the driver awaits.
    pub fn new(reports: u64) -> (Arc<Done>, oneshot::Receiver<u64>) {
        let (tx, rx) = oneshot::channel();
        let done = Arc::new(Done {
            sum: AtomicU64::new(0),
            remaining: AtomicU64::new(reports),
            tx: Mutex::new(Some(tx)),
        });
        if reports == 0 {
            done.finish();
        }
        (done, rx)
    }

    /// Adds `v` to the total; the last expected report completes the latch.
    pub fn report(&self, v: u64) {
        self.sum.fetch_add(v, Ordering::Relaxed);
        if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.finish();
        }
    }

    fn finish(&self) {
        if let Some(tx) = self.tx.lock().unwrap().take() {
            let _ = tx.send(self.sum.load(Ordering::Acquire));
        }
    }
}

/// Awaits the latch's receiver (with [`WAIT_LIMIT`]).
pub async fn wait(rx: oneshot::Receiver<u64>) -> Result<u64, String> {
    match tokio::time::timeout(WAIT_LIMIT, rx).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(_)) => Err("completion channel closed before the workload finished".into()),
        Err(_) => Err(format!(
            "workload did not finish within {} s",
            WAIT_LIMIT.as_secs()
        )),
    }
}

/// Runs one workload on a fresh multi-thread tokio runtime with `threads` workers (the
/// ractor, kameo and tokio-mpsc configuration): times `work` from just after the runtime is
/// up, then drops the runtime, which cancels what is left and joins its threads.
pub fn on_tokio<F>(threads: usize, work: impl FnOnce() -> F) -> Result<(f64, u64), String>
where
    F: std::future::Future<Output = Result<u64, String>>,
{
    let rt = runtime(threads)?;
    let result = rt.block_on(async move {
        let t0 = std::time::Instant::now();
        let sum = work().await?;
        Ok((t0.elapsed().as_secs_f64(), sum))
    });
    drop(rt);
    result
}

/// thread-ring's checksum: the token made `passes` hops iff it stopped at node
/// `passes % actors` (`last`, the index that node reported); `passes` then, else `last`, which
/// fails the check.
pub fn ring_checksum(last: u64, passes: u64, actors: u64) -> u64 {
    if last == passes % actors {
        passes
    } else {
        last
    }
}

/// pipeline-lanes: what a lane makes of item `i`.
#[inline]
pub fn lane_work(i: u64, cost: u64) -> u64 {
    busy(i, cost)
}

/// pipeline-chain: what stage `s` (from 0) makes of `x`.
#[inline]
pub fn chain_stage(x: u64, s: u64, cost: u64) -> u64 {
    busy(x + s, cost)
}

/// The checksum a correct run of `bench` with parameters `p` must produce (the formulas of
/// `BENCHMARKS.md`; balance-one and balance-multi are the executor workload placed).
pub fn expected_checksum(bench: &str, p: &std::collections::BTreeMap<String, u64>) -> u64 {
    let g = |k: &str| {
        *p.get(k)
            .unwrap_or_else(|| panic!("{bench}: parameter `{k}` missing"))
    };
    match bench {
        "static-send" | "dynamic-send" | "ping-pong" | "counting" | "fork-join-creation" => g("n"),
        "executor" | "balance-one" | "balance-multi" => {
            g("actors") * (g("rounds") * g("group") + 1)
        }
        "repeat" => g("reps") * g("servers") * (g("servers") + 1) / 2,
        "matrix" => {
            // Σ_k (Σ_i X[i][k]) (Σ_j Y[k][j])
            let n = g("n");
            (0..n)
                .map(|k| {
                    let col_x: u64 = (0..n).map(|i| (i + 2 * k) % 7).sum();
                    let row_y: u64 = (0..n).map(|j| (3 * k + j) % 5).sum();
                    col_x * row_y
                })
                .sum()
        }
        "fork-join-throughput" => g("actors") * g("msgs"),
        "thread-ring" => g("passes"),
        "chameneos" => 2 * g("meetings"),
        "big" => g("actors") * g("pings"),
        "logistic-map" => (0..g("series"))
            .map(|s| (0..g("terms")).fold(logmap_start(s), |x, _| logmap_next(s, x)))
            .sum(),
        "banking" => {
            let (accounts, transactions) = (g("accounts"), g("transactions"));
            let mut balance = vec![BANK_INITIAL; accounts as usize];
            for t in 0..transactions {
                let (from, to, amount) = bank_transfer(t, accounts);
                balance[from as usize] -= amount;
                balance[to as usize] += amount;
            }
            bank_checksum(balance.into_iter().enumerate().map(|(i, b)| (i as u64, b)))
        }
        "bounded-buffer" => {
            let (items, cost) = (g("items"), g("cost"));
            (0..g("producers"))
                .flat_map(|p| (0..items).map(move |i| busy(bb_item(p, i, items, cost), cost)))
                .fold(0u64, u64::wrapping_add)
        }
        "sleeping-barber" => (0..g("customers"))
            .map(|id| busy(busy(id, g("arrival")), g("cut")))
            .fold(0u64, u64::wrapping_add),
        "cigarette-smokers" => (0..g("rounds"))
            .map(|r| {
                let (_, time) = cig_round(r, g("smokers"), g("smoke"));
                busy(r, time)
            })
            .fold(0u64, u64::wrapping_add),
        "dictionary" => {
            let (msgs, write) = (g("msgs"), g("write"));
            let mut last = 0;
            let per_worker: u64 = (0..msgs)
                .map(|i| match dict_request(0, msgs, i, write, &mut last) {
                    (_, Some(_)) => 0,
                    (_, None) => last + 1,
                })
                .sum();
            g("workers") * per_worker
        }
        "pipeline-lanes" => (0..g("items"))
            .map(|i| lane_work(i, g("cost")))
            .fold(0u64, u64::wrapping_add),
        "pipeline-chain" => (0..g("items"))
            .map(|i| (0..g("stages")).fold(i, |x, s| chain_stage(x, s, g("cost"))))
            .fold(0u64, u64::wrapping_add),
        other => crate::forkjoin::expected(other, p)
            .unwrap_or_else(|| panic!("no checksum formula for {other}")),
    }
}

/// A multi-thread tokio runtime with `threads` workers and every driver enabled.
pub fn runtime(threads: usize) -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))
}

/// An actix system running on a thread of its own (actix's usual set-up for code outside it);
/// stopped and joined when dropped.
pub struct ActixThread {
    system: actix::System,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ActixThread {
    /// Starts the system and runs `setup` inside it (to start actors); returns what `setup`
    /// gave.
    pub fn start<T: Send + 'static>(
        setup: impl FnOnce() -> T + Send + 'static,
    ) -> Result<(Self, T), String> {
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let sys = actix::System::new();
            sys.block_on(async move {
                tx.send((setup(), actix::System::current())).unwrap();
            });
            let _ = sys.run();
        });
        let (made, system) = rx.recv().map_err(|e| format!("actix: {e}"))?;
        Ok((
            Self {
                system,
                thread: Some(thread),
            },
            made,
        ))
    }
}

impl Drop for ActixThread {
    fn drop(&mut self) {
        self.system.stop();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `actorium-bench scale` on a peer whose spawn returns at once: `n` workers made by `spawn`
/// (each given the latch) and kept, then `send(worker, i)` to each, then the latch awaited;
/// the three points are marked ([`mark`]).
pub async fn scale<W>(
    n: u64,
    mut spawn: impl FnMut(&Arc<Done>) -> W,
    send: impl Fn(&W, u64),
) -> Result<u64, String> {
    mark("start");
    let (done, rx) = Done::new(n);
    let workers: Vec<W> = (0..n).map(|_| spawn(&done)).collect();
    drop(done);
    mark("spawned");
    for (i, w) in workers.iter().enumerate() {
        send(w, i as u64);
    }
    let sum = wait(rx).await;
    mark("messaged");
    sum
}

/// A point of a workload's run, for `actorium-bench scale`: its name, when, and the process's
/// resident memory then and its peak so far (KiB).
#[derive(Debug, Clone, Copy)]
pub struct Mark {
    pub name: &'static str,
    pub at: std::time::Instant,
    pub rss_kib: u64,
    /// The peak resident set so far (`VmHWM`), KiB.
    pub peak_kib: u64,
}

static MARKS: Mutex<Vec<Mark>> = Mutex::new(Vec::new());

/// Records the point `name` of the running workload (read back with [`marks`]).
pub fn mark(name: &'static str) {
    let m = Mark {
        name,
        at: std::time::Instant::now(),
        rss_kib: proc_status_kib("VmRSS:"),
        peak_kib: proc_status_kib("VmHWM:"),
    };
    MARKS.lock().unwrap().push(m);
}

/// The points recorded so far.
pub fn marks() -> Vec<Mark> {
    MARKS.lock().unwrap().clone()
}

/// A `/proc/self/status` field in KiB (`VmRSS:`, the resident set now; `VmHWM:`, its peak);
/// 0 where there is none.
pub fn proc_status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}
