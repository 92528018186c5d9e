//! The interop client on libacp's typed API: runs the check sequence of
//! `tests/interop/README.md` against an agent, with fs and terminals served
//! by the core's client services.
//!
//! ```text
//! libacp-interop-client -- AGENT_COMMAND [ARGS...]   spawn the agent, stdio
//! libacp-interop-client --url URL [--http2]           a remote agent
//! libacp-interop-client --unstable -- AGENT...        the unstable sequence
//! ```
//!
//! `--unstable` (before the others) runs the unstable check sequence of
//! `libacp_interop_client/unstable.rs` instead, with the connection option
//! `unstable` set to all (`tests/interop/README.md`, "Unstable methods",
//! "Unstable payloads").
//!
//! `--url` connects with `libacp_core::remote::connect`: `ws://`/`wss://` is
//! WebSocket, `http://`/`https://` Streamable HTTP; `--http2` speaks HTTP/2
//! without TLS (h2c, prior knowledge) on `http://`.
//!
//! With `LIBACP_INTEROP_STRICT_LOAD=1` in its environment (the interop tests
//! of `tests/rust` set it), the agent must advertise `loadSession`, and
//! `session/load` must replay the session's whole history (each prompt text
//! as a `user_message_chunk`, then the `agent_message_chunk`s that prompt
//! got), in order, all of it in the `session/update` handler by the time the
//! load call returns: over Streamable HTTP the replay and the answer may
//! travel on different event streams, and the transport must not let the
//! answer overtake the replay. Without it (the bindings' interop tests,
//! whose agents follow the README's looser contract), a `loadSession` agent
//! must have replayed something by then, and one without it is not loaded.
//!
//! Prints `OK` and exits 0, or `FAIL: <reason>` and exits 1. Gives up after
//! 60 s.

#[path = "libacp_interop_client/unstable.rs"]
mod unstable;
#[path = "unstable_payloads.rs"]
mod unstable_payloads;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use libacp_core::remote::{self, ClientOptions};
use libacp_core::v1;
use libacp_core::{
    AcpOptions, AgentCommand, Client, ClientConnection, ClientServices, RequestContext, RpcError,
    Tolerant,
};

/// A text chunk of a `session/update`: a user's or the agent's.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Chunk {
    User(String),
    Agent(String),
}

/// Text chunks seen by the `session/update` handler, in order.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<Chunk>>>);

