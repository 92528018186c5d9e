//! The typed API end to end: a typed client drives a typed agent through a
//! streamed prompt with a nested permission request; unknown update
//! variants still reach the typed client raw.

use std::sync::{Arc, Mutex};

use libacp_core::v1;
use libacp_core::{
    AcpOptions, Agent, AgentConnection, Client, ClientConnection, RequestContext, RpcError,
    Tolerant, Transport,
};
use libacp_tests::within;
use serde_json::json;

struct EchoAgent;

impl Agent for EchoAgent {
    async fn initialize(
        &self,
        _cx: RequestContext<AgentConnection>,
        _args: v1::InitializeRequest,
    ) -> Result<v1::InitializeResponse, RpcError> {
        Ok(v1::InitializeResponse::new(v1::ProtocolVersion::V1))
    }

    async fn new_session(
        &self,
        _cx: RequestContext<AgentConnection>,
        _args: v1::NewSessionRequest,
    ) -> Result<v1::NewSessionResponse, RpcError> {
        Ok(v1::NewSessionResponse::new("typed-1"))
    }

    async fn prompt(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::PromptRequest,
    ) -> Result<v1::PromptResponse, RpcError> {
        let conn = &cx.connection;
        for word in ["hello", "typed", "world"] {
            let chunk = v1::ContentChunk::new(v1::ContentBlock::Text(v1::TextContent::new(word)));
            conn.session_update(&v1::SessionNotification::new(
                args.session_id.clone(),
                v1::SessionUpdate::AgentMessageChunk(chunk),
            ))
            .await?;
        }
        // A variant from the future, sent raw.
        conn.acp()
            .notify_json(
                "session/update",
                &json!({"sessionId": args.session_id, "update": {"sessionUpdate": "hologram", "frames": 3}}),
            )
            .await?;
        let permission = conn
            .request_permission(&v1::RequestPermissionRequest::new(
                args.session_id.clone(),
                v1::ToolCallUpdate::new("t1", v1::ToolCallUpdateFields::new().title("Edit")),
                vec![v1::PermissionOption::new(
                    "ok",
                    "Allow",
                    v1::PermissionOptionKind::AllowOnce,
                )],
            ))
            .await?;
        let stop = match permission.outcome {
            v1::RequestPermissionOutcome::Selected(_) => v1::StopReason::EndTurn,
            _ => v1::StopReason::Refusal,
        };
        Ok(v1::PromptResponse::new(stop))
    }
}

#[derive(Default, Clone)]
struct Recorder(Arc<Mutex<Vec<String>>>);

impl Client for Recorder {
    async fn request_permission(
        &self,
        _cx: RequestContext<ClientConnection>,
        args: v1::RequestPermissionRequest,
    ) -> Result<v1::RequestPermissionResponse, RpcError> {
        self.0.lock().expect("log").push("permission".into());
        Ok(v1::RequestPermissionResponse::new(
            v1::RequestPermissionOutcome::Selected(v1::SelectedPermissionOutcome::new(
                args.options[0].option_id.clone(),
            )),
        ))
    }

    async fn session_update(
        &self,
        _connection: ClientConnection,
        update: Tolerant<v1::SessionNotification>,
    ) {
        let entry = match update.typed().map(|n| &n.update) {
            Some(v1::SessionUpdate::AgentMessageChunk(c)) => match &c.content {
                v1::ContentBlock::Text(t) => t.text.clone(),
                _ => "other".into(),
            },
            Some(_) => "known".into(),
            None => format!("raw:{}", update.raw().get()),
        };
        self.0.lock().expect("log").push(entry);
    }
}

/// `client` and an `EchoAgent`, initialized, with a session open.
async fn with_session(
    client: impl Client,
) -> (ClientConnection, AgentConnection, v1::NewSessionResponse) {
    let (tc, ta) = Transport::memory_pair();
    let client = ClientConnection::start(tc, client, AcpOptions::default());
    let agent = AgentConnection::start(ta, EchoAgent, AcpOptions::default());
    client
        .initialize(&v1::InitializeRequest::new(v1::ProtocolVersion::V1))
        .await
        .expect("init");
    let session = client
        .new_session(&v1::NewSessionRequest::new("/tmp"))
        .await
        .expect("session");
    (client, agent, session)
}

