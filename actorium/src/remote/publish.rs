//! How frames leave a node: a publisher per node (declared on the first frame to it), puts
//! with blocking congestion control (a frame is never dropped for congestion), and the loss
//! that a put waiting out Zenoh's close timeout tells.

use super::node::{NodeInner, Publisher, PREFIX};
use super::proxy::Proxy;
use crate::runtime::context::must_not_block;
use std::sync::{Arc, Weak};
use zenoh::qos::CongestionControl;
use zenoh::Wait;

/// Milliseconds on a monotonic clock, cheap to read: on Linux the kernel's coarse clock (a few
/// nanoseconds, where `Instant::now` takes about 20, twice on every put), at the resolution
/// of the kernel's tick (a few milliseconds, far below a close timeout it is held against).
#[cfg(target_os = "linux")]
fn now_ms() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

/// Milliseconds on a monotonic clock (since the first call).
#[cfg(not(target_os = "linux"))]
fn now_ms() -> u64 {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    EPOCH
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_millis() as u64
}

/// The clock's resolution (the kernel's tick: 10 ms at the coarsest, HZ=100), allowed for
/// when a put's wait is held against the close timeout.
const TICK_MS: u64 = 10;

/// Zenoh's setting for how long a put may wait on a full link before the link is given up,
/// in microseconds (negative: never), and its default there.
const CLOSE_TIMEOUT_KEY: &str =
    "transport/link/tx/queue/congestion_control/block/wait_before_close";
const CLOSE_TIMEOUT_DEFAULT: std::time::Duration = std::time::Duration::from_secs(5);

/// The close timeout `config` gives Zenoh (its default if it gives none), if a put's wait can
/// be told against it: not when it is negative (Zenoh never gives a link up), nor below ten
/// ticks of the clock (a put's wait could not be told from it; the loss is then heard when
/// Zenoh tears the link down).
pub(super) fn close_timeout(config: &zenoh::Config) -> Option<std::time::Duration> {
    let us = config
        .get_json(CLOSE_TIMEOUT_KEY)
        .ok()
        .and_then(|v| v.trim_matches('"').parse::<i64>().ok())
        .unwrap_or(CLOSE_TIMEOUT_DEFAULT.as_micros() as i64);
    let t = std::time::Duration::from_micros(u64::try_from(us).ok()?);
    (t.as_millis() >= u128::from(10 * TICK_MS)).then_some(t)
}

/// Whether `config` opens a client, which reaches every other node through one link, its
/// router's (read from the config Zenoh is given: a `mode` set through
/// `RemoteConfig::zenoh` counts).
pub(super) fn routed(config: &zenoh::Config) -> bool {
    config
        .get_json("mode")
        .is_ok_and(|m| m.trim_matches('"') == "client")
}

impl NodeInner {
    /// Sends `frame` to node `to`. Blocks while the link is congested (the frame is never
    /// dropped for congestion); `Err` if the node is lost or this node is closed.
    pub(super) fn put(self: &Arc<Self>, to: &Arc<str>, frame: Vec<u8>) -> Result<(), ()> {
        if self.is_closed() {
            return Err(());
        }
        if must_not_block() {
            // Never block one of Zenoh's threads (a congested link would stop the thread
            // that drains the other way), nor the timer thread (every timer would wait): the
            // outbox sends it.
            self.put_later(to, frame);
            return Ok(());
        }
        let publisher = self.publisher(to)?;
        // Still `to`'s, with it held: a frame made before `to`'s loss either holds it now (the
        // loss's `Lost` or `Back` to `to` waits for it: `outbox::put_direct`), or sees the
        // loss here, rather than go after that frame through a publisher declared anew.
        let current = matches!(
            self.publishers_lock().get(to),
            Some(Some(p)) if Arc::ptr_eq(p, &publisher)
        );
        if !current {
            return Err(());
        }
        self.put_through(to, publisher, frame)
    }

