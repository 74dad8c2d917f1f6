//! The actor-centric executor's unit of work on the runtime's worker loop, the policy calls,
//! the shutdown handshake, and driving by the caller.
//!
//! One turn: ask the policy for a job, run it for at most `max_throughput` messages, and tell
//! the policy how it ended (hooks, `resume_job_later`). The policy does its own idling inside
//! `dequeue` (polling tiers, then the runtime's idle sleep, or its own condition variable), so
//! a turn never reports the worker idle. A worker exits when it takes a shutdown job, or after
//! any turn once the system is being dropped (the cleanup owns the actors left).
//!
//! Policy code is user code: every call runs under `catch_unwind`, and with the worker hidden
//! (a send it makes is a central enqueue, never a second context of this worker), except the
//! built-in `WorkStealing` and `WorkSharing`, which send nothing and never ask for their worker
//! (`Policy::CALLED`: hiding it takes five thread-local swaps per job). A panic
//! in a hook (`before_resume`, `after_resume`, `during_resume`, `after_completion`) is reported
//! and counted, and the job goes on. A panic in a call that moves jobs (`dequeue`, the
//! enqueues, `resume_job_later`) may have lost a job, whose actor would then never run again:
//! the system *fails*: it aborts as if dropped (workers stop taking jobs, every wait returns;
//! live actors are stopped by the cleanup of the `stop()` or drop that follows), and the
//! report on standard error says why. No worker thread dies either way.
//!
//! Shutdown (after CAF's `shutdown_helper`): the coordinator hands a shutdown job to a worker
//! that has not exited yet, through the policy's `external_enqueue`, and waits until one more
//! worker has exited (with stealing it need not be the one it was given to); it repeats until
//! every worker has. So it works with any policy that eventually hands every job to some
//! worker. If the policy has failed and no worker exits for [`GIVE_UP`], the remaining threads
//! are left behind (reported), so that `stop()` and `Drop` still return; as they may be blocked
//! in the policy or still running a job, the system is then *abandoned*: its cleanup frees
//! nothing those threads could touch (actors, mailboxes, event fds), a leak that is reported.
//! (Waiting instead for threads running a job would take a fence per job, for a failure.)

use super::policy::sealed::Called;
use super::policy::Policy;
use super::Executor;
use crate::core::WorkerRef;
use crate::executor::mailbox::{self, Job, Resumable, Runner};
use crate::runtime::context::Enter;
use crate::runtime::idle::SpinBudget;
use crate::runtime::pool::{join_all, Pool};
use crate::runtime::worker::{run_left_tasks, Idleness, Turn, Unit, Worker};
use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long shutdown waits for a worker of a failed policy to exit before leaving it behind.
const GIVE_UP: Duration = Duration::from_secs(2);

/// A worker that takes another worker's leave request again and again with no job in between
/// waits this long before it passes it on a second time, doubling each time up to
/// [`FORWARD_WAIT_MAX`]. The leaving worker is inside a long behaviour, and with one shared
/// queue (work sharing) the request comes straight back: idle workers would pass it around at
/// full speed until the behaviour ends.
const FORWARD_WAIT: Duration = Duration::from_micros(10);
const FORWARD_WAIT_MAX: Duration = Duration::from_millis(1);

/// Whether a panic in a policy call may have lost a job.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Moves {
    /// A hook: nothing is lost; report and go on.
    Nothing,
    /// The call held a job: the system fails.
    Jobs,
}

impl<P: Policy> Unit for Executor<P> {
    type Slot = super::WorkerSlot<P>;
    /// Leave requests this worker passed on since its last job ([`FORWARD_WAIT`]).
    type Local = std::cell::Cell<u32>;

    fn pool(&self) -> &Pool<Self::Slot> {
        &self.pool
    }

    fn owner(&self) -> *const () {
        self.shared.id()
    }

    fn life(&self) -> &crate::runtime::life::Life {
        &self.shared.life
    }

    fn local(&self, _: usize) -> std::cell::Cell<u32> {
        std::cell::Cell::new(0)
    }

