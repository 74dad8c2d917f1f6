//! A worker whose fork/join tasks were all taken by thieves while it was not looking still
//! shows tasks; once idle, it must stop showing them before it sleeps, or every other idle
//! worker keeps looking for those tasks instead of sleeping (a full core spun until the
//! worker forked again). Alone in its test binary: it reads the CPU time of the whole process.

mod common;

use actorium::{ActorSystem, QueueStealing};
use common::{cpu_ticks, watchdog, TaskGiver};
use std::time::Duration;

#[test]
fn idle_workers_sleep_after_their_tasks_were_taken() {
    watchdog(120, || {
        for stealing in [QueueStealing::LongestVictim, QueueStealing::None] {
            // Retried until the other worker took the task (it nearly always does at once).
            let mut checked = false;
            for _ in 0..20 {
                let system = ActorSystem::builder()
                    .workers(2)
                    .queue_stealing(stealing)
                    .build()
                    .unwrap();
                let (tx, rx) = std::sync::mpsc::channel();
                system.spawn(TaskGiver(tx)).send(()).unwrap();
                if !rx.recv().unwrap() {
                    system.shutdown();
                    continue;
                }
                // Quiet now: both workers go to sleep (a sleeping worker wakes at most every
                // 10 ms here, to give memory back, then sleeps unbounded).
                std::thread::sleep(Duration::from_millis(100));
                let before = cpu_ticks();
                std::thread::sleep(Duration::from_millis(500));
                let spent = cpu_ticks() - before;
                system.shutdown();
                // A spinning worker takes about 50 ticks (1/100 s each) in that half second.
                assert!(
                    spent < 20,
                    "{stealing:?}: {spent} ticks of CPU in 0.5 s of idle: a worker spins"
                );
                checked = true;
                break;
            }
            assert!(
                checked,
                "{stealing:?}: the other worker never took the task"
            );
        }
    });
}
