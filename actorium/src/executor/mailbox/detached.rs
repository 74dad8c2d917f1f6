//! The detached executor (detached actors of CAF's scheduler manual: the C++ Actor Framework
//! manual, section "Scheduler"): every actor has a thread of its own, for work that blocks. Its
//! mailbox and job are those of every mailbox actor; instead of a policy, the actor's thread runs
//! the job, blocking on its own [`Signal`] while the mailbox is empty. The thread ends when the
//! actor's job ends (the actor terminated and its mail is drained) — except for a `Destroyed`
//! actor, which may be respawned on its address: its thread waits until then, until the cell is
//! freed (the mailbox's drop tells it), or until the system shuts down. Every system has one, next
//! to its pooled executor, whichever that is.

use super::{resume, Job, JobScheduler, Resumable, Runner};
use crate::core::envelope::Envelope;
use crate::core::mailbox::Mailbox;
use crate::core::DETACHED;
use crate::core::{
    ExecRef, Executor as Exec, Header, Placement, Shared, Sibling, Status, WorkerRef,
};
use crate::runtime::context::Enter;
use crate::runtime::counters::Counters;
use crate::runtime::signal::{Signal, ABORT, FINISH, PENDING};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

/// The detached executor of one system.
pub(crate) struct Detached {
    shared: Arc<Shared>,
    /// The system's pooled executor, until shutdown's cleanup lets it go (it holds this one:
    /// the cycle lasts as long as the system).
    pooled: Mutex<Option<ExecRef>>,
    threads: Mutex<Vec<(Arc<Signal>, thread::JoinHandle<()>)>>,
    ticket: AtomicUsize,
}

/// A cell pointer moved to the detached thread.
struct CellPtr(*const Header);
// SAFETY: the header is `Sync`; the thread dereferences it only after the spawn registered the
// actor (its job holds the system reference until it ends).
unsafe impl Send for CellPtr {}

impl Detached {
    pub(crate) fn new(shared: Arc<Shared>, pooled: ExecRef) -> Self {
        Self {
            shared,
            pooled: Mutex::new(Some(pooled)),
            threads: Mutex::new(Vec::new()),
            ticket: AtomicUsize::new(0),
        }
    }

    fn pooled(&self) -> Option<ExecRef> {
        self.pooled
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Starts the thread of the detached actor `hdr` (not yet registered): it waits for the
    /// actor's first job.
    fn start(&self, hdr: &Header, signal: &Arc<Signal>) -> std::io::Result<()> {
        let (s, shared, p) = (signal.clone(), self.shared.clone(), CellPtr(hdr));
        let t = thread::Builder::new()
            .name("actorium-detached".into())
            .spawn(move || body(&shared, &s, p))?;
        let mut threads = self.threads.lock().unwrap();
        // Reap the threads of detached actors that have ended.
        let (done, running): (Vec<_>, Vec<_>) =
            threads.drain(..).partition(|(_, t)| t.is_finished());
        *threads = running;
        threads.push((signal.clone(), t));
        drop(threads);
        for (_, t) in done {
            let _ = t.join();
        }
        Ok(())
    }

    /// Ends the thread of an actor whose registration was refused.
    fn abandon(&self, signal: &Arc<Signal>) {
        signal.raise(ABORT);
        let mut threads = self.threads.lock().unwrap();
        if let Some(i) = threads.iter().position(|(s, _)| Arc::ptr_eq(s, signal)) {
            let (_, t) = threads.swap_remove(i);
            drop(threads);
            let _ = t.join();
        }
    }
}

impl JobScheduler for Detached {
    fn shared(&self) -> &Shared {
        &self.shared
    }

    /// The actor's thread runs it.
    #[inline]
    fn schedule(&self, hdr: &Header) {
        if let Some(s) = hdr.mailbox().and_then(Mailbox::signal) {
            s.raise(PENDING);
        }
    }

    fn my_counters(&self) -> Option<&Counters> {
        None
    }
}

impl Exec for Detached {
    fn shared(&self) -> &Shared {
        &self.shared
    }

