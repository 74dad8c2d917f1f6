//! A worker whose fork/join tasks were all taken by thieves while it was not looking still
//! shows tasks; once idle, it must stop showing them before it sleeps, or every other idle
//! worker keeps looking for those tasks instead of sleeping (a full core spun until the
//! worker forked again). Alone in its test binary: it reads the CPU time of the whole process.

mod common;

use actorium::policy::WorkStealing;
use actorium::{ActorSystem, ActorSystemBuilder, QueueStealing};
use common::{cpu_ticks, watchdog, TaskGiver};
use std::sync::Mutex;
use std::time::Duration;

/// The tests of this binary run one at a time (each reads the CPU time of the whole process).
static ALONE: Mutex<()> = Mutex::new(());

#[test]
fn idle_workers_sleep_after_their_tasks_were_taken() {
    let _alone = ALONE.lock().unwrap_or_else(|p| p.into_inner());
    check(vec![
        ("longest victim", || {
            ActorSystem::builder().queue_stealing(QueueStealing::LongestVictim)
        }),
        ("no stealing", || {
            ActorSystem::builder().queue_stealing(QueueStealing::None)
        }),
    ]);
}

/// CAF's work-stealing policy idles in its own `dequeue`: its idle sleep must stop showing
/// the deque too (it did not: the other worker spun, as it now would nap every millisecond).
#[test]
fn idle_workers_of_the_work_stealing_policy_sleep_after_their_tasks_were_taken() {
    let _alone = ALONE.lock().unwrap_or_else(|p| p.into_inner());
    check(vec![("work stealing", || {
        ActorSystem::builder().policy(WorkStealing::default())
    })]);
}

/// An executor's name, and a builder that chooses it.
type Executor = (&'static str, fn() -> ActorSystemBuilder);

fn check(builders: Vec<Executor>) {
    watchdog(120, move || {
        for (stealing, builder) in builders {
            // Retried until the other worker took the task (it nearly always does at once).
            let mut checked = false;
            for _ in 0..20 {
                let system = builder().workers(2).build().unwrap();
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
                    "{stealing}: {spent} ticks of CPU in 0.5 s of idle: a worker spins"
                );
                checked = true;
                break;
            }
            assert!(checked, "{stealing}: the other worker never took the task");
        }
    });
}
