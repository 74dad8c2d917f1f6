//! The permits' hand-over under loom: a waiter queuing itself while the holder releases the
//! only permit, a barging try in the same race, a waiter giving up while it is served, the
//! actor's end while a waiter queues, and two releases at once with two waiters. Checked: the
//! waiter is always served (no lost wake-up), a try never passes a queued waiter, no permit is
//! lost, the count ends right, an end tells a waiter exactly once, and waiters are told in the
//! order they were granted.

use super::*;
use loom::sync::atomic::AtomicBool;

/// A waiter told through a flag.
fn flagged(p: &Permits) -> (Arc<Waiter>, Arc<AtomicBool>) {
    let told = Arc::new(AtomicBool::new(false));
    let t = told.clone();
    let w = p.wait(Wake::Call(Box::new(move |g| {
        assert!(g, "never closed here");
        t.store(true, Ordering::SeqCst)
    })));
    (w, told)
}

#[test]
fn loom_a_release_racing_a_new_waiter_always_serves_it() {
    loom::model(|| {
        let p = Arc::new(Permits::new(1));
        assert!(p.try_acquire());
        let q = p.clone();
        let holder = loom::thread::spawn(move || q.release());
        let (w, told) = flagged(&p);
        while !told.load(Ordering::SeqCst) {
            loom::thread::yield_now();
        }
        assert!(w.granted());
        w.used();
        holder.join().unwrap();
        assert_eq!(p.used(), 1);
    });
}

#[test]
fn loom_a_try_does_not_pass_a_queued_waiter() {
    loom::model(|| {
        let p = Arc::new(Permits::new(1));
        assert!(p.try_acquire());
        let (w, told) = flagged(&p);
        let q = p.clone();
        let releaser = loom::thread::spawn(move || q.release());
        let q = p.clone();
        let trier = loom::thread::spawn(move || q.try_acquire());
        releaser.join().unwrap();
        assert!(!trier.join().unwrap(), "the waiter was queued first");
        assert!(w.granted() && told.load(Ordering::SeqCst));
        assert_eq!(p.used(), 1);
    });
}

#[test]
fn loom_a_cancel_racing_a_release_loses_no_permit() {
    loom::model(|| {
        let p = Arc::new(Permits::new(1));
        assert!(p.try_acquire());
        let w = p.wait(Wake::Told);
        let q = p.clone();
        let releaser = loom::thread::spawn(move || q.release());
        // A timed-out waiter gives up; if it was served meanwhile, it owns the permit.
        if p.cancel(&w) {
            p.release();
        }
        releaser.join().unwrap();
        assert_eq!(p.used(), 0, "every permit back");
        assert!(p.try_acquire(), "and free for the next");
    });
}

#[test]
fn loom_an_end_racing_a_new_waiter_tells_it_exactly_once() {
    // The actor's end closes the permits while a sender queues a waiter; the sender then
    // checks the actor (here: always ended) and closes its own waiter if still waiting.
    loom::model(|| {
        let p = Arc::new(Permits::new(1));
        assert!(p.try_acquire());
        let told = Arc::new(loom::sync::atomic::AtomicUsize::new(0));
        let q = p.clone();
        let ender = loom::thread::spawn(move || q.close());
        let t = told.clone();
        let w = p.wait(Wake::Call(Box::new(move |granted| {
            assert!(!granted, "no permit was free");
            t.fetch_add(1, Ordering::SeqCst);
        })));
        ender.join().unwrap();
        p.close_one(&w);
        assert!(w.closed());
        assert_eq!(told.load(Ordering::SeqCst), 1, "told exactly once");
    });
}

#[test]
fn loom_two_releases_at_once_tell_two_waiters_in_order() {
    loom::model(|| {
        let p = Arc::new(Permits::new(2));
        assert!(p.try_acquire() && p.try_acquire());
        // Two waiters queued in order; each notes its turn when told.
        let order = Arc::new(loom::sync::Mutex::new(Vec::new()));
        let waiter = |n: u8| {
            let order = order.clone();
            p.wait(Wake::Call(Box::new(move |g| {
                assert!(g, "never closed here");
                order.lock().unwrap().push(n);
            })))
        };
        let (w1, w2) = (waiter(1), waiter(2));
        let q = p.clone();
        let other = loom::thread::spawn(move || q.release());
        p.release();
        other.join().unwrap();
        // Both served (no permit left behind by a release that found the other serving), the
        // first granted told first.
        assert!(w1.granted() && w2.granted());
        assert_eq!(*order.lock().unwrap(), vec![1, 2]);
        w1.used();
        w2.used();
        assert_eq!(p.used(), 2);
    });
}
