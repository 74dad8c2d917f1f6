//! What arrives: frames in this node's inbox (decoded, checked against what each exported
//! actor serves, delivered or dropped and reported), and other nodes' liveliness tokens (a
//! node's token gone is its loss: `NodeDown` for everything waiting on it).

use super::node::{NodeInner, HEARD_KEPT, LOST_KEPT};
use super::proxy::Proxy;
use super::wire::{AwaitedReply, Deliver, Head, Inbound, Incoming, Outcome};
use crate::actor::AskError;
use crate::core::monitors::Watcher;
use crate::ExitReason;
use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use zenoh::sample::{Sample, SampleKind};

/// The delivery this thread last looked up, for frames to the same actor and protocol that
/// follow. It holds while its node's `exports_epoch` is unchanged (no actor stopped being
/// served since) and the delivery is alive (weak: a route left in a Zenoh thread keeps no
/// actor, and no node, alive). `node` is the node's address, compared only.
struct Route {
    node: usize,
    epoch: u64,
    to: u64,
    tag: Vec<u8>,
    inbound: Weak<Deliver>,
}

thread_local! {
    static LAST_ROUTE: RefCell<Option<Route>> = const { RefCell::new(None) };
}

/// How [`NodeInner::node_up`] knows a node is up.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum UpBy {
    /// Its node token is seen.
    Token,
    /// A frame gives it as its sender (an ask, monitor or link that waits for an answer).
    Frame,
}

/// A sender's id as a frame gives it, if it is a valid node id.
fn sender(id: &[u8]) -> Option<&str> {
    std::str::from_utf8(id)
        .ok()
        .filter(|id| super::valid_node_id(id))
}

impl NodeInner {
    /// A frame arrived in the inbox.
    pub(super) fn on_frame(self: &Arc<Self>, s: &Sample) {
        self.on_frame_bytes(&s.payload().to_bytes());
    }

    /// A whole frame: the sender's id (a length byte, then the id), then what
    /// [`Self::handle`] takes.
    pub(super) fn on_frame_bytes(self: &Arc<Self>, frame: &[u8]) {
        match frame
            .split_first()
            .and_then(|(&n, rest)| rest.split_at_checked(n.into()))
        {
            Some((id, rest)) => self.on_bytes_from(id, rest),
            None => self.dropped_incoming_from("(unknown)", "no sender id"),
        }
    }

    /// A frame from node `from`: handled, or dropped and reported.
    #[cfg(test)]
    pub(super) fn on_bytes(self: &Arc<Self>, from: &str, bytes: &[u8]) {
        self.on_bytes_from(from.as_bytes(), bytes);
    }

    fn on_bytes_from(self: &Arc<Self>, id: &[u8], bytes: &[u8]) {
        if let Err(why) = self.handle_from(id, bytes) {
            self.dropped_incoming_from(sender(id).unwrap_or("(unknown)"), &why);
        }
    }

    #[cfg(test)]
    pub(super) fn handle(self: &Arc<Self>, from: &str, bytes: &[u8]) -> Result<(), String> {
        self.handle_from(from.as_bytes(), bytes)
    }

    /// A frame from the node whose id is `id`, as the frame gives it: checked only where the
    /// sender matters (a told message needs none, and is most of the traffic).
    fn handle_from(self: &Arc<Self>, id: &[u8], bytes: &[u8]) -> Result<(), String> {
        let (head, body) = postcard::take_from_bytes::<Head<'_>>(bytes)
            .map_err(|e| format!("malformed head: {e}"))?;
        if let Head::Tell { to, tag } = head {
            self.fits(bytes)?;
            return self.deliver(to, tag, None, body);
        }
        let from = sender(id).ok_or("no valid sender id")?;
        if *from == *self.id {
            // This node reaches its own actors directly, never through its inbox.
            return Err("it gives this node's own id as its sender".into());
        }
        if matches!(
            head,
            Head::Ask { .. } | Head::Monitor { .. } | Head::Link { .. }
        ) {
            // Its sender is up (whatever this node heard before), and waits for an answer.
            self.node_up(from, UpBy::Frame);
        }
        if let Err(why) = self.fits(bytes) {
            // Never left waiting: an ask too large to take is answered `Dropped`, and so is
            // this node's own ask whose reply is too large.
            match head {
                Head::Ask { ask, .. } => self.reply_later::<()>(from, ask, Err(AskError::Dropped)),
                Head::Reply { ask, .. } => {
                    let dropped = Head::Reply {
                        ask,
                        outcome: Outcome::Dropped,
                    };
                    let _ = self.dispatch(from, dropped, &[]);
                }
                _ => {}
            }
            return Err(why);
        }
        let asked = match head {
            Head::Ask { ask, .. } => Some(ask),
            _ => None,
        };
        let r = self.dispatch(from, head, body);
        if let (Err(_), Some(ask)) = (&r, asked) {
            // Never left waiting: an ask this node cannot take is answered `Dropped`.
            self.reply_later::<()>(from, ask, Err(AskError::Dropped));
        }
        r
    }

