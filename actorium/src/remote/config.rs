//! How a node joins the others ([`RemoteConfig`]) and what can go wrong ([`RemoteError`]).

use std::fmt;
use std::time::Duration;

/// How a node connects: its Zenoh mode, where it listens, whom it connects to, how fast a
/// lost link is noticed.
///
/// Whatever the mode, multicast scouting is off (nodes find each other through the endpoints
/// given here, and through the peers those know), and a node listens on loopback unless told
/// otherwise.
///
/// ```
/// use actorium::remote::RemoteConfig;
/// use std::time::Duration;
/// // Two processes on one machine, no server: one listens on a known port...
/// let a = RemoteConfig::peer().listen("tcp/127.0.0.1:7447");
/// // ...the other connects to it (and listens on a port of its own, for third nodes).
/// let b = RemoteConfig::peer().connect("tcp/127.0.0.1:7447").lease(Duration::from_secs(3));
/// // Many machines: clients of routers (`zenohd`, or a node opened with `router()`).
/// let c = RemoteConfig::client().connect("tcp/10.0.0.1:7447");
/// # let _ = (a, b, c);
/// ```
#[derive(Clone, Debug)]
pub struct RemoteConfig {
    pub(super) mode: Mode,
    pub(super) listen: Vec<String>,
    pub(super) connect: Vec<String>,
    pub(super) lease: Duration,
    pub(super) max_frame: usize,
    pub(super) extra: Vec<(String, String)>,
    /// Set by `tls`: every endpoint must be a `tls/` one.
    pub(super) tls: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    Peer,
    Client,
    Router,
}

impl Default for RemoteConfig {
    /// [`Self::peer`]: a peer listening on a free loopback port.
    fn default() -> Self {
        Self::peer()
    }
}

impl RemoteConfig {
    /// A peer: talks to the nodes it connects to and those that connect to it, directly (no
    /// server). Listens on a free loopback port (`tcp/127.0.0.1:0`) unless [`Self::listen`]
    /// says otherwise: give a node that others connect to a known port.
    pub fn peer() -> Self {
        Self {
            mode: Mode::Peer,
            listen: Vec::new(),
            connect: Vec::new(),
            lease: Duration::from_secs(10),
            max_frame: 16 << 20,
            extra: Vec::new(),
            tls: false,
        }
    }

    /// A client: reaches every other node through the routers (or peers) it connects to;
    /// listens on nothing.
    pub fn client() -> Self {
        Self {
            mode: Mode::Client,
            ..Self::peer()
        }
    }

    /// A router: routes for clients and peers (what `zenohd` does), and is a node itself.
    pub fn router() -> Self {
        Self {
            mode: Mode::Router,
            ..Self::peer()
        }
    }

    /// Listens on `endpoint` (a Zenoh endpoint, such as `tcp/127.0.0.1:7447`). The first call
    /// replaces the loopback default.
    pub fn listen(mut self, endpoint: impl Into<String>) -> Self {
        self.listen.push(endpoint.into());
        self
    }

    /// Connects to `endpoint` (retried in the background until it answers, for a peer or a
    /// router; a client's open fails if it cannot connect).
    pub fn connect(mut self, endpoint: impl Into<String>) -> Self {
        self.connect.push(endpoint.into());
        self
    }

    /// How long a silent link lives before it is declared lost (Zenoh's lease; default 10 s;
    /// four keep-alives are sent per lease). A process that ends closes its sockets, and its
    /// links are lost at once, whatever the lease: the lease bounds how long a frozen process
    /// or a cut cable goes unnoticed.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// The largest frame this node accepts (default 16 MiB): a larger one is dropped and
    /// reported ([`crate::Event::RemoteFrameDropped`]); an ask in it is answered
    /// [`crate::AskError::Dropped`], and so is this node's own ask whose reply it is.
    pub fn max_frame(mut self, bytes: usize) -> Self {
        self.max_frame = bytes;
        self
    }

    /// Mutual TLS: every link of this node is encrypted, and both of its ends prove they hold
    /// a certificate signed by the certificate authority `ca` (PEM files; `cert` and `key` are
    /// this node's certificate and PKCS#8 private key, used both to accept and to connect).
    /// A connecting node also checks that the certificate of the node it reaches names the
    /// address it dialled (an IP address or DNS name in the certificate's subject alternative
    /// names).
    ///
    /// Every endpoint must then be a `tls/` one (`tls/127.0.0.1:7447`): a `tcp/` endpoint is
    /// refused when the node opens, and the loopback default becomes `tls/127.0.0.1:0`.
    /// Needs the `remote-tls` feature (Zenoh's TLS transport, on rustls). For other TLS
    /// settings (one-way TLS, keys inline in base64), use [`Self::zenoh`] with the keys under
    /// `transport/link/tls`.
    ///
    /// ```no_run
    /// use actorium::remote::RemoteConfig;
    /// let config = RemoteConfig::peer()
    ///     .listen("tls/0.0.0.0:7447")
    ///     .tls("certs/ca.pem", "certs/node.pem", "certs/node.key");
    /// # let _ = config;
    /// ```
    #[cfg(feature = "remote-tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "remote-tls")))]
    pub fn tls(
        mut self,
        ca: impl AsRef<std::path::Path>,
        cert: impl AsRef<std::path::Path>,
        key: impl AsRef<std::path::Path>,
    ) -> Self {
        let path = |p: &std::path::Path| format!("{:?}", p.to_string_lossy());
        let (ca, cert, key) = (path(ca.as_ref()), path(cert.as_ref()), path(key.as_ref()));
        for (k, v) in [
            ("root_ca_certificate", ca),
            ("listen_certificate", cert.clone()),
            ("listen_private_key", key.clone()),
            ("connect_certificate", cert),
            ("connect_private_key", key),
            ("enable_mtls", "true".into()),
            ("verify_name_on_connect", "true".into()),
        ] {
            self.extra.push((format!("transport/link/tls/{k}"), v));
        }
        self.tls = true;
        self
    }

