//! The Streamable HTTP client: `http://` and `https://`.
//!
//! What the engine writes goes out as one POST per message, in order (the
//! next POST leaves once the previous one was accepted, so the server sees
//! the engine's order). `initialize` is answered in its POST's body (200,
//! with `Acp-Connection-Id`); everything else the server sends arrives on
//! GET event streams: the connection-scoped stream, opened right after
//! `initialize`, and one stream per session, opened before the session's
//! messages can flow (before the `session/new` or `session/fork` answer is
//! handed to the engine, before a `session/load` or `session/resume` is
//! posted). Closing sends `DELETE`.
//!
//! Headers: `Acp-Connection-Id` on everything after `initialize`;
//! `Acp-Session-Id` on every session-scoped POST (a request or
//! notification whose params name a session, and an answer to a request
//! that came on a session's stream), as the RFD requires (the Rust crate's
//! client sends none on answers, and the TypeScript server refuses those
//! with 400); `Acp-Protocol-Version` after `initialize`; cookies the server
//! set, kept for the connection's lifetime (the RFD's MUST; the Rust
//! crate's client keeps none); the host's extra headers on every request.
//!
//! HTTP/2 when TLS's ALPN picks it, or on plain TCP with
//! `http2_prior_knowledge`; HTTP/1.1 otherwise (one connection for the
//! POSTs, one per event stream), since the TypeScript SDK's server speaks
//! HTTP/1.1 only.
//!
//! **Ordering.** Messages of one stream reach the engine in the stream's
//! order. A `session/load` or `session/resume` answer that arrives on the
//! connection stream (the TypeScript server sends it there, while the
//! replayed history goes on the session stream) is held until the
//! session's stream has delivered everything the server sent on it before
//! the answer, so a client's `load` returns after the replay, as on stdio.
//! The transport learns that with a probe ([`barrier`]): a request of its
//! own (`_libacp/barrier`, an extension method any agent answers, if only
//! with `-32601`) posted on the session; its answer comes on the session's
//! stream after everything the agent wrote there before, and is not handed
//! to the engine.
//!
//! **Failures.** 401, 403 and 404 on any request, a failed POST, or the end
//! of the connection stream end the connection with a typed
//! [`RemoteError`]. Another refusal of a request's POST (400, 413, 415,
//! 5xx) answers that request with a JSON-RPC error naming the status; the
//! connection goes on.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use http::header::{ACCEPT, CONTENT_TYPE, COOKIE, HOST, SET_COOKIE};
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio_util::sync::CancellationToken;

use super::dial::{self, Target};
use super::pipe::{self, Inbound, Outbound};
use super::route::{self, Kind};
use super::{
    CONNECTION_ID_HEADER, ClientOptions, PROTOCOL_VERSION_HEADER, PROTOCOL_VERSIONS, RemoteError,
    RemoteErrorKind, SESSION_ID_HEADER,
};
use crate::rpc::lock;
use crate::transport::Transport;

type Body = Full<Bytes>;

/// How long the `DELETE` that ends a connection may take.
const DELETE_TIMEOUT: Duration = Duration::from_secs(2);

/// Largest error body read from a refused POST.
const ERROR_BODY: usize = 64 * 1024;

/// One HTTP connection to send requests on.
#[derive(Clone)]
enum Lane {
    H1(Arc<tokio::sync::Mutex<http1::SendRequest<Body>>>),
    H2(http2::SendRequest<Body>),
}

impl Lane {
    /// Sends `request`, whose URI is absolute: HTTP/1.1 puts only its path
    /// and query on the request line (origin form, RFC 9112 3.2.1; the
    /// `Host` header names the server), HTTP/2 takes the scheme and
    /// authority from it.
    async fn send(&self, mut request: Request<Body>) -> Result<Response<Incoming>, hyper::Error> {
        match self {
            Self::H1(send) => {
                if let Some(origin) = request
                    .uri()
                    .path_and_query()
                    .and_then(|p| p.as_str().parse::<http::Uri>().ok())
                {
                    *request.uri_mut() = origin;
                }
                let mut send = send.lock().await;
                send.ready().await?;
                send.send_request(request).await
            }
            Self::H2(send) => {
                let mut send = send.clone();
                send.ready().await?;
                send.send_request(request).await
            }
        }
    }
}