    /// Whether a frame of `bytes` is within this node's largest.
    fn fits(&self, bytes: &[u8]) -> Result<(), String> {
        if bytes.len() > self.max_frame {
            return Err(format!(
                "{} bytes, more than this node's largest frame ({})",
                bytes.len(),
                self.max_frame
            ));
        }
        Ok(())
    }

    /// A message (`ask`: from a node, with its number there) for local actor `to`, of
    /// protocol `tag`: delivered, or a dead letter if the actor ended (an ask hears `Dead`).
    fn deliver(
        self: &Arc<Self>,
        to: u64,
        tag: &[u8],
        ask: Option<(&str, u64)>,
        body: &[u8],
    ) -> Result<(), String> {
        match self.route(to, tag)? {
            Some(i) => i(Incoming {
                node: self,
                ask,
                body,
            })
            .map_err(|e| format!("`{}`: {e}", String::from_utf8_lossy(tag))),
            None => {
                if let Some((from, ask)) = ask {
                    self.reply_later::<()>(from, ask, Err(AskError::Dead));
                }
                Ok(())
            }
        }
    }

    /// What delivers protocol `tag` to exported actor `to` (`None`: it ended, or was never
    /// exported); an error if `to` does not serve `tag`. This thread's last route is reused
    /// while it still holds: a flood to one actor takes neither the tables' lock nor a hash.
    fn route(self: &Arc<Self>, to: u64, tag: &[u8]) -> Result<Option<Inbound>, String> {
        let node = Arc::as_ptr(self) as usize;
        // Read before the tables: an actor unexported after this read makes the route it
        // finds stale at once.
        let epoch = self.exports_epoch.load(Ordering::Acquire);
        // (`try_with`: a thread whose locals are being destroyed looks the route up anew.)
        let hit = LAST_ROUTE
            .try_with(|r| {
                r.borrow()
                    .as_ref()
                    .filter(|r| r.node == node && r.epoch == epoch && r.to == to && *r.tag == *tag)
                    .and_then(|r| r.inbound.upgrade())
            })
            .ok()
            .flatten();
        if hit.is_some() {
            return Ok(hit);
        }
        let inbound = {
            let t = self.tables();
            let Some(e) = t.exports.get(&to) else {
                return Ok(None);
            };
            let served = std::str::from_utf8(tag).ok().and_then(|t| e.tags.get(t));
            match served {
                Some((i, _)) => i.clone(),
                None => {
                    return Err(format!(
                        "actor {to} does not serve `{}`",
                        String::from_utf8_lossy(tag)
                    ))
                }
            }
        };
        let _ = LAST_ROUTE.try_with(|r| {
            let mut r = r.borrow_mut();
            let mut tag_buf = r.take().map(|r| r.tag).unwrap_or_default();
            tag_buf.clear();
            tag_buf.extend_from_slice(tag);
            *r = Some(Route {
                node,
                epoch,
                to,
                tag: tag_buf,
                inbound: Arc::downgrade(&inbound),
            });
        });
        Ok(Some(inbound))
    }

