//! Proxy chains (unstable `proxy_chains`): a typed conductor (a client)
//! initializes a typed proxy (an agent) with `proxy/initialize`; the proxy
//! forwards `initialize`, `session/new` and an enriched prompt to its
//! successor through `proxy/successor`, which the conductor delivers to the
//! final agent. `proxy/initialize` follows the rules of `initialize`.

use std::sync::Arc;

use libacp_core::protocol::unstable::{Feature, Features};
use libacp_core::v1;
use libacp_core::{
    AcpOptions, Agent, AgentConnection, CallError, Client, ClientConnection, FnHandler, Refusal,
    RequestContext, RpcError, Transport,
};
use libacp_tests::{acp_agent_raw, acp_client_raw_with, raw, within};
use serde_json::{Value, json};

fn proxy_chains() -> AcpOptions {
    AcpOptions {
        unstable: Features::NONE.with(Feature::ProxyChains),
        ..AcpOptions::default()
    }
}

fn internal(e: impl std::fmt::Display) -> RpcError {
    RpcError::internal_error(e.to_string())
}

/// The last agent of the chain: answers the prompt with what it got.
struct FinalAgent;

impl Agent for FinalAgent {
    async fn initialize(
        &self,
        _cx: RequestContext<AgentConnection>,
        _args: v1::InitializeRequest,
    ) -> Result<v1::InitializeResponse, RpcError> {
        Ok(v1::InitializeResponse::new(v1::ProtocolVersion::V1)
            .agent_capabilities(v1::AgentCapabilities::new().load_session(true)))
    }

    async fn new_session(
        &self,
        _cx: RequestContext<AgentConnection>,
        _args: v1::NewSessionRequest,
    ) -> Result<v1::NewSessionResponse, RpcError> {
        Ok(v1::NewSessionResponse::new("final-1"))
    }

    async fn prompt(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::PromptRequest,
    ) -> Result<v1::PromptResponse, RpcError> {
        let text = match args.prompt.first() {
            Some(v1::ContentBlock::Text(t)) => t.text.clone(),
            _ => String::new(),
        };
        let mut answer = v1::PromptResponse::new(v1::StopReason::EndTurn);
        answer.meta = json!({"heard": text}).as_object().cloned();
        Ok(answer)
    }
}

/// A proxy: forwards everything to its successor, prompts enriched.
struct Enricher;

impl Enricher {
    async fn forward<T: serde::de::DeserializeOwned>(
        cx: &RequestContext<AgentConnection>,
        method: &str,
        params: &impl serde::Serialize,
    ) -> Result<T, RpcError> {
        let params = Arc::from(raw(serde_json::to_value(params).map_err(internal)?));
        let answer = cx
            .connection
            .proxy_successor(&v1::ProxySuccessorRequest::new(method).params(Some(params)))
            .await
            .map_err(internal)?;
        serde_json::from_str(answer.0.get()).map_err(internal)
    }
}

impl Agent for Enricher {
    async fn initialize(
        &self,
        _cx: RequestContext<AgentConnection>,
        _args: v1::InitializeRequest,
    ) -> Result<v1::InitializeResponse, RpcError> {
        Err(RpcError::invalid_request(
            "this proxy expects proxy/initialize",
        ))
    }

    async fn proxy_initialize(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::InitializeProxyRequest,
    ) -> Result<v1::InitializeProxyResponse, RpcError> {
        let successor: v1::InitializeResponse =
            Self::forward(&cx, "initialize", &args.initialize).await?;
        Ok(v1::InitializeProxyResponse::new(successor))
    }

    async fn new_session(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::NewSessionRequest,
    ) -> Result<v1::NewSessionResponse, RpcError> {
        Self::forward(&cx, "session/new", &args).await
    }

    async fn prompt(
        &self,
        cx: RequestContext<AgentConnection>,
        mut args: v1::PromptRequest,
    ) -> Result<v1::PromptResponse, RpcError> {
        args.prompt
            .push(v1::ContentBlock::Text(v1::TextContent::new(
                "(with context)",
            )));
        if let Some(v1::ContentBlock::Text(t)) = args.prompt.first_mut() {
            t.text.push_str(" [enriched]");
        }
        Self::forward(&cx, "session/prompt", &args).await
    }
}

/// The conductor: delivers what the proxy forwards to the final agent.
struct Conductor {
    successor: ClientConnection,
}

