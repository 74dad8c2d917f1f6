//! Which nodes are up and which are lost: other nodes' liveliness tokens (a node's token gone
//! is its loss: `NodeDown` for everything waiting on it), the nodes known only from their
//! frames, and the way back after a loss. A loss is made mutual: the node that lost another
//! drops its frames and tells it `Lost` (`Head::Lost`: at the loss, when its token is seen
//! again, at each power of two of frames dropped), behind every frame it had in flight; the
//! other hears `NodeDown` for what waits on the first, takes its frames again, and answers
//! `Back` (`Head::Back`) behind every frame it had in flight; the first takes the other's
//! frames again from that answer on. A numbered loss (`epoch`) is answered once: a repeat
//! loses nothing more. A token's end while a node is on its way back is a new loss.

use super::node::{NodeInner, Publisher, Tables, HEARD_KEPT, LOST_KEPT};
use super::proxy::Proxy;
use super::wire::unpack_id;
use super::wire::{AwaitedReply, Head};
use crate::actor::AskError;
use crate::core::monitors::Watcher;
use crate::ExitReason;
use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use zenoh::sample::{Sample, SampleKind};

/// What a node remembers of a node it holds as lost.
#[derive(Debug, Clone, Copy)]
pub(super) struct Lost {
    /// This loss's number (`Head::Lost`'s epoch): only its `Head::Back` brings the node back.
    pub(super) epoch: u64,
    /// Whether the node's token is there (never deleted, or seen again): its frames are
    /// vouched for, and `wait_up` waits for the node to come back.
    pub(super) token: bool,
    /// The node told this one that it lost it (`Head::Lost`), and is answered: its frames are
    /// taken again (it sends none but its `Lost` and `Back` until it hears the answer).
    pub(super) answering: bool,
    /// Its frames dropped since the loss (each power of two is answered with a `Lost`).
    pub(super) dropped: u64,
    /// The answer to its `Lost` waits in the outbox (one at a time: it answers the latest).
    pub(super) back_owed: bool,
    /// Its token's end was seen: a loss of the link (or of the node), after which only its
    /// token seen again lets it come back (a `Lost` of its that was on its way is answered,
    /// but does not bring back a node that may be gone).
    pub(super) ended: bool,
}

/// How [`NodeInner::node_up`] knows a node is up.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum UpBy {
    /// Its node token is seen.
    Token,
    /// A frame gives it as its sender (an ask, monitor or link that waits for an answer).
    Frame,
}

/// The sender this thread last found not lost (see [`NodeInner::from_lost`]): it holds while
/// its node's loss count is unchanged. `node` is the node's address, compared only.
struct Cleared {
    node: usize,
    losses: u64,
    id: Vec<u8>,
}

thread_local! {
    static CLEARED: RefCell<Option<Cleared>> = const { RefCell::new(None) };
}

/// A publisher to a node that a loss took from the table, weakly: sends in flight may still
/// hold it (see `outbox::put_direct`).
type Behind = Option<Weak<Publisher>>;

/// What [`NodeInner::lose`] did.
pub(super) struct Lossed {
    /// The publisher the loss took, if any.
    behind: Behind,
    /// A `Loss::Told` whose answer was not owed before: the caller queues it.
    owe: bool,
}

impl Lossed {
    /// The node was lost already.
    const ALREADY: Self = Self {
        behind: None,
        owe: false,
    };
}

/// How a node was lost (see [`NodeInner::lose`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Loss {
    /// Its token ended: the link to it is gone (or it is).
    Token,
    /// Known only from its frames, it was pushed out of the last [`HEARD_KEPT`] such.
    Heard,
    /// It said it lost this node (`Head::Lost`).
    Told,
    /// Any other way: its token not seen in time, or a test's.
    Link,
}