    pub(super) fn dispatch(
        self: &Arc<Self>,
        from: &str,
        head: Head<'_>,
        body: &[u8],
    ) -> Result<(), String> {
        let from_arc = || -> Arc<str> { from.into() };
        match head {
            Head::Tell { to, tag } => self.deliver(to, tag, None, body),
            Head::Ask { to, tag, ask } => self.deliver(to, tag, Some((from, ask)), body),
            Head::Reply { ask, outcome } => {
                let port = {
                    let mut t = self.tables();
                    match t.asks.get(&ask) {
                        Some((n, _)) if **n == *from => t.asks.remove(&ask).map(|(_, p)| p),
                        _ => None,
                    }
                };
                let Some(port) = port else {
                    return Err(format!("a reply to ask {ask}, which it was not asked"));
                };
                let r = match outcome {
                    Outcome::Replied => Ok(body),
                    Outcome::Dead => Err(AskError::Dead),
                    Outcome::Dropped => Err(AskError::Dropped),
                };
                port.complete(r, self);
                Ok(())
            }
            Head::Monitor { to } => {
                let known = {
                    let mut t = self.tables();
                    let lost = t.is_down(from);
                    match t.exports.get_mut(&to) {
                        Some(e) => {
                            // (A node lost since this frame came in watches nothing here.)
                            if !lost {
                                e.watched_by.insert(from_arc());
                            }
                            true
                        }
                        None => false,
                    }
                };
                if !known {
                    let reason = super::wire::WireExit::NotAlive;
                    if let Ok(frame) = self.encode(&Head::Down { actor: to, reason }, &()) {
                        self.put_later(&from_arc(), frame);
                    }
                }
                Ok(())
            }
            Head::Down { actor, reason } => {
                let proxy = self.tables().proxies.get(&(from_arc(), actor)).cloned();
                if let Some(p) = proxy.and_then(|p| p.upgrade()) {
                    p.end(reason.into());
                }
                self.tables().watched.remove(&(from_arc(), actor));
                Ok(())
            }
            Head::Link { to } => {
                let mut t = self.tables();
                let lost = t.is_down(from);
                if let Some(e) = t.exports.get_mut(&to).filter(|_| !lost) {
                    *e.linked_by.entry(from_arc()).or_default() += 1;
                }
                Ok(())
            }
            Head::Exit { to, reason } => {
                let link = {
                    let mut t = self.tables();
                    match t.exports.get_mut(&to) {
                        Some(e) => match e.linked_by.get_mut(from) {
                            Some(n) => {
                                *n -= 1;
                                if *n == 0 {
                                    e.linked_by.remove(from);
                                }
                                Some(e.link.clone())
                            }
                            None => None,
                        },
                        None => None,
                    }
                };
                if let Some(link) = link {
                    link()(&reason.into());
                }
                Ok(())
            }
        }
    }

    /// A node's token came or went.
    pub(super) fn on_node(self: &Arc<Self>, s: &Sample) {
        let Some(node) = s.key_expr().as_str().rsplit('/').next() else {
            return;
        };
        if *node == *self.id {
            return;
        }
        match s.kind() {
            SampleKind::Delete => self.node_down(node),
            // Its token is there: it is up (back, after a lost link: what was lost stays
            // lost, new lookups and recipients reach it).
            SampleKind::Put => self.node_up(node, UpBy::Token),
        }
    }

    /// `node` is reachable (again, after a lost link: Erlang's reconnection). What was lost
    /// stays lost — its proxies ended, its asks failed — but new lookups reach it. `by` says
    /// how this node knows: only a token brings a lost node back; a node known only from its
    /// frames (whose sender id nothing authenticates) is kept up among the last
    /// [`HEARD_KEPT`] such, and an older one, its token still unseen, counts as lost.
    pub(super) fn node_up(self: &Arc<Self>, node: &str, by: UpBy) {
        let forgotten = {
            let mut t = self.tables();
            if t.up.contains(node) && (t.down.is_empty() || !t.down.contains(node)) {
                if by == UpBy::Token && !t.heard.is_empty() {
                    t.unheard(node);
                }
                return; // (the common case: nothing changes)
            }
            if by == UpBy::Frame && t.down.contains(node) {
                // Only its token brings a lost node back: a frame may have been in flight
                // when it was lost, and frames to a node that is gone would vanish unseen.
                return;
            }
            let back = t.down.remove(node);
            t.up.insert(node.into());
            self.seen.notify_all();
            if back {
                t.down_order.retain(|n| **n != *node);
                // Recipients made while it was lost stay ended; new ones reach it (through a
                // publisher declared anew: its lost one's entry goes, under the tables' lock
                // as in `node_down`).
                t.proxies
                    .retain(|(n, _), p| **n != *node || !p.upgrade().is_some_and(|p| p.ended()));
                let lost = self.publishers_lock().remove(node);
                debug_assert!(matches!(lost, None | Some(None)), "a lost node's publisher");
            }
            match by {
                UpBy::Token => None,
                UpBy::Frame => {
                    // (Neither up nor lost before, so not heard before: no id is queued twice.)
                    let node: Arc<str> = node.into();
                    t.heard.insert(node.clone());
                    t.heard_order.push_back(node);
                    if t.heard_order.len() > HEARD_KEPT {
                        t.heard_order.pop_front()
                    } else {
                        None
                    }
                }
            }
        };
        if let Some(f) = forgotten {
            // Lost, unless its token was seen since the lock was let go.
            self.lose(&f, true);
        }
    }

