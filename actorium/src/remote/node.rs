//! A node: one Zenoh session, the frames it sends and receives, and this node's tables —
//! local actors other nodes may reach (exports), remote actors this node reaches (proxies),
//! asks waiting for their replies, and which nodes are lost.
//!
//! Keys (Zenoh key expressions):
//! - `actorium/inbox/<to>`: frames to node `to`, each opening with its sender's id. (One exact
//!   key per node, declared by its senders: Zenoh keeps the route, where a wildcard
//!   subscription would match every frame's key again: 10x the receiving cost.) Each node
//!   subscribes to its own inbox before it announces itself, and sends to a node only after
//!   seeing it (its name or its address came from it), so no frame goes to an inbox not yet
//!   declared.
//! - `actorium/node/<id>`: a liveliness token per node. Its deletion (the process ended, or
//!   the link was silent past the lease) is the node's loss: every ask waiting on it fails
//!   with `NodeDown`, every watcher of its actors hears `NodeDown`.
//! - `actorium/name/<name>/<tag>/<node>/<actor>`: a liveliness token per registered name and
//!   protocol (`names.rs`); it vanishes with the actor, the node or the link.
//!
//! What arrives is handled in `inbox.rs` (frames) and `peers.rs` (other nodes' tokens, losses
//! and the way back after one); what leaves, in `publish.rs` and `outbox.rs`. What other
//! nodes left here is filed by node (`by_node.rs`), so that a node's loss finds its own
//! entries without a pass over everyone's.
//!
//! Locks: the tables are under one mutex, never held while calling Zenoh or user code (Zenoh
//! may call this node's own callbacks from inside a declaration).

use super::by_node::ByNode;
use super::config::{RemoteConfig, RemoteError};
use super::peers::Lost;
use super::proxy::{Proxy, RemoteTarget};
use super::wire::{AwaitedReply, Head, Inbound, Outcome, Protocol};
use crate::actor::{AskError, Recipient, SystemHandle};
use crate::core::monitors::Watcher;
// Zenoh's callbacks run marked (`not_blocking`) as threads that must never block, as the
// timer thread is: a send that would wait goes through the outbox (see `put`), and a blocking
// wait for a reply, or a lookup, is refused.
use crate::runtime::context::not_blocking;
use crate::{Event, ExitReason};
use serde::{de::DeserializeOwned, Serialize};
use std::any::Any;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, Weak};
use zenoh::sample::Sample;
use zenoh::Wait;

/// The prefix of every key this crate uses.
pub(super) const PREFIX: &str = "actorium";

/// A node's state, shared by its [`super::Node`] handles, its Zenoh callbacks (weakly) and
/// the remote recipients it made (weakly).
pub struct NodeInner {
    pub(super) session: zenoh::Session,
    /// This node's id (its Zenoh id).
    pub(super) id: Arc<str>,
    /// `id` as frames open with it (`wire::pack_id`).
    wire_id: Box<[u8]>,
    system: SystemHandle,
    pub(super) max_frame: usize,
    /// How long a node unheard of is looked for before it counts as lost (the lease).
    pub(super) lease: std::time::Duration,
    /// How long Zenoh lets a put wait on a full link before it gives the link up (its
    /// `wait_before_close`): a put that waited this long tells the node's loss (`publish.rs`;
    /// `None`: never told so).
    pub(super) close_timeout: Option<std::time::Duration>,
    /// Every other node is reached through one link, the router's (client mode): that link
    /// given up loses them all.
    pub(super) routed: bool,
    numbers: AtomicU64,
    /// `Tables::losses`, read without the lock: a sender seen not lost stays so until it
    /// changes (`peers::from_lost`).
    pub(super) losses: AtomicU64,
    closed: AtomicBool,
    tables: Mutex<Tables>,
    /// Advanced each time exported actors stop being served (see `inbox::Route`).
    pub(super) exports_epoch: AtomicU64,
    /// Signalled when a node comes up or is lost (`put` waits on it for a node not yet seen).
    pub(super) seen: std::sync::Condvar,
    /// A publisher per destination node (`None`: the node was lost).
    publishers: Mutex<Publishers>,
    /// The inbox subscriber, the node watch and the node's token, dropped at close.
    keep: Mutex<Vec<Box<dyn Any + Send>>>,
    /// Frames made on Zenoh's threads, sent by a thread of the node's own (`put_later`).
    pub(super) outbox: Mutex<Option<mpsc::Sender<super::outbox::Job>>>,
    /// Frames waiting in the outbox (bounded: `outbox::OUTBOX_MAX`).
    pub(super) outbox_waiting: std::sync::atomic::AtomicUsize,
    /// `Lost` and `Back` frames waiting in the outbox (bounded apart: `outbox::OUTBOX_MAX`
    /// more, so that a full outbox does not keep two nodes apart).
    pub(super) handshakes_waiting: std::sync::atomic::AtomicUsize,
}

