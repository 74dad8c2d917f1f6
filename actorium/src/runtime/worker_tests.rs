use super::*;

#[test]
fn an_idle_worker_releases_memory_once_per_quiet_spell() {
    let ms = Duration::from_millis;
    let plan = |release, limit, for_release| SleepPlan {
        release,
        limit,
        for_release,
    };
    let t0 = Instant::now();
    let mut idle = Idleness::fresh();
    // A unit that keeps nothing for bursts: its sleeps are left as they were, and the
    // clock is not read.
    let no_clock = || -> Instant { unreachable!("no clock read for such a unit") };
    let other = idle.before_sleep(false, t0, no_clock, None);
    assert_eq!(other, plan(false, None, false));
    // The spell's first sleep, 1 ms in: nothing released yet, woken when it is due.
    let first = idle.before_sleep(true, t0, || t0 + ms(1), None);
    assert_eq!(first, plan(false, Some(RELEASE_AFTER - ms(1)), true));
    // A shorter bound of the unit's own (a rescue watch) stays, and is the unit's.
    let watch = idle.before_sleep(true, t0, || t0 + ms(1), Some(ms(2)));
    assert_eq!(watch, plan(false, Some(ms(2)), false));
    // A later one gives way to the release's.
    let late = idle.before_sleep(true, t0, || t0 + ms(1), Some(ms(50)));
    assert_eq!(late, plan(false, Some(RELEASE_AFTER - ms(1)), true));
    // Woken by the release's bound: no last chance to steal, no spin (one pass, then the
    // release and a sleep).
    idle.woke(ms(9), false, true);
    assert!(!idle.last_chance() && idle.no_spin());
    // The spell goes on from its start, not from the wake-up.
    let woken = t0 + ms(10);
    let due = idle.before_sleep(true, woken, || t0 + RELEASE_AFTER, None);
    assert_eq!(due, plan(true, None, false));
    // Once per spell.
    let again = idle.before_sleep(true, woken, || t0 + ms(30), Some(ms(3)));
    assert_eq!(again, plan(false, Some(ms(3)), false));
    // The unit's own time-out still gives the last chance it always gave.
    idle.woke(ms(3), false, false);
    assert!(idle.last_chance());
    // Work found: the next spell waits its own time.
    idle.reset();
    let t1 = t0 + ms(40);
    let next = idle.before_sleep(true, t1, || t1, None);
    assert_eq!(next, plan(false, Some(RELEASE_AFTER), true));
}
