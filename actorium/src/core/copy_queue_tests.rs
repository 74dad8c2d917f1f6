use super::*;
use crate::core::envelope::{EnvelopeVTable, Payload};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Sum of the values discarded by envelopes made with `counted` (one test uses them).
static DISCARDED: AtomicUsize = AtomicUsize::new(0);

unsafe fn run(_: *const (), _: *mut Payload, _: crate::core::WorkerRef<'_>) {
    unreachable!()
}
unsafe fn discard(_: *const (), p: *mut Payload) {
    // SAFETY: the tests pack u64 payloads.
    unsafe { Payload::unpack::<u64>(p) };
}
unsafe fn discard_counted(_: *const (), p: *mut Payload) {
    // SAFETY: the tests pack u64 payloads.
    let v = unsafe { Payload::unpack::<u64>(p) };
    DISCARDED.fetch_add(v as usize, Ordering::Relaxed);
}
static COUNTED: EnvelopeVTable = EnvelopeVTable {
    run,
    discard: discard_counted,
    message: true,
};
fn counted(v: u64) -> Envelope {
    Envelope::new(std::ptr::null(), &COUNTED, Payload::pack(v))
}
static VT: EnvelopeVTable = EnvelopeVTable {
    run,
    discard,
    message: true,
};

fn env(v: u64) -> Envelope {
    Envelope::new(std::ptr::null(), &VT, Payload::pack(v))
}

#[test]
fn move_picked_keeps_both_orders_and_the_running_slot() {
    // Targets 1 and 2 (fake addresses: only compared), values in send order.
    let at = |t: usize, v: u64| Envelope::new(t as *const (), &VT, Payload::pack(v));
    let mut q = CopyQueue::new();
    for (t, v) in [(1, 10), (2, 20), (1, 11), (2, 21), (1, 12), (2, 22)] {
        q.push(at(t, v));
    }
    let first = q.pop().unwrap(); // "running": target 1, value 10
                                  // SAFETY: packed as u64 above.
    assert_eq!(unsafe { first.into_message::<u64>() }, 10);
    let before = q.last_taken_target();
    let mut to = CopyQueue::new();
    assert_eq!(q.move_picked(&mut to, |t| t as usize == 2), 3);
    assert_eq!(q.last_taken_target(), before);
    let drain = |c: &mut CopyQueue| {
        let mut out = Vec::new();
        while let Some(e) = c.pop() {
            // SAFETY: as above.
            out.push(unsafe { e.into_message::<u64>() });
        }
        out
    };
    assert_eq!(drain(&mut q), vec![11, 12]);
    assert_eq!(drain(&mut to), vec![20, 21, 22]);
}

#[test]
fn a_queue_is_three_words() {
    // Two fit in a mailbox within glibc's fastbins (`core/mailbox.rs`).
    assert_eq!(std::mem::size_of::<CopyQueue>(), 24);
}

#[test]
fn an_empty_queue_allocates_two_slots_at_first_then_doubles() {
    let mut q = CopyQueue::empty();
    assert_eq!(q.capacity(), 0);
    let mut caps = Vec::new();
    for i in 0..9 {
        q.push(env(i));
        caps.push(q.capacity());
    }
    assert_eq!(caps, [2, 2, 4, 4, 8, 8, 8, 8, 16]);
    let got: Vec<u64> = std::iter::from_fn(|| q.pop())
        // SAFETY: pushed as u64.
        .map(|e| unsafe { e.into_message::<u64>() })
        .collect();
    assert_eq!(
        got,
        (0..9).collect::<Vec<_>>(),
        "every growth kept the envelopes"
    );
}

#[test]
fn fifo_and_reuse_without_growth() {
    let mut q = CopyQueue::new();
    for round in 0..3u64 {
        for i in 0..8 {
            q.push(env(round * 100 + i));
        }
        for i in 0..8 {
            // SAFETY: pushed as u64.
            let v = unsafe { q.pop().unwrap().into_message::<u64>() };
            assert_eq!(v, round * 100 + i);
        }
        assert!(q.pop().is_none());
        q.reset_drained();
        assert_eq!(q.capacity(), INITIAL_CAPACITY);
    }
}

fn gulp(q: &mut CopyQueue, n: u64) {
    for i in 0..n {
        q.push(env(i));
    }
    while let Some(e) = q.pop() {
        e.discard();
    }
    q.reset_drained();
}

#[test]
fn a_burst_is_returned_within_a_bounded_number_of_quiet_gulps() {
    let mut q = CopyQueue::new();
    gulp(&mut q, 100_000);
    let grown = q.capacity();
    assert!(grown >= 100_000);
    // Steady use at a quarter or more never shrinks it.
    for _ in 0..100 {
        gulp(&mut q, (grown / 4) as u64);
    }
    assert_eq!(q.capacity(), grown);
    // Quiet gulps: halved every QUIET_GULPS, down to the initial capacity.
    let halvings = (grown as f64 / INITIAL_CAPACITY as f64).log2().ceil() as u32;
    for _ in 0..u32::from(QUIET_GULPS) * halvings {
        gulp(&mut q, 3);
    }
    assert_eq!(q.capacity(), INITIAL_CAPACITY);
}

