//! Runs one (benchmark, system) once in its own process and measures it: the workload's own
//! timed region (reported by the child), peak RSS and CPU time (from `wait4`).

use crate::suite::{
    caf_binary, erlang_ebin, java_classes, tbb_binary, Bench, Kind, Params, System,
};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A successful run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    pub seconds: f64,
    pub checksum: u64,
    pub peak_rss_mb: f64,
    pub cpu_s: f64,
    /// The whole run's wall-clock time, process start to exit (set-up included), s.
    pub wall_s: f64,
}

/// Why a run produced no number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// The system cannot express the workload (exit status 3); the reason.
    NotApplicable(String),
    /// It crashed, timed out or printed no result.
    Failed(String),
}

/// Exit status an implementation uses for "this system cannot express the workload".
pub const EXIT_NOT_APPLICABLE: i32 = 3;

fn command(sys: &System, bench: &Bench, threads: usize, params: &Params) -> Command {
    let mut c = match sys.kind {
        Kind::InProcess => {
            let mut c = Command::new(std::env::current_exe().expect("own executable"));
            c.args(["exec", bench.name, sys.name, &threads.to_string()]);
            c
        }
        Kind::Caf(policy) => {
            let mut c = Command::new(caf_binary());
            c.args([bench.name, policy, &threads.to_string()]);
            c
        }
        Kind::Erlang => {
            let mut c = Command::new("erl");
            c.arg("+S").arg(format!("{threads}:{threads}"));
            c.args(["-noshell", "-pa"]).arg(erlang_ebin());
            c.args(["-run", "actorium_bench", "main", bench.name]);
            c
        }
        Kind::Tbb => {
            let mut c = Command::new(tbb_binary());
            c.args([bench.name, &threads.to_string()]);
            c
        }
        Kind::Java => {
            let mut c = Command::new("java");
            c.arg("-cp").arg(java_classes()).arg("ForkJoinBench");
            c.args([bench.name, &threads.to_string()]);
            c
        }
    };
    c.args(params.args());
    c
}

/// Parses `RESULT seconds=<f> checksum=<u>` from the child's stdout.
pub fn parse_result(stdout: &str) -> Option<(f64, u64)> {
    let line = stdout.lines().find(|l| l.starts_with("RESULT "))?;
    let mut secs = None;
    let mut sum = None;
    for field in line.split_whitespace().skip(1) {
        match field.split_once('=')? {
            ("seconds", v) => secs = v.parse().ok(),
            ("checksum", v) => sum = v.parse().ok(),
            _ => {}
        }
    }
    Some((secs?, sum?))
}

/// Runs the workload once in a child process.
pub fn run_once(
    sys: &System,
    bench: &Bench,
    threads: usize,
    params: &Params,
    timeout: Duration,
) -> Result<Measured, RunError> {
    let started = Instant::now();
    let mut child = command(sys, bench, threads, params)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| RunError::Failed(format!("could not start: {e}")))?;
    let pid = child.id() as libc::pid_t;
    let mut out_pipe = child.stdout.take().unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out_pipe.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err_pipe.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + timeout;
    // SAFETY: a zeroed rusage is a valid value for wait4 to overwrite.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let mut status = 0;
    let mut timed_out = false;
    loop {
        // SAFETY: `pid` is our un-reaped child; the pointers are valid for the call.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
        if r == pid {
            break;
        }
        if r < 0 {
            return Err(RunError::Failed(format!(
                "wait4: {}",
                std::io::Error::last_os_error()
            )));
        }
        if Instant::now() > deadline && !timed_out {
            timed_out = true;
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    let last_err = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if timed_out {
        return Err(RunError::Failed(format!(
            "timed out after {} s",
            timeout.as_secs()
        )));
    }
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == EXIT_NOT_APPLICABLE {
        return Err(RunError::NotApplicable(last_err.to_string()));
    }
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        let how = if libc::WIFSIGNALED(status) {
            format!("killed by signal {}", libc::WTERMSIG(status))
        } else {
            format!("exit status {}", libc::WEXITSTATUS(status))
        };
        return Err(RunError::Failed(format!("{how}: {last_err}")));
    }
    let (seconds, checksum) = parse_result(&stdout)
        .ok_or_else(|| RunError::Failed(format!("no RESULT line in output: {}", stdout.trim())))?;
    Ok(Measured {
        seconds,
        checksum,
        peak_rss_mb: ru.ru_maxrss as f64 / 1024.0,
        cpu_s: cpu_seconds(&ru),
        wall_s: started.elapsed().as_secs_f64(),
    })
}

/// User plus system CPU time of a `rusage`, in seconds.
pub fn cpu_seconds(ru: &libc::rusage) -> f64 {
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_result_line() {
        assert_eq!(
            parse_result("noise\nRESULT seconds=0.25 checksum=42\n"),
            Some((0.25, 42))
        );
        assert_eq!(
            parse_result("RESULT checksum=7 seconds=1e-3"),
            Some((0.001, 7))
        );
        assert_eq!(parse_result("RESULT seconds=0.25"), None);
        assert_eq!(parse_result("result seconds=1 checksum=1"), None);
        assert_eq!(parse_result("RESULT seconds=x checksum=1"), None);
    }
}

/// The fields of a child's result line (`PREFIX k=v k=v ...`), or why there is none.
#[derive(Debug)]
pub struct Fields(String);

impl Fields {
    /// Runs `cmd` and finds the stdout line starting with `prefix` (`"IDLE "`, `"ASK "`);
    /// otherwise the last line of its stderr (or the error starting it).
    pub fn of(mut cmd: Command, prefix: &str) -> Result<Self, String> {
        let out = cmd.output().map_err(|e| e.to_string())?;
        let line = out
            .status
            .success()
            .then(|| {
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .find(|l| l.starts_with(prefix))
                    .map(str::to_owned)
            })
            .flatten();
        line.map(Fields).ok_or_else(|| {
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
                .to_owned()
        })
    }

    /// The value of `k` (empty if absent).
    pub fn get(&self, k: &str) -> String {
        self.0
            .split_whitespace()
            .find_map(|f| f.strip_prefix(&format!("{k}=")).map(str::to_owned))
            .unwrap_or_default()
    }
}
