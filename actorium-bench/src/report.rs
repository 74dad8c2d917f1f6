//! Results: one [`Record`] per (benchmark, system), as JSON, a Markdown table and a chart.

use crate::harness::{Measured, RunError};
use crate::suite::{Bench, Params};
use plotters::prelude::*;
use serde::Serialize;
use std::path::Path;

/// The outcome of all runs of one benchmark on one system.
#[derive(Debug, Clone, Serialize)]
pub struct Record {
    pub benchmark: String,
    pub system: String,
    pub threads: usize,
    pub params: Params,
    /// `ok`, `n/a` (the system cannot express it), `not installed`, `failed`, or
    /// `checksum failed`.
    pub status: String,
    /// Why, for anything but `ok`.
    pub note: Option<String>,
    /// Median of `runs` (only when every run succeeded with the right checksum).
    pub median_s: Option<f64>,
    /// `median_s` divided by the benchmark's operation count, in ns.
    pub per_op_ns: Option<f64>,
    /// What one operation is.
    pub op: String,
    /// Highest peak RSS over the runs, MiB.
    pub peak_rss_mb: Option<f64>,
    /// Median CPU time (user + system) of the runs' processes, s.
    pub cpu_s: Option<f64>,
    /// Median wall-clock time of the runs' processes (set-up included), s.
    pub wall_s: Option<f64>,
    /// Every run's timed region, s.
    pub runs: Vec<f64>,
    /// Whether every run's checksum matched the expected value.
    pub checksum_ok: bool,
    pub expected_checksum: u64,
    pub checksums: Vec<u64>,
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

impl Record {
    fn base(bench: &Bench, system: &str, threads: usize, params: &Params) -> Self {
        Record {
            benchmark: bench.name.into(),
            system: system.into(),
            threads,
            params: params.clone(),
            status: "ok".into(),
            note: None,
            median_s: None,
            per_op_ns: None,
            op: bench.op.into(),
            peak_rss_mb: None,
            cpu_s: None,
            wall_s: None,
            runs: vec![],
            checksum_ok: false,
            expected_checksum: bench.expected(params),
            checksums: vec![],
        }
    }

    /// A system that could not run at all.
    pub fn unavailable(
        bench: &Bench,
        system: &str,
        threads: usize,
        params: &Params,
        why: &str,
    ) -> Self {
        let mut r = Self::base(bench, system, threads, params);
        r.status = if why.starts_with("not installed") {
            "not installed"
        } else {
            "failed"
        }
        .into();
        r.note = Some(why.into());
        r
    }

    /// Summarises the runs. A wrong checksum in any run makes the record a failure with no
    /// time: a wrong result is never a number in the table.
    pub fn from_runs(
        bench: &Bench,
        system: &str,
        threads: usize,
        params: &Params,
        results: &[Result<Measured, RunError>],
    ) -> Self {
        let mut r = Self::base(bench, system, threads, params);
        let ok: Vec<&Measured> = results.iter().filter_map(|x| x.as_ref().ok()).collect();
        r.runs = ok.iter().map(|m| m.seconds).collect();
        r.checksums = ok.iter().map(|m| m.checksum).collect();
        if let Some(Err(e)) = results.iter().find(|x| x.is_err()) {
            let (status, note) = match e {
                RunError::NotApplicable(w) => ("n/a", w.clone()),
                RunError::Failed(w) => ("failed", w.clone()),
            };
            r.status = status.into();
            r.note = Some(note);
            return r;
        }
        r.checksum_ok = !ok.is_empty() && ok.iter().all(|m| m.checksum == r.expected_checksum);
        if !r.checksum_ok {
            r.status = "checksum failed".into();
            r.note = Some(format!(
                "expected {}, got {:?}",
                r.expected_checksum, r.checksums
            ));
            return r;
        }
        let med = median(&r.runs);
        r.median_s = Some(med);
        r.per_op_ns = Some(med * 1e9 / bench.ops(params).max(1) as f64);
        r.peak_rss_mb = ok.iter().map(|m| m.peak_rss_mb).reduce(f64::max);
        r.cpu_s = Some(median(&ok.iter().map(|m| m.cpu_s).collect::<Vec<_>>()));
        r.wall_s = Some(median(&ok.iter().map(|m| m.wall_s).collect::<Vec<_>>()));
        r
    }

