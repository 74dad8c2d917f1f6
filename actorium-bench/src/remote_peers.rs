//! The remote benchmark's foreign peers: each a server process started once and a client
//! process run once per round, printing
//! `RESULT call_p50_us=.. call_p99_us=.. tell_mps=.. sparse_p50_us=..`.
//!
//! - Erlang distribution (`peers/erlang/actorium_remote.erl`): two nodes on 127.0.0.1 (`-name`,
//!   epmd on loopback), `gen_server:call` round trips, `!` throughput, sparse calls.
//! - CAF 0.17's middleman (`peers/caf/caf_remote.cpp`): `publish` / `remote_actor` on
//!   127.0.0.1, request/receive round trips from a `scoped_actor`, `send` throughput.
//! - ractor_cluster 0.16 (`peers/ractor-cluster/main.rs`, its own cargo workspace so that
//!   ractor's `cluster` feature stays out of the suite's local ractor peer): two `NodeServer`s
//!   on 127.0.0.1, actors found through process groups, `call!` round trips, `cast`
//!   throughput.
//! - kameo 0.22's `remote` feature (`peers/kameo-remote/main.rs`, its own cargo workspace:
//!   libp2p): TCP + noise + yamux swarms on 127.0.0.1 (no mDNS), actors found through kameo's
//!   registry, `ask` round trips, and tells with 100 acknowledged ones in flight, at most
//!   10^5 (kameo sends each remote message on a stream of its own, at most 100 per
//!   connection: a fire-and-forget flood past that loses messages).
//!
//! All count and sum every tell on the far side (the checksum) and use their runtime's
//! default configuration (kameo: its swarm built as its examples do, on TCP).

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// The longest one client round may take.
const ROUND_LIMIT: std::time::Duration = std::time::Duration::from_secs(600);

/// A peer whose server is running: `round` runs one client against it.
pub struct Peer {
    pub name: &'static str,
    server: Child,
    program: PathBuf,
    /// The client's arguments before `N TELLS SPARSE`.
    args: Vec<OsString>,
    env: Vec<(&'static str, &'static str)>,
}

/// One client run's numbers: call p50 and p99 (µs), tells (M msg/s), sparse call p50 (µs), and
/// the CPU seconds of both processes (server and client) per 10^6 round trips and per 10^6
/// tells.
pub type PeerRound = [f64; 6];

impl Peer {
    /// Every peer installed here (or those of `only`), its server started (peers that are not
    /// installed, or fail to build or start, are left out with a line on stderr).
    pub fn start_all(only: &[String]) -> Vec<Peer> {
        const NAMES: [&str; 4] = ["erlang", "caf", "ractor_cluster", "kameo"];
        for o in only {
            if o != "actorium" && !NAMES.contains(&o.as_str()) {
                eprintln!(
                    "remote: no peer is named `{o}` (the peers: {})",
                    NAMES.join(", ")
                );
            }
        }
        let mut v = Vec::new();
        for (name, start) in [
            ("erlang", erlang as fn() -> Result<Peer, String>),
            ("caf", caf),
            ("ractor_cluster", ractor_cluster),
            ("kameo", kameo),
        ] {
            if !only.is_empty() && !only.iter().any(|o| o == name) {
                continue;
            }
            match start() {
                Ok(p) => v.push(p),
                Err(e) => eprintln!("remote: {name} peer left out: {e}"),
            }
        }
        v
    }

