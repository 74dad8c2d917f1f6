//! The lock, model-checked: a writer against two readers (a worker and an outside thread).
//! Mutual exclusion shows as a plain counter that every section reads and writes (loom
//! reports a data race on concurrent access of an `UnsafeCell`); a reader that waited for
//! another reader would show as a deadlock in the second model, where both readers hold
//! their sections at once.
use super::*;
use crate::runtime::loom::sync::Arc;
use loom::cell::UnsafeCell;
use loom::thread;

struct Shared {
    lock: ResizeLock,
    /// What the sections protect: the pool's size, say.
    size: UnsafeCell<usize>,
}
// SAFETY: `size` is only touched inside lock sections (what the model checks).
unsafe impl Sync for Shared {}

/// Spinning parties yield to the model at every turn: allow the branches.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut m = loom::model::Builder::new();
    m.max_branches = 100_000;
    m.check(f);
}

#[test]
fn writer_excludes_every_reader() {
    model(|| {
        let s = Arc::new(Shared {
            lock: ResizeLock::new(1),
            size: UnsafeCell::new(1),
        });
        let writer = {
            let s = s.clone();
            thread::spawn(move || {
                let _w = s.lock.write();
                // SAFETY: inside the write section (what the model checks: loom reports a
                // race if a reader's access overlaps).
                s.size.with_mut(|p| unsafe { *p += 1 });
            })
        };
        let outside = {
            let s = s.clone();
            thread::spawn(move || {
                let _r = s.lock.read_outside();
                // SAFETY: inside a read section (the model checks the exclusion).
                s.size.with(|p| unsafe { *p })
            })
        };
        let seen = {
            let _r = s.lock.read(0);
            // SAFETY: inside a read section (the model checks the exclusion).
            s.size.with(|p| unsafe { *p })
        };
        let other = outside.join().unwrap();
        writer.join().unwrap();
        assert!(seen == 1 || seen == 2);
        assert!(other == 1 || other == 2);
        // SAFETY: every other thread has been joined.
        assert_eq!(s.size.with(|p| unsafe { *p }), 2);
    });
}

#[test]
fn readers_never_wait_for_each_other() {
    model(|| {
        let lock = Arc::new(ResizeLock::new(2));
        let held = Arc::new(AtomicBool::new(false));
        // Worker 1 takes its section and waits inside it until worker 0 is inside its own:
        // if one reader waited for the other, this would deadlock.
        let other = {
            let (lock, held) = (lock.clone(), held.clone());
            thread::spawn(move || {
                let _r = lock.read(1);
                while !held.load(Ordering::Acquire) {
                    thread::yield_now();
                }
            })
        };
        {
            let _r = lock.read(0);
            held.store(true, Ordering::Release);
        }
        other.join().unwrap();
    });
}
