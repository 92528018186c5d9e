//! The engine's own tasks are supervised: if the reader or the writer
//! panics (a libacp bug), the connection closes with a reason naming the
//! task and every pending call fails at once, instead of a connection that
//! silently stopped reading (and calls that wait forever).

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use libacp_core::{
    CallError, CloseReason, Connection, ConnectionError, ConnectionOptions, FnHandler, Transport,
};
use libacp_tests::within;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A reader that waits until told to panic.
#[derive(Clone, Default)]
struct Trap {
    armed: Arc<AtomicBool>,
    waker: Arc<Mutex<Option<Waker>>>,
}

impl Trap {
    fn spring(&self) {
        self.armed.store(true, Ordering::SeqCst);
        if let Some(w) = self.waker.lock().expect("waker").take() {
            w.wake();
        }
    }
}

impl AsyncRead for Trap {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        _buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        assert!(
            !self.armed.load(Ordering::SeqCst),
            "the reader's transport panicked"
        );
        *self.waker.lock().expect("waker") = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// A writer that swallows everything, or panics once armed.
#[derive(Clone, Default)]
struct Sink {
    panics: Arc<AtomicBool>,
}

impl AsyncWrite for Sink {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        assert!(
            !self.panics.load(Ordering::SeqCst),
            "the writer's transport panicked"
        );
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

fn internal(reason: &CloseReason, task: &str) -> bool {
    matches!(reason, CloseReason::Internal(text) if text.contains(task) && text.contains("panicked"))
}

#[tokio::test]
async fn a_panicking_reader_closes_the_connection_and_fails_pending_calls() {
    let trap = Trap::default();
    let conn = Connection::start(
        Transport::new(trap.clone(), Sink::default()),
        FnHandler::new(),
        ConnectionOptions::default(),
    );
    let call = conn.request("pending", &json!({}));
    tokio::task::yield_now().await;
    trap.spring();
    let reason = within("closed", conn.closed()).await;
    assert!(internal(&reason, "reader"), "{reason:?}");
    match within("the pending call", call).await {
        Err(CallError::Connection(ConnectionError::Closed(r))) => assert_eq!(r, reason),
        other => panic!("{other:?}"),
    }
    within("terminated", conn.terminated()).await;
}

#[tokio::test]
async fn a_panicking_writer_closes_the_connection_and_fails_pending_calls() {
    let sink = Sink::default();
    sink.panics.store(true, Ordering::SeqCst);
    let conn = Connection::start(
        Transport::new(Trap::default(), sink),
        FnHandler::new(),
        ConnectionOptions::default(),
    );
    let call = conn.request("pending", &json!({}));
    let reason = within("closed", conn.closed()).await;
    assert!(internal(&reason, "writer"), "{reason:?}");
    assert!(matches!(
        within("the pending call", call).await,
        Err(CallError::Connection(ConnectionError::Closed(_)))
    ));
    within("terminated", conn.terminated()).await;
}
