//! The typed API of the unstable v1 extensions (cargo features
//! `unstable_*`, wire option `unstable`): a typed client calls each
//! unstable agent method on a typed agent, the agent calls `mcp/message` on
//! the client and sends `auth/status_update`, and every call goes through
//! the same protocol checks as a stable one.

use std::sync::{Arc, Mutex};

use libacp_core::protocol::unstable::Features;
use libacp_core::v1;
use libacp_core::{
    AcpOptions, Agent, AgentConnection, CallError, Client, ClientConnection, Refusal,
    RequestContext, RpcError, Transport,
};
use libacp_tests::within;
use serde_json::json;

struct Forker;

fn decode<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).expect("schema value")
}

impl Agent for Forker {
    async fn initialize(
        &self,
        _cx: RequestContext<AgentConnection>,
        _args: v1::InitializeRequest,
    ) -> Result<v1::InitializeResponse, RpcError> {
        Ok(decode(json!({"protocolVersion": 1, "agentCapabilities": {
            "sessionCapabilities": {"fork": {}, "archive": {}, "status": {}, "title": {}},
            "auth": {"status": {}},
            "providers": {}}})))
    }

    async fn new_session(
        &self,
        _cx: RequestContext<AgentConnection>,
        _args: v1::NewSessionRequest,
    ) -> Result<v1::NewSessionResponse, RpcError> {
        Ok(v1::NewSessionResponse::new("s1"))
    }

    async fn prompt(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::PromptRequest,
    ) -> Result<v1::PromptResponse, RpcError> {
        let answer = cx
            .connection
            .mcp_message(&decode(
                json!({"serverId": "editor-tools", "requestId": "r1", "method": "tools/list"}),
            ))
            .await
            .map_err(|e| RpcError::internal_error(e.to_string()))?;
        let v1::MessageMcpResponse::Result { result, .. } = answer else {
            return Err(RpcError::internal_error("mcp error"));
        };
        cx.connection
            .auth_status_update(&v1::AuthStatusUpdateNotification::new(
                v1::AuthState::Authenticated,
            ))
            .await
            .map_err(|e| RpcError::internal_error(e.to_string()))?;
        let mut response = v1::PromptResponse::new(v1::StopReason::EndTurn);
        response.meta = Some(
            json!({"session": args.session_id.to_string(), "tools": result})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        Ok(response)
    }

    async fn fork_session(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::ForkSessionRequest,
    ) -> Result<v1::ForkSessionResponse, RpcError> {
        Ok(v1::ForkSessionResponse::new(format!(
            "{}-fork",
            args.session_id
        )))
    }

    async fn archive_session(
        &self,
        _cx: RequestContext<AgentConnection>,
        _args: v1::ArchiveSessionRequest,
    ) -> Result<v1::ArchiveSessionResponse, RpcError> {
        Ok(v1::ArchiveSessionResponse::default())
    }

    async fn session_status(
        &self,
        _cx: RequestContext<AgentConnection>,
        _args: v1::SessionStatusRequest,
    ) -> Result<v1::SessionStatusResponse, RpcError> {
        Ok(v1::SessionStatusResponse::new(v1::SessionStatus::Saved))
    }

    async fn set_session_title(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::SetSessionTitleRequest,
    ) -> Result<v1::SetSessionTitleResponse, RpcError> {
        Ok(v1::SetSessionTitleResponse::new(args.title.trim()))
    }

    async fn auth_status(
        &self,
        _cx: RequestContext<AgentConnection>,
        _args: v1::AuthStatusRequest,
    ) -> Result<v1::AuthStatusResponse, RpcError> {
        Ok(v1::AuthStatusResponse::new(v1::AuthState::NotRequired))
    }

    async fn list_providers(
        &self,
        _cx: RequestContext<AgentConnection>,
        _args: v1::ListProvidersRequest,
    ) -> Result<v1::ListProvidersResponse, RpcError> {
        Ok(v1::ListProvidersResponse::new(Vec::new()))
    }
}

#[derive(Default, Clone)]
struct Editor(Arc<Mutex<Vec<String>>>);

impl Client for Editor {
    async fn request_permission(
        &self,
        _cx: RequestContext<ClientConnection>,
        _args: v1::RequestPermissionRequest,
    ) -> Result<v1::RequestPermissionResponse, RpcError> {
        Err(RpcError::method_not_found("session/request_permission"))
    }

    async fn mcp_message(
        &self,
        _cx: RequestContext<ClientConnection>,
        args: v1::MessageMcpRequest,
    ) -> Result<v1::MessageMcpResponse, RpcError> {
        self.0
            .lock()
            .expect("log")
            .push(format!("mcp {}", args.method));
        Ok(decode(json!({"result": {"tools": []}})))
    }

