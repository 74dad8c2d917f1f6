//! The system's statistics, as users read them ([`Stats`]): summed from every worker's
//! counters (`runtime/counters.rs`) and from what each executor counts of its own (the
//! message-centric executor's placement). Counted only when the builder enables statistics
//! (the Cforall actor thesis's "Safety and Productivity" features).

use crate::runtime::counters::CounterValues;
use crate::runtime::worker_table::PoolValues;
use std::fmt;

/// Summed statistics of an actor system.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Worker threads: the most that may run (`ActorSystemBuilder::workers`, changed by
    /// `add_workers` and `remove_workers`).
    pub workers: usize,
    /// Workers active now: compaction deactivates workers that would not pay for themselves
    /// and activates them again when the load needs them
    /// ([`ActorSystemBuilder::compaction`](crate::ActorSystemBuilder::compaction)).
    pub active_workers: usize,
    /// Times compaction activated workers (one decision may activate several).
    pub worker_activations: u64,
    /// Times compaction deactivated a worker.
    pub worker_deactivations: u64,
    /// Active workers × time, over the time compaction watched (`watched`): divided by it,
    /// the mean number of active workers ([`Stats::mean_active_workers`]).
    pub active_worker_time: std::time::Duration,
    /// The time compaction watched the load (while the workers ran; a quiet system is not
    /// watched).
    pub watched: std::time::Duration,
    /// Actors spawned, by main or by other actors.
    pub actors_created: u64,
    /// Messages sent (accepted by a live actor), poison pills included.
    pub messages_sent: u64,
    /// Messages whose behaviour ran.
    pub messages_processed: u64,
    /// Messages that reached an actor after it had terminated and were dropped unprocessed.
    pub dead_letters: u64,
    /// Gulps (the Cforall actor thesis's term): a message queue or a mailbox's inbox swapped out
    /// whole, counted when it held at least one message (gulps that took only the executor's own
    /// start, install or reclaim envelopes are not counted; the messages of a gulped batch are
    /// counted by a pass over it, made only when statistics are on).
    pub gulps: u64,
    /// Messages taken by those gulps; `gulped / gulps` is the average gulp size. Messages a
    /// behaviour appends to the batch its worker holds (the local fast path) are not gulped;
    /// messages a split puts back into a queue (placement rule 4 of the message-centric
    /// executor) are gulped, and counted, again.
    pub gulped: u64,
    /// Gulps given up because another worker was processing the queue.
    pub missed_gulps: u64,
    /// Panics caught: in behaviours, lifecycle hooks, destructors run by the executor, and
    /// scheduling-policy code.
    pub panics: u64,
    /// Times a worker went to sleep in the kernel.
    pub sleeps: u64,
    /// Wake-ups that needed a system call.
    pub wakeups: u64,
    /// Times a worker tried to steal (a queue, or a job with work stealing).
    pub steal_attempts: u64,
    /// Queues (or jobs) stolen.
    pub steals: u64,
    /// Steal attempts that found nothing to take at the victim.
    pub steal_fail_no_candidate: u64,
    /// Steal attempts whose wait-free swap failed (another thief raced).
    pub steal_fail_swap: u64,
    /// Steals of a queue (or a job's mailbox) that was empty by the time it was taken.
    pub empty_steals: u64,
    /// Envelopes in what was stolen, counted exactly when it was stolen: the stolen queue
    /// (message-centric executor) or the stolen actor's mailbox (actor-centric). Nearly all are
    /// messages; an actor's start envelope counts too.
    pub messages_stolen: u64,
    /// Steals of a queue with fewer envelopes than a steal normally needs, taken from a worker
    /// stuck in one visit (message-centric executor: the rescue of mail behind a long
    /// behaviour; counted in `steals` too).
    pub rescues: u64,
    /// Actors moved to another queue by the message-centric executor's placement: to a queue
    /// of the worker whose actors kept handing them messages one at a time across cores (with
    /// the few other actors of the queue they leave), or out of a queue held by a long
    /// behaviour (a split).
    pub moves: u64,
    /// Times a worker held a queue off for a while, so that the stream of messages other
    /// threads were sending into it came in larger batches (message-centric executor,
    /// placement rule 7: each gulp of a few envelopes cost the sender a cache miss).
    pub holds: u64,
    /// Messages that behaviours sent into another worker's backlog and that waited in their
    /// worker's outbox, to be queued in bulk with one lock for many (message-centric
    /// executor, "Sends into a backlog" in its README).
    pub outboxed: u64,
}

