//! Queue ownership under overlapping steals, model-checked: two thieves steal the same
//! queue in turn while a sender pushes a message to it and notifies its owner.
use super::prelude::*;
use crate::core::envelope::{EnvelopeVTable, Payload};
use crate::core::Shared;
use crate::executor::message_centric::Config;
use crate::runtime::loom::sync::atomic::fence;
use loom::thread;
use std::sync::Arc;

unsafe fn run(_: *const (), _: *mut Payload, _: WorkerRef<'_>) {
    unreachable!()
}
unsafe fn discard(_: *const (), _: *mut Payload) {}
static VT: EnvelopeVTable = EnvelopeVTable {
    run,
    discard,
    message: true,
};

/// What worker `w` would see in its locked search before sleeping (as `search`: a fence,
/// then each queue of its range under the queue's lock).
fn look(e: &Executor, w: usize) -> bool {
    fence(Ordering::SeqCst);
    e.range(w)
        .any(|s| e.slot(s).is_some_and(|q| q.lock().len() > 0))
}

#[test]
fn overlapping_steals_strand_no_message() {
    let mut model = loom::model::Builder::new();
    // Building an executor takes many atomic steps (worker table, queues): allow them.
    model.max_branches = 100_000;
    // Three threads of some 20 steps each: one preemption explores the interleavings
    // that matter here in a second (with the owner written after the swap, it fails at
    // once: "queue 0 in worker 2's range"); two take over ten minutes, too long for CI.
    model.preemption_bound = Some(1);
    model.check(|| {
        let cfg = Config {
            workers: 3,
            max_workers: 3,
            queues: 3,
            stealing: QueueStealing::Random,
            tuning: super::super::Tuning {
                spin: Duration::ZERO,
                adaptive_spin: false,
                ..Default::default()
            },
            compaction: crate::runtime::compaction::Mode::Off,
        };
        let e = Arc::new(Executor::new(&cfg, Arc::new(Shared::new(3, false))).unwrap());
        // Every worker has announced itself idle: its benaphore shows whether a
        // notification reached it.
        for w in 0..3 {
            e.pool.announce(w);
        }
        // Thief A (worker 1) steals queue 0 from worker 0; thief B (worker 2) steals
        // whatever is in A's slot. Each then searches its range, as before sleeping.
        let thief = |me: usize, victim: usize| {
            let e = e.clone();
            thread::spawn(move || {
                e.steal_slot(me, me, victim, victim);
                look(&e, me)
            })
        };
        let a = thief(1, 0);
        let b = thief(2, 1);
        // The sender: a message for queue 0, then the owner is notified.
        let q = &e.queues[0];
        q.lock()
            .push(Envelope::new(std::ptr::null(), &VT, Payload::pack(())));
        e.notify_owner(q, None);
        let saw = [false, a.join().unwrap(), b.join().unwrap()];
        // Owners agree with ranges once the steals are over...
        let mut holder = None;
        for w in 0..3 {
            for s in e.range(w) {
                let q = e.slot(s).unwrap();
                assert_eq!(q.owner(), w, "queue {} in worker {w}'s range", q.id);
                if q.id == 0 {
                    holder = Some(w);
                }
            }
        }
        // ...and the worker holding the message saw it or was woken for it.
        let h = holder.unwrap();
        assert!(
            saw[h] || e.pool.is_awake(h),
            "the message in queue 0 is stranded: worker {h} holds it, asleep"
        );
    });
}

/// A resize racing a send and an idle worker: worker 1 is removed (its queue moves to
/// worker 0) while a sender pushes a message to that queue and notifies the owner it reads,
/// and worker 0 searches its range (without the lock), as before sleeping. Worker 0 must see
/// the message or have been woken for it: with the owner written in the write section and
/// the check after it (`after_resize`), one of the two reaches it.
#[test]
fn a_resize_racing_a_send_strands_no_message() {
    let mut model = loom::model::Builder::new();
    model.max_branches = 100_000;
    model.preemption_bound = Some(1);
    model.check(|| {
        let cfg = Config {
            workers: 2,
            max_workers: 2,
            queues: 2,
            stealing: QueueStealing::None,
            tuning: super::super::Tuning {
                spin: Duration::ZERO,
                adaptive_spin: false,
                ..Default::default()
            },
            compaction: crate::runtime::compaction::Mode::Off,
        };
        let e = Arc::new(Executor::new(&cfg, Arc::new(Shared::new(2, false))).unwrap());
        // The pool needs a thread body to accept a resize; the model runs no worker loop.
        e.pool.spawn(|_| {}).unwrap();
        e.pool.announce(0);
        let resizer = {
            let e = e.clone();
            thread::spawn(move || {
                assert_eq!(e.pool.remove_and(&*e, 1, false), Ok(1));
            })
        };
        let worker = {
            let e = e.clone();
            thread::spawn(move || look(&e, 0))
        };
        let q = &e.queues[1];
        q.lock()
            .push(Envelope::new(std::ptr::null(), &VT, Payload::pack(())));
        e.notify_owner(q, None);
        resizer.join().unwrap();
        let saw = worker.join().unwrap();
        assert_eq!(q.owner(), 0, "queue 1 moved to worker 0");
        assert!(
            saw || e.pool.is_awake(0),
            "the message in queue 1 is stranded: worker 0 owns it, asleep"
        );
        drop(e.pool.take_threads());
    });
}
