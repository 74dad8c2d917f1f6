//! A worker's task deque (Java's fork/join work stealing: Doug Lea, "A Java Fork/Join Framework",
//! 2000, "Work-stealing algorithm": the owner pushes and pops one end, thieves take from the other,
//! and "the two ends are protected by different locking mechanisms"). The owner's end takes no
//! lock; the thieves' end is a spinlock, held for a few loads and stores; the two meet over the
//! last public task through the THE protocol of Cilk-5 (Frigo, Leiserson and Randall, PLDI 1998).
//!
//! The deque is *split* (as in Lace's split deque, van Dijk and van de Pol, 2014): tasks at
//! positions `[front, split)` are public, thieves take them; tasks at `[split, end)` are
//! private, the owner pops them with plain loads and stores, no fence. Only a pop of a public
//! task pays the protocol's fence: in a divide-and-conquer tree that is a pop per stolen or
//! oldest task, not per join (a fence on every pop slows fine-grained trees markedly).
//! Every task becomes public (`split = end`) at a push that finds fewer public tasks than the
//! caller wants (`want_public`, at least one): a join wants one per other worker, so that every
//! thief finds one, and the first task of a join is stealable at once, even while its owner
//! runs a long leaf that forks nothing; a scope's task wants all public. So on 2 workers one
//! task is public at a time and the other pops are fence-free; with more workers more are
//! public. A private task waits for its owner's next fork only when more thieves came at once
//! than tasks were public (or the pool grew meanwhile). (No Lace-style split request, a thief
//! asking the owner to publish at its next push or pop: it would make every task public as soon
//! as a thief is idle, for tasks the owner is about to pop itself, which slows small trees.)
//!
//! Invariants:
//! - `front <= split <= end` (but for a thief's claim in flight, below); position `p` lives in
//!   slot `p & mask`;
//! - only the owner writes `split`, `end`, the slots and the buffer; only thieves (one at a time:
//!   the lock) move `front`, except that the owner takes the oldest tasks under the lock when it
//!   leaves the pool ([`Deque::take_oldest`]);
//! - **a task is taken once.** A thief claims position `h` by storing `front = h + 1`, then,
//!   after a SeqCst fence, loads `split`: it keeps the task only if `h < split`, else it puts
//!   `front` back. The owner pops a public position `e` by storing `split = e`, then, after a
//!   SeqCst fence, loads `front`: it keeps the task only if `front <= e`, else it settles the
//!   question under the lock (where no thief is mid-claim). Of the two fenced store-then-load
//!   pairs one sees the other's store, so they never both keep the task (the loom model below).
//!   Private positions are never claimed: a thief claims only below `split`, and every store
//!   of `split` is a Release after the slots below it were written (a thief's Acquire load
//!   then sees them and the jobs they point to);
//! - while a thief backs off, `front` may be one past `split`: lengths saturate at 0, and a push
//!   keeps one slot spare so that a claimed slot is never overwritten;
//! - the buffer grows only under the lock (by the owner), and thieves read it only under the
//!   lock; the owner reads it without the lock (nobody else writes it);
//! - positions are stable: `end` falls back only over tasks the owner popped, and `front` only
//!   grows (a thief puts back only its own claim, under the lock), so a position noted before a
//!   push ([`Deque::end`]) tells later whether that task is still here;
//! - a thief may ask for work *under a tag* (the helping rule, `executor/forkjoin/README.md`): it
//!   gets a task only while the owner runs a stolen job with that tag ([`Deque::enter_job`]);
//!   the owner changes that list under the lock, so the check and the take are one step.
//!
//! Why not crossbeam-deque (a Chase-Lev deque, a fence on every pop): a thief under the helping
//! rule must see the victim's running jobs and the oldest task as one state, which a lock-free
//! steal cannot give; the job's `thief` field must be written before the owner learns of the
//! steal, which the lock orders (the owner's losing pop takes it); and the private part keeps
//! the fence off most pops.

use super::JobRef;
use crate::runtime::loom::sync::atomic::{fence, AtomicUsize, Ordering};
use crate::runtime::loom::UnsafeCell;
use crate::runtime::spin::SpinLock;
use crossbeam_utils::CachePadded;

#[cfg(not(any(loom, shuttle)))]
const INITIAL_CAPACITY: usize = 64;
#[cfg(any(loom, shuttle))]
const INITIAL_CAPACITY: usize = 4;

