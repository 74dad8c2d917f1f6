//! What arrives in this node's inbox: frames, decoded, checked against what each exported
//! actor serves, delivered or dropped and reported (other nodes' tokens, and the frames of a
//! way back after a loss, are `peers.rs`'s).

use super::node::NodeInner;
use super::peers::UpBy;
#[cfg(test)]
use super::wire::pack_id;
use super::wire::{packed_len, unpack_id, Deliver, Head, Inbound, Incoming, Outcome};
use crate::actor::AskError;
use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use zenoh::sample::Sample;

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

impl NodeInner {
    /// A frame arrived in the inbox.
    pub(super) fn on_frame(self: &Arc<Self>, s: &Sample) {
        self.on_frame_bytes(&s.payload().to_bytes());
    }

    /// A whole frame: the sender's id (packed: `wire::pack_id`), then what [`Self::handle`]
    /// takes.
    pub(super) fn on_frame_bytes(self: &Arc<Self>, frame: &[u8]) {
        match frame
            .first()
            .and_then(|&n| packed_len(n))
            .and_then(|n| frame.split_at_checked(n))
        {
            Some((id, rest)) => self.on_bytes_from(id, rest),
            None => self.dropped_incoming_from("(unknown)", "no sender id"),
        }
    }

    /// A frame from node `from`: handled, or dropped and reported.
    #[cfg(test)]
    pub(super) fn on_bytes(self: &Arc<Self>, from: &str, bytes: &[u8]) {
        self.on_bytes_from(&pack_id(from).expect("a node id"), bytes);
    }

    fn on_bytes_from(self: &Arc<Self>, id: &[u8], bytes: &[u8]) {
        if let Err(why) = self.handle_from(id, bytes) {
            let from = unpack_id(id);
            self.dropped_incoming_from(from.as_deref().unwrap_or("(unknown)"), &why);
        }
    }

    #[cfg(test)]
    pub(super) fn handle(self: &Arc<Self>, from: &str, bytes: &[u8]) -> Result<(), String> {
        self.handle_from(&pack_id(from).expect("a node id"), bytes)
    }

    /// A frame from the node whose id is `id`, as the frame gives it: checked only where the
    /// sender matters (a told message needs none, and is most of the traffic).
    fn handle_from(self: &Arc<Self>, id: &[u8], bytes: &[u8]) -> Result<(), String> {
        let (head, body) = postcard::take_from_bytes::<Head<'_>>(bytes)
            .map_err(|e| format!("malformed head: {e}"))?;
        if let Head::Tell { to, tag } = head {
            if self.from_lost(id) {
                return Ok(()); // (its sender hears `NodeDown`: see `from_lost`)
            }
            self.fits(bytes)?;
            return self.deliver(to, tag, None, body);
        }
        let from = unpack_id(id).ok_or("no valid sender id")?;
        let from: &str = &from;
        if *from == *self.id {
            // This node reaches its own actors directly, never through its inbox.
            return Err("it gives this node's own id as its sender".into());
        }
        if !matches!(head, Head::Lost { .. } | Head::Back { .. }) && self.from_lost(id) {
            return Ok(()); // (its sender hears `NodeDown`: see `from_lost`)
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
                let port = self.tables().asks.remove(from, ask);
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
                    let mut g = self.tables();
                    let t = &mut *g;
                    let lost = !t.hears(from);
                    match t.exports.get_mut(&to) {
                        Some(e) => {
                            // (A node lost since this frame came in watches nothing here.)
                            if !lost {
                                let from = from_arc();
                                e.watched_by.insert(from.clone());
                                t.watching.insert(&from, to, ());
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
                let proxy = self.tables().proxies.get(from, actor).cloned();
                if let Some(p) = proxy.and_then(|p| p.upgrade()) {
                    p.end(reason.into());
                }
                self.tables().watched.remove(from, actor);
                Ok(())
            }
            Head::Link { to } => {
                let mut g = self.tables();
                let t = &mut *g;
                let lost = !t.hears(from);
                if let Some(e) = t.exports.get_mut(&to).filter(|_| !lost) {
                    let from = from_arc();
                    *e.linked_by.entry(from.clone()).or_default() += 1;
                    t.watching.insert(&from, to, ());
                }
                Ok(())
            }
            Head::Exit { to, reason } => {
                let link = {
                    let mut g = self.tables();
                    let t = &mut *g;
                    match t.exports.get_mut(&to) {
                        Some(e) => match e.linked_by.get_mut(from) {
                            Some(n) => {
                                *n -= 1;
                                if *n == 0 {
                                    e.linked_by.remove(from);
                                    if !e.watched_by.contains(from) {
                                        t.watching.remove(from, to);
                                    }
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
            Head::Lost { epoch } => {
                self.on_lost(from, epoch);
                Ok(())
            }
            Head::Back { epoch } => {
                self.revive(from, epoch);
                Ok(())
            }
        }
    }
}
