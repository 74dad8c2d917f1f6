//! `threads-table`: the suite over several thread counts in one report, from the JSON files
//! of runs at each count (`--json FILE`; `scripts/device-sweep.sh` writes one per phase and
//! thread count).
//!
//! Two tables per group of workloads: every system's median at each thread count (with its
//! time against its own 1-thread time), and actorium's default system against the fastest
//! peer at each count. A system whose thread count does not matter (`T ignored` in its
//! description: `actix-1`, `sequential`) counts at every thread count with whatever run of it
//! the files hold.

use crate::report::fmt_time;
use crate::suite::{Group, BENCHES, SYSTEMS};
use std::path::Path;

/// One record of a JSON file: a (benchmark, system, threads) median, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub bench: String,
    pub system: String,
    pub threads: usize,
    pub median_s: Option<f64>,
    pub status: String,
}

/// Reads every record of the JSON files (arrays of the suite's records).
pub fn load(paths: &[impl AsRef<Path>]) -> Result<Vec<Cell>, String> {
    let mut cells = Vec::new();
    for p in paths {
        let p = p.as_ref();
        let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
        cells.extend(parse(&text).map_err(|e| format!("{}: {e}", p.display()))?);
    }
    Ok(cells)
}

/// The records of one JSON file.
pub fn parse(text: &str) -> Result<Vec<Cell>, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let arr = v.as_array().ok_or("not an array of records")?;
    arr.iter()
        .map(|r| {
            let field = |k: &str| r.get(k).ok_or(format!("a record without `{k}`"));
            Ok(Cell {
                bench: field("benchmark")?.as_str().unwrap_or_default().to_string(),
                system: field("system")?.as_str().unwrap_or_default().to_string(),
                threads: field("threads")?
                    .as_u64()
                    .ok_or("`threads` is not a count")? as usize,
                median_s: r.get("median_s").and_then(|m| m.as_f64()),
                status: field("status")?.as_str().unwrap_or_default().to_string(),
            })
        })
        .collect()
}

fn ignores_threads(system: &str) -> bool {
    SYSTEMS
        .iter()
        .any(|s| s.name == system && s.threads_note.contains("T ignored"))
}

/// The cell of (`bench`, `system`) at `t` threads (any thread count for a system that ignores
/// it). When several files hold one, the last with a time wins, else the last.
fn at<'a>(cells: &'a [Cell], bench: &str, system: &str, t: usize) -> Option<&'a Cell> {
    let any = ignores_threads(system);
    let mut matching = cells
        .iter()
        .rev()
        .filter(|c| c.bench == bench && c.system == system && (any || c.threads == t));
    let last = matching.clone().next();
    matching.find(|c| c.median_s.is_some()).or(last)
}

