//! The message-centric ("inverted") executor (seed 002, "CFA Executor", "Envelopes").
//!
//! M = workers × queues-per-worker message queues; every actor gets a queue *ticket* when
//! spawned (round-robin, then runs of consecutive spawns per queue, or a queue of its
//! spawner's worker), and all its messages go to that
//! queue, so messages between a pair of actors keep their order and an actor never runs two
//! behaviours at once. The ticket changes only when the actor moves, while none of its
//! behaviours runs, with what is queued for it (placement: `README.md`, "Placement"). Worker `i` owns a contiguous
//! range of the queue-pointer array and cycles through it, gulping queues (`README.md` here
//! explains the gulp and why it is safe).
//!
//! Two arrays, as the seed prescribes: senders use the stable [`WorkQueue`] objects (indexed by
//! ticket), workers use `slots`, an array of pointers to them. Queue stealing swaps entries of
//! `slots` between workers without senders noticing.
//!
//! Files: [`work_queue`] (lock, gulp, `being_processed`), [`swap`] (the wait-free queue swap),
//! [`ranges`] (how the slots are divided among workers), [`worker`] (the executor's unit of
//! work on the runtime's worker loop: visiting queues, the local fast path, stealing). This
//! executor uses the core and the runtime only.

pub(crate) mod ranges;
pub(crate) mod swap;
pub(crate) mod work_queue;
pub(crate) mod worker;

#[cfg(all(test, shuttle))]
mod shuttle_tests;

use crate::core::envelope::Envelope;
use crate::core::exec_ref::{ops_of, ExecOps};
use crate::core::mailbox::Mailbox;
use crate::core::{
    DetachedLink, ExecRef, Executor as Exec, Header, Placement, Shared, Sibling, Status,
    Undelivered,
};
use crate::runtime::loom::sync::atomic::AtomicPtr;
use crate::runtime::pool::{join_all, Pool, ResizeError};
use crate::runtime::stats::{Counter, Counters, Stats};
use crate::runtime::worker as rt;
use crossbeam_utils::CachePadded;
use std::io;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use work_queue::WorkQueue;
use worker::InvWorker;

/// This executor's table of operations, as a named static: its address tells the actor layer
/// that a cell belongs to this executor, whose send it then calls directly, inlined.
pub(crate) static OPS: ExecOps = ops_of::<Executor>();

/// Queue stealing (seed 002, "Work Stealing"): which victim an idle worker steals a queue from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum QueueStealing {
    /// No stealing: a worker only ever runs the queues it was given.
    None,
    /// A victim chosen uniformly at random among the other workers.
    Random,
    /// The worker that has gone longest without trying to steal (the busiest, most likely),
    /// by per-worker timestamps updated on every steal attempt.
    #[default]
    LongestVictim,
}

#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) workers: usize,
    /// The most workers a resize may give it (rows of the worker table).
    pub(crate) max_workers: usize,
    pub(crate) queues: usize,
    pub(crate) spin: Duration,
    /// Whether the spin window is learned (`runtime/idle/spin.rs`) or always `spin`.
    pub(crate) adaptive_spin: bool,
    pub(crate) stealing: QueueStealing,
}

/// What this executor keeps per worker in the worker table.
#[derive(Debug)]
pub(crate) struct WorkerSlot {
    /// The worker's range of the queue-pointer array, `start..end` (re-divided by resizes,
    /// under the resize lock's write side; read by the worker inside its read sections).
    start: AtomicUsize,
    end: AtomicUsize,
    /// When the worker last tried to steal (ns since `epoch`; `u64::MAX` while it sleeps), for
    /// the longest-victim heuristic. Written by its own worker only, when it tries to steal or
    /// goes to sleep or wakes, so a busy worker does no work here.
    last_steal: AtomicU64,
    /// Written by the worker as it runs (on a line of its own: the range above is read on
    /// every pass).
    pub(crate) busy: CachePadded<Busy>,
}

/// What a worker of this executor writes as it runs.
#[derive(Debug, Default)]
pub(crate) struct Busy {
    /// Twice the visits the worker began, plus one while it is in a visit (odd: visiting).
    /// Written by its own worker at the start and end of each visit while placement is on
    /// (with stealing off nobody reads it); read by thieves, which take a queue stuck behind
    /// a long behaviour or a very long visit (`worker.rs`, `stuck`).
    pub(crate) visits: AtomicU64,
    /// [`Stats::rescues`] and [`Stats::moves`] of this worker (with statistics on). Here
    /// rather than in the runtime's per-worker counters, which every executor shares: two
    /// more counters there moved the rest of the worker table's row, and the `big` workload
    /// ran 7 % slower.
    pub(crate) rescues: Counter,
    pub(crate) moves: Counter,
    /// [`Stats::holds`] of this worker (placement rule 7), here for the same reason.
    pub(crate) holds: Counter,
    /// [`Stats::deferred`] of this worker (its outbox), here for the same reason.
    pub(crate) deferred: Counter,
    /// Envelopes this worker has run (taken from its batch), written by the worker as it
    /// takes each one while placement is on; read by thieves, which see from it one long
    /// behaviour (`worker.rs`, `stuck` and `ask_split`), only when this worker has been in
    /// one visit for `STUCK_AFTER`, and by an idle worker deciding whether to watch. On a
    /// cache line of its own: on the line of `visits`, which thieves read at every steal
    /// attempt, the store made for every envelope missed the cache (`chameneos` 1.3x slower).
    pub(crate) ran: CachePadded<AtomicU64>,
    /// The value of `ran` at which the batch this worker last gulped ends (envelopes a
    /// behaviour appends to it not counted), written at each gulp while placement is on: an
    /// idle worker that sees `ran` below it knows mail waits behind the running behaviour,
    /// where no steal can reach it, and keeps a rescue watch (`worker.rs`, `mail_elsewhere`).
    pub(crate) behind: AtomicU64,
    /// Set by a thief that found this worker in one behaviour for [`worker::STUCK_AFTER`]: `ran`
    /// as the thief saw it, plus one (0: no request). It cannot see what the held queue
    /// holds; this worker splits it at its next spawn or out-of-line send in that behaviour,
    /// or right after it (`worker.rs`, `ask_split` and `split_current`).
    pub(crate) split: AtomicU64,
}

impl WorkerSlot {
    /// The worker's range of slots (see [`Executor::range`]).
    #[inline]
    pub(crate) fn range(&self) -> Range<usize> {
        self.start.load(Ordering::Relaxed)..self.end.load(Ordering::Relaxed)
    }

