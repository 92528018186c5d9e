//! `acp-gateway`: remote ACP for stdio programs.
//!
//! * `serve --listen ADDR [--tls-cert F --tls-key F] [--token-file F]
//!   [--allow-origin O]... -- AGENT_COMMAND ARGS...`: serves WebSocket and
//!   Streamable HTTP on `ADDR` (path `/acp`); each remote connection gets
//!   its own agent process, spliced to it byte for byte, and shut down and
//!   reaped when that connection ends.
//! * `connect URL [--header 'Name: value']... [--ca-file F]
//!   [--prefer-websocket] [--http2]`: a stdio-to-remote bridge, so any stdio
//!   client (an editor, acpx, `demo-client --agent`) can use a remote agent.
//!
//! Both are thin: the transports, limits and checks are libacp-core's
//! (`libacp_core::remote`). Diagnostics go to stderr; stdout carries ACP.

use std::process::ExitCode;
use std::time::Duration;

use libacp_core::remote::{self, ClientOptions, Incoming, Server, ServerOptions};
use libacp_core::{AgentCommand, Transport};

const USAGE: &str = "usage:
  acp-gateway serve --listen ADDR [--tls-cert FILE --tls-key FILE] [--token-file FILE]
                    [--allow-origin ORIGIN]... [--max-connections N] [--idle-timeout SECS]
                    -- AGENT_COMMAND [ARGS...]
  acp-gateway connect URL [--header 'Name: value']... [--ca-file FILE]
                    [--prefer-websocket] [--http2]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("acp-gateway: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match args.first().map(String::as_str) {
        Some("serve") => runtime.block_on(serve(&args[1..])),
        Some("connect") => runtime.block_on(connect(&args[1..])),
        Some("-h" | "--help") => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => Err(USAGE.to_owned()),
    };
    // Agents still being reaped are given a moment, not forever.
    runtime.shutdown_timeout(Duration::from_secs(5));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("acp-gateway: {e}");
            ExitCode::from(2)
        }
    }
}

/// The value after a flag.
fn value<'a>(
    args: &mut impl Iterator<Item = &'a String>,
    flag: &str,
) -> Result<&'a String, String> {
    args.next()
        .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))
}

async fn serve(args: &[String]) -> Result<(), String> {
    let split = args.iter().position(|a| a == "--");
    let (flags, command) = match split {
        Some(at) => (&args[..at], &args[at + 1..]),
        None => return Err(format!("no agent command after `--`\n{USAGE}")),
    };
    let Some((program, program_args)) = command.split_first() else {
        return Err(format!("no agent command after `--`\n{USAGE}"));
    };
    let mut listen = None;
    let mut options = ServerOptions::default();
    let mut flags = flags.iter();
    while let Some(flag) = flags.next() {
        match flag.as_str() {
            "--listen" => listen = Some(value(&mut flags, flag)?.clone()),
            "--tls-cert" => options.tls_cert = Some(value(&mut flags, flag)?.into()),
            "--tls-key" => options.tls_key = Some(value(&mut flags, flag)?.into()),
            "--token-file" => {
                let path = value(&mut flags, flag)?;
                let token = std::fs::read_to_string(path)
                    .map_err(|e| format!("cannot read the token file {path}: {e}"))?;
                let token = token.trim().to_owned();
                if token.is_empty() {
                    return Err(format!("the token file {path} is empty"));
                }
                options.bearer_tokens.push(token);
            }
            "--allow-origin" => options
                .allowed_origins
                .push(value(&mut flags, flag)?.clone()),
            "--max-connections" => {
                let n = value(&mut flags, flag)?;
                options.max_connections = n
                    .parse()
                    .map_err(|_| format!("--max-connections {n}: not a number"))?;
            }
            "--idle-timeout" => {
                let n = value(&mut flags, flag)?;
                let secs: u64 = n
                    .parse()
                    .map_err(|_| format!("--idle-timeout {n}: not a number"))?;
                options.idle_timeout = Duration::from_secs(secs);
            }
            other => return Err(format!("unknown option `{other}`\n{USAGE}")),
        }
    }
    let listen = listen.ok_or_else(|| format!("--listen ADDR is required\n{USAGE}"))?;
    let agent = AgentCommand::new(program).args(program_args.iter().cloned());
    let factory = move |incoming: Incoming| {
        let agent = agent.clone();
        tokio::spawn(async move {
            match libacp_core::transport::process::spawn(&agent) {
                Ok(process) => {
                    if let Err(e) = incoming.transport.splice(process).await {
                        eprintln!(
                            "acp-gateway: connection {}: {}",
                            incoming.connection_id,
                            failure(&e)
                        );
                    }
                }
                Err(e) => eprintln!(
                    "acp-gateway: connection {}: cannot start the agent: {e}",
                    incoming.connection_id
                ),
            }
        });
    };
    let server = Server::bind(listen.as_str(), options, factory)
        .await
        .map_err(|e| format!("cannot serve on {listen}: {e}"))?;
    // The address first, on its own line: scripts and tests read it.
    eprintln!("acp-gateway: listening on {}", server.local_addr());
    eprintln!(
        "acp-gateway: WebSocket {}",
        server.url(remote::RemoteKind::WebSocket)
    );
    eprintln!(
        "acp-gateway: Streamable HTTP {}",
        server.url(remote::RemoteKind::StreamableHttp)
    );
    wait_for_signal().await;
    eprintln!("acp-gateway: shutting down");
    server.shutdown().await;
    Ok(())
}

async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
        _ => std::future::pending().await,
    }
}

async fn connect(args: &[String]) -> Result<(), String> {
    let mut url = None;
    let mut options = ClientOptions::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--header" => {
                let h = value(&mut args, arg)?;
                let (name, value) = h
                    .split_once(':')
                    .ok_or_else(|| format!("--header `{h}`: expected 'Name: value'"))?;
                options
                    .headers
                    .push((name.trim().to_owned(), value.trim().to_owned()));
            }
            "--ca-file" => options.ca_file = Some(value(&mut args, arg)?.into()),
            "--prefer-websocket" => options.prefer_websocket = true,
            "--http2" => options.http2_prior_knowledge = true,
            other if other.starts_with("--") => {
                return Err(format!("unknown option `{other}`\n{USAGE}"));
            }
            other if url.is_none() => url = Some(other.to_owned()),
            other => return Err(format!("unexpected argument `{other}`\n{USAGE}")),
        }
    }
    let url = url.ok_or_else(|| format!("a URL is required\n{USAGE}"))?;
    let remote = remote::connect(&url, &options)
        .await
        .map_err(|e| format!("{e} [{}]", e.kind.name()))?;
    // A failure (the server refused a request, went away, stopped
    // answering) ends the bridge at once and is said, with a non-zero exit.
    Transport::stdio()
        .splice(remote)
        .await
        .map_err(|e| failure(&e))
}

/// An I/O failure for people; a remote transport's with its kind.
fn failure(e: &std::io::Error) -> String {
    match e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<remote::RemoteError>())
    {
        Some(remote) => format!("{remote} [{}]", remote.kind.name()),
        None => e.to_string(),
    }
}