/// Opens an HTTP connection: HTTP/2 if ALPN chose it (or prior knowledge
/// on plain TCP was asked for), HTTP/1.1 otherwise.
async fn open_lane(target: &Target, options: &ClientOptions) -> Result<Lane, RemoteError> {
    let stream = dial::dial(target, options, &[b"h2", b"http/1.1"]).await?;
    let h2 = stream.alpn_h2() || (!target.tls && options.http2_prior_knowledge);
    let io = TokioIo::new(stream);
    let failed = |e: hyper::Error| {
        RemoteError::new(
            RemoteErrorKind::Http,
            format!("HTTP handshake with {} failed: {e}", target.authority()),
        )
    };
    let handshake = async {
        if h2 {
            let (send, conn) = http2::Builder::new(TokioExecutor::new())
                .handshake(io)
                .await
                .map_err(failed)?;
            tokio::spawn(conn);
            Ok(Lane::H2(send))
        } else {
            let (send, conn) = http1::handshake(io).await.map_err(failed)?;
            tokio::spawn(conn);
            Ok(Lane::H1(Arc::new(tokio::sync::Mutex::new(send))))
        }
    };
    tokio::time::timeout(options.handshake_timeout, handshake)
        .await
        .map_err(|_| {
            RemoteError::new(
                RemoteErrorKind::Timeout,
                format!("the HTTP handshake with {} timed out", target.authority()),
            )
        })?
}

/// What the client's tasks share.
struct Shared {
    target: Target,
    options: ClientOptions,
    /// The POSTs' connection (reopened once if the server closed it).
    post_lane: tokio::sync::Mutex<Option<Lane>>,
    h2: Mutex<bool>,
    connection_id: Mutex<Option<String>>,
    protocol_version: Mutex<Option<String>>,
    jar: Mutex<cookie_store::CookieStore>,
    inbound: Inbound,
    /// Sessions whose stream is open or opening.
    streams: tokio::sync::Mutex<HashSet<String>>,
    /// Requests from the server: id to the session of the stream it came on
    /// (where its answer is scoped).
    asked_on: Mutex<HashMap<String, Option<String>>>,
    /// Requests of ours in flight: id to method and the session its
    /// params name.
    methods: Mutex<HashMap<String, (String, Option<String>)>>,
    /// Barrier probes in flight: id to the waiting answer.
    probes: Mutex<HashMap<String, tokio::sync::oneshot::Sender<()>>>,
    next_probe: std::sync::atomic::AtomicU64,
    stop: CancellationToken,
}

pub(crate) async fn connect(
    target: &Target,
    options: &ClientOptions,
) -> Result<Transport, RemoteError> {
    // Connect now, so that DNS, refused and TLS failures are the connect's.
    let lane = open_lane(target, options).await?;
    let h2 = matches!(lane, Lane::H2(_));
    let (transport, inbound, outbound) = pipe::pipe(options.queue);
    let shared = Arc::new(Shared {
        target: target.clone(),
        options: options.clone(),
        post_lane: tokio::sync::Mutex::new(Some(lane)),
        h2: Mutex::new(h2),
        connection_id: Mutex::new(None),
        protocol_version: Mutex::new(None),
        jar: Mutex::new(cookie_store::CookieStore::default()),
        inbound,
        streams: tokio::sync::Mutex::new(HashSet::new()),
        asked_on: Mutex::new(HashMap::new()),
        methods: Mutex::new(HashMap::new()),
        probes: Mutex::new(HashMap::new()),
        next_probe: std::sync::atomic::AtomicU64::new(0),
        stop: CancellationToken::new(),
    });
    tokio::spawn(run_outgoing(shared, outbound));
    Ok(transport)
}