/// How many lost nodes a node remembers: bounds what a long life of processes coming and
/// going costs. A forgotten one that a recipient in a message still names is looked for
/// again, for at most a lease, before it counts as lost again.
pub(super) const LOST_KEPT: usize = 4096;

/// How many nodes a node knows only from the sender ids of their frames (no token seen):
/// bounds what frames with made-up sender ids cost (each would otherwise stay up for ever,
/// with its publisher and its watches).
pub(super) const HEARD_KEPT: usize = 4096;

/// A publisher per destination node (`None`: the node was lost).
type Publishers = HashMap<Arc<str>, Option<Arc<Publisher>>>;

pub(super) type Publisher = zenoh::pubsub::Publisher<'static>;

#[derive(Default)]
pub(super) struct Tables {
    /// Nodes whose link was lost (the last [`LOST_KEPT`]), and what is known of each.
    pub(super) down: HashMap<Arc<str>, Lost>,
    /// Losses so far (the last one's number).
    pub(super) losses: u64,
    /// The latest `Head::Lost` epoch each node sent that this node answered (a repeat of an
    /// answered one is answered again, and loses nothing more).
    pub(super) answered: HashMap<Arc<str>, u64>,
    /// How many `answered` are kept before those of nodes neither up nor lost are forgotten.
    pub(super) answered_sweep_at: usize,
    /// `down`, oldest first.
    pub(super) down_order: std::collections::VecDeque<Arc<str>>,
    /// Nodes whose token this node has seen (so frames sent to them have a route).
    pub(super) up: HashSet<Arc<str>>,
    /// The nodes in `up` known only from their frames (see `HEARD_KEPT`).
    pub(super) heard: HashSet<Arc<str>>,
    /// `heard`, oldest first.
    pub(super) heard_order: std::collections::VecDeque<Arc<str>>,
    /// Asks sent, waiting for replies: (node asked, number) → port.
    pub(super) asks: ByNode<AwaitedReply>,
    /// How many asks wait before those nobody waits for are forgotten.
    pub(super) sweep_at: usize,
    /// Remote actors with recipients on this node.
    pub(super) proxies: ByNode<Weak<Proxy>>,
    /// How many proxies are kept before those no recipient holds are forgotten.
    pub(super) proxies_sweep_at: usize,
    /// Remote actors being watched (kept until they end).
    pub(super) watched: ByNode<Arc<Proxy>>,
    /// Local actors other nodes may reach, by number.
    pub(super) exports: HashMap<u64, Export, LocalKeys>,
    /// Local actor (its id) → its number.
    pub(super) export_of: HashMap<usize, u64>,
    /// (Node, exported actor's number) for each export the node watches or links to (in the
    /// export's `watched_by` or `linked_by`): what its loss ends, found without a scan.
    pub(super) watching: ByNode<()>,
    /// Registered names: name → (tag, actor number) → its token.
    pub(super) names: HashMap<String, HashMap<(String, u64), zenoh::liveliness::LivelinessToken>>,
}

impl Tables {
    /// `id` is no longer known only from its frames (its token was seen, or it was lost).
    pub(super) fn unheard(&mut self, id: &str) {
        if self.heard.remove(id) {
            self.heard_order.retain(|n| **n != *id);
        }
    }