#[tokio::test]
async fn a_typed_client_drives_a_typed_agent() {
    let (tc, ta) = Transport::memory_pair();
    let recorder = Recorder::default();
    let client = ClientConnection::start(tc, recorder.clone(), AcpOptions::default());
    let _agent = AgentConnection::start(ta, EchoAgent, AcpOptions::default());
    let init = within(
        "initialize",
        client.initialize(&v1::InitializeRequest::new(v1::ProtocolVersion::V1)),
    )
    .await
    .expect("init");
    assert_eq!(init.protocol_version, v1::ProtocolVersion::V1);
    let session = client
        .new_session(&v1::NewSessionRequest::new("/tmp"))
        .await
        .expect("session");
    let answer = within(
        "prompt",
        client.prompt(&v1::PromptRequest::new(
            session.session_id.clone(),
            vec![v1::ContentBlock::Text(v1::TextContent::new("hi"))],
        )),
    )
    .await
    .expect("prompt");
    assert_eq!(answer.stop_reason, v1::StopReason::EndTurn);
    let log = recorder.0.lock().expect("log").clone();
    assert_eq!(log[..3], ["hello", "typed", "world"]);
    assert!(
        log[3].starts_with("raw:") && log[3].contains("hologram"),
        "{log:?}"
    );
    assert_eq!(log[4], "permission");
}

#[tokio::test]
async fn typed_handlers_answer_method_not_found_by_default_and_bad_params_get_invalid_params() {
    let (client, _agent, session) = with_session(Recorder::default()).await;
    let err = client
        .set_session_mode(&v1::SetSessionModeRequest::new(
            session.session_id.clone(),
            "fast",
        ))
        .await
        .expect_err("not implemented");
    assert_eq!(err.rpc_code(), Some(-32601));
    // Wrong type for a field the typed model needs: -32602 from the decoder.
    let err = client
        .acp()
        .request_json(
            "session/prompt",
            &json!({"sessionId": session.session_id, "prompt": [{"type": "text", "text": 5}]}),
        )
        .await
        .expect_err("invalid");
    assert_eq!(err.rpc_code(), Some(-32602));
}

/// Params nested past the decoder's depth limit (a `_meta` 100k levels
/// deep) get `-32602` naming the limit, not wherever the decoder stopped.
#[tokio::test]
async fn params_nested_too_deep_get_invalid_params_naming_the_limit() {
    let (tc, ta) = Transport::memory_pair();
    let client = ClientConnection::start(tc, Recorder::default(), AcpOptions::default());
    let _agent = AgentConnection::start(ta, EchoAgent, AcpOptions::default());
    client
        .initialize(&v1::InitializeRequest::new(v1::ProtocolVersion::V1))
        .await
        .expect("init");
    let n = 100_000;
    let meta = format!("{}1{}", "{\"a\":".repeat(n), "}".repeat(n));
    let params = format!(r#"{{"cwd":"/tmp","mcpServers":[],"_meta":{meta}}}"#);
    let params = libacp_core::RawValue::from_string(params).expect("raw json");
    let err = client
        .acp()
        .request("session/new", Some(params))
        .await
        .expect_err("too deep");
    assert_eq!(err.rpc_code(), Some(-32602), "{err:?}");
    assert!(
        format!("{err:?}").contains("deeper than 128 levels"),
        "{err:?}"
    );
}

/// Refuses permission requests with the errors given, in turn.
struct RefusingClient(Mutex<Vec<RpcError>>);

impl Client for RefusingClient {
    async fn request_permission(
        &self,
        _cx: RequestContext<ClientConnection>,
        _args: v1::RequestPermissionRequest,
    ) -> Result<v1::RequestPermissionResponse, RpcError> {
        Err(self.0.lock().expect("refusals").remove(0))
    }
}

/// A nested call's error that escapes a typed handler through `?` (the
/// `From<CallError> for RpcError` conversion) answers the request
/// unchanged: the client's `-32601` refusing the permission request is the
/// prompt's answer, with the client's message and data, not a `-32601` for
/// `session/prompt`.
#[tokio::test]
async fn a_nested_error_escaping_a_typed_handler_is_answered_unchanged() {
    let refusals = vec![
        RpcError::new(-32601, "probe: not supported").with_data(json!({"probe": true})),
        RpcError::new(-32601, "no data"),
        RpcError::method_not_found("session/request_permission"),
        RpcError::new(-32000, "auth").with_data(json!({"authMethods": []})),
    ];
    let (client, _agent, session) =
        with_session(RefusingClient(Mutex::new(refusals.clone()))).await;
    for refusal in refusals {
        let err = within(
            "prompt",
            client.prompt(&v1::PromptRequest::new(
                session.session_id.clone(),
                vec![v1::ContentBlock::Text(v1::TextContent::new("hi"))],
            )),
        )
        .await
        .expect_err("the refusal escapes the prompt handler");
        assert_eq!(err, libacp_core::CallError::Rpc(refusal));
    }
}