/// Posts what the engine writes, in order; ends the connection when the
/// engine closes (`DELETE`) or a POST fails for good.
async fn run_outgoing(shared: Arc<Shared>, mut outbound: Outbound) {
    loop {
        let message = tokio::select! {
            m = outbound.recv() => m,
            () = shared.stop.cancelled() => None,
        };
        let Some(message) = message else { break };
        if let Err(e) = send(&shared, message).await {
            shared.stop.cancel();
            shared.inbound.fail(e).await;
            break;
        }
    }
    shared.stop.cancel();
    delete(&shared).await;
}

/// Sends one message from the engine.
async fn send(shared: &Arc<Shared>, message: Bytes) -> Result<(), RemoteError> {
    let peeked = route::peek(&message);
    let Some(p) = peeked else {
        return post(shared, message, None, None).await;
    };
    match p.kind {
        Kind::Request
            if p.method
                .as_deref()
                .is_some_and(crate::protocol::methods::is_initialize)
                && !shared.has_connection() =>
        {
            initialize(shared, message).await
        }
        Kind::Request => {
            let method = p.method.clone().unwrap_or_default();
            if let Some(id) = &p.id {
                lock(&shared.methods).insert(id.clone(), (method.clone(), p.session.clone()));
            }
            if matches!(method.as_str(), "session/load" | "session/resume")
                && let Some(session) = &p.session
            {
                ensure_stream(shared, session).await?;
            }
            post(shared, message, p.session.as_deref(), p.id.as_deref()).await
        }
        Kind::Notification => post(shared, message, p.session.as_deref(), None).await,
        Kind::Response => {
            let scope =
                p.id.as_ref()
                    .and_then(|id| lock(&shared.asked_on).remove(id))
                    .flatten();
            post(shared, message, scope.as_deref(), None).await
        }
    }
}

impl Shared {
    fn has_connection(&self) -> bool {
        lock(&self.connection_id).is_some()
    }

    /// A request to the endpoint with every header this connection sends.
    fn request(&self, method: Method, session: Option<&str>, body: Bytes) -> Request<Body> {
        let mut builder = Request::builder()
            .method(method)
            .uri(self.uri())
            .header(HOST, self.target.authority());
        if let Some(id) = lock(&self.connection_id).as_deref() {
            builder = builder.header(CONNECTION_ID_HEADER, id);
        }
        if let Some(session) = session {
            builder = builder.header(SESSION_ID_HEADER, session);
        }
        if let Some(v) = lock(&self.protocol_version).as_deref() {
            builder = builder.header(PROTOCOL_VERSION_HEADER, v);
        }
        let cookies: Vec<String> = lock(&self.jar)
            .get_request_values(&self.target.url)
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        if !cookies.is_empty() {
            builder = builder.header(COOKIE, cookies.join("; "));
        }
        for (name, value) in &self.options.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        let request = builder.body(Full::new(body));
        // Every part was checked when the connection was made, but a header
        // value from the host may still be refused here: send it without.
        request.unwrap_or_else(|_| Request::new(Full::new(Bytes::new())))
    }

    fn uri(&self) -> String {
        let scheme = if self.target.tls { "https" } else { "http" };
        format!(
            "{scheme}://{}{}",
            self.target.authority(),
            self.target.path_and_query()
        )
    }

    /// Keeps the cookies of a response.
    fn keep_cookies<B>(&self, response: &Response<B>) {
        let mut jar = lock(&self.jar);
        for value in response.headers().get_all(SET_COOKIE) {
            if let Ok(text) = value.to_str() {
                let _ = jar.parse(text, &self.target.url);
            }
        }
    }