    /// Whether this record is a failure that should fail the command.
    pub fn is_error(&self) -> bool {
        self.status == "failed" || self.status == "checksum failed"
    }
}

pub fn fmt_time(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.1} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

/// The reference system for ratios: the first actorium system present.
fn reference(systems: &[String]) -> Option<&str> {
    systems
        .iter()
        .find(|s| s.starts_with("actorium"))
        .map(String::as_str)
}

fn find<'a>(records: &'a [Record], bench: &str, system: &str) -> Option<&'a Record> {
    records
        .iter()
        .find(|r| r.benchmark == bench && r.system == system)
}

/// A Markdown grid: rows benchmarks, columns systems, cells from `cell`.
fn grid(
    records: &[Record],
    benches: &[String],
    systems: &[String],
    corner: &str,
    cell: impl Fn(&str, &str, Option<&Record>) -> String,
) -> String {
    let mut s = format!("| {corner} |");
    for sys in systems {
        s.push_str(&format!(" {sys} |"));
    }
    s.push_str("\n|---|");
    s.push_str(&"---|".repeat(systems.len()));
    s.push('\n');
    for b in benches {
        s.push_str(&format!("| {b} |"));
        for sys in systems {
            s.push_str(&format!(" {} |", cell(b, sys, find(records, b, sys))));
        }
        s.push('\n');
    }
    s
}

/// Markdown table: rows benchmarks, columns systems; cells: median time, and for peers the
/// ratio peer time / actorium time (above 1: actorium is faster).
pub fn markdown(records: &[Record], benches: &[String], systems: &[String]) -> String {
    let refsys = reference(systems);
    let mut s = grid(records, benches, systems, "benchmark", |b, sys, r| {
        let Some(r) = r else { return "—".to_string() };
        let base = refsys
            .and_then(|rs| find(records, b, rs))
            .and_then(|r| r.median_s);
        match (r.median_s, base) {
            (Some(m), Some(base)) if Some(sys) != refsys => {
                format!("{} ({:.2}×)", fmt_time(m), m / base)
            }
            (Some(m), _) => fmt_time(m),
            (None, _) => match r.note.as_deref() {
                Some(n) if n.starts_with("timed out") => format!("timeout ({n})"),
                _ => r.status.clone(),
            },
        }
    });
    if let Some(r) = refsys {
        s.push_str(&format!(
            "\nCells: median time of the runs; in parentheses, that system's time divided by \
             {r}'s (above 1×: {r} is faster). `n/a`: the system cannot express the workload.\n"
        ));
    }
    s
}

