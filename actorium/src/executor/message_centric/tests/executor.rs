use super::prelude::*;
use crate::core::envelope::{EnvelopeVTable, Payload};
use crate::core::Shared;
use crate::executor::message_centric::Config;
use std::sync::Arc;

#[test]
fn a_run_counts_one_send_per_visit_to_one_actor() {
    // Sends to actor 64 from the given queues, one visit each, from a fresh entry: the
    // send at which the actor follows, if any.
    let run_of = |froms: &[u32]| {
        let mut entry = RunEntry::default();
        for (k, &from) in froms.iter().enumerate() {
            let (next, follows) = extend_run(entry, 64, from, 2 * k as u32 + 1, t().follow_after);
            if follows {
                return Some(k + 1);
            }
            entry = next;
        }
        None
    };
    let n = t().follow_after as usize;
    // A flood: many sends in one visit count once.
    let mut entry = RunEntry::default();
    for _ in 0..100 {
        let (next, follows) = extend_run(entry, 64, 3, 7, t().follow_after);
        assert!(!follows);
        entry = next;
    }
    assert_eq!(entry.run, 1);
    // A conversation with one partner: the `follow_after`-th send.
    assert_eq!(run_of(&vec![3; 2 * n]), Some(n));
    // Two partners in turn: the same.
    let turns: Vec<u32> = (0..2 * n as u32).map(|k| k % 2).collect();
    assert_eq!(run_of(&turns), Some(n));
    // A queue that completes another's run with its first counted send is not followed;
    // the partner's next send is.
    let mut late = vec![3; n - 1];
    late.extend([0, 3]);
    assert_eq!(run_of(&late), Some(n + 1));
    // Another receiver starts a new run.
    let (next, follows) = extend_run(entry, 128, 3, 100, t().follow_after);
    assert!(!follows);
    assert_eq!((next.to, next.run), (128, 1));
}

/// An executor of `workers` workers with `queues` queues in all, longest-victim stealing
/// (placement on), not started.
fn test_executor(workers: usize, queues: usize) -> Executor {
    let cfg = Config {
        workers,
        max_workers: workers,
        queues,
        stealing: QueueStealing::LongestVictim,
        tuning: Tuning {
            spin: Duration::ZERO,
            adaptive_spin: false,
            ..Tuning::default()
        },
        compaction: crate::runtime::compaction::Mode::Off,
    };
    Executor::new(&cfg, Arc::new(Shared::new(workers, false))).unwrap()
}

#[test]
fn receivers_that_share_a_set_of_the_run_table_both_complete_their_runs() {
    let e = test_executor(1, 2);
    let l = e.local(0);
    // FOLLOW_WAYS receivers in one set (each at a 64-byte-aligned address, as cells are),
    // each sent one message per visit from queue 0, in turns: every run reaches
    // `follow_after`. (A direct-mapped table would restart them all at each turn.)
    let first = 0x10_0000usize;
    let mut to = vec![first];
    let mut a = first;
    while to.len() < FOLLOW_WAYS {
        a += 64;
        if follow_set(a) == follow_set(first) {
            to.push(a);
        }
    }
    // And two receivers 256 x 64 bytes apart, which would share a direct-mapped entry.
    let l2 = e.local(0);
    let pair = [first, first + FOLLOW_SLOTS * 64];
    for (l, to) in [(&l, &to[..]), (&l2, &pair[..])] {
        let after = t().follow_after;
        for visit in 1..=after as u64 {
            l.visits.set(2 * visit + 1);
            for &t in to {
                let follows = l.follow_run(t, 0, after);
                assert_eq!(
                    follows,
                    visit as u32 == after,
                    "receiver {t:#x} at visit {visit}"
                );
            }
        }
    }
}