    /// Sends on the POST lane, reopening it once if the server had closed
    /// it (an idle keep-alive connection).
    async fn send_post(
        &self,
        request: impl Fn() -> Request<Body>,
    ) -> Result<Response<Incoming>, RemoteError> {
        let mut lane = self.post_lane.lock().await;
        for attempt in 0..2 {
            if lane.is_none() {
                let fresh = open_lane(&self.target, &self.options).await?;
                *lock(&self.h2) = matches!(fresh, Lane::H2(_));
                *lane = Some(fresh);
            }
            let Some(current) = lane.as_ref() else {
                continue;
            };
            match current.send(request()).await {
                Ok(response) => {
                    self.keep_cookies(&response);
                    return Ok(response);
                }
                Err(e) if attempt == 0 && (e.is_closed() || e.is_canceled()) => *lane = None,
                Err(e) => {
                    return Err(RemoteError::new(
                        RemoteErrorKind::Io,
                        format!("POST to {} failed: {e}", self.uri()),
                    ));
                }
            }
        }
        Err(RemoteError::new(
            RemoteErrorKind::Io,
            format!(
                "POST to {} failed: the server closed the connection",
                self.uri()
            ),
        ))
    }

    /// A lane for a new event stream: the POST lane over HTTP/2, a
    /// connection of its own over HTTP/1.1.
    async fn stream_lane(&self) -> Result<Lane, RemoteError> {
        let h2 = *lock(&self.h2);
        if h2 && let Some(lane) = self.post_lane.lock().await.as_ref() {
            return Ok(lane.clone());
        }
        open_lane(&self.target, &self.options).await
    }
}

/// Reads a refused response's body (bounded) as text.
async fn error_body(response: Response<Incoming>) -> String {
    match Limited::new(response.into_body(), ERROR_BODY)
        .collect()
        .await
    {
        Ok(body) => String::from_utf8_lossy(&body.to_bytes()).into_owned(),
        Err(_) => String::new(),
    }
}

/// `initialize`: the POST that makes the connection; its answer is the
/// body. The connection stream is open before the answer is handed on.
async fn initialize(shared: &Arc<Shared>, message: Bytes) -> Result<(), RemoteError> {
    let response = shared
        .send_post(|| {
            let mut r = shared.request(Method::POST, None, message.clone());
            set_post_headers(&mut r);
            r
        })
        .await?;
    let status = response.status();
    if status != StatusCode::OK {
        let body = error_body(response).await;
        return Err(RemoteError::status(
            status.as_u16(),
            "initialize was refused",
            &body,
        ));
    }
    let id = response
        .headers()
        .get(CONNECTION_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .ok_or_else(|| {
            RemoteError::new(
                RemoteErrorKind::Http,
                format!(
                    "{} answered initialize without Acp-Connection-Id",
                    shared.uri()
                ),
            )
        })?;
    let limit = shared.options.max_message_size;
    let body = match Limited::new(response.into_body(), limit).collect().await {
        Ok(body) => body.to_bytes(),
        Err(e) => {
            return Err(RemoteError::new(
                RemoteErrorKind::Io,
                format!("reading the initialize answer failed: {e}"),
            ));
        }
    };
    *lock(&shared.connection_id) = Some(id);
    // Sent on what follows only when the transport serves that version: a
    // version the client is about to refuse is the engine's to report.
    if let Some(version) =
        protocol_version(&body).filter(|v| PROTOCOL_VERSIONS.contains(&v.as_str()))
    {
        *lock(&shared.protocol_version) = Some(version);
    }
    open_stream(shared, None).await?;
    shared.inbound.send(&body).await;
    Ok(())
}

/// `result.protocolVersion` of an `initialize` answer.
fn protocol_version(body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    match value.get("result")?.get("protocolVersion")? {
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

fn set_post_headers(request: &mut Request<Body>) {
    let headers = request.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    headers.insert(
        ACCEPT,
        http::HeaderValue::from_static("application/json, text/event-stream"),
    );
}

/// Posts one message. A refused request is answered with an error; 401,
/// 403, 404 and transport failures end the connection.
async fn post(
    shared: &Arc<Shared>,
    message: Bytes,
    session: Option<&str>,
    request_id: Option<&str>,
) -> Result<(), RemoteError> {
    let response = shared
        .send_post(|| {
            let mut r = shared.request(Method::POST, session, message.clone());
            set_post_headers(&mut r);
            r
        })
        .await?;
    let status = response.status();
    if status.is_success() {
        // Some servers answer in the POST's body; take it as a message.
        let json = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        if json {
            let limit = shared.options.max_message_size;
            if let Ok(body) = Limited::new(response.into_body(), limit).collect().await {
                let body = body.to_bytes();
                if !body.iter().all(u8::is_ascii_whitespace) {
                    shared.inbound.send(&body).await;
                }
            }
        }
        return Ok(());
    }
    let code = status.as_u16();
    let body = error_body(response).await;
    if matches!(code, 401 | 403 | 404) {
        return Err(RemoteError::status(
            code,
            "the server refused a POST",
            &body,
        ));
    }
    // A JSON-RPC error in the refusal is the server's answer: for this
    // request, or (id null) for a message it could not read.
    if let Some(answer) = error_answer(&body, request_id) {
        if let Some(id) = request_id {
            lock(&shared.methods).remove(id);
        }
        shared.inbound.send(answer.as_bytes()).await;
        return Ok(());
    }
    let Some(id) = request_id else {
        // A refused notification or answer: nobody waits for it.
        return Ok(());
    };
    lock(&shared.methods).remove(id);
    let cut: String = body.chars().take(500).collect();
    let answer = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32603,"message":"the server refused the request: HTTP {code}","data":{{"status":{code},"body":{}}}}}}}"#,
        serde_json::Value::String(cut)
    );
    shared.inbound.send(answer.as_bytes()).await;
    Ok(())
}

