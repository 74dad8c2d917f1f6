//! A graceful end: every live actor is asked to end (a stop request behind the mail already
//! sent to it: `Header::request_stop`),
//! again and again for actors its behaviours spawn meanwhile (a spawn from outside the system
//! is refused from the start: `Executor::spawn_parts`), until none is left, the deadline passes, or
//! the system stops at once. Run by [`super::ActorSystem::shutdown`] (then it stops the
//! system), and on a helper thread by [`SystemHandle::request_shutdown`] (from a behaviour:
//! the owner's `stop` or `shutdown` then finds the actors ending).

use super::ShutdownTimeout;
use crate::actor::SystemHandle;
use crate::core::{ExecRef, Header, Status};
use crate::runtime::lock;
use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::{Duration, Instant};

/// Asks every actor of `exec`'s system to end, until none is alive (or the system stops at
/// once). With a `deadline`, gives up when it passes, naming the actors still alive. With
/// `drive`, runs a caller-driven system's work meanwhile (on the calling thread).
pub(super) fn end_every_actor(
    exec: &ExecRef,
    deadline: Option<Instant>,
    drive: bool,
) -> Result<(), ShutdownTimeout> {
    let shared = exec.shared();
    let life = &shared.life;
    // From now on no ended actor comes back: each one asked to end stays ended.
    shared.draining.store(true, Ordering::SeqCst);
    // Every actor asked so far, held (a counted reference) until the end, so that no cell is
    // freed and its address reused by a new actor while we tell them apart. Released by the
    // guard on every path, a panic included.
    let mut asked: HashSet<usize> = HashSet::new();
    let mut held = Held(Vec::new());
    let mut told = 0;
    loop {
        // Under each list's lock: note (and hold) the actors not asked yet.
        let mut visit = |h: &Header| {
            if asked.insert(h as *const Header as usize) {
                h.retain();
                held.0.push(h);
            }
        };
        exec.for_each_queued_actor(&mut visit);
        shared.registry.for_each(|link| {
            // SAFETY: links on the registry are the `link` field of live cells' headers, kept
            // alive while listed (the registry's lock is held during the call).
            let hdr = unsafe { Header::from_link(link) };
            visit(hdr)
        });
        // Outside the locks (a send takes them): the stop requests.
        for &h in &held.0[told..] {
            // SAFETY: held (retained) above.
            unsafe { (*h).request_stop() };
        }
        told = held.0.len();
        if life.live() == 0 || life.aborting() {
            return Ok(());
        }
        if let Some(d) = deadline {
            if Instant::now() >= d {
                let mut names: Vec<&'static str> = held
                    .0
                    .iter()
                    // SAFETY: held (retained) above.
                    .map(|&h| unsafe { &*h })
                    .filter(|h| h.status() == Status::Alive)
                    .map(|h| (h.type_name_fn())())
                    .collect();
                names.sort_unstable();
                return Err(ShutdownTimeout {
                    remaining: life.live(),
                    actors: names,
                });
            }
        }
        if drive && exec.driven_by_caller() && exec.run_once() {
            // (No job starts after the deadline here either.)
            while deadline.is_none_or(|d| Instant::now() < d) && exec.run_once() {}
            continue;
        }
        let wait = deadline.map_or(Duration::from_millis(10), |d| {
            d.saturating_duration_since(Instant::now())
                .min(Duration::from_millis(10))
        });
        life.wait_a_little(wait);
    }
}

/// Counted references to actors' cells (taken with `Header::retain`), released on drop.
struct Held(Vec<*const Header>);

impl Drop for Held {
    fn drop(&mut self) {
        for h in self.0.drain(..) {
            // SAFETY: each was retained once by `end_every_actor` and is released once here.
            unsafe { (*h).drop_ref() };
        }
    }
}

impl SystemHandle {
    /// Starts a graceful shutdown from anywhere, a behaviour included, and returns at once:
    /// every live actor is asked to end after the mail already queued for it (its `stopped`
    /// hook runs), as [`crate::ActorSystem::shutdown`] does, by a helper thread. The
    /// system's owner then sees it end: [`crate::ActorSystem::stop`] returns once every actor
    /// has ended (as does `shutdown`, which asks again, harmlessly). Later calls do nothing.
    /// On a caller-driven system (the `Testing` policy) the actors end as its owner drives
    /// it.
    ///
    /// ```
    /// use actorium::{Actor, ActorSystem, Allocation, Context, Receive};
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    ///
    /// /// Counts what it serves and whether it stopped.
    /// struct Server(Arc<AtomicUsize>);
    /// impl Actor for Server {
    ///     fn stopped(&mut self) {
    ///         self.0.fetch_add(1000, Ordering::SeqCst);
    ///     }
    /// }
    /// impl Receive<u32> for Server {
    ///     fn receive(&mut self, _: u32, _: &mut Context<'_, Self>) -> Allocation {
    ///         self.0.fetch_add(1, Ordering::SeqCst);
    ///         Allocation::Nodelete // never ends by itself
    ///     }
    /// }
    /// /// Shuts the system down when told to.
    /// struct Admin;
    /// impl Actor for Admin {}
    /// impl Receive<&'static str> for Admin {
    ///     fn receive(&mut self, cmd: &'static str, ctx: &mut Context<'_, Self>) -> Allocation {
    ///         if cmd == "quit" {
    ///             ctx.system().request_shutdown(); // returns at once
    ///         }
    ///         Allocation::Nodelete
    ///     }
    /// }
    /// let system = ActorSystem::new()?;
    /// let count = Arc::new(AtomicUsize::new(0));
    /// let server = system.spawn(Server(count.clone()));
    /// for n in 0..3 {
    ///     server.send(n).unwrap();
    /// }
    /// system.spawn(Admin).send("quit").unwrap();
    /// system.stop(); // returns once every actor has ended
    /// assert_eq!(count.load(Ordering::SeqCst), 1003); // its mail served, then stopped
    /// # Ok::<(), actorium::ConfigError>(())
    /// ```
    pub fn request_shutdown(&self) {
        let exec = self.executor().clone();
        if exec.shared().life.closed()
            || exec
                .shared()
                .shutdown_requested
                .swap(true, Ordering::SeqCst)
        {
            return;
        }
        // (The handle is stored under the lock the stopping system takes to join it.)
        let mut helper = lock(&exec.shared().shutdown_helper);
        let to_end = exec.clone();
        let ended = thread::Builder::new()
            .name("actorium-shutdown".into())
            .spawn(move || {
                let _ = end_every_actor(&to_end, None, false);
            });
        match ended {
            Ok(h) => *helper = Some(h),
            Err(e) => eprintln!("actorium: cannot start the thread of a requested shutdown: {e}"),
        }
    }
}

/// Joins the thread of a requested shutdown, if any (the system is stopping: every actor has
/// ended, or it stops at once; the thread sees either within one of its waits).
pub(super) fn join_helper(shared: &crate::core::Shared) {
    let helper = lock(&shared.shutdown_helper).take();
    if let Some(h) = helper {
        let _ = h.join();
    }
}
