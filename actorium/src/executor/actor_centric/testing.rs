//! The deterministic test policy (CAF's "testing" scheduler, from CAF's scheduler manual: the C++
//! Actor Framework manual, section "Scheduler"): no worker thread; jobs wait in one FIFO queue and
//! run on the calling thread, one message per step, when the program calls
//! [`crate::ActorSystem::run_once`] (or waits in `stop` / `JoinHandle::join`). A program whose
//! messages all come from its own thread runs the same way every time, so actor programs can be
//! unit-tested step by step.

use super::policy::{Policy, Scheduler, WorkerCtx};
use crate::executor::mailbox::Job;
use std::collections::VecDeque;
use std::sync::Mutex;

/// CAF's testing policy: a single-threaded, deterministic, caller-driven scheduler.
///
/// ```
/// use actorium::{policy::Testing, Actor, ActorSystem, Allocation, Context, Receive};
/// use std::sync::{Arc, Mutex};
///
/// struct Echo(Arc<Mutex<Vec<u32>>>);
/// impl Actor for Echo {}
/// impl Receive<u32> for Echo {
///     fn receive(&mut self, n: u32, _: &mut Context<'_, Self>) -> Allocation {
///         self.0.lock().unwrap().push(n);
///         Allocation::Nodelete
///     }
/// }
///
/// let system = ActorSystem::builder().policy(Testing).build()?;
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let echo = system.spawn(Echo(seen.clone()));
/// echo.send(1).unwrap();
/// echo.send(2).unwrap();
/// assert!(seen.lock().unwrap().is_empty()); // nothing runs until the test says so
/// assert!(system.run_once()); // the `started` hook
/// assert!(system.run_once()); // message 1
/// assert_eq!(*seen.lock().unwrap(), [1]);
/// system.run();
/// assert_eq!(*seen.lock().unwrap(), [1, 2]);
/// echo.send(actorium::DeleteMsg).unwrap();
/// system.stop();
/// # Ok::<(), actorium::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Testing;

#[cfg(not(feature = "unstable-policy"))]
impl super::policy::sealed::Implementable for Testing {}

impl Policy for Testing {
    type Coordinator = Mutex<VecDeque<Job>>;
    type Worker = ();
    type Local = ();

    fn coordinator(&self, _workers: usize) -> Self::Coordinator {
        Mutex::new(VecDeque::new())
    }

    fn worker(&self, _: &Self::Coordinator, _: usize) -> ((), ()) {
        ((), ())
    }

    /// Every enqueue (the others forward here): the back of the one FIFO queue.
    fn central_enqueue(&self, s: &Scheduler<'_, Self>, job: Job) {
        s.coordinator().lock().unwrap().push_back(job);
    }

    fn dequeue(&self, me: &mut WorkerCtx<'_, Self>) -> Option<Job> {
        me.scheduler().coordinator().lock().unwrap().pop_front()
    }

    fn driven_by_caller(&self) -> bool {
        true
    }
}