#[test]
fn a_split_needs_long_behaviours_by_the_worker_s_own_clock() {
    let t0 = Instant::now();
    let after = |d: Duration| t0 + d;
    let s = t().stuck_after;
    // No request taken before: never (the request is recorded, see split_current).
    assert!(!behaviours_long(
        None,
        7,
        after(s * 10),
        false,
        t().stuck_after
    ));
    assert!(!behaviours_long(
        None,
        7,
        after(s * 10),
        true,
        t().stuck_after
    ));
    // The same behaviour at two requests: long once `stuck_after` passed.
    assert!(!behaviours_long(
        Some((7, t0)),
        7,
        after(s / 2),
        false,
        t().stuck_after
    ));
    assert!(behaviours_long(
        Some((7, t0)),
        7,
        after(s),
        false,
        t().stuck_after
    ));
    assert!(behaviours_long(
        Some((7, t0)),
        7,
        after(s),
        true,
        t().stuck_after
    ));
    // In a behaviour other than at the last request: not known to be long.
    assert!(!behaviours_long(
        Some((6, t0)),
        7,
        after(s * 10),
        false,
        t().stuck_after
    ));
    // Between behaviours: those run since the request, `stuck_after` each on average.
    assert!(behaviours_long(
        Some((5, t0)),
        7,
        after(s * 2),
        true,
        t().stuck_after
    ));
    assert!(!behaviours_long(
        Some((5, t0)),
        7,
        after(s * 2 - Duration::from_nanos(1)),
        true,
        t().stuck_after
    ));
    // A thousand short behaviours and one preemption of 10 x `stuck_after`: not long.
    assert!(!behaviours_long(
        Some((0, t0)),
        1_000,
        after(s * 10),
        true,
        t().stuck_after
    ));
    // A request from before (a later `ran` recorded) is never about these.
    assert!(!behaviours_long(
        Some((9, t0)),
        7,
        after(s * 10),
        true,
        t().stuck_after
    ));
}

#[test]
fn a_queue_is_held_after_a_stream_or_as_a_sink_with_gathered_mail() {
    assert!(
        hold_after(true, 1, 1, t().sink_visits),
        "mail kept arriving during the visit"
    );
    assert!(hold_after(true, 0, 0, t().sink_visits));
    assert!(
        hold_after(false, t().sink_visits, 2, t().sink_visits),
        "a sink, mail gathered"
    );
    assert!(
        !hold_after(false, t().sink_visits, 1, t().sink_visits),
        "a sink sent one message at a time"
    );
    assert!(
        !hold_after(false, t().sink_visits - 1, 64, t().sink_visits),
        "not yet known as a sink"
    );
}

