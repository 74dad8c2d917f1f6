//! Names: an actor registered under a name, for a protocol, is a Zenoh liveliness token
//! (`actorium/name/<name>/<tag>/<node>/<actor>`). It vanishes when the actor ends, when its
//! node closes or dies, and when the link to its node is lost: a lookup never finds a stale
//! entry for long, and a lookup of the wrong protocol finds nothing (the tag is in the key).

use super::config::{valid_name, RemoteError};
use super::node::{NodeInner, PREFIX};
use super::wire::{valid_tag, Protocol};
use crate::actor::Recipient;
use crate::runtime::context::{must_not_block, not_blocking};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use zenoh::sample::{Sample, SampleKind};
use zenoh::Wait;

/// A change in the actors listed under a name ([`super::Node::watch_name`]).
#[derive(Debug, Clone)]
pub enum Listing<M: Protocol> {
    /// An actor registered under the name (or was already when the watch began).
    Up(Recipient<M>),
    /// It left the name: it ended, was unregistered, or its node was lost.
    Down(Recipient<M>),
}

/// Watches a name until dropped ([`super::Node::watch_name`]).
pub struct NameWatch {
    _subscriber: zenoh::pubsub::Subscriber<()>,
}

impl std::fmt::Debug for NameWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NameWatch").finish_non_exhaustive()
    }
}

/// The key of everyone registered under `name` for `M`.
fn pattern<M: Protocol>(name: &str) -> Result<String, RemoteError> {
    check_name(name)?;
    let tag = M::tag();
    if !tag.split('~').all(valid_tag) {
        return Err(RemoteError::BadName(tag));
    }
    Ok(format!("{PREFIX}/name/{name}/{tag}/*/*"))
}

fn check_name(name: &str) -> Result<(), RemoteError> {
    if valid_name(name) {
        Ok(())
    } else {
        Err(RemoteError::BadName(name.to_string()))
    }
}

/// The (node, actor) a name token's key names (`None` if it names no valid node id).
fn parse(key: &str) -> Option<(&str, u64)> {
    let mut parts = key.rsplit('/');
    let actor = parts.next()?.parse().ok()?;
    let node = parts.next().filter(|n| super::valid_node_id(n))?;
    Some((node, actor))
}

/// How often a lookup looks again at names whose node's own token it has not seen yet.
/// (Names and node tokens come on separate subscriptions, in either order.)
const PENDING_LOOK: Duration = Duration::from_millis(5);

impl NodeInner {
    /// Registers the local actor of `r` under `name` for protocol `M`.
    pub(super) fn register<M: Protocol>(
        self: &Arc<Self>,
        name: &str,
        r: &Recipient<M>,
    ) -> Result<(), RemoteError> {
        let pattern = pattern::<M>(name)?;
        if self.is_closed() {
            return Err(RemoteError::Closed);
        }
        let (node, id) = self.address_of(r);
        if *node != *self.id {
            return Err(RemoteError::NotLocal);
        }
        let key = pattern.replace("*/*", &format!("{node}/{id}"));
        let token = self
            .session
            .liveliness()
            .declare_token(key)
            .wait()
            .map_err(|e| RemoteError::Engine(e.to_string()))?;
        let (stale, r) = {
            let mut g = self.tables();
            let t = &mut *g;
            match t.exports.get_mut(&id) {
                // Closed meanwhile (its names were taken under this lock, after the flag was
                // set): none kept past the close.
                _ if self.is_closed() => (Some(token), Err(RemoteError::Closed)),
                // It ended meanwhile: no name for it.
                None => (Some(token), Err(RemoteError::NotAlive)),
                Some(e) => {
                    e.named.insert(name.to_string());
                    let of_name = t.names.entry(name.to_string()).or_default();
                    (of_name.insert((M::tag(), id), token), Ok(()))
                }
            }
        };
        drop(stale); // (undeclared outside the lock)
        r
    }

    /// Removes every registration of `name` on this node.
    pub(super) fn unregister(&self, name: &str) {
        let tokens: Vec<_> = {
            let mut g = self.tables();
            let t = &mut *g;
            let of_name = t.names.remove(name).unwrap_or_default();
            for &(_, id) in of_name.keys() {
                if let Some(e) = t.exports.get_mut(&id) {
                    e.named.remove(name);
                }
            }
            of_name.into_values().collect()
        };
        drop(tokens);
    }

