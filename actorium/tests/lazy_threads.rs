//! With compaction on, a dormant worker's thread starts only when the worker is first needed:
//! `workers(16)` on a small machine costs two threads (the active worker and the one that
//! keeps compaction's watch) until its load asks for more. One test in this binary, so that
//! no other test's workers are counted (Linux: threads are counted from `/proc/self/task`).
#![cfg(target_os = "linux")]

mod common;

use actorium::ActorSystem;
use common::{watchdog, Meeter};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};

/// Worker threads of this process that have named themselves (names truncated by the kernel
/// to 15 bytes).
fn worker_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|name| name.starts_with("actorium-worke"))
        .count()
}

#[test]
fn dormant_workers_start_their_threads_when_first_needed() {
    watchdog(120, || {
        // Two threads for sixteen workers, until work needs more.
        let system = ActorSystem::builder().workers(16).build().unwrap();
        assert_eq!(system.workers(), 16);
        // (A thread names itself once it runs.)
        common::wait_for(60, "two threads named", || worker_threads() >= 2);
        assert_eq!(worker_threads(), 2);
        // Four behaviours that must run at once: four workers activated, threads started
        // for them (and for the next dormant row, which keeps the watch).
        let (barrier, done) = (Arc::new(Barrier::new(4)), Arc::new(AtomicU64::new(0)));
        for _ in 0..4 {
            system
                .spawn(Meeter(barrier.clone(), done.clone()))
                .send(())
                .unwrap();
        }
        common::wait_for(60, "the four behaviours meet", || {
            done.load(Ordering::SeqCst) == 4
        });
        // (At least five: four active and the watch. How many more depends on how fast the
        // new threads start: while none of them runs a behaviour yet, the controller may
        // double the active workers again after its trial.)
        let started = worker_threads();
        assert!(started >= 5, "{started} worker threads");
        // Removing rows that never had a thread returns at once; an add starts every thread.
        assert_eq!(system.remove_workers(4).unwrap(), 12);
        assert!(worker_threads() <= started);
        assert_eq!(system.add_workers(2).unwrap(), 14);
        // (All fourteen are activated; an idle system may deactivate some again at once.)
        assert!((1..=14).contains(&system.active_workers()));
        // (A thread joined may still be listed for a moment while the kernel tears it down:
        // the counts below are waited for, and fail only if they never come.)
        common::wait_for(60, "fourteen threads named", || worker_threads() == 14);
        system.stop();
        common::wait_for(60, "every worker thread gone after stop", || {
            worker_threads() == 0
        });
    });
}
