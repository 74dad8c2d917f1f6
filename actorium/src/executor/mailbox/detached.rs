//! Detached actors (seed 000, "detached"): an actor with a thread of its own, for work that
//! blocks. Its mailbox and job are those of every mailbox actor; instead of a policy, a private
//! thread runs the job, blocking on its own condition variable while the mailbox is empty. The
//! thread ends when the actor's job ends (the actor terminated and its mail is drained), or
//! when the system is dropped.

use super::{resume, Job, Resumable, Runner};
use crate::actor::cell::Header;
use crate::executor::Exec;
use crate::stats::Counters;
use std::io;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

const PENDING: u8 = 1;
const QUIT: u8 = 2;

/// A detached actor's wake-up: a flag under a mutex and a condition variable.
pub(crate) struct DetachedUnit {
    state: Mutex<u8>,
    cv: Condvar,
}

impl DetachedUnit {
    fn new() -> Self {
        Self {
            state: Mutex::new(0),
            cv: Condvar::new(),
        }
    }

    /// The actor has a job: run it.
    pub(crate) fn wake(&self) {
        *self.state.lock().unwrap() |= PENDING;
        self.cv.notify_one();
    }

    fn quit(&self) {
        *self.state.lock().unwrap() |= QUIT;
        self.cv.notify_one();
    }

    /// Waits for a job; false when the thread must exit instead.
    fn wait(&self) -> bool {
        let mut s = self.state.lock().unwrap();
        loop {
            if *s & QUIT != 0 {
                return false;
            }
            if *s & PENDING != 0 {
                *s &= !PENDING;
                return true;
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

    /// Starts the thread of a detached actor whose cell is at `hdr` (not yet registered). The
    /// thread waits for the first job; if registration fails, [`Self::abandon`] ends it.
    pub(crate) fn start(&self, exec: &Exec, hdr: *const Header) -> io::Result<Arc<DetachedUnit>> {
        let unit = Arc::new(DetachedUnit::new());
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
        Ok(unit)
    }

    /// Ends the thread of an actor whose registration was refused.
    pub(crate) fn abandon(&self, unit: &Arc<DetachedUnit>) {
        unit.quit();
        let mut threads = self.threads.lock().unwrap();
        if let Some(i) = threads.iter().position(|(u, _)| Arc::ptr_eq(u, unit)) {
            let (_, t) = threads.swap_remove(i);
            drop(threads);
            let _ = t.join();
        }
    }

    /// Joins every detached thread; with `abort`, tells them to exit after their current job.
    pub(crate) fn join_all(&self, abort: bool) {
        let threads = std::mem::take(&mut *self.threads.lock().unwrap());
        if abort {
            for (u, _) in &threads {
                u.quit();
            }
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
        index: usize::MAX,
        counters: core.stats_on.then_some(&counters),
    };
    while unit.wait() {
        // SAFETY: a job is pending, so the actor is registered and its system reference held.
        let job = Job::of(unsafe { &*cell.0 });
        // SAFETY: only this thread runs the actor's jobs.
        if unsafe { resume(&job, &runner, usize::MAX) } == Resumable::Done {
            break;
        }
    }
    if core.stats_on {
        counters.add_into(&core.external);
    }
}
