//! The example server on a real listening socket, asked by a real HTTP/1.1 client (a plain
//! `TcpStream`), from several threads at once.

use actorium::ActorSystem;
use actorium_http_example::{serve, Actors};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// One request; returns (status code, body).
fn request(addr: SocketAddr, method: &str, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status = out
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = out.split("\r\n\r\n").nth(1).unwrap_or("").to_owned();
    (status, body)
}

#[test]
fn handlers_ask_actors_over_real_http() {
    let system = ActorSystem::builder().workers(2).build().unwrap();
    let actors = Actors::spawn(&system);
    let (tx, rx) = mpsc::channel();
    let (stop_tx, stop_rx) = tokio_oneshot();
    let server = thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            tokio::select! {
                r = serve(listener, actors) => r.unwrap(),
                _ = stop_rx => {}
            }
        });
    });
    let addr = rx.recv().unwrap();

    assert_eq!(request(addr, "GET", "/count"), (200, "0\n".into()));
    // 4 clients x 25 additions of 1, at once: every ask answered, none lost.
    let clients: Vec<_> = (0..4)
        .map(|_| {
            thread::spawn(move || {
                for _ in 0..25 {
                    assert_eq!(request(addr, "POST", "/add/1").0, 200);
                }
            })
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
    assert_eq!(request(addr, "GET", "/count"), (200, "100\n".into()));
    // An actor that never answers: the handler's timeout turns it into a 503.
    let (status, body) = request(addr, "GET", "/slow");
    assert_eq!(status, 503);
    assert!(body.contains("no reply within the time given"), "{body}");

    stop_tx.send(()).unwrap();
    server.join().unwrap();
    system.shutdown();
}

/// A one-shot channel from this thread to the server's runtime (std's mpsc cannot be awaited).
fn tokio_oneshot() -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::sync::oneshot::Receiver<()>,
) {
    tokio::sync::oneshot::channel()
}