#[test]
fn a_hold_ends_at_a_full_batch_a_stalled_queue_or_its_time_limit() {
    let t0 = Instant::now();
    let at = |ns: u64| t0 + Duration::from_nanos(ns);
    let ns = |d: Duration| d.as_nanos() as u64;
    let look = ns(t().hold_look);
    let h = Hold::new(t0, 10);
    // Before the first look, the queue's length is not read.
    let unread = || -> usize { panic!("read before the look was due") };
    assert_eq!(h.next(at(look - 1), unread, &t()), Some(h));
    // A look that finds the queue growing holds on; the next look comes twice as late.
    let h1 = h.next(at(look), || 20, &t()).expect("still growing");
    assert_eq!((h1.looked, h1.len, h1.grew), (at(look), 20, at(look)));
    assert_eq!(h1.next(at(2 * look - 1), unread, &t()), Some(h1));
    let h2 = h1.next(at(2 * look), || 40, &t()).expect("still growing");
    assert_eq!(h2.next(at(4 * look - 1), unread, &t()), Some(h2));
    // No new mail at a look: held on while the last growth is recent, ended once it is
    // `hold_stall` old (the sender stopped, or waits).
    let h3 = h2
        .next(at(4 * look), || 40, &t())
        .expect("stalled only briefly");
    assert_eq!(h3.grew, at(2 * look));
    let stall = 2 * look + ns(t().hold_stall);
    let h3b = h3
        .next(at(stall - 1), || 40, &t())
        .expect("not still for t().hold_stall yet");
    assert_eq!(
        h3b.looked,
        at(stall - 1),
        "a look, not one skipped as not yet due"
    );
    assert_eq!(h3.next(at(stall), || 40, &t()), None, "stalled");
    // A full batch ends it at any look.
    assert_eq!(
        h2.next(at(4 * look), || t().hold_batch, &t()),
        None,
        "a full batch"
    );
    // However long the hold, looks come at least every `hold_look_max`.
    let mut h4 = Hold::new(t0, 0);
    let mut now = 0;
    let mut len = 0;
    while now + 2 * ns(t().hold_look_max) < ns(t().hold_max) {
        now += ns(t().hold_look_max);
        len += 1;
        let next = h4
            .next(at(now), || len, &t())
            .expect("growing, under t().hold_max");
        assert_eq!(
            next.looked,
            at(now),
            "a look at most t().hold_look_max after the last"
        );
        h4 = next;
    }
    // The time limit ends it, growing or not, at a look due at `hold_max` even when the
    // interval since the last look would put it later.
    let late = at(ns(t().hold_max));
    let off = late - Duration::from_nanos(ns(t().hold_look_max) * 7 / 10);
    let off_grid = h4
        .next(off, || len + 1, &t())
        .expect("growing, under t().hold_max");
    assert_eq!(off_grid.looked, off, "a look off the 10 µs grid");
    assert_eq!(
        off_grid.next(late - Duration::from_nanos(1), unread, &t()),
        Some(off_grid)
    );
    assert_eq!(
        off_grid.next(late, || len + 2, &t()),
        None,
        "held for t().hold_max"
    );
}

unsafe fn run(_: *const (), _: *mut Payload, _: WorkerRef<'_>) {
    unreachable!()
}
unsafe fn discard(_: *const (), _: *mut Payload) {}
static VT: EnvelopeVTable = EnvelopeVTable {
    run,
    discard,
    message: true,
};

/// Every queue's owner is the worker whose range holds its slot.
fn owners_agree(e: &Executor) {
    for w in 0..e.pool.len() {
        for s in e.range(w) {
            let q = e.slot(s).expect("no swap in progress");
            assert_eq!(q.owner(), w, "queue {} in worker {w}'s range", q.id);
        }
    }
}

#[test]
fn a_victim_is_stuck_in_one_long_behaviour_or_one_very_long_visit() {
    let e = test_executor(2, 4);
    let thief = e.local(1);
    let busy = &e.pool.data(0).busy;
    // One clock reading for the whole test: the thief's view is judged at `now`, exactly
    // the durations below after what it saw.
    let now = Instant::now();
    let ago = |d: Duration| now.checked_sub(d).expect("the clock is past it");
    let beyond = t().stuck_after + Duration::from_micros(10);
    // The thief's view of worker 0: its visit count and count of envelopes run, and since
    // when each has been seen unchanged.
    let seen = |visits: u64, visit_for: Duration, ran: u64, ran_for: Duration| {
        busy.visits.store(visits, Ordering::Relaxed);
        busy.ran.store(ran, Ordering::Relaxed);
        thief.seen[0].set((visits, ago(visit_for)));
        thief.seen_ran[0].set((ran, ago(ran_for)));
    };
    // Between visits: never stuck.
    seen(4, t().stuck_visit * 2, 9, t().stuck_visit * 2);
    assert!(!e.stuck_at(&thief, 0, now));
    // In one visit past `stuck_after`, its behaviours moving on: not stuck...
    seen(5, beyond, 9, Duration::ZERO);
    assert!(!e.stuck_at(&thief, 0, now), "a visit of short behaviours");
    // ... and the count moving since the thief last looked restarts the behaviour's time.
    seen(5, beyond, 9, beyond);
    busy.ran.store(10, Ordering::Relaxed);
    assert!(!e.stuck_at(&thief, 0, now), "the count moved");
    // One behaviour running past `stuck_after` within the visit: stuck.
    seen(5, beyond, 9, beyond);
    assert!(e.stuck_at(&thief, 0, now), "one long behaviour");
    // A visit past `stuck_visit`: stuck, whatever its behaviours.
    seen(
        5,
        t().stuck_visit + Duration::from_micros(10),
        9,
        Duration::ZERO,
    );
    assert!(e.stuck_at(&thief, 0, now), "one very long visit");
}