    fn new(range: Range<usize>) -> Self {
        Self {
            start: AtomicUsize::new(range.start),
            end: AtomicUsize::new(range.end),
            last_steal: AtomicU64::new(0),
            busy: CachePadded::default(),
        }
    }
}

pub(crate) struct Executor {
    /// Stable queue objects, indexed by ticket: what senders use.
    queues: Box<[CachePadded<WorkQueue>]>,
    /// The queue-pointer array: what workers cycle through (and thieves swap).
    slots: Box<[AtomicPtr<WorkQueue>]>,
    pub(crate) pool: Pool<WorkerSlot>,
    ticket: CachePadded<AtomicUsize>,
    /// The ranges that [`spawn_queue`] deals runs of spawns to: the workers the queues were
    /// first split among without queue stealing, else one (queue after queue).
    spawn_ranges: usize,
    /// Workers in a rescue watch (a time-limited sleep, see `worker.rs`).
    watching: CachePadded<AtomicUsize>,
    pub(crate) shared: Arc<Shared>,
    spin: Duration,
    adaptive_spin: bool,
    pub(crate) stealing: QueueStealing,
    /// `stealing` is on: so are the placement rules built on it (children next to their
    /// parent, actors following their senders, the rescue of stuck mail, splits). A flag of its own,
    /// read on the send path.
    pub(crate) placing: bool,
    epoch: Instant,
    /// The system's executor for detached actors (set once, right after start).
    detached: DetachedLink,
}

impl Executor {
    /// The executor and its worker table; no thread runs yet ([`Self::start`] starts them).
    pub(crate) fn new(cfg: &Config, shared: Arc<Shared>) -> io::Result<Self> {
        let ranges = ranges::partition(cfg.queues, cfg.workers);
        let queues: Box<[_]> = (0..cfg.queues)
            .map(|q| CachePadded::new(WorkQueue::new(q, ranges::owner_of(&ranges, q))))
            .collect();
        let slots = queues
            .iter()
            .map(|q| AtomicPtr::new(&**q as *const WorkQueue as *mut WorkQueue))
            .collect();
        let pool = Pool::new(cfg.workers, cfg.max_workers, shared.stats_on, |i| {
            WorkerSlot::new(ranges[i].clone())
        })?;
        Ok(Self {
            queues,
            slots,
            pool,
            ticket: CachePadded::new(AtomicUsize::new(0)),
            // Runs dealt to the workers in turn only where nothing can move them.
            spawn_ranges: if cfg.stealing == QueueStealing::None {
                cfg.workers
            } else {
                1
            },
            watching: CachePadded::new(AtomicUsize::new(0)),
            shared,
            spin: cfg.spin,
            adaptive_spin: cfg.adaptive_spin,
            stealing: cfg.stealing,
            placing: cfg.stealing != QueueStealing::None,
            epoch: Instant::now(),
            detached: DetachedLink::default(),
        })
    }

    /// Builds the executor and starts its worker threads; cells reach it through the returned
    /// reference, whose table is [`OPS`].
    pub(crate) fn start_ref(cfg: &Config, shared: Arc<Shared>) -> io::Result<ExecRef> {
        let exec = Self::start(cfg, shared)?;
        // SAFETY: `OPS` is `ops_of::<Executor>()`.
        Ok(unsafe { ExecRef::from_arc_with(exec, &OPS) })
    }

    /// Builds the executor and starts its worker threads.
    pub(crate) fn start(cfg: &Config, shared: Arc<Shared>) -> io::Result<Arc<Self>> {
        let exec = Arc::new(Self::new(cfg, shared)?);
        // The pool keeps the body for the workers a resize adds: a weak reference, so the
        // executor does not own itself; each thread holds a strong one while it runs.
        let weak = Arc::downgrade(&exec);
        let body = move |i| {
            if let Some(e) = weak.upgrade() {
                crate::runtime::worker::run(&*e, i)
            }
        };
        if let Err(err) = exec.pool.spawn(body) {
            exec.shared.close(false);
            exec.begin_shutdown(false);
            exec.join_threads(false);
            exec.cleanup();
            return Err(err);
        }
        Ok(exec)
    }

    /// The queue in worker slot `slot`, or `None` while a thief is swapping it.
    #[inline]
    pub(crate) fn slot(&self, slot: usize) -> Option<&WorkQueue> {
        // SAFETY: non-null slots always point into `self.queues`, which lives as long as `self`.
        unsafe { self.slots[slot].load(Ordering::Acquire).as_ref() }
    }

    pub(crate) fn slots(&self) -> &[AtomicPtr<WorkQueue>] {
        &self.slots
    }

    /// Worker `w`'s range of slots. Written by a resize in its write section; read without a
    /// lock by the worker's passes and searches (a range read while a resize runs may be
    /// stale, or mixed, which costs at most a wasted look: see `worker.rs`), and inside read
    /// sections by thieves.
    #[inline]
    pub(crate) fn range(&self, w: usize) -> Range<usize> {
        self.pool.data(w).range()
    }

    /// Records that worker `w` is trying to steal now. The stamps below are kept only for the
    /// longest-victim heuristic, the only reader.
    pub(crate) fn stamp_steal(&self, w: usize) {
        if self.stealing != QueueStealing::LongestVictim {
            return;
        }
        let now = self.epoch.elapsed().as_nanos() as u64;
        self.pool.data(w).last_steal.store(now, Ordering::Relaxed);
    }

    /// Records that worker `w` is going to sleep, returning its steal timestamp (to restore
    /// with [`Self::stamp_awake`]). A sleeping worker has no queue worth stealing (it just
    /// searched its range under the locks and found nothing), so until it wakes it counts as
    /// the most recent thief. Without this the seed's heuristic, made for workers that never
    /// sleep, picks sleepers (their timestamp ages) over the busy worker whose queues hold the
    /// backlog (seen in `stolen_queues_keep_every_guarantee`: 81 attempts with 3 workers, none
    /// finding a candidate).
    pub(crate) fn stamp_asleep(&self, w: usize) -> u64 {
        if self.stealing != QueueStealing::LongestVictim {
            return 0;
        }
        self.pool
            .data(w)
            .last_steal
            .swap(u64::MAX, Ordering::Relaxed)
    }

