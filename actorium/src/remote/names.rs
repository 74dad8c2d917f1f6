//! Names: an actor registered under a name, for a protocol, is a Zenoh liveliness token
//! (`actorium/name/<name>/<tag>/<node>/<actor>`). It vanishes when the actor ends, when its
//! node closes or dies, and when the link to its node is lost: a lookup never finds a stale
//! entry for long, and a lookup of the wrong protocol finds nothing (the tag is in the key).

use super::config::{valid_name, RemoteError};
use super::node::{on_zenoh_thread, NodeInner, PREFIX};
use super::wire::{valid_tag, Protocol};
use crate::actor::Recipient;
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

/// The (node, actor) a name token's key names.
fn parse(key: &str) -> Option<(&str, u64)> {
    let mut parts = key.rsplit('/');
    let actor = parts.next()?.parse().ok()?;
    let node = parts.next()?;
    Some((node, actor))
}

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
        let (stale, ended) = {
            let mut t = self.tables();
            if !t.serves(id) {
                // It ended meanwhile: no name for it.
                (Some(token), true)
            } else {
                (
                    t.names.insert((name.to_string(), M::tag(), id), token),
                    false,
                )
            }
        };
        drop(stale);
        if ended {
            return Err(RemoteError::NotAlive);
        }
        Ok(())
    }

    /// Removes every registration of `name` on this node.
    pub(super) fn unregister(&self, name: &str) {
        let tokens: Vec<_> = {
            let mut t = self.tables();
            let keys: Vec<_> = t.names.keys().filter(|k| k.0 == name).cloned().collect();
            keys.iter().filter_map(|k| t.names.remove(k)).collect()
        };
        drop(tokens);
    }

    /// One actor registered under `name` for `M`, waiting up to `timeout` for one to appear.
    pub(super) fn lookup<M: Protocol>(
        self: &Arc<Self>,
        name: &str,
        timeout: Duration,
    ) -> Result<Recipient<M>, RemoteError> {
        let (tx, rx) = mpsc::channel::<String>();
        let sub = self.watch_tokens(pattern::<M>(name)?, move |s: Sample| {
            if s.kind() == SampleKind::Put {
                let _ = tx.send(s.key_expr().as_str().to_string());
            }
        })?;
        let deadline = Instant::now() + timeout;
        let found = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(key) => {
                    if let Some((node, id)) = parse(&key) {
                        // A name seen now: its node is reachable now (it may have been lost
                        // before, and this node not yet have heard it is back).
                        self.node_up(node, super::inbox::UpBy::Token);
                        let r = self.recipient::<M>(node, id);
                        // (One of this node's own actors that has just ended: look on.)
                        if r.is_alive() {
                            break Some(r);
                        }
                    }
                }
                Err(_) => break None,
            }
        };
        drop(sub);
        found.ok_or_else(|| RemoteError::NotFound(name.to_string()))
    }

    /// Every actor registered under `name` for `M` now (the answers that come within
    /// `timeout`).
    pub(super) fn lookup_all<M: Protocol>(
        self: &Arc<Self>,
        name: &str,
        timeout: Duration,
    ) -> Result<Vec<Recipient<M>>, RemoteError> {
        let pattern = pattern::<M>(name)?;
        let replies = self
            .session
            .liveliness()
            .get(pattern)
            .timeout(timeout)
            .wait()
            .map_err(|e| RemoteError::Engine(e.to_string()))?;
        let mut found = Vec::new();
        while let Ok(reply) = replies.recv() {
            if let Ok(s) = reply.result() {
                if let Some((node, id)) = parse(s.key_expr().as_str()) {
                    self.node_up(node, super::inbox::UpBy::Token);
                    let r = self.recipient::<M>(node, id);
                    if !found.contains(&r) {
                        found.push(r);
                    }
                }
            }
        }
        Ok(found)
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
            let run = std::panic::AssertUnwindSafe(|| on_zenoh_thread(|| f(l)));
            if let Err(p) = std::panic::catch_unwind(run) {
                crate::core::report_panic("a name watch's callback", &*p);
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