#[test]
fn a_thief_takes_no_victim_s_only_work_but_rescues_it() {
    let e = test_executor(2, 4);
    let fill = |slot: usize| {
        let q = e.slot(slot).unwrap();
        for _ in 0..t().min_steal {
            q.lock()
                .push(Envelope::new(std::ptr::null(), &VT, Payload::pack(())));
        }
    };
    // Worker 0 (slots 0 and 1) has mail in one queue only, and no visit under way.
    fill(0);
    assert_eq!(
        e.candidate(e.range(0), 0, t().min_steal, false),
        None,
        "its only work"
    );
    assert_eq!(
        e.candidate(e.range(0), 1, t().min_steal, false),
        None,
        "from any start"
    );
    assert_eq!(
        e.candidate(e.range(0), 0, 1, true),
        Some(0),
        "a rescue may take it"
    );
    // With mail in its other queue too, one of them may go.
    fill(1);
    assert_eq!(e.candidate(e.range(0), 0, t().min_steal, false), Some(0));
    assert_eq!(e.candidate(e.range(0), 1, t().min_steal, false), Some(1));
    // A queue its owner holds off (rule 7) is left to it; a rescue may still take it.
    e.slot(0).unwrap().set_held(true);
    assert_eq!(
        e.candidate(e.range(0), 0, t().min_steal, false),
        Some(1),
        "not the held one"
    );
    e.slot(1).unwrap().set_held(true);
    assert_eq!(
        e.candidate(e.range(0), 0, t().min_steal, false),
        None,
        "both held"
    );
    assert_eq!(
        e.candidate(e.range(0), 0, 1, true),
        Some(0),
        "a rescue takes held mail"
    );
    e.slot(0).unwrap().set_held(false);
    e.slot(1).unwrap().set_held(false);
    // A visit under way (queue 1 being processed) is other work.
    let mut batch = crate::core::copy_queue::CopyQueue::new();
    assert!(matches!(
        e.slot(1).unwrap().gulp(&mut batch),
        crate::executor::message_centric::work_queue::Gulp::Got(_)
    ));
    assert_eq!(e.candidate(e.range(0), 1, t().min_steal, false), Some(0));
    batch.discard_all();
    e.slot(1).unwrap().done_processing();
    assert_eq!(
        e.candidate(e.range(0), 0, t().min_steal, false),
        None,
        "its only work again"
    );
    for s in 0..4 {
        e.slot(s).unwrap().lock().take_all().discard_all();
    }
}