    /// Worker `w` woke up: it gets back the timestamp of its last steal attempt (it may wake
    /// to a backlog, and is then a good victim again).
    pub(crate) fn stamp_awake(&self, w: usize, stamp: u64) {
        if self.stealing != QueueStealing::LongestVictim {
            return;
        }
        self.pool.data(w).last_steal.store(stamp, Ordering::Relaxed);
    }

    /// The longest victim: the other worker with the oldest steal timestamp.
    pub(crate) fn longest_victim(&self, me: usize) -> usize {
        longest_victim(
            self.pool
                .iter()
                .map(|s| s.last_steal.load(Ordering::Relaxed)),
            me,
        )
    }

    #[inline]
    pub(crate) fn aborting(&self) -> bool {
        self.shared.life.aborting()
    }

    /// Enqueues `env` for the actor with header `hdr`. Fails, giving the envelope back, when the
    /// actor no longer accepts messages.
    ///
    /// The fast path: a behaviour sending to an actor of the queue its worker is processing
    /// appends to the worker's local batch with no lock (bounded per visit, see `worker`).
    /// Otherwise: lock the queue, check the actor is alive (under the lock, so a send can never
    /// slip in behind the actor's reclaim envelope), append, unlock, and notify the queue's owner
    /// unless it is the calling worker (idle-sleep handshake, step two for the notifier).
    #[inline(always)]
    pub(crate) fn push_envelope(&self, hdr: &Header, env: Envelope) -> Result<(), Envelope> {
        self.push_envelope_with(hdr, || env)
    }

    /// Whether spawns from outside that feed each actor as they spawn it are spread one per
    /// queue ([`LAST_SPAWN`]): runs are dealt to several ranges (no queue stealing, more than
    /// one worker). Read on the send path of outside threads.
    #[inline(always)]
    fn spreads_fed(&self) -> bool {
        self.spawn_ranges > 1
    }

    /// [`Self::push_envelope`] with the envelope made by `make` only once the path is chosen,
    /// so the local path builds it where it stores it (built first, it went through the stack,
    /// and a self-send took 15.7 ns instead of 10.8: a stalled store forwarding on its copy).
    #[inline(always)]
    pub(crate) fn push_envelope_with(
        &self,
        hdr: &Header,
        make: impl FnOnce() -> Envelope,
    ) -> Result<(), Envelope> {
        // SAFETY: `me` is used during this call only.
        let me = unsafe { worker::current_of(self) };
        if let Some(w) = me {
            if w.local.try_push_local(hdr) {
                // SAFETY: `try_push_local` checked the local path applies; the envelope moves in.
                unsafe { w.local.push_local(make()) };
                self.count(me, |c| &c.messages_sent);
                return Ok(());
            }
            let t = hdr.queue();
            if w.local.deferring(t) {
                // Into the outbox (`README.md`, "Sends into a backlog"). The actor's ticket
                // names `t` (none leaves a pinned queue, and it was read after the pin), and
                // its cell stays allocated until the flush (its reclaim envelope is parked
                // while the queue is pinned).
                if hdr.status() != Status::Alive {
                    return Err(make());
                }
                // SAFETY: on this thread, and `deferring(t)` returned true.
                unsafe { w.local.defer(t, make()) };
                self.deferred(w, t);
                self.count(me, |c| &c.messages_sent);
                return Ok(());
            }
            // A send for the held queue that goes to the shared queue (budget spent, or the
            // target not yet installed) closes the local path for the rest of the visit, so no
            // later send can overtake it.
            w.local.close_local(t);
        } else if self.spreads_fed() {
            note_fed(hdr);
        }
        self.push_shared(hdr, make, me)
    }

    /// An envelope went to the outbox, for queue `t` (`README.md`, "Sends into a backlog"):
    /// a hand-off (placement rule 7), and the outbox's envelopes for `t` are queued now if
    /// they are [`DEFER_FLUSH`] ([`Self::flush_full`]).
    #[inline(always)]
    fn deferred(&self, w: &InvWorker<'_>, t: usize) {
        rt::note_handoff();
        if w.local.deferred_len(t) >= DEFER_FLUSH {
            self.flush_full(w, t);
        }
    }

    /// A behaviour's send left a backlog of [`DEFER_BACKLOG`] envelopes or more in queue `q`:
    /// `q` is another worker's: if this worker is in a visit of another queue, pins it
    /// (`README.md`, "Sends into a backlog"), so that this worker's next sends to its actors
    /// go to the outbox until the flush. Under the lock, while the backlog is there. After
    /// the pin no actor leaves the queue, so the tickets this worker reads until its flush
    /// stay true; and no reclaim envelope is queued for its actors, so their cells stay
    /// allocated until the flush.
    #[cold]
    #[inline(never)]
    fn pin(&self, w: &InvWorker<'_>, q: &WorkQueue) {
        if !w.local.may_defer(q.id) || w.local.deferring(q.id) {
            return;
        }
        let g = q.lock();
        if g.len() < DEFER_BACKLOG {
            return;
        }
        g.pin();
        drop(g);
        w.local.note_pinned(q.id);
    }

    /// The outbox holds [`DEFER_FLUSH`] envelopes for queue `t`: they are queued now, in the
    /// middle of the behaviour (a long behaviour that floods a queue feeds it as it goes, and
    /// the outbox stays small). The pin stays. Also a point where this worker may split the
    /// queue it holds, if asked, as at a send into an empty queue.
    #[cold]
    #[inline(never)]
    fn flush_full(&self, w: &InvWorker<'_>, t: usize) {
        self.queue_kept(w, t, false);
        if self.split_asked(w) {
            self.split_current(w, false);
        }
    }

    /// The send path through the queue's lock (every send but a local one). The envelope is
    /// made where it goes, as on the local path (made first, it went through the stack before
    /// each path took it). Placement (`README.md`, "Placement") looks only at sends into an
    /// empty queue, and at actors that moved: out of line, so that a send into a backlog (a
    /// saturated workload) costs two loads more than without placement.
    #[inline(always)]
    fn push_shared(
        &self,
        hdr: &Header,
        make: impl FnOnce() -> Envelope,
        me: Option<&InvWorker<'_>>,
    ) -> Result<(), Envelope> {
        let q = &self.queues[hdr.queue()];
        let g = q.lock();
        if hdr.status() != Status::Alive {
            return Err(make());
        }
        // (`count` is exact under the lock; the ticket changes only under this lock.)
        if self.placing && (q.looks_empty() || hdr.queue() != q.id) {
            return self.push_placing(q, g, hdr, make(), me);
        }
        let n = g.push_counted(make());
        drop(g);
        rt::note_handoff();
        let owner = q.owner();
        if me.is_none_or(|w| w.index != owner) {
            // Into another worker's backlog, from a behaviour: maybe pin the queue.
            if let Some(w) = me.filter(|_| n >= DEFER_BACKLOG) {
                self.pin(w, q);
            }
            if self.pool.notify(owner) {
                self.count(me, |c| &c.wakeups);
            }
        }
        self.count(me, |c| &c.messages_sent);
        Ok(())
    }

