//! The handshake, model-checked. A lost wake-up shows as loom's "deadlock: all threads
//! blocked" (the worker parked forever); a stranded message as a failed assertion.
use super::*;
use crate::runtime::loom::sync::atomic::AtomicBool;
use crate::runtime::loom::sync::{Arc, Mutex};
use loom::thread;

/// A pool's worth of idle state for the models: the list and one benaphore per worker.
struct Idle {
    list: IdleSleep,
    b: Vec<Benaphore>,
}

impl Idle {
    fn new(n: usize) -> Self {
        Self {
            list: IdleSleep::new(n),
            b: (0..n).map(|_| Benaphore::new().unwrap()).collect(),
        }
    }
    fn announce(&self, i: usize) {
        self.list.announce(i, &self.b[i]);
    }
    fn retire(&self, i: usize) {
        self.list.retire(i, &self.b[i]);
    }
    fn sleep(&self, i: usize) {
        self.b[i].sleep();
    }
    fn notify(&self, i: usize) -> bool {
        IdleSleep::notify(&self.b[i])
    }
    fn notify_any(&self) -> bool {
        self.list.notify_any(|i| &self.b[i])
    }
    fn wake_all(&self) {
        for b in &self.b {
            b.wake();
        }
    }
}

/// A queue with one lock, as the executor's work queues have.
struct Queue(Mutex<usize>);

impl Queue {
    /// The idle worker's exhaustive search: takes the lock, so it is ordered after announce.
    fn take(&self) -> usize {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// The executor's worker loop, reduced: search, announce, search again, sleep.
fn worker(idle: &Idle, i: usize, q: &Queue, want: usize, stop: &AtomicBool) -> usize {
    let mut got = 0;
    loop {
        got += q.take();
        if got == want || stop.load(Ordering::SeqCst) {
            return got;
        }
        idle.announce(i);
        let found = q.take();
        if found > 0 {
            got += found;
            idle.retire(i);
            continue;
        }
        if stop.load(Ordering::SeqCst) {
            idle.retire(i);
            return got;
        }
        idle.sleep(i);
        idle.retire(i);
    }
}

#[test]
fn targeted_notify_never_loses_a_wakeup() {
    loom::model(|| {
        let idle = Arc::new(Idle::new(1));
        let q = Arc::new(Queue(Mutex::new(0)));
        let stop = Arc::new(AtomicBool::new(false));
        let sender = {
            let (idle, q) = (idle.clone(), q.clone());
            thread::spawn(move || {
                for _ in 0..2 {
                    *q.0.lock().unwrap() += 1; // publish under the queue lock...
                    idle.notify(0); // ...then notify the owner
                }
            })
        };
        let got = worker(&idle, 0, &q, 2, &stop);
        sender.join().unwrap();
        assert_eq!(got, 2, "a message was stranded");
    });
}

/// The actor-centric policies' variant: the job is published in a lock-free queue (here
/// a relaxed counter) and the handshake is ordered by SeqCst fences on both sides instead
/// of a lock (`Scheduler::notify` and `WorkerCtx::idle_sleep` in `executor/actor_centric`).
#[test]
fn fenced_notify_never_loses_a_wakeup() {
    use crate::runtime::loom::sync::atomic::fence;
    loom::model(|| {
        let idle = Arc::new(Idle::new(1));
        let jobs = Arc::new(AtomicUsize::new(0));
        let sender = {
            let (idle, jobs) = (idle.clone(), jobs.clone());
            thread::spawn(move || {
                for _ in 0..2 {
                    jobs.fetch_add(1, Ordering::Relaxed); // publish (lock-free)...
                    fence(Ordering::SeqCst); // ...`Scheduler::notify`'s fence...
                    idle.notify(0); // ...then notify
                }
            })
        };
        let mut got = 0;
        while got < 2 {
            got += jobs.swap(0, Ordering::Relaxed);
            if got == 2 {
                break;
            }
            idle.announce(0);
            fence(Ordering::SeqCst); // `WorkerCtx::idle_sleep`'s fence
            let found = jobs.swap(0, Ordering::Relaxed);
            if found > 0 {
                got += found;
                idle.retire(0);
                continue;
            }
            idle.sleep(0);
            idle.retire(0);
        }
        sender.join().unwrap();
        assert_eq!(got, 2);
    });
}

/// Two idle workers serving one queue; the sender uses only the general notification.
/// Whoever takes the message tells the other to stop (with `wake_all`, the shutdown path).
fn shared_worker(idle: &Idle, i: usize, q: &Queue, done: &AtomicUsize) -> usize {
    let mut got = 0;
    let took = |n: usize, got: &mut usize| {
        if n > 0 {
            *got += n;
            done.fetch_add(n, Ordering::SeqCst);
            idle.wake_all();
        }
    };
    loop {
        took(q.take(), &mut got);
        if done.load(Ordering::SeqCst) > 0 {
            return got;
        }
        idle.announce(i);
        took(q.take(), &mut got);
        if done.load(Ordering::SeqCst) > 0 {
            idle.retire(i);
            return got;
        }
        idle.sleep(i);
        idle.retire(i);
    }
}

/// A bounded sleep (the message-centric executor's rescue watch) racing a notifier.
/// Under loom a bounded sleep times out at once whenever no token is there, so every
/// interleaving of the worker taking itself back (SLEEP -> AWAKE) with the notifier's swap
/// is explored. A token owed by a notifier that won the race must be taken by the worker
/// (left over, it would make a later sleep return at once: checked at the end), and one
/// never sent must not be waited for (loom reports the deadlock).
#[test]
fn a_timed_sleep_racing_a_notify_keeps_parks_and_unparks_paired() {
    loom::model(|| {
        let idle = Arc::new(Idle::new(1));
        let q = Arc::new(Queue(Mutex::new(0)));
        let sender = {
            let (idle, q) = (idle.clone(), q.clone());
            thread::spawn(move || {
                for _ in 0..2 {
                    *q.0.lock().unwrap() += 1;
                    idle.notify(0);
                }
            })
        };
        let mut got = 0;
        let mut sleeps = 0;
        while got < 2 {
            got += q.take();
            if got == 2 {
                break;
            }
            idle.announce(0);
            let found = q.take();
            if found > 0 {
                got += found;
                idle.retire(0);
                continue;
            }
            // The first sleep is bounded, the next ones are not.
            if sleeps == 0 {
                idle.b[0].sleep_timeout(std::time::Duration::from_millis(1));
            } else {
                idle.sleep(0);
            }
            sleeps += 1;
            idle.retire(0);
        }
        sender.join().unwrap();
        assert_eq!(got, 2, "a message was stranded");
        assert!(!idle.b[0].token_pending(), "an unpark was left over");
    });
}

#[test]
fn general_notify_wakes_someone() {
    loom::model(|| {
        let idle = Arc::new(Idle::new(2));
        let q = Arc::new(Queue(Mutex::new(0)));
        let done = Arc::new(AtomicUsize::new(0));
        let other = {
            let (idle, q, done) = (idle.clone(), q.clone(), done.clone());
            thread::spawn(move || shared_worker(&idle, 1, &q, &done))
        };
        let sender = {
            let (idle, q) = (idle.clone(), q.clone());
            thread::spawn(move || {
                *q.0.lock().unwrap() += 1;
                idle.notify_any();
            })
        };
        let mine = shared_worker(&idle, 0, &q, &done);
        sender.join().unwrap();
        let theirs = other.join().unwrap();
        assert_eq!(mine + theirs, 1, "the message was lost or duplicated");
    });
}
