//! The bench client on the official Rust SDK (`agent-client-protocol` 5.0.0):
//! `bench-sdk-client WORKLOAD [ARGS] -- AGENT_COMMAND...`.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    ReadTextFileRequest, ReadTextFileResponse, SessionNotification, WriteTextFileRequest,
    WriteTextFileResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{AcpAgent, Agent, Client, ConnectTo, Error};
use agent_client_protocol_http::HttpClient;
use libacp_bench::{BenchPeer, Tracker, drive, emit, fail, invocation, msg};

const IMPL: &str = "rust-sdk";

#[derive(Clone)]
struct Peer(ConnectionTo<Agent>);

impl BenchPeer for Peer {
    async fn new_session(&self) -> Result<String, String> {
        let s = self
            .0
            .send_request(msg::new_session())
            .block_task()
            .await
            .map_err(|e| e.to_string())?;
        Ok(s.session_id.0.to_string())
    }

    async fn prompt(
        &self,
        session: &str,
        text: &str,
        resource: Option<Arc<String>>,
    ) -> Result<String, String> {
        let done = self
            .0
            .send_request(msg::prompt(session, text, resource))
            .block_task()
            .await
            .map_err(|e| e.to_string())?;
        Ok(msg::stop_reason(&done))
    }
}

async fn run() -> Result<(String, serde_json::Value), (String, String)> {
    let inv = invocation().map_err(|e| ("?".to_owned(), e))?;
    let name = inv.workload.name().to_owned();
    // A URL instead of a command: the official remote client
    // (`agent-client-protocol-http` 5.0.0's `HttpClient`; ws:// or http://).
    let url = inv.agent.first().filter(|a| {
        ["ws://", "wss://", "http://", "https://"]
            .iter()
            .any(|s| a.starts_with(s))
    });
    if let Some(url) = url {
        let transport =
            HttpClient::with_endpoint(url.as_str()).map_err(|e| (name.clone(), e.to_string()))?;
        return run_with(transport, inv).await;
    }
    let agent = AcpAgent::from_args(&inv.agent).map_err(|e| (name.clone(), e.to_string()))?;
    run_with(agent, inv).await
}

async fn run_with(
    agent: impl ConnectTo<Client>,
    inv: libacp_bench::Invocation,
) -> Result<(String, serde_json::Value), (String, String)> {
    let name = inv.workload.name().to_owned();
    let err = |e: String| (name.clone(), e);
    let tracker = Arc::new(Tracker::default());
    let (on_update, on_read, on_write) = (
        Arc::clone(&tracker),
        Arc::clone(&tracker),
        Arc::clone(&tracker),
    );
    let outcome: Arc<Mutex<Option<Result<serde_json::Value, String>>>> = Arc::default();
    let out = Arc::clone(&outcome);
    let workload = inv.workload;
    let connected = Client
        .v1()
        .name("bench-sdk-client")
        .on_receive_notification(
            async move |n: SessionNotification, _cx: ConnectionTo<Agent>| {
                if let Some(text) = msg::chunk_text(&n) {
                    on_update.chunk(&n.session_id.0, text);
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: ReadTextFileRequest,
                        responder: Responder<ReadTextFileResponse>,
                        _cx: ConnectionTo<Agent>| {
                match on_read.read(&request.path.to_string_lossy()) {
                    Ok(content) => responder.respond(ReadTextFileResponse::new(content)),
                    Err(e) => responder.respond_with_error(Error::invalid_params().data(e)),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: WriteTextFileRequest,
                        responder: Responder<WriteTextFileResponse>,
                        _cx: ConnectionTo<Agent>| {
                match on_write.write(&request.path.to_string_lossy(), &request.content) {
                    Ok(()) => responder.respond(WriteTextFileResponse::new()),
                    Err(e) => responder.respond_with_error(Error::invalid_params().data(e)),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(agent, async move |cx: ConnectionTo<Agent>| {
            let result = async {
                cx.send_request(msg::initialize())
                    .block_task()
                    .await
                    .map_err(|e| e.to_string())?;
                drive(Peer(cx.clone()), tracker, workload).await
            }
            .await;
            *out.lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
            Ok(())
        })
        .await;
    let result = outcome.lock().unwrap_or_else(|e| e.into_inner()).take();
    match (result, connected) {
        (Some(Ok(value)), _) => Ok((name, value)),
        (Some(Err(e)), _) => Err(err(e)),
        (None, Err(e)) => Err(err(format!("connection failed: {e}"))),
        (None, Ok(())) => Err(err("no result".into())),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok((workload, result)) => {
            emit(IMPL, &workload, result);
            ExitCode::SUCCESS
        }
        Err((workload, e)) => fail(IMPL, &workload, &e),
    }
}
