use std::sync::atomic::AtomicUsize;

use super::*;

/// An inbox whose wake-ups are counted.
fn counted(capacity: usize) -> (Arc<Inbox<u32>>, Arc<AtomicUsize>) {
    let wakes = Arc::new(AtomicUsize::new(0));
    let w = Arc::clone(&wakes);
    let inbox = Inbox::new(
        capacity,
        Arc::new(move || {
            w.fetch_add(1, Ordering::SeqCst);
        }),
    );
    (inbox, wakes)
}

fn kinds(items: &[Delivery<u32>]) -> Vec<String> {
    items
        .iter()
        .map(|d| match d {
            Delivery::Notification { method, .. } => format!("n:{method}"),
            Delivery::Request(r) => format!("q:{}", r.method),
            Delivery::Result { tag, .. } => format!("r:{tag}"),
            Delivery::Signal { key, signal, .. } => format!("s:{key}:{signal:?}"),
            Delivery::Log(l) => format!("l:{l}"),
            Delivery::Engine { kind, .. } => format!("e:{kind}"),
            Delivery::Trace { direction, frame } => format!("t:{direction:?}:{frame}"),
            Delivery::Closed(_) => "closed".into(),
        })
        .collect()
}

fn ok() -> Result<Box<RawValue>, CallError> {
    Ok(RawValue::from_string("{}".into()).expect("json"))
}

#[test]
fn the_host_is_woken_once_per_batch_not_per_item() {
    let (inbox, wakes) = counted(16);
    for i in 0..5 {
        assert!(inbox.push_notification(format!("{i}"), None));
    }
    assert_eq!(wakes.load(Ordering::SeqCst), 1);
    let mut out = Vec::new();
    assert!(inbox.take_ordered(&mut out, 3));
    // Still scheduled: the host has not found the lane empty yet.
    inbox.push_notification("5".into(), None);
    assert_eq!(wakes.load(Ordering::SeqCst), 1);
    assert!(inbox.take_ordered(&mut out, 100));
    assert!(!inbox.take_ordered(&mut out, 100));
    assert_eq!(kinds(&out), ["n:0", "n:1", "n:2", "n:3", "n:4", "n:5"]);
    // Found empty: the next push wakes again.
    inbox.push_notification("6".into(), None);
    assert_eq!(wakes.load(Ordering::SeqCst), 2);
}

#[test]
fn urgent_items_wake_the_host_even_while_the_ordered_lane_is_being_drained() {
    let (inbox, wakes) = counted(16);
    inbox.push_notification("n".into(), None);
    let mut out = Vec::new();
    assert!(inbox.take_ordered(&mut out, 1));
    // The host is inside that notification's handler; the handler's own
    // call (skipping the barrier) is answered: it must wake the host.
    inbox.push_result(7, ok(), true);
    inbox.push_result(8, ok(), false);
    assert_eq!(wakes.load(Ordering::SeqCst), 2);
    out.clear();
    inbox.take_urgent(&mut out);
    assert_eq!(kinds(&out), ["r:7"]);
    inbox.push_result(9, ok(), true);
    assert_eq!(wakes.load(Ordering::SeqCst), 3);
}

#[test]
fn close_is_delivered_last_and_late_outcomes_come_before_it() {
    let (inbox, _) = counted(16);
    inbox.push_notification("n".into(), None);
    inbox.close(CloseReason::PeerClosed);
    assert!(!inbox.push_notification("after".into(), None));
    inbox.push_log("after");
    inbox.push_result(1, ok(), false);
    inbox.close(CloseReason::Local);
    let mut seen = Vec::new();
    while let Some(d) = inbox.pop() {
        seen.push(d);
    }
    assert_eq!(kinds(&seen), ["r:1", "n:n", "closed"]);
    assert!(matches!(
        seen.last(),
        Some(Delivery::Closed(CloseReason::PeerClosed))
    ));
}