/// Markdown table of each family of systems at its best: per benchmark, the reference system
/// and, for every family (`family` maps a system to it: actorium's configurations, actix's,
/// CAF's policies, ...), the fastest configuration of that family in this run, named, with its
/// ratio to the reference. A ratio against a peer's best configuration measures the runtimes;
/// one against its common configuration may measure placement.
pub fn markdown_best(
    records: &[Record],
    benches: &[String],
    systems: &[String],
    family: impl Fn(&str) -> &'static str,
) -> String {
    let Some(refsys) = reference(systems) else {
        return String::new();
    };
    let mut families: Vec<&'static str> = Vec::new();
    for s in systems {
        let f = family(s);
        if !families.contains(&f) {
            families.push(f);
        }
    }
    let mut s = format!("| benchmark | {refsys} |");
    for f in &families {
        s.push_str(&format!(" {f}, best |"));
    }
    s.push_str("\n|---|---|");
    s.push_str(&"---|".repeat(families.len()));
    s.push('\n');
    for b in benches {
        let base = find(records, b, refsys).and_then(|r| r.median_s);
        s.push_str(&format!(
            "| {b} | {} |",
            base.map_or_else(|| "—".to_string(), fmt_time)
        ));
        for f in &families {
            let best = systems
                .iter()
                .filter(|sys| family(sys) == *f)
                .filter_map(|sys| Some((sys, find(records, b, sys)?.median_s?)))
                .min_by(|x, y| x.1.total_cmp(&y.1));
            let cell = match (best, base) {
                (Some((sys, m)), Some(base)) => {
                    format!("{} ({:.2}×, {sys})", fmt_time(m), m / base)
                }
                (Some((sys, m)), None) => format!("{} ({sys})", fmt_time(m)),
                (None, _) => systems
                    .iter()
                    .filter(|sys| family(sys) == *f)
                    .find_map(|sys| find(records, b, sys))
                    .map_or_else(|| "—".to_string(), |r| r.status.clone()),
            };
            s.push_str(&format!(" {cell} |"));
        }
        s.push('\n');
    }
    s.push_str(&format!(
        "\nCells: the fastest configuration of each family in this run (median time), in \
         parentheses its time divided by {refsys}'s (above 1×: {refsys} is faster) and which \
         configuration it was.\n"
    ));
    s
}

/// Markdown section (heading and table) of what `threads` threads buy each actorium system:
/// per benchmark, its median on 1 thread (from `singles`), on `threads` (from `records`), and
/// their ratio (below 1×: the threads pay for themselves; the goal is at most 1.1×
/// everywhere). `None` when there is nothing to compare: no sweep, or no actorium system.
pub fn markdown_scaling(
    records: &[Record],
    singles: &[Record],
    benches: &[String],
    systems: &[String],
    threads: usize,
) -> Option<String> {
    let actorium: Vec<String> = systems
        .iter()
        .filter(|s| s.starts_with("actorium"))
        .cloned()
        .collect();
    if singles.is_empty() || actorium.is_empty() {
        return None;
    }
    let mut s = format!("### actorium on {threads} threads against 1\n\n");
    s += &grid(
        singles,
        benches,
        &actorium,
        "benchmark",
        |b, sys, one| match (one.and_then(|r| r.median_s), find(records, b, sys)) {
            (
                Some(t1),
                Some(Record {
                    median_s: Some(tn), ..
                }),
            ) => format!("{} → {} ({:.2}×)", fmt_time(t1), fmt_time(*tn), tn / t1),
            (_, Some(r)) if r.median_s.is_none() => r.status.clone(),
            (None, _) => one.map_or_else(|| "—".to_string(), |r| r.status.clone()),
            _ => "—".to_string(),
        },
    );
    s.push_str(&format!(
        "\nCells: median time on 1 thread → on {threads} threads (their ratio: below 1× the \
         threads pay for themselves).\n"
    ));
    Some(s)
}

/// Markdown table of peak RSS (the memory high-water mark of the thesis) per run, MiB.
pub fn markdown_rss(records: &[Record], benches: &[String], systems: &[String]) -> String {
    grid(
        records,
        benches,
        systems,
        "peak RSS (MiB)",
        |_, _, r| match r {
            Some(Record {
                peak_rss_mb: Some(m),
                ..
            }) => format!("{m:.1}"),
            Some(r) => r.status.clone(),
            None => "—".into(),
        },
    )
}