/// The Markdown report: per group, the two tables (see the module docs). Benchmarks and
/// systems appear in the suite's order (a benchmark the suite does not know is left out);
/// unknown systems after the known ones.
pub fn markdown(cells: &[Cell]) -> String {
    let mut counts: Vec<usize> = cells.iter().map(|c| c.threads).collect();
    counts.sort_unstable();
    counts.dedup();
    let order = |names: Vec<&str>, known: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = known
            .iter()
            .filter(|k| names.contains(k))
            .map(|s| s.to_string())
            .collect();
        for n in names {
            if !v.iter().any(|x| x == n) {
                v.push(n.to_string());
            }
        }
        v
    };
    let known_systems: Vec<&str> = SYSTEMS.iter().map(|s| s.name).collect();
    let mut out = String::new();
    for g in Group::ALL {
        let in_group = |c: &&Cell| BENCHES.iter().any(|b| b.name == c.bench && b.group == g);
        let known: Vec<&str> = BENCHES
            .iter()
            .filter(|b| b.group == g)
            .map(|b| b.name)
            .collect();
        let benches = order(
            cells.iter().filter(in_group).map(|c| &*c.bench).collect(),
            &known,
        );
        if benches.is_empty() {
            continue;
        }
        let systems = order(
            cells.iter().filter(in_group).map(|c| &*c.system).collect(),
            &known_systems,
        );
        out += &format!("## {}\n\n| benchmark | system |", g.title());
        for t in &counts {
            out += &format!(" {t} |");
        }
        out += &format!("\n|---|---|{}\n", "---|".repeat(counts.len()));
        for b in &benches {
            for s in &systems {
                let row: Vec<Option<&Cell>> = counts.iter().map(|&t| at(cells, b, s, t)).collect();
                // A system that cannot express the workload at any count gets no row.
                if row.iter().all(|c| c.is_none_or(|c| c.status == "n/a")) {
                    continue;
                }
                let one = if ignores_threads(s) {
                    None
                } else {
                    at(cells, b, s, 1).and_then(|c| c.median_s)
                };
                out += &format!("| {b} | {s} |");
                for (c, t) in row.iter().zip(&counts) {
                    let cell = match c {
                        None => "—".to_string(),
                        Some(Cell {
                            median_s: Some(m), ..
                        }) => match one {
                            Some(one) if *t != 1 => format!("{} ({:.2}×)", fmt_time(*m), m / one),
                            _ => fmt_time(*m),
                        },
                        Some(c) => c.status.clone(),
                    };
                    out += &format!(" {cell} |");
                }
                out.push('\n');
            }
        }
        out += "\nCells: median time; in parentheses, that time divided by the same system's \
                time on 1 thread (below 1×: the threads pay for themselves).\n\n";
        let Some(reference) = systems.iter().find(|s| s.starts_with("actorium")) else {
            continue;
        };
        out += &format!("### {reference} against the fastest peer\n\n| benchmark |");
        for t in &counts {
            out += &format!(" {t} |");
        }
        out += &format!("\n|---|{}\n", "---|".repeat(counts.len()));
        for b in &benches {
            out += &format!("| {b} |");
            for &t in &counts {
                let mine = at(cells, b, reference, t).and_then(|c| c.median_s);
                let best = systems
                    .iter()
                    .filter(|s| !s.starts_with("actorium") && *s != "sequential")
                    .filter_map(|s| Some((s, at(cells, b, s, t)?.median_s?)))
                    .min_by(|x, y| x.1.total_cmp(&y.1));
                let cell = match (mine, best) {
                    (Some(m), Some((s, p))) => format!("{:.2}× ({s})", p / m),
                    (Some(_), None) => "no peer".to_string(),
                    _ => "—".to_string(),
                };
                out += &format!(" {cell} |");
            }
            out.push('\n');
        }
        out += &format!(
            "\nCells: the fastest peer's median divided by {reference}'s at that thread count \
             (above 1×: {reference} is faster), and which peer it was.\n\n"
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(records: &[(&str, &str, usize, Option<f64>)]) -> String {
        let v: Vec<serde_json::Value> = records
            .iter()
            .map(|(b, s, t, m)| {
                serde_json::json!({"benchmark": b, "system": s, "threads": t, "median_s": m,
                                   "status": if m.is_some() { "ok" } else { "failed" }})
            })
            .collect();
        serde_json::to_string(&v).unwrap()
    }

    #[test]
    fn the_table_gives_each_count_its_ratio_to_one_thread_and_the_fastest_peer() {
        let mut cells = parse(&json(&[
            ("fib", "actorium", 1, Some(0.010)),
            ("fib", "rayon", 1, Some(0.020)),
            ("fib", "chili", 1, Some(0.015)),
        ]))
        .unwrap();
        cells.extend(
            parse(&json(&[
                ("fib", "actorium", 4, Some(0.005)),
                ("fib", "rayon", 4, Some(0.004)),
                ("fib", "chili", 4, None),
                ("fib", "sequential", 1, Some(0.001)),
            ]))
            .unwrap(),
        );
        let md = markdown(&cells);
        assert!(md.contains("## Fork/join"), "{md}");
        assert!(
            md.contains("| fib | actorium | 10.0 ms | 5.0 ms (0.50×) |"),
            "{md}"
        );
        assert!(md.contains("| fib | chili | 15.0 ms | failed |"), "{md}");
        // At 1 thread chili is the fastest peer (1.5×); at 4 rayon beats actorium (0.80×);
        // the sequential baseline is no peer.
        assert!(
            md.contains("| fib | 1.50× (chili) | 0.80× (rayon) |"),
            "{md}"
        );
        assert!(!md.contains("Actor workloads"), "{md}");
    }

    #[test]
    fn a_system_that_ignores_threads_counts_at_every_thread_count() {
        let cells = parse(&json(&[
            ("ping-pong", "actorium", 1, Some(0.002)),
            ("ping-pong", "actorium", 16, Some(0.004)),
            ("ping-pong", "actix-1", 16, Some(0.020)),
        ]))
        .unwrap();
        let md = markdown(&cells);
        assert!(
            md.contains("| ping-pong | 10.00× (actix-1) | 5.00× (actix-1) |"),
            "{md}"
        );
    }

    #[test]
    fn a_system_that_cannot_express_a_workload_gets_no_row() {
        let text = r#"[{"benchmark": "balance-one", "system": "kameo", "threads": 2,
                        "median_s": null, "status": "n/a"},
                       {"benchmark": "balance-one", "system": "actorium",
                        "threads": 2, "median_s": 0.5, "status": "ok"}]"#;
        let md = markdown(&parse(text).unwrap());
        assert!(md.contains("| balance-one | actorium | 500.0 ms |"), "{md}");
        assert!(!md.contains("| balance-one | kameo |"), "{md}");
        assert!(md.contains("| balance-one | no peer |"), "{md}");
    }

    #[test]
    fn a_failed_run_in_a_later_file_does_not_hide_a_measured_one() {
        let mut cells = parse(&json(&[("ping-pong", "actix-1", 2, Some(0.020))])).unwrap();
        cells.extend(parse(&json(&[("ping-pong", "actix-1", 16, None)])).unwrap());
        cells.extend(
            parse(&json(&[
                ("ping-pong", "actorium", 1, Some(0.002)),
                ("ping-pong", "actorium", 16, Some(0.004)),
            ]))
            .unwrap(),
        );
        let md = markdown(&cells);
        assert!(
            md.contains("| ping-pong | 10.00× (actix-1) | — | 5.00× (actix-1) |"),
            "{md}"
        );
    }

    #[test]
    fn a_file_that_is_not_a_record_array_is_refused() {
        assert!(parse("{}").is_err());
        assert!(parse("[{\"system\": \"x\"}]").is_err());
    }
}