    /// Whether the link to node `id` was lost.
    pub(super) fn is_down(&self, id: &str) -> bool {
        self.down.contains_key(id)
    }

    /// Whether frames from node `id` are taken, and its actors reached: it is not lost, or it
    /// said that it lost this node too and is being answered (`peers::on_lost`: what it sends
    /// after saying so was made after its own `NodeDown`).
    pub(super) fn hears(&self, id: &str) -> bool {
        self.down.get(id).is_none_or(|l| l.answering)
    }
}

/// A local actor other nodes may reach.
pub(super) struct Export {
    pub(super) actor: usize,
    /// What it serves: tag → (delivery, its `Recipient<M>` as `Any`).
    pub(super) tags: HashMap<String, (Inbound, Box<dyn Any + Send + Sync>), LocalKeys>,
    /// Makes a watcher that runs the actor's `linked_exit`.
    pub(super) link: Arc<dyn Fn() -> Watcher + Send + Sync>,
    /// Nodes watching it (told `Down` when it ends).
    pub(super) watched_by: HashSet<Arc<str>>,
    /// Links from actors on other nodes (node → how many).
    pub(super) linked_by: HashMap<Arc<str>, usize>,
    /// The names it is registered under (keys of `Tables::names`).
    pub(super) named: HashSet<String>,
}

/// The hasher of the tables looked up for every frame that arrives (`exports`, `tags`): keys
/// chosen by this node (its actors' numbers, the tags registered here), so SipHash's
/// resistance to keys a peer picks buys nothing there; a peer's frame only looks up. One
/// multiply per word (the Fx hash of rustc).
#[derive(Clone, Copy, Default)]
pub(super) struct LocalKeys;

impl std::hash::BuildHasher for LocalKeys {
    type Hasher = FxHasher;
    fn build_hasher(&self) -> FxHasher {
        FxHasher(0)
    }
}

pub(super) struct FxHasher(u64);

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let mut last = [0u8; 8];
        last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        self.add(u64::from_le_bytes(last) ^ bytes.len() as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

thread_local! {
    /// The node encoding or decoding a frame on this thread (for recipients inside messages):
    /// borrowed from the caller of [`with_node`] for its duration, null outside.
    static CURRENT: std::cell::Cell<*const NodeInner> = const { std::cell::Cell::new(std::ptr::null()) };
}

/// Runs `f` with `node` as this thread's current node.
fn with_node<T>(node: &Arc<NodeInner>, f: impl FnOnce() -> T) -> T {
    struct Restore(*const NodeInner);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CURRENT.with(|c| c.replace(Arc::as_ptr(node))));
    f()
}

/// The node encoding or decoding a frame on this thread, if any.
pub(super) fn current() -> Option<Arc<NodeInner>> {
    let p = CURRENT.with(|c| c.get());
    if p.is_null() {
        return None;
    }
    // SAFETY: a non-null `CURRENT` was set by `with_node` from an `Arc<NodeInner>` its caller
    // holds until `with_node` returns and restores the previous value; we are inside it, on
    // its thread. So the allocation is alive, and taking one more strong count is sound.
    unsafe {
        Arc::increment_strong_count(p);
        Some(Arc::from_raw(p))
    }
}

