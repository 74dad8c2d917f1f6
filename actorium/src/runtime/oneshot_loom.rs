use super::*;
use crate::runtime::loom::sync::Arc;

/// A value sent while the receiver waits is received: no lost wake-up (a lost one shows as
/// loom's "deadlock"), no double access to a cell (loom's cell checks).
#[test]
fn loom_oneshot_send_reaches_a_waiting_receiver() {
    loom::model(|| {
        let slot = Arc::new(Slot::<u32>::default());
        let s = slot.clone();
        let t = loom::thread::spawn(move || s.send(7).unwrap());
        assert_eq!(slot.wait(), Taken::Value(7));
        t.join().unwrap();
    });
}

/// A receiver that replaces its waiter (a future polled with a new waker: the
/// compare-exchange that clears WAITING) while the value is sent neither misses the
/// wake-up nor writes the waiter while the sender reads it.
#[test]
fn loom_oneshot_reregistering_races_the_send() {
    loom::model(|| {
        let slot = Arc::new(Slot::<u32>::default());
        let s = slot.clone();
        let t = loom::thread::spawn(move || s.send(9).unwrap());
        let me = thread::current();
        if slot.register(|| Waiter::Thread(me.clone()), |_| false) {
            slot.register(|| Waiter::Thread(me.clone()), |_| false);
        }
        assert_eq!(slot.wait(), Taken::Value(9));
        t.join().unwrap();
    });
}

/// A sender that goes away without a value wakes the waiting receiver.
#[test]
fn loom_oneshot_close_wakes_the_receiver() {
    loom::model(|| {
        let slot = Arc::new(Slot::<u32>::default());
        let s = slot.clone();
        let t = loom::thread::spawn(move || s.close());
        assert_eq!(slot.wait(), Taken::Closed);
        t.join().unwrap();
    });
}

/// A receiver that goes away races the send: the value is dropped exactly once, by one of
/// them (the sender gets it back, or the receiver drops it).
#[test]
fn loom_oneshot_receiver_gone_races_the_send() {
    loom::model(|| {
        let slot = Arc::new(Slot::<std::sync::Arc<()>>::default());
        let token = std::sync::Arc::new(());
        let (s, v) = (slot.clone(), token.clone());
        let t = loom::thread::spawn(move || s.send(v).is_err());
        slot.drop_receiver();
        t.join().unwrap();
        drop(slot);
        assert_eq!(
            std::sync::Arc::strong_count(&token),
            1,
            "the value was dropped once"
        );
    });
}