/// The ring of job pointers (0: none).
#[derive(Debug)]
struct Buf {
    slots: Box<[AtomicUsize]>,
    mask: usize,
}

impl Buf {
    fn new(cap: usize) -> Self {
        debug_assert!(cap.is_power_of_two());
        Self {
            slots: (0..cap).map(|_| AtomicUsize::new(0)).collect(),
            mask: cap - 1,
        }
    }

    #[inline]
    fn slot(&self, pos: usize) -> &AtomicUsize {
        &self.slots[pos & self.mask]
    }
}

/// A worker's task deque, in its row of the worker table (thieves reach it there). The
/// owner's end and the thieves' end are on separate cache lines, so that thieves trying the
/// deque (the lock's CAS, the claim) do not take the line the owner writes on every fork.
#[derive(Debug)]
pub(crate) struct Deque {
    owners: CachePadded<OwnerEnd>,
    thieves: CachePadded<ThiefEnd>,
}

/// What the owner writes on every push and pop.
#[derive(Debug)]
struct OwnerEnd {
    /// The end of the public part (thieves read it; the owner writes it).
    split: AtomicUsize,
    /// Past the newest task (the owner's end; only the owner reads it).
    end: AtomicUsize,
    buf: UnsafeCell<Buf>,
}

/// What thieves write.
#[derive(Debug)]
struct ThiefEnd {
    /// The oldest task's position (on a line of its own: the owner reads it at every join,
    /// and thieves trying the lock must not take that line away each time).
    front: CachePadded<AtomicUsize>,
    /// The thieves' end (and what the owner does there: growing, settling a lost pop, leaving).
    lock: SpinLock,
    /// Tags of the stolen jobs the owner runs, outermost first. Written under `lock`.
    running: UnsafeCell<Vec<usize>>,
}

// SAFETY: `buf` and `running` are written only by the owner under `lock` and read by thieves
// only under `lock` (the module invariants); the rest is atomic.
unsafe impl Sync for Deque {}
// SAFETY: as above; a deque holds job pointers, which are `Send`.
unsafe impl Send for Deque {}

impl Default for Deque {
    fn default() -> Self {
        Self {
            owners: CachePadded::new(OwnerEnd {
                split: AtomicUsize::new(0),
                end: AtomicUsize::new(0),
                buf: UnsafeCell::new(Buf::new(INITIAL_CAPACITY)),
            }),
            thieves: CachePadded::new(ThiefEnd {
                front: CachePadded::new(AtomicUsize::new(0)),
                lock: SpinLock::new(),
                running: UnsafeCell::new(Vec::new()),
            }),
        }
    }
}

impl Deque {
    #[inline]
    fn read(&self, pos: usize) -> JobRef {
        let buf = &self.owners.buf;
        // SAFETY: the caller is the owner (nobody else writes `buf`) or holds the lock.
        let p = buf.with(|b| unsafe { (*b).slot(pos).load(Ordering::Relaxed) });
        debug_assert_ne!(p, 0, "a taken position holds a job");
        // SAFETY: a non-zero slot inside `[front, end)` holds a job pointer pushed by the owner.
        unsafe { JobRef::from_ptr(p as *mut _) }
    }

    // --- The owner's end ---

    /// Tasks held, as the owner sees them: exact but for a thief's claim in flight, which is
    /// counted as taken even when the thief will back off (it read an older `split`). So 0 may
    /// mean one task left: a caller that must know the deque is empty asks
    /// [`Self::is_empty_settled`].
    #[inline]
    pub(crate) fn len(&self) -> usize {
        let f = self.thieves.front.load(Ordering::Relaxed);
        let s = self.owners.split.load(Ordering::Relaxed);
        self.owners
            .end
            .load(Ordering::Relaxed)
            .saturating_sub(f.min(s))
    }

    /// Whether public tasks are left (a hint).
    #[inline]
    pub(crate) fn has_public(&self) -> bool {
        self.thieves.front.load(Ordering::Relaxed) < self.owners.split.load(Ordering::Acquire)
    }

    /// The position the next push gets (owner only).
    #[inline]
    pub(crate) fn end(&self) -> usize {
        self.owners.end.load(Ordering::Relaxed)
    }