#[test]
fn a_circulating_array_waits_longer_before_it_is_halved() {
    let mut q = CopyQueue::new();
    gulp(&mut q, 1000);
    let grown = q.capacity();
    let quiet = |q: &mut CopyQueue, n: u16| {
        for _ in 0..n {
            q.push(env(0));
            q.pop().unwrap().discard();
            q.reset_drained_after(QUIET_GULPS_CIRCULATING);
        }
    };
    quiet(&mut q, QUIET_GULPS_CIRCULATING - 1);
    assert_eq!(
        q.capacity(),
        grown,
        "not after {} quiet gulps",
        QUIET_GULPS_CIRCULATING - 1
    );
    quiet(&mut q, 1);
    assert_eq!(q.capacity(), grown / 2);
}

#[test]
fn a_queue_used_steadily_is_never_shrunk() {
    // Grows to fit 40, then every gulp uses 40 of it: more than a quarter.
    let mut q = CopyQueue::new();
    gulp(&mut q, 40);
    let cap = q.capacity();
    for _ in 0..1000 {
        gulp(&mut q, 40);
    }
    assert_eq!(q.capacity(), cap);
    // One light gulp now and then does not add up to a shrink.
    for _ in 0..1000 {
        for _ in 0..QUIET_GULPS - 1 {
            gulp(&mut q, 1);
        }
        gulp(&mut q, 40);
    }
    assert_eq!(q.capacity(), cap);
}

#[test]
fn release_gives_back_an_idle_array_only() {
    let mut q = CopyQueue::new();
    gulp(&mut q, 1000);
    q.push(env(1));
    assert!(!q.release_if_larger(0), "not while it holds an envelope");
    q.pop().unwrap().discard();
    assert!(q.release_if_larger(INITIAL_CAPACITY));
    assert_eq!(q.capacity(), INITIAL_CAPACITY);
    assert!(!q.release_if_larger(INITIAL_CAPACITY));
    assert!(q.release_if_larger(0));
    assert_eq!(q.capacity(), 0);
    gulp(&mut q, 100);
    assert!(q.take_if_larger(200).is_none());
    let big = q.take_if_larger(10).expect("larger than 10");
    assert!(big.capacity() >= 100 && q.capacity() == 0);
}

#[test]
fn append_from_keeps_order() {
    let mut rest = CopyQueue::new();
    let mut newer = CopyQueue::new();
    for i in 0..5 {
        rest.push(env(i));
    }
    rest.pop().unwrap().discard(); // 0 ran
    newer.push(env(5));
    newer.push(env(6));
    rest.append_from(&mut newer);
    assert!(newer.is_empty());
    assert_eq!(rest.head, 1, "not compacted: moving 4 to free 1 costs more");
    let got: Vec<u64> = std::iter::from_fn(|| rest.pop())
        // SAFETY: pushed as u64.
        .map(|e| unsafe { e.into_message::<u64>() })
        .collect();
    assert_eq!(got, [1, 2, 3, 4, 5, 6]);
    // Mostly consumed: compacted, so repeated hand-backs never grow the array.
    let mut rest = CopyQueue::new();
    for round in 0..1000u64 {
        for i in 0..8 {
            rest.push(env(round * 8 + i));
        }
        for _ in 0..8 {
            rest.pop().unwrap().discard();
        }
        rest.push(env(0));
        rest.append_from(&mut CopyQueue::new());
        assert_eq!(rest.head, 0);
        rest.pop().unwrap().discard();
    }
    assert_eq!(rest.capacity(), INITIAL_CAPACITY);
}

#[test]
fn append_from_moves_a_partly_run_queue_in_one_copy_and_grows_as_pushes_would() {
    let mut to = CopyQueue::new();
    for i in 0..3 {
        to.push(env(i));
    }
    let mut from = CopyQueue::new();
    for i in 0..100 {
        from.push(env(1000 + i));
    }
    for _ in 0..3 {
        from.pop().unwrap().discard();
    }
    let mut pushed = CopyQueue::new();
    for i in 0..100 {
        pushed.push(env(i));
    }
    to.append_from(&mut from);
    assert!(from.is_empty() && from.head == 0 && from.buf.len() == 0);
    assert_eq!(to.len(), 100);
    assert_eq!(
        to.capacity(),
        pushed.capacity(),
        "10 doubled to 160, as 100 pushes"
    );
    let got: Vec<u64> = std::iter::from_fn(|| to.pop())
        // SAFETY: pushed as u64.
        .map(|e| unsafe { e.into_message::<u64>() })
        .collect();
    let want: Vec<u64> = (0..3).chain(1003..1100).collect();
    assert_eq!(got, want);
    while let Some(e) = pushed.pop() {
        e.discard();
    }
    // Into a queue that gave its array back (no slots): 2 slots, as a first push makes.
    let mut bare = CopyQueue::empty();
    let mut one = CopyQueue::new();
    one.push(env(7));
    bare.append_from(&mut one);
    assert_eq!((bare.len(), bare.capacity()), (1, 2));
    bare.pop().unwrap().discard();
}

#[test]
fn drop_discards_live_envelopes() {
    DISCARDED.store(0, Ordering::Relaxed);
    let mut q = CopyQueue::new();
    q.push(counted(5));
    q.push(counted(7));
    q.pop().unwrap().discard();
    drop(q);
    assert_eq!(DISCARDED.load(Ordering::Relaxed), 12);
}
