//! `actorium-bench scale`: how many actors fit in memory, how fast they start, and how long it
//! takes to message every one of them.
//!
//! Each system runs in a child process (`scale-exec`, or the CAF and Erlang peers' own
//! `scale`): `n` actors (the fork-join workers of `fork-join-creation`: a few words of state
//! and a completion latch) spawned from one thread and kept alive, their addresses held in a
//! vector (a list in Erlang); then one message to each, which ends it. The child reports the
//! time of both phases and its memory: the resident set before the first spawn, after the
//! last, and its peak (`VmHWM`). Bytes per actor are the peak over `n` (the headline figure), and, beside them, what the actors added over the baseline. The checksum is `n` (each
//! actor reports one message).

use crate::suite::Params;
use actorium_peers::common::{marks, proc_status_kib};

/// actorium's executors measured.
pub const ACTORIUM: &[&str] = &["actorium", "actorium-policy-stealing"];

/// Every system `scale` runs by default.
pub fn all_systems() -> Vec<String> {
    ACTORIUM
        .iter()
        .chain(&[
            "actix-1",
            "ractor",
            "kameo",
            "tokio-mpsc",
            "caf-stealing",
            "erlang",
        ])
        .map(|s| s.to_string())
        .collect()
}

/// The child: runs the workload with `n` actors on `system` and prints `SCALE ...`.
pub fn exec(system: &str, threads: usize, n: u64) -> Result<(), String> {
    let params = Params::parse(&[format!("n={n}")])?;
    let base = proc_status_kib("VmRSS:");
    let (_, sum) = if system.starts_with("actorium") {
        crate::actorium_impl::run(system, "scale", threads, &params, None, &[])?
    } else {
        actorium_peers::run(system, "scale", threads, &params.0)?
    };
    if sum != n {
        return Err(format!("checksum: {sum} messages reported, expected {n}"));
    }
    let m = marks();
    let at = |name: &str| {
        m.iter()
            .find(|x| x.name == name)
            .copied()
            .ok_or_else(|| format!("the workload marked no `{name}`"))
    };
    let (start, spawned, messaged) = (at("start")?, at("spawned")?, at("messaged")?);
    println!(
        "SCALE n={n} spawn_s={:.4} msg_s={:.4} base_kib={base} spawned_kib={} peak_kib={} \
         checksum={sum}",
        (spawned.at - start.at).as_secs_f64(),
        (messaged.at - spawned.at).as_secs_f64(),
        spawned.rss_kib,
        // Read when the last message was handled (before the system is torn down), as the
        // CAF and Erlang peers read it.
        messaged.peak_kib,
    );
    Ok(())
}

/// One system's result line, as numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    pub n: u64,
    pub spawn_s: f64,
    pub msg_s: f64,
    pub base_kib: u64,
    pub spawned_kib: u64,
    pub peak_kib: u64,
}

impl Line {
    /// Parses the fields of a `SCALE` line (`get` gives a field's text).
    pub fn parse(get: impl Fn(&str) -> String) -> Result<Self, String> {
        let num = |k: &str| -> Result<f64, String> {
            get(k)
                .parse::<f64>()
                .map_err(|_| format!("no number `{k}` in the result line"))
        };
        let line = Line {
            n: num("n")? as u64,
            spawn_s: num("spawn_s")?,
            msg_s: num("msg_s")?,
            base_kib: num("base_kib")? as u64,
            spawned_kib: num("spawned_kib")? as u64,
            peak_kib: num("peak_kib")? as u64,
        };
        if num("checksum")? as u64 != line.n {
            return Err(format!(
                "checksum {} for {} actors",
                get("checksum"),
                line.n
            ));
        }
        Ok(line)
    }

    /// The table row of `system`.
    pub fn row(&self, system: &str) -> String {
        let n = self.n.max(1) as f64;
        format!(
            "| {system} | {} | {:.2} s ({:.2} M/s) | {:.2} s | {:.0} MiB | {:.0} B | {:.0} B | {:.0} B |\n",
            self.n,
            self.spawn_s,
            n / self.spawn_s.max(1e-9) / 1e6,
            self.msg_s,
            self.peak_kib as f64 / 1024.0,
            self.peak_kib as f64 * 1024.0 / n,
            self.peak_kib.saturating_sub(self.base_kib) as f64 * 1024.0 / n,
            self.spawned_kib.saturating_sub(self.base_kib) as f64 * 1024.0 / n,
        )
    }
}