    /// Puts `frame` through `publisher`, to node `to`. Zenoh blocks a put while the link is
    /// full and, past its close timeout, gives the link up: from then on it drops every frame
    /// put to that node, without an error, until the link is torn down and the node's token
    /// with it, which can take far longer (25 s measured, a link whose far end stopped
    /// reading). So a put that waited out the close timeout is the loss, told now: the node
    /// is lost (`NodeDown`) and later sends get their message back; a client's link is its
    /// router's, through which it reaches every other node, so then all are. (Should the
    /// frame have gone at the last moment after all, the loss is one this node alone sees,
    /// healed as any: `peers.rs`.)
    fn put_through(
        self: &Arc<Self>,
        to: &str,
        publisher: Arc<Publisher>,
        frame: Vec<u8>,
    ) -> Result<(), ()> {
        // (The clock is read only where the close timeout is watched.)
        let t0 = self.close_timeout.map(|limit| (limit, now_ms()));
        let r = publisher.put(frame).wait().map_err(|_| ());
        // (Not held through the loss: its `Lost` waits for the sends in flight to end.)
        drop(publisher);
        if let Some((limit, t0)) = t0 {
            // (Within the clock's tick.)
            let waited = now_ms().saturating_sub(t0) + TICK_MS;
            if u128::from(waited) >= limit.as_millis() && !self.is_closed() {
                if self.routed {
                    // The link given up is the router's: every other node's frames go there.
                    self.all_down(to);
                } else {
                    self.node_down(to);
                }
            }
        }
        r
    }

    /// As [`Self::put`], to the node of remote actor `to`, through the publisher it keeps
    /// (weakly: gone with the node's loss or this node's close, when the table answers).
    pub(super) fn put_to(self: &Arc<Self>, to: &Arc<Proxy>, frame: Vec<u8>) -> Result<(), ()> {
        if self.is_closed() {
            return Err(());
        }
        if must_not_block() {
            // Through the outbox (see `put`), and through this function there: a frame made
            // before the node's loss is not sent after the loss's answer.
            let to = to.clone();
            self.later_put(&to.node_id.clone(), frame, move |n, frame| {
                n.put_to_later(&to, frame)
            });
            return Ok(());
        }
        let publisher = match to.publisher.get().and_then(Weak::upgrade) {
            Some(p) => p,
            None => {
                let p = self.publisher(&to.node_id)?;
                let _ = to.publisher.set(Arc::downgrade(&p));
                p
            }
        };
        // Looked at again with the publisher held: a send that began before its node's loss
        // either holds it now (the loss's answer to the node waits for it: `put_direct`), or
        // sees the loss here, rather than put a frame after that answer through a new one.
        if to.ended() {
            return Err(());
        }
        self.put_through(&to.node_id, publisher, frame)
    }

    /// The publisher to node `to`, declared on the first frame to it; `Err` if it is lost.
    fn publisher(self: &Arc<Self>, to: &Arc<str>) -> Result<Arc<Publisher>, ()> {
        let mut known = self.publishers_lock().get(to).cloned();
        if matches!(known, Some(None)) && self.wait_back(to) {
            known = self.publishers_lock().get(to).cloned();
        }
        let publisher = match known {
            Some(Some(p)) => p,
            Some(None) => return Err(()),
            None => {
                // The first frame to this node: only once its token is seen.
                self.wait_seen(to)?;
                // Declared outside the lock (Zenoh may call back into this node). A declared
                // key: the receiving side keeps its route, instead of matching the key against
                // its subscriptions for every frame.
                let key = self
                    .session
                    .declare_keyexpr(format!("{PREFIX}/inbox/{to}"))
                    .wait()
                    .map_err(|_| ())?;
                let publisher = self
                    .session
                    .declare_publisher(key)
                    .congestion_control(CongestionControl::Block)
                    .wait()
                    .map_err(|_| ())?;
                let publisher = Arc::new(publisher);
                let mut p = self.publishers_lock();
                match p.get(to) {
                    // Another sender declared one first, or the node was lost meanwhile.
                    Some(Some(other)) => other.clone(),
                    Some(None) => return Err(()),
                    None => {
                        p.insert(to.clone(), Some(publisher.clone()));
                        publisher
                    }
                }
            }
        };
        Ok(publisher)
    }
}