    /// One client run. The client prints `mark` where a phase (the round trips, the tells)
    /// begins and `mark COUNT` where it ends, and waits for a line on its stdin each time:
    /// meanwhile both processes' CPU time is read, so the phase's CPU is exactly theirs.
    pub fn round(&self, n: u64, tells: u64, sparse: u64) -> Result<PeerRound, String> {
        let mut client = Command::new(&self.program)
            .envs(self.env.iter().copied())
            .args(&self.args)
            .args([n.to_string(), tells.to_string(), sparse.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{}: {e}", self.name))?;
        // A client that hangs is killed (then the round fails), by a watchdog thread, since
        // this one blocks reading the client's lines.
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let pid = client.id();
        let watchdog = std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                stopped.recv_timeout(ROUND_LIMIT)
            {
                // SAFETY: kill has no memory preconditions; the client is not reaped before
                // this thread is joined, so the pid is still the client's (a zombie at worst).
                unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            }
        });
        let mut stdin = client.stdin.take().expect("piped");
        let stderr = client.stderr.take().expect("piped");
        // Read on a thread of its own, so that a client that fills its stderr cannot stall.
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = BufReader::new(stderr).read_to_string(&mut text);
            text
        });
        let both = || {
            let s = crate::remote::proc_cpu(self.server.id());
            let c = crate::remote::proc_cpu(pid);
            s.zip(c).map(|(s, c)| s + c)
        };
        let mut result = None;
        let mut begun = None;
        let mut per_million = Vec::new();
        for line in BufReader::new(client.stdout.take().expect("piped")).lines() {
            let Ok(line) = line else { break };
            if let Some(rest) = line.strip_prefix("mark") {
                let now = both();
                match rest.trim().parse::<u64>() {
                    Ok(count) => {
                        let cpu = begun.take().zip(now).map(|(b, e): (f64, f64)| e - b);
                        let per = cpu.filter(|_| count > 0).map(|c| c * 1e6 / count as f64);
                        per_million.push(per.unwrap_or(f64::NAN));
                    }
                    Err(_) => begun = now,
                }
                // The client waits for this line; a client gone is seen at its exit.
                let _ = stdin.write_all(b"\n").and_then(|()| stdin.flush());
            } else if line.starts_with("RESULT") {
                result = Some(line);
            }
        }
        drop(stdin);
        // The watchdog is done before the client is reaped (its pid stays the client's).
        let _ = stop.send(());
        let _ = watchdog.join();
        let deadline = std::time::Instant::now() + ROUND_LIMIT;
        while matches!(client.try_wait(), Ok(None)) {
            if std::time::Instant::now() > deadline {
                let _ = client.kill();
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let status = client.wait();
        let err = stderr.join().unwrap_or_default();
        status.map_err(|e| format!("{}: {e}", self.name))?;
        let line = result.ok_or_else(|| format!("{}: no result: {err}", self.name))?;
        let mut v = [f64::NAN; 6];
        let fields: Vec<&str> = line.split_whitespace().skip(1).collect();
        if fields.len() != 4 {
            return Err(format!("{}: bad result `{line}`", self.name));
        }
        for (slot, kv) in v.iter_mut().zip(fields) {
            *slot = kv
                .split('=')
                .nth(1)
                .and_then(|x| x.parse().ok())
                .ok_or_else(|| format!("{}: bad result `{line}`", self.name))?;
        }
        // The round trips' CPU, then the tells' (NaN where a client printed no marks).
        for (slot, c) in v[4..].iter_mut().zip(per_million) {
            *slot = c;
        }
        Ok(v)
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// Starts `cmd` (stdout piped) and returns it with the first line it prints.
fn spawn_server(mut cmd: Command) -> Result<(Child, String), String> {
    let mut server = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut lines = BufReader::new(server.stdout.take().expect("piped")).lines();
    match lines.next() {
        Some(Ok(l)) => {
            std::thread::spawn(move || lines.for_each(drop));
            Ok((server, l))
        }
        _ => {
            let _ = server.kill();
            let _ = server.wait();
            Err("the server did not start".into())
        }
    }
}

const EPMD: (&str, &str) = ("ERL_EPMD_ADDRESS", "127.0.0.1");

fn erlang() -> Result<Peer, String> {
    Command::new("erl")
        .arg("-version")
        .output()
        .map_err(|_| "not installed (erlang-nox; run scripts/install-peers.sh)")?;
    let ebin = crate::suite::crate_dir().join("peers/erlang/ebin");
    crate::suite::build_once("erlang", &ebin.join("actorium_remote.beam"))?;
    let node = format!("abench_srv{}@127.0.0.1", std::process::id());
    let erl = |name: &str| {
        let mut v: Vec<OsString> = ["-name", name, "-setcookie", "actorium-bench", "-noshell"]
            .map(OsString::from)
            .to_vec();
        v.push("-pa".into());
        v.push(ebin.clone().into());
        v
    };
    let mut cmd = Command::new("erl");
    cmd.env(EPMD.0, EPMD.1)
        .args(erl(&node))
        .args(["-run", "actorium_remote", "server"]);
    let (server, first) = spawn_server(cmd)?;
    if first.trim() != "ready" {
        return Err(format!("the server said `{first}`"));
    }
    let mut args = erl(&format!("abench_cli{}@127.0.0.1", std::process::id()));
    args.extend(["-run", "actorium_remote", "client"].map(OsString::from));
    args.push(node.into());
    Ok(Peer {
        name: "erlang",
        server,
        program: "erl".into(),
        args,
        env: vec![EPMD],
    })
}

fn caf() -> Result<Peer, String> {
    if !std::path::Path::new("/usr/include/caf/io/all.hpp").exists() {
        return Err("not installed (libcaf-dev; run scripts/install-peers.sh)".into());
    }
    built("caf", "caf", "caf-remote")
}

fn ractor_cluster() -> Result<Peer, String> {
    built("ractor_cluster", "ractor-cluster", "ractor-cluster-remote")
}

fn kameo() -> Result<Peer, String> {
    built("kameo", "kameo-remote", "kameo-remote")
}

/// A peer built from `peers/<dir>` (by its build.sh, when its sources are newer) into
/// `build/<program>`: `program server` prints `ready <address words>`, and its clients run
/// `program client <address words> N TELLS SPARSE`.
fn built(name: &'static str, dir: &str, program: &str) -> Result<Peer, String> {
    let program = crate::suite::crate_dir()
        .join("peers")
        .join(dir)
        .join("build")
        .join(program);
    crate::suite::build_once(dir, &program)?;
    let mut cmd = Command::new(&program);
    cmd.arg("server");
    let (server, first) = spawn_server(cmd)?;
    let address = first
        .strip_prefix("ready ")
        .ok_or_else(|| format!("the server said `{first}`"))?;
    let mut args: Vec<OsString> = vec!["client".into()];
    args.extend(address.split_whitespace().map(OsString::from));
    Ok(Peer {
        name,
        server,
        program,
        args,
        env: Vec::new(),
    })
}
