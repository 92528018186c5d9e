//! The Streamable HTTP side of the endpoint: POST (client to agent), GET
//! event streams (agent to client), DELETE.
//!
//! **Routing what the agent sends.** A request or notification whose params
//! name a session goes on that session's stream once the client has opened
//! it, and on the connection stream before (so an update the agent sends
//! before its `session/new` answer arrives before the answer, and a message
//! for a session the client never opens still arrives); anything else goes
//! on the connection stream. An answer goes where the POST that asked was
//! scoped: its session's stream (`Acp-Session-Id`, or `params.sessionId`)
//! if the client opened it, else the connection stream; `session/new` and
//! `session/fork` answers go on the connection stream (the client does not
//! know the new session yet). Both official servers instead keep a
//! session's messages for its stream until it is opened; every client
//! takes a message on either stream. So a `session/load` or `session/resume`
//! answer follows the replayed history on the session's stream, as the
//! Rust crate's server does (the TypeScript server sends it on the
//! connection stream, which lets a client see it before the replay; the
//! libacp client makes up for that, see `http_client.rs`).
//!
//! **Queues.** Each stream buffers at most `queue` messages until a GET
//! reads them; then the router waits (the agent's writes wait with it). A
//! router that cannot hand a message on for `idle_timeout` closes the
//! connection (a client that never opens a session's stream, or stopped
//! reading).
//!
//! **Differences from the RFD and the official servers, each on purpose:**
//! * a batch is refused with 501, as the RFD says (both official servers
//!   answer 400);
//! * a GET for a session the connection has not seen is served (200), as
//!   both official servers do: the RFD's own reconnect flow opens the
//!   session's stream before `session/load` names the session;
//! * a second GET on a stream that is being read is refused with 409, as
//!   both official servers do;
//! * an answer to the agent's request without `Acp-Session-Id` is accepted
//!   and routed by its id (the Rust crate's client sends none); a request
//!   or notification that names a session without the header is refused
//!   with 400, as the RFD says;
//! * a POST body that is not JSON, with a valid `Acp-Connection-Id`, goes
//!   to the engine, which answers `-32700` on the connection stream (as on
//!   stdio, and as the Rust crate's server does);
//! * an `initialize` the agent answers with an error is returned with 200,
//!   the error body and `Acp-Connection-Id` (as the TypeScript server
//!   does); the client may `DELETE` it or let it idle out;
//! * event streams carry `X-Accel-Buffering: no` and `Cache-Control:
//!   no-cache`, so proxies pass events at once, and a keep-alive comment
//!   every `keepalive_interval`.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ::http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use bytes::Bytes;
use futures_util::stream;
use http_body_util::{BodyExt, Limited, StreamBody};
use hyper::body::{Frame, Incoming as Body};
use tokio::sync::{OwnedMutexGuard, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::{Live, ResponseBody, Shared, full, plain};
use crate::remote::pipe::{Inbound, Outbound};
use crate::remote::route::{self, Kind};
use crate::remote::{CONNECTION_ID_HEADER, RemoteKind, SESSION_ID_HEADER};
use crate::rpc::lock;

/// Session streams one connection may have; a GET for one more is 404.
const MAX_SESSION_STREAMS: usize = 1024;

/// The HTTP connections of a server, by `Acp-Connection-Id`.
#[derive(Default)]
pub(crate) struct Registry {
    conns: Mutex<HashMap<String, Arc<HttpConn>>>,
}

impl Registry {
    fn get(&self, id: &str) -> Option<Arc<HttpConn>> {
        lock(&self.conns).get(id).cloned()
    }
}

/// Where an answer goes.
#[derive(Debug, Clone)]
enum Scope {
    Connection,
    Session(String),
}

/// One stream's queue; a GET reads it while it holds `rx`.
struct StreamQueue {
    tx: mpsc::Sender<Bytes>,
    rx: Arc<tokio::sync::Mutex<mpsc::Receiver<Bytes>>>,
    /// A GET has opened it once.
    opened: std::sync::atomic::AtomicBool,
}

impl StreamQueue {
    fn new(capacity: usize) -> Arc<Self> {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        Arc::new(Self {
            tx,
            rx: Arc::new(tokio::sync::Mutex::new(rx)),
            opened: std::sync::atomic::AtomicBool::new(false),
        })
    }
}

struct HttpConn {
    id: String,
    live: Arc<Live>,
    /// Taken (so the engine's input ends) when the connection stops.
    inbound: Mutex<Option<Inbound>>,
    /// `None`: the connection stream; `Some(session)`: a session's.
    streams: Mutex<HashMap<Option<String>, Arc<StreamQueue>>>,
    /// The scope of each request of the client's in flight.
    routes: Mutex<HashMap<String, Scope>>,
    /// The `initialize` POST waiting for its answer.
    init: Mutex<Option<(String, oneshot::Sender<Bytes>)>>,
    last_active: Mutex<Instant>,
    /// Event streams being read now.
    reading: AtomicUsize,
    /// Ends every event stream.
    closed: CancellationToken,
}

impl HttpConn {
    fn inbound(&self) -> Option<Inbound> {
        lock(&self.inbound).clone()
    }

    fn touch(&self) {
        *lock(&self.last_active) = Instant::now();
    }

    fn stream(&self, session: Option<&str>, capacity: usize) -> Option<Arc<StreamQueue>> {
        let mut streams = lock(&self.streams);
        let key = session.map(str::to_owned);
        if let Some(q) = streams.get(&key) {
            return Some(Arc::clone(q));
        }
        if streams.len() > MAX_SESSION_STREAMS {
            return None;
        }
        let q = StreamQueue::new(capacity);
        streams.insert(key, Arc::clone(&q));
        Some(q)
    }

    /// The stream a session's message goes on: the session's if the client
    /// opened it, the connection's otherwise.
    fn answer_stream(&self, scope: Option<Scope>, capacity: usize) -> Option<Arc<StreamQueue>> {
        if let Some(Scope::Session(s)) = scope {
            let key = Some(s);
            if let Some(q) = lock(&self.streams).get(&key)
                && q.opened.load(Ordering::Relaxed)
            {
                return Some(Arc::clone(q));
            }
        }
        self.stream(None, capacity)
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

fn json_response(status: StatusCode, body: impl Into<Bytes>) -> Response<ResponseBody> {
    let mut response = Response::new(full(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

pub(super) async fn handle(
    shared: Arc<Shared>,
    request: Request<Body>,
    remote: SocketAddr,
) -> Response<ResponseBody> {
    match *request.method() {
        Method::POST => post(shared, request, remote).await,
        Method::GET => get(shared, request),
        Method::DELETE => delete(shared, request),
        _ => {
            let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "POST, GET or DELETE");
            r.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
            r
        }
    }
}

async fn post(
    shared: Arc<Shared>,
    request: Request<Body>,
    remote: SocketAddr,
) -> Response<ResponseBody> {
    let (parts, body) = request.into_parts();
    let json = header(&parts.headers, header::CONTENT_TYPE.as_str())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return plain(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json",
        );
    }
    let limit = shared.options.max_message_size;
    let declared =
        header(&parts.headers, header::CONTENT_LENGTH.as_str()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return too_large(limit);
    }
    let body = match Limited::new(body, limit).collect().await {
        Ok(body) => body.to_bytes(),
        Err(e)
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            return too_large(limit);
        }
        Err(_) => {
            return plain(
                StatusCode::BAD_REQUEST,
                "the request body could not be read",
            );
        }
    };
    if route::is_batch(&body) {
        return json_response(
            StatusCode::NOT_IMPLEMENTED,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: JSON-RPC batches are not supported"}}"#,
        );
    }
    let peeked = route::peek(&body);
    let is_initialize = peeked.as_ref().is_some_and(|p| {
        p.kind == Kind::Request
            && p.method
                .as_deref()
                .is_some_and(crate::protocol::methods::is_initialize)
    });
    let Some(conn_id) = header(&parts.headers, CONNECTION_ID_HEADER) else {
        if is_initialize {
            return initialize(shared, parts.headers, body, remote).await;
        }
        return without_connection(&body);
    };
    let Some(conn) = shared.http.get(conn_id) else {
        return plain(StatusCode::NOT_FOUND, "unknown Acp-Connection-Id");
    };
    if is_initialize {
        return plain(
            StatusCode::BAD_REQUEST,
            "initialize is not allowed on an existing connection",
        );
    }
    let header_session = header(&parts.headers, SESSION_ID_HEADER);
    if let Some(p) = &peeked {
        if p.kind != Kind::Response
            && let Some(session) = &p.session
        {
            match header_session {
                None => return plain(StatusCode::BAD_REQUEST, "Missing Acp-Session-Id"),
                Some(h) if h != session => {
                    return plain(StatusCode::BAD_REQUEST, "Mismatched Acp-Session-Id");
                }
                Some(_) => {}
            }
        }
        if let (Kind::Request, Some(id)) = (p.kind, &p.id) {
            let scope = match p.method.as_deref() {
                Some("session/new" | "session/fork") => Scope::Connection,
                _ => match header_session
                    .map(str::to_owned)
                    .or_else(|| p.session.clone())
                {
                    Some(s) => Scope::Session(s),
                    None => Scope::Connection,
                },
            };
            lock(&conn.routes).insert(id.clone(), scope);
            conn.live.asked(id);
        }
    }
    conn.touch();
    let Some(inbound) = conn.inbound() else {
        return plain(StatusCode::NOT_FOUND, "the connection has ended");
    };
    if !inbound.send(&body).await {
        return plain(StatusCode::NOT_FOUND, "the connection has ended");
    }
    let mut accepted = Response::new(full(""));
    *accepted.status_mut() = StatusCode::ACCEPTED;
    accepted
}

/// A POST without `Acp-Connection-Id` that is not `initialize`: 400. What
/// is not a JSON-RPC message at all gets the JSON-RPC error the engine
/// would have answered on stdio (`-32700` for invalid JSON, `-32600` for
/// JSON that is not a message object), with id null, in the body.
fn without_connection(body: &[u8]) -> Response<ResponseBody> {
    let code = match serde_json::from_slice::<serde_json::Value>(body) {
        Err(_) => Some((-32700, "Parse error")),
        Ok(serde_json::Value::Object(_)) => None,
        Ok(_) => Some((-32600, "Invalid request: not a JSON-RPC message object")),
    };
    match code {
        Some((code, message)) => json_response(
            StatusCode::BAD_REQUEST,
            format!(
                r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":{code},"message":"{message}"}}}}"#
            ),
        ),
        None => plain(StatusCode::BAD_REQUEST, "Acp-Connection-Id header required"),
    }
}

fn too_large(limit: usize) -> Response<ResponseBody> {
    plain(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("the request body exceeds the limit of {limit} bytes"),
    )
}

/// Makes a connection for an `initialize` POST and answers with the
/// agent's answer.
async fn initialize(
    shared: Arc<Shared>,
    headers: HeaderMap,
    body: Bytes,
    remote: SocketAddr,
) -> Response<ResponseBody> {
    let id = route::peek(&body).and_then(|p| p.id).unwrap_or_default();
    let Some((conn_id, live, inbound, outbound)) =
        shared.open(RemoteKind::StreamableHttp, remote, headers)
    else {
        return plain(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is full or shutting down",
        );
    };
    let (tx, rx) = oneshot::channel();
    let conn = Arc::new(HttpConn {
        id: conn_id.clone(),
        live: Arc::clone(&live),
        inbound: Mutex::new(Some(inbound.clone())),
        streams: Mutex::new(HashMap::new()),
        routes: Mutex::new(HashMap::new()),
        init: Mutex::new(Some((id.clone(), tx))),
        last_active: Mutex::new(Instant::now()),
        reading: AtomicUsize::new(0),
        closed: CancellationToken::new(),
    });
    lock(&shared.http.conns).insert(conn_id.clone(), Arc::clone(&conn));
    live.asked(&id);
    tokio::spawn(run_router(Arc::clone(&shared), Arc::clone(&conn), outbound));
    drop(inbound);
    let sent = match conn.inbound() {
        Some(inbound) => inbound.send(&body).await,
        None => false,
    };
    let answer = if sent { rx.await.ok() } else { None };
    let Some(answer) = answer else {
        return plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the agent closed before answering initialize",
        );
    };
    let mut response = json_response(StatusCode::OK, answer);
    if let Ok(v) = HeaderValue::from_str(&conn_id) {
        response.headers_mut().insert(CONNECTION_ID_HEADER, v);
    }
    response
}

/// Hands what the agent writes to the streams, until the agent's
/// connection ends; then forgets the connection.
async fn run_router(shared: Arc<Shared>, conn: Arc<HttpConn>, mut outbound: Outbound) {
    let options = &shared.options;
    let mut tick = tokio::time::interval(options.keepalive_interval.min(options.idle_timeout));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let stop = conn.live.stop.clone();
    loop {
        let message = tokio::select! {
            m = outbound.recv() => m,
            () = stop.cancelled(), if lock(&conn.inbound).is_some() => {
                // DELETE, shutdown or idle: end the engine's input; its
                // close ends `outbound`.
                lock(&conn.inbound).take();
                conn.closed.cancel();
                continue;
            }
            _ = tick.tick() => {
                let quiet = lock(&conn.last_active).elapsed();
                if conn.reading.load(Ordering::SeqCst) == 0 && quiet > options.idle_timeout {
                    stop.cancel();
                }
                continue;
            }
        };
        let Some(message) = message else { break };
        let Some(queue) = target(&conn, &message, options.queue) else {
            continue;
        };
        let sent = tokio::select! {
            r = queue.tx.send(message) => r.is_ok(),
            () = tokio::time::sleep(options.idle_timeout) => false,
            () = conn.closed.cancelled() => true, // draining after a stop
        };
        if !sent {
            stop.cancel();
        }
    }
    lock(&conn.inbound).take();
    conn.closed.cancel();
    lock(&shared.http.conns).remove(&conn.id);
    shared.close(&conn.live);
}

/// The queue `message` goes to; `None` when it was the `initialize` answer
/// (handed to its POST) or no stream can take it.
fn target(conn: &HttpConn, message: &Bytes, capacity: usize) -> Option<Arc<StreamQueue>> {
    let Some(p) = route::peek(message) else {
        return conn.stream(None, capacity);
    };
    match p.kind {
        Kind::Response => {
            let id = p.id.unwrap_or_default();
            conn.live.answered(&id);
            let mut init = lock(&conn.init);
            if init.as_ref().is_some_and(|(want, _)| *want == id) {
                if let Some((_, tx)) = init.take() {
                    let _ = tx.send(message.clone());
                }
                return None;
            }
            drop(init);
            let scope = lock(&conn.routes).remove(&id);
            conn.answer_stream(scope, capacity)
        }
        Kind::Request | Kind::Notification => match p.session {
            Some(s) => conn.answer_stream(Some(Scope::Session(s)), capacity),
            None => conn.stream(None, capacity),
        },
    }
}

fn get(shared: Arc<Shared>, request: Request<Body>) -> Response<ResponseBody> {
    let headers = request.headers();
    let accepts =
        header(headers, header::ACCEPT.as_str()).is_some_and(|v| v.contains("text/event-stream"));
    if !accepts {
        return plain(
            StatusCode::NOT_ACCEPTABLE,
            "Accept must include text/event-stream",
        );
    }
    let Some(conn_id) = header(headers, CONNECTION_ID_HEADER) else {
        return plain(StatusCode::BAD_REQUEST, "Acp-Connection-Id header required");
    };
    let Some(conn) = shared.http.get(conn_id) else {
        return plain(StatusCode::NOT_FOUND, "unknown Acp-Connection-Id");
    };
    let session = header(headers, SESSION_ID_HEADER).map(str::to_owned);
    let Some(queue) = conn.stream(session.as_deref(), shared.options.queue) else {
        return plain(StatusCode::NOT_FOUND, "too many session streams");
    };
    let Ok(rx) = Arc::clone(&queue.rx).try_lock_owned() else {
        return plain(StatusCode::CONFLICT, "this stream is already being read");
    };
    queue.opened.store(true, Ordering::Relaxed);
    conn.touch();
    let body = event_stream(
        Arc::clone(&conn),
        rx,
        shared.options.keepalive_interval,
        shared.closing.clone(),
    );
    let mut response = Response::new(body);
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    if let Ok(v) = HeaderValue::from_str(&conn.id) {
        h.insert(CONNECTION_ID_HEADER, v);
    }
    if let Some(v) = session.and_then(|s| HeaderValue::from_str(&s).ok()) {
        h.insert(SESSION_ID_HEADER, v);
    }
    response
}

/// Counts an event stream as read while it lives.
struct Reading(Arc<HttpConn>);

impl Drop for Reading {
    fn drop(&mut self) {
        self.0.reading.fetch_sub(1, Ordering::SeqCst);
        self.0.touch();
    }
}

/// The SSE body: one `data:` line per message, a comment every
/// `keepalive`; ends when the connection closes.
fn event_stream(
    conn: Arc<HttpConn>,
    rx: OwnedMutexGuard<mpsc::Receiver<Bytes>>,
    keepalive: std::time::Duration,
    abort: CancellationToken,
) -> ResponseBody {
    conn.reading.fetch_add(1, Ordering::SeqCst);
    let closed = conn.closed.clone();
    let reading = Reading(conn);
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + keepalive, keepalive);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let state = (rx, tick, closed, reading, abort);
    let events = stream::unfold(
        state,
        |(mut rx, mut tick, closed, reading, abort)| async move {
            let frame = tokio::select! {
                biased;
                () = abort.cancelled() => return None,
                m = rx.recv() => match m {
                    Some(message) => event(&message),
                    None => return None,
                },
                () = closed.cancelled() => {
                    // Drain what is queued, then end.
                    match rx.try_recv() {
                        Ok(message) => event(&message),
                        Err(_) => return None,
                    }
                }
                _ = tick.tick() => Bytes::from_static(b":\n\n"),
            };
            Some((
                Ok::<_, Infallible>(Frame::data(frame)),
                (rx, tick, closed, reading, abort),
            ))
        },
    );
    StreamBody::new(events).boxed_unsync()
}

/// One SSE event carrying `message` (one line: the engine writes no line
/// breaks).
fn event(message: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(message.len() + 8);
    event.extend_from_slice(b"data: ");
    event.extend_from_slice(message);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

fn delete(shared: Arc<Shared>, request: Request<Body>) -> Response<ResponseBody> {
    let Some(conn_id) = header(request.headers(), CONNECTION_ID_HEADER) else {
        return plain(StatusCode::BAD_REQUEST, "Acp-Connection-Id header required");
    };
    let Some(conn) = shared.http.get(conn_id) else {
        return plain(StatusCode::NOT_FOUND, "unknown Acp-Connection-Id");
    };
    conn.live.stop.cancel();
    let mut accepted = Response::new(full(""));
    *accepted.status_mut() = StatusCode::ACCEPTED;
    accepted
}
