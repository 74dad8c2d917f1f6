use super::*;
use std::sync::mpsc;

#[test]
fn timers_fire_in_deadline_order_and_cancelled_ones_never() {
    let timers = Timers::default();
    let (tx, rx) = mpsc::channel();
    let mut refs = Vec::new();
    for ms in [250u64, 200, 150, 100, 50] {
        let tx = tx.clone();
        refs.push(
            timers
                .add(
                    Duration::from_millis(ms),
                    None,
                    Box::new(move || {
                        tx.send(ms).unwrap();
                        false
                    }),
                )
                .ok()
                .unwrap(),
        );
    }
    assert!(refs[1].cancel(), "200 ms cancelled while pending");
    assert!(!refs[1].cancel(), "twice");
    let got: Vec<u64> = (0..4).map(|_| rx.recv().unwrap()).collect();
    assert_eq!(got, [50, 100, 150, 250]);
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
    let got: Vec<u32> = (0..5).map(|_| rx.recv().unwrap()).collect();
    assert_eq!(got, [1, 2, 3, 4, 5]);
    assert!(
        rx.recv().is_err(),
        "stopped: its closure (and sender) dropped"
    );
    assert!(!r.is_pending());
    timers.stop();
}
