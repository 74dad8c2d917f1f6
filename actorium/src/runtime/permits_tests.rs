use super::*;
use std::sync::Mutex as StdMutex;

/// A callback waiter that records what it was told.
fn recorder(log: &Arc<StdMutex<Vec<(u32, bool)>>>, id: u32) -> Wake {
    let log = log.clone();
    Wake::Call(Box::new(move |granted| {
        log.lock().unwrap().push((id, granted))
    }))
}

#[test]
fn try_acquire_stops_at_the_capacity_and_force_passes_it() {
    let p = Permits::new(2);
    assert!(p.try_acquire());
    assert!(p.try_acquire());
    assert!(!p.try_acquire());
    p.force();
    assert_eq!(p.used(), 3);
    p.release();
    assert!(
        !p.try_acquire(),
        "still at the capacity after one release of three"
    );
    p.release();
    assert!(p.try_acquire());
}

#[test]
fn released_permits_go_to_waiters_in_order_and_not_to_barging_tries() {
    let p = Permits::new(1);
    assert!(p.try_acquire());
    let log = Arc::new(StdMutex::new(Vec::new()));
    let a = p.wait(recorder(&log, 1));
    let b = p.wait(recorder(&log, 2));
    assert!(!a.granted() && !b.granted());
    p.release();
    assert!(a.granted() && !b.granted());
    assert!(!p.try_acquire(), "b waits: a try does not pass it");
    a.used();
    p.release();
    assert!(b.granted());
    assert_eq!(*log.lock().unwrap(), [(1, true), (2, true)]);
    assert_eq!(p.used(), 1);
}

#[test]
fn a_waiter_is_served_at_once_when_a_permit_is_free() {
    let p = Permits::new(1);
    let log = Arc::new(StdMutex::new(Vec::new()));
    let a = p.wait(recorder(&log, 1));
    assert!(a.granted());
    assert_eq!(*log.lock().unwrap(), [(1, true)]);
}

#[test]
fn cancelling_a_granted_waiter_gives_its_permit_to_the_next() {
    let p = Permits::new(1);
    assert!(p.try_acquire());
    let log = Arc::new(StdMutex::new(Vec::new()));
    let a = p.wait(recorder(&log, 1));
    let b = p.wait(recorder(&log, 2));
    p.release();
    assert!(a.granted());
    assert!(p.cancel(&a), "a owned its permit");
    p.release();
    assert!(b.granted());
    assert!(p.cancel(&b));
    p.release();
    assert_eq!(p.used(), 0);
    assert!(p.try_acquire());
}

#[test]
fn cancelling_a_queued_waiter_removes_it() {
    let p = Permits::new(1);
    assert!(p.try_acquire());
    let log = Arc::new(StdMutex::new(Vec::new()));
    let a = p.wait(recorder(&log, 1));
    assert!(!p.cancel(&a));
    p.release();
    assert!(!a.granted());
    assert!(p.try_acquire(), "nobody waits any more");
    assert!(log.lock().unwrap().is_empty());
}

#[test]
fn close_tells_every_waiter_without_a_permit() {
    let p = Permits::new(1);
    assert!(p.try_acquire());
    let log = Arc::new(StdMutex::new(Vec::new()));
    let a = p.wait(recorder(&log, 1));
    let b = p.wait(recorder(&log, 2));
    p.close();
    assert!(a.closed() && b.closed());
    assert_eq!(*log.lock().unwrap(), [(1, false), (2, false)]);
    p.release();
    assert_eq!(p.used(), 0);
}

#[test]
fn a_parked_thread_is_woken_by_a_release_on_another() {
    let p = Arc::new(Permits::new(1));
    assert!(p.try_acquire());
    for _ in 0..200 {
        let w = p.wait(Wake::Thread(std::thread::current()));
        let q = p.clone();
        let t = std::thread::spawn(move || q.release());
        while !w.granted() {
            std::thread::park();
        }
        w.used();
        t.join().unwrap();
    }
    assert_eq!(p.used(), 1);
}

#[test]
fn callbacks_that_give_their_permit_back_are_served_without_nesting() {
    // As `when_room` waiters whose actors have ended: each drops its place at once.
    let p = Arc::new(Permits::new(1));
    assert!(p.try_acquire());
    let told = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let deepest = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for _ in 0..10_000 {
        let (p2, told, deepest) = (p.clone(), told.clone(), deepest.clone());
        p.wait(Wake::Call(Box::new(move |granted| {
            assert!(granted);
            told.fetch_add(1, Ordering::Relaxed);
            let depth = SERVING.with(|s| s.borrow().len());
            deepest.fetch_max(depth, Ordering::Relaxed);
            p2.release();
        })));
    }
    p.release();
    assert_eq!(told.load(Ordering::Relaxed), 10_000);
    assert_eq!(
        deepest.load(Ordering::Relaxed),
        1,
        "one serving loop, never nested"
    );
    assert_eq!(p.used(), 0);
}