impl NodeInner {
    /// Opens a node for `system`.
    pub(super) fn open(system: SystemHandle, cfg: &RemoteConfig) -> Result<Arc<Self>, RemoteError> {
        let config = cfg.to_zenoh()?;
        let close_timeout = super::publish::close_timeout(&config);
        let routed = super::publish::routed(&config);
        let session = zenoh::open(config)
            .wait()
            .map_err(|e| RemoteError::Open(e.to_string()))?;
        let id: Arc<str> = session.zid().to_string().into();
        let wire_id = super::wire::pack_id(&id)
            .ok_or_else(|| RemoteError::Open(format!("Zenoh gave an id that is not one: `{id}`")))?
            .into_boxed_slice();
        let node = Arc::new(NodeInner {
            session,
            id: id.clone(),
            wire_id,
            system,
            max_frame: cfg.max_frame,
            lease: cfg.lease,
            close_timeout,
            routed,
            numbers: AtomicU64::new(1),
            losses: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            exports_epoch: AtomicU64::new(0),
            seen: std::sync::Condvar::new(),
            tables: Mutex::new(Tables {
                sweep_at: 1024,
                proxies_sweep_at: 1024,
                answered_sweep_at: LOST_KEPT,
                ..Tables::default()
            }),
            publishers: Mutex::new(HashMap::new()),
            keep: Mutex::new(Vec::new()),
            outbox: Mutex::new(None),
            outbox_waiting: std::sync::atomic::AtomicUsize::new(0),
            handshakes_waiting: std::sync::atomic::AtomicUsize::new(0),
        });
        let engine = |e: zenoh::Error| RemoteError::Engine(e.to_string());
        // The inbox first, then the watch of other nodes, then this node's own token: a node
        // that sees the token can send at once.
        let weak = Arc::downgrade(&node);
        let inbox = node
            .session
            .declare_subscriber(format!("{PREFIX}/inbox/{id}"))
            .callback(move |s: Sample| {
                if let Some(n) = weak.upgrade() {
                    not_blocking(|| n.on_frame(&s));
                }
            })
            .wait()
            .map_err(engine)?;
        let weak = Arc::downgrade(&node);
        let nodes = node
            .session
            .liveliness()
            .declare_subscriber(format!("{PREFIX}/node/*"))
            .history(true)
            .callback(move |s: Sample| {
                if let Some(n) = weak.upgrade() {
                    not_blocking(|| n.on_node(&s));
                }
            })
            .wait()
            .map_err(engine)?;
        let token = node
            .session
            .liveliness()
            .declare_token(format!("{PREFIX}/node/{id}"))
            .wait()
            .map_err(engine)?;
        node.keep_lock().extend([
            Box::new(inbox) as Box<dyn Any + Send>,
            Box::new(nodes),
            Box::new(token),
        ]);
        Ok(node)
    }