    /// Pushes `job` at the owner's end (owner only). It is public (with every task below it)
    /// if fewer than `want_public` public tasks are left (at least one is wanted); else
    /// private. Whether it published tasks.
    #[inline]
    pub(crate) fn push(&self, job: JobRef, want_public: usize) -> bool {
        let e = self.owners.end.load(Ordering::Relaxed);
        let f = self.thieves.front.load(Ordering::Relaxed);
        // SAFETY: the owner reads the buffer it alone replaces.
        let cap = self.owners.buf.with(|b| unsafe { (*b).mask + 1 });
        // One slot spare: a thief backing off may have moved `front` one past its true value.
        if e.saturating_sub(f) + 2 > cap {
            self.grow();
        }
        // SAFETY: as above.
        self.owners
            .buf
            .with(|b| unsafe { (*b).slot(e).store(job.as_ptr() as usize, Ordering::Relaxed) });
        self.owners.end.store(e + 1, Ordering::Relaxed);
        // A stale `front` only delays publishing (it is re-read at every push); a speculative
        // one (a thief backing off) only hastens it.
        let public = self.owners.split.load(Ordering::Relaxed).saturating_sub(f);
        if public < want_public.max(1) {
            // Every task public. Release: a thief that sees the new split (Acquire) sees the
            // slots and the jobs.
            self.owners.split.store(e + 1, Ordering::Release);
            return true;
        }
        false
    }