/// `body` if it is a JSON-RPC error answering `request_id`, or with id null.
fn error_answer<'a>(body: &'a str, request_id: Option<&str>) -> Option<&'a str> {
    let p = route::peek(body.as_bytes())?;
    let is_error = body.contains("\"error\"");
    match (p.kind, p.id.as_deref(), request_id) {
        (Kind::Response, None, _) if is_error => Some(body),
        (Kind::Response, Some(id), Some(want)) if is_error && id == want => Some(body),
        _ => None,
    }
}

/// Opens `session`'s stream unless it is open or opening. (Boxed: a
/// stream's reader opens streams, whose readers open streams.)
fn ensure_stream<'a>(
    shared: &'a Arc<Shared>,
    session: &'a str,
) -> crate::rpc::BoxFuture<'a, Result<(), RemoteError>> {
    Box::pin(async move {
        let mut streams = shared.streams.lock().await;
        if streams.contains(session) {
            return Ok(());
        }
        open_stream(shared, Some(session)).await?;
        streams.insert(session.to_owned());
        Ok(())
    })
}

/// Opens the connection stream (`None`) or a session's stream, and returns
/// once the server accepted it; a task then reads it.
async fn open_stream(shared: &Arc<Shared>, session: Option<&str>) -> Result<(), RemoteError> {
    let lane = shared.stream_lane().await?;
    let mut request = shared.request(Method::GET, session, Bytes::new());
    request
        .headers_mut()
        .insert(ACCEPT, http::HeaderValue::from_static("text/event-stream"));
    let response = lane.send(request).await.map_err(|e| {
        RemoteError::new(
            RemoteErrorKind::Io,
            format!("opening the event stream at {} failed: {e}", shared.uri()),
        )
    })?;
    shared.keep_cookies(&response);
    let status = response.status();
    if status != StatusCode::OK {
        let body = error_body(response).await;
        let what = match session {
            Some(s) => format!("the event stream of session {s} was refused"),
            None => "the connection's event stream was refused".to_owned(),
        };
        return Err(RemoteError::status(status.as_u16(), &what, &body));
    }
    let task = read_stream(
        Arc::clone(shared),
        session.map(str::to_owned),
        response.into_body(),
        lane,
    );
    tokio::spawn(task);
    Ok(())
}

