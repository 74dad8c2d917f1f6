//! Remote actors across processes: this test binary re-executes itself as the other node
//! (loopback only, multicast off), then kills it (`kill -9`): monitors, links and pending
//! asks on the parent hear `NodeDown`. And as a router between two client nodes.
#![cfg(all(feature = "remote", unix))]

mod common;

use actorium::remote::{RemoteConfig, RemoteMessage};
use actorium::{
    Actor, ActorSystem, Allocation, Ask, AskError, Context, ExitReason, Receive, Recipient, ReplyTo,
};
use common::{free_port, watchdog};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const FIND: Duration = Duration::from_secs(20);
/// The child's role, and the port it listens on.
const CHILD: &str = "ACTORIUM_REMOTE_CHILD_PORT";
/// The router's role (a child process that only routes), and its port.
const ROUTER: &str = "ACTORIUM_REMOTE_ROUTER_PORT";

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Num(u64);
impl RemoteMessage for Num {
    const TAG: &'static str = "proc.Num";
}

/// Doubles, or keeps the question unanswered (odd numbers).
struct Server(Vec<ReplyTo<Num>>);
impl Actor for Server {}
impl Receive<Ask<Num, Num>> for Server {
    fn receive(&mut self, a: Ask<Num, Num>, _: &mut Context<'_, Self>) -> Allocation {
        if a.msg.0 % 2 == 1 {
            self.0.push(a.reply);
        } else {
            let _ = a.reply.send(Num(a.msg.0 * 2));
        }
        Allocation::Nodelete
    }
}

/// The child: serves `server` on the port it was given, says `ready`, waits to be killed.
#[test]
fn child_node() {
    let Ok(port) = std::env::var(CHILD) else {
        return; // run as an ordinary test: nothing to do
    };
    let system = ActorSystem::new().unwrap();
    let node = system
        .remote(RemoteConfig::peer().listen(format!("tcp/127.0.0.1:{port}")))
        .unwrap();
    node.register::<Ask<Num, Num>>("server", &system.spawn(Server(Vec::new())))
        .unwrap();
    println!("\nchild-node-ready");
    // Killed by the parent; never outlives it by more than this.
    std::thread::sleep(Duration::from_secs(60));
    std::process::exit(3);
}

/// The router: a node in router mode on the port it was given, serving nothing; says
/// `ready`, waits to be killed.
#[test]
fn router_node() {
    let Ok(port) = std::env::var(ROUTER) else {
        return;
    };
    let system = ActorSystem::new().unwrap();
    let _node = system
        .remote(RemoteConfig::router().listen(format!("tcp/127.0.0.1:{port}")))
        .unwrap();
    println!("\nchild-node-ready");
    std::thread::sleep(Duration::from_secs(60));
    std::process::exit(3);
}

/// Whether this process is a child (then the parent's tests do nothing).
fn is_child() -> bool {
    std::env::var(CHILD).is_ok() || std::env::var(ROUTER).is_ok()
}

/// Starts the child node on a free port; returns it and the port.
fn spawn_child() -> (Child, u16) {
    spawn_as("child_node", CHILD)
}

