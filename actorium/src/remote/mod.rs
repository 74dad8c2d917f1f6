//! Remote actors (feature `remote`): the same typed [`Recipient`]s across processes and
//! machines, on [Zenoh](https://zenoh.io).
//!
//! A system opens a [`Node`] ([`crate::ActorSystem::remote`]). A node registers local actors
//! under names, for the protocols they serve ([`Node::register`]); any node looks a name up
//! ([`Node::lookup`]) and gets a `Recipient<M>` that works as a local one does: `send`, `ask`
//! (blocking, `.await`, [`crate::Context::ask`] with or without a timeout), timers,
//! [`Recipient::monitor`], [`crate::Context::monitor`] and [`crate::Context::link`]. A
//! recipient can travel inside a message (a reply-to address just works), and two recipients
//! of one remote actor are equal and hash alike.
//!
//! Message types opt in: serde and a stable tag ([`RemoteMessage`]); a protocol is a message,
//! or an [`crate::Ask`] of two ([`Protocol`]). Two programs share only their message types.
//!
//! ```no_run
//! use actorium::remote::{RemoteConfig, RemoteMessage};
//! use actorium::{Actor, ActorSystem, Allocation, Ask, Context, Receive};
//! use serde::{Deserialize, Serialize};
//! use std::time::Duration;
//!
//! #[derive(Serialize, Deserialize)]
//! struct Add(u64);
//! impl RemoteMessage for Add { const TAG: &'static str = "demo.Add"; }
//! #[derive(Serialize, Deserialize)]
//! struct Sum(u64);
//! impl RemoteMessage for Sum { const TAG: &'static str = "demo.Sum"; }
//!
//! struct Counter(u64);
//! impl Actor for Counter {}
//! impl Receive<Ask<Add, Sum>> for Counter {
//!     fn receive(&mut self, a: Ask<Add, Sum>, _: &mut Context<'_, Self>) -> Allocation {
//!         self.0 += a.msg.0;
//!         let _ = a.reply.send(Sum(self.0));
//!         Allocation::Nodelete
//!     }
//! }
//!
//! // Process 1: serves a counter.
//! let system = ActorSystem::new()?;
//! let node = system.remote(RemoteConfig::peer().listen("tcp/127.0.0.1:7447"))?;
//! node.register::<Ask<Add, Sum>>("counter", &system.spawn(Counter(0)))?;
//!
//! // Process 2: asks it.
//! let system = ActorSystem::new()?;
//! let node = system.remote(RemoteConfig::peer().connect("tcp/127.0.0.1:7447"))?;
//! let counter = node.lookup::<Ask<Add, Sum>>("counter", Duration::from_secs(5))?;
//! let Sum(n) = counter.ask(Add(2))?.wait()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The promise
//! - Per ordered pair of actors: FIFO, at most once, no duplicates. Asks and messages to one
//!   actor stay in order with each other.
//! - A message is lost only when the link between the two nodes fails (or the receiving
//!   actor has ended: a dead letter, as locally; or it was made on a thread that must not
//!   wait, the system's timer thread or Zenoh's, and the node's outbox of such frames is full:
//!   reported as [`crate::Event::RemoteFrameDropped`], see `docs/REMOTE.md`); on a failed
//!   link every monitor and link of the remote
//!   node's actors hears [`crate::ExitReason::NodeDown`], every pending ask on it
//!   [`crate::AskError::NodeDown`], and later sends to them return the message. A killed
//!   process closes its sockets: that is seen at once; a frozen process or a cut link is seen
//!   within the lease ([`RemoteConfig::lease`], default 10 s).
//! - A loss is heard on both sides, even one that only one side sees (a node that gave up
//!   waiting for another's token, or lost it among thousands): the node that holds another
//!   as lost drops that node's frames and tells it so, and the other then hears `NodeDown`
//!   for everything it had waiting there. The two come back (new lookups and recipients
//!   reach each other; the old ones stay ended) once both have heard of the loss: a message
//!   is not lost without its sender's `NodeDown` before the next one that arrives (within
//!   the outbox's bounds, see `docs/REMOTE.md`).
//! - Names cannot go stale: a registered name is a Zenoh liveliness token, gone with its
//!   actor, its node or the link to it, and it counts only while its node's own token is
//!   seen (a name that outlives what this node knows of its node never brings the node back).
//!   A lookup of the wrong protocol finds nothing.
//! - Backpressure on the link: Zenoh's queues are bounded, and a congested link blocks the
//!   sender (as Erlang's busy port) rather than drop a frame (frames made on the timer thread
//!   or Zenoh's threads wait in the bounded outbox instead); a link blocked past Zenoh's
//!   close timeout is lost. The receiving actor's mailbox is not bounded by the link: frames
//!   are delivered as plain sends (a bounded actor takes them past its capacity, as a local
//!   `send`), so pace a producer faster than its remote consumer with asks.
//! - Only registered message types are ever decoded, each only as the type its tag names. A
//!   malformed, truncated, oversized or unknown frame is dropped and reported
//!   ([`crate::Event::RemoteFrameDropped`]); it never panics nor stops the node, and an ask
//!   in such a frame is answered [`crate::AskError::Dropped`].
//! - Frames go only to nodes whose token this node has seen: the first frame to a node heard
//!   of only through a recipient inside a message waits for it (up to the lease); not seen in
//!   time, the node counts as lost (`NodeDown`).
//! - Frames are not authenticated beyond the link: any node that reaches another may claim
//!   to be a third. Keep nodes on loopback, or behind mutual TLS (`RemoteConfig::tls`, feature
//!   `remote-tls`) so that only holders of your authority's certificates reach them.
//!
//! # Zenoh's defaults, and what this module changes
//! - Multicast scouting is off (it would announce the node on the local network): nodes are
//!   connected through the endpoints of [`RemoteConfig`], then find each other through
//!   those peers (gossip).
//! - A peer or router listens on loopback (`tcp/127.0.0.1:0`, or `tls/127.0.0.1:0` with
//!   `tls`) unless told otherwise; a client listens on nothing.
//! - Frames are put with blocking congestion control (Zenoh's default drops under congestion).
//! - A frame sent before the receiver's subscription is known would be lost: a node declares
//!   its inbox before it announces itself, and frames go only to nodes this node has heard
//!   of (through a name or an address they sent).
//!
//! # Threads and costs
//! Zenoh runs its own threads (a tokio runtime inside; users need none). Frames are delivered
//! to local actors from those threads, as sends from outside the system. A remote send
//! encodes the message (postcard) and hands it to Zenoh: no thread wake-up of actorium's
//! own. Do not call into a node from inside a tokio *current-thread* runtime (Zenoh's
//! blocking calls refuse it); a multi-thread runtime, threads and behaviours are fine.

