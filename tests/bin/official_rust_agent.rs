//! An ACP v1 agent built only on the official Rust SDK (`agent-client-protocol`),
//! serving on its stdin/stdout. The libacp client in the interop tests drives it.
//!
//! * `initialize`: protocol version 1, `loadSession: false`.
//! * `session/new`: a fresh session id.
//! * `session/prompt` whose first text block is `stream N`: N `session/update`
//!   `agent_message_chunk` notifications with text `chunk 0` .. `chunk N-1`,
//!   then `end_turn`.
//! * `session/prompt` with `read PATH`: calls the client's `fs/read_text_file`
//!   with PATH and streams the content back as one `agent_message_chunk`, then
//!   `end_turn`.

use std::sync::atomic::{AtomicU64, Ordering};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, ContentBlock, ContentChunk, InitializeRequest, InitializeResponse,
    NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse, ReadTextFileRequest,
    SessionId, SessionNotification, SessionUpdate, StopReason, TextContent,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, Error, Stdio};

fn chunk(session_id: SessionId, text: impl Into<String>) -> SessionNotification {
    SessionNotification::new(
        session_id,
        SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(
            text,
        )))),
    )
}

fn first_text(request: &PromptRequest) -> Option<&str> {
    request.prompt.iter().find_map(|block| match block {
        ContentBlock::Text(text) => Some(text.text.as_str()),
        _ => None,
    })
}

async fn prompt(
    request: PromptRequest,
    responder: Responder<PromptResponse>,
    cx: ConnectionTo<Client>,
) -> Result<(), Error> {
    let text = first_text(&request).unwrap_or_default().to_owned();
    let session_id = request.session_id;
    if let Some(n) = text.strip_prefix("stream ") {
        let n: u64 = n
            .trim()
            .parse()
            .map_err(|_| Error::invalid_params().data(format!("bad count in {text:?}")))?;
        for i in 0..n {
            cx.send_notification(chunk(session_id.clone(), format!("chunk {i}")))?;
        }
        responder.respond(PromptResponse::new(StopReason::EndTurn))
    } else if let Some(path) = text.strip_prefix("read ") {
        // The nested request needs the dispatch loop to route its answer, so
        // it must not be awaited inside this callback: run it on a task.
        let path = path.trim().to_owned();
        cx.clone().spawn(async move {
            let result = cx
                .send_request(ReadTextFileRequest::new(session_id.clone(), path))
                .block_task()
                .await;
            match result {
                Ok(file) => {
                    cx.send_notification(chunk(session_id, file.content))?;
                    responder.respond(PromptResponse::new(StopReason::EndTurn))
                }
                Err(e) => responder.respond_with_error(e),
            }
        })
    } else {
        responder
            .respond_with_error(Error::invalid_params().data(format!("unknown prompt {text:?}")))
    }
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let sessions = AtomicU64::new(0);
    Agent
        .v1()
        .name("official-rust-agent")
        .on_receive_request(
            async move |request: InitializeRequest,
                        responder: Responder<InitializeResponse>,
                        _cx: ConnectionTo<Client>| {
                if request.protocol_version != ProtocolVersion::V1 {
                    eprintln!(
                        "official-rust-agent: client asked for protocol {:?}",
                        request.protocol_version
                    );
                }
                responder.respond(
                    InitializeResponse::new(ProtocolVersion::V1)
                        .agent_capabilities(AgentCapabilities::new().load_session(false)),
                )
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_request: NewSessionRequest,
                        responder: Responder<NewSessionResponse>,
                        _cx: ConnectionTo<Client>| {
                let n = sessions.fetch_add(1, Ordering::Relaxed);
                responder.respond(NewSessionResponse::new(format!("official-session-{n}")))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(prompt, agent_client_protocol::on_receive_request!())
        .connect_to(Stdio::new())
        .await
}
