use super::prelude::*;

/// The first `m` spawns get a queue each; then runs of `spawn_run` consecutive spawns
/// share one queue, run `r` in range `r mod w`, and a range's runs take its queues in
/// turn (with one range, queue after queue).
#[test]
fn spawns_come_in_runs_dealt_to_the_ranges_in_turn() {
    for m in 1..40 {
        for w in 1..=m.min(5) {
            for k in 0..m {
                assert_eq!(
                    spawn_queue(k, m, m, w, t().spawn_run),
                    k,
                    "m={m} w={w}: one queue each"
                );
            }
            // Per range, the queue its last run took.
            let mut last: Vec<Option<usize>> = vec![None; w];
            for run in 0..40 * w {
                let first = m + run * t().spawn_run;
                let q = spawn_queue(first, m, m, w, t().spawn_run);
                for k in first..first + t().spawn_run {
                    assert_eq!(
                        spawn_queue(k, m, m, w, t().spawn_run),
                        q,
                        "m={m} w={w}: run {run} shares"
                    );
                }
                let range = ranges::range_of(m, w, run % w);
                assert!(range.contains(&q), "m={m} w={w}: run {run} in its range");
                let want = match last[run % w] {
                    None => range.start,
                    Some(p) if p + 1 == range.end => range.start,
                    Some(p) => p + 1,
                };
                assert_eq!(q, want, "m={m} w={w}: run {run} takes the next queue");
                last[run % w] = Some(q);
            }
        }
    }
}

/// With more workers than CPUs, spawns from outside are dealt over the queues of as many
/// workers as there are CPUs, evenly spaced: the first `spread` get one each, the runs take
/// the same queues in turn, and whatever the number of active workers (contiguous ranges),
/// each range gets its share of them.
#[test]
fn spawns_are_dealt_over_the_queues_of_as_many_workers_as_cpus() {
    assert_eq!(
        spread_queues(32, 2, 2),
        32,
        "no more workers than CPUs: every queue"
    );
    assert_eq!(spread_queues(256, 16, 64), 256);
    assert_eq!(
        spread_queues(256, 16, 2),
        32,
        "16 workers on 2 CPUs: two workers' queues"
    );
    assert_eq!(spread_queues(1, 1, 8), 1);
    assert_eq!(spread_queues(10, 3, 1), 4, "a share rounded up");
    assert_eq!(
        spread_queues(3, 2, 2),
        3,
        "workers <= CPUs: every queue, however many"
    );
    let run = t().spawn_run;
    for (m, workers, cpus) in [(256, 16, 2), (48, 3, 2), (64, 16, 3), (7, 7, 2)] {
        let spread = spread_queues(m, workers, cpus);
        let first: Vec<usize> = (0..spread)
            .map(|k| spawn_queue(k, m, spread, 1, run))
            .collect();
        let mut distinct = first.clone();
        distinct.dedup();
        assert_eq!(
            distinct.len(),
            spread,
            "m={m}: one queue each, ascending: {first:?}"
        );
        assert!(first.iter().all(|&q| q < m));
        for (i, &q) in first.iter().enumerate() {
            assert_eq!(q, i * m / spread, "m={m}: evenly spaced");
        }
        // Then runs, queue after queue over the same queues.
        for r in 0..3 * spread {
            let k0 = spread + r * run;
            let q = spawn_queue(k0, m, spread, 1, run);
            assert_eq!(
                q,
                first[r % spread],
                "m={m}: run {r} takes the next of them"
            );
            assert_eq!(
                spawn_queue(k0 + run - 1, m, spread, 1, run),
                q,
                "a run shares"
            );
        }
        // Each of `active` contiguous ranges gets within one of its share.
        for active in 1..=workers {
            let ranges = partition(m, active);
            for r in &ranges {
                let n = first.iter().filter(|q| r.contains(q)).count();
                let share = spread as f64 * r.len() as f64 / m as f64;
                assert!(
                    (n as f64 - share).abs() <= 1.0,
                    "m={m} active={active}: range {r:?} got {n} of {spread}"
                );
            }
        }
    }
}

/// The executor deals its spawns so: `workers(16)` on 2 CPUs (pinned) puts the first spawns 8
/// queues apart, and on 16 CPUs one queue apart.
#[test]
fn a_system_with_more_workers_than_cpus_deals_its_spawns_over_fewer_queues() {
    for (cpus, second) in [(2, 8), (16, 1)] {
        let system = crate::ActorSystem::builder()
            .workers(16)
            .tune(&format!("cpus={cpus}"))
            .unwrap()
            .build()
            .unwrap();
        assert_eq!(system.queues(), 256);
        assert_eq!(system.handle().queue_of_spawn(1), second, "cpus={cpus}");
        system.stop();
    }
}

fn victim(v: &[u64], me: usize) -> usize {
    longest_victim(v.iter().copied(), me)
}

#[test]
fn the_longest_victim_is_the_oldest_thief_and_never_a_sleeper() {
    // Worker 0 busy since the start (stamp 0), worker 1 stole recently.
    assert_eq!(victim(&[0, 50, 90], 2), 0);
    assert_eq!(victim(&[70, 50, 90], 2), 1);
    // Worker 1 asleep (stamp_asleep): worker 0 is chosen although its stamp is newer
    // than the sleeper's was.
    assert_eq!(victim(&[70, u64::MAX, 90], 2), 0);
    // Every other worker asleep: one of them (a steal there finds nothing; harmless).
    assert_eq!(victim(&[u64::MAX, u64::MAX, 90], 2), 0);
}
