//! The node's outbox: a thread of the node's own that sends what must not be sent where it
//! is made (a frame made on one of Zenoh's receiving threads would block it on a congested
//! link, the very thread that drains the other direction).

use super::node::{NodeInner, Publisher};
use super::proxy::Proxy;
use super::wire::Head;
use crate::actor::AskError;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc, Weak};
use zenoh::Wait;

/// The most frames a node's outbox holds. Most are answers to frames a peer sent that this
/// node could not take (an ask to an ended actor, a bad frame): a peer that sends those
/// faster than it reads the answers would otherwise grow it without bound. Past it, a frame is
/// dropped and reported, and an ask in it is answered `Dropped`: the peer is not reading.
pub(super) const OUTBOX_MAX: usize = 4096;

thread_local! {
    static OUTBOX_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether this thread is a node's outbox thread.
pub(super) fn on_outbox_thread() -> bool {
    OUTBOX_THREAD.with(|o| o.get())
}

/// Work for the node's outbox thread.
pub(super) type Job = Box<dyn FnOnce(&Arc<NodeInner>) + Send>;

/// The number of the ask a frame of this node's making carries, if it is an ask.
fn ask_in(frame: &[u8]) -> Option<u64> {
    let head = frame.get(1 + usize::from(*frame.first()?)..)?;
    match postcard::take_from_bytes::<Head<'_>>(head).ok()?.0 {
        Head::Ask { ask, .. } => Some(ask),
        _ => None,
    }
}

impl NodeInner {
    /// Sends `frame` to `to` from the outbox's thread: a frame made on one of Zenoh's
    /// receiving threads must not block it (a congested link would stop the very thread that
    /// drains the other direction).
    ///
    /// An ask in a frame that cannot be put is answered `Dropped` if it still waits (its
    /// sender was told it was sent): a lost node's asks were answered `NodeDown` by its loss
    /// already, so only an engine error leaves one waiting.
    ///
    /// At most [`OUTBOX_MAX`] frames wait: past that, `frame` is dropped and reported (an ask
    /// in it answered `Dropped`).
    pub(super) fn put_later(self: &Arc<Self>, to: &Arc<str>, frame: Vec<u8>) {
        let to2 = to.clone();
        self.later_put(to, frame, move |n, frame| n.put(&to2, frame));
    }