/// Reads one event stream until it ends or the connection stops. `_lane`
/// keeps an HTTP/1.1 stream's connection open.
async fn read_stream(shared: Arc<Shared>, session: Option<String>, body: Incoming, _lane: Lane) {
    let limit = shared.options.max_message_size;
    let mut events = body.into_data_stream().eventsource();
    let end = loop {
        let next = tokio::select! {
            next = events.next() => next,
            () = shared.stop.cancelled() => return,
        };
        match next {
            Some(Ok(event)) => {
                if event.data.is_empty() {
                    continue;
                }
                if event.data.len() > limit {
                    break Some(format!(
                        "an event of {} bytes exceeds the limit of {limit}",
                        event.data.len()
                    ));
                }
                if let Err(e) = deliver(&shared, session.as_deref(), event.data.into_bytes()).await
                {
                    shared.stop.cancel();
                    shared.inbound.fail(e).await;
                    return;
                }
            }
            Some(Err(e)) => break Some(format!("reading the event stream failed: {e}")),
            None => break None,
        }
    };
    if shared.stop.is_cancelled() {
        return;
    }
    // The connection stream ending means the server is gone; a session's
    // stream ending alone is left to the connection stream.
    if session.is_none() || end.is_some() {
        let why = end.unwrap_or_else(|| "the server closed the connection's event stream".into());
        shared.stop.cancel();
        shared
            .inbound
            .fail(RemoteError::new(RemoteErrorKind::Io, why))
            .await;
    }
}

/// Hands one message from a stream to the engine, after what it needs
/// first: the stream of a session an answer creates.
async fn deliver(
    shared: &Arc<Shared>,
    stream: Option<&str>,
    message: Vec<u8>,
) -> Result<(), RemoteError> {
    if let Some(p) = route::peek(&message) {
        match p.kind {
            Kind::Request => {
                if let Some(id) = p.id {
                    let scope = stream.map(str::to_owned).or(p.session);
                    lock(&shared.asked_on).insert(id, scope);
                }
            }
            Kind::Response => {
                if let Some(probe) = p.id.as_ref().and_then(|id| lock(&shared.probes).remove(id)) {
                    let _ = probe.send(());
                    return Ok(()); // the transport's own: not the engine's
                }
                let asked =
                    p.id.as_ref()
                        .and_then(|id| lock(&shared.methods).remove(id));
                let (method, asked_session) = asked.unzip();
                match (method.as_deref(), &p.session, asked_session.flatten()) {
                    // The answer names the new session.
                    (Some("session/new" | "session/fork"), Some(session), _) => {
                        ensure_stream(shared, session).await?;
                    }
                    // The request named the session (the answer may be `{}`).
                    (Some("session/load" | "session/resume"), _, Some(session))
                        if stream.is_none() =>
                    {
                        barrier(shared, &session).await?;
                    }
                    _ => {}
                }
            }
            Kind::Notification => {}
        }
    }
    shared.inbound.send(&message).await;
    Ok(())
}

/// How long a barrier waits for its probe's answer before the held answer
/// is delivered anyway (a server that drops unknown requests).
const BARRIER_TIMEOUT: Duration = Duration::from_secs(5);

/// Returns once `session`'s stream has delivered what the server wrote on
/// it so far (see the module docs). The probe's answer is the transport's.
async fn barrier(shared: &Arc<Shared>, session: &str) -> Result<(), RemoteError> {
    let n = shared
        .next_probe
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let id = format!("\"libacp-barrier-{n}\"");
    let (tx, rx) = tokio::sync::oneshot::channel();
    lock(&shared.probes).insert(id.clone(), tx);
    let probe = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"_libacp/barrier","params":{{"sessionId":{}}}}}"#,
        serde_json::Value::String(session.to_owned())
    );
    let response = shared
        .send_post(|| {
            let mut r = shared.request(Method::POST, Some(session), Bytes::from(probe.clone()));
            set_post_headers(&mut r);
            r
        })
        .await?;
    if response.status().is_success() {
        let _ = tokio::time::timeout(BARRIER_TIMEOUT, rx).await;
    }
    lock(&shared.probes).remove(&id);
    Ok(())
}

/// Ends the connection on the server (best effort, bounded).
async fn delete(shared: &Arc<Shared>) {
    if !shared.has_connection() {
        return;
    }
    let request = || shared.request(Method::DELETE, None, Bytes::new());
    let _ = tokio::time::timeout(DELETE_TIMEOUT, shared.send_post(request)).await;
}
