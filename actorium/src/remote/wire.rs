//! What travels between nodes: the message types that opt in ([`RemoteMessage`]), what a
//! remote name serves ([`Protocol`]: a message, or an ask of one), and the frames.
//!
//! A frame is its sender's node id (packed, [`pack_id`]), a postcard-encoded [`Head`], then
//! its body, the postcard encoding of the message or reply (so a message is encoded once,
//! straight into the frame's buffer). Tags name message types on the wire: a frame is
//! decoded only as the type its tag names, and only if the receiving actor was registered
//! for that tag.

use super::node::NodeInner;
use super::proxy::Proxy;
use crate::actor::{Ask, AskError, Recipient, ReplyTo, SendError};
use crate::ExitReason;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::sync::{Arc, Weak};

/// A message type that may cross to another node: serde, and a stable `TAG` that names it on
/// the wire (never `type_name`, which changes with a module's path). Two programs that share
/// a message type share its tag; one whose fields change should change its tag.
///
/// A tag is 1 to 64 ASCII letters, digits, `_`, `-` or `.`, unique among the message types
/// of a system of nodes (a reverse domain name or a crate prefix keeps it so).
///
/// ```
/// use serde::{Deserialize, Serialize};
/// #[derive(Serialize, Deserialize)]
/// struct Greet(String);
/// impl actorium::remote::RemoteMessage for Greet {
///     const TAG: &'static str = "demo.Greet";
/// }
/// ```
pub trait RemoteMessage: Serialize + DeserializeOwned + Send + 'static {
    /// The type's name on the wire.
    const TAG: &'static str;
}

/// What a remote name can serve and a remote [`Recipient`] can carry: a [`RemoteMessage`]
/// `M` (sent with `send`), or an [`Ask<Q, R>`] whose question and reply are both remote
/// messages (sent with `ask`, blocking, `.await` or [`crate::Context::ask`]). Sealed.
pub trait Protocol: sealed::Wire {}

impl<M: RemoteMessage> Protocol for M {}
impl<Q: RemoteMessage, R: RemoteMessage> Protocol for Ask<Q, R> {}

pub(crate) mod sealed {
    use super::*;

    /// How a protocol crosses: its wire tag, its send, and its delivery on the far side.
    pub trait Wire: Send + Sized + 'static {
        /// The tag this protocol is registered and looked up under.
        fn tag() -> String;
        /// The start of every frame of this protocol to `to`, the same for each: this node's
        /// id and the head up to its per-frame fields ([`FrameStart`]).
        fn frame_start(node: &Arc<NodeInner>, to: &Proxy) -> Result<Vec<u8>, String>;
        /// Sends `self` to the remote actor of `to`, over `node`, in a frame that begins with
        /// `start` (from [`Self::frame_start`]); gives it back if it cannot.
        fn send_remote(
            self,
            node: &Arc<NodeInner>,
            to: &Arc<Proxy>,
            start: &[u8],
        ) -> Result<(), Self>;
        /// What delivers this protocol's frames to `local` on this node.
        fn inbound(local: Recipient<Self>) -> Inbound;
    }
}

/// Delivers one frame's body to a local actor.
pub type Inbound = Arc<Deliver>;

/// What an [`Inbound`] calls.
pub type Deliver = dyn Fn(Incoming<'_>) -> Result<(), String> + Send + Sync;

/// A frame for a local actor, as [`Inbound`] receives it.
pub struct Incoming<'a> {
    pub(super) node: &'a Arc<NodeInner>,
    /// For an ask: the asking node, and the ask's number there.
    pub(super) ask: Option<(&'a str, u64)>,
    pub(super) body: &'a [u8],
}

impl<M: RemoteMessage> sealed::Wire for M {
    fn tag() -> String {
        M::TAG.to_string()
    }

    fn frame_start(node: &Arc<NodeInner>, to: &Proxy) -> Result<Vec<u8>, String> {
        let start = FrameStart::Tell {
            to: to.id,
            tag: M::TAG,
        };
        node.encode(&start, &())
    }

    fn send_remote(self, node: &Arc<NodeInner>, to: &Arc<Proxy>, start: &[u8]) -> Result<(), Self> {
        match node.encode_after(start, &(), &self) {
            Ok(frame) => node.put_to(to, frame).map_err(|()| self),
            Err(e) => {
                node.dropped_outgoing(M::TAG, &e);
                Err(self)
            }
        }
    }

    fn inbound(local: Recipient<Self>) -> Inbound {
        Arc::new(move |i: Incoming<'_>| {
            if i.ask.is_some() {
                return Err(format!("an ask for `{}`, which is told, not asked", M::TAG));
            }
            let m: M = i.node.decode(i.body)?;
            // Never waits (this is one of Zenoh's threads, shared by every link): a bounded
            // actor takes it past its capacity, as a plain local `send`. A dead letter if the
            // actor ended meanwhile: at most once, as for local sends.
            let _ = local.send(m);
            Ok(())
        })
    }
}

