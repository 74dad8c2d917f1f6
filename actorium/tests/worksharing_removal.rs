//! A removal that waits for a removed worker's long behaviour costs the idle workers no CPU,
//! with work sharing too, where the one shared queue could hand the leave request straight
//! back to the idle worker that passed it on, which would take it again at full speed until
//! the behaviour ends.
//! Alone in its test binary: it reads the CPU time of the whole process.

mod common;

use actorium::policy::WorkSharing;
use actorium::{Actor, ActorSystem, Allocation, Context, Receive};
use common::{cpu_ticks, wait_for, watchdog};
use std::sync::mpsc;
use std::time::Duration;

/// Says which worker runs it, then blocks until its gate opens (or is dropped).
struct Blocker {
    at: mpsc::Sender<usize>,
    gate: mpsc::Receiver<()>,
}
impl Actor for Blocker {}
impl Receive<()> for Blocker {
    fn receive(&mut self, _: (), ctx: &mut Context<'_, Self>) -> Allocation {
        self.at.send(ctx.worker_index()).unwrap();
        let _ = self.gate.recv();
        Allocation::Delete
    }
}

#[test]
fn a_removal_that_waits_for_a_long_behaviour_costs_the_idle_worker_no_cpu() {
    watchdog(60, || {
        let system = ActorSystem::builder()
            .workers(2)
            .policy(WorkSharing)
            .build()
            .unwrap();
        // A behaviour blocked on worker 1, the one a removal of one worker takes.
        let open = loop {
            let (at_tx, at) = mpsc::channel();
            let (open, gate) = mpsc::channel();
            system.spawn(Blocker { at: at_tx, gate }).send(()).unwrap();
            if at.recv().unwrap() == 1 {
                break open;
            }
            // On worker 0: let it end, and try again.
            drop(open);
        };
        let handle = system.handle();
        let remover = std::thread::spawn(move || handle.remove_workers(1));
        wait_for(10, "the removal to begin", || system.workers() == 1);
        let before = cpu_ticks();
        std::thread::sleep(Duration::from_secs(1));
        let used = cpu_ticks() - before;
        // (One core spinning would be about 100 ticks; the leave request's waits are capped
        // at 1 ms, so the idle worker takes it about a thousand times a second, each a few
        // microseconds.)
        assert!(
            used < 30,
            "{used} ticks of CPU in 1 s while the removal waited"
        );
        drop(open);
        assert_eq!(remover.join().unwrap().unwrap(), 1);
        system.stop();
    });
}
