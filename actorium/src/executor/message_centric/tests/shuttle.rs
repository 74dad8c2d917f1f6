//! The message-centric executor's queues under shuttle's PCT scheduler
//! (`RUSTFLAGS="--cfg shuttle"`): several thieves, a sender and a resizer at once, which loom
//! (`loom_ownership.rs`, `loom_work_queue.rs`, `loom_swap.rs`) can only check two or three steps
//! at a time.
//!
//! Three workers with two queues each run a reduced worker loop on the executor's own parts:
//! a pass over their range that gulps and drains (the visit, re-gulping until empty), a steal
//! when the pass found nothing (inside a read section of the resize lock, a wait-free swap
//! with the victim, as `Executor::steal`), and idle sleep (announce, the locked search, sleep
//! on the benaphore, retire). A sender pushes numbered messages to every queue, each followed
//! by the notification of the queue's owner as it reads it; a resizer removes the third worker
//! while all this runs (its queues move to the others), or compaction deactivates it (it parks),
//! activates it and deactivates it again.
//!
//! Checked: every message is run exactly once, in send order per queue (FIFO); no two workers
//! hold one queue's batch at once; a message is never stranded (a worker owning it asleep
//! with nobody to wake it: every worker would then sleep for ever, which shuttle reports as a
//! deadlock); at the end every queue's owner is the worker whose range holds it.

use super::super::swap::try_swap;
use super::super::work_queue::Gulp;
use super::super::{Config, Executor, QueueStealing};
use crate::core::copy_queue::CopyQueue;
use crate::core::envelope::{Envelope, EnvelopeVTable, Payload};
use crate::core::{Shared, WorkerRef};
use crate::runtime::compaction::Mode;
use crate::runtime::worker_table::{leave_if_removed, Leave, Parked};
use shuttle::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use shuttle::thread;
use std::sync::atomic as plain;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const WORKERS: usize = 3;
const QUEUES: usize = 6;
/// Messages per queue.
const PER_QUEUE: u64 = 3;
const TOTAL: u64 = QUEUES as u64 * PER_QUEUE;

unsafe fn run(_: *const (), _: *mut Payload, _: WorkerRef<'_>) {
    unreachable!("the model takes the messages out of the batch itself")
}
unsafe fn discard(_: *const (), p: *mut Payload) {
    // SAFETY: the model packs u64 payloads.
    unsafe { Payload::unpack::<u64>(p) };
}
static VT: EnvelopeVTable = EnvelopeVTable {
    run,
    discard,
    message: true,
};

/// What the workers record.
struct Seen {
    /// Per queue, the sequence numbers run, in order.
    log: Mutex<Vec<Vec<u64>>>,
    /// Per queue, whether a worker is between its gulp and `done_processing`.
    visiting: Vec<plain::AtomicBool>,
    ran: AtomicUsize,
    done: AtomicBool,
}

/// The visit: gulp, run the batch, re-gulp until the queue is empty, done.
fn visit(q: &super::super::work_queue::WorkQueue, batch: &mut CopyQueue, seen: &Seen) -> bool {
    if !matches!(q.gulp(batch), Gulp::Got(_)) {
        return false;
    }
    assert!(
        !seen.visiting[q.id].swap(true, Ordering::SeqCst),
        "two workers hold queue {}'s batch at once",
        q.id
    );
    loop {
        while let Some(env) = batch.pop() {
            // SAFETY: every envelope of the model packs a u64.
            let v = unsafe { env.into_message::<u64>() };
            let (id, seq) = ((v / 100) as usize, v % 100);
            assert_eq!(id, q.id, "a message for queue {id} ran from queue {}", q.id);
            seen.log.lock().unwrap()[id].push(seq);
            seen.ran.fetch_add(1, Ordering::SeqCst);
        }
        batch.reset_drained();
        if !matches!(q.regulp(batch), Gulp::Got(_)) {
            break;
        }
    }
    seen.visiting[q.id].store(false, Ordering::SeqCst);
    q.done_processing();
    true
}

