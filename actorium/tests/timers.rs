//! Timers (`send_after`, `send_interval`, `Timer::cancel`) on every executor.
//!
//! The tests of this file take one lock, so that one system's timer thread at a time exists
//! in this process (the idle test reads the timer thread's CPU time from /proc).

mod common;

use actorium::{Actor, ActorSystem, Allocation, Context, ExitReason, Receive, SendError};
use common::{on_every_executor, settle, watchdog};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Records what it receives.
struct Log(Arc<Mutex<Vec<u32>>>);
impl Actor for Log {}
impl Receive<u32> for Log {
    fn receive(&mut self, n: u32, _: &mut Context<'_, Self>) -> Allocation {
        self.0.lock().unwrap().push(n);
        Allocation::Nodelete
    }
}

#[test]
fn timers_fire_in_deadline_order_and_cancelled_ones_never() {
    let _s = serial();
    watchdog(60, || {
        on_every_executor(|_, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let log = Arc::new(Mutex::new(Vec::new()));
            let a = system.spawn(Log(log.clone()));
            let mut timers = Vec::new();
            // Each deadline lies between the clock before the call and after it, plus the
            // delay (50 ms apart: in that order unless this thread stalls that long).
            let mut due = std::collections::HashMap::new();
            for ms in [250u32, 200, 150, 100, 50] {
                let delay = Duration::from_millis(u64::from(ms));
                let before = Instant::now();
                let t = system.send_after(&a, ms, delay).unwrap();
                due.insert(ms, (before + delay, Instant::now() + delay));
                timers.push(t);
            }
            assert!(timers[1].cancel(), "the 200 ms timer was pending");
            assert!(!timers[1].cancel());
            settle(&system, 10, "four messages", || {
                log.lock().unwrap().len() == 4
            });
            // One timer thread sends them in deadline order, so they arrive in that order:
            // no message comes after one whose deadline was surely later.
            let got = log.lock().unwrap().clone();
            let mut sorted = got.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, [50, 100, 150, 250], "the cancelled one never");
            for (i, x) in got.iter().enumerate() {
                for y in &got[i + 1..] {
                    assert!(due[y].1 >= due[x].0, "{y} came after {x}: {got:?}");
                }
            }
            assert!(!timers[0].is_pending(), "fired");
            system.shutdown();
        });
    });
}

#[test]
fn a_periodic_timer_ticks_until_cancelled() {
    let _s = serial();
    watchdog(60, || {
        on_every_executor(|_, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let log = Arc::new(Mutex::new(Vec::new()));
            let a = system.spawn(Log(log.clone()));
            let t = system
                .send_interval(&a, 1, Duration::from_millis(1))
                .unwrap();
            settle(&system, 10, "five ticks", || log.lock().unwrap().len() >= 5);
            assert!(t.cancel());
            assert!(!t.is_pending());
            // Fences sent by the timer thread, which sends in deadline order, one at a time:
            // the first (due at once) comes behind every tick it sent before the cancel (the
            // one being sent as we cancelled included); the second, 20 ms later, behind any
            // tick it would still send. No tick may come between them. (Ticks queued before
            // the cancel may be many on a loaded machine: they are not counted.)
            system.send_after(&a, 2, Duration::ZERO).unwrap();
            system.send_after(&a, 3, Duration::from_millis(20)).unwrap();
            settle(&system, 10, "the fences", || {
                log.lock().unwrap().contains(&3)
            });
            let v = log.lock().unwrap().clone();
            let first = v.iter().position(|&x| x == 2).expect("the first fence");
            assert!(
                !v[first..].contains(&1),
                "a tick after the cancel: {:?}",
                &v[first..]
            );
            system.shutdown();
        });
    });
}

/// Ends after three ticks (`()`, or a `Bomb` below); takes `u32`s too.
struct ThreeTicks(u32);
impl Actor for ThreeTicks {}
impl ThreeTicks {
    fn tick(&mut self) -> Allocation {
        self.0 += 1;
        if self.0 == 3 {
            Allocation::Delete
        } else {
            Allocation::Nodelete
        }
    }
}
impl Receive<()> for ThreeTicks {
    fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
        self.tick()
    }
}
impl Receive<u32> for ThreeTicks {
    fn receive(&mut self, _: u32, _: &mut Context<'_, Self>) -> Allocation {
        Allocation::Nodelete
    }
}

