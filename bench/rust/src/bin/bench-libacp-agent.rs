//! The bench agent on libacp's typed Rust API (`libacp_core::Agent`),
//! serving on stdin/stdout. See `bench/README.md` for the prompt vocabulary.

use std::sync::atomic::{AtomicU64, Ordering};

use libacp_bench::{Command, READ_LEN, WRITE_PATH, msg, parse_command, read_path, text_of};

use libacp_core::{AcpOptions, Agent, AgentConnection, RequestContext, RpcError, v1};

#[derive(Default)]
struct BenchAgent {
    sessions: AtomicU64,
}

fn internal(e: impl std::fmt::Display) -> RpcError {
    RpcError::internal_error(e.to_string())
}

impl Agent for BenchAgent {
    async fn initialize(
        &self,
        _cx: RequestContext<AgentConnection>,
        _args: v1::InitializeRequest,
    ) -> Result<v1::InitializeResponse, RpcError> {
        Ok(msg::initialized())
    }

    async fn new_session(
        &self,
        _cx: RequestContext<AgentConnection>,
        _args: v1::NewSessionRequest,
    ) -> Result<v1::NewSessionResponse, RpcError> {
        let n = self.sessions.fetch_add(1, Ordering::Relaxed);
        Ok(v1::NewSessionResponse::new(format!("libacp-{n}")))
    }

    async fn prompt(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::PromptRequest,
    ) -> Result<v1::PromptResponse, RpcError> {
        let conn = cx.connection;
        let session = args.session_id.clone();
        match parse_command(msg::first_text(&args)) {
            Some(Command::Stream(n)) => {
                for i in 0..n {
                    conn.session_update(&msg::chunk(&session, i))
                        .await
                        .map_err(internal)?;
                }
            }
            Some(Command::Read(m)) => {
                for i in 0..m {
                    let file = conn
                        .read_text_file(&v1::ReadTextFileRequest::new(
                            session.clone(),
                            read_path(i),
                        ))
                        .await
                        .map_err(internal)?;
                    if file.content.len() != READ_LEN {
                        return Err(internal(format!("read {i}: {} bytes", file.content.len())));
                    }
                }
            }
            Some(Command::Write(bytes)) => {
                conn.write_text_file(&v1::WriteTextFileRequest::new(
                    session,
                    WRITE_PATH,
                    text_of(bytes),
                ))
                .await
                .map_err(internal)?;
            }
            Some(Command::Echo) => {}
            None => return Err(RpcError::invalid_params("unknown bench command")),
        }
        Ok(v1::PromptResponse::new(v1::StopReason::EndTurn))
    }
}

#[tokio::main]
async fn main() {
    let conn = AgentConnection::serve_stdio(BenchAgent::default(), AcpOptions::default());
    conn.acp().closed().await;
    // Everything answered is written before the process exits.
    conn.acp().terminated().await;
}