/// A host that is gone drops what waits and everything after: a queued
/// item that holds the engine (a request holds its state, which holds the
/// inbox) must not keep the connection alive (the C poll-mode connection
/// freed before it polled leaked its engine and socket this way).
#[tokio::test]
async fn discard_drops_what_waits_and_refuses_everything_after() {
    let inbox: Arc<Inbox<Arc<u32>>> = Inbox::new(1, Arc::new(|| {}));
    let tag = Arc::new(7);
    inbox.push_notification("n".into(), None);
    inbox.push_result(Arc::clone(&tag), ok(), false);
    inbox.push_result(Arc::clone(&tag), ok(), true);
    assert_eq!(Arc::strong_count(&tag), 3);
    let room = {
        let inbox = Arc::clone(&inbox);
        tokio::spawn(async move { inbox.room().await })
    };
    inbox.discard();
    assert_eq!(
        Arc::strong_count(&tag),
        1,
        "the queued outcomes were dropped"
    );
    assert!(inbox.is_empty());
    tokio::time::timeout(std::time::Duration::from_secs(20), room)
        .await
        .expect("a waiter for room goes on")
        .expect("task");
    // Nothing is queued any more, a late outcome and the close included.
    assert!(!inbox.push_notification("after".into(), None));
    inbox.push_result(Arc::clone(&tag), ok(), true);
    inbox.close(CloseReason::PeerClosed);
    assert!(inbox.is_empty());
    assert_eq!(Arc::strong_count(&tag), 1);
    assert!(inbox.pop().is_none());
}