#[test]
fn a_periodic_timer_stops_when_its_receiver_ends() {
    let _s = serial();
    watchdog(60, || {
        on_every_executor(|_, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let a = system.spawn(ThreeTicks(0));
            let t = system
                .send_interval(&a, (), Duration::from_millis(1))
                .unwrap();
            settle(&system, 10, "the receiver ended", || !a.is_alive());
            settle(&system, 10, "the timer stopped", || !t.is_pending());
            system.stop();
        });
    });
}

/// Counts down with `ctx.send_after` to itself, then ends.
struct Countdown(u32, Arc<AtomicUsize>);
impl Actor for Countdown {}
impl Receive<()> for Countdown {
    fn receive(&mut self, _: (), ctx: &mut Context<'_, Self>) -> Allocation {
        self.1.fetch_add(1, Ordering::SeqCst);
        if self.0 == 0 {
            return Allocation::Delete;
        }
        self.0 -= 1;
        ctx.send_after(ctx.address(), (), Duration::from_millis(1))
            .unwrap();
        Allocation::Nodelete
    }
}

#[test]
fn behaviours_set_timers() {
    let _s = serial();
    watchdog(60, || {
        on_every_executor(|name, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let n = Arc::new(AtomicUsize::new(0));
            let a = system.spawn(Countdown(10, n.clone()));
            a.send(()).unwrap();
            settle(&system, 10, "the countdown ended", || !a.is_alive());
            assert_eq!(n.load(Ordering::SeqCst), 11);
            if !name.contains("testing") {
                system.stop();
            }
        });
    });
}

/// Counts its drops (a message that must not be lost silently: dropped exactly once).
struct Counted(Arc<AtomicUsize>);
impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}
struct Sink;
impl Actor for Sink {}
impl Receive<Counted> for Sink {
    fn receive(&mut self, _: Counted, _: &mut Context<'_, Self>) -> Allocation {
        panic!("a cancelled or stopped timer's message was delivered")
    }
}

#[test]
fn shutdown_drops_pending_timers_and_a_stopped_system_refuses_new_ones() {
    let _s = serial();
    watchdog(60, || {
        let system = ActorSystem::builder().workers(2).build().unwrap();
        let drops = Arc::new(AtomicUsize::new(0));
        let sink = system.spawn(Sink);
        system
            .send_after(&sink, Counted(drops.clone()), Duration::from_secs(3600))
            .unwrap();
        let handle = system.handle();
        system.shutdown();
        assert_eq!(drops.load(Ordering::SeqCst), 1, "dropped with the system");
        let err = handle
            .send_after(&sink, Counted(drops.clone()), Duration::ZERO)
            .unwrap_err();
        let SendError(back) = err;
        drop(back);
        assert_eq!(
            drops.load(Ordering::SeqCst),
            2,
            "given back, then dropped here"
        );
    });
}

/// The CPU ticks (user + system, in clock ticks) of the thread named `actorium-timer`.
#[cfg(target_os = "linux")]
fn timer_thread_ticks() -> Option<u64> {
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let dir = task.ok()?.path();
        let comm = std::fs::read_to_string(dir.join("comm")).ok()?;
        if comm.trim() == "actorium-timer" {
            let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
            // Fields after the command name (which is in parentheses): state is field 3,
            // utime 14 and stime 15.
            let rest = &stat[stat.rfind(')')? + 2..];
            let f: Vec<&str> = rest.split_whitespace().collect();
            return Some(f[11].parse::<u64>().ok()? + f[12].parse::<u64>().ok()?);
        }
    }
    None
}