    /// The rest of [`Self::push_shared`] when placement is on and the actor's queue (locked as
    /// `g`) was empty, or the actor moved since its ticket was read: follows the actor to its
    /// queue (its ticket changes only under the lock of the queue it leaves), moves it here if
    /// it follows this sender ([`follows`], [`Self::move_here`]), queues the envelope, and
    /// notifies (including the rescue watch of [`Self::pushed_own`]).
    #[inline(never)]
    fn push_placing<'q>(
        &'q self,
        mut q: &'q WorkQueue,
        mut g: work_queue::Locked<'q>,
        hdr: &Header,
        env: Envelope,
        me: Option<&InvWorker<'_>>,
    ) -> Result<(), Envelope> {
        // A point where this worker may split the queue it holds, if asked (out of the common
        // send path: a send into an empty queue, or to an actor that moved). The lock taken
        // for this send is released first, and the ticket re-read after.
        if let Some(w) = me.filter(|w| self.split_asked(w)) {
            drop(g);
            self.split_current(w, false);
            g = q.lock();
            if hdr.status() != Status::Alive {
                return Err(env);
            }
        }
        while hdr.queue() != q.id {
            drop(g);
            q = &self.queues[hdr.queue()];
            g = q.lock();
            if hdr.status() != Status::Alive {
                return Err(env);
            }
        }
        if let Some(w) = me {
            let from = w.local.current_or_max();
            if from < q.id && q.looks_empty() && follows(&g, hdr, w, from) {
                match self.move_here(w, from, hdr, &g) {
                    Moved::Batch => {
                        drop(g);
                        // SAFETY: `move_here` checked the local path applies (the held queue
                        // is now the actor's, it is installed, budget is left).
                        unsafe { w.local.push_local(env) };
                        self.count(me, |c| &c.messages_sent);
                        return Ok(());
                    }
                    Moved::To(g2) => {
                        drop(g);
                        g2.push(env);
                        let to = g2.queue();
                        drop(g2);
                        self.notify_owner(to, me);
                        self.count(me, |c| &c.messages_sent);
                        return Ok(());
                    }
                    Moved::No => {}
                }
            }
        }
        g.push(env);
        drop(g);
        self.notify_owner(q, me);
        self.count(me, |c| &c.messages_sent);
        Ok(())
    }

    /// Moves the actor of `hdr` from its queue (locked as `old`) into the queue whose batch
    /// the sending worker `me` is processing. If that batch still takes local sends this
    /// visit, the caller appends the message to it (`Moved::Batch`), and from then on the two
    /// actors talk through the local fast path; otherwise the message goes to that queue's
    /// shared part (`Moved::To`, returned locked), and the local path stays closed for the
    /// rest of the visit, as for any send to the held queue that goes there. Called when the
    /// sender's actors have been handing this actor messages one at a time ([`follows`]):
    /// `old` is empty and not being processed, so no message for the actor is queued or in a
    /// batch and none of its behaviours runs, and the move changes no order. Gives up
    /// (`Moved::No`) when the held queue's lock is taken (no waiting with `old` held: two
    /// movers could wait for each other). `c` is the queue `me` processes.
    ///
    /// The other actors of `old` come along when there are at most [`MERGE_MAX`] of them
    /// (`README.md`, "Placement", rule 2's merge): they are in the same state (nothing queued
    /// for them, no behaviour running, no outbox holding mail for them, both lists locked), so
    /// moving each is the move above, and a sender that read an old ticket follows it the
    /// same way.
    #[cold]
    #[inline(never)]
    fn move_here<'q>(
        &'q self,
        me: &InvWorker<'_>,
        c: usize,
        hdr: &Header,
        old: &work_queue::Locked<'_>,
    ) -> Moved<'q> {
        let l = &me.local;
        if old.pinned() {
            // A worker's outbox may hold mail for the actor, bound for `old`.
            return Moved::No;
        }
        let to = &self.queues[c];
        let Some(g) = to.try_lock() else {
            return Moved::No;
        };
        // SAFETY: the actor is registered (alive), so its link is on `old`'s list; both
        // lists' locks are held.
        unsafe {
            old.unlink(&hdr.link);
            g.link(&hdr.link);
        }
        hdr.move_to_queue(c);
        // The actors left in `old`, if few, come along (rule 2's merge).
        let others = old.move_actors_if_at_most(&g, MERGE_MAX, |link| {
            // SAFETY: links on a queue's list are the `link` field of a live cell's header.
            unsafe { Header::from_link(link) }.move_to_queue(c);
        });
        let moved = 1 + others.unwrap_or(0) as u64;
        if self.pool.stats_on() {
            self.pool.data(me.index).busy.moves.bump(moved);
        }
        // The local path stays open only if the held queue's shared part is empty. A moved
        // actor brings its history: what it sent to actors of this queue before the move is
        // in the held batch or in the shared part (its last behaviour's worker flushed its
        // outbox before its visit ended, and its old queue is idle). Sent through the local
        // path, its next messages would run before those still in the shared part.
        if l.can_push_local(c) && hdr.installed() && g.len() == 0 {
            Moved::Batch
        } else {
            l.close_local(c);
            Moved::To(g)
        }
    }

    /// Counts `n` envelopes queued from `w`'s outbox, if statistics are on.
    #[inline]
    pub(crate) fn count_deferred(&self, w: &InvWorker<'_>, n: usize) {
        if self.pool.stats_on() {
            w.local.row().busy.deferred.bump(n as u64);
        }
    }

    /// Counts one event, if statistics are on, in the calling worker's counters (`me`) or the
    /// shared outside block.
    #[inline]
    fn count(&self, me: Option<&InvWorker<'_>>, pick: fn(&Counters) -> &Counter) {
        if self.pool.stats_on() {
            self.shared.count(me.and_then(|w| w.counters()), pick);
        }
    }

    /// Step two of the notifier's side of the idle-sleep handshake, after an envelope was
    /// published under `q`'s lock: wake `q`'s owner unless it is the calling worker (which is
    /// running, and will reach `q` before it could sleep).
    ///
    /// A send or spawn by the owner itself notifies nobody, and a notification finds a busy
    /// owner awake and does nothing; either way the owner may be in a long behaviour: see
    /// [`Self::pushed_own`].
    #[inline(always)]
    fn notify_owner(&self, q: &WorkQueue, me: Option<&InvWorker<'_>>) {
        rt::note_handoff();
        let owner = q.owner();
        match me {
            Some(w) if w.index == owner => {
                if self.placing && !w.local.is_current(q.id) {
                    self.pushed_own()
                }
            }
            _ => {
                if self.pool.notify(owner) {
                    self.count(me, |c| &c.wakeups);
                } else if self.placing {
                    self.pushed_own()
                }
            }
        }
    }

    /// Mail was published in a queue whose owner is running: the caller itself (a send or
    /// spawn into one of its own queues but the one it processes), or a worker the
    /// notification found awake. The mail waits behind whatever the owner runs now, which may
    /// be a long behaviour: if some worker is idle and none is watching for that (a rescue
    /// watch, `worker.rs`), wake one so that it does. Two loads when no worker is idle. No mail is missed: an idle
    /// worker's look before a watch takes every queue's lock; if it took `q`'s after this
    /// push it saw the mail, and if before, this push (its lock acquired after that release)
    /// sees the worker announced idle and its watch count.
    #[inline]
    fn pushed_own(&self) {
        if self.pool.has_idle() && self.watching.load(Ordering::Relaxed) == 0 {
            self.pool.notify_any();
        }
    }

    /// After the workers have exited: stop every actor still alive, dispose of every envelope
    /// still queued, release every system reference. Single-threaded.
    fn cleanup_queues(&self) {
        // 1. Actors still alive stop accepting messages (sends now fail), in one pass.
        let mut stopped = Vec::new();
        for q in self.queues.iter() {
            let g = q.lock();
            for link in g.take_actors() {
                // SAFETY: links on a queue's list are the `link` field of a live cell's header.
                let hdr = unsafe { Header::from_link(link) };
                hdr.set_status(Status::Stopped);
                stopped.push(hdr as *const Header);
            }
        }
        // 2. Queued envelopes are discarded (message drops may run user code; no lock is held),
        //    the messages among them reported as dead letters after a graceful end.
        let mut undelivered = Undelivered::default();
        self.discard_queued(Some(&mut undelivered));
        // 3. The stopped actors' states are dropped and the system's references released.
        for hdr in stopped {
            // SAFETY: each was taken off a list above, exactly once, and its system reference is
            // still held (its reclaim envelope was never queued: it was not retired).
            unsafe { Header::shutdown(hdr) };
            self.shared.life.stopped();
        }
        // 4. Every actor is terminal now, so nothing new can be queued; this pass is a guard
        //    for envelopes that step 3's user destructors might have produced.
        self.discard_queued(None);
        self.shared.report_undelivered(undelivered);
    }

    /// Disposes of every queued envelope, counting the messages in `undelivered` if given.
    fn discard_queued(&self, mut undelivered: Option<&mut Undelivered>) {
        loop {
            let mut any = false;
            for q in self.queues.iter() {
                let g = q.lock();
                // Every worker flushed its outbox (and took its pins) before it exited.
                debug_assert!(!g.pinned(), "a queue is still pinned at shutdown");
                let mut batch = g.take_all();
                drop(g);
                any |= !batch.is_empty();
                if let Some(u) = undelivered.as_deref_mut() {
                    // SAFETY: a queued envelope's cell is alive until its reclaim envelope,
                    // queued behind its messages, is disposed of (below, in order), or until
                    // step 3 for the actors stopped here.
                    unsafe { u.count(&batch) };
                }
                batch.discard_all();
            }
            if !any {
                break;
            }
        }
    }
}