    fn sibling(&self, p: Placement) -> Sibling {
        match p {
            Placement::Detached => Sibling::This,
            Placement::Pooled => match self.pooled() {
                Some(e) => Sibling::Other(e),
                None => Sibling::Gone,
            },
        }
    }

    fn next_ticket(&self) -> usize {
        self.ticket.fetch_add(1, Ordering::Relaxed)
    }

    fn new_mailbox(&self) -> Option<Box<Mailbox>> {
        Some(Box::new(Mailbox::new(Some(Arc::new(Signal::new())))))
    }

    fn push(&self, hdr: &Header, env: Envelope) -> Result<(), Envelope> {
        super::push(self, hdr, env)
    }

    fn schedule(&self, hdr: &Header) {
        JobScheduler::schedule(self, hdr)
    }

    unsafe fn register(&self, hdr: &Header, start: Envelope) -> Result<(), Envelope> {
        let signal = hdr
            .mailbox()
            .and_then(Mailbox::signal)
            .expect("a detached actor's mailbox has a signal")
            .clone();
        if let Err(e) = self.start(hdr, &signal) {
            eprintln!("actorium: cannot start a thread for a detached actor: {e}");
            return Err(start);
        }
        // SAFETY: forwarded contract.
        let r = unsafe { super::register(self, hdr, start) };
        if r.is_err() {
            self.abandon(&signal);
        }
        r
    }

    unsafe fn revive(&self, hdr: &Header, install: Envelope) -> Result<(), Envelope> {
        // SAFETY: forwarded contract.
        unsafe { super::revive(self, hdr, install) }
    }

    unsafe fn retire(&self, hdr: &Header, status: Status) {
        // SAFETY: forwarded contract.
        unsafe { super::retire(&self.shared, hdr, status) }
    }

    /// Waits as the pooled executor does (a caller-driven one runs jobs meanwhile).
    fn wait_until(&self, done: &mut dyn FnMut() -> bool) {
        match self.pooled() {
            Some(p) => p.wait_until(done),
            None => self.shared.life.wait_until(done),
        }
    }

    fn workers(&self) -> usize {
        0
    }

    fn begin_shutdown(&self, _drain: bool) {}

    /// Ends and joins every detached thread: without `drain`, after its current job;
    /// otherwise once it has no job pending (on `stop()` every actor is terminal and none can
    /// be respawned, so threads waiting for a respawn are told to end).
    fn join_threads(&self, drain: bool) {
        let threads = std::mem::take(&mut *self.threads.lock().unwrap());
        for (s, t) in &threads {
            s.raise(if drain { FINISH } else { ABORT });
            if !drain {
                // A thread blocked in an ask gives up once it sees the abort
                // (`runtime::context::own_system_aborting`).
                t.thread().unpark();
            }
        }
        for (_, t) in threads {
            // The body catches behaviour panics; a join error would be an actorium bug.
            if t.join().is_err() {
                eprintln!("actorium: a detached actor's thread panicked (an actorium bug)");
            }
        }
    }

    fn cleanup(&self) {
        super::cleanup(&self.shared);
        *self.pooled.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

fn body(shared: &Shared, signal: &Signal, cell: CellPtr) {
    let _enter = Enter::detached(shared.id(), &shared.life, cell.0.cast());
    let counters = Counters::default();
    let runner = Runner {
        worker: WorkerRef {
            index: DETACHED,
            counters: shared.stats_on.then_some(&counters),
        },
        during: None, // no job waits for this thread
    };
    while signal.wait() {
        // SAFETY: a job is pending, so the actor is registered and its system reference held.
        let job = Job::of(unsafe { &*cell.0 });
        // SAFETY: only this thread runs the actor's jobs.
        let (r, destroyed) = unsafe { resume(shared, &job, &runner, usize::MAX) };
        // After `Done` the cell may be freed: it is only touched again after a respawn's wake-up
        // (which took a new system reference).
        // (`ResumeLater` only comes when the system is dropped: the next wait sees ABORT.)
        if r == Resumable::Done && !destroyed {
            break;
        }
    }
    if shared.stats_on {
        counters.add_into(&shared.external);
    }
}