impl Client for Conductor {
    async fn request_permission(
        &self,
        _cx: RequestContext<ClientConnection>,
        _args: v1::RequestPermissionRequest,
    ) -> Result<v1::RequestPermissionResponse, RpcError> {
        Err(RpcError::method_not_found("session/request_permission"))
    }

    async fn proxy_successor(
        &self,
        _cx: RequestContext<ClientConnection>,
        args: v1::ProxySuccessorRequest,
    ) -> Result<v1::ProxySuccessorResponse, RpcError> {
        let params = args
            .params
            .map(|p| raw(serde_json::from_str::<Value>(p.get()).unwrap_or(Value::Null)));
        let result = self
            .successor
            .acp()
            .request(&args.method, params)
            .await
            .map_err(|e| match e {
                CallError::Rpc(e) => e,
                other => internal(other),
            })?;
        Ok(v1::ProxySuccessorResponse::new(Arc::from(result)))
    }
}

/// A client that never gets requests (the conductor's side of the final
/// agent's connection, where the final agent asks nothing).
struct Quiet;

impl Client for Quiet {
    async fn request_permission(
        &self,
        _cx: RequestContext<ClientConnection>,
        _args: v1::RequestPermissionRequest,
    ) -> Result<v1::RequestPermissionResponse, RpcError> {
        Err(RpcError::method_not_found("session/request_permission"))
    }
}

#[tokio::test]
async fn a_typed_proxy_forwards_through_its_conductor_to_the_final_agent() {
    let (to_final, final_end) = Transport::memory_pair();
    let _final = AgentConnection::start(final_end, FinalAgent, AcpOptions::default());
    let successor = ClientConnection::start(to_final, Quiet, AcpOptions::default());
    let (to_proxy, proxy_end) = Transport::memory_pair();
    let _proxy = AgentConnection::start(proxy_end, Enricher, proxy_chains());
    let conductor = ClientConnection::start(to_proxy, Conductor { successor }, proxy_chains());

    let init = within(
        "proxy/initialize",
        conductor.proxy_initialize(&v1::InitializeProxyRequest::new(
            v1::InitializeRequest::new(v1::ProtocolVersion::V1),
        )),
    )
    .await
    .expect("proxy/initialize");
    // The chain's capabilities: the final agent's, as the proxy passed them.
    assert!(init.initialize.agent_capabilities.load_session);
    // proxy/initialize was this connection's initialize.
    let again = conductor
        .initialize(&v1::InitializeRequest::new(v1::ProtocolVersion::V1))
        .await;
    assert!(
        matches!(again, Err(CallError::Refused(Refusal::AlreadyInitialized))),
        "{again:?}"
    );
    let session = conductor
        .new_session(&v1::NewSessionRequest::new("/tmp"))
        .await
        .expect("session/new through the proxy");
    assert_eq!(session.session_id.to_string(), "final-1");
    let answer = within(
        "prompt",
        conductor.prompt(&v1::PromptRequest::new(
            session.session_id,
            vec![v1::ContentBlock::Text(v1::TextContent::new("fix it"))],
        )),
    )
    .await
    .expect("prompt through the proxy");
    assert_eq!(answer.meta.expect("meta")["heard"], "fix it [enriched]");
}

/// An agent that got `proxy/initialize` refuses `initialize` as after
/// `initialize`; without the feature, `proxy/initialize` is an extension
/// method (the connection stays uninitialized).
#[tokio::test]
async fn proxy_initialize_is_initialize_only_with_the_feature() {
    let host = FnHandler::new()
        .on_request(|_r| async move { Ok(json!({"protocolVersion": 1, "agentCapabilities": {}})) });
    let (_conn, mut peer) = acp_agent_raw(host, proxy_chains());
    peer.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "proxy/initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}}),
    )
    .await;
    assert_eq!(peer.expect().await["result"]["protocolVersion"], 1);
    peer.send(json!({"jsonrpc": "2.0", "id": 2, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}}))
        .await;
    assert_eq!(peer.expect().await["error"]["code"], -32600);

    let host = FnHandler::new()
        .on_request(|_r| async move { Ok(json!({"protocolVersion": 1, "agentCapabilities": {}})) });
    let (_conn, mut peer) = acp_agent_raw(host, AcpOptions::default());
    peer.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "proxy/initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}}),
    )
    .await;
    peer.expect().await;
    peer.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
        "params": {"cwd": "/w", "mcpServers": []}}))
        .await;
    let refused = peer.expect().await;
    assert_eq!(refused["id"], 2, "{refused}");
    assert!(refused["error"].is_object(), "not initialized: {refused}");
}

