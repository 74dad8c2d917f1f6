use super::*;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[test]
fn a_timed_wait_returns_empty_at_its_deadline_and_a_late_send_is_given_back() {
    let slot = Arc::new(Slot::<u32>::default());
    assert_eq!(
        slot.wait_until(Instant::now() + Duration::from_millis(1)),
        Taken::Empty
    );
    slot.drop_receiver();
    assert!(slot.receiver_gone());
    assert_eq!(slot.send(3), Err(3));
}

#[test]
fn a_value_sent_from_another_thread_is_received() {
    for _ in 0..1000 {
        let slot = Arc::new(Slot::<u64>::default());
        let s = slot.clone();
        let t = std::thread::spawn(move || s.send(42).unwrap());
        assert_eq!(slot.wait(), Taken::Value(42));
        t.join().unwrap();
    }
}