impl<Q: RemoteMessage, R: RemoteMessage> sealed::Wire for Ask<Q, R> {
    fn tag() -> String {
        ask_tag(Q::TAG, R::TAG)
    }

    fn frame_start(node: &Arc<NodeInner>, to: &Proxy) -> Result<Vec<u8>, String> {
        let start = FrameStart::Ask {
            to: to.id,
            tag: &ask_tag(Q::TAG, R::TAG),
        };
        node.encode(&start, &())
    }

    fn send_remote(self, node: &Arc<NodeInner>, to: &Arc<Proxy>, start: &[u8]) -> Result<(), Self> {
        let Ask { msg, reply } = self;
        // The number the reply will carry (the head's last field); the port waits under it
        // until then (or until the node is lost: NodeDown).
        let ask = node.next_number();
        let frame = match node.encode_after(start, &ask, &msg) {
            Ok(f) => f,
            Err(e) => {
                node.dropped_outgoing(&ask_tag(Q::TAG, R::TAG), &e);
                return Err(Ask { msg, reply });
            }
        };
        if let Err(reply) = node.await_reply(&to.node_id, ask, AwaitedReply::new(reply)) {
            return Err(Ask {
                msg,
                reply: reply.into_port(),
            });
        }
        if node.put_to(to, frame).is_err() {
            // Not sent: take the port back, unless the node's loss already answered it
            // (`NodeDown`): then the ask counts as sent and lost with the link.
            if let Some(r) = node.take_awaited(&to.node_id, ask) {
                return Err(Ask {
                    msg,
                    reply: r.into_port(),
                });
            }
        }
        Ok(())
    }

    fn inbound(local: Recipient<Self>) -> Inbound {
        Arc::new(move |i: Incoming<'_>| {
            let Some((from, ask)) = i.ask else {
                return Err(format!(
                    "a told message for an ask `{}`",
                    ask_tag(Q::TAG, R::TAG)
                ));
            };
            let q: Q = i.node.decode(i.body)?;
            let node: Weak<NodeInner> = Arc::downgrade(i.node);
            let asker = from.to_string();
            // (Wanted as long as it may be answered: the asker, on its own node, decides.)
            let reply = ReplyTo::actor(
                Box::new(move |r: Result<R, AskError>| {
                    if let Some(node) = node.upgrade() {
                        node.reply(&asker, ask, r);
                    }
                }),
                Box::new(|| true),
            );
            if let Err(SendError(Ask { reply, .. })) = local.send(Ask { msg: q, reply }) {
                // The actor ended: the asker hears `Dead` rather than `Dropped`.
                reply.disarm();
                i.node.reply_later::<R>(from, ask, Err(AskError::Dead));
            }
            Ok(())
        })
    }
}

/// The tag of `Ask<Q, R>`.
fn ask_tag(q: &str, r: &str) -> String {
    format!("{q}~{r}")
}

