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
//!   pairs one sees the other's store, so they never both keep the task (the loom model, `deque_loom.rs`).
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
use crate::runtime::spinlock::SpinLock;
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
#[path = "deque_tests.rs"]
mod tests;

#[cfg(all(test, loom))]
#[path = "deque_loom.rs"]
mod loom_tests;
