//! Work stealing ("Work Stealing" in CAF's scheduler manual: the C++ Actor Framework manual,
//! section "Scheduler"; the deque discipline of Java's fork/join work stealing: Doug Lea, "A
//! Java Fork/Join Framework", 2000): every worker has a deque; a job a behaviour makes goes to
//! the owner's end of its worker's deque (LIFO, so the actor that was just sent a message runs
//! next, on the same core, with warm caches); thieves take the other end (FIFO, the oldest job)
//! of a random victim. (There is no private one-job slot in front of the deque, as tokio has,
//! though it is faster: a job in it is invisible to thieves, so it starves behind a job that never
//! ends — an actor whose mailbox other threads keep full, with unlimited `max_throughput` — while
//! the other workers sleep.)
//!
//! The deque is crossbeam's Chase-Lev deque (`crossbeam_deque::Worker::new_lifo`); jobs handed
//! to a worker from elsewhere (central and external enqueues, and jobs resumed later, which go
//! behind the work already there as in CAF) wait in the worker's *inbox*, a
//! `crossbeam_deque::Injector` that thieves may also take from. Every 61st dequeue looks at the
//! inbox first, and after 65,536 dequeues with the deque never empty its oldest job is taken,
//! so a stream of internal enqueues starves neither the inbox nor the bottom of the deque
//! (actors messaging each other in a loop re-enqueue themselves on top for ever; on one worker
//! nothing else would reach the bottom).
//!
//! Idle workers go through CAF's three polling tiers: *aggressive* (poll the own queues, steal
//! every `aggressive_steal_interval` polls, no sleep), *moderate* (steal every
//! `moderate_steal_interval` polls, sleep `moderate_sleep` between polls, or yield the core when it
//! is zero, the default) and *relaxed*. CAF's relaxed tier polls every 10 ms forever; here it
//! steals once, then falls into the idle sleep of the Cforall runtime (Thierry Delisle, PhD thesis,
//! Waterloo 2022, chapter "Scheduling in practice"; [`crate::policy::WorkerCtx::idle_sleep`]): an
//! idle system burns no CPU. Who wakes a sleeper: an external enqueue wakes the worker it targets,
//! or, if that worker is not asleep (it may be inside one long message), a sleeping one to steal
//! the job; a worker whose own deque holds a backlog (two or more jobs) wakes one sleeper to
//! steal; and a worker running a long job wakes one every `LONG_JOB_CHECK` messages or so while
//! anything waits in its deque or inbox ([`Policy::during_resume`]). A woken worker first searches
//! every worker once, so the job it was woken for is found at once, and if it finds one while
//! jobs wait elsewhere and others sleep, wakes the next (a notification hides the other sleepers
//! until the worker it woke has retired). A job in a deque belongs to a
//! worker that is running (it pushed it) and that either takes it when its current job ends or, if
//! that job is long, wakes a sleeper for it; a job in an inbox was followed by a notification of
//! the inbox's owner, or of a sleeper when the owner was awake. (Not covered: a job a behaviour
//! pushes on its own deque just before it runs long in the same message waits for that message,
//! as a job in a deque always belongs to a running worker; CAF's relaxed tier would find it
//! within 10 ms of polling.)

