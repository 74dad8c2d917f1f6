use super::*;

const FULL: Duration = Duration::from_micros(100);
const LONG: Duration = Duration::from_millis(1);

#[test]
fn long_sleeps_shrink_the_window_to_zero() {
    let mut b = SpinBudget::new(FULL, true);
    assert_eq!(b.window(), FULL);
    assert_eq!(b.scale(100), 100);
    b.slept(LONG);
    assert_eq!(b.window(), FULL / 2);
    assert_eq!(b.scale(100), 50);
    for _ in 0..MAX_SHIFT {
        b.slept(LONG);
    }
    assert_eq!(b.window(), Duration::ZERO);
    assert_eq!(b.scale(100), 0);
    b.slept(LONG);
    assert_eq!(b.window(), Duration::ZERO, "stays at zero");
}

#[test]
fn a_short_sleep_or_a_paying_spin_restores_the_full_window() {
    let mut b = SpinBudget::new(FULL, true);
    for _ in 0..MAX_SHIFT {
        b.slept(LONG);
    }
    b.slept(FULL / 2);
    assert_eq!(b.window(), FULL);
    for _ in 0..MAX_SHIFT {
        b.slept(LONG);
    }
    b.paid();
    assert_eq!(b.window(), FULL);
}

#[test]
fn a_fixed_window_never_changes() {
    let mut b = SpinBudget::new(FULL, false);
    for _ in 0..10 {
        b.slept(LONG);
    }
    assert_eq!(b.window(), FULL);
}