impl NodeInner {
    /// Whether lost node `to`, which said it lost this node too, is back: while the answer
    /// (`Head::Back`) waits in the outbox, `to`'s frames are taken (a reply to one of them
    /// must not be refused), and this waits for it, at most the lease; not on the outbox's
    /// own thread, which sends that answer (what the outbox sends to `to` before it was made
    /// before the loss, and is refused).
    pub(super) fn wait_back(&self, to: &str) -> bool {
        if super::outbox::on_outbox_thread() {
            return false;
        }
        let deadline = std::time::Instant::now() + self.lease;
        let mut t = self.tables();
        while !self.is_closed() && t.down.get(to).is_some_and(|l| l.back_owed) {
            let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) else {
                return false;
            };
            t = self
                .seen
                .wait_timeout(t, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        t.up.contains(to)
    }

    /// Waits until this node has seen `to`'s token (at most the lease): a frame to a node
    /// whose inbox declaration has not reached this one would vanish. Not seen in time, `to`
    /// is lost (`NodeDown` for everything waiting on it). Only the first frames to a node
    /// heard of through a recipient in a message ever wait.
    pub(super) fn wait_seen(self: &Arc<Self>, to: &Arc<str>) -> Result<(), ()> {
        let deadline = std::time::Instant::now().checked_add(self.lease);
        if self.wait_up(to, deadline) {
            return Ok(());
        }
        let timed_out = {
            let t = self.tables();
            !t.up.contains(to) && !t.is_down(to) && !self.is_closed()
        };
        if timed_out {
            self.node_down(to);
        }
        Err(())
    }

    /// Waits until `node` is up (this node, or one whose token this node has seen and not
    /// lost since) or `deadline` passes (`None`: no deadline) or this node closes; whether it
    /// is up. A lost node is not waited for, unless its token is there (it comes back once
    /// both sides have heard of the loss).
    pub(super) fn wait_up(&self, node: &str, deadline: Option<std::time::Instant>) -> bool {
        if *node == *self.id {
            return true;
        }
        let mut t = self.tables();
        loop {
            if t.up.contains(node) {
                return true;
            }
            // (A lost node whose token is there is on its way back: see `revive`.)
            if self.is_closed() || t.down.get(node).is_some_and(|l| !l.token) {
                return false;
            }
            t = match deadline {
                None => self.seen.wait(t).unwrap_or_else(|p| p.into_inner()),
                Some(d) => match d.checked_duration_since(std::time::Instant::now()) {
                    Some(left) if !left.is_zero() => {
                        self.seen
                            .wait_timeout(t, left)
                            .unwrap_or_else(|p| p.into_inner())
                            .0
                    }
                    _ => return false,
                },
            };
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
            SampleKind::Delete => {
                self.lose(node, Loss::Token);
            }
            // Its token is there: it is up (or on its way back, after a lost link).
            SampleKind::Put => self.node_up(node, UpBy::Token),
        }
    }

    /// `node` is reachable. `by` says how this node knows: a node known only from its frames
    /// (whose sender id nothing authenticates) is kept up among the last [`HEARD_KEPT`] such,
    /// and an older one, its token still unseen, counts as lost.
    ///
    /// A lost node is not brought back here: its token (seen again, as after a lost link
    /// comes back) has this node tell it `Lost` again (the first may have vanished with the
    /// link), and it comes back once it answers (`Back`) or says it lost this node too
    /// (`Lost`, [`Self::on_lost`]). Both sides have then told everything waiting on the other
    /// `NodeDown`, so no frame lost on the way goes unseen: Erlang's reconnection, where what
    /// was lost stays lost (its proxies ended, its asks failed) and new lookups reach it.
    pub(super) fn node_up(self: &Arc<Self>, node: &str, by: UpBy) {
        let tell = {
            let mut t = self.tables();
            if t.up.contains(node) && (t.down.is_empty() || !t.down.contains_key(node)) {
                if by == UpBy::Token && !t.heard.is_empty() {
                    t.unheard(node);
                }
                return; // (the common case: nothing changes)
            }
            match t.down.get_mut(node) {
                // A frame in flight when it was lost does not bring it back.
                Some(_) if by == UpBy::Frame => return,
                Some(l) => {
                    l.token = true;
                    if l.answering {
                        return; // (it told this node first: its answer is on its way)
                    }
                    l.epoch
                }
                None => {
                    let forgotten = self.make_up(&mut t, node, by);
                    drop(t);
                    if let Some(f) = forgotten {
                        // Lost, unless its token was seen since the lock was let go.
                        self.lose(&f, Loss::Heard);
                    }
                    return;
                }
            }
        };
        self.tell_later(&node.into(), &Head::Lost { epoch: tell }, None);
    }

    /// Puts `node`, neither up nor lost, up. Returns the node known only from its frames that
    /// it pushes out of the last [`HEARD_KEPT`], if any.
    fn make_up(&self, t: &mut Tables, node: &str, by: UpBy) -> Option<Arc<str>> {
        t.up.insert(node.into());
        self.seen.notify_all();
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
    }

    /// `node`, lost in this node's loss `epoch`, is back (both sides have heard of the loss;
    /// a later loss of it is not undone). Recipients made while it was lost stay ended; new
    /// ones reach it, through a publisher declared anew (its lost one's entry goes, under the
    /// tables' lock as in `lose`).
    pub(super) fn revive(self: &Arc<Self>, node: &str, epoch: u64) {
        self.revive_if(node, Some(epoch), None);
    }

    /// As [`Self::revive`], for loss `epoch` (`None`: the one it is lost in), if its latest
    /// `Lost` answered is `answered` (`None`: whatever it is); whether it came back. Not a
    /// node whose token's end was seen and not its return since: it may be gone.
    fn revive_if(self: &Arc<Self>, node: &str, epoch: Option<u64>, answered: Option<u64>) -> bool {
        let forgotten =
            {
                let mut t = self.tables();
                let said = answered.is_none_or(|a| t.answered.get(node) == Some(&a));
                let Some(l) = t.down.get(node).copied().filter(|l| {
                    said && epoch.is_none_or(|e| l.epoch == e) && (l.token || !l.ended)
                }) else {
                    return false;
                };
                t.down.remove(node);
                t.down_order.retain(|n| **n != *node);
                t.proxies
                    .retain_node(node, |p| !p.upgrade().is_some_and(|p| p.ended()));
                let lost = self.publishers_lock().remove(node);
                debug_assert!(matches!(lost, None | Some(None)), "a lost node's publisher");
                // Vouched for by its token, or known from its frames alone (as any such node).
                let by = if l.token { UpBy::Token } else { UpBy::Frame };
                self.make_up(&mut t, node, by)
            };
        if let Some(f) = forgotten {
            self.lose(&f, Loss::Heard);
        }
        true
    }

    /// Node `from` says it lost this node (its loss `epoch`): everything here waiting on
    /// `from` hears `NodeDown` (if it had not), `from`'s frames are taken again (what it sends
    /// after saying so was made after its own `NodeDown`), and the answer, `Back`, goes out
    /// from the outbox ([`Self::answer_lost`]). A repeat of an answered `Lost` (sent again
    /// after a frame of this node's that it dropped, or when this node's token came back in
    /// its sight) is answered again and loses nothing more; so is one from a node this node
    /// does not know.
    pub(super) fn on_lost(self: &Arc<Self>, from: &str, epoch: u64) {
        let fresh = {
            let mut t = self.tables();
            let known = t.up.contains(from) || t.is_down(from);
            let answered = t.answered.get(from).is_some_and(|&e| e >= epoch);
            if known && !answered {
                if t.answered.len() >= t.answered_sweep_at {
                    // (Bounded by the nodes up and lost: forget the others' answers, now and
                    // then.)
                    let Tables {
                        answered, up, down, ..
                    } = &mut *t;
                    answered.retain(|n, _| up.contains(n) || down.contains_key(n));
                    t.answered_sweep_at = (2 * t.answered.len()).max(LOST_KEPT);
                }
                t.answered.insert(from.into(), epoch);
            }
            known && !answered
        };
        if fresh {
            // The publisher to `from` that the loss took, if any: sends that took it before
            // may still be putting frames through it, and the answer must not overtake them.
            if let Some(l) = self.lose(from, Loss::Told) {
                if l.owe {
                    self.owe_back(from, l.behind);
                }
            }
            return;
        }
        // A repeat, or from a node this node does not know. One still held lost (its answer
        // was not sent: the outbox was full) is answered, and comes back, now.
        let owe = {
            let mut t = self.tables();
            match t.down.get_mut(from) {
                Some(l) if l.answering && !l.back_owed => {
                    l.back_owed = true;
                    true
                }
                _ => false,
            }
        };
        if owe {
            self.owe_back(from, None);
        } else if let Ok(frame) = self.encode(&Head::Back { epoch }, &()) {
            // (Under the outbox's bound for frames: a flood of these from made-up ids
            // costs this node no state.)
            let to: Arc<str> = from.into();
            self.later_put(&from.into(), frame, move |n, f| n.put_direct(&to, f, None));
        }
    }

    /// Queues the answer to `from`'s `Lost` (its `back_owed` just set); if the outbox holds
    /// too many such already, none is owed (a repeat of the `Lost` is answered then).
    fn owe_back(self: &Arc<Self>, from: &str, behind: Behind) {
        let to: Arc<str> = from.into();
        let queued = self.handshake_later(Box::new(move |n: &Arc<NodeInner>| {
            n.answer_lost(&to, behind)
        }));
        if !queued {
            self.not_owed(from);
        }
    }

    /// `from`'s answer is no longer owed: senders waiting for it (`wait_back`) look again.
    fn not_owed(&self, from: &str) {
        if let Some(l) = self.tables().down.get_mut(from) {
            l.back_owed = false;
        }
        self.seen.notify_all();
    }

    /// On the outbox's thread: answers node `from`'s latest `Lost` with `Back`, behind the
    /// sends to `from` in flight through `behind` and every frame the outbox held for it
    /// (made before the loss: refused); then `from` is back. Nothing this node sends to `from`
    /// can overtake the answer: until `from` is back, sends to it wait for that (`wait_back`)
    /// or fail. Unless `from` was lost anew meanwhile (its token ended): its return starts
    /// over.
    fn answer_lost(self: &Arc<Self>, from: &Arc<str>, mut behind: Behind) {
        loop {
            let said = {
                let t = self.tables();
                let answering = t.down.get(&**from).is_some_and(|l| l.answering);
                t.answered.get(&**from).copied().filter(|_| answering)
            };
            // (Not answering any more: lost anew since, its return starts over; or back.)
            let Some(epoch) = said else {
                return self.not_owed(from);
            };
            let sent = self
                .encode(&Head::Back { epoch }, &())
                .map_err(|_| ())
                .and_then(|frame| self.put_direct(from, frame, behind.take()));
            // Back, unless `from` said a newer `Lost` meanwhile (answered next, round the
            // loop), was lost anew, or may be gone (`revive_if`).
            if sent.is_ok() && self.revive_if(from, None, Some(epoch)) {
                return;
            }
            let newer = self.tables().answered.get(&**from) != Some(&epoch);
            if sent.is_err() || !newer {
                return self.not_owed(from);
            }
        }
    }

    /// Whether a frame from the node whose id is `id` (as the frame gives it) is dropped: this
    /// node holds it as lost, and has not heard it say it lost this node too. Every
    /// power of two of such frames is answered with this node's `Lost` again (the one sent at
    /// the loss may have vanished with the link). A sender found not lost is remembered by
    /// the thread until the next loss: a flood from one node takes neither the lock nor a hash.
    pub(super) fn from_lost(self: &Arc<Self>, id: &[u8]) -> bool {
        let losses = self.losses.load(Ordering::Acquire);
        if losses == 0 {
            return false; // (nothing ever lost here)
        }
        let node = Arc::as_ptr(self) as usize;
        let cleared = |c: &RefCell<Option<Cleared>>| {
            c.borrow()
                .as_ref()
                .is_some_and(|c| c.node == node && c.losses == losses && *c.id == *id)
        };
        if CLEARED.try_with(cleared).unwrap_or(false) {
            return false;
        }
        let Some(from) = unpack_id(id) else {
            return false; // (refused later where the sender matters)
        };
        let from: &str = &from;
        let tell = {
            let mut t = self.tables();
            match t.down.get_mut(from) {
                // (`Tables::hears`.)
                Some(l) if !l.answering => {
                    l.dropped += 1;
                    Some(l.dropped.is_power_of_two().then_some(l.epoch))
                }
                _ => None,
            }
        };
        match tell {
            Some(epoch) => {
                if let Some(epoch) = epoch {
                    self.tell_later(&from.into(), &Head::Lost { epoch }, None);
                }
                true
            }
            None => {
                let _ = CLEARED.try_with(|c| {
                    let mut c = c.borrow_mut();
                    let mut buf = c.take().map(|c| c.id).unwrap_or_default();
                    buf.clear();
                    buf.extend_from_slice(id);
                    *c = Some(Cleared {
                        node,
                        losses,
                        id: buf,
                    });
                });
                false
            }
        }
    }

    /// The link to `node` was lost (or was never there: its token not seen in time).
    pub(super) fn node_down(self: &Arc<Self>, node: &str) {
        self.lose(node, Loss::Link);
    }

    /// The link that every other node is reached through was lost (a client's link to its
    /// router): `node`, and every node up, is lost.
    pub(super) fn all_down(self: &Arc<Self>, node: &str) {
        let up: Vec<Arc<str>> = self.tables().up.iter().cloned().collect();
        self.node_down(node);
        for other in up.iter().filter(|o| ***o != *node) {
            self.node_down(other);
        }
    }

    /// `node` is lost (`how`: see [`Loss`]); what was done (`None`: a `Loss::Heard` of a node
    /// no longer known only from its frames). Everything waiting on it hears `NodeDown`, and
    /// it is told `Lost` (unless it told this node first: then its answer is owed).
    pub(super) fn lose(self: &Arc<Self>, node: &str, how: Loss) -> Option<Lossed> {
        let node: Arc<str> = node.into();
        let (epoch, asks, notices, links, old) = {
            let mut t = self.tables();
            // Its token stays there through a loss that is not the token's end.
            let token = how != Loss::Token && t.up.contains(&node) && !t.heard.contains(&node);
            if how == Loss::Heard {
                // (Taken off `heard_order` already, by the caller.)
                if !t.heard.remove(&node) {
                    return None;
                }
            } else {
                t.unheard(&node);
            }
            t.up.remove(&node);
            self.seen.notify_all();
            let prior = t.down.get(&node).copied();
            if let Some(l) = t.down.get_mut(&node) {
                match how {
                    Loss::Told => {
                        l.answering = true;
                        let owe = !l.back_owed;
                        l.back_owed = true;
                        return Some(Lossed { behind: None, owe });
                    }
                    // Its token's end while it was coming back (its token in sight, or its
                    // own `Lost` heard) is a new loss: what was made for its return fails
                    // (asks and recipients of a node being answered), and its return starts
                    // over with the new number.
                    Loss::Token if l.token || l.answering => {}
                    Loss::Token => {
                        l.ended = true;
                        return Some(Lossed::ALREADY);
                    }
                    _ => return Some(Lossed::ALREADY),
                }
            }
            t.losses += 1;
            let epoch = t.losses;
            self.losses.store(epoch, Ordering::Release);
            let lost = Lost {
                epoch,
                token,
                answering: how == Loss::Told,
                dropped: 0,
                // (Told: its answer is owed from now, set with `answering` under this lock,
                // so that no sender finds it taken but not owed. Carried over a new loss:
                // the job under way sees it lost anew.)
                back_owed: how == Loss::Told || prior.is_some_and(|l| l.back_owed),
                ended: how == Loss::Token,
            };
            t.down.insert(node.clone(), lost);
            if prior.is_none() {
                t.down_order.push_back(node.clone());
            }
            let forgotten = if t.down_order.len() > LOST_KEPT {
                let f = t.down_order.pop_front().expect("longer than the bound");
                t.down.remove(&f);
                // Its recipients made while it was lost (ended) go too: were it to come back,
                // new ones must reach it.
                t.proxies.take_node(&f);
                Some(f)
            } else {
                None
            };
            // (What it left here, found by node: no pass over what other nodes left.)
            let asks: Vec<_> = t.asks.take_node(&node).into_values().collect();
            let mut proxies: Vec<Arc<Proxy>> = t.watched.take_node(&node).into_values().collect();
            let made = t.proxies.take_node(&node).into_values();
            proxies.extend(made.filter_map(|p| p.upgrade()));
            let mut links = Vec::new();
            for id in t.watching.take_node(&node).into_keys() {
                if let Some(e) = t.exports.get_mut(&id) {
                    e.watched_by.remove(&node);
                    if let Some(k) = e.linked_by.remove(&node) {
                        links.extend(std::iter::repeat_n(e.link.clone(), k));
                    }
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
                p.insert(node.clone(), None)
            };
            // Its proxies end under the lock too: whoever sees it lost (`Node::is_lost`, a
            // monitor, an ask's continuation) and sends to one of its actors gets the message
            // back, rather than sending it through a publisher a send in flight still holds.
            let notices = proxies
                .iter()
                .map(|p| p.mark_ended(&ExitReason::NodeDown))
                .collect();
            (epoch, asks, notices, links, old)
        };
        // Sends in flight through it: the `Lost` goes behind them (see `answer_lost`).
        let behind = old.as_ref().and_then(|p| p.as_ref().map(Arc::downgrade));
        drop(old); // (undeclared outside both locks)
        self.lost(asks, notices, links);
        if how != Loss::Told {
            // (Best effort: a lost link takes it too, and the node's token, seen again,
            // has it told again.)
            self.tell_later(&node, &Head::Lost { epoch }, behind.clone());
        }
        Some(Lossed {
            behind,
            owe: how == Loss::Told, // (a node lost already returned above)
        })
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

#[cfg(test)]
#[path = "peers_tests.rs"]
mod tests;