/// Re-executes this test binary as `test`, its role `role` given a free port; waits until it
/// says it is ready.
fn spawn_as(test: &str, role: &str) -> (Child, u16) {
    let port = free_port();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(role, port.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let mut lines = BufReader::new(out).lines();
    loop {
        let line = lines.next().expect("the child said ready").unwrap();
        if line.contains("child-node-ready") {
            break;
        }
    }
    // Keep reading (a closed pipe would end the child early).
    std::thread::spawn(move || lines.for_each(drop));
    (child, port)
}

#[test]
fn killing_the_other_process_fails_asks_monitors_and_links_with_node_down() {
    if is_child() {
        return;
    }
    watchdog(90, || {
        /// Links itself with the remote server, then says so.
        struct Linker(mpsc::Sender<()>);
        impl Actor for Linker {}
        impl Receive<Recipient<Ask<Num, Num>>> for Linker {
            fn receive(
                &mut self,
                r: Recipient<Ask<Num, Num>>,
                ctx: &mut Context<'_, Self>,
            ) -> Allocation {
                ctx.link(&r);
                let _ = self.0.send(());
                Allocation::Nodelete
            }
        }
        let (mut child, port) = spawn_child();
        let system = ActorSystem::new().unwrap();
        // A lease far beyond the watchdog: the loss must be seen through the closed socket.
        let node = system
            .remote(
                RemoteConfig::peer()
                    .connect(format!("tcp/127.0.0.1:{port}"))
                    .lease(Duration::from_secs(600)),
            )
            .unwrap();
        let server = node.lookup::<Ask<Num, Num>>("server", FIND).unwrap();
        assert_eq!(server.ask(Num(20)).unwrap().wait().unwrap(), Num(40));

        let monitor = server.monitor();
        let unanswered = server.ask(Num(1)).unwrap();
        let (tx, linked) = mpsc::channel();
        let linker = system.spawn(Linker(tx));
        let linker_down = linker.monitor();
        linker.send(server.clone()).unwrap();
        linked.recv().unwrap();
        // An answered ask after the unanswered one: that one reached the child.
        assert_eq!(server.ask(Num(2)).unwrap().wait().unwrap(), Num(4));

        let killed = Instant::now();
        child.kill().unwrap(); // SIGKILL
        assert_eq!(unanswered.wait(), Err(AskError::NodeDown));
        let detected = killed.elapsed();
        // Through the closed socket, not the lease (600 s): a bound no loaded machine nears.
        assert!(
            detected < Duration::from_secs(30),
            "NodeDown after {detected:?}"
        );
        assert_eq!(monitor.wait().unwrap(), ExitReason::NodeDown);
        assert_eq!(linker_down.wait().unwrap(), ExitReason::Linked);
        // Later: the message comes back, and asks fail at once.
        assert!(server.ask(Num(4)).is_err());
        // No lookup finds its name any more.
        let left = node.lookup_all::<Ask<Num, Num>>("server", Duration::from_millis(300));
        assert_eq!(
            left.unwrap(),
            Vec::new(),
            "a dead process's name is still found"
        );
        let _ = child.wait();
        eprintln!("NodeDown seen {detected:?} after kill -9");
    });
}

#[test]
fn a_process_that_comes_back_is_found_again_by_a_new_lookup() {
    if is_child() {
        return;
    }
    watchdog(90, || {
        let system = ActorSystem::new().unwrap();
        let (mut first, port) = spawn_child();
        let node = system
            .remote(RemoteConfig::peer().connect(format!("tcp/127.0.0.1:{port}")))
            .unwrap();
        let old = node.lookup::<Ask<Num, Num>>("server", FIND).unwrap();
        let down = old.monitor();
        first.kill().unwrap();
        let _ = first.wait();
        assert_eq!(down.wait().unwrap(), ExitReason::NodeDown);
        // A new process on a new port; this node connects to it too.
        let (mut second, port2) = spawn_child();
        let node2 = system
            .remote(RemoteConfig::peer().connect(format!("tcp/127.0.0.1:{port2}")))
            .unwrap();
        let new = node2.lookup::<Ask<Num, Num>>("server", FIND).unwrap();
        assert_eq!(new.ask(Num(8)).unwrap().wait().unwrap(), Num(16));
        assert!(old.ask(Num(8)).is_err(), "the old one stays down");
        second.kill().unwrap();
        let _ = second.wait();
    });
}

/// A routed deployment: two client nodes (no listening port, no peer-to-peer link) reach
/// each other only through a router process; killing the router is the loss of the route,
/// seen as `NodeDown` by the actors watching across it.
#[test]
fn two_clients_reach_each_other_through_a_router_process() {
    if is_child() {
        return;
    }
    watchdog(90, || {
        let (mut router, port) = spawn_as("router_node", ROUTER);
        let client = || {
            let s = ActorSystem::new().unwrap();
            let n = s
                .remote(RemoteConfig::client().connect(format!("tcp/127.0.0.1:{port}")))
                .unwrap();
            (s, n)
        };
        let (s1, c1) = client();
        let (_s2, c2) = client();
        c1.register::<Ask<Num, Num>>("server", &s1.spawn(Server(Vec::new())))
            .unwrap();
        let server = c2.lookup::<Ask<Num, Num>>("server", FIND).unwrap();
        assert_eq!(server.ask(Num(20)).unwrap().wait().unwrap(), Num(40));
        let down = server.monitor();
        let unanswered = server.ask(Num(1)).unwrap();
        let killed = Instant::now();
        router.kill().unwrap();
        assert_eq!(unanswered.wait(), Err(AskError::NodeDown));
        assert_eq!(down.wait().unwrap(), ExitReason::NodeDown);
        let _ = router.wait();
        eprintln!(
            "through a router: NodeDown {:?} after its kill -9",
            killed.elapsed()
        );
    });
}
