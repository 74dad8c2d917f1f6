//! The node's outbox: a thread of the node's own that sends what must not be sent where it
//! is made (a frame made on one of Zenoh's receiving threads would block it on a congested
//! link, the very thread that drains the other direction).

use super::node::NodeInner;
use super::wire::Head;
use crate::actor::AskError;
use std::sync::{mpsc, Arc};

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
    pub(super) fn put_later(self: &Arc<Self>, to: &Arc<str>, frame: Vec<u8>) {
        let to = to.clone();
        self.later(Box::new(move |n: &Arc<NodeInner>| {
            let ask = ask_in(&frame);
            if n.put(&to, frame).is_err() {
                if let Some(port) = ask.and_then(|a| n.take_awaited(a)) {
                    port.complete(Err(AskError::Dropped), n);
                }
            }
        }));
    }

    /// Runs `job` on the node's outbox thread (in order with the other jobs): for work that
    /// may block or call into Zenoh, asked for where neither is allowed (Zenoh's threads, or a
    /// drop that Zenoh may run under its own locks).
    fn later(self: &Arc<Self>, job: Job) {
        let mut outbox = self.outbox.lock().unwrap_or_else(|p| p.into_inner());
        if self.is_closed() {
            return;
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
        let _ = tx.send(job);
    }
}
