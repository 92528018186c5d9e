//! Shared helpers for the integration tests: a scripted raw peer that speaks
//! bytes on the other end of a connection, event collection, timeouts.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use libacp_core::{
    Connection, ConnectionOptions, Event, Handler, IncomingRequest, Responder, Transport,
};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

/// Default bound on every await in the tests.
pub const LIMIT: Duration = Duration::from_secs(20);

/// Awaits `f`, panicking with `what` if it takes longer than [`LIMIT`].
pub async fn within<F: Future>(what: &str, f: F) -> F::Output {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out: {what}"),
    }
}

/// Whether `f` is still pending after `wait`.
pub async fn still_pending<F: Future>(f: F, wait: Duration) -> bool {
    tokio::time::timeout(wait, f).await.is_err()
}

/// The far end of a connection, driven by hand: write raw lines, read frames.
pub struct RawPeer {
    reader: BufReader<ReadHalf<DuplexStream>>,
    writer: Option<WriteHalf<DuplexStream>>,
}

impl RawPeer {
    /// Writes bytes as they are (add the newline yourself).
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        let w = self.writer.as_mut().expect("writer open");
        w.write_all(bytes).await.expect("write to connection");
        w.flush().await.expect("flush");
    }

    /// Writes one JSON value as an NDJSON line.
    pub async fn send(&mut self, value: Value) {
        let mut line = serde_json::to_vec(&value).expect("json");
        line.push(b'\n');
        self.send_raw(&line).await;
    }

    /// Reads the next NDJSON line as JSON; `None` at end of stream.
    pub async fn recv(&mut self) -> Option<Value> {
        let mut line = String::new();
        let n = within("raw peer read", self.reader.read_line(&mut line))
            .await
            .expect("read");
        if n == 0 {
            return None;
        }
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad line {line:?}: {e}")))
    }

    /// Reads the next frame, which must exist.
    pub async fn expect(&mut self) -> Value {
        self.recv().await.expect("a frame, not end of stream")
    }

    /// Closes the write half: the connection sees end of stream.
    pub async fn close_write(&mut self) {
        if let Some(mut w) = self.writer.take() {
            let _ = w.shutdown().await;
        }
    }

    /// Splits into halves for tests that read and write concurrently.
    pub fn into_parts(
        self,
    ) -> (
        BufReader<ReadHalf<DuplexStream>>,
        Option<WriteHalf<DuplexStream>>,
    ) {
        (self.reader, self.writer)
    }
}

/// A connection with `handler` and a [`RawPeer`] on the other end of an
/// in-memory pipe of `capacity` bytes per direction.
pub fn connect_raw_with_capacity(
    handler: impl Handler,
    options: ConnectionOptions,
    capacity: usize,
) -> (Connection, RawPeer) {
    let (ours, theirs) = tokio::io::duplex(capacity);
    let conn = Connection::start(Transport::from_stream(ours), handler, options);
    let (r, w) = tokio::io::split(theirs);
    (
        conn,
        RawPeer {
            reader: BufReader::new(r),
            writer: Some(w),
        },
    )
}

/// [`connect_raw_with_capacity`] with a 64 KiB pipe.
pub fn connect_raw(handler: impl Handler, options: ConnectionOptions) -> (Connection, RawPeer) {
    connect_raw_with_capacity(handler, options, 64 * 1024)
}

/// Two libacp connections talking to each other in memory.
pub fn connect_pair(
    a: impl Handler,
    a_options: ConnectionOptions,
    b: impl Handler,
    b_options: ConnectionOptions,
) -> (Connection, Connection) {
    let (ta, tb) = Transport::memory_pair();
    (
        Connection::start(ta, a, a_options),
        Connection::start(tb, b, b_options),
    )
}

/// Collects a connection's events as text, for assertions.
#[derive(Clone, Default)]
pub struct Events(Arc<Mutex<Vec<String>>>);

impl Events {
    /// Options with this collector installed as the event hook.
    pub fn options(&self) -> ConnectionOptions {
        let sink = self.0.clone();
        ConnectionOptions {
            events: Some(Arc::new(move |e: &Event| {
                sink.lock().expect("events").push(format!("{e:?}"));
            })),
            ..ConnectionOptions::default()
        }
    }

    /// The events seen so far.
    pub fn seen(&self) -> Vec<String> {
        self.0.lock().expect("events").clone()
    }

    /// Waits until an event containing `needle` was seen.
    pub async fn wait_for(&self, needle: &str) -> String {
        within(&format!("event {needle}"), async {
            loop {
                if let Some(e) = self.seen().into_iter().find(|e| e.contains(needle)) {
                    return e;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
    }
}

/// Parses a raw result into a JSON value.
pub fn value(raw: &libacp_core::RawValue) -> Value {
    serde_json::from_str(raw.get()).expect("json")
}

/// A raw JSON value from a `serde_json::Value`.
pub fn raw(v: Value) -> Box<libacp_core::RawValue> {
    serde_json::value::to_raw_value(&v).expect("json")
}

/// A handler that parks every request with its responder, so a test can
/// answer (or not) when it chooses.
#[derive(Clone, Default)]
pub struct Parked(Arc<Mutex<Vec<(IncomingRequest, Responder)>>>);

impl Handler for Parked {
    fn on_request(&self, request: IncomingRequest, responder: Responder) {
        self.0.lock().expect("parked").push((request, responder));
    }
}

impl Parked {
    /// Waits for the most recent parked request.
    pub async fn take(&self) -> (IncomingRequest, Responder) {
        within("a parked request", async {
            loop {
                if let Some(r) = self.0.lock().expect("parked").pop() {
                    return r;
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        })
        .await
    }
}
