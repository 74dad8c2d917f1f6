use super::super::swap::*;
use super::prelude::*;
use crate::runtime::loom::sync::Arc;
use loom::thread;

/// Slots holding distinct dummy "queues" (addresses of a static array).
static QUEUES: [u8; 4] = [0; 4];

fn slots(n: usize) -> Arc<Vec<AtomicPtr<u8>>> {
    Arc::new(
        (0..n)
            .map(|i| AtomicPtr::new(&QUEUES[i] as *const u8 as *mut u8))
            .collect(),
    )
}

/// Every queue is in exactly one slot, none is null.
fn assert_permutation(slots: &[AtomicPtr<u8>]) {
    let mut seen: Vec<usize> = slots
        .iter()
        .map(|s| {
            let p = s.load(Ordering::SeqCst);
            assert!(!p.is_null(), "a slot was left null");
            (p as usize) - (QUEUES.as_ptr() as usize)
        })
        .collect();
    seen.sort_unstable();
    assert_eq!(
        seen,
        (0..slots.len()).collect::<Vec<_>>(),
        "a queue was lost or duplicated"
    );
}

fn run(swaps: &[(usize, usize)], slot_count: usize) -> Vec<bool> {
    let s = slots(slot_count);
    let handles: Vec<_> = swaps
        .iter()
        .map(|&(own, victim)| {
            let s = s.clone();
            thread::spawn(move || try_swap(&s, own, victim, &()).is_ok())
        })
        .collect();
    let ok = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_permutation(&s);
    ok
}

#[test]
fn many_thieves_one_victim_at_least_one_succeeds() {
    loom::model(|| {
        let ok = run(&[(1, 0), (2, 0)], 3);
        assert!(ok.iter().any(|&o| o), "no thief succeeded");
    });
}

#[test]
fn chain_of_thieves_at_least_one_succeeds() {
    loom::model(|| {
        // 1 steals from 0, 2 steals from 1, 3 steals from 2.
        let ok = run(&[(1, 0), (2, 1), (3, 2)], 4);
        assert!(ok.iter().any(|&o| o), "no thief in the chain succeeded");
    });
}

#[test]
fn cycle_loses_and_duplicates_nothing() {
    loom::model(|| {
        // 0 steals from 1 while 1 steals from 0: both may fail, nothing may be lost.
        run(&[(0, 1), (1, 0)], 2);
    });
}
