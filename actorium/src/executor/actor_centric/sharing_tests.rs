use super::*;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[test]
fn a_push_notifies_only_a_waiter_not_already_on_its_way() {
    let mut s = State {
        waiting: 2,
        ..State::default()
    };
    let pushed: Vec<bool> = (0..3).map(|_| s.push(Job::shutdown())).collect();
    assert_eq!(pushed, [true, true, false]);
    assert_eq!((s.waiting, s.notified), (2, 2));
    // One woke: the other is still on its way, so a push notifies nobody.
    s.woke();
    assert_eq!((s.waiting, s.notified), (1, 1));
    assert!(!s.push(Job::shutdown()));
    // A spurious wake while nobody was notified leaves the count at zero.
    let mut s = State {
        waiting: 2,
        ..State::default()
    };
    s.woke();
    assert_eq!((s.waiting, s.notified), (1, 0));
    assert!(s.push(Job::shutdown()));
    assert_eq!(s.jobs.len(), 1);
}

/// Producers and blocked consumers: every job is taken exactly once, whatever the
/// notifies skipped (a consumer that waited for ever would fail the watchdog).
#[test]
fn every_job_pushed_is_popped_with_consumers_blocking() {
    const PRODUCERS: usize = 3;
    const JOBS: usize = 20_000;
    const CONSUMERS: usize = 3;
    let q = Arc::new(WorkSharing.coordinator(CONSUMERS));
    let deadline = Instant::now() + Duration::from_secs(60);
    let consumers: Vec<_> = (0..CONSUMERS)
        .map(|_| {
            let q = q.clone();
            std::thread::spawn(move || {
                let mut n = 0usize;
                // Each consumer stops at the first end marker it takes (`Job::retire`,
                // one per consumer); the jobs before are counted.
                loop {
                    let job = q.pop_blocking();
                    if job.is_retire() {
                        return n;
                    }
                    n += 1;
                }
            })
        })
        .collect();
    // Every consumer blocked on the condition variable before the first push, so the
    // pushes go through the notify accounting.
    while q.state.lock().unwrap().waiting < CONSUMERS {
        assert!(Instant::now() < deadline, "the consumers never blocked");
        std::thread::yield_now();
    }
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|_| {
            let q = q.clone();
            std::thread::spawn(move || {
                for i in 0..JOBS {
                    q.push(Job::shutdown());
                    if i % 1000 == 0 {
                        std::thread::yield_now();
                    }
                }
            })
        })
        .collect();
    for p in producers {
        p.join().unwrap();
    }
    for _ in 0..CONSUMERS {
        q.push(Job::retire());
    }
    while consumers.iter().any(|c| !c.is_finished()) {
        assert!(
            Instant::now() < deadline,
            "a consumer is still blocked: a job was left without a notify"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let taken: usize = consumers.into_iter().map(|c| c.join().unwrap()).sum();
    assert_eq!(taken, PRODUCERS * JOBS);
}
