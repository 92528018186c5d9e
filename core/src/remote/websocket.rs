//! Moving messages between an open WebSocket and the engine's pipe, for
//! both roles: one JSON-RPC message per text frame each way (the RFD),
//! binary frames ignored, pings sent every `keepalive` interval.
//!
//! Two tasks per connection, so that neither direction waits on the other:
//! the **reader** hands text frames to the engine (waiting while its queue
//! is full, which stops reading the socket: back-pressure reaches the
//! peer); the **writer** sends what the engine wrote, batching what is
//! ready before a flush, and pings. A peer from which nothing (not even a
//! pong) arrived for `idle_timeout` is gone: the connection fails with a
//! timeout. When the engine closes, the writer sends a close frame (1000).
//! When the peer closes or the socket fails, the engine's input ends: at
//! end of stream after a normal close (1000, 1001), with a typed
//! [`RemoteError`] otherwise.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_util::sync::CancellationToken;

use super::pipe::{Inbound, Outbound};
use super::route;
use super::server::Live;
use super::{RemoteError, RemoteErrorKind};
use crate::rpc::lock;

/// Socket buffers per connection: small, so that an idle connection costs
/// little (tungstenite's defaults are 128 KiB each way); larger messages
/// grow them while they pass.
const READ_BUFFER: usize = 4 * 1024;
const WRITE_BUFFER: usize = 0;

/// The WebSocket settings of both roles.
pub(crate) fn config(max_message_size: usize) -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER)
        .write_buffer_size(WRITE_BUFFER)
        .max_message_size(Some(max_message_size))
        .max_frame_size(Some(max_message_size))
}

/// How a pump behaves; `peer` names the other side in messages ("the
/// server", "the client").
#[derive(Debug, Clone, Copy)]
pub(crate) struct PumpSettings {
    pub(crate) keepalive: Duration,
    pub(crate) idle_timeout: Duration,
    pub(crate) peer: &'static str,
}

/// Runs both directions until the connection ends; returns once both tasks
/// are done. `stop` (a server shutting down) closes with 1001.
pub(crate) async fn pump<S>(
    ws: WebSocketStream<S>,
    inbound: Inbound,
    outbound: Outbound,
    settings: PumpSettings,
    stop: CancellationToken,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    pump_tracked(ws, inbound, outbound, settings, stop, None).await;
}

