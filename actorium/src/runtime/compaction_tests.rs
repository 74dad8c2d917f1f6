//! The controller's reading of a window (`verdict`); the hand-overs it triggers are tested
//! through the public API (`tests/compaction.rs`) and modelled in `pool_loom.rs`.

use super::*;

const W: u64 = 1_000_000;

#[test]
fn every_worker_busy_is_saturation() {
    assert_eq!(verdict(&[W, W], W), Verdict::Saturated);
    assert_eq!(verdict(&[W * 95 / 100], W), Verdict::Saturated);
    assert_eq!(verdict(&[W, W / 2], W), Verdict::Fits);
}

#[test]
fn work_that_fits_on_one_fewer_worker_leaves_room_to_spare() {
    // A conversation on two workers: each busy a third of the time.
    assert_eq!(verdict(&[W / 3, W / 3], W), Verdict::Spare);
    // Two busy workers out of four.
    assert_eq!(verdict(&[W, W, 0, 0], W), Verdict::Spare);
    // Two and a half workers' worth on three: no room (70 % of two is 1.4).
    assert_eq!(verdict(&[W, W, W / 2], W), Verdict::Fits);
    // One worker: nothing to spare.
    assert_eq!(verdict(&[0], W), Verdict::Fits);
}

#[test]
fn an_empty_window_says_nothing() {
    assert_eq!(verdict(&[], W), Verdict::Fits);
    assert_eq!(verdict(&[0, 0], 0), Verdict::Fits);
}

fn trial(from: usize, before: f64, after: f64) -> Trial {
    let time = 4 * W;
    Trial {
        from,
        before,
        windows: 4,
        time,
        done: (after * time as f64) as u64,
    }
}

#[test]
fn an_activation_pays_when_the_work_goes_faster_by_a_tenth() {
    // A pipeline: 1.8 times the rate with the second worker.
    assert_eq!(trial(1, 0.001, 0.0018).judge(), Judged::Pays);
    // A ring whose token now crosses workers: slower.
    assert_eq!(trial(1, 0.001, 0.0007).judge(), Judged::Fails);
    // Five percent faster is noise, not a worker's worth.
    assert_eq!(trial(2, 0.001, 0.00105).judge(), Judged::Fails);
    // A burst that ended during the trial: the workers go back all the same.
    assert_eq!(trial(2, 0.001, 0.0001).judge(), Judged::Fails);
    // Work that is not counted (fork/join tasks only): nothing to compare, it stays.
    assert_eq!(trial(1, 0.0, 0.0).judge(), Judged::Pays);
}

#[test]
fn the_watch_backs_off_past_a_quiet_spell_only_while_every_worker_idles_throughout() {
    // A busy worker (maybe in a long behaviour with mail behind it): look again soon.
    assert_eq!(next_limit(WATCH_MAX, true, true), WATCH_FIRST);
    // Idle at each look: doubling up to QUIET, however short the spells between.
    let mut limit = WATCH_FIRST;
    while limit * 2 <= QUIET {
        assert_eq!(next_limit(limit, false, false), limit * 2);
        limit *= 2;
    }
    // Past it only from QUIET on and while idle throughout (the spell that ends is then at
    // least QUIET, and its end wakes the watch); else at most QUIET.
    assert_eq!(next_limit(limit, false, false), QUIET);
    assert_eq!(next_limit(limit, false, true), QUIET);
    assert_eq!(next_limit(QUIET, false, false), QUIET);
    assert_eq!(next_limit(QUIET, false, true), QUIET * 2);
    assert_eq!(next_limit(WATCH_MAX, false, true), WATCH_MAX);
}