/// Consecutive spawns from outside the workers that share a queue, once every queue has had
/// one (see [`spawn_queue`]).
pub(crate) const SPAWN_RUN: usize = 64;

/// An actor that follows its sender (placement rule 2) takes the other actors of its queue
/// along when there are at most this many: a queue that few actors share holds a group that
/// earlier moves gathered (or one of the first spawns), and its members talk to each other.
/// Moved one at a time, a chain spread over many queues gathered one link every
/// [`FOLLOW_AFTER`](worker::FOLLOW_AFTER) rounds, crossing workers meanwhile. A queue of more
/// holds runs of spawns from outside ([`SPAWN_RUN`]): independent actors, left where they are.
pub(crate) const MERGE_MAX: usize = SPAWN_RUN / 2;

/// A behaviour's send that leaves at least this many envelopes in another worker's queue
/// pins that queue ([`Executor::pin`]), and the worker's further sends there wait in its
/// outbox until its next flush (`README.md`, "Sends into a backlog"): mail that waits behind
/// a backlog anyway is queued in bulk, one lock per flush instead of one per send. (8 measured
/// no better on 2 workers, and a message kept without a backlog before it may be the one its
/// receiver waits for.)
pub(crate) const DEFER_BACKLOG: usize = 32;

/// An outbox's envelopes for one queue are queued as soon as they are this many, without
/// waiting for the flush (a behaviour that floods a queue feeds it as it goes).
pub(crate) const DEFER_FLUSH: usize = 64;

/// Where [`Executor::retire`] put an actor's reclaim envelope.
enum Retired {
    /// At the end of the batch this worker holds.
    Local(Envelope),
    /// In the actor's queue.
    Queued,
    /// Parked in its pinned queue, for the last unpin to queue.
    Parked,
}

