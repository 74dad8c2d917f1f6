use super::*;
use std::sync::mpsc;

#[test]
fn timers_fire_in_deadline_order_and_cancelled_ones_never() {
    let timers = Timers::default();
    let (tx, rx) = mpsc::channel();
    let mut refs = Vec::new();
    // Each deadline lies between the clock before the call and after it, plus the delay.
    let mut due = std::collections::HashMap::new();
    for ms in [250u64, 200, 150, 100, 50] {
        let tx = tx.clone();
        let delay = Duration::from_millis(ms);
        let before = Instant::now();
        refs.push(
            timers
                .add(
                    delay,
                    None,
                    Box::new(move || {
                        tx.send(ms).unwrap();
                        false
                    }),
                )
                .ok()
                .unwrap(),
        );
        due.insert(ms, (before + delay, Instant::now() + delay));
    }
    assert!(refs[1].cancel(), "200 ms cancelled while pending");
    assert!(!refs[1].cancel(), "twice");
    let got: Vec<u64> = (0..4)
        .map(|_| rx.recv_timeout(Duration::from_secs(30)).unwrap())
        .collect();
    let mut sorted = got.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, [50, 100, 150, 250], "the cancelled one never");
    // In deadline order: none after one whose deadline was surely later (50 ms apart, so in
    // the order of the delays unless this thread stalled that long between two adds).
    for (i, x) in got.iter().enumerate() {
        for y in &got[i + 1..] {
            assert!(due[y].1 >= due[x].0, "{y} came after {x}: {got:?}");
        }
    }
    assert!(!refs[0].is_pending());
    timers.stop();
    assert!(timers
        .add(Duration::ZERO, None, Box::new(|| false))
        .is_err());
}

#[test]
fn a_periodic_timer_fires_until_it_says_stop() {
    let timers = Timers::default();
    let (tx, rx) = mpsc::channel();
    let mut n = 0;
    let r = timers
        .add(
            Duration::ZERO,
            Some(Duration::from_millis(1)),
            Box::new(move || {
                n += 1;
                tx.send(n).unwrap();
                n < 5
            }),
        )
        .ok()
        .unwrap();
    let got: Vec<u32> = (0..5)
        .map(|_| rx.recv_timeout(Duration::from_secs(30)).unwrap())
        .collect();
    assert_eq!(got, [1, 2, 3, 4, 5]);
    assert!(
        matches!(
            rx.recv_timeout(Duration::from_secs(30)),
            Err(mpsc::RecvTimeoutError::Disconnected)
        ),
        "stopped: its closure (and sender) dropped"
    );
    assert!(!r.is_pending());
    timers.stop();
}