    fn turn(&self, me: &Worker<'_, Self>, _: &Idleness) -> Turn {
        let index = me.index;
        let job = self
            .policy_call("dequeue", Moves::Jobs, || {
                // SAFETY: this is worker `index`'s thread, and no other context of it is alive.
                self.policy.dequeue(&mut unsafe { self.ctx(index) })
            })
            .flatten();
        let Some(job) = job else {
            if self.shared.life.aborting() {
                return self.exit(index);
            }
            // The policy idles on its own: no spinning here, but a look for tasks.
            return Turn::Nothing;
        };
        if job.is_retire() {
            // A resize removed a worker: if it is this one, the loop's next turn sees it and
            // leaves; otherwise the request goes on to a worker still leaving, if any (after
            // a wait if this worker passed it on already, with no job since).
            let passed = me.local.get();
            me.local.set(passed.saturating_add(1));
            if passed > 0 {
                let wait = FORWARD_WAIT.saturating_mul(1 << (passed - 1).min(16));
                std::thread::sleep(wait.min(FORWARD_WAIT_MAX));
            }
            self.forward_retire(index);
            return Turn::Worked;
        }
        me.local.set(0);
        if job.is_shutdown() || self.shared.life.aborting() {
            return self.exit(index);
        }
        // SAFETY: on worker `index`'s thread, for a job the policy handed to it.
        unsafe { self.step(index, job, self.max_throughput, true) };
        Turn::Worked
    }

    fn search(&self, _: &Worker<'_, Self>) -> bool {
        false
    }

    fn exit_ready(&self) -> bool {
        false
    }

    /// The policy does its own idling (its `dequeue` polls and sleeps).
    fn spin(&self) -> SpinBudget {
        SpinBudget::new(Duration::ZERO, false)
    }

    fn failed(&self) -> bool {
        self.shared.life.failed()
    }

    fn closed(&self) -> bool {
        self.shared.life.closed()
    }

    /// A removed worker hands its jobs to the others ([`Policy::worker_removed`]) and counts
    /// as exited for the shutdown handshake.
    fn leave(&self, me: &Worker<'_, Self>) {
        let (p, index) = (&*self.policy, me.index);
        // Inside the worker's read section: a panic is kept for `left`, which handles it
        // outside (the report runs the user's event hook, whose sends may need the section).
        let r = Self::guarded(|| {
            // SAFETY: on worker `index`'s thread, between two turns: no other context of it.
            p.worker_removed(&mut unsafe { self.ctx(index) })
        });
        if let Err(p) = r {
            self.left_panics
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(p);
        }
        self.exited(index);
    }

    /// Out of the read section `leave` ran in: its panic, if any, is handled now.
    fn left(&self, _me: &Worker<'_, Self>) {
        let panics =
            std::mem::take(&mut *self.left_panics.lock().unwrap_or_else(|e| e.into_inner()));
        for p in panics {
            self.contain::<()>("worker_removed", Moves::Jobs, Err(p));
        }
    }

    /// Rows added back are no longer exited (their new threads take part in the shutdown
    /// handshake).
    fn resized(&self, old: usize, new: usize) {
        if new > old {
            let mut g = self.exited.lock().unwrap_or_else(|e| e.into_inner());
            for i in old..new {
                g.remove(&i);
            }
        }
    }

    /// Tells the policy of each worker added; hands each removed worker a request to leave
    /// (a job, so that it comes to a worker blocked in the policy's own queue too).
    fn after_resize(&self, old: usize, new: usize) {
        let p = &*self.policy;
        for i in old..new {
            self.policy_call("worker_added", Moves::Nothing, || {
                p.worker_added(&self.sched(), i)
            });
        }
        for i in new..old {
            self.policy_call("external_enqueue", Moves::Jobs, || {
                p.external_enqueue(&self.sched(), i, Job::retire())
            });
        }
    }
}

impl<P: Policy> Executor<P> {
    /// Runs policy code with panics caught, and the worker hidden unless the policy is a
    /// built-in one that sends nothing (see the module docs). `None` if it panicked.
    fn policy_call<R>(&self, what: &str, moves: Moves, f: impl FnOnce() -> R) -> Option<R> {
        self.contain(what, moves, Self::guarded(f))
    }