/// The queue of the `k`-th spawn from outside the workers, among `m` queues split into the
/// ranges of `w` workers (`ranges::partition`): the seed's round-robin (`k mod m`) while
/// `k < m`, so that the first actors of a program, often few and independent, each get a queue
/// of their own that idle workers can take; after that, runs of [`SPAWN_RUN`] consecutive
/// spawns per queue, the runs dealt to the `w` ranges in turn (run `r` to range `r mod w`,
/// the next queue of that range each time it comes round). With `w = 1`, queue after queue.
///
/// Why runs: actors spawned one after the other are usually built to talk to each other (a
/// group, a ring, a pipeline, a server's clients), and those that share a queue exchange
/// messages on the local path of a visit, with no lock, in one batch. Spread one per queue,
/// every message between them took a queue lock and a separate gulp, and consecutive
/// receivers sat in different batches, far apart in memory (measurements: `README.md`,
/// "Placement", rule 5). The executor deals runs to the workers in turn only without queue
/// stealing: filled queue after queue, the runs go to worker 0's range first (1,008 of
/// `matrix`'s 1,024 rows on 2 workers), which stealing evens out as work piles up, but which
/// without it left the other workers idle. With stealing, queue after queue keeps more of a
/// group that spans two runs on one worker (dealt in turn, hub workloads were 1.09–1.15×
/// slower). Independent actors that share a queue are still parallel: queue stealing takes
/// queues whole, and an actor stuck behind a long behaviour in its queue is split off
/// (placement rule 4).
#[inline]
pub(crate) fn spawn_queue(k: usize, m: usize, w: usize) -> usize {
    if k < m {
        return k;
    }
    let run = (k - m) / SPAWN_RUN;
    if w == 1 {
        // Queue after queue (the default, with stealing): one division, not four.
        return run % m;
    }
    let range = ranges::range_of(m, w, run % w);
    range.start + run / w % range.len()
}

