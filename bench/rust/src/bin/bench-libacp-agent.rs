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
    // `--listen ADDR`: serve remote ACP (WebSocket and Streamable HTTP on
    // `/acp`), one agent per connection, until stdin closes; the address is
    // the first stderr line (`listening on 127.0.0.1:PORT`).
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, addr] = args.as_slice()
        && flag == "--listen"
    {
        let factory = |incoming: libacp_core::remote::Incoming| {
            AgentConnection::start(
                incoming.transport,
                BenchAgent::default(),
                AcpOptions::default(),
            )
        };
        let options = libacp_core::remote::ServerOptions::default();
        match libacp_core::remote::Server::bind(addr.as_str(), options, factory).await {
            Ok(server) => {
                eprintln!("listening on {}", server.local_addr());
                let mut sink = Vec::new();
                let _ =
                    tokio::io::AsyncReadExt::read_to_end(&mut tokio::io::stdin(), &mut sink).await;
                server.shutdown().await;
            }
            Err(e) => eprintln!("bench-libacp-agent: cannot listen on {addr}: {e}"),
        }
        return;
    }
    let conn = AgentConnection::serve_stdio(BenchAgent::default(), AcpOptions::default());
    conn.acp().closed().await;
    // Everything answered is written before the process exits.
    conn.acp().terminated().await;
}
