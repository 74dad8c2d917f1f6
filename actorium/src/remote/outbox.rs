//! The node's outbox: a thread of the node's own that sends what must not be sent where it
//! is made (a frame made on one of Zenoh's receiving threads would block it on a congested
//! link, the very thread that drains the other direction).

use super::node::NodeInner;
use super::wire::Head;
use crate::actor::AskError;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};

/// The most frames a node's outbox holds. Most are answers to frames a peer sent that this
/// node could not take (an ask to an ended actor, a bad frame): a peer that sends those
/// faster than it reads the answers would otherwise grow it without bound. Past it, a frame is
/// dropped and reported, and an ask in it is answered `Dropped`: the peer is not reading.
pub(super) const OUTBOX_MAX: usize = 4096;

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
        if self.outbox_waiting.fetch_add(1, Ordering::AcqRel) >= OUTBOX_MAX {
            self.outbox_waiting.fetch_sub(1, Ordering::AcqRel);
            self.answer_dropped(ask_in(&frame));
            self.dropped_unsent(&format!(
                "not sent to node `{to}`: this node's outbox is full ({OUTBOX_MAX} frames wait \
                 on congested links)"
            ));
            return;
        }
        let to = to.clone();
        let queued = self.later(Box::new(move |n: &Arc<NodeInner>| {
            let ask = ask_in(&frame);
            if n.put(&to, frame).is_err() {
                n.answer_dropped(ask);
            }
            n.outbox_waiting.fetch_sub(1, Ordering::AcqRel);
        }));
        if !queued {
            // (Closed, or no thread: it waits nowhere.)
            self.outbox_waiting.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// This node's ask `ask`, in a frame that was not sent, is answered `Dropped` if it still
    /// waits.
    fn answer_dropped(self: &Arc<Self>, ask: Option<u64>) {
        if let Some(port) = ask.and_then(|a| self.take_awaited(a)) {
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
