//! The task deque under shuttle's PCT scheduler (`RUSTFLAGS="--cfg shuttle"`): one owner that
//! pushes and pops 24 tasks in bursts, with every publication rule (one public task, several,
//! all), against three thieves at once, from a ring that starts at 4 slots and grows. Loom
//! checks the THE protocol on two tasks and one thief (`deque_loom.rs`); this samples schedules of
//! the whole deque that loom cannot explore: growth under steals, several thieves meeting at
//! the lock, the split moving while they claim.
//!
//! Checked: every task is taken exactly once (by the owner or one thief), and each thief takes
//! tasks oldest first (FIFO).

use super::deque::Deque;
use super::{JobHeader, JobRef};
use shuttle::sync::atomic::{AtomicBool, Ordering};
use shuttle::thread;
use std::sync::{Arc, Mutex};

const TASKS: usize = 24;
const THIEVES: usize = 3;

unsafe fn nothing(_: *const JobHeader) {}

fn owner_and_thieves(want_public: usize) {
    let headers: Arc<Vec<JobHeader>> =
        Arc::new((0..TASKS).map(|_| JobHeader::new(nothing, 1)).collect());
    let index_of = {
        let base = headers.as_ptr() as usize;
        move |j: JobRef| (j.as_ptr() as usize - base) / std::mem::size_of::<JobHeader>()
    };
    let d = Arc::new(Deque::default());
    let done = Arc::new(AtomicBool::new(false));
    let taken = Arc::new(Mutex::new(vec![0u32; TASKS]));
    let thieves: Vec<_> = (0..THIEVES)
        .map(|t| {
            let (d, done, taken, headers) =
                (d.clone(), done.clone(), taken.clone(), headers.clone());
            thread::spawn(move || {
                let _keep = &headers;
                let mut last = None;
                loop {
                    let finished = done.load(Ordering::SeqCst);
                    match d.steal(1 + t, 0) {
                        Some(j) => {
                            let i = index_of(j);
                            assert!(
                                last.is_none_or(|l| l < i),
                                "thief {t} took task {i} after task {last:?}: not oldest first"
                            );
                            last = Some(i);
                            taken.lock().unwrap()[i] += 1;
                        }
                        None if finished => return,
                        None => thread::yield_now(),
                    }
                }
            })
        })
        .collect();
    // The owner: bursts of pushes (a fork's), each followed by a pop (a join taking back).
    let mut next = 0;
    while next < TASKS {
        for _ in 0..3.min(TASKS - next) {
            // SAFETY: never executed; `headers` outlives every ref (the thieves hold it too).
            d.push(unsafe { JobRef::new(&headers[next]) }, want_public);
            next += 1;
        }
        if let Some(j) = d.pop() {
            taken.lock().unwrap()[index_of(j)] += 1;
        }
    }
    while let Some(j) = d.pop() {
        taken.lock().unwrap()[index_of(j)] += 1;
    }
    done.store(true, Ordering::SeqCst);
    for t in thieves {
        t.join().unwrap();
    }
    let taken = taken.lock().unwrap();
    let wrong: Vec<_> = taken
        .iter()
        .enumerate()
        .filter(|(_, &n)| n != 1)
        .map(|(i, &n)| (i, n))
        .collect();
    assert!(
        wrong.is_empty(),
        "tasks not taken exactly once (task, times): {wrong:?}"
    );
}

/// One public task at a time (a join on 2 workers), a few (a join on 4), all (a scope's).
#[test]
fn shuttle_every_task_taken_once_by_owner_or_one_of_three_thieves() {
    for want_public in [1, 3, usize::MAX] {
        shuttle::check_pct(move || owner_and_thieves(want_public), 3000, 3);
    }
}
