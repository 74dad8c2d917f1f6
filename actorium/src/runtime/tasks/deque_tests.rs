use super::*;
use crate::runtime::tasks::JobHeader;

unsafe fn nothing(_: *const JobHeader) {}

#[test]
fn behaves_as_a_deque_with_stable_positions() {
    let headers: Vec<JobHeader> = (0..64).map(|_| JobHeader::new(nothing, 1)).collect();
    // SAFETY: the headers outlive the refs, which are never executed.
    let refs: Vec<JobRef> = headers.iter().map(|h| unsafe { JobRef::new(h) }).collect();
    let d = Deque::default();
    let mut model = std::collections::VecDeque::new();
    let mut taken = 0usize;
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    for step in 0..100_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        match x % 5 {
            // Pushes win, so the ring grows past its first capacity.
            0..=2 => {
                let j = refs[step % refs.len()];
                d.push(j, 1 + step % 3);
                model.push_back(j);
            }
            3 => assert_eq!(d.pop(), model.pop_back()),
            _ => {
                // A steal takes the oldest task, or finds only private ones.
                let got = d.steal(1, 0);
                if got.is_some() {
                    assert_eq!(got, model.pop_front());
                }
                taken += usize::from(got.is_some());
            }
        }
        assert_eq!(d.len(), model.len());
        assert_eq!(d.end(), taken + model.len());
    }
    assert!(taken > 1000, "steals took tasks");
    // SAFETY: read by the only thread.
    let capacity = d.owners.buf.with(|b| unsafe { (*b).mask + 1 });
    assert!(capacity > 64, "the ring grew");
}

#[test]
fn a_tagged_steal_needs_the_owner_to_run_that_job() {
    let h = JobHeader::new(nothing, 1);
    // SAFETY: never executed; the header outlives the ref.
    let j = unsafe { JobRef::new(&h) };
    let d = Deque::default();
    d.push(j, 1);
    assert_eq!(d.steal(1, 77), None);
    d.enter_job(77);
    assert_eq!(d.steal(1, 77), Some(j));
    assert_eq!(h.thief(), Some(1));
    d.leave_job();
    assert_eq!(d.pop(), None, "stolen");
    assert!(d.is_empty_settled());
}

#[test]
fn owner_and_thieves_take_every_task_once() {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    const N: usize = 200_000;
    let headers: Arc<Vec<JobHeader>> =
        Arc::new((0..N).map(|_| JobHeader::new(nothing, 1)).collect());
    let d = Arc::new(Deque::default());
    let done = Arc::new(AtomicBool::new(false));
    let steals = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let thieves: Vec<_> = (0..2)
        .map(|t| {
            let (d, done, headers) = (d.clone(), done.clone(), headers.clone());
            let steals = steals.clone();
            std::thread::spawn(move || {
                let base = headers.as_ptr() as usize;
                let mut got = Vec::new();
                while !done.load(Ordering::Acquire) {
                    if let Some(j) = d.steal(t + 1, 0) {
                        got.push((j.as_ptr() as usize - base) / std::mem::size_of::<JobHeader>());
                        steals.fetch_add(1, Ordering::Release);
                    }
                }
                got
            })
        })
        .collect();
    let base = headers.as_ptr() as usize;
    let mut seen = vec![0u8; N];
    let mut next = 0;
    // The last task waits in the deque until a thief has taken something (a gate, not a
    // timing: on a loaded machine the owner may run all the rest before a thief runs).
    while next < N - 1 {
        // Push a few, pop some: the owner and the thieves meet at the last task often.
        for _ in 0..3 {
            if next < N - 1 {
                // SAFETY: never executed; the headers outlive the refs.
                d.push(unsafe { JobRef::new(&headers[next]) }, 1);
                next += 1;
            }
        }
        for _ in 0..2 {
            if let Some(j) = d.pop() {
                seen[(j.as_ptr() as usize - base) / std::mem::size_of::<JobHeader>()] += 1;
            }
        }
    }
    // SAFETY: as above.
    d.push(unsafe { JobRef::new(&headers[N - 1]) }, 1);
    while steals.load(Ordering::Acquire) == 0 {
        std::thread::yield_now();
    }
    while let Some(j) = d.pop() {
        seen[(j.as_ptr() as usize - base) / std::mem::size_of::<JobHeader>()] += 1;
    }
    done.store(true, Ordering::Release);
    let mut stolen = 0;
    for t in thieves {
        for i in t.join().unwrap() {
            seen[i] += 1;
            stolen += 1;
        }
    }
    let bad: Vec<(usize, u8)> = seen
        .iter()
        .copied()
        .enumerate()
        .filter(|&(_, n)| n != 1)
        .take(10)
        .collect();
    assert!(
        bad.is_empty(),
        "every task taken exactly once: {bad:?} (stolen {stolen})"
    );
    assert!(stolen > 0, "thieves took some");
}
