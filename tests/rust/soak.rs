//! Soak: a mixed workload through the core for a while (streamed turns,
//! permission round trips, cancelled turns, sessions opened and closed,
//! whole connections made and dropped), then what the process holds is
//! compared with what it held after a warm-up: descriptors and threads must
//! not grow, and memory (RSS) must stay within a bound that a leak of one
//! session, call or connection per cycle would cross.
//!
//! `LIBACP_SOAK_SECS` sets how long (default 15 s, what the test command
//! runs; the 10-minute run is `LIBACP_SOAK_SECS=600`). The amount
//! of work done depends on the machine; the checks do not (they compare the
//! process with itself). Prints what it did and measured. Alone in its test
//! binary (it measures the whole process).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use libacp_core::{
    AcpConnection, AcpOptions, AcpPeer, CallError, FnHandler, Role, RpcError, Transport,
};
use libacp_tests::within;
use serde_json::{Value, json};

/// What this process holds.
#[derive(Debug, Clone, Copy)]
struct Held {
    fds: usize,
    threads: usize,
    rss_kib: u64,
}

fn held() -> Held {
    let count = |dir: &str| std::fs::read_dir(dir).map_or(0, Iterator::count);
    let rss_kib = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0);
    Held {
        fds: count("/proc/self/fd"),
        threads: count("/proc/self/task"),
        rss_kib,
    }
}

/// The agent: streams a reply, asks permission, or waits to be cancelled.
fn agent() -> FnHandler {
    let sessions = Arc::new(AtomicUsize::new(0));
    FnHandler::new().on_request(move |req| {
        let sessions = Arc::clone(&sessions);
        async move {
            let acp = AcpPeer::of(&req.peer).ok_or_else(|| RpcError::internal_error("not ACP"))?;
            let params: Value = req.params_as().unwrap_or(Value::Null);
            match req.method.as_str() {
                "initialize" => Ok(json!({"protocolVersion": 1, "agentCapabilities": {
                    "sessionCapabilities": {"close": {}}}})),
                "session/new" => Ok(json!({
                    "sessionId": format!("s{}", sessions.fetch_add(1, Ordering::Relaxed))
                })),
                "session/close" => Ok(json!({})),
                "session/prompt" => {
                    let sid = params["sessionId"].clone();
                    match params["prompt"][0]["text"].as_str() {
                        Some("wait") => {
                            req.cancellation.cancelled().await;
                            Ok(json!({"stopReason": "cancelled"}))
                        }
                        Some("permission") => {
                            let answer: Value = acp
                                .request_json(
                                    "session/request_permission",
                                    &json!({"sessionId": sid, "toolCall": {"toolCallId": "t"},
                                        "options": [{"optionId": "a", "name": "A", "kind": "allow_once"}]}),
                                )
                                .decode()
                                .await?;
                            Ok(json!({"stopReason": "end_turn", "_meta": answer}))
                        }
                        _ => {
                            for i in 0..20 {
                                acp.notify_json(
                                    "session/update",
                                    &json!({"sessionId": sid, "update": {
                                        "sessionUpdate": "agent_message_chunk",
                                        "content": {"type": "text", "text": format!("chunk {i} ")}}}),
                                )
                                .await
                                .map_err(RpcError::from)?;
                            }
                            Ok(json!({"stopReason": "end_turn"}))
                        }
                    }
                }
                _ => Err(RpcError::method_not_found(&req.method)),
            }
        }
    })
}

/// The client: allows every permission request; counts updates.
fn client(updates: Arc<AtomicUsize>) -> FnHandler {
    FnHandler::new()
        .on_request(|_req| async {
            Ok(json!({"outcome": {"outcome": "selected", "optionId": "a"}}))
        })
        .on_notification(move |_n| {
            updates.fetch_add(1, Ordering::Relaxed);
            async {}
        })
}

/// One connection's worth of work: `sessions` sessions, each with a
/// streamed turn, a permission turn and a cancelled turn, then closed.
async fn cycle(updates: &Arc<AtomicUsize>, sessions: usize) -> Result<(), CallError> {
    let (tc, ta) = Transport::memory_pair();
    let conn = AcpConnection::start(
        Role::Client,
        tc,
        client(Arc::clone(updates)),
        AcpOptions::default(),
    );
    let _agent = AcpConnection::start(Role::Agent, ta, agent(), AcpOptions::default());
    conn.request_json("initialize", &json!({"protocolVersion": 1}))
        .await?;
    for _ in 0..sessions {
        let new: Value = conn
            .request_json("session/new", &json!({"cwd": "/tmp", "mcpServers": []}))
            .decode()
            .await?;
        let sid = new["sessionId"].clone();
        let prompt =
            |text: &str| json!({"sessionId": sid, "prompt": [{"type": "text", "text": text}]});
        conn.request_json("session/prompt", &prompt("stream"))
            .await?;
        conn.request_json("session/prompt", &prompt("permission"))
            .await?;
        let waiting = conn.request_json("session/prompt", &prompt("wait"));
        let id = sid.as_str().unwrap_or_default().to_owned();
        let (answer, cancelled) = tokio::join!(waiting, async {
            tokio::task::yield_now().await;
            conn.cancel_session(&id).await
        });
        cancelled?;
        answer?;
        conn.request_json("session/close", &json!({"sessionId": sid}))
            .await?;
    }
    conn.close().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mixed_workload_does_not_grow_descriptors_threads_or_memory() {
    let secs: u64 = std::env::var("LIBACP_SOAK_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    let updates = Arc::new(AtomicUsize::new(0));
    // Warm-up: the runtime's threads, allocator arenas, lazy statics.
    for _ in 0..20 {
        within("warm-up", cycle(&updates, 5)).await.expect("cycle");
    }
    let before = held();
    let started = Instant::now();
    let mut cycles = 0usize;
    while started.elapsed() < Duration::from_secs(secs) {
        within("a cycle", cycle(&updates, 5)).await.expect("cycle");
        cycles += 1;
    }
    // Tasks of the last connections end asynchronously.
    let mut after = held();
    for _ in 0..100 {
        if after.fds <= before.fds && after.threads <= before.threads {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        after = held();
    }
    println!(
        "soak: {cycles} connections, {} sessions, {} turns, {} updates in {:.1} s; \
         before {before:?}, after {after:?}",
        cycles * 5,
        cycles * 15,
        updates.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64()
    );
    assert!(cycles > 0, "no cycle ran");
    assert!(
        after.fds <= before.fds,
        "descriptors grew: {before:?} -> {after:?}"
    );
    assert!(
        after.threads <= before.threads,
        "threads grew: {before:?} -> {after:?}"
    );
    // A leak of a few KiB per session, over the thousands of sessions of a
    // run, crosses this; allocator noise (well under 1 MiB here) does not.
    let bound = before.rss_kib + before.rss_kib / 4 + 16 * 1024;
    assert!(
        after.rss_kib <= bound,
        "memory grew: {} KiB -> {} KiB (bound {bound} KiB) over {cycles} cycles",
        before.rss_kib,
        after.rss_kib
    );
}