/// Whether `tag` is a valid [`RemoteMessage::TAG`].
pub(super) fn valid_tag(tag: &str) -> bool {
    !tag.is_empty()
        && tag.len() <= 64
        && tag
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// A reply port with its reply type erased.
type AnyPort = Box<dyn std::any::Any + Send>;

/// A reply port waiting for its reply from another node (the reply type erased).
pub struct AwaitedReply {
    port: AnyPort,
    /// Decodes the reply as the port's type and sends it (or ends the port with the error).
    complete: fn(AnyPort, Result<&[u8], AskError>, &Arc<NodeInner>),
    /// Whether the asker still waits.
    wanted: fn(&AnyPort) -> bool,
}

impl AwaitedReply {
    fn new<R: RemoteMessage>(port: ReplyTo<R>) -> Self {
        fn complete<R: RemoteMessage>(
            port: AnyPort,
            r: Result<&[u8], AskError>,
            node: &Arc<NodeInner>,
        ) {
            let port = *port.downcast::<ReplyTo<R>>().expect("the port's own type");
            match r {
                Ok(body) => match node.decode::<R>(body) {
                    Ok(v) => {
                        let _ = port.send(v);
                    }
                    Err(e) => {
                        node.dropped_incoming(&format!("a reply `{}`: {e}", R::TAG));
                        drop(port); // the asker hears `Dropped`
                    }
                },
                Err(AskError::NodeDown) => port.node_down(),
                Err(AskError::Dead) => port.dead(),
                Err(_) => drop(port),
            }
        }
        fn wanted<R: RemoteMessage>(port: &AnyPort) -> bool {
            port.downcast_ref::<ReplyTo<R>>()
                .is_some_and(ReplyTo::is_wanted)
        }
        Self {
            port: Box::new(port),
            complete: complete::<R>,
            wanted: wanted::<R>,
        }
    }

    /// Whether the asker still waits for the reply.
    pub(super) fn wanted(&self) -> bool {
        (self.wanted)(&self.port)
    }

    /// Answers the port.
    pub(super) fn complete(self, r: Result<&[u8], AskError>, node: &Arc<NodeInner>) {
        (self.complete)(self.port, r, node);
    }

    /// The port itself, unanswered (its ask was not sent).
    fn into_port<R: 'static>(self) -> ReplyTo<R> {
        *self
            .port
            .downcast::<ReplyTo<R>>()
            .expect("the port's own type")
    }
}

/// A frame's head; the body (a message or a reply) follows it.
#[derive(Serialize, Deserialize, Debug)]
pub(super) enum Head<'a> {
    /// A message for actor `to`, of type `tag` (bytes: compared, never checked as UTF-8
    /// unless looked up by name; postcard encodes them as a `&str`).
    Tell { to: u64, tag: &'a [u8] },
    /// A question for actor `to`, of protocol `tag`; the reply names `ask`.
    Ask { to: u64, tag: &'a [u8], ask: u64 },
    /// The reply to the sender's ask `ask` (the body follows if `Replied`).
    Reply { ask: u64, outcome: Outcome },
    /// The sender watches actor `to`: tell it (`Down`) when it ends.
    Monitor { to: u64 },
    /// Actor `actor` (of the sending node), watched by the receiver, ended.
    Down { actor: u64, reason: WireExit },
    /// An actor on the sending node linked itself with actor `to`: if the link between the
    /// nodes is lost, `to` hears it as a linked end (`NodeDown`).
    Link { to: u64 },
    /// The actor on the sending node linked with `to` ended with `reason`.
    Exit { to: u64, reason: WireExit },
    /// The sender holds the receiver as lost (its loss number `epoch`): it told everything
    /// waiting on the receiver `NodeDown`, and drops the receiver's frames until it is
    /// answered with `Back { epoch }` (see `docs/REMOTE.md`, "What is promised").
    Lost { epoch: u64 },
    /// The answer to the receiver's `Lost { epoch }`: the sender told everything waiting on
    /// the receiver `NodeDown` too, and every frame it sends from now on follows this one.
    Back { epoch: u64 },
}

/// The fields of [`Head::Tell`] and [`Head::Ask`] that are the same in every frame from one
/// recipient (postcard encodes a variant as its index, then its fields in order, so a
/// `FrameStart` followed by the rest of the fields encodes the whole `Head`): encoded once
/// per recipient, not per frame.
#[derive(Serialize, Debug)]
pub(super) enum FrameStart<'a> {
    /// [`Head::Tell`], whole.
    Tell { to: u64, tag: &'a str },
    /// [`Head::Ask`] without its `ask`.
    Ask { to: u64, tag: &'a str },
}

/// How an ask ended, on the wire.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    Replied,
    Dropped,
    Dead,
}

impl Outcome {
    pub(super) fn of(e: AskError) -> Self {
        match e {
            AskError::Dead => Outcome::Dead,
            _ => Outcome::Dropped,
        }
    }
}

/// [`ExitReason`] on the wire.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub(super) enum WireExit {
    Normal,
    Panicked(String),
    PoisonPill,
    Shutdown,
    NotAlive,
    Linked,
    Escalated,
    NodeDown,
}