    /// One actor registered under `name` for `M`, waiting up to `timeout` for one to appear.
    ///
    /// A name counts once its node is up (its own token seen; a lost node comes back once
    /// both sides have heard of the loss, `peers::revive`), never for its own sake. A name
    /// token can come before its node's (a node seen for the first time, or one coming back
    /// after a lost link), or be the last word of a node lost
    /// since (its node token's end already heard): such a name waits for its node to be up
    /// (within the timeout; a name whose token goes meanwhile is forgotten), and is never the
    /// reason a node counts as up.
    pub(super) fn lookup<M: Protocol>(
        self: &Arc<Self>,
        name: &str,
        timeout: Duration,
    ) -> Result<Recipient<M>, RemoteError> {
        if must_not_block() {
            return Err(RemoteError::WouldBlock);
        }
        let (tx, rx) = mpsc::channel::<(SampleKind, String)>();
        let sub = self.watch_tokens(pattern::<M>(name)?, move |s: Sample| {
            let _ = tx.send((s.kind(), s.key_expr().as_str().to_string()));
        })?;
        // (`None`: no deadline, for a timeout too long to add.)
        let deadline = Instant::now().checked_add(timeout);
        // Names seen, in order, whose node is not up yet (or not looked at yet).
        let mut pending: Vec<(String, u64)> = Vec::new();
        let note = |pending: &mut Vec<(String, u64)>, (kind, key): (SampleKind, String)| {
            if let Some((node, id)) = parse(&key) {
                match kind {
                    SampleKind::Put => pending.push((node.to_string(), id)),
                    // (Gone before its node was up.)
                    SampleKind::Delete => pending.retain(|(n, i)| (n.as_str(), *i) != (node, id)),
                }
            }
        };
        let found = 'look: loop {
            while let Ok(seen) = rx.try_recv() {
                note(&mut pending, seen);
            }
            let mut i = 0;
            while i < pending.len() {
                if !self.is_up(&pending[i].0) {
                    i += 1;
                    continue;
                }
                let (node, id) = pending.remove(i);
                let r = self.recipient::<M>(&node, id);
                // (One of this node's own actors that has just ended: look on.)
                if r.is_alive() {
                    break 'look Some(r);
                }
            }
            let left = match deadline {
                Some(d) => match d.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => Some(left),
                    _ => break None,
                },
                None => None,
            };
            let wait = match (left, pending.is_empty()) {
                (left, true) => left,
                (Some(left), false) => Some(left.min(PENDING_LOOK)),
                (None, false) => Some(PENDING_LOOK),
            };
            let seen = match wait {
                Some(wait) => match rx.recv_timeout(wait) {
                    Ok(seen) => seen,
                    Err(mpsc::RecvTimeoutError::Timeout) => continue,
                    Err(mpsc::RecvTimeoutError::Disconnected) => break None,
                },
                None => match rx.recv() {
                    Ok(seen) => seen,
                    Err(_) => break None,
                },
            };
            note(&mut pending, seen);
        };
        drop(sub);
        found.ok_or_else(|| RemoteError::NotFound(name.to_string()))
    }

    /// Every actor registered under `name` for `M` now (the answers that come within
    /// `timeout`; a name counts once its node is up, as for [`Self::lookup`]).
    pub(super) fn lookup_all<M: Protocol>(
        self: &Arc<Self>,
        name: &str,
        timeout: Duration,
    ) -> Result<Vec<Recipient<M>>, RemoteError> {
        if must_not_block() {
            return Err(RemoteError::WouldBlock);
        }
        let pattern = pattern::<M>(name)?;
        let deadline = Instant::now().checked_add(timeout);
        let replies = self
            .session
            .liveliness()
            .get(pattern)
            .timeout(timeout)
            .wait()
            .map_err(|e| RemoteError::Engine(e.to_string()))?;
        let mut names = Vec::new();
        while let Ok(reply) = replies.recv() {
            if let Ok(s) = reply.result() {
                if let Some((node, id)) = parse(s.key_expr().as_str()) {
                    names.push((node.to_string(), id));
                }
            }
        }
        let mut found = Vec::new();
        for (node, id) in names {
            if self.wait_up(&node, deadline) {
                let r = self.recipient::<M>(&node, id);
                if !found.contains(&r) {
                    found.push(r);
                }
            }
        }
        Ok(found)
    }

    /// Whether `node` is up: this node, or one whose token this node has seen and not lost
    /// since.
    fn is_up(&self, node: &str) -> bool {
        *node == *self.id || self.tables().up.contains(node)
    }

    /// Calls `f` with each change of the actors registered under `name` for `M`.
    pub(super) fn watch_name<M, F>(
        self: &Arc<Self>,
        name: &str,
        f: F,
    ) -> Result<NameWatch, RemoteError>
    where
        M: Protocol,
        F: Fn(Listing<M>) + Send + Sync + 'static,
    {
        let weak = Arc::downgrade(self);
        let sub = self.watch_tokens(pattern::<M>(name)?, move |s: Sample| {
            let (Some(node), Some((at, id))) = (weak.upgrade(), parse(s.key_expr().as_str()))
            else {
                return;
            };
            let l = match s.kind() {
                SampleKind::Put => Listing::Up(node.recipient::<M>(at, id)),
                SampleKind::Delete => Listing::Down(node.recipient::<M>(at, id)),
            };
            let run = std::panic::AssertUnwindSafe(|| not_blocking(|| f(l)));
            if let Err(p) = std::panic::catch_unwind(run) {
                crate::core::report_panic("a name watch's callback", &*p);
                crate::core::drop_payload(p);
            }
        })?;
        Ok(NameWatch { _subscriber: sub })
    }

    /// A liveliness subscriber on `pattern` with history: `f` sees the tokens already there,
    /// then those that come and go.
    fn watch_tokens(
        &self,
        pattern: String,
        f: impl Fn(Sample) + Send + Sync + 'static,
    ) -> Result<zenoh::pubsub::Subscriber<()>, RemoteError> {
        self.session
            .liveliness()
            .declare_subscriber(pattern)
            .history(true)
            .callback(f)
            .wait()
            .map_err(|e| RemoteError::Engine(e.to_string()))
    }
}