/// Placement rule 7, the pass's side: a queue the worker holds off is not visited while
/// the hold lasts, pass after pass (each pass that finds a hold keeps the worker's
/// `holding` flag, which lets the next pass look at the holds at all); once the hold ends
/// (a full batch here), the queue is visited, and a pass that finds no hold clears the flag.
#[test]
fn a_pass_leaves_a_held_queue_alone_until_the_hold_ends() {
    let e = test_executor(1, 2);
    let me = rt::Worker::new(&e, 0);
    let idle = Idleness::fresh();
    static RAN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    unsafe fn count(_: *const (), _: *mut Payload, _: WorkerRef<'_>) {
        RAN.fetch_add(1, Ordering::Relaxed);
    }
    static COUNTED: EnvelopeVTable = EnvelopeVTable {
        run: count,
        discard,
        message: true,
    };
    let push = |q: &WorkQueue, n: usize| {
        for _ in 0..n {
            q.lock()
                .push(Envelope::new(std::ptr::null(), &COUNTED, Payload::pack(())));
        }
    };
    let q = e.slot(0).unwrap();
    // The worker holds queue 0 off, as `visit` starts a hold, with a few envelopes in it.
    // (The hold is dated an hour ahead, so that no look falls due during the test: the
    // passes below see it under way whatever the machine's timing.)
    push(q, 3);
    let later = Instant::now() + Duration::from_secs(3600);
    me.local.holds[q.id].set(Some(Hold::new(later, 3)));
    me.local.holding.set(true);
    q.set_held(true);
    for pass in 0..3 {
        assert!(
            e.turn(&me, &idle) == Turn::Holding,
            "pass {pass}: the held queue was visited"
        );
        assert_eq!(q.len_hint(), 3, "pass {pass}: its mail was taken");
        assert_eq!(RAN.load(Ordering::Relaxed), 0, "pass {pass}: its mail ran");
        assert!(me.local.holding.get(), "pass {pass}: the flag was dropped");
    }
    // A look that is due, on a hold that is over (begun a second ago, past `hold_max`):
    // the hold ends, and the same pass visits the queue and runs its batch.
    push(q, t().hold_batch);
    let earlier = Instant::now()
        .checked_sub(Duration::from_secs(1))
        .expect("the clock has run a second");
    me.local.holds[q.id].set(Some(Hold::new(earlier, 3)));
    assert!(e.turn(&me, &idle) == Turn::Worked, "the hold did not end");
    assert_eq!(q.len_hint(), 0, "the batch was gulped");
    assert_eq!(
        RAN.load(Ordering::Relaxed),
        3 + t().hold_batch,
        "the batch ran"
    );
    assert!(!q.looks_held(), "the mark went with the hold");
    assert!(
        !me.local.holding.get(),
        "a pass that found no hold kept the flag"
    );
    assert!(e.turn(&me, &idle) == Turn::Idle);
}

/// Thief A swaps a queue into its range; before A's bookkeeping, thief B steals the same
/// queue from A's range. The owner must end up B's (a late owner update by A would overwrite
/// it with A's, leaving the queue in B's range owned by A: senders would then wake A, and B
/// could sleep on a message).
#[test]
fn overlapping_steals_leave_owner_and_range_in_agreement() {
    let cfg = Config {
        workers: 3,
        max_workers: 3,
        queues: 3,
        stealing: QueueStealing::Random,
        tuning: Tuning {
            spin: Duration::ZERO,
            adaptive_spin: false,
            ..Tuning::default()
        },
        compaction: crate::runtime::compaction::Mode::Off,
    };
    let e = Arc::new(Executor::new(&cfg, Arc::new(Shared::new(3, false))).unwrap());
    owners_agree(&e);
    // Five envelopes in queue 0: each steal reports them, counted under the queue's lock.
    for _ in 0..5 {
        e.queues[0]
            .lock()
            .push(Envelope::new(std::ptr::null(), &VT, Payload::pack(())));
    }
    // Worker 1 (slot 1) steals worker 0's queue (slot 0).
    let e2 = e.clone();
    AFTER_SWAP.with(|h| {
        *h.borrow_mut() = Some(Box::new(move || {
            // The queue A just stole is in slot 1 now: worker 2 (slot 2) steals it.
            assert_eq!(e2.steal_slot(2, 2, 1, 1), Some(5), "B's steal");
        }))
    });
    assert_eq!(e.steal_slot(1, 1, 0, 0), Some(5), "A's steal");
    owners_agree(&e);
    assert_eq!(e.slot(2).unwrap().id, 0, "queue 0 ended in B's range");
    assert_eq!(e.slot(2).unwrap().owner(), 2);
}