impl From<&ExitReason> for WireExit {
    fn from(r: &ExitReason) -> Self {
        match r {
            ExitReason::Normal => WireExit::Normal,
            ExitReason::Panicked(m) => WireExit::Panicked(m.clone()),
            ExitReason::PoisonPill => WireExit::PoisonPill,
            ExitReason::Shutdown => WireExit::Shutdown,
            ExitReason::NotAlive => WireExit::NotAlive,
            ExitReason::Linked => WireExit::Linked,
            ExitReason::Escalated => WireExit::Escalated,
            _ => WireExit::NodeDown,
        }
    }
}

impl From<WireExit> for ExitReason {
    fn from(r: WireExit) -> Self {
        match r {
            WireExit::Normal => ExitReason::Normal,
            WireExit::Panicked(m) => ExitReason::Panicked(m),
            WireExit::PoisonPill => ExitReason::PoisonPill,
            WireExit::Shutdown => ExitReason::Shutdown,
            WireExit::NotAlive => ExitReason::NotAlive,
            WireExit::Linked => ExitReason::Linked,
            WireExit::Escalated => ExitReason::Escalated,
            WireExit::NodeDown => ExitReason::NodeDown,
        }
    }
}

/// A node id (its Zenoh id: 1 to 32 lowercase hexadecimal digits) as every frame opens with
/// it: the number of digits, then the digits two to a byte, the first in the high half (an
/// odd count leaves the last low half zero). Half the bytes of the text: a told message's
/// frame is mostly its sender's id otherwise. `None` for a string that is not such an id.
pub(super) fn pack_id(id: &str) -> Option<Vec<u8>> {
    let digits = id.as_bytes();
    if !(1..=32).contains(&digits.len()) {
        return None;
    }
    let nibble = |d: u8| match d {
        b'0'..=b'9' => Some(d - b'0'),
        b'a'..=b'f' => Some(d - b'a' + 10),
        _ => None,
    };
    let mut v = Vec::with_capacity(1 + digits.len().div_ceil(2));
    v.push(digits.len() as u8);
    for pair in digits.chunks(2) {
        let low = match pair.get(1) {
            Some(&d) => nibble(d)?,
            None => 0,
        };
        v.push(nibble(pair[0])? << 4 | low);
    }
    Some(v)
}

/// How many bytes a packed id ([`pack_id`]) whose first byte is `first` takes, that byte
/// included; `None` if no id has that many digits.
pub(super) fn packed_len(first: u8) -> Option<usize> {
    (1..=32)
        .contains(&first)
        .then(|| 1 + usize::from(first).div_ceil(2))
}

/// A node id's text, unpacked from a frame (on the stack: no allocation per frame).
pub(super) struct IdText {
    digits: [u8; 32],
    len: u8,
}

impl std::ops::Deref for IdText {
    type Target = str;
    fn deref(&self) -> &str {
        // SAFETY: `unpack_id` writes only ASCII hexadecimal digits into `digits[..len]`.
        unsafe { std::str::from_utf8_unchecked(&self.digits[..usize::from(self.len)]) }
    }
}

/// The text of packed id `packed` (all of it: its length must be [`packed_len`]'s), or `None`
/// if it is not one [`pack_id`] makes.
pub(super) fn unpack_id(packed: &[u8]) -> Option<IdText> {
    let (&n, bytes) = packed.split_first()?;
    if packed_len(n)? != packed.len() {
        return None;
    }
    let n = usize::from(n);
    if n % 2 == 1 && bytes[bytes.len() - 1] & 0x0f != 0 {
        return None; // (one text, one packing: the unused half is zero)
    }
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut digits = [0u8; 32];
    for (i, d) in digits[..n].iter_mut().enumerate() {
        let b = bytes[i / 2];
        *d = HEX[usize::from(if i % 2 == 0 { b >> 4 } else { b & 0x0f })];
    }
    Some(IdText {
        digits,
        len: n as u8,
    })
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
