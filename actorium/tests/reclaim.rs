//! Copy-queue reclamation: after a burst of a million messages and a quiet period, the memory
//! the burst took is returned, on every executor. (Its own test binary: a counting allocator
//! measures the bytes allocated and not yet freed.)

mod common;

use actorium::{Actor, ActorSystem, Allocation, Context, DeleteMsg, Receive};
use common::{settle, watchdog, EXECUTORS};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};

struct Counting;
static LIVE: AtomicI64 = AtomicI64::new(0);

// SAFETY: forwards to the system allocator and only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as i64, Ordering::Relaxed);
        // SAFETY: forwarded contract.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as i64, Ordering::Relaxed);
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        LIVE.fetch_add(n as i64 - l.size() as i64, Ordering::Relaxed);
        // SAFETY: forwarded contract.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Counts messages; the first one waits at a gate, so the burst piles up behind it.
struct Burst {
    got: Arc<AtomicU64>,
    entered: Arc<AtomicBool>,
    gate: Option<Mutex<mpsc::Receiver<()>>>,
}
impl Actor for Burst {}
impl Receive<u64> for Burst {
    fn receive(&mut self, _: u64, _: &mut Context<'_, Self>) -> Allocation {
        if let Some(gate) = self.gate.take() {
            self.entered.store(true, Ordering::SeqCst);
            let _ = gate.lock().unwrap().recv();
        }
        self.got.fetch_add(1, Ordering::SeqCst);
        Allocation::Nodelete
    }
}

const BURST: u64 = 1_000_000;

/// What may stay allocated after the quiet period, beyond the baseline.
const SLACK: i64 = 1 << 20;

#[test]
fn a_bursts_memory_is_returned_once_the_system_is_quiet() {
    watchdog(300, || {
        for &(name, choose) in EXECUTORS {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let got = Arc::new(AtomicU64::new(0));
            let entered = Arc::new(AtomicBool::new(false));
            let (open, gate) = mpsc::channel();
            let a = system.spawn(Burst {
                got: got.clone(),
                entered: entered.clone(),
                gate: Some(Mutex::new(gate)),
            });
            let baseline = LIVE.load(Ordering::SeqCst);
            a.send(0).unwrap();
            let driven = system.run_once(); // the caller-driven system: its start hook
            if !driven {
                settle(&system, 30, "the first message", || {
                    entered.load(Ordering::SeqCst)
                });
            }
            for i in 1..=BURST {
                a.send(i).unwrap();
            }
            let peak = LIVE.load(Ordering::SeqCst) - baseline;
            open.send(()).unwrap();
            settle(&system, 60, "the burst", || {
                got.load(Ordering::SeqCst) == BURST + 1
            });
            // Quiet: the workers go to sleep, the job parks; the burst's arrays go back.
            let mut left = 0;
            settle(&system, 30, "the burst's memory to be returned", || {
                left = LIVE.load(Ordering::SeqCst) - baseline;
                left < SLACK
            });
            eprintln!(
                "{name}: {BURST} messages held {} MiB at the peak; {} KiB left after",
                peak >> 20,
                left >> 10
            );
            assert!(
                peak > 40 << 20,
                "{name}: the burst was queued ({peak} bytes)"
            );
            a.send(DeleteMsg).unwrap();
            system.stop();
        }
    });
}