/// Tables keyed by node, then number (what a node's loss takes).
mod by_node;
/// `RemoteConfig`, its Zenoh configuration, `RemoteError`.
mod config;
/// Frames that arrive: decoded, checked, delivered or reported.
mod inbox;
/// Names: registration, lookups, watches (liveliness tokens).
mod names;
/// A node: its session, its tables, exports and proxies.
mod node;
/// Frames sent from the node's own thread (for threads that must not block).
mod outbox;
/// Other nodes: tokens, losses and the way back after one.
mod peers;
/// A remote actor as this node sees it (behind a `Recipient`).
mod proxy;
/// Frames that leave: publishers, blocking puts, the close timeout's loss.
mod publish;
/// A `Recipient` inside a message.
mod recipient_serde;
/// The frame format and the typed protocols (`RemoteMessage`, `Ask<Q, R>`).
mod wire;

pub use config::{RemoteConfig, RemoteError};
pub use names::{Listing, NameWatch};
pub use wire::{Protocol, RemoteMessage};

use crate::actor::{Recipient, SystemHandle};
use crate::ActorSystem;
use node::NodeInner;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Whether `id` looks like a node id (a Zenoh id as Zenoh writes it: 1 to 32 lower-case
/// hexadecimal digits, exactly the ids frames can carry: `wire::pack_id`).
fn valid_node_id(id: &str) -> bool {
    (1..=32).contains(&id.len()) && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A system's presence on the network: where its actors are registered and remote actors
/// looked up. Cheap to clone; the node closes when its last handle is dropped, or at
/// [`Node::close`] (its names vanish, its links close, every remote ask and watch it holds
/// hears `NodeDown`).
#[derive(Clone)]
pub struct Node {
    inner: Arc<NodeInner>,
    _closer: Arc<Closer>,
}

/// Closes the node when the last [`Node`] handle goes.
struct Closer(Arc<NodeInner>);

impl Drop for Closer {
    fn drop(&mut self) {
        self.0.close();
    }
}

impl fmt::Debug for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Node").field("id", &self.id()).finish()
    }
}