    /// The link to `node` was lost.
    pub(super) fn node_down(self: &Arc<Self>, node: &str) {
        self.lose(node, false);
    }

    /// `node` is lost (if `only_if_heard`: only if it is still known only from its frames).
    fn lose(self: &Arc<Self>, node: &str, only_if_heard: bool) {
        let node: Arc<str> = node.into();
        let (asks, notices, links, old) = {
            let mut t = self.tables();
            if only_if_heard {
                // (Taken off `heard_order` already, by the caller.)
                if !t.heard.remove(&node) {
                    return;
                }
            } else {
                t.unheard(&node);
            }
            t.up.remove(&node);
            self.seen.notify_all();
            if !t.down.insert(node.clone()) {
                return;
            }
            t.down_order.push_back(node.clone());
            let forgotten = if t.down_order.len() > LOST_KEPT {
                let f = t.down_order.pop_front().expect("longer than the bound");
                t.down.remove(&f);
                // Its recipients made while it was lost (ended) go too: were it to come back,
                // new ones must reach it.
                t.proxies.retain(|(n, _), _| *n != f);
                Some(f)
            } else {
                None
            };
            let ids: Vec<u64> = t
                .asks
                .iter()
                .filter(|(_, (n, _))| *n == node)
                .map(|(k, _)| *k)
                .collect();
            let asks: Vec<_> = ids
                .iter()
                .filter_map(|k| t.asks.remove(k))
                .map(|(_, a)| a)
                .collect();
            let mut proxies: Vec<Arc<Proxy>> = Vec::new();
            t.watched.retain(|(n, _), p| {
                if *n == node {
                    proxies.push(p.clone());
                }
                *n != node
            });
            t.proxies.retain(|(n, _), p| {
                if *n == node {
                    proxies.extend(p.upgrade());
                }
                *n != node
            });
            let mut links = Vec::new();
            for e in t.exports.values_mut() {
                e.watched_by.remove(&node);
                if let Some(k) = e.linked_by.remove(&node) {
                    links.extend(std::iter::repeat_n(e.link.clone(), k));
                }
            }
            // Under the tables' lock (the publishers' is only ever taken inside it, never the
            // other way): a `node_up` cannot slip in between and leave the node up with no
            // publisher.
            let old = {
                let mut p = self.publishers_lock();
                if let Some(f) = forgotten {
                    if matches!(p.get(&f), Some(None)) {
                        p.remove(&f);
                    }
                }
                p.insert(node, None)
            };
            // Its proxies end under the lock too: whoever sees it lost (`Node::is_lost`, a
            // monitor, an ask's continuation) and sends to one of its actors gets the message
            // back, rather than sending it through a publisher a send in flight still holds.
            let notices = proxies
                .iter()
                .map(|p| p.mark_ended(&ExitReason::NodeDown))
                .collect();
            (asks, notices, links, old)
        };
        drop(old); // (undeclared outside both locks)
        self.lost(asks, notices, links);
    }

    /// Tells everyone waiting on a lost node: the watchers of its proxies (already marked
    /// ended, see [`Proxy::mark_ended`]), its pending asks, the links to it.
    pub(super) fn lost(
        self: &Arc<Self>,
        asks: Vec<AwaitedReply>,
        proxies: Vec<Vec<Watcher>>,
        links: Vec<Arc<dyn Fn() -> Watcher + Send + Sync>>,
    ) {
        for watchers in proxies {
            Proxy::tell(watchers, &ExitReason::NodeDown);
        }
        for a in asks {
            a.complete(Err(AskError::NodeDown), self);
        }
        for l in links {
            l()(&ExitReason::NodeDown);
        }
    }
}