    /// Sets any other Zenoh configuration key to a JSON5 value, for instance TLS
    /// (`"transport/link/tls/root_ca_certificate"`; Zenoh's TLS transport needs its
    /// `transport_tls` feature, which actorium's `remote-tls` feature turns on) or access
    /// control (`"access_control"`). Applied last: it overrides what the other methods set.
    pub fn zenoh(mut self, key: impl Into<String>, json5: impl Into<String>) -> Self {
        self.extra.push((key.into(), json5.into()));
        self
    }

    /// The Zenoh configuration.
    pub(super) fn to_zenoh(&self) -> Result<zenoh::Config, RemoteError> {
        let mut c = zenoh::Config::default();
        let mode = match self.mode {
            Mode::Peer => "peer",
            Mode::Client => "client",
            Mode::Router => "router",
        };
        let scheme = if self.tls { "tls" } else { "tcp" };
        let listen = if self.listen.is_empty() && self.mode != Mode::Client {
            vec![format!("{scheme}/127.0.0.1:0")]
        } else {
            self.listen.clone()
        };
        if self.tls {
            if let Some(plain) = listen
                .iter()
                .chain(&self.connect)
                .find(|e| !e.starts_with("tls/"))
            {
                return Err(RemoteError::Config(format!(
                    "`{plain}` is not a TLS endpoint, and `tls(..)` asks for TLS on every \
                     link: use `tls/host:port`"
                )));
            }
        }
        let lease = self.lease.as_millis().max(1);
        let mut set = |k: &str, v: String| {
            c.insert_json5(k, &v)
                .map_err(|e| RemoteError::Config(format!("`{k}` = {v}: {e}")))
        };
        set("mode", format!("{mode:?}"))?;
        set("scouting/multicast/enabled", "false".into())?;
        set("listen/endpoints", json_list(&listen))?;
        set("connect/endpoints", json_list(&self.connect))?;
        set("transport/link/tx/lease", lease.to_string())?;
        // A peer's open does not wait for its links (Zenoh's default waits up to
        // `scouting.delay`, 500 ms, for every connect endpoint to link and declare): they are
        // dialled in the background, and a lookup waits for what it looks for.
        set("scouting/delay", "0".into())?;
        for (k, v) in &self.extra {
            set(k, v.clone())?;
        }
        Ok(c)
    }
}

fn json_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", quoted.join(","))
}

/// What went wrong opening a node, registering or looking up a name.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RemoteError {
    /// The configuration was refused (the key, its value and Zenoh's reason).
    Config(String),
    /// The node could not open (for instance a port already in use, or a client that could
    /// reach no router).
    Open(String),
    /// A name or tag is not valid. A name: 1 to 128 bytes, none of `/ * $ ? # ~`, no
    /// whitespace. A tag ([`super::RemoteMessage::TAG`]): 1 to 64 ASCII letters, digits, `_`,
    /// `-` or `.`.
    BadName(String),
    /// No actor under that name, serving that protocol, was found in time.
    NotFound(String),
    /// The node was closed.
    Closed,
    /// Only a local actor can be registered (this recipient is of a remote one).
    NotLocal,
    /// The actor had ended.
    NotAlive,
    /// Zenoh refused an operation (its message).
    Engine(String),
    /// A lookup was refused: the calling thread must never block, as it runs a node's
    /// callback (a name watch's) on one of Zenoh's threads, which a lookup waits for. Use
    /// the recipients the watch hands over, or look up from another thread.
    WouldBlock,
}

impl fmt::Display for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RemoteError::Config(m) => write!(f, "remote configuration refused: {m}"),
            RemoteError::Open(m) => write!(f, "the node could not open: {m}"),
            RemoteError::BadName(n) => write!(
                f,
                "`{n}` is not a valid name or tag: a name has 1 to 128 bytes, none of \
                 `/ * $ ? # ~` or whitespace; a tag 1 to 64 ASCII letters, digits, `_`, `-` \
                 or `.`"
            ),
            RemoteError::NotFound(n) => {
                write!(
                    f,
                    "no actor named `{n}` serving this protocol was found in time"
                )
            }
            RemoteError::Closed => f.write_str("the node is closed"),
            RemoteError::NotLocal => {
                f.write_str("only a local actor can be registered (this one is remote)")
            }
            RemoteError::NotAlive => f.write_str("the actor had ended"),
            RemoteError::Engine(m) => write!(f, "the Zenoh engine refused: {m}"),
            RemoteError::WouldBlock => f.write_str(
                "a lookup on a thread that must not block (a name watch's callback, on one of \
                 Zenoh's threads) was refused: use the watch's recipients, or look up from \
                 another thread",
            ),
        }
    }
}

impl std::error::Error for RemoteError {}

/// Whether `name` is a valid registered name.
pub(super) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && !name
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, '/' | '*' | '$' | '?' | '#' | '~'))
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
