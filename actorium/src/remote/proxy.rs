//! A remote actor's stand-in on this node ([`Proxy`]: one per remote actor, shared by every
//! [`Recipient`] of it, so equality and hashing stay by actor), and the [`Target`] a remote
//! `Recipient<M>` sends through ([`RemoteTarget`]).

use super::node::{NodeInner, Publisher};
use super::wire::{Head, Protocol, WireExit};
use crate::actor::Target;
use crate::core::monitors::Watcher;
use crate::ExitReason;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// A remote actor as this node knows it: where it is, and whether it is known to have ended
/// (its node told us, or the link to its node was lost).
pub struct Proxy {
    pub(super) node: Weak<NodeInner>,
    /// Its node's id.
    pub(super) node_id: Arc<str>,
    /// Its number on its node.
    pub(super) id: u64,
    /// The publisher to its node, once one was used (weak: the node's table owns it).
    pub(super) publisher: OnceLock<Weak<Publisher>>,
    /// Whether `state.ended` is set (read on every send without the lock).
    ended: AtomicBool,
    state: Mutex<ProxyState>,
}

#[derive(Default)]
struct ProxyState {
    /// Why it ended, once known.
    ended: Option<ExitReason>,
    /// Who hears its end (monitors, links).
    watchers: Vec<Watcher>,
    /// Whether its node was asked to tell us of its end (`Monitor` sent).
    monitoring: bool,
}

impl Proxy {
    pub(super) fn new(node: Weak<NodeInner>, node_id: Arc<str>, id: u64) -> Self {
        Self {
            node,
            node_id,
            id,
            publisher: OnceLock::new(),
            ended: AtomicBool::new(false),
            state: Mutex::new(ProxyState::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, ProxyState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether it is known to have ended.
    pub(super) fn ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }

    /// It ended (or its node was lost): tells its watchers, once.
    pub(super) fn end(&self, reason: ExitReason) {
        let watchers = self.mark_ended(&reason);
        Self::tell(watchers, &reason);
    }

    /// The first half of [`Self::end`]: it counts as ended (sends to it fail) from now; its
    /// watchers, to be told with [`Self::tell`].
    pub(super) fn mark_ended(&self, reason: &ExitReason) -> Vec<Watcher> {
        let mut st = self.state();
        if st.ended.is_some() {
            return Vec::new();
        }
        st.ended = Some(reason.clone());
        self.ended.store(true, Ordering::Release);
        std::mem::take(&mut st.watchers)
    }

    /// Tells `watchers` why it ended.
    pub(super) fn tell(watchers: Vec<Watcher>, reason: &ExitReason) {
        for w in watchers {
            if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| w(reason))) {
                crate::core::report_panic("a monitor's notice (dropping its continuation)", &*p);
                crate::core::drop_payload(p);
            }
        }
    }

    /// Adds `w` to its watchers; gives it back if it has ended. The first watcher asks its
    /// node to tell us of its end.
    fn watch(self: &Arc<Self>, w: Watcher) -> Result<(), Watcher> {
        let first = {
            let mut st = self.state();
            if st.ended.is_some() {
                return Err(w);
            }
            st.watchers.push(w);
            !std::mem::replace(&mut st.monitoring, true)
        };
        if first {
            match self.node.upgrade() {
                Some(node) => {
                    // Kept alive while watched (a monitor outlives the recipients it came from).
                    node.keep_watched(self);
                    node.send_head(&self.node_id, &Head::Monitor { to: self.id });
                }
                None => self.end(ExitReason::NodeDown),
            }
        }
        Ok(())
    }
}

/// What a remote `Recipient<M>` holds.
pub(super) struct RemoteTarget<M> {
    pub(super) proxy: Arc<Proxy>,
    /// The start of each of its frames, encoded on the first send (see
    /// [`super::wire::FrameStart`]).
    start: OnceLock<Box<[u8]>>,
    _m: PhantomData<fn(M)>,
}

impl<M> RemoteTarget<M> {
    pub(super) fn new(proxy: Arc<Proxy>) -> Self {
        Self {
            proxy,
            start: OnceLock::new(),
            _m: PhantomData,
        }
    }
}

impl<M: Protocol> Target<M> for RemoteTarget<M> {
    fn deliver(&self, msg: M) -> Result<(), M> {
        if self.proxy.ended() {
            return Err(msg);
        }
        let Some(node) = self.proxy.node.upgrade() else {
            return Err(msg);
        };
        let start = match self.start.get() {
            Some(s) => s,
            None => match M::frame_start(&node, &self.proxy) {
                Ok(s) => self.start.get_or_init(|| s.into()),
                Err(e) => {
                    node.dropped_outgoing(&M::tag(), &e);
                    return Err(msg);
                }
            },
        };
        msg.send_remote(&node, &self.proxy, start)
    }
    fn deliver_counted(&self, msg: M) -> Result<(), M> {
        self.deliver(msg)
    }
    fn room(&self) -> Option<&crate::runtime::permits::Permits> {
        None
    }
    fn alive(&self) -> bool {
        !self.proxy.ended() && self.proxy.node.strong_count() > 0
    }
    fn cell_id(&self) -> *const () {
        Arc::as_ptr(&self.proxy).cast()
    }
    fn owner(&self) -> *const () {
        self.proxy.node.as_ptr().cast()
    }
    fn actor_type(&self) -> &'static str {
        "a remote actor"
    }
    fn driver(&self) -> Option<crate::core::ExecRef> {
        None
    }
    fn watch(&self, w: Watcher) -> Result<(), Watcher> {
        self.proxy.watch(w)
    }
    fn link_watcher(&self) -> Watcher {
        // The remote half of a link: the far node learns of it now (so the loss of the link
        // reaches the remote actor as `NodeDown`), and of the local actor's end when it comes.
        let proxy = self.proxy.clone();
        if let Some(node) = proxy.node.upgrade() {
            node.send_head(&proxy.node_id, &Head::Link { to: proxy.id });
        }
        Box::new(move |r: &ExitReason| {
            if let Some(node) = proxy.node.upgrade() {
                let reason = WireExit::from(r);
                node.send_head(
                    &proxy.node_id,
                    &Head::Exit {
                        to: proxy.id,
                        reason,
                    },
                );
            }
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
