//! Joins this process's stdin/stdout to one remote ACP connection, byte for
//! byte (`Transport::splice`, no engine between): a raw peer that speaks
//! NDJSON on a pipe or socket can then sit at the far end of libacp's
//! WebSocket or Streamable HTTP transport. The Python binding's scenario
//! runner uses it to run the shared scenarios over a remote link.
//!
//! ```text
//! libacp-remote-splice --connect URL [--http2]  a client's transport to URL
//! libacp-remote-splice --listen HOST:PORT       the first remote connection
//!                                               made to a libacp server here
//! ```
//!
//! With `--listen` the first line on stderr is `listening on HOST:PORT` (the
//! port actually bound); later connections are refused (dropped). Either
//! way it exits 0 once the splice has ended (stdin closed, or the remote
//! side gone), 1 when it cannot connect or listen.

use std::sync::{Arc, Mutex};

use libacp_core::Transport;
use libacp_core::remote::{self, ClientOptions, Incoming, Server, ServerOptions};

/// This process's stdin and stdout as one transport. Taken as descriptors
/// (`Transport::from_fds`) rather than `Transport::stdio()`: when the
/// remote side ends, shutting the output down then half-closes a socket
/// given as stdout (`SHUT_WR`), so the raw peer sees end of stream at once
/// even though stdin holds the same socket.
fn stdio() -> Result<Transport, String> {
    // SAFETY: nothing else in this process uses descriptors 0 and 1.
    unsafe { Transport::from_raw_fds(0, 1) }.map_err(|e| format!("stdin/stdout: {e}"))
}

async fn connect(url: &str, http2: bool) -> Result<(), String> {
    let options = ClientOptions {
        http2_prior_knowledge: http2,
        ..ClientOptions::default()
    };
    let transport = remote::connect(url, &options)
        .await
        .map_err(|e| format!("cannot connect to {url}: {e}"))?;
    transport
        .splice(stdio()?)
        .await
        .map_err(|e| format!("the remote connection failed: {e}"))
}

async fn listen(addr: &str) -> Result<(), String> {
    let (done_tx, done) = tokio::sync::oneshot::channel::<()>();
    let once = Arc::new(Mutex::new(Some((stdio()?, done_tx))));
    let server = Server::bind(addr, ServerOptions::default(), move |incoming: Incoming| {
        let Some((stdio, done_tx)) = once.lock().ok().and_then(|mut o| o.take()) else {
            return; // one connection only
        };
        tokio::spawn(async move {
            if let Err(e) = incoming.transport.splice(stdio).await {
                eprintln!("libacp-remote-splice: the remote connection failed: {e}");
            }
            let _ = done_tx.send(());
        });
    })
    .await
    .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    eprintln!("listening on {}", server.local_addr());
    let _ = done.await;
    drop(server);
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.as_slice() {
        [flag, url] if flag == "--connect" => connect(url, false).await,
        [flag, url, h2] if flag == "--connect" && h2 == "--http2" => connect(url, true).await,
        [flag, addr] if flag == "--listen" => listen(addr).await,
        _ => Err("usage: libacp-remote-splice --connect URL [--http2] | --listen HOST:PORT".into()),
    };
    if let Err(e) = result {
        eprintln!("libacp-remote-splice: {e}");
        std::process::exit(1);
    }
}
