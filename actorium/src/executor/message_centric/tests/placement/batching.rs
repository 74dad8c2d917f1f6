//! Batching: a stream's queue is held until its batch grows (rule 7).

use super::*;

/// Receives a stream that another thread sends it while its behaviour runs (`Feed`: the
/// behaviour starts a thread that sends `n` items to the stream_sink and joins it).
struct StreamSink {
    n: u64,
    next: u64,
    report: mpsc::Sender<Result<(), String>>,
}
struct Feed;
struct Item(u64);
impl Actor for StreamSink {}
impl Receive<Feed> for StreamSink {
    fn receive(&mut self, _: Feed, ctx: &mut Context<'_, Self>) -> Allocation {
        let (me, n) = (ctx.address(), self.n);
        std::thread::spawn(move || {
            for k in 0..n {
                me.send(Item(k)).unwrap();
            }
        })
        .join()
        .unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Item> for StreamSink {
    fn receive(&mut self, Item(k): Item, _: &mut Context<'_, Self>) -> Allocation {
        if k != self.next {
            self.report
                .send(Err(format!("item {k} came after item {}", self.next)))
                .unwrap();
        }
        self.next = k + 1;
        if self.next == self.n {
            self.report.send(Ok(())).unwrap();
            return Allocation::Delete;
        }
        Allocation::Nodelete
    }
}

/// Placement rule 7: when mail keeps arriving from other threads while a worker runs a queue,
/// and the visit hands nothing off (nobody waits for it), the worker ends the visit and holds
/// the queue off, so that its next batch is larger. Here the mail is in the queue when the
/// behaviour returns, by construction: the visit holds the queue once, deterministically, on
/// 1 and 2 workers, and every item still arrives once and in order. With queue stealing off
/// (the thesis's executor) nothing is held.
#[test]
fn a_stream_from_another_thread_is_held_off_until_its_batch_grows() {
    watchdog(120, || {
        for (workers, stealing) in [
            (1, QueueStealing::LongestVictim),
            (2, QueueStealing::LongestVictim),
            (2, QueueStealing::Random),
            (2, QueueStealing::None),
        ] {
            let system = system(workers, stealing);
            let (tx, rx) = mpsc::channel();
            let stream_sink = system.spawn(StreamSink {
                n: 100,
                next: 0,
                report: tx,
            });
            stream_sink.send(Feed).unwrap();
            rx.recv().unwrap().unwrap();
            drop(stream_sink);
            let holds = system.stats().unwrap().holds;
            system.stop();
            if stealing == QueueStealing::None {
                assert_eq!(
                    holds, 0,
                    "the thesis's executor (no stealing) holds nothing"
                );
            } else {
                assert!(holds >= 1, "{workers} workers, {stealing:?}: no hold");
            }
        }
    });
}
