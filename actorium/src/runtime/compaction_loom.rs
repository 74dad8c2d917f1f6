//! The park of a dormant worker (`park`) against what ends it, model-checked: an activation
//! (the state stored under the resize lock's write side, a fence, a wake-up: what
//! `Pool::activate` and `Pool::add` do), a removal (the same with `LEAVING`: the worker marks its
//! row exited inside its read section), and a stop (a flag, then a wake-up: what a shutdown's
//! `wake_all` does), and a wake-up that changes no state (a flag, then a wake-up: what
//! `Compaction::want` and a quiet spell's end do) landing while the worker runs between two
//! parks. A lost wake-up shows as loom's "deadlock: all threads blocked"; an unpaired wake-up
//! as a token left in the parker.
use super::*;
use crate::runtime::loom::sync::atomic::fence;
use crate::runtime::loom::sync::Arc;
use loom::thread;

struct Row {
    sleep: Benaphore,
    state: AtomicU8,
    lock: ResizeLock,
    stop: AtomicBool,
    /// A waker's flag that changes no state (`Compaction::poked`).
    poke: AtomicBool,
}

impl Row {
    fn dormant() -> Arc<Self> {
        Arc::new(Self {
            sleep: Benaphore::new().unwrap(),
            state: AtomicU8::new(DORMANT),
            lock: ResizeLock::new(1),
            stop: AtomicBool::new(false),
            poke: AtomicBool::new(false),
        })
    }

    /// A dormant row, and its worker parking on another thread.
    fn parked() -> (Arc<Self>, thread::JoinHandle<Parked>) {
        let row = Self::dormant();
        let worker = {
            let row = row.clone();
            thread::spawn(move || row.park())
        };
        (row, worker)
    }

    /// The worker's side: parks until told (no time limit; a notification that leaves the
    /// row dormant only loops).
    fn park(&self) -> Parked {
        loop {
            match park(
                &self.sleep,
                &self.state,
                &self.lock,
                0,
                || self.stop.load(Ordering::SeqCst),
                || None,
                || self.poke.swap(false, Ordering::SeqCst),
            ) {
                Parked::Woken => continue,
                p => return p,
            }
        }
    }

    /// The resizer's side: `to` under the write lock, then the fence and the wake-up (an
    /// exchange: `WorkerTable::wake_row`; a wake-up skipped when a relaxed read of the
    /// benaphore says "awake", as `IdleSleep::notify` does for running workers, deadlocks
    /// this model).
    fn set(&self, to: u8) {
        {
            let _w = self.lock.write();
            self.state.store(to, Ordering::Release);
        }
        fence(Ordering::SeqCst);
        self.sleep.wake();
    }
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut m = loom::model::Builder::new();
    m.max_branches = 100_000;
    m.check(f);
}

#[test]
fn an_activation_always_reaches_the_parked_worker() {
    model(|| {
        let (row, worker) = Row::parked();
        row.set(ACTIVE);
        assert_eq!(worker.join().unwrap(), Parked::Active);
        assert!(!row.sleep.token_pending());
    });
}

#[test]
fn a_removal_ends_the_parked_worker_and_its_row_exits() {
    model(|| {
        let (row, worker) = Row::parked();
        row.set(LEAVING);
        assert_eq!(worker.join().unwrap(), Parked::Exit);
        assert_eq!(row.state.load(Ordering::SeqCst), EXITED);
        assert!(!row.sleep.token_pending());
    });
}

#[test]
fn a_stop_ends_the_parked_worker() {
    model(|| {
        let (row, worker) = Row::parked();
        row.stop.store(true, Ordering::SeqCst);
        row.sleep.wake();
        assert_eq!(worker.join().unwrap(), Parked::Exit);
        assert_eq!(row.state.load(Ordering::SeqCst), DORMANT);
    });
}

/// A removal racing an activation (both are resizes: under the resize mutex one after the
/// other, in either order): the worker ends in the state of the later one.
#[test]
fn an_activation_then_a_removal_leave_the_worker_where_the_last_says() {
    model(|| {
        let (row, worker) = Row::parked();
        row.set(ACTIVE);
        row.set(LEAVING);
        match worker.join().unwrap() {
            // It saw the removal (before or after the activation): its row exited.
            Parked::Exit => assert_eq!(row.state.load(Ordering::SeqCst), EXITED),
            // It saw the activation and went back to its loop, which sees the removal at its
            // top (the removal's own path).
            Parked::Active => assert_eq!(row.state.load(Ordering::SeqCst), LEAVING),
            p => panic!("{p:?}"),
        }
    });
}

/// A wake-up that changes no state, given while the worker runs between two parks (it has
/// just been woken, and parks again): its park announces it searches, which erases the
/// wake-up, and must see the flag stored before it instead of sleeping for good.
#[test]
fn a_wake_up_that_changes_no_state_reaches_a_worker_between_two_parks() {
    model(|| {
        let row = Row::dormant();
        let worker = {
            let row = row.clone();
            thread::spawn(move || {
                park(
                    &row.sleep,
                    &row.state,
                    &row.lock,
                    0,
                    || row.stop.load(Ordering::SeqCst),
                    || None,
                    || row.poke.swap(false, Ordering::SeqCst),
                )
            })
        };
        row.poke.store(true, Ordering::SeqCst);
        row.sleep.wake();
        assert_eq!(worker.join().unwrap(), Parked::Woken);
        assert!(!row.sleep.token_pending(), "no wake-up left unpaired");
    });
}