    /// [`Self::policy_call`]'s call, its panic returned rather than handled (for a caller that
    /// must handle it elsewhere: `leave`).
    fn guarded<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
        let _outside = (P::CALLED == Called::WorkerHidden).then(Enter::outside);
        catch_unwind(AssertUnwindSafe(f))
    }

    /// The handling of a policy call's outcome: a panic is reported and counted, and fails the
    /// system if the call moved jobs.
    #[inline]
    fn contain<R>(&self, what: &str, moves: Moves, r: std::thread::Result<R>) -> Option<R> {
        match r {
            Ok(r) => Some(r),
            Err(p) => {
                self.policy_panicked(what, moves, &*p);
                crate::core::drop_payload(p);
                None
            }
        }
    }

    /// A policy call panicked (kept out of line: every job makes several policy calls).
    #[cold]
    #[inline(never)]
    fn policy_panicked(&self, what: &str, moves: Moves, p: &(dyn std::any::Any + Send)) {
        self.shared.report_panic(
            None,
            &format!(
                "the scheduling policy `{}` (in `{what}`)",
                std::any::type_name::<P>()
            ),
            p,
        );
        self.shared.count(None, |c| &c.panics);
        if moves == Moves::Jobs {
            eprintln!(
                "actorium: a job may have been lost inside the scheduling policy, so its actor \
                 might never run again: the system aborts as if dropped (workers stop taking \
                 jobs and every wait returns; `stop` or dropping the system then stops the live \
                 actors)"
            );
            self.shared.life.fail();
            self.pool.wake_all();
        }
    }

    /// Worker `index` ends (shutdown, or a failed system): the tasks left in its deque run
    /// first, then it counts as exited for the shutdown handshake (which, for a failed system,
    /// gives up on workers that do not exit in time: a task that blocks is covered).
    fn exit(&self, index: usize) -> Turn {
        run_left_tasks();
        self.exited(index);
        Turn::Exit
    }

    /// A removed worker's leave request reached worker `me`: it goes on to another worker that
    /// is still leaving (none left: it was added back, or left already). (`me`, if it is
    /// leaving, leaves at the top of its loop; the request may be another's only way out of a
    /// policy's own blocking queue.)
    fn forward_retire(&self, me: usize) {
        if let Some(r) = self.pool.leaving().find(|&r| r != me) {
            let p = &*self.policy;
            self.policy_call("external_enqueue", Moves::Jobs, || {
                p.external_enqueue(&self.sched(), r, Job::retire())
            });
        }
    }

    /// A job was made for an actor: internal enqueue on one of our workers (inside a
    /// behaviour), central enqueue elsewhere. Inside a read section of the resize lock (the
    /// worker's own, or an outside thread's shared one), so that the worker the policy puts it
    /// on cannot be removed meanwhile: a job put on a worker after it handed over its jobs and
    /// left would never run.
    #[inline]
    pub(crate) fn schedule_job(&self, job: Job) {
        let p = &*self.policy;
        match self.current_worker() {
            Some(i) => self.policy_call("internal_enqueue", Moves::Jobs, || {
                // (Not needed when the policy keeps such jobs on this worker: it hands them
                // over itself when removed, after this job.)
                let _section = (!self.local_enqueues).then(|| self.pool.lock.read(i));
                // SAFETY: we are inside a behaviour run by worker `i`'s thread, whose loop
                // holds no context across the job.
                p.internal_enqueue(&mut unsafe { self.ctx(i) }, job)
            }),
            // Not on a worker: nothing to hide, only the panic to contain, once out of the
            // read section (the report runs the user's event hook, whose sends may need it).
            None => {
                let r = {
                    let _section = self.pool.lock.read_outside();
                    catch_unwind(AssertUnwindSafe(|| p.central_enqueue(&self.sched(), job)))
                };
                self.contain("central_enqueue", Moves::Jobs, r)
            }
        };
    }

    /// Runs one job with the policy's hooks around it.
    ///
    /// # Safety
    /// On worker `index`'s thread (or the driver's), for a job the policy handed to it.
    unsafe fn step(&self, index: usize, job: Job, max_throughput: usize, during: bool) {
        let p = &*self.policy;
        // The contexts below never overlap: each ends before the next is made, none lives across
        // the job (whose behaviours may make their own for internal enqueues, and whose runner
        // makes one between behaviours for `during_resume`), and policy code runs with the
        // worker hidden, so a send it makes cannot make another (the built-in policies, called
        // with the worker visible, send nothing).
        self.policy_call("before_resume", Moves::Nothing, || {
            // SAFETY: as just said; this is worker `index`'s thread.
            p.before_resume(&mut unsafe { self.ctx(index) }, &job)
        });
        // Between two behaviours of a long job: end the job if a resize removed this worker
        // (it goes on elsewhere, see `Runner::during`), else let the policy look around.
        let during_resume = || {
            if !self.pool.is_active(index) {
                return true;
            }
            self.policy_call("during_resume", Moves::Nothing, || {
                // SAFETY: between two behaviours; no other context of this worker is alive.
                p.during_resume(&mut unsafe { self.ctx(index) })
            });
            false
        };
        let runner = Runner {
            worker: WorkerRef {
                index,
                counters: self.pool.counters(index),
            },
            during: during.then_some(&during_resume as &dyn Fn() -> bool),
        };
        // SAFETY: the policy handed this job to this thread only (caller contract).
        let (r, _) = unsafe { mailbox::resume(&self.shared, &job, &runner, max_throughput) };
        self.policy_call("after_resume", Moves::Nothing, || {
            // SAFETY: the job has returned; no other context of this worker is alive.
            p.after_resume(&mut unsafe { self.ctx(index) }, &job, r)
        });
        match r {
            Resumable::ResumeLater => {
                self.policy_call("resume_job_later", Moves::Jobs, || {
                    // (The read section ends with the call, before a panic is reported: the
                    // report runs the user's event hook, whose sends may need it.)
                    let _section = (!self.local_enqueues).then(|| self.pool.lock.read(index));
                    // SAFETY: as above.
                    p.resume_job_later(&mut unsafe { self.ctx(index) }, job)
                });
            }
            Resumable::Done => {
                self.policy_call("after_completion", Moves::Nothing, || {
                    // SAFETY: as above.
                    p.after_completion(&mut unsafe { self.ctx(index) }, &job)
                });
            }
            Resumable::AwaitingMessage | Resumable::ShutdownExecutionUnit => {}
        }
    }

    /// Worker `index` exits.
    fn exited(&self, index: usize) {
        let mut g = self.exited.lock().unwrap_or_else(|e| e.into_inner());
        g.insert(index);
        self.exited_cv.notify_all();
    }

    /// The shutdown handshake (module docs), then joins the threads (`threads` holds each with
    /// its worker's row).
    pub(super) fn stop_workers(&self, threads: Vec<(usize, JoinHandle<()>)>) {
        let n = threads.len();
        // A worker counts as exited once it says so, or once its thread has ended: the
        // bookkeeping by row can miss a worker that left for the shutdown while a resize made
        // its row active again (the shutdown would then wait for ever); a thread that ended
        // cannot.
        let gone =
            |g: &BTreeSet<usize>, r: usize, h: &JoinHandle<()>| g.contains(&r) || h.is_finished();
        let done = |g: &BTreeSet<usize>| threads.iter().filter(|(r, h)| gone(g, *r, h)).count();
        let mut can_enqueue = true;
        let mut g = self.exited.lock().unwrap_or_else(|e| e.into_inner());
        while done(&g) < n {
            let before = done(&g);
            if can_enqueue {
                let Some(w) = threads
                    .iter()
                    .find(|(r, h)| !gone(&g, *r, h))
                    .map(|&(r, _)| r)
                else {
                    continue; // every one has gone since `done` was read
                };
                drop(g);
                can_enqueue = self
                    .policy_call("external_enqueue", Moves::Jobs, || {
                        self.policy
                            .external_enqueue(&self.sched(), w, Job::shutdown())
                    })
                    .is_some();
                g = self.exited.lock().unwrap_or_else(|e| e.into_inner());
            }
            let since = Instant::now();
            while done(&g) == before {
                if self.shared.life.failed() && since.elapsed() >= GIVE_UP {
                    break;
                }
                g = self
                    .exited_cv
                    .wait_timeout(g, Duration::from_millis(50))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            if done(&g) == before {
                // They may be blocked in the policy, or still running a job: the cleanup must
                // then free nothing they could touch (actors, mailboxes, event fds).
                self.shared.abandon();
                eprintln!(
                    "actorium: {} worker thread(s) did not exit after the scheduling policy `{}` \
                     failed and are left behind; the system's actors and resources are not \
                     cleaned up (leaked), so that those threads never touch freed memory",
                    n - done(&g),
                    std::any::type_name::<P>()
                );
                break;
            }
        }
        let exited: BTreeSet<usize> = g.clone();
        drop(g);
        let joinable = threads
            .into_iter()
            .filter(|(i, h)| exited.contains(i) || h.is_finished())
            .collect();
        join_all(joinable);
    }

    /// Caller-driven: runs one job, one message long (as CAF's test coordinator), on the
    /// calling thread; whether there was one.
    pub(super) fn run_one_job(&self) -> bool {
        assert!(
            self.current_worker().is_none(),
            "a behaviour of a caller-driven (testing) system waited for that system \
             (`JoinHandle::join`, `stop`, `run_once`): it would wait for itself"
        );
        let g = self.driver.lock().unwrap_or_else(|e| e.into_inner());
        if *g || self.shared.life.aborting() {
            return false; // stopped: nothing runs any more
        }
        let me = Worker::new(self, 0);
        let _enter = Enter::worker(&me);
        let job = self
            .policy_call("dequeue", Moves::Jobs, || {
                // SAFETY: caller-driven: no worker threads; `driver` serialises the callers.
                self.policy.dequeue(&mut unsafe { self.ctx(0) })
            })
            .flatten();
        let Some(job) = job else { return false };
        if job.is_shutdown() {
            return true;
        }
        // One message per step, as CAF's test coordinator runs them.
        // SAFETY: as above.
        unsafe { self.step(0, job, 1, false) };
        drop(g);
        true
    }
}