#[tokio::test]
async fn notifications_wait_for_room_and_are_released_by_the_host_taking_items() {
    let (inbox, _) = counted(2);
    inbox.push_notification("a".into(), None);
    inbox.room().await; // one waiting: room
    inbox.push_notification("b".into(), None);
    let room = {
        let inbox = Arc::clone(&inbox);
        tokio::spawn(async move { inbox.room().await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert!(!room.is_finished(), "room with 2 of 2 waiting");
    // Requests and outcomes are accepted regardless.
    inbox.push_result(1, ok(), false);
    let mut out = Vec::new();
    inbox.take_ordered(&mut out, 2);
    tokio::time::timeout(std::time::Duration::from_secs(20), room)
        .await
        .expect("room after a take")
        .expect("task");
    assert_eq!(inbox.len(), 1);
}

#[test]
fn log_lines_over_capacity_are_dropped_and_counted() {
    let (inbox, _) = counted(2);
    inbox.push_log("1");
    inbox.push_log("2");
    inbox.push_log("3");
    inbox.push_log("4");
    let mut out = Vec::new();
    inbox.take_urgent(&mut out);
    inbox.push_log("5");
    inbox.take_urgent(&mut out);
    assert_eq!(
        kinds(&out),
        [
            "l:1",
            "l:2",
            "l:[2 stderr lines dropped: the host was not taking them]\n5"
        ]
    );
}

#[test]
fn held_wakes_are_reported_instead_of_called() {
    let (inbox, wakes) = counted(16);
    inbox.hold_wakes();
    inbox.push_notification("n".into(), None);
    inbox.push_result(1, ok(), true);
    assert_eq!(
        inbox.release_wakes(),
        Pending {
            urgent: true,
            ordered: true
        }
    );
    assert_eq!(wakes.load(Ordering::SeqCst), 0);
    // Still scheduled: the host drains as if woken.
    inbox.push_notification("m".into(), None);
    assert_eq!(wakes.load(Ordering::SeqCst), 0);
    assert_eq!(inbox.release_wakes(), Pending::default());
}

#[test]
fn pop_empties_the_inbox_urgent_first_and_calls_idle() {
    let wakes = Arc::new(AtomicUsize::new(0));
    let idles = Arc::new(AtomicUsize::new(0));
    let (w, i) = (Arc::clone(&wakes), Arc::clone(&idles));
    let inbox: Arc<Inbox<u32>> = Inbox::with_idle(
        8,
        Arc::new(move || {
            w.fetch_add(1, Ordering::SeqCst);
        }),
        Arc::new(move || {
            i.fetch_add(1, Ordering::SeqCst);
        }),
    );
    inbox.push_notification("n".into(), None);
    inbox.push_result(1, ok(), true);
    assert_eq!(wakes.load(Ordering::SeqCst), 2);
    assert!(matches!(inbox.pop(), Some(Delivery::Result { tag: 1, .. })));
    assert_eq!(idles.load(Ordering::SeqCst), 0);
    assert!(matches!(inbox.pop(), Some(Delivery::Notification { .. })));
    assert_eq!(idles.load(Ordering::SeqCst), 1);
    assert!(inbox.pop().is_none());
    inbox.push_notification("m".into(), None);
    assert_eq!(wakes.load(Ordering::SeqCst), 3);
}

/// A C host's wake-up descriptor must be readable exactly while something
/// waits. A slow wake (the pushing thread preempted between queueing and
/// writing the descriptor) must not land after the host already took the
/// item and reset the descriptor: `wake` runs under the inbox's lock, as
/// `idle` does. Made deterministic by a wake that sleeps; without the fix
/// the descriptor ends up set over an empty inbox.
#[test]
fn a_slow_wake_never_lands_after_the_pop_that_emptied_the_inbox() {
    use std::sync::atomic::AtomicBool;
    let readable = Arc::new(AtomicBool::new(false));
    let woken = Arc::new(AtomicBool::new(false));
    let (r1, r2, w1) = (
        Arc::clone(&readable),
        Arc::clone(&readable),
        Arc::clone(&woken),
    );
    let inbox: Arc<Inbox<u32>> = Inbox::with_idle(
        8,
        Arc::new(move || {
            w1.store(true, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(100));
            r1.store(true, Ordering::SeqCst);
        }),
        Arc::new(move || r2.store(false, Ordering::SeqCst)),
    );
    let pusher = std::thread::spawn({
        let inbox = Arc::clone(&inbox);
        move || inbox.push_notification("n".into(), None)
    });
    // The host takes the item as soon as it is there, while the wake sleeps.
    while !woken.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    let taken = loop {
        if let Some(item) = inbox.pop() {
            break item;
        }
        std::thread::yield_now();
    };
    assert!(matches!(taken, Delivery::Notification { .. }));
    assert!(pusher.join().expect("pusher"));
    assert!(inbox.is_empty());
    assert!(
        !readable.load(Ordering::SeqCst),
        "the descriptor is readable over an empty inbox"
    );
}

/// A spawned agent floods its stderr into a small inbox whose host takes
/// one item at a time, slowly: every line arrives, in order, none dropped,
/// and the inbox never holds more than one line over its capacity (the
/// agent's stderr is read no further while it is full).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forwarded_stderr_waits_for_room_and_loses_no_line() {
    let (inbox, _) = counted(4);
    let command = inbox.forward_stderr(
        crate::transport::process::AgentCommand::new("sh")
            .args([
                "-c",
                "i=1; while [ $i -le 3000 ]; do echo line $i >&2; i=$((i+1)); done; exec sleep 100",
            ])
            .grace(crate::transport::process::ShutdownGrace {
                after_stdin_close: std::time::Duration::from_millis(100),
                after_sigterm: std::time::Duration::from_millis(100),
            }),
    );
    let transport = crate::transport::process::spawn(&command).expect("spawn");
    let mut lines = Vec::new();
    let mut most = 0;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    while lines.len() < 3000 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} lines",
            lines.len()
        );
        most = most.max(inbox.len());
        match inbox.pop() {
            Some(Delivery::Log(line)) => lines.push(line),
            Some(_) => panic!("only stderr lines are delivered"),
            None => tokio::time::sleep(std::time::Duration::from_millis(1)).await,
        }
        if lines.len() % 500 == 0 {
            // A host busy elsewhere: the agent must wait, not lose lines.
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
    let want: Vec<String> = (1..=3000).map(|i| format!("line {i}")).collect();
    assert_eq!(lines, want);
    assert!(most <= 5, "the inbox held {most} items (capacity 4)");
    drop(transport);
}

#[test]
fn engine_events_asked_at_once_are_urgent_bounded_and_counted_when_dropped() {
    let (inbox, wakes) = counted(2);
    let hook = inbox.events_hook(HookLane::Urgent);
    let ignored = Event::Ignored("a stray notification".into());
    hook(&ignored);
    assert_eq!(wakes.load(Ordering::SeqCst), 1);
    inbox.push_notification("n".into(), None);
    // Full (2 items): these two are dropped, not waited for.
    hook(&ignored);
    hook(&ignored);
    assert_eq!(inbox.len(), 2);
    let mut out = Vec::new();
    inbox.take_urgent(&mut out);
    assert!(inbox.take_ordered(&mut out, 10));
    assert_eq!(kinds(&out), ["e:ignored", "n:n"]);
    match &out[0] {
        Delivery::Engine {
            message, details, ..
        } => {
            assert_eq!(message, "a stray notification");
            assert_eq!(details, &serde_json::json!({}));
        }
        other => panic!("{other:?}"),
    }
    out.clear();
    hook(&ignored);
    inbox.take_urgent(&mut out);
    assert_eq!(kinds(&out), ["e:events_dropped", "e:ignored"]);
    match &out[0] {
        Delivery::Engine { details, .. } => {
            assert_eq!(details, &serde_json::json!({"count": 2}));
        }
        other => panic!("{other:?}"),
    }
    // Nothing after the close; the hook does not keep the inbox alive.
    inbox.close(CloseReason::PeerClosed);
    hook(&ignored);
    out.clear();
    inbox.take_urgent(&mut out);
    assert!(inbox.take_ordered(&mut out, 10));
    assert_eq!(kinds(&out), ["closed"]);
    drop(inbox);
    hook(&ignored);
}

#[test]
fn engine_events_and_traced_frames_keep_wire_order_with_the_messages() {
    let (inbox, _wakes) = counted(64);
    let events = inbox.events_hook(HookLane::Ordered);
    let trace = inbox.trace_hook(HookLane::Ordered);
    // What a client sees of a prompt turn whose fs read the core served.
    trace(Direction::Incoming, b"{\"method\":\"session/update\"}");
    inbox.push_notification("session/update".into(), None);
    trace(
        Direction::Incoming,
        b"{\"id\":0,\"method\":\"fs/read_text_file\"}",
    );
    events(&Event::Ignored("served".into()));
    trace(Direction::Outgoing, b"{\"id\":0,\"result\":{}}");
    trace(Direction::Incoming, b"{\"id\":1,\"result\":{}}");
    inbox.push_result(1, ok(), false);
    // Invalid UTF-8 is replaced, not dropped.
    trace(Direction::Incoming, b"\xff");
    let mut out = Vec::new();
    inbox.take_urgent(&mut out);
    assert!(out.is_empty(), "{:?}", kinds(&out));
    assert!(inbox.take_ordered(&mut out, 100));
    assert_eq!(
        kinds(&out),
        [
            "t:Incoming:{\"method\":\"session/update\"}",
            "n:session/update",
            "t:Incoming:{\"id\":0,\"method\":\"fs/read_text_file\"}",
            "e:ignored",
            "t:Outgoing:{\"id\":0,\"result\":{}}",
            "t:Incoming:{\"id\":1,\"result\":{}}",
            "r:1",
            "t:Incoming:\u{fffd}",
        ]
    );
}

#[test]
fn traced_frames_are_never_dropped_and_stop_at_the_close() {
    let (inbox, _wakes) = counted(2);
    let trace = inbox.trace_hook(HookLane::Urgent);
    for i in 0..10 {
        trace(Direction::Outgoing, format!("{i}").as_bytes());
    }
    inbox.close(CloseReason::PeerClosed);
    trace(Direction::Outgoing, b"late");
    let mut out = Vec::new();
    inbox.take_urgent(&mut out);
    assert_eq!(out.len(), 10);
    assert!(inbox.take_ordered(&mut out, 10));
    assert_eq!(kinds(&out[9..]), ["t:Outgoing:9", "closed"]);
    drop(inbox);
    trace(Direction::Outgoing, b"freed");
}

#[test]
fn a_batch_that_empties_the_lane_unschedules_it_so_the_next_push_wakes() {
    let (inbox, wakes) = counted(16);
    for i in 0..3 {
        inbox.push_notification(format!("n{i}"), None);
    }
    assert_eq!(wakes.load(Ordering::SeqCst), 1);
    let mut out = Vec::new();
    assert!(inbox.take_ordered_batch(&mut out, 2), "one item is left");
    // Still scheduled: this push wakes nobody.
    inbox.push_notification("n3".into(), None);
    assert_eq!(wakes.load(Ordering::SeqCst), 1);
    assert!(
        !inbox.take_ordered_batch(&mut out, 10),
        "the lane was emptied"
    );
    assert_eq!(kinds(&out), ["n:n0", "n:n1", "n:n2", "n:n3"]);
    // Unscheduled by that batch: the next push wakes the host.
    inbox.push_notification("n4".into(), None);
    assert_eq!(wakes.load(Ordering::SeqCst), 2);
    out.clear();
    assert!(!inbox.take_ordered_batch(&mut out, 10));
    assert_eq!(kinds(&out), ["n:n4"]);
    // Empty: nothing taken, still unscheduled.
    out.clear();
    assert!(!inbox.take_ordered_batch(&mut out, 10));
    assert!(out.is_empty());
    inbox.push_notification("n5".into(), None);
    assert_eq!(wakes.load(Ordering::SeqCst), 3);
}
