//! The bench agent on the official Rust SDK (`agent-client-protocol` 5.0.0),
//! serving on stdin/stdout. Each prompt turn runs on a task started with
//! `ConnectionTo::spawn` (awaiting a client request inside a handler would
//! deadlock the SDK's dispatch loop).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use agent_client_protocol::v1::schema::{
    InitializeRequest, InitializeResponse, NewSessionRequest, NewSessionResponse, PromptRequest,
    PromptResponse, ReadTextFileRequest, StopReason, WriteTextFileRequest,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, ConnectTo, Error, Stdio};
use agent_client_protocol_http::AcpHttpServer;
use libacp_bench::{Command, READ_LEN, WRITE_PATH, msg, parse_command, read_path, text_of};

async fn turn(cx: ConnectionTo<Client>, request: PromptRequest) -> Result<PromptResponse, Error> {
    let session = request.session_id.clone();
    match parse_command(msg::first_text(&request)) {
        Some(Command::Stream(n)) => {
            for i in 0..n {
                cx.send_notification(msg::chunk(&session, i))?;
            }
        }
        Some(Command::Read(m)) => {
            for i in 0..m {
                let file = cx
                    .send_request(ReadTextFileRequest::new(session.clone(), read_path(i)))
                    .block_task()
                    .await?;
                if file.content.len() != READ_LEN {
                    return Err(Error::internal_error()
                        .data(format!("read {i}: {} bytes", file.content.len())));
                }
            }
        }
        Some(Command::Write(bytes)) => {
            cx.send_request(WriteTextFileRequest::new(
                session,
                WRITE_PATH,
                text_of(bytes),
            ))
            .block_task()
            .await?;
        }
        Some(Command::Echo) => {}
        None => return Err(Error::invalid_params().data("unknown bench command")),
    }
    Ok(PromptResponse::new(StopReason::EndTurn))
}

/// The agent, for one connection; `sessions` numbers its sessions.
fn agent(sessions: Arc<AtomicU64>) -> impl ConnectTo<Client> {
    Agent
        .v1()
        .name("bench-sdk-agent")
        .on_receive_request(
            async move |_request: InitializeRequest,
                        responder: Responder<InitializeResponse>,
                        _cx: ConnectionTo<Client>| {
                responder.respond(msg::initialized())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_request: NewSessionRequest,
                        responder: Responder<NewSessionResponse>,
                        _cx: ConnectionTo<Client>| {
                let n = sessions.fetch_add(1, Ordering::Relaxed);
                responder.respond(NewSessionResponse::new(format!("sdk-{n}")))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest,
                        responder: Responder<PromptResponse>,
                        cx: ConnectionTo<Client>| {
                let task_cx = cx.clone();
                cx.spawn(async move { responder.respond_with_result(turn(task_cx, request).await) })
            },
            agent_client_protocol::on_receive_request!(),
        )
}

/// `--listen ADDR`: the official remote transport (`agent-client-protocol-http`
/// 5.0.0's `AcpHttpServer` under `axum::serve`: WebSocket and Streamable
/// HTTP on `/acp`), a fresh agent per connection, until stdin closes; the
/// address is the first stderr line (`listening on 127.0.0.1:PORT`).
async fn serve_remote(listen: &str) -> Result<(), String> {
    let sessions = Arc::new(AtomicU64::new(0));
    let router = AcpHttpServer::new(move || agent(Arc::clone(&sessions))).into_router();
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let address = listener.local_addr().map_err(|e| e.to_string())?;
    eprintln!("listening on {address}");
    let stdin_closed = async {
        let mut sink = Vec::new();
        let _ = tokio::io::AsyncReadExt::read_to_end(&mut tokio::io::stdin(), &mut sink).await;
    };
    axum::serve(listener, router)
        .with_graceful_shutdown(stdin_closed)
        .await
        .map_err(|e| format!("serving failed: {e}"))
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, listen] = args.as_slice()
        && flag == "--listen"
    {
        if let Err(e) = serve_remote(listen).await {
            eprintln!("bench-sdk-agent: {e}");
            std::process::exit(1);
        }
        return Ok(());
    }
    agent(Arc::new(AtomicU64::new(0)))
        .connect_to(Stdio::new())
        .await
}