impl ActorSystem {
    /// Opens this system's node: its actors can then be registered under names and reached
    /// from other processes and machines ([`Node`]; feature `remote`).
    ///
    /// # Errors
    /// [`RemoteError::Config`] or [`RemoteError::Open`] (a port in use, a client that reaches
    /// no router).
    pub fn remote(&self, config: RemoteConfig) -> Result<Node, RemoteError> {
        self.handle().remote(config)
    }
}

impl SystemHandle {
    /// As [`ActorSystem::remote`].
    ///
    /// # Errors
    /// As [`ActorSystem::remote`].
    pub fn remote(&self, config: RemoteConfig) -> Result<Node, RemoteError> {
        let inner = NodeInner::open(self.clone(), &config)?;
        Ok(Node {
            _closer: Arc::new(Closer(inner.clone())),
            inner,
        })
    }
}

impl Node {
    /// This node's id (its Zenoh id, hexadecimal): what [`crate::Event::RemoteFrameDropped`]
    /// names.
    pub fn id(&self) -> &str {
        &self.inner.id
    }

    /// Registers the local actor `actor` under `name`, for protocol `M` (call once per
    /// protocol it serves). Other nodes find it with [`Self::lookup`] until it ends, this node
    /// closes, or [`Self::unregister`]. Several actors may share a name (a group:
    /// [`Self::lookup_all`]).
    ///
    /// # Errors
    /// [`RemoteError::BadName`] for a name (or `M`'s tag) that is not valid,
    /// [`RemoteError::NotLocal`] for a remote recipient, [`RemoteError::NotAlive`] for an
    /// actor that has ended, [`RemoteError::Closed`].
    pub fn register<M: Protocol>(
        &self,
        name: &str,
        actor: impl Into<Recipient<M>>,
    ) -> Result<(), RemoteError> {
        self.inner.register(name, &actor.into())
    }

    /// Removes every registration of `name` on this node.
    pub fn unregister(&self, name: &str) {
        self.inner.unregister(name);
    }

    /// An actor registered under `name` for protocol `M`, on any node this one reaches
    /// (this one included), waiting up to `timeout` for one to appear (`Duration::MAX`: no
    /// limit).
    ///
    /// # Errors
    /// [`RemoteError::NotFound`] if none appeared in time (an actor registered for another
    /// protocol is not found); [`RemoteError::BadName`]; [`RemoteError::WouldBlock`] inside a
    /// name watch's callback.
    pub fn lookup<M: Protocol>(
        &self,
        name: &str,
        timeout: Duration,
    ) -> Result<Recipient<M>, RemoteError> {
        self.inner.lookup(name, timeout)
    }

    /// Every actor registered under `name` for `M` now: the answers that come within
    /// `timeout` (the whole timeout is spent if a reachable node does not answer).
    ///
    /// # Errors
    /// [`RemoteError::BadName`], [`RemoteError::Engine`]; [`RemoteError::WouldBlock`] inside
    /// a name watch's callback.
    pub fn lookup_all<M: Protocol>(
        &self,
        name: &str,
        timeout: Duration,
    ) -> Result<Vec<Recipient<M>>, RemoteError> {
        self.inner.lookup_all(name, timeout)
    }

    /// Calls `f` for each actor registered under `name` for `M` ([`Listing::Up`]: those
    /// there now, then those that come) and each that leaves ([`Listing::Down`]: it ended,
    /// was unregistered, or its node was lost), until the [`NameWatch`] is dropped. `f` runs
    /// on one of Zenoh's threads: keep it short (send to an actor). It must not block: a
    /// blocking wait for a reply there returns [`crate::AskError::WouldBlock`], a lookup
    /// [`RemoteError::WouldBlock`], and a send that would wait on a congested link is handed
    /// to the node's own thread.
    ///
    /// # Errors
    /// [`RemoteError::BadName`], [`RemoteError::Engine`].
    pub fn watch_name<M, F>(&self, name: &str, f: F) -> Result<NameWatch, RemoteError>
    where
        M: Protocol,
        F: Fn(Listing<M>) + Send + Sync + 'static,
    {
        self.inner.watch_name(name, f)
    }

    /// Closes the node now (for every handle): as when the last handle is dropped.
    pub fn close(&self) {
        self.inner.close();
    }

    /// Whether the link to node `id` was lost (or this node closed).
    pub fn is_lost(&self, id: &str) -> bool {
        self.inner.is_closed() || self.inner.tables().is_down(id)
    }
}
