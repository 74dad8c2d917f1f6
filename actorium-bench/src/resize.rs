//! `actorium-bench resize`: live resizing, as in the Cforall runtime (Thierry Delisle, PhD
//! thesis, Waterloo 2022, chapter "Scheduling in practice", "Manual Resizing"), while the
//! `executor` workload runs: how long adding and removing a worker takes (median and p99), and
//! how much throughput continuous resizing costs.

use crate::actorium_impl::executor;
use crate::suite::{Params, BENCHES};
use actorium::policy::WorkStealing;
use actorium::ActorSystem;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// A builder for `workers` workers.
type Builder = fn(usize) -> actorium::ActorSystemBuilder;

/// The executors measured.
fn variants() -> Vec<(&'static str, Builder)> {
    vec![
        ("actorium", |w| ActorSystem::builder().workers(w)),
        ("actorium-policy-stealing", |w| {
            ActorSystem::builder()
                .workers(w)
                .policy(WorkStealing::default())
        }),
    ]
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Runs the measurements and returns a Markdown report.
pub fn run(threads: usize, cycles: usize, runs: usize, quick: bool) -> String {
    let bench = BENCHES
        .iter()
        .find(|b| b.name == "executor")
        .expect("executor bench");
    let p: Params = bench.params(quick);
    let expected = bench.expected(&p);
    let mut md = format!(
        "Resizing while the `executor` workload ({}) runs on {threads} workers. Times are \
         wall-clock around `add_workers(1)` and `remove_workers(1)` called from an outside \
         thread (a removal waits for the worker's thread to end). The last columns: the \
         workload at constant size, and while a thread adds a worker and removes it again, \
         alternately, every millisecond (never fewer than {threads} workers).\n\n\
         | executor | add: median | add: p99 | remove: median | remove: p99 | workload, \
         constant size | workload, resizing every ms | slowdown |\n|---|---|---|---|---|---|---|---|\n",
        p.display()
    );
    for (name, builder) in variants() {
        // 1. Latency of one add and one remove, while the workload runs.
        let system = builder(threads).build().expect("system");
        let stop = Arc::new(AtomicBool::new(false));
        let sys = Arc::new(system);
        let worker = {
            let (sys, stop, p) = (sys.clone(), stop.clone(), p.clone());
            thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    assert_eq!(executor(&sys, &p, None), expected, "checksum");
                    n += 1;
                }
                n
            })
        };
        let (mut adds, mut removes) = (Vec::new(), Vec::new());
        for _ in 0..cycles {
            let t0 = Instant::now();
            sys.add_workers(1).expect("add");
            let t1 = Instant::now();
            sys.remove_workers(1).expect("remove");
            adds.push(t1 - t0);
            removes.push(t1.elapsed());
            thread::sleep(Duration::from_micros(500));
        }
        stop.store(true, Ordering::Relaxed);
        let loads = worker.join().unwrap();
        assert!(loads > 0);
        adds.sort();
        removes.sort();
        Arc::try_unwrap(sys).expect("one owner").stop();

        // 2. Throughput: the workload at constant size, then while a thread resizes every ms.
        let mut constant = Vec::new();
        let mut resizing = Vec::new();
        let resizes = Arc::new(AtomicUsize::new(0));
        for _ in 0..runs {
            for with_resizer in [false, true] {
                let system = Arc::new(builder(threads).build().expect("system"));
                let stop = Arc::new(AtomicBool::new(false));
                let resizer = with_resizer.then(|| {
                    let (h, stop, resizes) = (system.handle(), stop.clone(), resizes.clone());
                    thread::spawn(move || {
                        let mut k = 0usize;
                        while !stop.load(Ordering::Relaxed) {
                            // T + 1, T, T + 1, ...: never fewer workers than the baseline,
                            // so the difference is the resizing, not a smaller pool.
                            let target = threads + (1 - k % 2);
                            let now = h.workers();
                            if target > now {
                                h.add_workers(target - now).expect("add");
                            } else if target < now {
                                h.remove_workers(now - target).expect("remove");
                            }
                            resizes.fetch_add(1, Ordering::Relaxed);
                            k += 1;
                            thread::sleep(Duration::from_millis(1));
                        }
                    })
                });
                let t0 = Instant::now();
                assert_eq!(executor(&system, &p, None), expected, "checksum");
                let el = t0.elapsed().as_secs_f64();
                stop.store(true, Ordering::Relaxed);
                if let Some(r) = resizer {
                    r.join().unwrap();
                    resizing.push(el);
                } else {
                    constant.push(el);
                }
                Arc::try_unwrap(system).expect("one owner").stop();
            }
        }
        let (c, r) = (median(constant), median(resizing));
        md.push_str(&format!(
            "| {name} | {:.0} µs | {:.0} µs | {:.0} µs | {:.0} µs | {:.1} ms | {:.1} ms | {:.2}x |\n",
            us(pct(&adds, 0.5)),
            us(pct(&adds, 0.99)),
            us(pct(&removes, 0.5)),
            us(pct(&removes, 0.99)),
            c * 1e3,
            r * 1e3,
            r / c
        ));
        eprintln!(
            "{name}: done ({} resizes in the throughput runs)",
            resizes.load(Ordering::Relaxed)
        );
    }
    md.push_str(&format!(
        "\n{cycles} add/remove cycles, {runs} runs of each throughput case (medians). \
         Command: `cargo run --release -p actorium-bench -- resize`.\n"
    ));
    md
}