impl Stats {
    /// The mean number of active workers while compaction watched the load (the workers now
    /// if it never did).
    pub fn mean_active_workers(&self) -> f64 {
        if self.watched.is_zero() {
            self.active_workers as f64
        } else {
            self.active_worker_time.as_secs_f64() / self.watched.as_secs_f64()
        }
    }

    /// Average number of envelopes in what a steal took (a queue, or a job's mailbox).
    pub fn average_steal_size(&self) -> f64 {
        if self.steals == 0 {
            0.0
        } else {
            self.messages_stolen as f64 / self.steals as f64
        }
    }

    /// Average number of messages per gulp.
    pub fn average_gulp_size(&self) -> f64 {
        if self.gulps == 0 {
            0.0
        } else {
            self.gulped as f64 / self.gulps as f64
        }
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Actor system statistics ({} workers)", self.workers)?;
        writeln!(f, "  active workers now   {}", self.active_workers)?;
        writeln!(
            f,
            "  mean active workers  {:.2}",
            self.mean_active_workers()
        )?;
        writeln!(
            f,
            "  activations / deactivations {} / {}",
            self.worker_activations, self.worker_deactivations
        )?;
        writeln!(f, "  actors created       {}", self.actors_created)?;
        writeln!(f, "  messages sent        {}", self.messages_sent)?;
        writeln!(f, "  messages processed   {}", self.messages_processed)?;
        writeln!(f, "  dead letters         {}", self.dead_letters)?;
        writeln!(f, "  gulps                {}", self.gulps)?;
        writeln!(f, "  average gulp size    {:.2}", self.average_gulp_size())?;
        writeln!(f, "  missed gulps         {}", self.missed_gulps)?;
        writeln!(f, "  panics               {}", self.panics)?;
        writeln!(f, "  sleeps               {}", self.sleeps)?;
        writeln!(f, "  wake-ups (syscalls)  {}", self.wakeups)?;
        writeln!(f, "  steal attempts       {}", self.steal_attempts)?;
        writeln!(f, "  steals               {}", self.steals)?;
        writeln!(
            f,
            "  steal failures (no candidate) {}",
            self.steal_fail_no_candidate
        )?;
        writeln!(
            f,
            "  steal failures (swap)         {}",
            self.steal_fail_swap
        )?;
        writeln!(f, "  empty steals         {}", self.empty_steals)?;
        writeln!(f, "  messages stolen      {}", self.messages_stolen)?;
        writeln!(f, "  average steal size   {:.2}", self.average_steal_size())?;
        writeln!(f, "  rescues              {}", self.rescues)?;
        writeln!(f, "  actors moved         {}", self.moves)?;
        writeln!(f, "  held queues          {}", self.holds)?;
        write!(f, "  outboxed sends       {}", self.outboxed)
    }
}

impl Stats {
    /// Adds a pool's counters (every worker's, the number of workers now, and what
    /// compaction did: see `WorkerTable::counter_values`).
    pub(crate) fn add_pool(&mut self, p: PoolValues) {
        for c in p.rows {
            self.add(c);
        }
        self.workers += p.workers;
        self.active_workers += p.active;
        self.worker_activations += p.compaction.activations;
        self.worker_deactivations += p.compaction.deactivations;
        self.active_worker_time += p.compaction.active_time;
        self.watched += p.compaction.covered;
    }

    /// Adds a block of counters (a worker's, or the outside threads').
    pub(crate) fn add(&mut self, c: CounterValues) {
        self.actors_created += c.actors_created;
        self.messages_sent += c.messages_sent;
        self.messages_processed += c.messages_processed;
        self.dead_letters += c.dead_letters;
        self.gulps += c.gulps;
        self.gulped += c.gulped;
        self.missed_gulps += c.missed_gulps;
        self.panics += c.panics;
        self.sleeps += c.sleeps;
        self.wakeups += c.wakeups;
        self.steal_attempts += c.steal_attempts;
        self.steals += c.steals;
        self.steal_fail_no_candidate += c.steal_fail_no_candidate;
        self.steal_fail_swap += c.steal_fail_swap;
        self.empty_steals += c.empty_steals;
        self.messages_stolen += c.messages_stolen;
    }
}