/// A bar chart of the ratios (log scale), one group per benchmark, one bar per peer.
pub fn chart(
    records: &[Record],
    benches: &[String],
    systems: &[String],
    path: &Path,
) -> Result<(), String> {
    let Some(refsys) = reference(systems) else {
        return Ok(());
    };
    let peers: Vec<&String> = systems.iter().filter(|s| s.as_str() != refsys).collect();
    let mut bars = Vec::new(); // (bench index, peer index, ratio)
    for (bi, b) in benches.iter().enumerate() {
        let Some(base) = find(records, b, refsys).and_then(|r| r.median_s) else {
            continue;
        };
        for (pi, p) in peers.iter().enumerate() {
            if let Some(m) = find(records, b, p).and_then(|r| r.median_s) {
                bars.push((bi, pi, m / base));
            }
        }
    }
    let (lo, hi) = bars.iter().fold((0.5f64, 2.0f64), |(lo, hi), &(_, _, r)| {
        (lo.min(r), hi.max(r))
    });
    let root = SVGBackend::new(path, (1200, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut c = ChartBuilder::on(&root)
        .caption(
            format!("{refsys}: speed ratio against each peer (peer time / {refsys} time)"),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(110)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..benches.len() as f64, (lo / 1.5..hi * 8.0).log_scale())
        .map_err(|e| e.to_string())?;
    let names = benches.to_vec();
    c.configure_mesh()
        .disable_x_mesh()
        .x_labels(benches.len() * 2 + 1)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            if (x - i as f64 - 0.5).abs() < 0.01 && i < names.len() {
                names[i].clone()
            } else {
                String::new()
            }
        })
        .x_label_style(
            ("sans-serif", 12)
                .into_font()
                .transform(FontTransform::Rotate90),
        )
        .y_desc("ratio (log; above 1 = actorium faster)")
        .draw()
        .map_err(|e| e.to_string())?;
    let width = 0.8 / peers.len().max(1) as f64;
    for (pi, p) in peers.iter().enumerate() {
        let color = Palette99::pick(pi).to_rgba();
        let rects: Vec<_> = bars
            .iter()
            .filter(|b| b.1 == pi)
            .map(|&(bi, _, r)| {
                let x0 = bi as f64 + 0.1 + pi as f64 * width;
                Rectangle::new([(x0, 1.0), (x0 + width * 0.9, r)], color.filled())
            })
            .collect();
        c.draw_series(rects)
            .map_err(|e| e.to_string())?
            .label(p.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
    }
    c.draw_series(LineSeries::new(
        vec![(0.0, 1.0), (benches.len() as f64, 1.0)],
        BLACK,
    ))
    .map_err(|e| e.to_string())?;
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperMiddle)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::bench;

    fn ok(secs: f64, checksum: u64) -> Result<Measured, RunError> {
        Ok(Measured {
            seconds: secs,
            checksum,
            peak_rss_mb: 3.0,
            cpu_s: secs,
            wall_s: secs,
        })
    }

    #[test]
    fn a_wrong_checksum_is_an_error_not_a_number() {
        let b = bench("ping-pong").unwrap();
        let p = b.params(true);
        let good = b.expected(&p);
        let r = Record::from_runs(
            b,
            "x",
            2,
            &p,
            &[ok(0.1, good), ok(0.2, good + 1), ok(0.3, good)],
        );
        assert_eq!(r.status, "checksum failed");
        assert!(!r.checksum_ok && r.median_s.is_none() && r.per_op_ns.is_none());
        assert!(r.is_error());
        let table = markdown(&[r], &["ping-pong".into()], &["x".into()]);
        assert!(
            table.contains("checksum failed") && !table.contains(" ms"),
            "{table}"
        );

        let r = Record::from_runs(
            b,
            "x",
            2,
            &p,
            &[ok(0.3, good), ok(0.1, good), ok(0.2, good)],
        );
        assert!(r.checksum_ok && r.status == "ok");
        assert_eq!(r.median_s, Some(0.2));
        assert_eq!(r.per_op_ns, Some(0.2e9 / p.get("n") as f64));
    }

    #[test]
    fn not_applicable_and_failures_are_reported() {
        let b = bench("balance-one").unwrap();
        let p = b.params(true);
        let na = Record::from_runs(
            b,
            "erlang",
            2,
            &p,
            &[Err(RunError::NotApplicable("no placement".into()))],
        );
        assert_eq!((na.status.as_str(), na.is_error()), ("n/a", false));
        let f = Record::from_runs(
            b,
            "x",
            2,
            &p,
            &[ok(0.1, 0), Err(RunError::Failed("boom".into()))],
        );
        assert!(f.is_error() && f.note.as_deref() == Some("boom"));
        let ni = Record::unavailable(b, "caf-sharing", 2, &p, "not installed (libcaf-dev)");
        assert_eq!(
            (ni.status.as_str(), ni.is_error()),
            ("not installed", false)
        );
    }

    #[test]
    fn json_has_the_documented_fields() {
        let b = bench("static-send").unwrap();
        let p = b.params(true);
        let r = Record::from_runs(b, "actorium", 2, &p, &[ok(0.01, p.get("n"))]);
        let v: serde_json::Value = serde_json::to_value(&r).unwrap();
        for field in [
            "benchmark",
            "system",
            "threads",
            "params",
            "median_s",
            "per_op_ns",
            "peak_rss_mb",
            "cpu_s",
            "runs",
            "checksum_ok",
        ] {
            assert!(v.get(field).is_some(), "missing field {field}: {v}");
        }
        assert_eq!(v["params"]["n"], p.get("n"));
        assert_eq!(v["runs"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn the_best_table_names_each_familys_fastest_configuration() {
        let b = bench("ping-pong").unwrap();
        let p = b.params(true);
        let n = p.get("n");
        let recs = vec![
            Record::from_runs(b, "actorium-a", 2, &p, &[ok(0.010, n)]),
            Record::from_runs(b, "actorium-b", 2, &p, &[ok(0.008, n)]),
            Record::from_runs(b, "actix", 2, &p, &[ok(0.500, n)]),
            Record::from_runs(b, "actix-1", 2, &p, &[ok(0.020, n)]),
        ];
        let systems: Vec<String> = ["actorium-a", "actorium-b", "actix", "actix-1"]
            .map(String::from)
            .into();
        let t = markdown_best(&recs, &["ping-pong".into()], &systems, |s| {
            if s.starts_with("actorium") {
                "actorium"
            } else {
                "actix"
            }
        });
        assert!(t.contains("| ping-pong | 10.0 ms |"), "{t}");
        assert!(t.contains("8.0 ms (0.80×, actorium-b)"), "{t}");
        assert!(t.contains("20.0 ms (2.00×, actix-1)"), "{t}");
    }

    #[test]
    fn the_scaling_table_divides_n_threads_by_one() {
        let b = bench("static-send").unwrap();
        let p = b.params(true);
        let n = p.get("n");
        let at2 = Record::from_runs(b, "actorium", 2, &p, &[ok(0.3, n)]);
        let at1 = Record::from_runs(b, "actorium", 1, &p, &[ok(0.2, n)]);
        let peer = Record::from_runs(b, "actix", 2, &p, &[ok(0.1, n)]);
        let table = markdown_scaling(
            &[at2, peer],
            &[at1],
            &["static-send".into()],
            &["actorium".into(), "actix".into()],
            2,
        )
        .expect("an actorium system and a 1-thread record");
        assert!(table.contains("200.0 ms → 300.0 ms (1.50×)"), "{table}");
        assert!(!table.contains("actix"), "peers get no column: {table}");
    }

    #[test]
    fn ratios_are_peer_over_actorium() {
        let b = bench("counting").unwrap();
        let p = b.params(true);
        let n = p.get("n");
        let recs = vec![
            Record::from_runs(b, "actorium", 2, &p, &[ok(0.010, n)]),
            Record::from_runs(b, "actix", 2, &p, &[ok(0.025, n)]),
        ];
        let t = markdown(
            &recs,
            &["counting".into()],
            &["actorium".into(), "actix".into()],
        );
        assert!(t.contains("25.0 ms (2.50×)"), "{t}");
        let dir = std::env::temp_dir().join(format!("actorium-bench-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let svg = dir.join("ratios.svg");
        chart(
            &recs,
            &["counting".into()],
            &["actorium".into(), "actix".into()],
            &svg,
        )
        .unwrap();
        assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    }
}
