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
                    spawn_queue(k, m, w, t().spawn_run),
                    k,
                    "m={m} w={w}: one queue each"
                );
            }
            // Per range, the queue its last run took.
            let mut last: Vec<Option<usize>> = vec![None; w];
            for run in 0..40 * w {
                let first = m + run * t().spawn_run;
                let q = spawn_queue(first, m, w, t().spawn_run);
                for k in first..first + t().spawn_run {
                    assert_eq!(
                        spawn_queue(k, m, w, t().spawn_run),
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
