//! The bench agent on libacp's typed Rust API (`libacp_core::Agent`),
//! serving on stdin/stdout. See `bench/README.md` for the prompt vocabulary.

use std::sync::atomic::{AtomicU64, Ordering};

use libacp_bench::{Command, READ_LEN, WRITE_PATH, msg, parse_command, read_path, text_of};
use std::os::fd::FromRawFd;

use libacp_core::{AcpOptions, Agent, AgentConnection, RequestContext, RpcError, Transport, v1};
use tokio::net::unix::pipe;

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

/// `Transport::stdio()` (tokio's stdin/stdout: every read and write is a
/// hand-off to the blocking thread pool), or with `BENCH_PIPE_STDIO=1` and
/// stdin/stdout pipes, epoll-driven non-blocking pipes: an experiment for
/// the profile in bench/README.md.
fn transport() -> Transport {
    if std::env::var_os("BENCH_PIPE_STDIO").is_some() {
        let pipes = pipe::Receiver::from_file(dup_file(0))
            .and_then(|r| Ok((r, pipe::Sender::from_file(dup_file(1))?)));
        match pipes {
            Ok((reader, writer)) => return Transport::new(reader, writer),
            Err(e) => {
                eprintln!("bench-libacp-agent: stdio is not pipes ({e}); using Transport::stdio()")
            }
        }
    }
    Transport::stdio()
}

fn dup_file(fd: i32) -> std::fs::File {
    // SAFETY: fd 0/1 are open for the life of the process; we own the dup.
    std::fs::File::from(unsafe { std::os::fd::OwnedFd::from_raw_fd(libc::dup(fd)) })
}

#[tokio::main]
async fn main() {
    let conn = AgentConnection::start(transport(), BenchAgent::default(), AcpOptions::default());
    conn.acp().closed().await;
}