/// `proxy/successor`'s result is the successor's, unchanged: a `null`
/// stays `null` both ways (every other ACP result is an object, where a
/// `null` reads as `{}`).
#[tokio::test]
async fn a_null_successor_result_passes_through_unchanged() {
    // The proxy answers the conductor's proxy/successor with null.
    let host = FnHandler::new().on_request(|r| async move {
        Ok(match r.method.as_str() {
            "proxy/initialize" => json!({"protocolVersion": 1, "agentCapabilities": {}}),
            _ => Value::Null,
        })
    });
    let (_conn, mut conductor) = acp_agent_raw(host, proxy_chains());
    conductor
        .send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "proxy/initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}}}),
        )
        .await;
    assert_eq!(conductor.expect().await["result"]["protocolVersion"], 1);
    conductor
        .send(
            json!({"jsonrpc": "2.0", "id": 2, "method": "proxy/successor",
            "params": {"method": "_vendor/ping", "params": {}}}),
        )
        .await;
    let answer = conductor.expect().await;
    assert_eq!(answer["id"], 2, "{answer}");
    assert!(answer.get("result").is_some_and(Value::is_null), "{answer}");

    // The conductor gets null from the proxy it asked.
    let host = FnHandler::new().on_request(|_r| async move { Ok(Value::Null) });
    let (conn, mut proxy) = acp_client_raw_with(host, proxy_chains());
    let init = tokio::spawn({
        let conn = conn.clone();
        async move {
            conn.request(
                "proxy/initialize",
                Some(raw(json!({"protocolVersion": 1, "clientCapabilities": {}}))),
            )
            .await
        }
    });
    let req = proxy.expect().await;
    proxy
        .send(json!({"jsonrpc": "2.0", "id": req["id"], "result": {"protocolVersion": 1, "agentCapabilities": {}}}))
        .await;
    within("proxy/initialize", init)
        .await
        .expect("join")
        .expect("proxy/initialize");
    let call = tokio::spawn({
        let conn = conn.clone();
        async move {
            conn.request(
                "proxy/successor",
                Some(raw(json!({"method": "_vendor/ping", "params": {}}))),
            )
            .await
        }
    });
    let req = proxy.expect().await;
    assert_eq!(req["method"], "proxy/successor", "{req}");
    proxy
        .send(json!({"jsonrpc": "2.0", "id": req["id"], "result": null}))
        .await;
    let result = within("proxy/successor", call)
        .await
        .expect("join")
        .expect("proxy/successor");
    assert_eq!(result.get(), "null");
}

/// While the proxy answers `proxy/initialize`, its `proxy/successor`
/// notifications reach the conductor's host, as its requests do.
#[tokio::test]
async fn a_conductor_takes_successor_notifications_during_proxy_initialize() {
    let (seen_tx, mut seen) = tokio::sync::mpsc::unbounded_channel();
    let host = FnHandler::new()
        .on_request(|_r| async move { Ok(Value::Null) })
        .on_notification(move |n| {
            let seen_tx = seen_tx.clone();
            async move {
                let _ = seen_tx.send((n.method, n.params.map(|p| p.get().to_owned())));
            }
        });
    let (conn, mut proxy) = acp_client_raw_with(host, proxy_chains());
    let init = tokio::spawn({
        let conn = conn.clone();
        async move {
            conn.request(
                "proxy/initialize",
                Some(raw(json!({"protocolVersion": 1, "clientCapabilities": {}}))),
            )
            .await
        }
    });
    let req = proxy.expect().await;
    proxy
        .send(json!({"jsonrpc": "2.0", "method": "proxy/successor",
            "params": {"method": "_vendor/hello", "params": {"n": 1}}}))
        .await;
    let (method, params) = within("the notification", seen.recv())
        .await
        .expect("delivered");
    assert_eq!(method, "proxy/successor");
    let params: Value = serde_json::from_str(&params.expect("params")).expect("json");
    assert_eq!(params["method"], "_vendor/hello");
    proxy
        .send(json!({"jsonrpc": "2.0", "id": req["id"], "result": {"protocolVersion": 1, "agentCapabilities": {}}}))
        .await;
    within("proxy/initialize", init)
        .await
        .expect("join")
        .expect("proxy/initialize");
}