    /// As [`Self::put_later`], sending with `put` on the outbox's thread.
    pub(super) fn later_put(
        self: &Arc<Self>,
        to: &Arc<str>,
        frame: Vec<u8>,
        put: impl FnOnce(&Arc<NodeInner>, Vec<u8>) -> Result<(), ()> + Send + 'static,
    ) {
        if self.outbox_waiting.fetch_add(1, Ordering::AcqRel) >= OUTBOX_MAX {
            self.outbox_waiting.fetch_sub(1, Ordering::AcqRel);
            self.answer_dropped(to, ask_in(&frame));
            self.dropped_unsent(&format!(
                "not sent to node `{to}`: this node's outbox is full ({OUTBOX_MAX} frames wait \
                 on congested links)"
            ));
            return;
        }
        let to2 = to.clone();
        let queued = self.later(Box::new(move |n: &Arc<NodeInner>| {
            let ask = ask_in(&frame);
            if put(n, frame).is_err() {
                n.answer_dropped(&to2, ask);
            }
            n.outbox_waiting.fetch_sub(1, Ordering::AcqRel);
        }));
        if !queued {
            // (Closed, or no thread: it waits nowhere.)
            self.outbox_waiting.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// [`Self::put_to`] on the outbox's thread: a frame refused because its node is coming
    /// back, with the answer to its `Lost` still in the outbox, goes behind that answer
    /// (it was made after this node heard of the loss, to a recipient made since).
    pub(super) fn put_to_later(
        self: &Arc<Self>,
        to: &Arc<Proxy>,
        frame: Vec<u8>,
    ) -> Result<(), ()> {
        let owed = || {
            let t = self.tables();
            t.down.get(&*to.node_id).is_some_and(|l| l.back_owed)
        };
        if !to.ended() && owed() {
            // (Again each time: the answer's job may be queued just after this one. It ends
            // the wait, sent or not: `back_owed` does not outlive it.)
            let to = to.clone();
            let id = to.node_id.clone();
            self.later_put(&id, frame, move |n, frame| n.put_to_later(&to, frame));
            return Ok(());
        }
        self.put_to(to, frame)
    }

    /// Sends `head` (a frame with no body) to node `to` from the outbox's thread, whether or
    /// not this node holds `to` as lost (a `Lost`, or a repeated `Back`), behind the sends
    /// in flight through `behind` (see [`Self::put_direct`]).
    pub(super) fn tell_later(
        self: &Arc<Self>,
        to: &Arc<str>,
        head: &Head<'_>,
        behind: Option<Weak<Publisher>>,
    ) {
        let Ok(frame) = self.encode(head, &()) else {
            return;
        };
        let to = to.clone();
        let _ = self.handshake_later(Box::new(move |n: &Arc<NodeInner>| {
            let _ = n.put_direct(&to, frame, behind);
        }));
    }

    /// Runs `job`, which sends a `Lost` or a `Back`, on the outbox's thread. Such jobs are
    /// bounded apart from the other frames ([`OUTBOX_MAX`] more): an outbox full of frames
    /// for congested links must not keep two nodes apart (a `Lost` is sent again only at the
    /// next power of two of frames dropped, or when the node's token is seen again). Past
    /// that bound too (thousands of losses at once: made-up sender ids), it is dropped and
    /// reported.
    pub(super) fn handshake_later(self: &Arc<Self>, job: Job) -> bool {
        if self.handshakes_waiting.fetch_add(1, Ordering::AcqRel) >= OUTBOX_MAX {
            self.handshakes_waiting.fetch_sub(1, Ordering::AcqRel);
            self.dropped_unsent(&format!(
                "a node's loss not told: this node's outbox holds {OUTBOX_MAX} such already"
            ));
            return false;
        }
        let queued = self.later(Box::new(move |n: &Arc<NodeInner>| {
            job(n);
            n.handshakes_waiting.fetch_sub(1, Ordering::AcqRel);
        }));
        if !queued {
            self.handshakes_waiting.fetch_sub(1, Ordering::AcqRel);
        }
        queued
    }

    /// Puts `frame` to node `to` whether or not this node holds it as lost (the `Lost` and
    /// `Back` of a way back up), as a publisher puts (blocking congestion control, the same
    /// priority: it keeps its place among the frames to `to`). `behind`: a publisher to `to`
    /// that sends begun before a loss may still hold; the frame waits until they are done
    /// (within the link's close timeout), so that it overtakes none of them.
    pub(super) fn put_direct(
        &self,
        to: &str,
        frame: Vec<u8>,
        behind: Option<Weak<Publisher>>,
    ) -> Result<(), ()> {
        let mut pause = std::time::Duration::from_micros(10);
        while behind.as_ref().is_some_and(|p| p.strong_count() > 0) {
            std::thread::sleep(pause);
            pause = (pause * 2).min(std::time::Duration::from_millis(1));
        }
        self.session
            .put(format!("{}/inbox/{to}", super::node::PREFIX), frame)
            .congestion_control(zenoh::qos::CongestionControl::Block)
            .wait()
            .map_err(|_| ())
    }

    /// This node's ask `ask`, in a frame that was not sent, is answered `Dropped` if it still
    /// waits.
    fn answer_dropped(self: &Arc<Self>, to: &str, ask: Option<u64>) {
        if let Some(port) = ask.and_then(|a| self.take_awaited(to, a)) {
            port.complete(Err(AskError::Dropped), self);
        }
    }

    /// Runs `job` on the node's outbox thread (in order with the other jobs): for work that
    /// may block or call into Zenoh, asked for where neither is allowed (Zenoh's threads, or a
    /// drop that Zenoh may run under its own locks). Whether it was queued (not once the node
    /// is closed, nor if its thread could not start).
    fn later(self: &Arc<Self>, job: Job) -> bool {
        let mut outbox = self.outbox.lock().unwrap_or_else(|p| p.into_inner());
        if self.is_closed() {
            return false;
        }
        let tx = outbox.get_or_insert_with(|| {
            let (tx, rx) = mpsc::channel::<Job>();
            let node = Arc::downgrade(self);
            let spawned = std::thread::Builder::new()
                .name("actorium-remote-out".into())
                .spawn(move || {
                    OUTBOX_THREAD.with(|o| o.set(true));
                    // Ends when the node closes (its sender is dropped) or is gone.
                    while let Ok(job) = rx.recv() {
                        match node.upgrade() {
                            Some(n) => job(&n),
                            None => return,
                        }
                    }
                });
            // (No thread: the jobs sent to it are dropped, as frames on a lost link.)
            drop(spawned);
            tx
        });
        // (Refused, the job comes back inside the error, and is dropped here.)
        tx.send(job).is_ok()
    }
}
