//! Backpressure with a bounded mailbox: a slow `Writer` holds at most 100 queued lines, and
//! three producers feed it without ever queuing more: a thread (`send_wait` blocks it while the
//! writer is full), a producer actor (`try_send` until full, then `Context::when_room`: its
//! worker never blocks), and a sampler that drops what does not fit (`try_send`, counting the
//! lines refused). Prints the counts and the most lines ever queued.
//!
//! ```text
//! cargo run --release -p actorium --example backpressure
//! ```

use actorium::{Actor, ActorSystem, Addr, Allocation, Context, Receive, Room, TrySendError};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

const CAPACITY: usize = 100;
const LINES: u64 = 20_000;

/// The slow consumer: about 2 µs per line.
struct Writer {
    me: Option<Addr<Writer>>,
    written: u64,
    most_queued: Arc<AtomicUsize>,
    done: mpsc::Sender<u64>,
}
impl Actor for Writer {
    fn started(&mut self, ctx: &mut Context<'_, Self>) {
        self.me = Some(ctx.address());
    }
    fn stopped(&mut self) {
        self.done.send(self.written).unwrap();
    }
}
impl Receive<String> for Writer {
    fn receive(&mut self, line: String, _: &mut Context<'_, Self>) -> Allocation {
        let queued = self.me.as_ref().and_then(Addr::queued).unwrap_or(0);
        self.most_queued.fetch_max(queued, Ordering::Relaxed);
        let t = std::time::Instant::now();
        while t.elapsed() < Duration::from_micros(2) {
            std::hint::black_box(line.len());
        }
        self.written += 1;
        Allocation::Nodelete
    }
}
/// The end of the input: drop the self-reference so the writer can end.
impl Receive<()> for Writer {
    fn receive(&mut self, _: (), ctx: &mut Context<'_, Self>) -> Allocation {
        self.me = None;
        ctx.stop();
        Allocation::Nodelete
    }
}

/// Produces `LINES` lines from its behaviours, waiting for room with a continuation.
struct Producer {
    writer: Addr<Writer>,
    next: u64,
    finished: mpsc::Sender<()>,
}
impl Producer {
    fn pump(&mut self, ctx: &mut Context<'_, Self>) {
        while self.next < LINES {
            match self.writer.try_send(format!("actor line {}", self.next)) {
                Ok(()) => self.next += 1,
                Err(TrySendError::Full(_)) => {
                    ctx.when_room(
                        &self.writer,
                        |me: &mut Producer, room: Room<String>, ctx| {
                            if room.send(format!("actor line {}", me.next)).is_ok() {
                                me.next += 1;
                                me.pump(ctx);
                            }
                            Allocation::Nodelete
                        },
                    );
                    return;
                }
                Err(TrySendError::Dead(_)) => return,
            }
        }
        self.finished.send(()).unwrap();
    }
}
impl Actor for Producer {}
impl Receive<()> for Producer {
    fn receive(&mut self, _: (), ctx: &mut Context<'_, Self>) -> Allocation {
        self.pump(ctx);
        Allocation::Nodelete
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let system = ActorSystem::new()?;
    let (done_tx, done) = mpsc::channel();
    let most_queued = Arc::new(AtomicUsize::new(0));
    let writer = system.spawn_bounded(
        Writer {
            me: None,
            written: 0,
            most_queued: most_queued.clone(),
            done: done_tx,
        },
        CAPACITY,
    );

    // A producer actor.
    let (finished_tx, finished) = mpsc::channel();
    system
        .spawn(Producer {
            writer: writer.clone(),
            next: 0,
            finished: finished_tx,
        })
        .send(())?;

    // A sampler that drops what does not fit.
    let sampler = {
        let writer = writer.clone();
        std::thread::spawn(move || {
            let mut dropped = 0u64;
            for n in 0..LINES {
                match writer.try_send(format!("sample {n}")) {
                    Ok(()) => {}
                    Err(TrySendError::Full(_)) => dropped += 1,
                    Err(TrySendError::Dead(_)) => break,
                }
            }
            dropped
        })
    };

    // This thread: blocks while the writer is full.
    for n in 0..LINES {
        writer.send_wait(format!("thread line {n}"))?;
    }
    let dropped = sampler.join().expect("sampler");
    finished.recv()?;
    writer.send(())?;
    let written = done.recv()?;
    println!(
        "written {written} lines ({LINES} from the thread, {LINES} from the actor, {} of \
         {LINES} samples; {dropped} samples dropped while full); at most {} queued (capacity \
         {CAPACITY})",
        LINES - dropped,
        most_queued.load(Ordering::Relaxed),
    );
    assert_eq!(written, 3 * LINES - dropped);
    assert!(most_queued.load(Ordering::Relaxed) <= CAPACITY);
    system.shutdown();
    Ok(())
}
