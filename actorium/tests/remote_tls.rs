//! Remote actors over mutual TLS (`RemoteConfig::tls`), on loopback with the test certificates
//! of `tests/tls/` (written by `scripts/tls-test-certs.sh`; their keys are public: tests
//! only). What a node that holds no certificate of the right authority gets: nothing.
#![cfg(feature = "remote-tls")]

mod common;

use actorium::remote::{Node, RemoteConfig, RemoteError, RemoteMessage};
use actorium::{Actor, ActorSystem, Allocation, Ask, AskError, Context, Receive, Recipient};
use common::{free_port, watchdog};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Num(u64);
impl RemoteMessage for Num {
    const TAG: &'static str = "tls.Num";
}

struct Doubler;
impl Actor for Doubler {}
impl Receive<Ask<Num, Num>> for Doubler {
    fn receive(&mut self, a: Ask<Num, Num>, _: &mut Context<'_, Self>) -> Allocation {
        let _ = a.reply.send(Num(a.msg.0 * 2));
        Allocation::Nodelete
    }
}

fn cert(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/tls")
        .join(file)
}

/// The documented configuration: mutual TLS with one authority.
fn node_config() -> RemoteConfig {
    RemoteConfig::peer().tls(cert("ca.pem"), cert("node.pem"), cert("node.key"))
}

/// A system whose node listens on `tls/127.0.0.1:port` and serves a doubler as "double".
fn server(port: u16) -> (ActorSystem, actorium::remote::Node) {
    let s = ActorSystem::new().unwrap();
    let n = s
        .remote(node_config().listen(format!("tls/127.0.0.1:{port}")))
        .unwrap();
    n.register::<Ask<Num, Num>>("double", &s.spawn(Doubler))
        .unwrap();
    (s, n)
}

/// The actor registered as `name`, seen from `node`, asked for doubles. Zenoh 1.10's TLS link
/// can drop on its own (docs/REMOTE.md, Known limits): an ask hears that as `NodeDown` (or,
/// the loss already known, gets its message back from a recipient no longer alive), and the
/// name is then looked up again (the dialling side reconnects at once), at most three times
/// for one `Doubling`. (The same tests over TCP, in `remote.rs`, take no drop.)
struct Doubling<'a> {
    node: &'a Node,
    name: &'a str,
    to: Recipient<Ask<Num, Num>>,
    drops: u32,
}

impl<'a> Doubling<'a> {
    fn new(node: &'a Node, name: &'a str) -> Self {
        Doubling {
            node,
            name,
            to: node.lookup(name, Duration::from_secs(20)).unwrap(),
            drops: 0,
        }
    }

    fn ask(&mut self, n: u64) -> Num {
        loop {
            let why = match self.to.ask(Num(n)) {
                Ok(pending) => match pending.wait() {
                    Ok(doubled) => return doubled,
                    Err(e) => e,
                },
                Err(back) => {
                    // (Handed back for another reason, say an encoding error: not a drop.)
                    assert!(!self.to.is_alive(), "asking {n}: handed back, {back:?}");
                    AskError::NodeDown
                }
            };
            assert!(
                why == AskError::NodeDown && self.drops < 3,
                "asking {n}: {why:?}, after {} dropped links",
                self.drops
            );
            self.drops += 1;
            eprintln!(
                "asking {n}: a dropped link ({why:?}); looking `{}` up again",
                self.name
            );
            self.to = self
                .node
                .lookup(self.name, Duration::from_secs(20))
                .unwrap();
        }
    }
}

#[test]
fn two_nodes_with_certificates_of_one_authority_talk_over_mutual_tls() {
    watchdog(60, || {
        let port = free_port();
        let (_sa, _a) = server(port);
        let sb = ActorSystem::new().unwrap();
        let b = sb
            .remote(node_config().connect(format!("tls/127.0.0.1:{port}")))
            .unwrap();
        let mut double = Doubling::new(&b, "double");
        for i in 0..1_000 {
            assert_eq!(double.ask(i), Num(2 * i));
        }
    });
}

/// A node of `config` (which dials the server) finds none of `names` in 3 s each.
fn finds_none(config: RemoteConfig, names: &[&str]) {
    let system = ActorSystem::new().unwrap();
    let node = system.remote(config).unwrap();
    for name in names {
        assert!(matches!(
            node.lookup::<Ask<Num, Num>>(name, Duration::from_secs(3)),
            Err(RemoteError::NotFound(_))
        ));
    }
}

