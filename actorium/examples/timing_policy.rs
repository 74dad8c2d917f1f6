//! A custom scheduling policy for the actor-centric executor: work sharing (one FIFO queue)
//! that measures, with the resume hooks, how long each actor type runs and how often.
//!
//! ```text
//! cargo run --release -p actorium --example timing_policy
//! ```

use actorium::policy::{Job, Policy, Resumable, Scheduler, SharedQueue, WorkSharing, WorkerCtx};
use actorium::{Actor, ActorSystem, Addr, Allocation, Context, Receive};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Per actor type: jobs run, total time, longest run.
type Profile = HashMap<&'static str, (u64, Duration, Duration)>;

/// Work sharing plus a profile filled by `before_resume` / `after_resume`.
struct Timing {
    profile: Arc<Mutex<Profile>>,
}

impl Policy for Timing {
    type Coordinator = SharedQueue;
    type Worker = ();
    /// When the job this worker runs started.
    type Local = Option<Instant>;

    fn coordinator(&self, workers: usize) -> SharedQueue {
        WorkSharing.coordinator(workers)
    }
    fn worker(&self, _: &SharedQueue, _: usize) -> ((), Option<Instant>) {
        ((), None)
    }
    /// One shared queue: the external and internal enqueues and `resume_job_later` default to
    /// this.
    fn central_enqueue(&self, s: &Scheduler<'_, Self>, job: Job) {
        s.coordinator().push(job);
    }
    fn dequeue(&self, me: &mut WorkerCtx<'_, Self>) -> Option<Job> {
        Some(me.scheduler().coordinator().pop_blocking())
    }
    fn before_resume(&self, me: &mut WorkerCtx<'_, Self>, _job: &Job) {
        *me.local() = Some(Instant::now());
    }
    fn after_resume(&self, me: &mut WorkerCtx<'_, Self>, job: &Job, _: Resumable) {
        let took = me.local().take().expect("before_resume ran").elapsed();
        let mut p = self.profile.lock().unwrap();
        let e = p.entry(job.actor_type()).or_default();
        e.0 += 1;
        e.1 += took;
        e.2 = e.2.max(took);
    }
}

/// Computes something for each number it is sent and reports to a sink.
struct Cruncher(Addr<Sink>);
impl Actor for Cruncher {}
impl Receive<u64> for Cruncher {
    fn receive(&mut self, n: u64, _: &mut Context<'_, Self>) -> Allocation {
        let mut x = n;
        for _ in 0..2_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
        }
        self.0.send(x).unwrap();
        Allocation::Nodelete
    }
}

/// Receives results.
struct Sink(u64, u64);
impl Actor for Sink {}
impl Receive<u64> for Sink {
    fn receive(&mut self, x: u64, _: &mut Context<'_, Self>) -> Allocation {
        self.0 = self.0.wrapping_add(x);
        self.1 -= 1;
        if self.1 == 0 {
            println!("sink: all results in (sum {:#x})", self.0);
            return Allocation::Delete;
        }
        Allocation::Nodelete
    }
}

fn main() {
    let profile = Arc::new(Mutex::new(Profile::new()));
    let system = ActorSystem::builder()
        .workers(2)
        .max_throughput(100)
        .policy(Timing {
            profile: profile.clone(),
        })
        .build()
        .expect("start the actor system");
    let (crunchers, per) = (8u64, 10_000u64);
    let sink = system.spawn(Sink(0, crunchers * per));
    let cs: Vec<_> = (0..crunchers)
        .map(|_| system.spawn(Cruncher(sink.clone())))
        .collect();
    for i in 0..per {
        for c in &cs {
            c.send(i).unwrap();
        }
    }
    for c in &cs {
        c.send(actorium::DeleteMsg).unwrap();
    }
    system.stop();
    let p = profile.lock().unwrap();
    println!(
        "{:<40} {:>8} {:>12} {:>12} {:>12}",
        "actor type", "jobs", "total", "mean", "longest"
    );
    let mut rows: Vec<_> = p.iter().collect();
    rows.sort_by_key(|(_, v)| std::cmp::Reverse(v.1));
    for (name, (jobs, total, longest)) in rows {
        println!(
            "{:<40} {:>8} {:>12.3?} {:>12.3?} {:>12.3?}",
            name.rsplit("::").next().unwrap_or(name),
            jobs,
            total,
            *total / (*jobs as u32).max(1),
            longest
        );
    }
}
