//! Idle sleep (the Cforall runtime: Thierry Delisle, PhD thesis, Waterloo 2022, chapter
//! "Scheduling in practice", sections "Idle-Sleep" to "Reducing Latency"): a worker with no work
//! blocks in the kernel instead of spinning, and a sender that makes work for it wakes it,
//! without ever leaving a message stranded. See `README.md` in this folder for the protocol and
//! the proof sketch.
//!
//! Pieces, as in Delisle's Figure "Low-latency Idle Sleep Data Structure":
//! - [`parker::Parker`]: one Linux event fd per worker (a mutex + condvar elsewhere and under loom);
//! - [`benaphore::Benaphore`]: the three-state flag (SEARCH / SLEEP / AWAKE) in front of it, so
//!   an early notify costs no system call;
//! - [`IdleSleep`]: the list of idle workers under one lock, plus an atomic "first idle" index
//!   that general notifiers exchange with "none", so a notifier never takes the lock.

pub(crate) mod benaphore;
mod parker;
mod spin;

use crate::runtime::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::runtime::loom::sync::Mutex;
pub(crate) use benaphore::Benaphore;
use crossbeam_utils::CachePadded;
pub(crate) use spin::SpinBudget;

/// `first_idle` value meaning "no idle worker published".
const NONE: usize = usize::MAX;

/// The sleepers list of one worker pool. Each worker's [`Benaphore`] lives in its slot of the
/// worker table (`runtime::pool`); the operations below take the benaphores they touch.
#[derive(Debug)]
pub(crate) struct IdleSleep {
    /// Idle workers, most recent on top. Only workers entering or leaving idle sleep take it.
    /// A list rather than a stack in Delisle's sense: a worker leaves it from any position.
    /// (On a line of its own: its lock word is written at every sleep and wake, and the
    /// structures around the pool are read on every send.)
    sleepers: CachePadded<Mutex<Vec<usize>>>,
    /// Delisle's atomic pointer to the first idle worker's benaphore (an index here).
    first_idle: CachePadded<AtomicUsize>,
}

impl IdleSleep {
    pub(crate) fn new(workers: usize) -> Self {
        Self {
            sleepers: CachePadded::new(Mutex::new(Vec::with_capacity(workers))),
            first_idle: CachePadded::new(AtomicUsize::new(NONE)),
        }
    }

    /// Idle side, step one: publish worker `i` (whose benaphore is `b`) as idle (benaphore to
    /// SEARCH, push on the list, publish as first idle). The caller must then search
    /// exhaustively, with loads that are ordered after this (it takes each queue's lock, or
    /// issues a SeqCst fence), and call [`Self::retire`] if it finds work or
    /// [`Benaphore::sleep`] if not (then [`Self::retire`]).
    pub(crate) fn announce(&self, i: usize, b: &Benaphore) {
        b.search();
        let mut list = self.sleepers.lock().unwrap();
        list.push(i);
        self.first_idle.store(i, Ordering::SeqCst);
    }

    /// Idle side, last step: worker `i` leaves the list and runs again.
    pub(crate) fn retire(&self, i: usize, b: &Benaphore) {
        let mut list = self.sleepers.lock().unwrap();
        if let Some(pos) = list.iter().rposition(|&w| w == i) {
            list.remove(pos);
        }
        // As Delisle's thesis says, the worker leaving the list updates the atomic pointer.
        self.first_idle
            .store(list.last().copied().unwrap_or(NONE), Ordering::SeqCst);
        drop(list);
        b.awake();
    }

    /// Targeted notification of the worker whose benaphore is `b` (it owns the queue that just
    /// got a message). Costs one relaxed load when the worker is running. Call it after the
    /// work is published under the queue's lock (or after a SeqCst fence). Returns whether a
    /// system call was made.
    #[inline]
    pub(crate) fn notify(b: &Benaphore) -> bool {
        !b.is_awake() && b.wake()
    }

    /// General notification (Delisle's thesis): wake the first idle worker, whichever it is; `of`
    /// finds a worker's benaphore. Notifiers never take the sleepers lock; of concurrent notifiers
    /// only the one that wins the exchange makes a system call. Returns whether a worker was handed
    /// the notification.
    pub(crate) fn notify_any<'a>(&self, of: impl FnOnce(usize) -> &'a Benaphore) -> bool {
        if self.first_idle.load(Ordering::SeqCst) == NONE {
            return false;
        }
        match self.first_idle.swap(NONE, Ordering::SeqCst) {
            NONE => false,
            i => {
                of(i).wake();
                true
            }
        }
    }

    /// Whether a worker is published as the first idle one (a hint: one load).
    #[inline]
    pub(crate) fn has_idle(&self) -> bool {
        self.first_idle.load(Ordering::Relaxed) != NONE
    }

    /// [`Self::has_idle`] as a SeqCst load: ordered after the caller's SeqCst store that
    /// published work, as an idle worker's search is ordered after its announcement.
    #[inline]
    pub(crate) fn has_idle_seqcst(&self) -> bool {
        self.first_idle.load(Ordering::SeqCst) != NONE
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
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
}