#[test]
fn a_node_whose_certificate_another_authority_signed_reaches_nothing() {
    watchdog(60, || {
        let port = free_port();
        let (_sa, _a) = server(port);
        // Its certificate is refused by the listener, and the listener's by it: no link, so
        // the name is never seen (however long we wait: 3 s keeps the test short).
        let tls = format!("tls/127.0.0.1:{port}");
        finds_none(
            RemoteConfig::peer()
                .tls(cert("other-ca.pem"), cert("other.pem"), cert("other.key"))
                .connect(&tls),
            &["double"],
        );
        // A node that trusts the right authority but presents the stranger's certificate
        // (mutual TLS: the listener checks the client too).
        finds_none(
            RemoteConfig::peer()
                .tls(cert("ca.pem"), cert("other.pem"), cert("other.key"))
                .connect(&tls),
            &["double"],
        );
        // A plain TCP node dialling the TLS port gets no link either.
        finds_none(
            RemoteConfig::peer().connect(format!("tcp/127.0.0.1:{port}")),
            &["double"],
        );
    });
}

/// Zenoh's access control on top of mutual TLS, as docs/REMOTE.md shows it: actorium's keys
/// (`actorium/**`) only for the certificates named in `subjects`, everything else denied.
const ACCESS: &str = r#"{
    enabled: true,
    default_permission: "deny",
    rules: [{
        id: "actorium",
        messages: ["put", "delete", "declare_subscriber", "query", "reply", "declare_queryable",
                   "liveliness_token", "liveliness_query", "declare_liveliness_subscriber"],
        flows: ["egress", "ingress"],
        permission: "allow",
        key_exprs: ["actorium/**"],
    }],
    subjects: [{ id: "nodes", cert_common_names: ["actorium test node"] }],
    policies: [{ rules: ["actorium"], subjects: ["nodes"] }],
}"#;

#[test]
fn access_control_by_certificate_name_lets_in_only_the_nodes_it_names() {
    watchdog(60, || {
        // On every node: a node that links to one learns of the others, and links to them.
        let guarded = || node_config().zenoh("access_control", ACCESS);
        let port = free_port();
        let sa = ActorSystem::new().unwrap();
        let a = sa
            .remote(guarded().listen(format!("tls/127.0.0.1:{port}")))
            .unwrap();
        a.register::<Ask<Num, Num>>("double", &sa.spawn(Doubler))
            .unwrap();
        let tls = format!("tls/127.0.0.1:{port}");
        // The named certificate: served.
        let sb = ActorSystem::new().unwrap();
        let b_port = free_port();
        let b = sb
            .remote(
                guarded()
                    .listen(format!("tls/127.0.0.1:{b_port}"))
                    .connect(&tls),
            )
            .unwrap();
        b.register::<Ask<Num, Num>>("double-b", &sb.spawn(Doubler))
            .unwrap();
        assert_eq!(Doubling::new(&b, "double").ask(21), Num(42));
        assert_eq!(Doubling::new(&a, "double-b").ask(5), Num(10));
        // The same authority's certificate under another name: TLS lets it link to both
        // nodes (it dials both; through gossip, dialling one would do), the access control of
        // either lets nothing of actorium's through.
        let guest =
            || RemoteConfig::peer().tls(cert("ca.pem"), cert("guest.pem"), cert("guest.key"));
        finds_none(
            guest()
                .connect(&tls)
                .connect(format!("tls/127.0.0.1:{b_port}")),
            &["double", "double-b"],
        );
        // (Without the access control, that certificate is served.)
        let open = free_port();
        let (_so, _o) = server(open);
        let sg = ActorSystem::new().unwrap();
        let g = sg
            .remote(guest().connect(format!("tls/127.0.0.1:{open}")))
            .unwrap();
        assert_eq!(Doubling::new(&g, "double").ask(4), Num(8));
    });
}

#[test]
fn tls_refuses_a_plain_endpoint_with_what_to_use() {
    let s = ActorSystem::new().unwrap();
    for config in [
        node_config().listen("tcp/127.0.0.1:0"),
        node_config().connect("tcp/127.0.0.1:7447"),
    ] {
        match s.remote(config) {
            Err(RemoteError::Config(why)) => assert!(why.contains("tls/host:port"), "{why}"),
            Err(e) => panic!("refused for another reason: {e}"),
            Ok(_) => panic!("a tcp endpoint with tls(..) was not refused"),
        }
    }
}
