//! Remote actors in two processes on 127.0.0.1, with no server: this program re-executes
//! itself as the other node. The parent asks the child's `echo` actor 10,000 times (round
//! trip p50 and p99), stops the child's `worker` (its monitor prints `Normal`), then kills
//! the child (`kill -9`): its monitor prints `NodeDown`, with how long that took to be seen.
//!
//! ```text
//! cargo run --release -p actorium --features remote --example remote
//! ```

use actorium::remote::{RemoteConfig, RemoteMessage};
use actorium::{Actor, ActorSystem, Allocation, Ask, Context, Receive};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The child's role, and the port it listens on.
const CHILD: &str = "ACTORIUM_REMOTE_DEMO_PORT";
const ASKS: usize = 10_000;

#[derive(Serialize, Deserialize)]
struct Ping(u64);
impl RemoteMessage for Ping {
    const TAG: &'static str = "demo.Ping";
}
#[derive(Serialize, Deserialize)]
struct Pong(u64);
impl RemoteMessage for Pong {
    const TAG: &'static str = "demo.Pong";
}
#[derive(Serialize, Deserialize)]
struct Stop;
impl RemoteMessage for Stop {
    const TAG: &'static str = "demo.Stop";
}

struct Echo;
impl Actor for Echo {}
impl Receive<Ask<Ping, Pong>> for Echo {
    fn receive(&mut self, a: Ask<Ping, Pong>, _: &mut Context<'_, Self>) -> Allocation {
        let _ = a.reply.send(Pong(a.msg.0));
        Allocation::Nodelete
    }
}

struct Worker;
impl Actor for Worker {}
impl Receive<Stop> for Worker {
    fn receive(&mut self, _: Stop, _: &mut Context<'_, Self>) -> Allocation {
        Allocation::Delete
    }
}

fn child(port: &str) -> Result<(), Box<dyn std::error::Error>> {
    let system = ActorSystem::new()?;
    let node = system.remote(RemoteConfig::peer().listen(format!("tcp/127.0.0.1:{port}")))?;
    node.register::<Ask<Ping, Pong>>("echo", &system.spawn(Echo))?;
    node.register::<Stop>("worker", &system.spawn(Worker))?;
    println!("ready");
    // Until the parent kills it (or a minute, should the parent be gone).
    std::thread::sleep(Duration::from_secs(60));
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if let Ok(port) = std::env::var(CHILD) {
        return child(&port);
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let mut child = Command::new(std::env::current_exe()?)
        .env(CHILD, port.to_string())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
    while lines.next().transpose()?.as_deref() != Some("ready") {}

    let system = ActorSystem::new()?;
    let node = system.remote(RemoteConfig::peer().connect(format!("tcp/127.0.0.1:{port}")))?;
    let echo = node.lookup::<Ask<Ping, Pong>>("echo", Duration::from_secs(10))?;
    println!("parent {} found `echo` on the child", node.id());

    let mut rtt = Vec::with_capacity(ASKS);
    for i in 0..ASKS as u64 {
        let t = Instant::now();
        let Pong(j) = echo.ask(Ping(i))?.wait()?;
        rtt.push(t.elapsed());
        assert_eq!(i, j);
    }
    rtt.sort();
    println!(
        "{ASKS} asks: round trip p50 {:.1?}, p99 {:.1?}",
        rtt[ASKS / 2],
        rtt[ASKS * 99 / 100]
    );

    let worker = node.lookup::<Stop>("worker", Duration::from_secs(10))?;
    let worker_down = worker.monitor();
    worker.send(Stop)?;
    println!("the child's worker ended: {:?}", worker_down.wait()?);

    let echo_down = echo.monitor();
    let killed = Instant::now();
    child.kill()?;
    let why = echo_down.wait()?;
    println!(
        "killed the child: the echo's monitor says {why:?} after {:.1?}",
        killed.elapsed()
    );
    child.wait()?;
    Ok(())
}