/// The parent: runs each system in a child (`n` actors on actorium, `peer_n` on the peers)
/// and returns a Markdown table.
pub fn run(systems: &[String], threads: usize, n: u64, peer_n: u64) -> String {
    let mut md = format!(
        "{threads} worker threads. Each system spawns its actors from one thread and keeps \
         them alive (addresses held), then sends each one message (which ends it). Bytes per \
         actor: the process's peak resident set over the actors (the issue's measure); what the \
         actors added over the resident set before the first spawn, at the peak (the messages \
         in flight included) and once all were spawned (before any message).\n\n\
         | system | actors | spawn (rate) | message all | peak RSS | bytes/actor (peak / n) | above baseline, peak | above baseline, spawned |\n\
         |---|---|---|---|---|---|---|---|\n"
    );
    for s in systems {
        // actorium at the peers' count too, so every system is compared at the same size.
        let mut counts = vec![peer_n];
        if s.starts_with("actorium") && n != peer_n {
            counts.push(n);
        }
        for count in counts {
            eprintln!("scale: {s}, {count} actors ...");
            let result =
                crate::idle::run_child(s, threads, "scale", &[&count.to_string()], "SCALE ")
                    .and_then(|f| Line::parse(|k| f.get(k)));
            match result {
                Ok(line) => md.push_str(&line.row(s)),
                Err(why) => {
                    // (A child that failed says so already; a bad result line does not.)
                    let why = if why.starts_with("failed") {
                        why
                    } else {
                        format!("failed: {why}")
                    };
                    md.push_str(&format!("| {s} | {count} | {why} | | | | | |\n"))
                }
            }
        }
    }
    md.push_str(&format!(
        "\nEvery system with {peer_n} actors, actorium also with {n} (ractor and kameo take \
         about 7 KB per actor: ten million would not fit in this machine's memory). Each actor's state \
         is the fork-join worker's (two counters, a step count, the latch: 32 bytes in Rust); \
         the vector of addresses is counted (8 bytes per actor for actorium). Completion: a \
         shared counter each actor decrements, the last one waking the main thread (every \
         system). actix: its one-arbiter configuration (`actix-1`), actors without an address \
         of their own. ractor's spawn awaits each actor's `pre_start` (its API). Erlang runs \
         with `+P` raised to fit; its baseline is read after the VM has booted (its process \
         table included), the others' before their runtime starts.\n\n\
         Command: `cargo run --release -p actorium-bench -- [--systems a,b] scale [--n N] \
         [--peer-n M] [--threads T]`.\n"
    ));
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(s: &str) -> impl Fn(&str) -> String + '_ {
        move |k| {
            s.split_whitespace()
                .find_map(|f| f.strip_prefix(&format!("{k}=")).map(str::to_owned))
                .unwrap_or_default()
        }
    }

    #[test]
    fn a_line_gives_rates_and_bytes_per_actor() {
        let l = "SCALE n=1000000 spawn_s=0.5 msg_s=0.25 base_kib=1024 spawned_kib=9000 \
                 peak_kib=125024 checksum=1000000";
        let line = Line::parse(fields(l)).unwrap();
        let row = line.row("x");
        // 2 M spawns/s; 125,024 KiB over 10^6 actors = 128 B; above the baseline 127 B.
        assert!(
            row.contains(
                "| x | 1000000 | 0.50 s (2.00 M/s) | 0.25 s | 122 MiB | 128 B | 127 B | 8 B |"
            ),
            "{row}"
        );
    }

    #[test]
    fn a_wrong_checksum_or_a_missing_field_is_an_error() {
        let l = "SCALE n=10 spawn_s=0.5 msg_s=0.25 base_kib=1 spawned_kib=2 peak_kib=3 checksum=9";
        assert!(Line::parse(fields(l)).unwrap_err().contains("checksum"));
        assert!(Line::parse(fields("SCALE n=10")).is_err());
    }
}