use super::policy::{Policy, Scheduler, WorkerCtx};
use crate::executor::mailbox::Job;
use crate::runtime::idle::SpinBudget;
use crate::runtime::rng::XorShift;
use crossbeam_deque::{Injector, Steal, Stealer, Worker as Deque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Dequeues between looks at the inbox ahead of the deque.
const INBOX_EVERY: u32 = 61;

/// Dequeues with the deque never found empty, after which its oldest job is taken (at the next
/// look at the inbox). Rare on purpose: LIFO order keeps a conversation on warm caches, and each
/// oldest job taken moves the worker to cold actors (taken often, it slows many-actor workloads
/// severalfold).
const OLDEST_AFTER: u32 = 65_536;

/// CAF's work-stealing policy, with CAF's tiers (`work-stealing.*` in CAF 0.17), except that the
/// relaxed tier sleeps until notified instead of polling every 10 ms, and so the moderate tier
/// is short by default (see [`WorkStealing::default`]).
///
/// ```
/// use actorium::{policy::WorkStealing, ActorSystem};
/// use std::time::{Duration, Instant};
/// let policy = WorkStealing::default()
///     .aggressive(100, 10)
///     .moderate(500, 5, Duration::from_micros(50));
/// let system = ActorSystem::builder().workers(2).policy(policy).build()?;
/// system.stop();
///
/// let bad = ActorSystem::builder().policy(WorkStealing::default().aggressive(100, 0)).build();
/// assert!(bad.unwrap_err().to_string().contains("steal interval"));
/// # Ok::<(), actorium::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkStealing {
    /// Polls in the aggressive tier (CAF: 100).
    pub aggressive_poll_attempts: usize,
    /// Steal every this many aggressive polls (CAF: 10).
    pub aggressive_steal_interval: usize,
    /// Polls in the moderate tier (CAF: 500; default 100).
    pub moderate_poll_attempts: usize,
    /// Steal every this many moderate polls (CAF: 5).
    pub moderate_steal_interval: usize,
    /// Sleep between moderate polls (CAF: 50 µs; default zero: yield the core instead).
    pub moderate_sleep: Duration,
    /// Whether each worker learns how much of the moderate tier pays (default `true`; CAF:
    /// no, its tiers are fixed). See [`WorkStealing::adaptive`].
    pub adaptive: bool,
}

/// The defaults: CAF's aggressive tier; a moderate tier of 100 polls that yields the core
/// between polls instead of CAF's 500 polls 50 µs apart. CAF polls that long because its relaxed
/// tier polls only every 10 ms; here the relaxed tier sleeps until a job is enqueued for it (a
/// wake-up of a few µs), so 25 ms of moderate polling after every burst would only burn CPU:
/// a sparse load would keep a core busy. The shorter tier leaves throughput unchanged within
/// noise. CAF's values: `.moderate(500, 5, Duration::from_micros(50))`.
impl Default for WorkStealing {
    fn default() -> Self {
        Self {
            aggressive_poll_attempts: 100,
            aggressive_steal_interval: 10,
            moderate_poll_attempts: 100,
            moderate_steal_interval: 5,
            moderate_sleep: Duration::ZERO,
            adaptive: true,
        }
    }
}

impl WorkStealing {
    /// Sets the aggressive tier: `attempts` polls, a steal every `steal_interval`.
    pub fn aggressive(mut self, attempts: usize, steal_interval: usize) -> Self {
        self.aggressive_poll_attempts = attempts;
        self.aggressive_steal_interval = steal_interval;
        self
    }

    /// Sets the moderate tier: `attempts` polls, a steal every `steal_interval`, `sleep`
    /// between polls.
    pub fn moderate(mut self, attempts: usize, steal_interval: usize, sleep: Duration) -> Self {
        self.moderate_poll_attempts = attempts;
        self.moderate_steal_interval = steal_interval;
        self.moderate_sleep = sleep;
        self
    }

    /// Whether each worker learns how much of the moderate tier to poll (default `true`),
    /// as the message-centric executor learns its spin (`runtime/idle/spin_budget.rs`): every sleep
    /// longer than the tier lasts (100 µs, or its polls times its sleep if longer) halves the
    /// tier's polls, down to none; a shorter sleep, or a moderate poll that finds a job,
    /// restores them. (The aggressive tier, a few µs of polls, is kept.) A worker woken only
    /// after long gaps (a quiet server) then sleeps at once, and wakes faster for it (the
    /// kernel favours a woken thread that used little CPU). `false` polls the full tiers
    /// after every job, as CAF does.
    ///
    /// ```
    /// use actorium::policy::WorkStealing;
    /// use std::time::{Duration, Instant};
    /// // CAF's tiers exactly.
    /// let caf = WorkStealing::default()
    ///     .moderate(500, 5, Duration::from_micros(50))
    ///     .adaptive(false);
    /// assert!(!caf.adaptive);
    /// ```
    pub fn adaptive(mut self, on: bool) -> Self {
        self.adaptive = on;
        self
    }