std::thread_local! {
    /// Without queue stealing, on a thread outside the workers: the header address of the
    /// actor this thread spawned last, its low bit set once this thread sent that actor a
    /// message (`note_fed`; headers are aligned to at least 4). Only compared, never read
    /// through: an actor freed and another allocated at its address, or the same thread
    /// spawning on two systems, can only mistake one placement. An actor fed as soon as it is
    /// spawned, before the next spawn, is most often an independent job (a row of `matrix`, a
    /// worker of `fork-join-creation`), not a member of a group that will talk: the next spawn then
    /// takes the seed's round-robin, one queue after the other across the workers' ranges,
    /// instead of [`spawn_queue`]'s runs. (In a run, the spawning thread pushed into the queue
    /// that its worker was draining and retiring actors from, under the same lock, actor after
    /// actor: `fork-join-creation`, 2 workers, 1.07-1.19x the round-robin's time. And runs of
    /// 64 split `matrix`'s 1,024 rows 528/496 between two workers.) Groups are spawned first
    /// and wired or started after (`executor`, `repeat`, `balance-*`): they keep their runs.
    /// A group whose members are each sent a message as they are spawned is spread like jobs
    /// (as the seed places every actor); spawn the group first, then send. Any send counts,
    /// an `ask` or a monitor's request too.
    static LAST_SPAWN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A send from outside the workers to `hdr` (queue stealing off): marks the thread's last
/// spawn fed if `hdr` is that actor. Inline, in the branch of outside sends: made a call
/// (out of line, cold or not), it made the send sites it is inlined into slower for every
/// sender, `chameneos` 1.12-1.14x with or without stealing (15 alternating runs), though no
/// worker's send takes the branch. (`try_with`: a send from another thread-local's
/// destructor may come after this one is gone; it then counts for nothing.)
#[inline]
fn note_fed(hdr: &Header) {
    let _ = LAST_SPAWN.try_with(|l| {
        if l.get() == hdr as *const Header as usize {
            l.set(l.get() | 1);
        }
    });
}

/// Whether this thread's last spawn was fed before this one ([`LAST_SPAWN`]).
#[inline]
fn last_spawn_fed() -> bool {
    LAST_SPAWN.try_with(|l| l.get() & 1 == 1).unwrap_or(false)
}

/// Notes `hdr` as this thread's last spawn ([`LAST_SPAWN`]), not fed yet.
#[inline]
fn note_spawn(hdr: &Header) {
    let _ = LAST_SPAWN.try_with(|l| l.set(hdr as *const Header as usize));
}

impl Exec for Executor {
    #[inline]
    fn shared(&self) -> &Shared {
        &self.shared
    }

    fn sibling(&self, p: Placement) -> Sibling {
        self.detached.sibling(p)
    }

    fn attach_detached(&self, d: ExecRef) {
        self.detached.attach(d);
    }

    /// The queue of a new actor. Spawned from outside the workers: the seed's round-robin
    /// ticket (`fetch_add(next_ticket) % nrqueues`) for the first spawns, one per queue, then
    /// runs of [`SPAWN_RUN`] consecutive spawns per queue, queue after queue, or dealt to the
    /// workers' ranges in turn without queue stealing ([`spawn_queue`]). Spawned on a worker
    /// (from a behaviour or a task) with queue stealing on: round-robin over that worker's own
    /// range, so that a child starts where its parent runs and their first messages cross no
    /// cores; idle workers take whole queues from there as work piles up (stealing), or when
    /// it waits behind a long behaviour (the rescue of `worker.rs`). See `README.md`,
    /// "Placement". (Inline always, inside `spawn_parts`: as a call of its own, a spawn on one
    /// worker ran 11 instructions to learn that its one queue is queue 0.)
    #[inline(always)]
    fn next_ticket(&self) -> usize {
        let m = self.queues.len();
        if m == 1 {
            // One queue (one worker's default): nothing to choose.
            return 0;
        }
        // (Without queue stealing nothing could move the children elsewhere: the seed's
        // round-robin then.)
        // SAFETY: used during this call only.
        let me = unsafe { worker::current_of(self) };
        if self.placing {
            if let Some(w) = me {
                if let Some(q) = w.local.next_own_queue(self, w.index) {
                    return q;
                }
            }
        }
        let k = self.ticket.fetch_add(1, Ordering::Relaxed);
        let t = if self.spreads_fed() && me.is_none() && last_spawn_fed() {
            k % m
        } else {
            spawn_queue(k, m, self.spawn_ranges)
        };
        // Never the queue this worker is processing (there is another, `m > 1`): a child there
        // would wait behind its parent's whole batch, where no other worker can take it.
        match me {
            Some(w) if w.local.is_current(t) => (t + 1) % m,
            _ => t,
        }
    }

    fn new_mailbox(&self) -> Option<Box<Mailbox>> {
        None
    }

    /// Inlined into the cells' send path (`ExecRef::push`).
    #[inline(always)]
    fn push(&self, hdr: &Header, env: Envelope) -> Result<(), Envelope> {
        self.push_envelope(hdr, env)
    }

    /// Registers a newly spawned actor (live count, the queue's actor list) and queues its
    /// `start` envelope, in one critical section. Refused, giving `start` back, once the system
    /// is closed: the check is under the queue lock, so shutdown's cleanup, which takes every
    /// queue lock after closing, either sees the actor or refuses it.
    unsafe fn register(&self, hdr: &Header, start: Envelope) -> Result<(), Envelope> {
        // SAFETY: `me` is used during this call only.
        let me = unsafe { worker::current_of(self) };
        if let Some(w) = me.filter(|w| self.split_asked(w)) {
            self.split_current(w, false);
        }
        // A spawn onto the queue this worker is processing queues `start` on the local batch
        // (within the visit budget), so that messages the spawner sends next (local too) cannot
        // overtake it. Otherwise `start` goes to the shared queue and the actor counts as not
        // installed until it runs, so no send can take the local path ahead of it.
        let local = me.is_some_and(|w| w.local.can_push_local(hdr.queue()));
        if !local {
            hdr.set_installed(false); // not yet published: no other thread can see the cell
        }
        let q = &self.queues[hdr.queue()];
        let start = {
            let g = q.lock();
            if self.shared.life.closed() {
                return Err(start);
            }
            hdr.retain();
            self.shared.life.add_live();
            // SAFETY: the header's link is on no list and stays valid until `retire` unlinks it
            // or shutdown takes it.
            unsafe { g.link(&hdr.link) };
            if local {
                Some(start)
            } else {
                g.push(start);
                None
            }
        };
        match (start, me) {
            // SAFETY: `can_push_local` held, on this thread.
            (Some(start), Some(w)) => unsafe { w.local.push_local(start) },
            _ => self.notify_owner(q, me),
        }
        if self.spreads_fed() && me.is_none() {
            note_spawn(hdr);
        }
        self.count(me, |c| &c.actors_created);
        Ok(())
    }

    /// Brings a `Destroyed` actor back: alive again, registered, `install` queued behind its old
    /// mail (which is therefore dropped as dead letters, never delivered to the new state).
    /// The new system reference is released by the actor's eventual reclaim (or shutdown).
    unsafe fn revive(&self, hdr: &Header, install: Envelope) -> Result<(), Envelope> {
        // SAFETY: used during this call only.
        let me = unsafe { worker::current_of(self) };
        let mut q: &WorkQueue = &self.queues[hdr.queue()];
        {
            let mut g = q.lock();
            loop {
                // The actor may have moved (placement) between the ticket's read and the
                // lock, before it was destroyed: follow it (a destroyed actor moves no more).
                while hdr.queue() != q.id {
                    drop(g);
                    q = &self.queues[hdr.queue()];
                    g = q.lock();
                }
                if self.shared.life.closed() || hdr.status() != Status::Destroyed {
                    return Err(install);
                }
                // Its reclaim is parked: a worker's outbox may still hold mail for the old
                // incarnation ("Sends into a backlog" in `README.md`), which must be queued
                // ahead of `install` (and dropped as dead letters). Wait for the flushes that
                // take the pins (each within 64 behaviours of its worker; this one's own
                // first).
                if !g.parks_reclaim_of((hdr as *const Header).cast()) {
                    break;
                }
                drop(g);
                if let Some(w) = me {
                    self.flush_outbox(w);
                }
                crate::runtime::loom::yield_now();
                g = q.lock();
            }
            hdr.retain();
            // A new incarnation, numbered before anyone sees it alive (a link made from now on
            // is with it).
            hdr.next_incarnation();
            hdr.set_status(Status::Alive);
            self.shared.life.add_live();
            // SAFETY: a destroyed actor was unlinked by `retire`; the new reference keeps it.
            unsafe { g.link(&hdr.link) };
            g.push(install);
        }
        // SAFETY: used during this call only.
        self.notify_owner(q, unsafe { worker::current_of(self) });
        Ok(())
    }

    /// Marks an actor terminal and schedules the release of the system's reference behind every
    /// envelope already queued for it (a reclaim envelope). Runs on the worker processing the
    /// actor's queue.
    unsafe fn retire(&self, hdr: &Header, status: Status) {
        let q = &self.queues[hdr.queue()];
        // SAFETY: `me` is used during this call only.
        let me = unsafe { worker::current_of(self) };
        let reclaim = hdr.reclaim_envelope();
        let local = {
            let g = q.lock();
            hdr.set_status(status);
            // SAFETY: caller contract: the actor is registered, so its link is on this queue's
            // list.
            unsafe { g.unlink(&hdr.link) };
            if g.pinned() {
                // A worker's outbox may hold envelopes for the actor: the reclaim waits for
                // the last of them (`WorkQueue::unpin` queues it, and notifies).
                g.park(reclaim);
                Retired::Parked
            } else if g.len() == 0 && me.is_some_and(|w| w.local.is_current(hdr.queue())) {
                // This worker holds the queue and nothing is queued behind its batch: every
                // envelope for the actor is in the batch (later sends fail on the status), so
                // the reclaim can go to the end of the batch and save a gulp.
                Retired::Local(reclaim)
            } else {
                g.push(reclaim);
                Retired::Queued
            }
        };
        match (local, me) {
            // SAFETY: `is_current` held under the lock, on this thread.
            (Retired::Local(reclaim), Some(w)) => unsafe { w.local.push_local_unbudgeted(reclaim) },
            (Retired::Parked, _) => {}
            _ => self.notify_owner(q, me),
        }
        self.shared.life.terminated(hdr.joinable());
    }

    fn workers(&self) -> usize {
        self.pool.len()
    }

    fn crew(&self) -> Option<&crate::runtime::pool::Crew> {
        Some(self.pool.crew())
    }

    fn queues(&self) -> usize {
        self.queues.len()
    }

    fn queue_of_spawn(&self, k: usize) -> Option<usize> {
        Some(spawn_queue(k, self.queues.len(), self.spawn_ranges))
    }

    fn worker_of_queue(&self, q: usize) -> Option<usize> {
        if q >= self.queues.len() {
            return None;
        }
        let _r = self.pool.lock.read_outside();
        let ranges: Vec<_> = (0..self.pool.len()).map(|w| self.range(w)).collect();
        Some(ranges::owner_of(&ranges, q))
    }

    fn add_workers(&self, k: usize) -> Result<usize, ResizeError> {
        self.pool.add(self, k, |_| Ok(WorkerSlot::new(0..0)))
    }

    fn remove_workers(&self, k: usize) -> Result<usize, ResizeError> {
        self.pool.remove(self, k)
    }

    /// Afterwards no spawn or respawn can succeed: a `register` or `revive` that passed its
    /// `closed()` check did so under a queue lock that this function takes once after the
    /// system was closed, so it has counted itself in `live` by the time this returns. Wakes
    /// every worker.
    fn begin_shutdown(&self, _drain: bool) {
        for q in self.queues.iter() {
            drop(q.lock());
        }
        self.pool.wake_all();
    }

    fn join_threads(&self, drain: bool) {
        self.pool.wake_all();
        if !drain {
            self.pool.unpark_all();
        }
        join_all(self.pool.take_threads());
        self.pool.workers_exited();
    }

    fn for_each_queued_actor(&self, f: &mut dyn FnMut(&Header)) {
        for q in self.queues.iter() {
            q.lock().for_each_actor(|link| {
                // SAFETY: links on a queue's list are the `link` field of a live cell's header,
                // kept alive while listed (we hold the queue's lock).
                let hdr = unsafe { Header::from_link(link) };
                f(hdr)
            });
        }
    }

    fn cleanup(&self) {
        self.cleanup_queues();
        self.pool.close();
    }

    fn add_stats(&self, s: &mut Stats) {
        self.pool.add_stats(s);
        for w in 0..self.pool.capacity() {
            if let Some(d) = self.pool.data_if_made(w) {
                s.rescues += d.busy.rescues.get();
                s.moves += d.busy.moves.get();
                s.holds += d.busy.holds.get();
                s.deferred += d.busy.deferred.get();
            }
        }
    }
}

/// The longest victim among `stamps` (one per worker, see `WorkerSlot::last_steal`): the other
/// worker with the oldest steal timestamp; ties go to the lowest index.
fn longest_victim(stamps: impl Iterator<Item = u64>, me: usize) -> usize {
    stamps
        .enumerate()
        .filter(|&(w, _)| w != me)
        .min_by_key(|&(_, s)| s)
        .map(|(w, _)| w)
        .expect("at least two workers")
}

/// Where [`Executor::move_here`] put an actor.
enum Moved<'q> {
    /// Into the queue whose batch the sender processes: the message goes to the batch.
    Batch,
    /// Into that queue, whose batch takes no more local sends: the message goes to its
    /// shared part (the queue is returned locked).
    To(work_queue::Locked<'q>),
    /// Nowhere.
    No,
}

/// Notes a send from worker `w` to the actor of `hdr`, whose queue is locked as `g`, before
/// its message is queued. Returns true when the actor should move to where the sender runs:
/// this worker made it [`FOLLOW_AFTER`](worker::FOLLOW_AFTER) counted sends, at most one per visit, each from a
/// queue it was processing with a lower index than the actor's, while the actor's queue was
/// empty and not being processed (sends into a backlog, or from a higher queue, are not
/// counted: a busy receiver is parallel work; and they do not end the run, which ends only when
/// another receiver's entry evicts this one from its set), and the queue of this send made one
/// of the two counted sends before it. The actor was then waiting for the sender's actors,
/// message by message: each message crossed from one queue (and often one core) to another, a
/// hand-off (0.03 to 12 µs here) for work that could run where it was sent, through the local
/// fast path. The sends may come from different queues (an actor with two partners, handed
/// messages by each in turn): it moves into the queue of the send that completes the run.
///
/// Only sends from a queue with a lower index count: actors move only down, so moves end. (If
/// every actor could follow its sender, the actors of a ring would each take their
/// predecessor's queue, round after round, forever: measured, one move every 14 hops.)
///
/// The runs are kept by the sending worker, in a small table of its own indexed by the
/// receiver's address (a collision only restarts a run): kept in the receiver's header, the
/// count was written by every sender into the cache line every sender reads (measured: `big`,
/// all-to-all pings, 9 % slower).
///
/// The caller checked that `w` processes queue `from`, whose index is lower, and that the
/// actor's queue is empty.
#[inline]
fn follows(g: &work_queue::Locked<'_>, hdr: &Header, w: &InvWorker<'_>, from: usize) -> bool {
    // (Acquire: if the actor moves, everything its last behaviour did happens before the
    // move, and before this worker reads its `installed` flag or runs it.)
    if g.queue().processed_locked(g) {
        return false;
    }
    w.local.follow_run(hdr as *const Header as usize, from)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// The first `m` spawns get a queue each; then runs of [`SPAWN_RUN`] consecutive spawns
    /// share one queue, run `r` in range `r mod w`, and a range's runs take its queues in
    /// turn (with one range, queue after queue).
    #[test]
    fn spawns_come_in_runs_dealt_to_the_ranges_in_turn() {
        for m in 1..40 {
            for w in 1..=m.min(5) {
                for k in 0..m {
                    assert_eq!(spawn_queue(k, m, w), k, "m={m} w={w}: one queue each");
                }
                // Per range, the queue its last run took.
                let mut last: Vec<Option<usize>> = vec![None; w];
                for run in 0..40 * w {
                    let first = m + run * SPAWN_RUN;
                    let q = spawn_queue(first, m, w);
                    for k in first..first + SPAWN_RUN {
                        assert_eq!(spawn_queue(k, m, w), q, "m={m} w={w}: run {run} shares");
                    }
                    let range = ranges::range_of(m, w, run % w);
                    assert!(range.contains(&q), "m={m} w={w}: run {run} in its range");
                    let want = match last[run % w] {
                        None => range.start,
                        Some(p) if p + 1 == range.end => range.start,
                        Some(p) => p + 1,
                    };
                    assert_eq!(q, want, "m={m} w={w}: run {run} takes the next queue");
                    last[run % w] = Some(q);
                }
            }
        }
    }

    fn victim(v: &[u64], me: usize) -> usize {
        longest_victim(v.iter().copied(), me)
    }

    #[test]
    fn the_longest_victim_is_the_oldest_thief_and_never_a_sleeper() {
        // Worker 0 busy since the start (stamp 0), worker 1 stole recently.
        assert_eq!(victim(&[0, 50, 90], 2), 0);
        assert_eq!(victim(&[70, 50, 90], 2), 1);
        // Worker 1 asleep (stamp_asleep): worker 0 is chosen although its stamp is newer
        // than the sleeper's was.
        assert_eq!(victim(&[70, u64::MAX, 90], 2), 0);
        // Every other worker asleep: one of them (a steal there finds nothing; harmless).
        assert_eq!(victim(&[u64::MAX, u64::MAX, 90], 2), 0);
    }
}
