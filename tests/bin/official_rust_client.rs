//! An ACP v1 client built only on the official Rust SDK (`agent-client-protocol`).
//!
//! `official-rust-client -- AGENT [ARGS...]` spawns the agent, then:
//! 1. `initialize` (protocol 1, fs read/write capabilities) and `session/new`;
//! 2. prompt `stream 50`: checks that the 50 `agent_message_chunk` updates
//!    `chunk 0` .. `chunk 49` were all handled, in order, before the prompt's
//!    response arrived, and that it ended with `end_turn`;
//! 3. prompt `read PATH`: answers the agent's `fs/read_text_file` with
//!    `hello from client` and checks that PATH was asked for and the content
//!    came back as the one chunk before the response.
//!
//! Prints `OK` and exits 0, or prints the problem and exits 1. The agent must
//! also exit cleanly once its stdin is closed (the SDK reports a non-zero exit).

use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ContentBlock, FileSystemCapabilities, InitializeRequest, NewSessionRequest,
    PromptRequest, ReadTextFileRequest, ReadTextFileResponse, SessionNotification, SessionUpdate,
    StopReason, TextContent,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{AcpAgent, Agent, Client, Error};

const STREAM_COUNT: usize = 50;
const READ_PATH: &str = "/some/abs/path/notes.txt";
const FILE_CONTENT: &str = "hello from client";
const DEADLINE: Duration = Duration::from_secs(20);

/// What the handlers saw, in the order they saw it.
#[derive(Default)]
struct Seen {
    /// `sessionId` and text of each `agent_message_chunk`; other updates are
    /// recorded as `<kind>`.
    chunks: Vec<(String, String)>,
    /// Paths the agent asked to read.
    reads: Vec<String>,
}

type Shared = Arc<Mutex<Seen>>;

fn lock(seen: &Shared) -> std::sync::MutexGuard<'_, Seen> {
    seen.lock().unwrap_or_else(PoisonError::into_inner)
}

fn fail(msg: impl Into<String>) -> Error {
    let msg = msg.into();
    Error::internal_error().data(msg)
}

fn text_prompt(
    session_id: &agent_client_protocol::v1::schema::SessionId,
    text: &str,
) -> PromptRequest {
    PromptRequest::new(
        session_id.clone(),
        vec![ContentBlock::Text(TextContent::new(text))],
    )
}

async fn drive(cx: ConnectionTo<Agent>, seen: Shared) -> Result<(), Error> {
    let init = cx
        .send_request(
            InitializeRequest::new(ProtocolVersion::V1).client_capabilities(
                ClientCapabilities::new().fs(FileSystemCapabilities::new()
                    .read_text_file(true)
                    .write_text_file(true)),
            ),
        )
        .block_task()
        .await?;
    if init.protocol_version != ProtocolVersion::V1 {
        return Err(fail(format!(
            "initialize answered protocol {:?}",
            init.protocol_version
        )));
    }
    if init.agent_capabilities.load_session {
        return Err(fail("initialize answered loadSession true"));
    }

    let session = cx
        .send_request(NewSessionRequest::new("/"))
        .block_task()
        .await?;
    let session_id = session.session_id;
    let sid = session_id.to_string();

    // 1. Streaming: every update must be handled before the response.
    let response = cx
        .send_request(text_prompt(&session_id, &format!("stream {STREAM_COUNT}")))
        .block_task()
        .await?;
    if response.stop_reason != StopReason::EndTurn {
        return Err(fail(format!(
            "stream prompt stopped with {:?}",
            response.stop_reason
        )));
    }
    let chunks = std::mem::take(&mut lock(&seen).chunks);
    let expected: Vec<(String, String)> = (0..STREAM_COUNT)
        .map(|i| (sid.clone(), format!("chunk {i}")))
        .collect();
    if chunks != expected {
        return Err(fail(format!(
            "before the stream prompt's response, saw {} updates, expected {STREAM_COUNT} in order; first differences: {:?}",
            chunks.len(),
            chunks
                .iter()
                .zip(expected.iter())
                .filter(|(a, b)| a != b)
                .take(3)
                .collect::<Vec<_>>()
        )));
    }

    // 2. A nested agent -> client request during the prompt.
    let response = cx
        .send_request(text_prompt(&session_id, &format!("read {READ_PATH}")))
        .block_task()
        .await?;
    if response.stop_reason != StopReason::EndTurn {
        return Err(fail(format!(
            "read prompt stopped with {:?}",
            response.stop_reason
        )));
    }
    let (chunks, reads) = {
        let mut seen = lock(&seen);
        (
            std::mem::take(&mut seen.chunks),
            std::mem::take(&mut seen.reads),
        )
    };
    if reads != [READ_PATH] {
        return Err(fail(format!(
            "expected one fs/read_text_file of {READ_PATH}, got {reads:?}"
        )));
    }
    if chunks != [(sid, FILE_CONTENT.to_owned())] {
        return Err(fail(format!(
            "expected the file content echoed as one chunk before the response, got {chunks:?}"
        )));
    }
    Ok(())
}

async fn run(agent_args: Vec<String>) -> Result<(), Error> {
    let agent = AcpAgent::from_args(agent_args)?;
    let seen: Shared = Arc::default();
    let on_update = Arc::clone(&seen);
    let on_read = Arc::clone(&seen);
    Client
        .v1()
        .name("official-rust-client")
        .on_receive_notification(
            async move |notification: SessionNotification, _cx: ConnectionTo<Agent>| {
                let entry = match notification.update {
                    SessionUpdate::AgentMessageChunk(chunk) => match chunk.content {
                        ContentBlock::Text(text) => text.text,
                        other => format!("<non-text chunk {other:?}>"),
                    },
                    other => format!("<update {other:?}>"),
                };
                lock(&on_update)
                    .chunks
                    .push((notification.session_id.to_string(), entry));
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: ReadTextFileRequest,
                        responder: Responder<ReadTextFileResponse>,
                        _cx: ConnectionTo<Agent>| {
                lock(&on_read)
                    .reads
                    .push(request.path.to_string_lossy().into_owned());
                responder.respond(ReadTextFileResponse::new(FILE_CONTENT))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(agent, async move |cx: ConnectionTo<Agent>| {
            drive(cx, seen).await
        })
        .await
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--") {
        args.remove(0);
    }
    if args.is_empty() {
        println!("usage: official-rust-client -- AGENT [ARGS...]");
        return ExitCode::FAILURE;
    }
    match tokio::time::timeout(DEADLINE, run(args)).await {
        Ok(Ok(())) => {
            println!("OK");
            ExitCode::SUCCESS
        }
        Ok(Err(e)) => {
            println!("FAIL: {e}");
            ExitCode::FAILURE
        }
        Err(_) => {
            println!("FAIL: no result within {DEADLINE:?}");
            ExitCode::FAILURE
        }
    }
}