    /// How long the moderate tier lasts when it finds nothing (at least 100 µs: the default
    /// tier, 100 polls that yield, takes about 60-100 µs here).
    fn moderate_window(&self) -> Duration {
        let polls = u32::try_from(self.moderate_poll_attempts).unwrap_or(u32::MAX);
        self.moderate_sleep
            .saturating_mul(polls)
            .max(Duration::from_micros(100))
    }
}

/// Round-robin placement of central jobs.
#[derive(Debug)]
pub struct Coordinator {
    next: AtomicUsize,
}

/// A worker's queues as other threads reach them.
#[derive(Debug)]
pub struct Shared {
    stealer: Stealer<Job>,
    inbox: Injector<Job>,
}

/// A worker's own end of its deque, and its random state.
#[derive(Debug)]
pub struct Local {
    deque: Deque<Job>,
    rng: XorShift,
    ticks: u32,
    /// `ticks` when the deque was last found empty (see [`OLDEST_AFTER`]).
    last_empty: u32,
    /// The learned share of the moderate tier.
    moderate: SpinBudget,
}

fn take(inbox: &Injector<Job>) -> Option<Job> {
    loop {
        match inbox.steal() {
            Steal::Success(j) => return Some(j),
            Steal::Empty => return None,
            Steal::Retry => {}
        }
    }
}

/// The oldest job of a deque (its thieves' end), taken by its owner.
fn oldest(stealer: &Stealer<Job>) -> Option<Job> {
    loop {
        match stealer.steal() {
            Steal::Success(j) => return Some(j),
            Steal::Empty => return None,
            Steal::Retry => {}
        }
    }
}

fn steal_from(v: &Shared) -> Option<Job> {
    loop {
        match v.stealer.steal() {
            Steal::Success(j) => return Some(j),
            Steal::Empty => return take(&v.inbox),
            Steal::Retry => {}
        }
    }
}

/// The worker's own queues: the deque (owner end), then the inbox; every [`INBOX_EVERY`]
/// calls the inbox first, and before it, if [`OLDEST_AFTER`] calls passed since the deque was
/// last found empty, the deque's *oldest* job.
///
/// (Taking the oldest job then is what keeps LIFO from starving: actors that keep messaging
/// each other re-enqueue themselves on top of the deque for ever, and on one worker, with no
/// thief to take the bottom, a job below them would never run — a retry storm in
/// `sleeping-barber` would hang the barber's job. A job at depth `d` runs within about
/// `d × OLDEST_AFTER` dequeues.)
fn own(me: &mut WorkerCtx<'_, WorkStealing>) -> Option<Job> {
    let (inbox, stealer) = (&me.data().inbox, &me.data().stealer);
    let l = me.local();
    l.ticks = l.ticks.wrapping_add(1);
    if l.ticks % INBOX_EVERY == 0 {
        // (Checked here only, off the common path.)
        if l.ticks.wrapping_sub(l.last_empty) >= OLDEST_AFTER {
            l.last_empty = l.ticks;
            if let Some(j) = oldest(stealer) {
                return Some(j);
            }
        }
        take(inbox).or_else(|| l.deque.pop())
    } else {
        match l.deque.pop() {
            Some(j) => Some(j),
            None => {
                l.last_empty = l.ticks;
                take(inbox)
            }
        }
    }
}

/// One steal attempt from a random victim.
fn steal(me: &mut WorkerCtx<'_, WorkStealing>) -> Option<Job> {
    let n = me.scheduler().workers();
    if n < 2 {
        return None;
    }
    let i = me.index();
    let victim = me.local().rng.other_than(i, n);
    let got = steal_from(me.scheduler().worker(victim));
    if let Some(c) = me.counters() {
        c.steal_attempts.bump(1);
        match &got {
            Some(job) => {
                c.steals.bump(1);
                // SAFETY: we took the job and do not run it yet.
                let queued = unsafe { job.queued() } as u64;
                c.messages_stolen.bump(queued);
                if queued == 0 {
                    c.empty_steals.bump(1);
                }
            }
            None => c.steal_fail_no_candidate.bump(1),
        }
    }
    got
}