    /// Pops the owner's end: the newest task, unless thieves took every task (owner only).
    #[inline]
    pub(crate) fn pop(&self) -> Option<JobRef> {
        let e = self.owners.end.load(Ordering::Relaxed);
        let s = self.owners.split.load(Ordering::Relaxed);
        if e > s {
            // Private: nobody else may take it.
            self.owners.end.store(e - 1, Ordering::Relaxed);
            return Some(self.read(e - 1));
        }
        if e == 0 {
            return None; // nothing was ever pushed
        }
        // The top task is public (`split == end`): the THE protocol.
        let e = e - 1;
        // Release, as every store of `split`: a thief that claims below it must see the slots.
        self.owners.split.store(e, Ordering::Release);
        self.owners.end.store(e, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        if self.thieves.front.load(Ordering::Relaxed) <= e {
            return Some(self.read(e));
        }
        self.settle(e)
    }

    /// A pop that met a thief (or an empty deque): decided under the lock, where no thief is
    /// mid-claim. Taking the lock also orders the winning thief's writes (the job's `thief`)
    /// before the owner's next steps.
    #[cold]
    fn settle(&self, e: usize) -> Option<JobRef> {
        let _g = self.thieves.lock.lock();
        if self.thieves.front.load(Ordering::Relaxed) <= e {
            Some(self.read(e))
        } else {
            // Nothing at `e`: the deque ends where the tasks ended (empty).
            self.owners.end.store(e + 1, Ordering::Relaxed);
            self.owners.split.store(e + 1, Ordering::Release);
            None
        }
    }

    #[cold]
    fn grow(&self) {
        let _g = self.thieves.lock.lock();
        let (f, e) = (
            self.thieves
                .front
                .load(Ordering::Relaxed)
                .min(self.owners.split.load(Ordering::Relaxed)),
            self.owners.end.load(Ordering::Relaxed),
        );
        // SAFETY: under the lock, by the owner: no thief reads the buffer meanwhile.
        self.owners.buf.with_mut(|b| unsafe {
            let old = &mut *b;
            let bigger = Buf::new(old.slots.len() * 2);
            for p in f..e {
                bigger
                    .slot(p)
                    .store(old.slot(p).load(Ordering::Relaxed), Ordering::Relaxed);
            }
            *old = bigger;
        });
    }

    /// Whether the deque is empty, exactly (owner only; takes the lock).
    pub(crate) fn is_empty_settled(&self) -> bool {
        let _g = self.thieves.lock.lock();
        self.thieves.front.load(Ordering::Relaxed) >= self.owners.end.load(Ordering::Relaxed)
    }

    /// Takes the oldest task, as a thief would (owner only: a worker leaving the pool).
    pub(crate) fn take_oldest(&self) -> Option<JobRef> {
        let _g = self.thieves.lock.lock();
        let (f, e) = (
            self.thieves.front.load(Ordering::Relaxed),
            self.owners.end.load(Ordering::Relaxed),
        );
        if f >= e {
            return None;
        }
        self.owners.split.store(e, Ordering::Release);
        let job = self.read(f);
        self.thieves.front.store(f + 1, Ordering::Relaxed);
        Some(job)
    }

    /// The owner starts running a stolen job tagged `tag` (thieves asking for that tag may now
    /// take its tasks).
    pub(crate) fn enter_job(&self, tag: usize) {
        let _g = self.thieves.lock.lock();
        // SAFETY: written under the lock, by the owner.
        self.thieves.running.with_mut(|r| unsafe { (*r).push(tag) });
    }

    /// The owner's stolen job ended.
    pub(crate) fn leave_job(&self) {
        let _g = self.thieves.lock.lock();
        // SAFETY: as in `enter_job`.
        self.thieves.running.with_mut(|r| unsafe { (*r).pop() });
    }

    /// Whether the owner runs a stolen job (owner only).
    pub(crate) fn in_stolen_job(&self) -> bool {
        // SAFETY: the owner reads what only it writes.
        self.thieves.running.with(|r| unsafe { !(*r).is_empty() })
    }

    // --- The thieves' end ---

    /// Thief `me` takes the oldest task, if there is one and (for `wants != 0`) the owner runs a
    /// stolen job tagged `wants`. `None` also when another thief holds the thieves' end.
    pub(crate) fn steal(&self, me: usize, wants: usize) -> Option<JobRef> {
        // A look first (loads only): most tries find a deque emptied meanwhile.
        let s = self.owners.split.load(Ordering::Relaxed);
        if self.thieves.front.load(Ordering::Relaxed) >= s {
            return None;
        }
        let _g = self.thieves.lock.try_lock()?;
        let running = &self.thieves.running;
        // SAFETY: read under the lock, which the owner holds to write it.
        if wants != 0 && !running.with(|r| unsafe { (*r).contains(&wants) }) {
            return None;
        }
        let h = self.thieves.front.load(Ordering::Relaxed);
        self.thieves.front.store(h + 1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        if h >= self.owners.split.load(Ordering::Acquire) {
            self.thieves.front.store(h, Ordering::Relaxed);
            return None;
        }
        let job = self.read(h);
        // Before the lock is released: the owner learns of the steal under the lock.
        job.header().set_thief(me);
        Some(job)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
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
                            got.push(
                                (j.as_ptr() as usize - base) / std::mem::size_of::<JobHeader>(),
                            );
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
}

#[cfg(all(test, loom))]
mod loom_tests {
    //! The THE protocol, model-checked: an owner with two tasks pops both while a thief steals;
    //! every task is taken exactly once, and a task the owner took is never also the thief's.
    use super::*;
    use crate::runtime::loom::sync::Arc;
    use crate::runtime::tasks::JobHeader;
    use loom::thread;

    unsafe fn nothing(_: *const JobHeader) {}

    /// With one public task (the other private) and with both public (two pops through the
    /// protocol).
    #[test]
    fn owner_and_thief_never_take_the_same_task() {
        for want_public in [1, 2] {
            loom::model(move || {
                let headers: Arc<[JobHeader; 2]> =
                    Arc::new([JobHeader::new(nothing, 1), JobHeader::new(nothing, 1)]);
                let d = Arc::new(Deque::default());
                // SAFETY: never executed; the headers outlive the refs (held by the Arc).
                let jobs = unsafe { [JobRef::new(&headers[0]), JobRef::new(&headers[1])] };
                d.push(jobs[0], want_public);
                d.push(jobs[1], want_public);
                let (d2, h2) = (d.clone(), headers.clone());
                let thief = thread::spawn(move || {
                    let _keep = h2;
                    d2.steal(1, 0).map(|j| j.as_ptr() as usize)
                });
                let mut mine = Vec::new();
                while let Some(j) = d.pop() {
                    mine.push(j.as_ptr() as usize);
                }
                let stolen = thief.join().unwrap();
                let mut all = mine.clone();
                all.extend(stolen);
                all.sort_unstable();
                let mut want: Vec<usize> = jobs.iter().map(|j| j.as_ptr() as usize).collect();
                want.sort_unstable();
                assert_eq!(all, want, "owner took {mine:?}, thief {stolen:?}");
                if stolen.is_some() {
                    // The thief takes the oldest, FIFO.
                    assert_eq!(stolen, Some(jobs[0].as_ptr() as usize));
                }
            });
        }
    }
}
