//! The join latch, model-checked: the joiner never misses completion and never sleeps
//! through it (a lost wake-up shows as loom's "deadlock"), and reads the result the setter
//! wrote.
use super::*;
use crate::runtime::loom::sync::atomic::AtomicUsize;
use crate::runtime::loom::sync::Arc;
use loom::thread;

#[test]
fn joiner_never_sleeps_through_completion() {
    loom::model(|| {
        let latch = Arc::new((SpinLatch::new(0), AtomicUsize::new(0)));
        let joiner = thread::current();
        let l = latch.clone();
        let setter = thread::spawn(move || {
            l.1.store(42, Ordering::Relaxed); // the job's result
                                              // SAFETY: the latch lives in the Arc; set once.
            unsafe { SpinLatch::set(&l.0, |_| joiner.unpark()) };
        });
        // The joiner: one probe (its helping step), then park until set.
        if !latch.0.probe() && latch.0.sleepy() {
            while !latch.0.probe() {
                thread::park();
            }
        }
        while !latch.0.probe() {
            thread::yield_now();
        }
        assert_eq!(latch.1.load(Ordering::Relaxed), 42);
        setter.join().unwrap();
    });
}