/// One steal attempt of worker `me`, as `Executor::steal` makes it (victims and slots chosen
/// by `turn`, so the schedules differ only in timing).
fn steal(e: &Executor, me: usize, turn: usize) -> bool {
    let _section = e.pool.lock.read(me);
    let workers = e.pool.len();
    if workers < 2 || me >= workers {
        return false;
    }
    let victim = (me + 1 + turn % (workers - 1)) % workers;
    let vr = e.range(victim);
    let Some(candidate) = (0..vr.len())
        .map(|k| vr.start + (turn + k) % vr.len())
        .find(|&s| {
            e.slot(s)
                .is_some_and(|q| !q.looks_processed() && q.len_hint() > 0)
        })
    else {
        return false;
    };
    let own = e.range(me);
    let mine = own.start + turn % own.len();
    let stolen = e.steal_slot(me, mine, victim, candidate);
    if stolen.is_some_and(|n| n > 0) {
        STOLE_MAIL.fetch_add(1, Ordering::Relaxed);
    }
    stolen.is_some()
}

/// Parks of deactivated workers, over all the schedules explored.
static PARKED: plain::AtomicUsize = plain::AtomicUsize::new(0);

/// Steals that took a queue holding mail, over all the schedules explored (the scenario must
/// exercise them).
static STOLE_MAIL: plain::AtomicUsize = plain::AtomicUsize::new(0);

/// The idle worker's locked search (`Executor::search`).
fn search(e: &Executor, me: usize) -> bool {
    fence(Ordering::SeqCst);
    e.range(me)
        .any(|s| e.slot(s).is_some_and(|q| q.lock().len() > 0))
}

/// A worker's loop, reduced: pass, steal, idle sleep; leaves when removed or when every
/// message has run.
fn worker(e: &Executor, me: usize, seen: &Seen, steals: usize) {
    let mut batch = CopyQueue::new();
    let mut turn = 0;
    loop {
        if seen.done.load(Ordering::SeqCst) {
            return;
        }
        while !e.pool.is_active(me) {
            match leave_if_removed(e.pool.table(), me, || {}) {
                Leave::Exit => return,
                Leave::Stay => {}
                // Deactivated (compaction): park until active again, or the end.
                Leave::Park => loop {
                    PARKED.fetch_add(1, Ordering::Relaxed);
                    match e
                        .pool
                        .park(me, || seen.done.load(Ordering::SeqCst), || None, || false)
                    {
                        Parked::Active => break,
                        Parked::Exit => return,
                        Parked::TimedOut | Parked::Woken => {}
                    }
                },
            }
        }
        let mut worked = false;
        for s in e.range(me) {
            if let Some(q) = e.slot(s) {
                if !q.looks_empty() {
                    worked |= visit(q, &mut batch, seen);
                }
            }
        }
        if seen.ran.load(Ordering::SeqCst) as u64 == TOTAL {
            seen.done.store(true, Ordering::SeqCst);
            e.pool.wake_all();
            return;
        }
        if worked {
            continue;
        }
        turn += 1;
        if turn <= steals && steal(e, me, turn) {
            continue;
        }
        e.pool.announce(me);
        if search(e, me) || seen.done.load(Ordering::SeqCst) || !e.pool.is_active(me) {
            e.pool.retire(me);
            // Mail in the range that the pass could not gulp (another worker still holds the
            // queue's batch): spin, yielding, as the real loop does.
            thread::yield_now();
            continue;
        }
        e.pool.sleep(me, None);
        e.pool.retire(me);
    }
}

