//! A gulp racing sends: every envelope is taken exactly once, in send order, and no two
//! workers hold the same queue's batch at once.
use super::prelude::*;
use crate::core::envelope::{EnvelopeVTable, Payload};
use crate::runtime::loom::sync::atomic::AtomicBool;
use crate::runtime::loom::sync::Arc;
use loom::thread;

unsafe fn run(_: *const (), _: *mut Payload, _: crate::core::WorkerRef<'_>) {
    unreachable!()
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

fn env(v: u64) -> Envelope {
    Envelope::new(std::ptr::null(), &VT, Payload::pack(v))
}

fn drain(local: &mut CopyQueue, out: &mut Vec<u64>) {
    while let Some(e) = local.pop() {
        // SAFETY: packed as u64.
        out.push(unsafe { e.into_message::<u64>() });
    }
    local.reset_drained();
}

/// A send by the ticket protocol (`Executor::push_shared`): read the actor's ticket, lock
/// that queue, read the ticket again under the lock, and follow it if it changed.
fn send_by_ticket(
    qs: &[WorkQueue; 2],
    ticket: &crate::runtime::loom::sync::atomic::AtomicUsize,
    v: u64,
) {
    loop {
        let t = ticket.load(Ordering::Relaxed);
        let g = qs[t].lock();
        if ticket.load(Ordering::Relaxed) == t {
            g.push(env(v));
            return;
        }
    }
}

/// A mover (`Executor::move_here`): under queue 1's lock, if it is empty and not
/// processed, and queue 0's (tried), every actor of `tickets` moves from 1 to 0, and the
/// mover queues its own message 100 there. Returns whether they moved.
fn spawn_mover<const N: usize>(
    qs: &Arc<[WorkQueue; 2]>,
    tickets: &Arc<[crate::runtime::loom::sync::atomic::AtomicUsize; N]>,
) -> thread::JoinHandle<bool> {
    let (qs, tickets) = (qs.clone(), tickets.clone());
    thread::spawn(move || {
        let old = qs[1].lock();
        if old.len() == 0 && !qs[1].processed_locked(&old) {
            if let Some(new) = qs[0].try_lock() {
                for t in tickets.iter() {
                    t.store(0, Ordering::Relaxed);
                }
                new.push(env(100));
                return true;
            }
        }
        false
    })
}

/// What queues 1 (the old) and 0 (the new) hold, gulped and drained, in that order.
fn gulp_both(qs: &[WorkQueue; 2]) -> (Vec<u64>, Vec<u64>) {
    let mut local = CopyQueue::new();
    let (mut old, mut new) = (Vec::new(), Vec::new());
    if let Gulp::Got(_) = qs[1].gulp(&mut local) {
        drain(&mut local, &mut old);
    }
    if let Gulp::Got(_) = qs[0].gulp(&mut local) {
        drain(&mut local, &mut new);
    }
    (old, new)
}

#[test]
fn gulp_racing_send_loses_and_duplicates_nothing() {
    loom::model(|| {
        let q = Arc::new(WorkQueue::new(0, 0));
        let sender = {
            let q = q.clone();
            thread::spawn(move || {
                for v in 1..=2 {
                    q.lock().push(env(v));
                }
            })
        };
        let mut local = CopyQueue::new();
        let mut got = Vec::new();
        for _ in 0..2 {
            if let Gulp::Got(_) = q.gulp(&mut local) {
                drain(&mut local, &mut got);
                q.done_processing();
            }
        }
        sender.join().unwrap();
        // Whatever the race left behind is still there, in order.
        if let Gulp::Got(_) = q.gulp(&mut local) {
            drain(&mut local, &mut got);
            q.done_processing();
        }
        assert_eq!(got, vec![1, 2]);
    });
}

/// Moving an actor to another queue (`Executor::move_here`, placement) racing a sender.
/// The mover changes the actor's ticket only
/// under the old queue's lock, when that queue is empty and not being processed, and only
/// while it also holds the new queue's lock (taken with `try_lock`); the sender reads the
/// ticket, locks that queue, and reads the ticket again under the lock, retrying if it
/// changed (`Executor::push_shared`). No message for the actor may land in its old queue
/// after the move (the old queue's worker would run it, possibly at the same time as, or
/// after, later messages in the new queue). Removing the sender's second read fails it.
#[test]
fn a_moved_actor_gets_no_message_in_its_old_queue() {
    use crate::runtime::loom::sync::atomic::AtomicUsize;
    loom::model(|| {
        let qs = Arc::new([WorkQueue::new(0, 0), WorkQueue::new(1, 0)]);
        let tickets = Arc::new([AtomicUsize::new(1)]);
        let mover = spawn_mover(&qs, &tickets);
        for v in 1..=2 {
            send_by_ticket(&qs, &tickets[0], v);
        }
        let moved = mover.join().unwrap();
        let (old_rest, new_all) = gulp_both(&qs);
        if moved {
            assert!(
                old_rest.is_empty(),
                "a message went to the old queue after the move"
            );
        }
        // Every message once, each queue in send order.
        let mut sent = old_rest.clone();
        assert!(
            sent.windows(2).all(|w| w[0] < w[1]),
            "out of order: {sent:?}"
        );
        let new_sent: Vec<u64> = new_all.iter().copied().filter(|&v| v != 100).collect();
        assert!(new_sent.windows(2).all(|w| w[0] < w[1]), "out of order");
        sent.extend(new_sent);
        sent.sort_unstable();
        assert_eq!(sent, vec![1, 2], "lost or duplicated");
    });
}

/// Rule 2's merge (`Executor::move_here`): the actor that follows (ticket `a`) takes the
/// other actor of its queue (ticket `b`) along, both tickets changed in one critical
/// section of both locks, while another thread sends each of them two messages in turn
/// (a 1, b 11, a 2, b 12) with the ticket protocol. None lands in the old queue after the
/// merge, and each actor's arrive once, in order.
#[test]
fn merged_actors_get_no_message_in_their_old_queue() {
    use crate::runtime::loom::sync::atomic::AtomicUsize;
    loom::model(|| {
        let qs = Arc::new([WorkQueue::new(0, 0), WorkQueue::new(1, 0)]);
        let tickets = Arc::new([AtomicUsize::new(1), AtomicUsize::new(1)]);
        let mover = spawn_mover(&qs, &tickets);
        for v in [1, 11, 2, 12] {
            send_by_ticket(&qs, &tickets[usize::from(v > 10)], v);
        }
        let moved = mover.join().unwrap();
        let (old_rest, mut new_all) = gulp_both(&qs);
        new_all.retain(|&v| v != 100);
        if moved {
            assert!(old_rest.is_empty(), "a message went to the old queue");
        }
        // Per actor: what is left in the old queue comes first, then the new queue's.
        for actor in [[1, 2], [11, 12]] {
            let got: Vec<u64> = old_rest
                .iter()
                .chain(&new_all)
                .copied()
                .filter(|v| actor.contains(v))
                .collect();
            assert_eq!(got, actor, "lost, duplicated or out of order");
        }
    });
}

/// A split (`Executor::split_current`) racing a sender: the worker holding the actor's
/// queue (its batch holds the actor's message 0, the queue's shared part message 1) moves
/// the actor to a vacant queue, taking both, while another thread sends messages 2 and 3
/// with the ticket protocol. Every message arrives once, in order, and none lands in the
/// old queue after the split.
#[test]
fn a_split_actor_keeps_its_mail_in_order() {
    use crate::runtime::loom::sync::atomic::AtomicUsize;
    loom::model(|| {
        let qs = Arc::new([WorkQueue::new(0, 0), WorkQueue::new(1, 0)]);
        let ticket = Arc::new(AtomicUsize::new(1));
        let mut batch = CopyQueue::new();
        batch.push(env(0));
        qs[1].lock().push(env(1));
        let splitter = {
            let (qs, ticket) = (qs.clone(), ticket.clone());
            thread::spawn(move || {
                let old = qs[1].lock();
                let Some(new) = qs[0]
                    .try_lock()
                    .filter(|g| g.is_vacant() && !qs[0].processed_locked(g))
                else {
                    return (false, batch);
                };
                ticket.store(0, Ordering::Relaxed);
                new.take_picked(&mut batch, |_| true);
                old.move_picked(&new, |_| true);
                (true, batch)
            })
        };
        for v in 2..=3 {
            loop {
                let t = ticket.load(Ordering::Relaxed);
                let g = qs[t].lock();
                if ticket.load(Ordering::Relaxed) != t {
                    continue;
                }
                g.push(env(v));
                break;
            }
        }
        let (split, mut batch) = splitter.join().unwrap();
        let mut local = CopyQueue::new();
        let (mut held, mut old_rest, mut new_all) = (Vec::new(), Vec::new(), Vec::new());
        drain(&mut batch, &mut held);
        if let Gulp::Got(_) = qs[1].gulp(&mut local) {
            drain(&mut local, &mut old_rest);
        }
        if let Gulp::Got(_) = qs[0].gulp(&mut local) {
            drain(&mut local, &mut new_all);
        }
        if split {
            assert!(held.is_empty() && old_rest.is_empty(), "mail left behind");
            assert_eq!(new_all, vec![0, 1, 2, 3], "lost, duplicated or reordered");
        } else {
            held.extend(old_rest);
            assert_eq!(held, vec![0, 1, 2, 3]);
            assert!(new_all.is_empty());
        }
    });
}

/// A sender moved into a held queue (`Executor::move_here`, placement rule 2 and its
/// merge) keeps its order. Worker A runs actor S (queue 1): S sends message 1 to actor R
/// of queue 0, through the lock or through A's outbox (kept, then flushed before the visit
/// ends), and A's visit of queue 1 ends. Worker B meanwhile holds queue 0's batch, and a
/// behaviour there sends to S: if queue 1 is empty and not processed, S moves into queue 0,
/// and S, run from B's batch, sends message 2 to R, through B's local fast path if the
/// move left it open, else through the lock. R must get 1 before 2. The local path stays
/// open only while the held queue's shared part is empty at the move: without that check
/// (message 1 pushed after B's gulp, S moved, 2 appended to the batch) it fails.
#[test]
fn a_sender_moved_into_a_held_queue_keeps_its_order() {
    use crate::runtime::loom::sync::atomic::AtomicUsize;
    const S_RUNS: u64 = 50;
    const HELD: u64 = 60;
    for through_outbox in [false, true] {
        loom::model(move || {
            let qs = Arc::new([WorkQueue::new(0, 1), WorkQueue::new(1, 0)]);
            let ticket = Arc::new(AtomicUsize::new(1));
            // B holds queue 0's batch (gulped before S sends anything).
            qs[0].lock().push(env(HELD));
            let mut batch = CopyQueue::new();
            assert!(matches!(qs[0].gulp(&mut batch), Gulp::Got(1)));
            // S has a message waiting in queue 1, for A.
            qs[1].lock().push(env(S_RUNS));
            let a = {
                let qs = qs.clone();
                thread::spawn(move || {
                    let mut local = CopyQueue::new();
                    if !matches!(qs[1].gulp(&mut local), Gulp::Got(_)) {
                        return;
                    }
                    let mut ran = Vec::new();
                    drain(&mut local, &mut ran);
                    // S's behaviour sends 1 to R (queue 0, which B processes).
                    if through_outbox {
                        let mut outbox = CopyQueue::new();
                        outbox.push(env(1));
                        // The flush, before the visit ends (`Executor::drain`).
                        qs[0].lock().append(&mut outbox);
                    } else {
                        qs[0].lock().push(env(1));
                    }
                    qs[1].done_processing();
                })
            };
            // B runs its batch: a behaviour sends to S, which may move here.
            let mut r = Vec::new();
            let mut local_open = true;
            let moved = {
                let old = qs[1].lock();
                if old.len() == 0 && !qs[1].processed_locked(&old) {
                    qs[0].try_lock().map(|new| {
                        ticket.store(0, Ordering::Relaxed);
                        // The rule under test (`move_here`).
                        local_open = new.admits_moved_sender();
                    })
                } else {
                    None
                }
            }
            .is_some();
            if moved {
                // S runs from B's batch (its message went there, or to the shared part
                // behind message 1 with the local path closed: either way after 1 if
                // that is queued), and sends 2 to R.
                if local_open {
                    batch.push(env(2));
                } else {
                    qs[0].lock().push(env(2));
                }
            }
            drain(&mut batch, &mut r);
            while let Gulp::Got(_) = qs[0].regulp(&mut batch) {
                drain(&mut batch, &mut r);
            }
            qs[0].done_processing();
            a.join().unwrap();
            if let Gulp::Got(_) = qs[0].gulp(&mut batch) {
                drain(&mut batch, &mut r);
                qs[0].done_processing();
            }
            r.retain(|&v| v != HELD);
            if moved {
                assert_eq!(r, vec![1, 2], "S's second message overtook its first");
            } else {
                assert_eq!(r, vec![1]);
            }
        });
    }
}

#[test]
fn two_gulpers_never_hold_one_queue_at_once() {
    loom::model(|| {
        let q = Arc::new(WorkQueue::new(0, 0));
        let busy = Arc::new(AtomicBool::new(false));
        q.lock().push(env(1));
        let gulp_once = |q: &WorkQueue, busy: &AtomicBool| {
            let mut local = CopyQueue::new();
            let mut got = Vec::new();
            if let Gulp::Got(_) = q.gulp(&mut local) {
                assert!(
                    !busy.swap(true, Ordering::SeqCst),
                    "two batches of one queue"
                );
                drain(&mut local, &mut got);
                busy.store(false, Ordering::SeqCst);
                q.done_processing();
            }
            got
        };
        let t = {
            let (q, busy) = (q.clone(), busy.clone());
            thread::spawn(move || gulp_once(&q, &busy))
        };
        // A second message arrives while the other thread may hold the first batch.
        q.lock().push(env(2));
        let mine = gulp_once(&q, &busy);
        let theirs = t.join().unwrap();
        let rest = gulp_once(&q, &busy);
        let mut all: Vec<u64> = theirs.iter().chain(&mine).chain(&rest).copied().collect();
        all.sort_unstable();
        assert_eq!(all, vec![1, 2], "lost or duplicated");
    });
}

/// A send held in an outbox (the outbox, `README.md`, "Sends into a backlog") racing the end of its
/// actor. The sender pins the queue under its lock, then reads the actor's status and,
/// if it is alive, keeps an envelope for the flush; the actor's worker ends it under the
/// same lock, parking the reclaim envelope if the queue is pinned and queueing it
/// otherwise; the flush queues what was kept, then unpins, which queues the parked
/// reclaims. So a kept envelope is queued before the reclaim (its cell is still allocated
/// when it runs), and the reclaim is queued exactly once. Queueing the reclaim whatever
/// the pin fails it.
#[test]
fn an_outboxed_envelope_is_queued_before_its_actors_reclaim() {
    use crate::runtime::loom::sync::atomic::AtomicBool;
    const RECLAIM: u64 = 99;
    loom::model(|| {
        let q = Arc::new(WorkQueue::new(0, 0));
        let alive = Arc::new(AtomicBool::new(true));
        let ender = {
            let (q, alive) = (q.clone(), alive.clone());
            thread::spawn(move || {
                let g = q.lock();
                alive.store(false, Ordering::Relaxed);
                if g.pinned() {
                    g.park(env(RECLAIM));
                } else {
                    g.push(env(RECLAIM));
                }
            })
        };
        q.lock().pin();
        let mut outbox = CopyQueue::new();
        let kept = alive.load(Ordering::Relaxed);
        if kept {
            outbox.push(env(1));
        }
        {
            let g = q.lock();
            g.append(&mut outbox);
            g.unpin();
        }
        ender.join().unwrap();
        let mut local = CopyQueue::new();
        let mut got = Vec::new();
        if let Gulp::Got(_) = q.gulp(&mut local) {
            drain(&mut local, &mut got);
        }
        let want = if kept {
            vec![1, RECLAIM]
        } else {
            vec![RECLAIM]
        };
        assert_eq!(
            got, want,
            "a kept envelope behind the reclaim, or no reclaim"
        );
    });
}

/// A graceful shutdown's request to end an actor racing a send held in an outbox
/// (`Executor::push_last`): the sender pins the queue, keeps its envelope and returns (the
/// send is accepted); a request made after that parks behind the pin, and the flush's unpin
/// queues it behind the kept envelope. So the actor ends after every message accepted before
/// the request. Queueing the request whatever the pin fails it (the end overtakes message 1).
#[test]
fn a_request_to_end_comes_after_what_an_outbox_accepted_before_it() {
    use crate::runtime::loom::sync::atomic::AtomicBool;
    const END: u64 = 99;
    loom::model(|| {
        let q = Arc::new(WorkQueue::new(0, 0));
        let accepted = Arc::new(AtomicBool::new(false));
        let ender = {
            let (q, accepted) = (q.clone(), accepted.clone());
            thread::spawn(move || {
                let after = accepted.load(Ordering::SeqCst);
                let g = q.lock();
                if g.pinned() {
                    g.park(env(END));
                } else {
                    g.push(env(END));
                }
                after
            })
        };
        q.lock().pin();
        let mut outbox = CopyQueue::new();
        outbox.push(env(1));
        accepted.store(true, Ordering::SeqCst);
        {
            let g = q.lock();
            g.append(&mut outbox);
            g.unpin();
        }
        let after = ender.join().unwrap();
        let mut local = CopyQueue::new();
        let mut got = Vec::new();
        if let Gulp::Got(_) = q.gulp(&mut local) {
            drain(&mut local, &mut got);
        }
        if after {
            assert_eq!(
                got,
                vec![1, END],
                "the request overtook an accepted message"
            );
        } else {
            got.sort_unstable();
            assert_eq!(got, vec![1, END], "lost or duplicated");
        }
    });
}

/// A send held in an outbox racing a move of its actor out of the pinned queue (placement): the
/// mover changes the ticket only under the old queue's lock, and not while the queue is
/// pinned; the sender reads the ticket after its pin. So an envelope kept for the queue
/// the ticket named still names the actor's queue at the flush (no message lands in a
/// queue the actor left). Moving whatever the pin fails it.
#[test]
fn a_pinned_queue_keeps_its_actors_until_the_flush() {
    use crate::runtime::loom::sync::atomic::AtomicUsize;
    loom::model(|| {
        let qs = Arc::new([WorkQueue::new(0, 0), WorkQueue::new(1, 1)]);
        let ticket = Arc::new(AtomicUsize::new(1));
        let mover = {
            let (qs, ticket) = (qs.clone(), ticket.clone());
            thread::spawn(move || {
                let old = qs[1].lock();
                if old.len() == 0 && !old.pinned() {
                    if let Some(_new) = qs[0].try_lock() {
                        ticket.store(0, Ordering::Relaxed);
                    }
                }
            })
        };
        qs[1].lock().pin();
        let kept = ticket.load(Ordering::Relaxed) == 1;
        {
            let g = qs[1].lock();
            if kept {
                assert_eq!(
                    ticket.load(Ordering::Relaxed),
                    1,
                    "the actor left the pinned queue before the flush"
                );
                g.push(env(1));
            }
            g.unpin();
        }
        mover.join().unwrap();
        // (The envelope queued is dropped with the queue.)
    });
}
