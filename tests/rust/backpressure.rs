//! Back-pressure: a slow notification handler slows the reader (and through
//! the pipe, the peer) instead of buffering the stream; a host that sends
//! faster than the peer reads waits instead of queueing without bound.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use libacp_core::{ConnectionOptions, FnHandler};
use libacp_tests::{connect_raw_with_capacity, within};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

/// Far more than can be buffered anywhere (the bound below is about 3000
/// lines), and sized for a debug build on a busy machine.
const TOTAL: usize = 100_000;
const PIPE: usize = 64 * 1024;

/// Waits until `counter` stops moving for a while; returns its value.
async fn settle(counter: &AtomicUsize) -> usize {
    within("settle", async {
        let mut last = usize::MAX;
        loop {
            let now = counter.load(Ordering::SeqCst);
            if now == last {
                return now;
            }
            last = now;
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_handler_bounds_what_is_buffered_while_a_hundred_thousand_notifications_arrive() {
    let (gate_tx, gate_rx) = tokio::sync::watch::channel(false);
    let handled = Arc::new(AtomicUsize::new(0));
    let last = Arc::new(AtomicU64::new(0));
    let in_order = Arc::new(AtomicUsize::new(1));
    let handler = FnHandler::new().on_notification({
        let handled = handled.clone();
        let last = last.clone();
        let in_order = in_order.clone();
        move |n| {
            let mut gate = gate_rx.clone();
            let handled = handled.clone();
            let last = last.clone();
            let in_order = in_order.clone();
            async move {
                let _ = gate.wait_for(|open| *open).await;
                let i = n.params_as::<serde_json::Value>().expect("params")["i"]
                    .as_u64()
                    .expect("i");
                if i != last.swap(i + 1, Ordering::SeqCst) {
                    in_order.store(0, Ordering::SeqCst);
                }
                handled.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    let options = ConnectionOptions {
        incoming_queue: 64,
        ..ConnectionOptions::default()
    };
    let (_conn, peer) = connect_raw_with_capacity(handler, options, PIPE);
    let (_reader, writer) = peer.into_parts();
    let mut writer = writer.expect("writer");
    let sent = Arc::new(AtomicUsize::new(0));
    let line_len = format!(
        "{}\n",
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"i": 0}})
    )
    .len();
    let flood = tokio::spawn({
        let sent = sent.clone();
        async move {
            let mut batch = String::new();
            for i in 0..TOTAL {
                batch.push_str(&format!(
                    "{{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{{\"i\":{i}}}}}\n"
                ));
                if i % 100 == 99 {
                    writer.write_all(batch.as_bytes()).await.expect("write");
                    sent.fetch_add(100, Ordering::SeqCst);
                    batch.clear();
                }
            }
            writer
        }
    });
    // The handler is stuck on its first notification: the flood must stall.
    let stalled_at = settle(&sent).await;
    // What can be in memory: the inbox and the dispatcher's batch, one read
    // buffer in the reader, the pipe, and the writer's batch of 100. Lines are
    // at least `line_len` bytes.
    let bound = 64 + 64 + 2 * (64 * 1024 / line_len + 1) + PIPE / line_len + 100 + 1;
    assert!(
        stalled_at <= bound,
        "peer got {stalled_at} notifications out while the handler was stuck (bound {bound})"
    );
    assert!(stalled_at < TOTAL / 10);
    gate_tx.send_replace(true);
    let _writer = within("flood finishes", flood).await.expect("flood");
    within("all handled", async {
        while handled.load(Ordering::SeqCst) < TOTAL {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert_eq!(in_order.load(Ordering::SeqCst), 1, "out of order");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fast_sender_waits_for_a_slow_reader() {
    let options = ConnectionOptions {
        outgoing_queue: 16,
        ..ConnectionOptions::default()
    };
    let (conn, peer) = connect_raw_with_capacity(FnHandler::new(), options, 4096);
    let sent = Arc::new(AtomicUsize::new(0));
    let sender = tokio::spawn({
        let conn = conn.clone();
        let sent = sent.clone();
        async move {
            for i in 0..10_000 {
                conn.notify("session/update", &json!({"i": i, "pad": "p".repeat(100)}))
                    .await
                    .expect("notify");
                sent.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    let stalled_at = settle(&sent).await;
    // 16 queued + 16 in the writer's batch + what fits in the 4 KiB pipe.
    assert!(stalled_at <= 16 + 16 + 4096 / 130 + 1, "sent {stalled_at}");
    // The peer starts reading: everything goes through, in order.
    let (mut reader, _w) = peer.into_parts();
    let mut line = String::new();
    for i in 0..10_000 {
        line.clear();
        within("read", reader.read_line(&mut line))
            .await
            .expect("read");
        let v: serde_json::Value = serde_json::from_str(&line).expect("json");
        assert_eq!(v["params"]["i"], i);
    }
    within("sender done", sender).await.expect("sender");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn try_notify_queues_while_there_is_room_and_hands_the_params_back_when_full() {
    use libacp_core::TryNotify;
    let options = ConnectionOptions {
        outgoing_queue: 2,
        ..ConnectionOptions::default()
    };
    // A 16-byte pipe the peer does not read yet: the first frame's write
    // blocks, so both places stay taken until the peer reads.
    let (conn, mut peer) = connect_raw_with_capacity(FnHandler::new(), options, 16);
    let p = conn.peer();
    let params = |i: u64| libacp_tests::raw(json!({"i": i}));
    for i in 0..2 {
        assert!(matches!(
            p.try_notify_raw("n", Some(params(i))),
            Ok(TryNotify::Sent)
        ));
    }
    match p.try_notify_raw("n", Some(params(2))) {
        Ok(TryNotify::Full(Some(back))) => assert_eq!(back.get(), r#"{"i":2}"#),
        other => panic!("expected Full with the params back, got {other:?}"),
    }
    // Reading frees the places; the two queued notifications arrive in order.
    for i in 0..2 {
        let got = within("read", peer.expect()).await;
        assert_eq!(got["params"]["i"], i);
    }
    // The handed-back `i: 2` was not sent: the next frame is the next one
    // that reports Sent.
    within("room again", async {
        loop {
            match p.try_notify_raw("n", Some(params(3))) {
                Ok(TryNotify::Sent) => break,
                Ok(TryNotify::Full(_)) => tokio::time::sleep(Duration::from_millis(5)).await,
                Err(e) => panic!("{e}"),
            }
        }
    })
    .await;
    assert_eq!(within("read", peer.expect()).await["params"]["i"], 3);
    // Params that are not an object or an array are refused, nothing sent:
    // the next frame on the wire is the marker sent after them.
    assert!(
        p.try_notify_raw("n", Some(libacp_tests::raw(json!(3))))
            .is_err()
    );
    assert!(matches!(
        p.try_notify_raw("marker", Some(params(4))),
        Ok(TryNotify::Sent)
    ));
    assert_eq!(within("read", peer.expect()).await["method"], "marker");
    conn.close().await;
    assert!(p.try_notify_raw("n", None).is_err(), "closed: an error");
}