impl Seen {
    fn take_chunks(&self) -> Vec<Chunk> {
        std::mem::take(
            &mut *self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// The agent's chunks since the last take.
    fn take(&self) -> Vec<String> {
        self.take_chunks()
            .into_iter()
            .filter_map(|c| match c {
                Chunk::Agent(text) => Some(text),
                Chunk::User(_) => None,
            })
            .collect()
    }
}

impl Client for Seen {
    async fn request_permission(
        &self,
        _cx: RequestContext<ClientConnection>,
        args: v1::RequestPermissionRequest,
    ) -> Result<v1::RequestPermissionResponse, RpcError> {
        let option = args
            .options
            .iter()
            .find(|o| o.kind == v1::PermissionOptionKind::AllowOnce)
            .or(args.options.first())
            .ok_or_else(|| RpcError::invalid_params("no options"))?;
        Ok(v1::RequestPermissionResponse::new(
            v1::RequestPermissionOutcome::Selected(v1::SelectedPermissionOutcome::new(
                option.option_id.clone(),
            )),
        ))
    }

    async fn session_update(
        &self,
        _connection: ClientConnection,
        update: Tolerant<v1::SessionNotification>,
    ) {
        let Some(n) = update.typed() else { return };
        let chunk = match &n.update {
            v1::SessionUpdate::AgentMessageChunk(v1::ContentChunk {
                content: v1::ContentBlock::Text(t),
                ..
            }) => Chunk::Agent(t.text.clone()),
            v1::SessionUpdate::UserMessageChunk(v1::ContentChunk {
                content: v1::ContentBlock::Text(t),
                ..
            }) => Chunk::User(t.text.clone()),
            _ => return,
        };
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(chunk);
    }
}

fn prompt(session: &v1::SessionId, text: &str) -> v1::PromptRequest {
    v1::PromptRequest::new(
        session.clone(),
        vec![v1::ContentBlock::Text(v1::TextContent::new(text))],
    )
}

/// Where the agent is.
enum Target {
    /// A command to spawn, spoken to over its stdin/stdout.
    Spawn(Vec<String>),
    /// A remote agent's URL; `http2`: h2c with prior knowledge.
    Url { url: String, http2: bool },
}

impl Target {
    fn parse(args: &[String]) -> Result<Self, String> {
        const USAGE: &str = "usage: -- AGENT_COMMAND... | --url URL [--http2]";
        match args {
            [flag, url] if flag == "--url" => Ok(Self::Url {
                url: url.clone(),
                http2: false,
            }),
            [flag, url, h2] | [h2, flag, url] if flag == "--url" && h2 == "--http2" => {
                Ok(Self::Url {
                    url: url.clone(),
                    http2: true,
                })
            }
            [dashes, agent @ ..] if dashes == "--" && !agent.is_empty() => {
                Ok(Self::Spawn(agent.to_vec()))
            }
            [first, ..] if !first.starts_with("--") => Ok(Self::Spawn(args.to_vec())),
            _ => Err(USAGE.into()),
        }
    }

    async fn connect(
        &self,
        handler: impl Client,
        options: AcpOptions,
    ) -> Result<ClientConnection, String> {
        match self {
            Self::Spawn(agent) => {
                let (program, args) = agent.split_first().ok_or("no agent command")?;
                ClientConnection::spawn(&AgentCommand::new(program).args(args), handler, options)
                    .map_err(|e| e.to_string())
            }
            Self::Url { url, http2 } => {
                let remote = ClientOptions {
                    http2_prior_knowledge: *http2,
                    ..ClientOptions::default()
                };
                let transport = remote::connect(url, &remote)
                    .await
                    .map_err(|e| format!("connect to {url}: {e} ({})", e.kind.name()))?;
                Ok(ClientConnection::start(transport, handler, options))
            }
        }
    }
}

async fn run(target: &Target) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("libacp-interop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let dir = dir.canonicalize().map_err(|e| e.to_string())?;
    let seen = Seen::default();
    let options = AcpOptions {
        services: ClientServices::all(),
        ..AcpOptions::default()
    };
    let client = target.connect(seen.clone(), options).await?;
    // What `session/load` must replay: each prompt's text, then the agent's
    // chunks that prompt got.
    let mut history: Vec<Chunk> = Vec::new();
    let mut turn = |text: &str, chunks: &[String]| {
        history.push(Chunk::User(text.to_owned()));
        history.extend(chunks.iter().cloned().map(Chunk::Agent));
    };
    let init = client
        .initialize(&v1::InitializeRequest::new(v1::ProtocolVersion::V1))
        .await
        .map_err(|e| format!("initialize: {e}"))?;
    let session = client
        .new_session(&v1::NewSessionRequest::new(&dir))
        .await
        .map_err(|e| format!("session/new: {e}"))?
        .session_id;

    let done = client
        .prompt(&prompt(&session, "stream 50"))
        .await
        .map_err(|e| format!("stream: {e}"))?;
    let chunks = seen.take();
    turn("stream 50", &chunks);
    let expected: Vec<String> = (0..50).map(|i| format!("chunk {i}")).collect();
    if chunks != expected || done.stop_reason != v1::StopReason::EndTurn {
        return Err(format!("stream: got {chunks:?} / {:?}", done.stop_reason));
    }

    client
        .prompt(&prompt(&session, "permission"))
        .await
        .map_err(|e| format!("permission: {e}"))?;
    let chunks = seen.take();
    turn("permission", &chunks);
    if !chunks.iter().any(|c| c.contains("allow_once")) {
        return Err(format!("permission: got {chunks:?}"));
    }

    let a = dir.join("a.txt");
    std::fs::write(&a, "hello from client").map_err(|e| e.to_string())?;
    let read = format!("read {}", a.display());
    client
        .prompt(&prompt(&session, &read))
        .await
        .map_err(|e| format!("read: {e}"))?;
    let chunks = seen.take();
    turn(&read, &chunks);
    if chunks != ["hello from client"] {
        return Err(format!("read: got {chunks:?}"));
    }

    let b = dir.join("b.txt");
    let write = format!("write {} hi", b.display());
    client
        .prompt(&prompt(&session, &write))
        .await
        .map_err(|e| format!("write: {e}"))?;
    turn(&write, &seen.take());
    let written = std::fs::read_to_string(&b).map_err(|e| format!("write: {e}"))?;
    if written != "hi" {
        return Err(format!("write: file has {written:?}"));
    }

    client
        .prompt(&prompt(&session, "terminal echo hi"))
        .await
        .map_err(|e| format!("terminal: {e}"))?;
    let chunks = seen.take();
    turn("terminal echo hi", &chunks);
    if !chunks.iter().any(|c| c.contains("hi")) {
        return Err(format!("terminal: got {chunks:?}"));
    }

    let waiting = tokio::spawn({
        let client = client.clone();
        let request = prompt(&session, "wait");
        async move { client.prompt(&request).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    client
        .cancel(&session.0)
        .await
        .map_err(|e| format!("cancel: {e}"))?;
    let stop = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .map_err(|_| "cancel: no answer".to_owned())?
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("cancel: {e}"))?;
    if stop.stop_reason != v1::StopReason::Cancelled {
        return Err(format!("cancel: stopReason {:?}", stop.stop_reason));
    }
    turn("wait", &seen.take());

    let strict = std::env::var_os("LIBACP_INTEROP_STRICT_LOAD").is_some_and(|v| v == "1");
    if !init.agent_capabilities.load_session {
        if strict {
            return Err("initialize: loadSession is not advertised".into());
        }
        client.close().await;
        let _ = std::fs::remove_dir_all(&dir);
        return Ok(());
    }
    client
        .load_session(&v1::LoadSessionRequest::new(session.clone(), &dir))
        .await
        .map_err(|e| format!("session/load: {e}"))?;
    // Read at once: what the handler has by the time the call returned.
    let replayed = seen.take_chunks();
    if !strict && replayed.is_empty() {
        return Err("session/load: nothing replayed before the answer".into());
    }
    if strict && replayed != history {
        let at = replayed
            .iter()
            .zip(&history)
            .position(|(r, h)| r != h)
            .unwrap_or(replayed.len().min(history.len()));
        return Err(format!(
            "session/load: by the time the call returned the handler had {} replayed chunks, \
             expected the {} of the history; first difference at {at}: got {:?}, expected {:?}",
            replayed.len(),
            history.len(),
            replayed.get(at),
            history.get(at)
        ));
    }
    client.close().await;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

#[tokio::main]
async fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let unstable = args.first().is_some_and(|a| a == "--unstable");
    if unstable {
        args.remove(0);
    }
    let target = match Target::parse(&args) {
        Ok(target) => target,
        Err(e) => {
            println!("FAIL: {e}");
            std::process::exit(1);
        }
    };
    let outcome = async {
        if unstable {
            unstable::run(&target).await
        } else {
            run(&target).await
        }
    };
    match tokio::time::timeout(Duration::from_secs(60), outcome).await {
        Ok(Ok(())) => println!("OK"),
        Ok(Err(e)) => {
            println!("FAIL: {e}");
            std::process::exit(1);
        }
        Err(_) => {
            println!("FAIL: no result within 60s");
            std::process::exit(1);
        }
    }
}
