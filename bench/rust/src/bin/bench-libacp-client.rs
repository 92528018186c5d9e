//! The bench client on libacp's typed Rust API (`libacp_core::Client`):
//! `bench-libacp-client WORKLOAD [ARGS] -- AGENT_COMMAND...`.

use std::process::ExitCode;
use std::sync::Arc;

use libacp_bench::{BenchPeer, Tracker, drive, emit, fail, invocation, msg};
use libacp_core::{
    AcpOptions, AgentCommand, Client, ClientConnection, RequestContext, RpcError, Tolerant, v1,
};

const IMPL: &str = "libacp-rust";

#[derive(Clone)]
struct BenchClient(Arc<Tracker>);

impl Client for BenchClient {
    async fn request_permission(
        &self,
        _cx: RequestContext<ClientConnection>,
        _args: v1::RequestPermissionRequest,
    ) -> Result<v1::RequestPermissionResponse, RpcError> {
        Err(RpcError::method_not_found("session/request_permission"))
    }

    async fn session_update(
        &self,
        _c: ClientConnection,
        update: Tolerant<v1::SessionNotification>,
    ) {
        if let Some(n) = update.typed()
            && let Some(text) = msg::chunk_text(n)
        {
            self.0.chunk(&n.session_id.0, text);
        }
    }

    async fn read_text_file(
        &self,
        _cx: RequestContext<ClientConnection>,
        args: v1::ReadTextFileRequest,
    ) -> Result<v1::ReadTextFileResponse, RpcError> {
        let path = args.path.to_string_lossy();
        let content = self.0.read(&path).map_err(RpcError::invalid_params)?;
        Ok(v1::ReadTextFileResponse::new(content))
    }

    async fn write_text_file(
        &self,
        _cx: RequestContext<ClientConnection>,
        args: v1::WriteTextFileRequest,
    ) -> Result<v1::WriteTextFileResponse, RpcError> {
        let path = args.path.to_string_lossy();
        self.0
            .write(&path, &args.content)
            .map_err(RpcError::invalid_params)?;
        Ok(v1::WriteTextFileResponse::new())
    }
}

#[derive(Clone)]
struct Peer(ClientConnection);

impl BenchPeer for Peer {
    async fn new_session(&self) -> Result<String, String> {
        let s = self
            .0
            .new_session(&msg::new_session())
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
            .prompt(&msg::prompt(session, text, resource))
            .await
            .map_err(|e| e.to_string())?;
        Ok(msg::stop_reason(&done))
    }
}

async fn run(tracker: Arc<Tracker>) -> Result<(String, serde_json::Value), (String, String)> {
    let inv = invocation().map_err(|e| ("?".to_owned(), e))?;
    let name = inv.workload.name().to_owned();
    let err = |e: String| (name.clone(), e);
    let (program, args) = inv
        .agent
        .split_first()
        .ok_or_else(|| err("no agent".into()))?;
    // A URL instead of a command: a remote agent.
    let remote = ["ws://", "wss://", "http://", "https://"]
        .iter()
        .any(|s| program.starts_with(s));
    let conn = if remote {
        let options = libacp_core::remote::ClientOptions {
            http2_prior_knowledge: args.iter().any(|a| a == "--http2"),
            ..Default::default()
        };
        let transport = libacp_core::remote::connect(program, &options)
            .await
            .map_err(|e| err(e.to_string()))?;
        ClientConnection::start(
            transport,
            BenchClient(Arc::clone(&tracker)),
            AcpOptions::default(),
        )
    } else {
        let command = AgentCommand::new(program)
            .args(args)
            .stderr(|line| eprintln!("{line}"));
        ClientConnection::spawn(
            &command,
            BenchClient(Arc::clone(&tracker)),
            AcpOptions::default(),
        )
        .map_err(|e| err(e.to_string()))?
    };
    conn.initialize(&msg::initialize())
        .await
        .map_err(|e| err(e.to_string()))?;
    let result = drive(Peer(conn.clone()), tracker, inv.workload).await;
    conn.close().await;
    result.map(|r| (name.clone(), r)).map_err(err)
}

/// `idle N -- URL`: opens N remote connections and initializes each, prints
/// `{"ready": N}`, holds them until stdin closes (`bench/run.py --remote`
/// reads the server's RSS meanwhile).
async fn idle(n: usize, url: &str) -> Result<(), String> {
    let mut open = Vec::with_capacity(n);
    for _ in 0..n {
        let transport = libacp_core::remote::connect(url, &Default::default())
            .await
            .map_err(|e| e.to_string())?;
        let conn = ClientConnection::start(
            transport,
            BenchClient(Arc::new(Tracker::default())),
            AcpOptions::default(),
        );
        conn.initialize(&msg::initialize())
            .await
            .map_err(|e| e.to_string())?;
        open.push(conn);
    }
    println!("{{\"ready\": {n}}}");
    let mut sink = Vec::new();
    let _ = tokio::io::AsyncReadExt::read_to_end(&mut tokio::io::stdin(), &mut sink).await;
    for conn in &open {
        conn.close().await;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [mode, n, dashes, url] = args.as_slice()
        && mode == "idle"
        && dashes == "--"
    {
        let result = match n.parse() {
            Ok(n) => idle(n, url).await,
            Err(_) => Err(format!("idle {n}: not a count")),
        };
        return match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(IMPL, "idle", &e),
        };
    }
    match run(Arc::new(Tracker::default())).await {
        Ok((workload, result)) => {
            emit(IMPL, &workload, result);
            ExitCode::SUCCESS
        }
        Err((workload, e)) => fail(IMPL, &workload, &e),
    }
}