    async fn auth_status_update(
        &self,
        _connection: ClientConnection,
        args: v1::AuthStatusUpdateNotification,
    ) {
        self.0
            .lock()
            .expect("log")
            .push(format!("auth {:?}", args.state));
    }
}

fn all() -> AcpOptions {
    AcpOptions {
        unstable: Features::all(),
        ..AcpOptions::default()
    }
}

#[tokio::test]
async fn every_unstable_agent_method_round_trips_typed() {
    let (tc, ta) = Transport::memory_pair();
    let editor = Editor::default();
    let client = ClientConnection::start(tc, editor.clone(), all());
    let _agent = AgentConnection::start(ta, Forker, all());
    within(
        "initialize",
        client.initialize(&v1::InitializeRequest::new(v1::ProtocolVersion::V1)),
    )
    .await
    .expect("init");
    let s1 = client
        .new_session(&v1::NewSessionRequest::new("/tmp"))
        .await
        .expect("new")
        .session_id;
    let fork = client
        .fork_session(&v1::ForkSessionRequest::new(s1.clone(), "/tmp"))
        .await
        .expect("fork");
    assert_eq!(fork.session_id.to_string(), "s1-fork");
    let status = client
        .session_status(&v1::SessionStatusRequest::new("elsewhere"))
        .await
        .expect("status");
    assert_eq!(status.status, v1::SessionStatus::Saved);
    let title = client
        .set_session_title(&v1::SetSessionTitleRequest::new(
            fork.session_id.clone(),
            " Tests ",
        ))
        .await
        .expect("title");
    assert_eq!(title.title, "Tests");
    let auth = client
        .auth_status(&v1::AuthStatusRequest::new())
        .await
        .expect("auth");
    assert_eq!(auth.state, v1::AuthState::NotRequired);
    let providers = client
        .list_providers(&v1::ListProvidersRequest::new())
        .await
        .expect("providers");
    assert!(providers.providers.is_empty());
    // The fork is open here: a prompt for it goes out, and the agent's
    // nested mcp/message and auth/status_update reach the typed client.
    let answer = within(
        "prompt",
        client.prompt(&v1::PromptRequest::new(
            fork.session_id.clone(),
            vec![v1::ContentBlock::Text(v1::TextContent::new("hi"))],
        )),
    )
    .await
    .expect("prompt");
    let meta = answer.meta.expect("meta");
    assert_eq!(meta["session"], "s1-fork");
    assert_eq!(meta["tools"], json!({"tools": []}));
    assert_eq!(
        *editor.0.lock().expect("log"),
        ["mcp tools/list", "auth Authenticated"]
    );
    // Archived: closed here.
    client
        .archive_session(&v1::ArchiveSessionRequest::new(s1.clone()))
        .await
        .expect("archive");
    let refused = client
        .prompt(&v1::PromptRequest::new(
            s1,
            vec![v1::ContentBlock::Text(v1::TextContent::new("hi"))],
        ))
        .await;
    assert!(
        matches!(
            refused,
            Err(CallError::Refused(Refusal::UnknownSession { .. }))
        ),
        "{refused:?}"
    );
    // `archive` covers unarchive too: it goes out, and the typed agent's
    // default answers -32601 (Forker does not implement it).
    let unarchive = client
        .unarchive_session(&v1::UnarchiveSessionRequest::new("x"))
        .await;
    assert!(
        matches!(&unarchive, Err(CallError::Rpc(e)) if e.code == -32601),
        "{unarchive:?}"
    );
    // `providers` was advertised; Forker does not implement disabling.
    let disable = client
        .disable_provider(&v1::DisableProviderRequest::new("main"))
        .await;
    assert!(
        matches!(&disable, Err(CallError::Rpc(e)) if e.code == -32601),
        "{disable:?}"
    );
}

/// With the wire option off, the typed unstable calls still go out (as
/// extension methods, unchecked) and the agent's protocol layer, off too,
/// hands them to its typed handler unchecked.
#[tokio::test]
async fn with_the_option_off_unstable_methods_are_unchecked_extensions() {
    let (tc, ta) = Transport::memory_pair();
    let client = ClientConnection::start(tc, Editor::default(), AcpOptions::default());
    let _agent = AgentConnection::start(ta, Forker, AcpOptions::default());
    client
        .initialize(&v1::InitializeRequest::new(v1::ProtocolVersion::V1))
        .await
        .expect("init");
    // No session is open and the cwd is relative: nothing checks either.
    let fork = client
        .fork_session(&v1::ForkSessionRequest::new("nowhere", "relative"))
        .await
        .expect("fork");
    assert_eq!(fork.session_id.to_string(), "nowhere-fork");
}
