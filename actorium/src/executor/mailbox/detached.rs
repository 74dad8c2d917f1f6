//! Detached actors (seed 000, "detached"): an actor with a thread of its own, for work that
//! blocks. Its mailbox and job are those of every mailbox actor; instead of a policy, a private
//! thread runs the job, blocking on its own condition variable while the mailbox is empty. The
//! thread ends when the actor's job ends (the actor terminated and its mail is drained) — except
//! for a `Destroyed` actor, which may be respawned on its address: its thread waits until then,
//! until the cell is freed (the mailbox's drop tells it), or until the system shuts down.

use super::{resume, Job, Resumable, Runner};
use crate::actor::cell::Header;
use crate::executor::Exec;
use crate::stats::Counters;
use std::io;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

/// A job is pending.
const PENDING: u8 = 1;
/// End once no job is pending (the cell is gone, or the system stops).
const FINISH: u8 = 2;
/// End now (the system is dropped).
const ABORT: u8 = 4;

/// A detached actor's wake-up: a flag under a mutex and a condition variable.
pub(crate) struct DetachedUnit {
    state: Mutex<u8>,
    cv: Condvar,
}

impl DetachedUnit {
    pub(crate) fn new() -> Self {
        Self {
            state: Mutex::new(0),
            cv: Condvar::new(),
        }
    }

    /// The actor has a job: run it.
    pub(crate) fn wake(&self) {
        self.flag(PENDING);
    }

    fn flag(&self, f: u8) {
        *self.state.lock().unwrap() |= f;
        self.cv.notify_one();
    }

    /// The thread may end once it has no job pending.
    pub(crate) fn finish(&self) {
        self.flag(FINISH);
    }

    /// Waits for a job; false when the thread must exit instead.
    fn wait(&self) -> bool {
        let mut s = self.state.lock().unwrap();
        loop {
            if *s & ABORT != 0 {
                return false;
            }
            if *s & PENDING != 0 {
                *s &= !PENDING;
                return true;
            }
            if *s & FINISH != 0 {
                return false;
            }
            s = self.cv.wait(s).unwrap();
        }
    }
}

/// An executor's detached threads.
pub(crate) struct Detached {
    threads: Mutex<Vec<(Arc<DetachedUnit>, thread::JoinHandle<()>)>>,
}

/// A cell pointer moved to the detached thread.
struct CellPtr(*const Header);
// SAFETY: the header is `Sync`; the thread dereferences it only after the spawn registered the
// actor (its job holds the system reference until it ends).
unsafe impl Send for CellPtr {}

impl Detached {
    pub(crate) fn new() -> Self {
        Self {
            threads: Mutex::new(Vec::new()),
        }
    }

    /// Starts the thread of a detached actor whose cell (not yet registered) is at `hdr` and
    /// whose mailbox holds `unit`. The thread waits for the first job; if registration fails,
    /// [`Self::abandon`] ends it.
    pub(crate) fn start(
        &self,
        exec: &Exec,
        unit: &Arc<DetachedUnit>,
        hdr: *const Header,
    ) -> io::Result<()> {
        let (u, e, p) = (unit.clone(), exec.clone(), CellPtr(hdr));
        let t = thread::Builder::new()
            .name("actorium-detached".into())
            .spawn(move || body(&e, &u, p))?;
        let mut threads = self.threads.lock().unwrap();
        // Reap the threads of detached actors that have ended.
        let (done, running): (Vec<_>, Vec<_>) =
            threads.drain(..).partition(|(_, t)| t.is_finished());
        *threads = running;
        threads.push((unit.clone(), t));
        drop(threads);
        for (_, t) in done {
            let _ = t.join();
        }
        Ok(())
    }

    /// Ends the thread of an actor whose registration was refused.
    pub(crate) fn abandon(&self, unit: &Arc<DetachedUnit>) {
        unit.flag(ABORT);
        let mut threads = self.threads.lock().unwrap();
        if let Some(i) = threads.iter().position(|(u, _)| Arc::ptr_eq(u, unit)) {
            let (_, t) = threads.swap_remove(i);
            drop(threads);
            let _ = t.join();
        }
    }

    /// Ends and joins every detached thread: with `abort`, after its current job; otherwise
    /// once it has no job pending (on `stop()` every actor is terminal and none can be
    /// respawned, so threads waiting for a respawn are told to end).
    pub(crate) fn join_all(&self, abort: bool) {
        let threads = std::mem::take(&mut *self.threads.lock().unwrap());
        for (u, _) in &threads {
            u.flag(if abort { ABORT } else { FINISH });
        }
        for (_, t) in threads {
            // The body catches behaviour panics; a join error would be an actorium bug.
            t.join().expect("actorium detached thread panicked");
        }
    }
}

fn body(exec: &Exec, unit: &DetachedUnit, cell: CellPtr) {
    let core = exec.core();
    let counters = Counters::default();
    let runner = Runner {
        index: crate::actor::DETACHED,
        counters: core.stats_on.then_some(&counters),
        during: None, // no job waits for this thread
    };
    while unit.wait() {
        // SAFETY: a job is pending, so the actor is registered and its system reference held.
        let job = Job::of(unsafe { &*cell.0 });
        // SAFETY: only this thread runs the actor's jobs.
        let (r, destroyed) = unsafe { resume(&job, &runner, usize::MAX) };
        // After `Done` the cell may be freed: it is only touched again after a respawn's wake-up
        // (which took a new system reference).
        // (`ResumeLater` only comes when the system is dropped: the next wait sees ABORT.)
        if r == Resumable::Done && !destroyed {
            break;
        }
    }
    if core.stats_on {
        counters.add_into(&core.external);
    }
}