fn scenario(resize: fn(&Executor)) {
    let cfg = Config {
        workers: WORKERS,
        max_workers: WORKERS,
        queues: QUEUES,
        stealing: QueueStealing::Random,
        tuning: super::super::Tuning {
            spin: Duration::ZERO,
            adaptive_spin: false,
            ..Default::default()
        },
        compaction: Mode::Off,
    };
    let e = Arc::new(Executor::new(&cfg, Arc::new(Shared::new(WORKERS, false))).unwrap());
    // The pool needs a thread body to accept a resize; the model runs its own worker loops.
    e.pool.spawn(|_| {}).unwrap();
    let seen = Arc::new(Seen {
        log: Mutex::new(vec![Vec::new(); QUEUES]),
        visiting: (0..QUEUES).map(|_| plain::AtomicBool::new(false)).collect(),
        ran: AtomicUsize::new(0),
        done: AtomicBool::new(false),
    });
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let (e, seen) = (e.clone(), seen.clone());
            thread::spawn(move || worker(&e, w, &seen, 2))
        })
        .collect();
    let resizer = {
        let e = e.clone();
        thread::spawn(move || resize(&e))
    };
    // The sender: round-robin over the queues, each push followed by the notification of the
    // owner it reads (`Executor::push_shared`).
    for seq in 0..PER_QUEUE {
        for id in 0..QUEUES {
            let q = &e.queues[id];
            let v = (id as u64) * 100 + seq;
            q.lock()
                .push(Envelope::new(std::ptr::null(), &VT, Payload::pack(v)));
            e.notify_owner(q, None);
        }
    }
    resizer.join().unwrap();
    for w in workers {
        w.join().unwrap();
    }
    let log = seen.log.lock().unwrap();
    for (id, got) in log.iter().enumerate() {
        assert_eq!(
            got,
            &(0..PER_QUEUE).collect::<Vec<_>>(),
            "queue {id}: every message once, in send order"
        );
    }
    for w in 0..e.pool.len() {
        for s in e.range(w) {
            let q = e.slot(s).expect("no swap in progress");
            assert_eq!(q.owner(), w, "queue {} in worker {w}'s range", q.id);
        }
    }
    drop(e.pool.take_threads());
}

/// The resizer's removal of the third worker.
fn remove_one(e: &Executor) {
    assert_eq!(e.pool.remove_and(e, 1, false), Ok(WORKERS - 1));
}

/// Compaction's hand-overs instead: the third worker deactivated (it parks), activated again,
/// deactivated again (each a resize that moves its queues).
fn deactivate_activate(e: &Executor) {
    assert_eq!(e.pool.deactivate(e), Some(WORKERS - 1));
    assert_eq!(e.pool.activate(e, 1), Some(WORKERS));
    assert_eq!(e.pool.deactivate(e), Some(WORKERS - 1));
}

#[test]
fn shuttle_thieves_a_sender_and_a_resizer_strand_lose_and_reorder_nothing() {
    shuttle::check_pct(|| scenario(remove_one), 10_000, 3);
    let stole = STOLE_MAIL.load(Ordering::Relaxed);
    eprintln!("steals of queues holding mail in 10,000 schedules: {stole}");
    assert!(
        stole > 0,
        "no schedule stole a queue with mail: the scenario is too tame"
    );
}

/// The same with compaction deactivating and activating the third worker while it runs.
#[test]
fn shuttle_deactivations_and_activations_strand_lose_and_reorder_nothing() {
    shuttle::check_pct(|| scenario(deactivate_activate), 5_000, 3);
    let parked = PARKED.load(Ordering::Relaxed);
    eprintln!("parks of a deactivated worker in 5,000 schedules: {parked}");
    assert!(
        parked > 0,
        "no schedule parked a worker: the scenario is too tame"
    );
}

/// Queue swaps alone, more of them than loom can follow: four thieves each try three swaps
/// against their neighbours' slots; every queue stays in exactly one slot.
#[test]
fn shuttle_many_swaps_lose_and_duplicate_no_queue() {
    static QUEUES4: [u8; 4] = [0; 4];
    shuttle::check_pct(
        || {
            let slots: Arc<Vec<shuttle::sync::atomic::AtomicPtr<u8>>> = Arc::new(
                (0..4)
                    .map(|i| {
                        shuttle::sync::atomic::AtomicPtr::new(&QUEUES4[i] as *const u8 as *mut u8)
                    })
                    .collect(),
            );
            let thieves: Vec<_> = (0..4)
                .map(|t| {
                    let slots = slots.clone();
                    thread::spawn(move || {
                        for k in 1..=3 {
                            let _ = try_swap(&slots, t, (t + k) % 4, &());
                        }
                    })
                })
                .collect();
            for t in thieves {
                t.join().unwrap();
            }
            let mut seen: Vec<usize> = slots
                .iter()
                .map(|s| {
                    let p = s.load(Ordering::SeqCst);
                    assert!(!p.is_null(), "a slot was left null");
                    p as usize - QUEUES4.as_ptr() as usize
                })
                .collect();
            seen.sort_unstable();
            assert_eq!(seen, vec![0, 1, 2, 3], "a queue was lost or duplicated");
        },
        1000,
        3,
    );
}