/// One polling tier: `attempts` polls of the own queues, a steal every `steal_interval`,
/// `pause` between polls.
fn poll_tier(
    me: &mut WorkerCtx<'_, WorkStealing>,
    attempts: usize,
    steal_interval: usize,
    pause: impl Fn(),
) -> Option<Job> {
    for i in 1..=attempts {
        if i % steal_interval == 0 {
            if let Some(j) = steal(me) {
                return Some(j);
            }
        }
        if let Some(j) = own(me) {
            return Some(j);
        }
        if me.tasks_waiting() {
            // Back to the worker's loop, which runs fork/join tasks; a steal first: the hint
            // stays up while a task's owner runs one whose siblings were all stolen, and the
            // jobs of the other workers must not wait behind it.
            return steal(me);
        }
        pause();
    }
    None
}

/// A worker that went idle (its search before sleeping found a job, or it woke from its
/// sleep) found a job while others sleep: if more wait in another worker's inbox, or two or
/// more in its deque (one is most often the next step of a conversation its owner is about to
/// run, as `internal_enqueue` judges), wake one sleeper for them, as tokio's searcher that
/// finds work wakes the next. A general notification hides the other sleepers until the
/// worker it picked has retired (`notify_any` swaps the first-idle word to "none"): an
/// external enqueue meanwhile to a worker inside one long job saw nobody asleep and woke
/// nobody. This worker has retired before it looks (the fence orders its look after that
/// store).
#[cold]
#[inline(never)]
fn wake_for_more(me: &mut WorkerCtx<'_, WorkStealing>) {
    std::sync::atomic::fence(Ordering::SeqCst);
    let (i, n) = (me.index(), me.scheduler().workers());
    let waiting = (1..n).any(|k| {
        let v = me.scheduler().worker((i + k) % n);
        !v.inbox.is_empty() || v.stealer.len() > 1
    });
    if waiting {
        me.scheduler().notify_any();
    }
}

/// The idle worker's exhaustive search: its own queues, then every other worker's.
fn search_all(me: &mut WorkerCtx<'_, WorkStealing>) -> Option<Job> {
    if let Some(j) = own(me) {
        return Some(j);
    }
    let (i, n) = (me.index(), me.scheduler().workers());
    (1..n).find_map(|k| steal_from(me.scheduler().worker((i + k) % n)))
}

#[cfg(not(feature = "unstable-policy"))]
impl super::policy::sealed::Implementable for WorkStealing {}

impl Policy for WorkStealing {
    type Coordinator = Coordinator;
    type Worker = Shared;
    type Local = Local;
    // Sends nothing, never asks for its worker: called without hiding it.
    const CALLED: super::policy::sealed::Called = super::policy::sealed::Called::WorkerVisible;

    fn coordinator(&self, _workers: usize) -> Coordinator {
        Coordinator {
            next: AtomicUsize::new(0),
        }
    }

    fn worker(&self, _: &Coordinator, index: usize) -> (Shared, Local) {
        let deque = Deque::new_lifo();
        let shared = Shared {
            stealer: deque.stealer(),
            inbox: Injector::new(),
        };
        (
            shared,
            Local {
                deque,
                rng: XorShift::for_worker(index),
                ticks: 0,
                last_empty: 0,
                moderate: SpinBudget::new(self.moderate_window(), self.adaptive),
            },
        )
    }

    fn central_enqueue(&self, s: &Scheduler<'_, Self>, job: Job) {
        let w = s.coordinator().next.fetch_add(1, Ordering::Relaxed) % s.workers();
        self.external_enqueue(s, w, job);
    }

    fn external_enqueue(&self, s: &Scheduler<'_, Self>, worker: usize, job: Job) {
        s.worker(worker).inbox.push(job);
        // A target that was not asleep takes the job when its current job ends, which may be
        // one long message: a sleeping worker, if any, is woken to steal it meanwhile. (A
        // target about to find it anyway costs the woken one a search.)
        if !s.notify(worker) && s.has_sleepers() {
            s.notify_any();
        }
    }

