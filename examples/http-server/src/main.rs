//! `cargo run -p actorium-http-example`: see the library's documentation.

use actorium::ActorSystem;
use actorium_http_example::{router, Actors};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let system = ActorSystem::new()?;
    let actors = Actors::spawn(&system);
    let addr = std::env::var("ACTORIUM_HTTP_ADDR").unwrap_or_else(|_| "127.0.0.1:3000".into());
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(&addr).await?;
        println!("listening on http://{}", listener.local_addr()?);
        println!("try: curl -X POST http://{addr}/add/5; curl http://{addr}/count");
        // Ctrl-C: stop accepting, finish the requests in flight, then shut the actors down.
        axum::serve(listener, router(actors))
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
    })?;
    system.shutdown();
    println!("shut down");
    Ok(())
}