/// [`pump`], keeping `live`'s books of the client's requests in flight (a
/// server's graceful shutdown waits for them).
pub(crate) async fn pump_tracked<S>(
    ws: WebSocketStream<S>,
    inbound: Inbound,
    mut outbound: Outbound,
    settings: PumpSettings,
    stop: CancellationToken,
    live: Option<Arc<Live>>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let live_r = live.clone();
    let (mut sink, mut stream) = ws.split();
    let start = Instant::now();
    let seen = Arc::new(AtomicU64::new(0));
    let seen_r = Arc::clone(&seen);
    let busy = Arc::new(AtomicBool::new(false));
    let busy_r = Arc::clone(&busy);
    let done = CancellationToken::new();
    // The reader owns the engine's input alone: its end is the engine's end
    // of stream. The writer reports silence through `silent`.
    let reader_inbound = inbound;
    let reader_done = done.clone();
    let silence: Arc<Mutex<Option<RemoteError>>> = Arc::default();
    let silence_r = Arc::clone(&silence);
    let peer = settings.peer;
    let reader = async move {
        let end: Option<RemoteError> = loop {
            let next = tokio::select! {
                next = stream.next() => next,
                () = reader_done.cancelled() => break None,
            };
            seen_r.store(start.elapsed().as_millis() as u64, Ordering::Relaxed);
            match next {
                Some(Ok(Message::Text(text))) => {
                    if let Some(live) = &live_r
                        && let Some(p) = route::peek(text.as_bytes())
                        && let (route::Kind::Request, Some(id)) = (p.kind, &p.id)
                    {
                        live.asked(id);
                    }
                    // Waiting for the engine is not the peer's silence.
                    busy_r.store(true, Ordering::Relaxed);
                    let taken = reader_inbound.send(text.as_bytes()).await;
                    busy_r.store(false, Ordering::Relaxed);
                    seen_r.store(start.elapsed().as_millis() as u64, Ordering::Relaxed);
                    if !taken {
                        break None; // the engine stopped reading
                    }
                }
                Some(Ok(Message::Close(frame))) => break close_error(frame, peer),
                Some(Ok(_)) => {} // binary (ignored, as the RFD says), ping, pong
                Some(Err(e)) => {
                    break Some(RemoteError::new(
                        RemoteErrorKind::Io,
                        format!("the WebSocket to {peer} failed: {e}"),
                    ));
                }
                None => {
                    break Some(RemoteError::new(
                        RemoteErrorKind::Io,
                        format!("{peer} went away without closing the WebSocket"),
                    ));
                }
            }
        };
        let end = end.or_else(|| lock(&silence_r).take());
        if let Some(error) = end {
            reader_inbound.fail(error).await;
        }
        // Dropping the last `Inbound` ends the engine's input.
    };
    let writer = async move {
        let mut ping = tokio::time::interval(settings.keepalive);
        ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ping.tick().await;
        let close = loop {
            tokio::select! {
                message = outbound.recv() => {
                    let Some(first) = message else {
                        break Some(CloseFrame { code: CloseCode::Normal, reason: "".into() });
                    };
                    let mut next = Some(first);
                    let mut failed = false;
                    while let Some(message) = next.take() {
                        if let Some(live) = &live
                            && let Some(id) = route::engine_response_id(&message)
                        {
                            live.answered(id);
                        }
                        if sink.feed(text(message)).await.is_err() {
                            failed = true;
                            break;
                        }
                        next = outbound.try_recv();
                    }
                    if failed || sink.flush().await.is_err() {
                        break None;
                    }
                }
                _ = ping.tick() => {
                    let last = Duration::from_millis(seen.load(Ordering::Relaxed));
                    let silent = start.elapsed().saturating_sub(last);
                    if silent > settings.idle_timeout && !busy.load(Ordering::Relaxed) {
                        *lock(&silence) = Some(RemoteError::new(
                            RemoteErrorKind::Timeout,
                            format!(
                                "nothing from {peer} for {:?} (no answer to pings)",
                                settings.idle_timeout
                            ),
                        ));
                        break Some(CloseFrame { code: CloseCode::Away, reason: "idle".into() });
                    }
                    if sink.send(Message::Ping(Default::default())).await.is_err() {
                        break None;
                    }
                }
                () = stop.cancelled() => {
                    break Some(CloseFrame { code: CloseCode::Away, reason: "shutting down".into() });
                }
            }
        };
        if let Some(frame) = close {
            let _ = tokio::time::timeout(
                Duration::from_secs(2),
                sink.send(Message::Close(Some(frame))),
            )
            .await;
        }
        let _ = tokio::time::timeout(Duration::from_secs(2), sink.close()).await;
        done.cancel();
    };
    tokio::join!(reader, writer);
}

/// A text frame of a message. The engine writes UTF-8 JSON; a spliced
/// stdio program might not, and its bytes that are not UTF-8 are replaced
/// (U+FFFD), so the peer's engine sees the message and answers it, rather
/// than the message vanishing.
fn text(message: bytes::Bytes) -> Message {
    // A clone of `Bytes` shares the buffer.
    match tokio_tungstenite::tungstenite::Utf8Bytes::try_from(message.clone()) {
        Ok(text) => Message::Text(text),
        Err(_) => Message::text(String::from_utf8_lossy(&message).into_owned()),
    }
}

/// What a close frame from the peer means for the engine: nothing (end of
/// stream) for a normal close, an error naming the code otherwise.
fn close_error(frame: Option<CloseFrame>, peer: &str) -> Option<RemoteError> {
    let frame = frame?;
    match frame.code {
        CloseCode::Normal => None,
        code => Some(RemoteError::new(
            RemoteErrorKind::Io,
            format!(
                "{peer} closed the WebSocket with code {} ({})",
                u16::from(code),
                frame.reason.as_str()
            ),
        )),
    }
}