    fn internal_enqueue(&self, me: &mut WorkerCtx<'_, Self>, job: Job) {
        me.local().deque.push(job);
        // Two or more jobs waiting here: wake a sleeping thief (a lone job is most often the
        // next step of a conversation this worker is about to run). The sleeper hint first: it
        // is one relaxed load, the deque's length reads the end thieves write.
        if me.scheduler().has_sleepers() && me.local().deque.len() > 1 {
            me.scheduler().notify_any();
        }
    }

    /// Jobs wait behind a long job on this worker: wake a sleeping thief to take them (CAF's
    /// relaxed tier would find them by polling within 10 ms; ours sleeps). While a job stays
    /// unstolen this wakes one more sleeper per check; the woken worker's first search looks
    /// at every worker, so that is rare.
    fn during_resume(&self, me: &mut WorkerCtx<'_, Self>) {
        if me.scheduler().has_sleepers()
            && (!me.local().deque.is_empty() || !me.data().inbox.is_empty())
        {
            me.scheduler().notify_any();
        }
    }

    fn resume_job_later(&self, me: &mut WorkerCtx<'_, Self>, job: Job) {
        me.data().inbox.push(job);
    }

    fn dequeue(&self, me: &mut WorkerCtx<'_, Self>) -> Option<Job> {
        if let Some(j) = own(me) {
            return Some(j);
        }
        if let Some(j) = poll_tier(
            me,
            self.aggressive_poll_attempts,
            self.aggressive_steal_interval,
            std::hint::spin_loop,
        ) {
            // Polling paid (checked here too: a worker whose moderate tier shrank to nothing
            // may go on finding its work in this tier, and must get the tier back).
            me.local().moderate.paid();
            return Some(j);
        }
        // Fork/join tasks wait: back to the worker's loop, which runs them (after every tier;
        // a steal first, as in `poll_tier`).
        if me.tasks_waiting() {
            return steal(me);
        }
        let moderate = me.local().moderate.scale(self.moderate_poll_attempts);
        if let Some(j) = poll_tier(me, moderate, self.moderate_steal_interval, || {
            // A zero sleep yields the core instead (a sleep of zero would not).
            if self.moderate_sleep.is_zero() {
                std::thread::yield_now()
            } else {
                std::thread::sleep(self.moderate_sleep)
            }
        }) {
            me.local().moderate.paid();
            return Some(j);
        }
        if me.tasks_waiting() {
            return steal(me);
        }
        // Relaxed: steal once more, then sleep until notified (instead of CAF's 10 ms polls).
        if let Some(j) = steal(me) {
            me.local().moderate.paid();
            return Some(j);
        }
        // Woken: someone has work for us (our inbox, or a backlog somewhere): look everywhere
        // once rather than at one random victim per poll.
        let slept = Instant::now();
        let found = me.idle_sleep(search_all);
        me.local().moderate.slept(slept.elapsed());
        let found = found.or_else(|| search_all(me));
        if found.is_some() && me.scheduler().has_sleepers() {
            wake_for_more(me);
        }
        found
    }

    /// Internal enqueues go to the worker's own deque, resumed jobs to its own inbox.
    fn enqueues_locally(&self) -> bool {
        true
    }

    /// A removed worker's jobs — its deque and its inbox — go to the remaining workers.
    fn worker_removed(&self, me: &mut WorkerCtx<'_, Self>) {
        while let Some(job) = me.local().deque.pop() {
            self.central_enqueue(me.scheduler(), job);
        }
        while let Some(job) = take(&me.data().inbox) {
            self.central_enqueue(me.scheduler(), job);
        }
    }

    fn validate(&self) -> Result<(), String> {
        if self.aggressive_steal_interval == 0 || self.moderate_steal_interval == 0 {
            return Err(format!(
                "WorkStealing: a steal interval of 0 (aggressive {}, moderate {}); pass \
                 intervals >= 1 to `.aggressive(attempts, interval)` and `.moderate(attempts, \
                 interval, sleep)` (CAF's defaults: 10 and 5)",
                self.aggressive_steal_interval, self.moderate_steal_interval
            ));
        }
        Ok(())
    }
}
