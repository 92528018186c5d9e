//! Spawns an agent command, initializes it and pings it, printing every
//! frame on the wire. With no arguments it runs the `ping-agent` built next
//! to it.
//!
//! Usage: `ping-client [--count N] [-- AGENT_COMMAND...]`

use std::sync::Arc;
use std::time::Instant;

use libacp_core::{
    AgentCommand, Connection, ConnectionOptions, Direction, FnHandler, ShutdownGrace,
};
use serde_json::json;

#[tokio::main]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("ping-client: {e}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut count = 3u64;
    if args.first().map(String::as_str) == Some("--count") {
        count = args.get(1).ok_or("--count needs a number")?.parse()?;
        args.drain(..2);
    }
    if args.first().map(String::as_str) == Some("--") {
        args.remove(0);
    }
    let command = if args.is_empty() {
        let exe = std::env::current_exe()?;
        let dir = exe.parent().ok_or("no executable directory")?;
        AgentCommand::new(dir.join("ping-agent"))
    } else {
        AgentCommand::new(&args[0]).args(&args[1..])
    }
    .stderr(|line| println!("   agent stderr | {line}"))
    .grace(ShutdownGrace::default());

    let options = ConnectionOptions {
        trace: Some(Arc::new(|dir: Direction, frame: &[u8]| {
            let arrow = match dir {
                Direction::Outgoing => "client -> agent",
                Direction::Incoming => "agent -> client",
            };
            println!("{arrow} | {}", String::from_utf8_lossy(frame));
        })),
        ..ConnectionOptions::default()
    };
    let ticks = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let handler = FnHandler::new().on_notification({
        let ticks = ticks.clone();
        move |_n| {
            ticks.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async {}
        }
    });
    println!("libacp demo: a client and an agent talking JSON-RPC over the agent's stdio\n");
    let conn = Connection::spawn(&command, handler, options)?;
    let init = conn
        .request(
            "initialize",
            &json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": false, "writeTextFile": false}, "terminal": false}}),
        )
        .await?;
    let init: serde_json::Value = serde_json::from_str(init.get())?;
    println!(
        "\n=> agent {} speaks ACP protocol version {}\n",
        init["agentInfo"]["name"], init["protocolVersion"]
    );
    for n in 1..=count {
        let start = Instant::now();
        let pong = conn.request("_libacp/ping", &json!({ "n": n })).await;
        match pong {
            Ok(_) => println!(
                "=> ping {n}: pong after {:?}; ticks seen before the pong: {}\n",
                start.elapsed(),
                ticks.load(std::sync::atomic::Ordering::SeqCst)
            ),
            Err(e) => println!("=> ping {n}: {e}\n"),
        }
    }
    conn.close().await;
    if let Some(exit) = conn.process().and_then(|p| p.try_exit()) {
        println!("=> agent exited: {exit}");
    }
    Ok(())
}