    pub(super) fn tables(&self) -> MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn keep_lock(&self) -> MutexGuard<'_, Vec<Box<dyn Any + Send>>> {
        self.keep.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn publishers_lock(&self) -> MutexGuard<'_, Publishers> {
        self.publishers.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Closes the node: its names and token vanish, its links close, every ask it waits on
    /// fails with `NodeDown` and every remote actor it watches is told `NodeDown`.
    pub(super) fn close(self: &Arc<Self>) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        let names: Vec<_> = self.tables().names.drain().collect();
        drop(names);
        let keep: Vec<_> = self.keep_lock().drain(..).collect();
        drop(keep);
        // The outbox's thread ends with its sender; a sender waiting to see a node stops.
        drop(self.outbox.lock().unwrap_or_else(|p| p.into_inner()).take());
        self.seen.notify_all();
        let publishers = std::mem::take(&mut *self.publishers_lock());
        drop(publishers); // (undeclared outside the lock)
        let _ = self.session.close().wait();
        // Everything remote is now unreachable from here.
        let (asks, notices, links) = {
            let mut t = self.tables();
            let asks: Vec<_> = t.asks.drain().collect();
            let mut proxies: Vec<Arc<Proxy>> = t.watched.drain().collect();
            proxies.extend(t.proxies.drain().filter_map(|p| p.upgrade()));
            t.watching = ByNode::default();
            // The links remote actors made with this node's actors are lost too: each of
            // those actors hears `NodeDown` (as at a node's loss, `lose`).
            let mut links = Vec::new();
            for e in t.exports.values() {
                for &k in e.linked_by.values() {
                    links.extend(std::iter::repeat_n(e.link.clone(), k));
                }
            }
            t.exports.clear();
            self.exports_epoch.fetch_add(1, Ordering::Release);
            t.export_of.clear();
            let notices = proxies.iter().map(|p| p.mark_ended(&ExitReason::NodeDown));
            (asks, notices.collect(), links)
        };
        self.lost(asks, notices, links);
    }

    /// A fresh number (asks, exported actors).
    pub(super) fn next_number(&self) -> u64 {
        self.numbers.fetch_add(1, Ordering::Relaxed)
    }

    /// Encodes a frame: this node's id (packed: `wire::pack_id`), `head`, then `body`
    /// (recipients inside it are exported by this node).
    pub(super) fn encode<H: Serialize, B: Serialize + ?Sized>(
        self: &Arc<Self>,
        head: &H,
        body: &B,
    ) -> Result<Vec<u8>, String> {
        with_node(self, || {
            let mut v = Vec::with_capacity(64);
            v.extend_from_slice(&self.wire_id);
            let v = postcard::to_extend(head, v).map_err(|e| e.to_string())?;
            postcard::to_extend(body, v).map_err(|e| e.to_string())
        })
    }

    /// Encodes a frame that begins with `start` (this node's id and the start of a head, from
    /// [`Self::encode`]), then `rest` (the head's remaining fields), then `body`.
    pub(super) fn encode_after<H: Serialize, B: Serialize + ?Sized>(
        self: &Arc<Self>,
        start: &[u8],
        rest: &H,
        body: &B,
    ) -> Result<Vec<u8>, String> {
        with_node(self, || {
            let mut v = Vec::with_capacity(start.len() + 32);
            v.extend_from_slice(start);
            let v = postcard::to_extend(rest, v).map_err(|e| e.to_string())?;
            postcard::to_extend(body, v).map_err(|e| e.to_string())
        })
    }

    /// Decodes a frame's body as a `T`: all of it, or an error (never a panic: a user's
    /// `Deserialize` that panics is an error too).
    pub(super) fn decode<T: DeserializeOwned>(self: &Arc<Self>, body: &[u8]) -> Result<T, String> {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            with_node(self, || postcard::take_from_bytes::<T>(body))
        }));
        match r {
            Ok(Ok((v, []))) => Ok(v),
            Ok(Ok((_, rest))) => Err(format!("{} bytes past the end of the message", rest.len())),
            Ok(Err(e)) => Err(format!("malformed: {e}")),
            Err(p) => Err(format!(
                "its decoding panicked: {}",
                crate::core::panic_message(&*p)
            )),
        }
    }

    /// Sends a frame with no body (best effort: a lost node's watchers hear it otherwise).
    pub(super) fn send_head(self: &Arc<Self>, to: &Arc<str>, head: &Head<'_>) {
        if let Ok(frame) = self.encode(head, &()) {
            let _ = self.put(to, frame);
        }
    }

    /// Sends the reply to ask `ask` of node `to`.
    pub(super) fn reply<R: Serialize>(
        self: &Arc<Self>,
        to: &str,
        ask: u64,
        r: Result<R, AskError>,
    ) {
        if let Some(frame) = self.reply_frame(ask, r) {
            let _ = self.put(&to.into(), frame);
        }
    }

    /// As [`Self::reply`], from one of Zenoh's threads: through the outbox.
    pub(super) fn reply_later<R: Serialize>(
        self: &Arc<Self>,
        to: &str,
        ask: u64,
        r: Result<R, AskError>,
    ) {
        if let Some(frame) = self.reply_frame(ask, r) {
            self.put_later(&to.into(), frame);
        }
    }

    fn reply_frame<R: Serialize>(
        self: &Arc<Self>,
        ask: u64,
        r: Result<R, AskError>,
    ) -> Option<Vec<u8>> {
        let frame = match &r {
            Ok(v) => self.encode(
                &Head::Reply {
                    ask,
                    outcome: Outcome::Replied,
                },
                v,
            ),
            Err(e) => self.encode(
                &Head::Reply {
                    ask,
                    outcome: Outcome::of(*e),
                },
                &(),
            ),
        };
        match frame {
            Ok(f) => Some(f),
            Err(e) => {
                self.dropped_outgoing(std::any::type_name::<R>(), &e);
                self.encode(
                    &Head::Reply {
                        ask,
                        outcome: Outcome::Dropped,
                    },
                    &(),
                )
                .ok()
            }
        }
    }

    /// Files `port` under `ask` until node `to` replies; gives it back if `to` is lost.
    pub(super) fn await_reply(
        &self,
        to: &Arc<str>,
        ask: u64,
        port: AwaitedReply,
    ) -> Result<(), AwaitedReply> {
        let mut t = self.tables();
        if !t.hears(to) || self.is_closed() {
            return Err(port);
        }
        t.asks.insert(to, ask, port);
        if t.asks.len() >= t.sweep_at {
            // Forget the asks nobody waits for any more (a dropped `Pending`, a timed-out
            // wait, an asking actor that ended); their replies, if they come, are dropped and
            // reported. Dropped outside the lock: an actor's port runs its continuation's
            // drop, which may hold another node's reply port and send through this node.
            let gone = t.asks.take_where(|p| !p.wanted());
            t.sweep_at = (2 * t.asks.len()).max(1024);
            drop(t);
            drop(gone);
        }
        Ok(())
    }

    /// Takes back the port filed under `ask` to node `to`, if it is still there.
    pub(super) fn take_awaited(&self, to: &str, ask: u64) -> Option<AwaitedReply> {
        self.tables().asks.remove(to, ask)
    }

    /// Keeps `proxy` alive while it is watched.
    pub(super) fn keep_watched(&self, proxy: &Arc<Proxy>) {
        let mut t = self.tables();
        // (A proxy its node's loss ended meanwhile is not kept: nothing would remove it.)
        if !proxy.ended() && t.hears(&proxy.node_id) && !self.is_closed() {
            t.watched.insert(&proxy.node_id, proxy.id, proxy.clone());
        }
    }

    /// A recipient of actor `id` of node `node` (this node's own actor if `node` is this
    /// one's id).
    pub(super) fn recipient<M: Protocol>(self: &Arc<Self>, node: &str, id: u64) -> Recipient<M> {
        if *node == *self.id {
            if let Some(r) = self.local::<M>(id) {
                return r;
            }
        }
        let proxy = {
            let mut t = self.tables();
            match t.proxies.get(node, id).and_then(Weak::upgrade) {
                Some(p) => p,
                None => {
                    let node: Arc<str> = node.into();
                    let p = Arc::new(Proxy::new(Arc::downgrade(self), node.clone(), id));
                    // Ended under the lock, as a loss ends proxies (`lose`): a node coming
                    // back (`node_up`) forgets the ended proxies of its nodes under it, and
                    // must not keep one that is about to end. (A new proxy has no watchers.)
                    // (A node that said it lost this one too is on its way back: its
                    // actors, named in its frames since, are reached once it is.)
                    if !t.hears(&node) || self.is_closed() {
                        p.mark_ended(&ExitReason::NodeDown);
                    } else if *node == *self.id {
                        // One of ours that has ended (or never served `M`).
                        p.mark_ended(&ExitReason::NotAlive);
                    }
                    if t.proxies.len() >= t.proxies_sweep_at {
                        // Forget the proxies no recipient holds any more (now and then: a
                        // sweep per new proxy would cost a frame of many recipients the
                        // square of their number).
                        t.proxies.take_where(|p| p.strong_count() == 0);
                        t.proxies_sweep_at = (2 * t.proxies.len()).max(1024);
                    }
                    t.proxies.insert(&node, id, Arc::downgrade(&p));
                    p
                }
            }
        };
        Recipient::from_target(Arc::new(RemoteTarget::<M>::new(proxy)))
    }

    /// This node's exported actor `id`, as a `Recipient<M>`, if it serves `M`.
    fn local<M: Protocol>(&self, id: u64) -> Option<Recipient<M>> {
        let t = self.tables();
        let (_, any) = t.exports.get(&id)?.tags.get(&M::tag())?;
        any.downcast_ref::<Recipient<M>>().cloned()
    }

    /// The address other nodes reach `r` at: (node, number). A local actor is exported (it
    /// will serve `M` to other nodes until it ends).
    pub(super) fn address_of<M: Protocol>(self: &Arc<Self>, r: &Recipient<M>) -> (Arc<str>, u64) {
        match r.target().as_any().downcast_ref::<RemoteTarget<M>>() {
            Some(t) => (t.proxy.node_id.clone(), t.proxy.id),
            None => (self.id.clone(), self.export(r)),
        }
    }

    /// Exports the local actor of `r` for protocol `M`; its number.
    pub(super) fn export<M: Protocol>(self: &Arc<Self>, r: &Recipient<M>) -> u64 {
        let actor = r.target().cell_id() as usize;
        let (id, new) = {
            let mut t = self.tables();
            let (id, new) = match t.export_of.get(&actor) {
                Some(&id) => (id, false),
                None => (self.next_number(), true),
            };
            if new {
                t.export_of.insert(actor, id);
                let link_to = r.clone();
                t.exports.insert(
                    id,
                    Export {
                        actor,
                        tags: HashMap::default(),
                        link: Arc::new(move || link_to.link_watcher()),
                        watched_by: HashSet::new(),
                        linked_by: HashMap::new(),
                        named: HashSet::new(),
                    },
                );
            }
            let e = t.exports.get_mut(&id).expect("inserted above");
            e.tags
                .entry(M::tag())
                .or_insert_with(|| (M::inbound(r.clone()), Box::new(r.clone())));
            (id, new)
        };
        if new {
            // Served until it ends; then its names vanish and its watchers hear why.
            let weak = Arc::downgrade(self);
            let end: Watcher = Box::new(move |why: &ExitReason| {
                if let Some(n) = weak.upgrade() {
                    n.unexport(id, why);
                }
            });
            if let Err(end) = r.watch(end) {
                end(&ExitReason::NotAlive);
            }
        }
        id
    }

    /// Exported actor `id` ended with `why`.
    fn unexport(self: &Arc<Self>, id: u64, why: &ExitReason) {
        let (export, names) = {
            let mut t = self.tables();
            let Some(e) = t.exports.remove(&id) else {
                return;
            };
            self.exports_epoch.fetch_add(1, Ordering::Release);
            t.export_of.remove(&e.actor);
            for n in e.watched_by.iter().chain(e.linked_by.keys()) {
                t.watching.remove(n, id);
            }
            // (Each of its names under each of its protocols: not every name, nor every
            // actor registered under one of its names.)
            let mut names = Vec::new();
            for name in &e.named {
                if let Some(of_name) = t.names.get_mut(name) {
                    for tag in e.tags.keys() {
                        names.extend(of_name.remove(&(tag.clone(), id)));
                    }
                    if of_name.is_empty() {
                        t.names.remove(name);
                    }
                }
            }
            (e, names)
        };
        drop(names); // (undeclared outside the lock)
        let reason = super::wire::WireExit::from(why);
        for n in &export.watched_by {
            self.send_head(
                n,
                &Head::Down {
                    actor: id,
                    reason: reason.clone(),
                },
            );
        }
    }

    /// Reports a frame from `from` dropped for `why`.
    pub(super) fn dropped_incoming_from(&self, from: &str, why: &str) {
        self.system
            .report(&Event::RemoteFrameDropped { from, reason: why });
    }

    /// Reports a frame being decoded dropped for `why`.
    pub(super) fn dropped_incoming(&self, why: &str) {
        self.dropped_incoming_from("(a reply)", why);
    }

    /// Reports a message that could not be encoded (it was not sent).
    pub(super) fn dropped_outgoing(&self, tag: &str, why: &str) {
        self.dropped_unsent(&format!("not sent: `{tag}` could not be encoded: {why}"));
    }

    /// Reports a frame of this node's own dropped before it was sent, for `why`.
    pub(super) fn dropped_unsent(&self, why: &str) {
        self.system.report(&Event::RemoteFrameDropped {
            from: &self.id,
            reason: why,
        });
    }
}

#[cfg(test)]
#[path = "node_tests.rs"]
pub(super) mod tests;