#[cfg(target_os = "linux")]
#[test]
fn a_pending_timer_costs_no_cpu_while_it_waits() {
    let _s = serial();
    watchdog(60, || {
        let system = ActorSystem::builder().workers(2).build().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let a = system.spawn(Log(log.clone()));
        let t = system.send_after(&a, 1, Duration::from_secs(10)).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let before = timer_thread_ticks().expect("the timer thread runs");
        std::thread::sleep(Duration::from_millis(500));
        let after = timer_thread_ticks().expect("the timer thread runs");
        // Asleep until the deadline: not one clock tick (10 ms) of CPU in half a second.
        assert!(after - before <= 1, "{} ticks", after - before);
        assert!(t.is_pending());
        assert!(log.lock().unwrap().is_empty());
        drop(system);
        assert_eq!(
            timer_thread_ticks(),
            None,
            "the timer thread ended with the system"
        );
    });
}

#[test]
#[should_panic(expected = "zero period")]
fn a_zero_period_is_refused() {
    let _s = serial();
    let system = ActorSystem::builder().workers(1).build().unwrap();
    let a = system.spawn(Log(Arc::new(Mutex::new(Vec::new()))));
    let _ = system.send_interval(&a, 1, Duration::ZERO);
}

/// A message whose destructor panics while `armed` (its clones are not armed). Counts the
/// armed ones dropped.
struct Bomb {
    armed: bool,
    exploded: Arc<AtomicUsize>,
}
impl Clone for Bomb {
    fn clone(&self) -> Self {
        Bomb {
            armed: false,
            exploded: self.exploded.clone(),
        }
    }
}
impl Drop for Bomb {
    fn drop(&mut self) {
        if self.armed {
            self.exploded.fetch_add(1, Ordering::SeqCst);
            panic!("a timer's message panicked in its destructor (on purpose)");
        }
    }
}

impl Receive<Bomb> for ThreeTicks {
    fn receive(&mut self, _: Bomb, _: &mut Context<'_, Self>) -> Allocation {
        self.tick()
    }
}

#[test]
fn a_pending_timers_message_that_panics_when_dropped_does_not_stop_the_shutdown() {
    let _s = serial();
    watchdog(60, || {
        on_every_executor(|name, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let exploded = Arc::new(AtomicUsize::new(0));
            let a = system.spawn(ThreeTicks(0));
            let down = a.monitor();
            for _ in 0..2 {
                let bomb = Bomb {
                    armed: true,
                    exploded: exploded.clone(),
                };
                system
                    .send_after(&a, bomb, Duration::from_secs(3600))
                    .unwrap();
            }
            let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(system)));
            assert!(dropped.is_ok(), "{name}: the drop of the system went on");
            assert_eq!(
                exploded.load(Ordering::SeqCst),
                2,
                "{name}: both pending messages were dropped"
            );
            assert_eq!(
                down.wait_timeout(Duration::from_secs(10)).unwrap(),
                ExitReason::Shutdown,
                "{name}: the actor was stopped"
            );
            assert_eq!(
                a.send(7u32).unwrap_err().0,
                7,
                "{name}: a send gives it back"
            );
        });
    });
}

#[test]
fn a_periodic_timers_message_that_panics_when_dropped_leaves_the_timer_thread_running() {
    let _s = serial();
    watchdog(60, || {
        on_every_executor(|name, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let exploded = Arc::new(AtomicUsize::new(0));
            let a = system.spawn(ThreeTicks(0));
            let bomb = Bomb {
                armed: true,
                exploded: exploded.clone(),
            };
            let t = system
                .send_interval(&a, bomb, Duration::from_millis(1))
                .unwrap();
            settle(&system, 10, "the receiver ended", || !a.is_alive());
            settle(&system, 10, "the timer stopped", || !t.is_pending());
            // The timer thread drops the ended timer, and with it the armed original, before
            // it fires the next timer: a later timer that fires shows the thread survived.
            let log = Arc::new(Mutex::new(Vec::new()));
            let b = system.spawn(Log(log.clone()));
            system.send_after(&b, 9, Duration::from_millis(10)).unwrap();
            settle(&system, 10, "a later timer fired", || {
                log.lock().unwrap().contains(&9)
            });
            assert_eq!(exploded.load(Ordering::SeqCst), 1, "{name}");
            system.shutdown();
        });
    });
}
