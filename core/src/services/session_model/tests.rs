//! The tests of `services/session_model.rs` and its submodules (a file of
//! its own, as `framing/tests.rs`).

use super::*;
use crate::schema::v1;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

fn params(session: &str, update: Value) -> Box<RawValue> {
    RawValue::from_string(json!({"sessionId": session, "update": update}).to_string())
        .expect("json")
}

fn apply(store: &SessionStore, session: &str, update: Value) -> Change {
    store.apply(&params(session, update)).expect("apply")
}

fn chunk(kind: &str, text: &str) -> Value {
    json!({"sessionUpdate": kind, "content": {"type": "text", "text": text}})
}

fn snap(store: &SessionStore, session: &str) -> SessionSnapshot {
    store.snapshot(session).expect("session")
}

fn message(snapshot: &SessionSnapshot, index: usize) -> &MessageEntry {
    snapshot.entries[index].as_message().expect("message entry")
}

fn error_detail(store: &SessionStore, raw: &str) -> String {
    let raw = RawValue::from_string(raw.to_owned()).expect("json");
    let err = store.apply(&raw).expect_err("should be rejected");
    assert_eq!(err.code, crate::codes::INVALID_PARAMS);
    err.data
        .and_then(|d| d.as_str().map(str::to_owned))
        .expect("detail")
}

#[test]
fn store_is_send_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<SessionStore>();
    assert_send_sync::<Arc<SessionStore>>();
    assert_send_sync::<SessionSnapshot>();
    assert_send_sync::<Change>();
}

#[test]
fn text_chunks_of_one_kind_join_into_one_entry() {
    let store = SessionStore::new();
    let first = apply(&store, "s", chunk("agent_message_chunk", "Hel"));
    assert_eq!(first.entry_appended, Some(0));
    assert!(first.session_added);
    let second = apply(&store, "s", chunk("agent_message_chunk", "lo "));
    assert_eq!(second.entry_updated, Some(0));
    assert_eq!(second.entry_appended, None);
    assert!(!second.session_added);
    apply(&store, "s", chunk("agent_message_chunk", "world"));
    let s = snap(&store, "s");
    assert_eq!(s.entries.len(), 1);
    let m = message(&s, 0);
    assert_eq!(m.kind, MessageKind::Agent);
    assert_eq!(m.text(), "Hello world");
    assert_eq!(
        m.content,
        vec![json!({"type": "text", "text": "Hello world"})]
    );
}

#[test]
fn text_after_an_image_is_a_new_block_in_the_same_entry() {
    let store = SessionStore::new();
    apply(&store, "s", chunk("agent_message_chunk", "Look: "));
    let image = json!({"type": "image", "data": "AAAA", "mimeType": "image/png"});
    let c = apply(
        &store,
        "s",
        json!({"sessionUpdate": "agent_message_chunk", "content": image}),
    );
    assert_eq!(c.entry_updated, Some(0));
    apply(&store, "s", chunk("agent_message_chunk", "nice"));
    apply(&store, "s", chunk("agent_message_chunk", "!"));
    let s = snap(&store, "s");
    assert_eq!(s.entries.len(), 1);
    let m = message(&s, 0);
    assert_eq!(
        m.content,
        vec![
            json!({"type": "text", "text": "Look: "}),
            image,
            json!({"type": "text", "text": "nice!"}),
        ]
    );
    assert_eq!(m.text(), "Look: nice!");
    assert_eq!(m.typed_content().len(), 3);
}

#[test]
fn text_blocks_with_different_annotations_are_not_joined() {
    let store = SessionStore::new();
    apply(&store, "s", chunk("agent_message_chunk", "a"));
    let annotated = json!({"type": "text", "text": "b", "annotations": {"priority": 1.0}});
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "agent_message_chunk", "content": annotated}),
    );
    let s = snap(&store, "s");
    let m = message(&s, 0);
    assert_eq!(m.content.len(), 2);
    assert_eq!(m.content[1], annotated);
    assert_eq!(m.text(), "ab");
}

#[test]
fn unknown_content_block_type_is_kept_raw() {
    let store = SessionStore::new();
    let block = json!({"type": "hologram", "frames": [1, 2]});
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "user_message_chunk", "content": block}),
    );
    let s = snap(&store, "s");
    assert_eq!(message(&s, 0).content, vec![block]);
    assert!(message(&s, 0).typed_content().is_empty());
}

#[test]
fn kind_switches_start_new_entries() {
    let store = SessionStore::new();
    apply(&store, "s", chunk("user_message_chunk", "hi"));
    apply(&store, "s", chunk("agent_thought_chunk", "hmm"));
    apply(&store, "s", chunk("agent_thought_chunk", "..."));
    let c = apply(&store, "s", chunk("agent_message_chunk", "hello"));
    assert_eq!(c.entry_appended, Some(2));
    apply(&store, "s", chunk("agent_thought_chunk", "again"));
    let s = snap(&store, "s");
    let kinds: Vec<_> = s
        .entries
        .iter()
        .map(|e| e.as_message().expect("message").kind)
        .collect();
    assert_eq!(
        kinds,
        [
            MessageKind::User,
            MessageKind::Thought,
            MessageKind::Agent,
            MessageKind::Thought
        ]
    );
    assert_eq!(message(&s, 1).text(), "hmm...");
    assert_eq!(message(&s, 3).text(), "again");
}

#[test]
fn a_new_message_id_starts_a_new_entry() {
    let store = SessionStore::new();
    let with_id = |text: &str, id: &str| {
        json!({"sessionUpdate": "agent_message_chunk", "messageId": id,
               "content": {"type": "text", "text": text}})
    };
    apply(&store, "s", with_id("one", "m1"));
    apply(&store, "s", with_id(" more", "m1"));
    apply(&store, "s", chunk("agent_message_chunk", " (no id)"));
    apply(&store, "s", with_id("two", "m2"));
    let s = snap(&store, "s");
    assert_eq!(s.entries.len(), 2);
    assert_eq!(message(&s, 0).text(), "one more (no id)");
    assert_eq!(message(&s, 0).message_id.as_deref(), Some("m1"));
    assert_eq!(message(&s, 1).message_id.as_deref(), Some("m2"));
}

#[test]
fn tool_call_is_created_and_merged_by_partial_updates() {
    let store = SessionStore::new();
    apply(&store, "s", chunk("agent_message_chunk", "Let me read it."));
    let c = apply(
        &store,
        "s",
        json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read file",
               "kind": "read", "locations": [{"path": "/a.rs", "line": 3}],
               "rawInput": {"path": "/a.rs"}}),
    );
    assert_eq!(c.entry_appended, Some(1));
    assert_eq!(c.tool_calls, ["t1"]);
    let t = store.tool_call("s", "t1").expect("tool call");
    assert_eq!(t.status, ToolCallStatus::Pending);
    assert_eq!(t.kind, "read");
    assert_eq!(t.kind_typed(), v1::ToolKind::Read);
    assert_eq!(t.entry_index, 1);

    let c = apply(
        &store,
        "s",
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress"}),
    );
    assert_eq!(c.tool_calls, ["t1"]);
    assert_eq!(c.entry_appended, None);
    let t = store.tool_call("s", "t1").expect("tool call");
    assert_eq!(t.status, ToolCallStatus::InProgress);
    assert_eq!(t.title, "Read file");
    assert_eq!(t.locations.len(), 1);

    apply(
        &store,
        "s",
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": "Read /a.rs",
               "content": [{"type": "content", "content": {"type": "text", "text": "v1"}}]}),
    );
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed",
               "content": [{"type": "content", "content": {"type": "text", "text": "v2"}}],
               "rawOutput": {"bytes": 42}, "title": null}),
    );
    let t = store.tool_call("s", "t1").expect("tool call");
    assert_eq!(t.status, ToolCallStatus::Completed);
    assert_eq!(t.title, "Read /a.rs", "null does not clear");
    assert_eq!(
        t.content,
        vec![json!({"type": "content", "content": {"type": "text", "text": "v2"}})]
    );
    assert_eq!(t.typed_content().len(), 1);
    assert_eq!(t.raw_output, Some(json!({"bytes": 42})));
    assert_eq!(t.raw_input, Some(json!({"path": "/a.rs"})));
    assert_eq!(t.typed_locations().len(), 1);

    // A later agent message is a new entry after the tool call.
    apply(&store, "s", chunk("agent_message_chunk", "Done."));
    let s = snap(&store, "s");
    assert_eq!(s.entries.len(), 3);
    assert_eq!(s.entries[1].tool_call_id(), Some("t1"));
    assert_eq!(message(&s, 2).text(), "Done.");
}

#[test]
fn update_for_an_unknown_id_creates_the_tool_call() {
    let store = SessionStore::new();
    let c = apply(
        &store,
        "s",
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "ghost", "status": "failed"}),
    );
    assert!(c.session_added);
    assert_eq!(c.entry_appended, Some(0));
    assert_eq!(c.tool_calls, ["ghost"]);
    let s = snap(&store, "s");
    let t = s.tool_call("ghost").expect("created");
    assert_eq!(t.status, ToolCallStatus::Failed);
    assert_eq!(t.title, "");
    assert_eq!(t.kind, "other");
    assert_eq!(s.entries[0].tool_call_id(), Some("ghost"));
}

#[test]
fn repeated_tool_call_restarts_it_in_place_and_order_is_first_seen() {
    let store = SessionStore::new();
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "tool_call", "toolCallId": "a", "title": "A", "rawInput": 1}),
    );
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "tool_call", "toolCallId": "b", "title": "B"}),
    );
    let c = apply(
        &store,
        "s",
        json!({"sessionUpdate": "tool_call", "toolCallId": "a", "title": "A2", "status": "in_progress"}),
    );
    assert_eq!(c.entry_appended, None);
    let s = snap(&store, "s");
    let ids: Vec<_> = s
        .tool_calls
        .iter()
        .map(|t| t.tool_call_id.as_str())
        .collect();
    assert_eq!(ids, ["a", "b"]);
    assert_eq!(s.entries.len(), 2);
    let a = s.tool_call("a").expect("a");
    assert_eq!(a.title, "A2");
    assert_eq!(a.raw_input, None);
    assert_eq!(a.entry_index, 0);
    assert_eq!(a.status, ToolCallStatus::InProgress);
}

#[test]
fn plan_is_replaced_whole() {
    let store = SessionStore::new();
    let entry = |c: &str| json!({"content": c, "priority": "high", "status": "pending"});
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "plan", "entries": [entry("a"), entry("b")]}),
    );
    let c = apply(
        &store,
        "s",
        json!({"sessionUpdate": "plan", "entries": [entry("c")]}),
    );
    assert!(c.plan);
    assert_eq!(c.entry_appended, None);
    let plan = snap(&store, "s").plan.expect("plan");
    assert_eq!(plan.entries, vec![entry("c")]);
    assert_eq!(plan.typed_entries().len(), 1);
}

#[test]
fn mode_commands_config_info_and_usage() {
    let store = SessionStore::new();
    let c = apply(
        &store,
        "s",
        json!({"sessionUpdate": "current_mode_update", "currentModeId": "code"}),
    );
    assert!(c.mode);
    let commands = json!([{"name": "web", "description": "Search the web",
                           "input": {"hint": "query"}}]);
    let c = apply(
        &store,
        "s",
        json!({"sessionUpdate": "available_commands_update", "availableCommands": commands}),
    );
    assert!(c.commands);
    let options = json!([{"id": "model", "name": "Model", "type": "select",
                          "currentValue": "fast",
                          "options": [{"value": "fast", "name": "Fast"}]}]);
    let c = apply(
        &store,
        "s",
        json!({"sessionUpdate": "config_option_update", "configOptions": options}),
    );
    assert!(c.config);
    let c = apply(
        &store,
        "s",
        json!({"sessionUpdate": "session_info_update", "title": "Fix bug",
               "_meta": {"a": 1}}),
    );
    assert!(c.info);
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "session_info_update", "updatedAt": "2026-01-01T00:00:00Z",
               "_meta": {"b": 2}}),
    );
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "usage_update", "used": 10, "size": 100}),
    );
    let c = apply(
        &store,
        "s",
        json!({"sessionUpdate": "usage_update", "used": 20, "size": 100,
               "cost": {"amount": 0.5, "currency": "USD"}}),
    );
    assert!(c.usage);
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "current_mode_update", "currentModeId": "architect"}),
    );

    let s = snap(&store, "s");
    assert!(s.entries.is_empty());
    assert_eq!(s.current_mode_id(), Some("architect"));
    let cmds = s.commands.as_ref().expect("commands");
    assert_eq!(Value::Array(cmds.available_commands.clone()), commands);
    assert_eq!(cmds.typed().len(), 1);
    let config = s.config.as_ref().expect("config");
    assert_eq!(Value::Array(config.config_options.clone()), options);
    assert_eq!(s.info.title.as_deref(), Some("Fix bug"));
    assert_eq!(s.info.updated_at.as_deref(), Some("2026-01-01T00:00:00Z"));
    assert_eq!(
        s.info.meta.clone().map(Value::Object),
        Some(json!({"a": 1, "b": 2}))
    );
    let usage = s.usage.as_ref().expect("usage");
    assert_eq!((usage.used, usage.size), (20, 100));
    assert_eq!(usage.cost, Some(json!({"amount": 0.5, "currency": "USD"})));
    assert!(usage.typed_cost().is_some());

    // `null` clears an info field, absence leaves it.
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "session_info_update", "title": null}),
    );
    let info = snap(&store, "s").info;
    assert_eq!(info.title, None);
    assert_eq!(info.updated_at.as_deref(), Some("2026-01-01T00:00:00Z"));
}

#[test]
fn unknown_variants_are_kept_raw_in_order() {
    let store = SessionStore::new();
    let hologram = json!({"sessionUpdate": "hologram", "frames": [1, 2], "_meta": {"x": 1}});
    let future = json!({"sessionUpdate": "session_poll", "message": "heads up"});
    let c = apply(&store, "s", hologram.clone());
    assert!(c.unknown);
    assert!(c.session_added);
    let c = apply(&store, "s", future.clone());
    assert!(c.unknown);
    assert!(!c.notices);
    let s = snap(&store, "s");
    assert_eq!(s.unknown, vec![hologram, future]);
    assert!(s.entries.is_empty());
    assert!(s.notices.is_empty());
}

#[test]
fn unknown_and_mistyped_fields_of_known_variants_are_preserved() {
    let store = SessionStore::new();
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "a"},
               "_meta": {"trace": "1"}, "vendorField": 7}),
    );
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "b"},
               "_meta": {"span": "2"}, "messageId": 5}),
    );
    let s = snap(&store, "s");
    let m = message(&s, 0);
    assert_eq!(m.text(), "ab");
    assert_eq!(
        m.meta.clone().map(Value::Object),
        Some(json!({"trace": "1", "span": "2"}))
    );
    assert_eq!(
        Value::Object(m.extra.clone()),
        json!({"vendorField": 7, "messageId": 5})
    );
    assert_eq!(m.message_id, None);

    apply(
        &store,
        "s",
        json!({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "T",
               "name": "read_file", "status": 5, "_meta": {"a": 1}}),
    );
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "t",
               "status": "blocked", "kind": "teleport", "_meta": {"b": 2}, "progress": 0.5}),
    );
    let t = store.tool_call("s", "t").expect("tool call");
    assert_eq!(t.status, ToolCallStatus::Other("blocked".into()));
    assert_eq!(t.kind, "teleport");
    assert_eq!(t.kind_typed(), v1::ToolKind::Other);
    assert_eq!(
        t.meta.clone().map(Value::Object),
        Some(json!({"a": 1, "b": 2}))
    );
    assert_eq!(
        Value::Object(t.extra.clone()),
        json!({"name": "read_file", "status": 5, "progress": 0.5})
    );

    apply(
        &store,
        "s",
        json!({"sessionUpdate": "plan", "entries": [], "_meta": {"p": true}, "extra": 1}),
    );
    let plan = snap(&store, "s").plan.expect("plan");
    assert_eq!(plan.meta.map(Value::Object), Some(json!({"p": true})));
    assert_eq!(Value::Object(plan.extra), json!({"extra": 1}));
}

#[test]
fn mark_turn_cancelled_only_affects_unfinished_tool_calls() {
    let store = SessionStore::new();
    for (id, status) in [
        ("p", "pending"),
        ("r", "in_progress"),
        ("c", "completed"),
        ("f", "failed"),
        ("x", "mystery"),
    ] {
        apply(
            &store,
            "s",
            json!({"sessionUpdate": "tool_call", "toolCallId": id, "title": id, "status": status}),
        );
    }
    apply(
        &store,
        "other",
        json!({"sessionUpdate": "tool_call", "toolCallId": "o", "title": "o"}),
    );
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&calls);
    store.subscribe(move |_| {
        seen.fetch_add(1, Ordering::SeqCst);
    });
    let change = store.mark_turn_cancelled("s");
    assert_eq!(change.session_id, "s");
    assert_eq!(change.tool_calls, ["p", "r", "x"]);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let s = snap(&store, "s");
    let status = |id: &str| s.tool_call(id).expect("tool call").status.clone();
    assert_eq!(status("p"), ToolCallStatus::Cancelled);
    assert_eq!(status("r"), ToolCallStatus::Cancelled);
    assert_eq!(status("x"), ToolCallStatus::Cancelled);
    assert_eq!(status("c"), ToolCallStatus::Completed);
    assert_eq!(status("f"), ToolCallStatus::Failed);
    assert_eq!(
        store.tool_call("other", "o").expect("o").status,
        ToolCallStatus::Pending
    );

    // Nothing left to cancel, or an unknown session: empty, not notified.
    assert!(store.mark_turn_cancelled("s").is_empty());
    assert!(store.mark_turn_cancelled("nope").is_empty());
    assert!(store.snapshot("nope").is_none());
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    // The agent's late word still wins.
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "r", "status": "completed"}),
    );
    assert_eq!(
        store.tool_call("s", "r").expect("r").status,
        ToolCallStatus::Completed
    );
}

#[test]
fn snapshot_json_has_the_documented_shape() {
    let store = SessionStore::new();
    apply(&store, "s", chunk("user_message_chunk", "hi"));
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "agent_message_chunk", "messageId": "m1",
               "content": {"type": "text", "text": "ok"}, "_meta": {"k": 1}}),
    );
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Run",
               "kind": "execute", "rawInput": {"cmd": "ls"}}),
    );
    store.mark_turn_cancelled("s");
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "plan", "entries": [{"content": "x", "priority": "low", "status": "pending"}]}),
    );
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "current_mode_update", "currentModeId": "ask"}),
    );
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "usage_update", "used": 1, "size": 2}),
    );
    apply(&store, "s", json!({"sessionUpdate": "future", "x": 1}));

    let expected = json!({
        "sessionId": "s",
        "entries": [
            {"type": "user_message", "messageId": null, "text": "hi",
             "content": [{"type": "text", "text": "hi"}], "_meta": null, "extra": {}},
            {"type": "agent_message", "messageId": "m1", "text": "ok",
             "content": [{"type": "text", "text": "ok"}], "_meta": {"k": 1}, "extra": {}},
            {"type": "tool_call", "toolCallId": "t1"}
        ],
        "toolCalls": [
            {"toolCallId": "t1", "title": "Run", "kind": "execute", "status": "cancelled",
             "content": [], "locations": [], "rawInput": {"cmd": "ls"}, "rawOutput": null,
             "entryIndex": 2, "_meta": null, "extra": {}}
        ],
        "plan": {"entries": [{"content": "x", "priority": "low", "status": "pending"}],
                 "_meta": null, "extra": {}},
        "mode": {"currentModeId": "ask", "_meta": null, "extra": {}},
        "commands": null,
        "config": null,
        "info": {"title": null, "updatedAt": null, "_meta": null, "extra": {}},
        "usage": {"used": 1, "size": 2, "cost": null, "_meta": null, "extra": {}},
        "compactions": [],
        "notices": [],
        "noticesDropped": 0,
        "plans": [],
        "subagents": [],
        "unknown": [{"sessionUpdate": "future", "x": 1}]
    });
    let json = store.snapshot_json("s").expect("session");
    assert_eq!(json, expected);
    assert_eq!(
        serde_json::to_value(snap(&store, "s")).expect("serialize"),
        expected
    );
    assert_eq!(
        store.entry_json("s", 2),
        Some(expected["entries"][2].clone())
    );
    assert_eq!(
        store.tool_call_json("s", "t1"),
        Some(expected["toolCalls"][0].clone())
    );
    assert_eq!(store.entry_json("s", 3), None);
    assert!(store.snapshot_json("missing").is_none());
}

#[test]
fn change_json_has_the_documented_shape() {
    let store = SessionStore::new();
    let c = apply(
        &store,
        "s",
        json!({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "T"}),
    );
    assert_eq!(
        serde_json::to_value(&c).expect("serialize"),
        json!({"sessionId": "s", "sessionAdded": true, "sessionRemoved": false,
               "entryAppended": 0, "entryUpdated": null, "toolCalls": ["t"],
               "plan": false, "mode": false, "commands": false, "config": false,
               "info": false, "usage": false, "compactions": [], "notices": false,
               "plans": [], "subagents": [], "unknown": false})
    );
}

#[test]
fn subscribers_get_each_change_in_order() {
    let store = Arc::new(SessionStore::new());
    let log = Arc::new(Mutex::new(Vec::<Change>::new()));
    let sink = Arc::clone(&log);
    let reader = Arc::clone(&store);
    let id = store.subscribe(move |change| {
        // Reading the store from the callback is allowed.
        assert!(reader.snapshot(&change.session_id).is_some() || change.session_removed);
        sink.lock().expect("log").push(change.clone());
    });
    let a = apply(&store, "s", chunk("agent_message_chunk", "a"));
    let b = apply(&store, "s", chunk("agent_message_chunk", "b"));
    let p = apply(&store, "s", json!({"sessionUpdate": "plan", "entries": []}));
    assert!(store.remove("s"));
    assert!(!store.remove("s"));
    {
        let log = log.lock().expect("log");
        assert_eq!(log.len(), 4);
        assert_eq!(log[0], a);
        assert_eq!(log[0].entry_appended, Some(0));
        assert_eq!(log[1], b);
        assert_eq!(log[1].entry_updated, Some(0));
        assert_eq!(log[2], p);
        assert!(log[2].plan);
        assert!(log[3].session_removed);
    }
    assert!(store.unsubscribe(id));
    assert!(!store.unsubscribe(id));
    apply(&store, "s", chunk("agent_message_chunk", "c"));
    assert_eq!(log.lock().expect("log").len(), 4);
}

#[test]
fn a_callback_may_mutate_the_store_without_deadlock() {
    let store = Arc::new(SessionStore::new());
    let log = Arc::new(Mutex::new(Vec::<(String, bool)>::new()));
    let sink = Arc::clone(&log);
    let inner = Arc::clone(&store);
    store.subscribe(move |change| {
        sink.lock()
            .expect("log")
            .push((change.session_id.clone(), change.plan));
        if change.session_id == "a" && change.plan {
            inner
                .apply(&params(
                    "b",
                    json!({"sessionUpdate": "plan", "entries": []}),
                ))
                .expect("nested apply");
            inner.mark_turn_cancelled("a");
        }
    });
    apply(&store, "a", json!({"sessionUpdate": "plan", "entries": []}));
    let log = log.lock().expect("log");
    assert_eq!(*log, [("a".to_owned(), true), ("b".to_owned(), true)]);
    assert!(store.snapshot("b").is_some());
}

#[test]
fn a_panicking_callback_does_not_stop_later_deliveries() {
    let store = SessionStore::new();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&count);
    store.subscribe(move |change| {
        seen.fetch_add(1, Ordering::SeqCst);
        assert!(!change.plan, "boom");
    });
    let store = std::panic::AssertUnwindSafe(store);
    let result = std::panic::catch_unwind(|| {
        store.apply(&params(
            "s",
            json!({"sessionUpdate": "plan", "entries": []}),
        ))
    });
    assert!(result.is_err());
    apply(&store, "s", chunk("agent_message_chunk", "x"));
    assert_eq!(count.load(Ordering::SeqCst), 2);
    assert_eq!(snap(&store, "s").entries.len(), 1);
}

#[test]
fn sessions_are_isolated() {
    let store = SessionStore::new();
    apply(&store, "a", chunk("agent_message_chunk", "for a"));
    apply(&store, "b", chunk("agent_message_chunk", "for b"));
    apply(
        &store,
        "a",
        json!({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "in a"}),
    );
    let c = apply(
        &store,
        "b",
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "t", "title": "in b"}),
    );
    assert_eq!(c.entry_appended, Some(1), "b has its own tool call t");
    apply(
        &store,
        "b",
        json!({"sessionUpdate": "current_mode_update", "currentModeId": "x"}),
    );
    assert_eq!(store.session_ids(), ["a", "b"]);
    let a = snap(&store, "a");
    let b = snap(&store, "b");
    assert_eq!(message(&a, 0).text(), "for a");
    assert_eq!(message(&b, 0).text(), "for b");
    assert_eq!(a.tool_call("t").expect("t").title, "in a");
    assert_eq!(b.tool_call("t").expect("t").title, "in b");
    assert_eq!(a.current_mode_id(), None);
    assert_eq!(b.current_mode_id(), Some("x"));

    assert!(store.remove("a"));
    assert!(store.snapshot("a").is_none());
    assert!(store.snapshot("b").is_some());
    let c = apply(&store, "a", chunk("agent_message_chunk", "fresh"));
    assert!(c.session_added);
    assert_eq!(snap(&store, "a").entries.len(), 1);
}

#[test]
fn concurrent_appliers_on_many_threads() {
    let store = Arc::new(SessionStore::new());
    let delivered = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&delivered);
    store.subscribe(move |_| {
        seen.fetch_add(1, Ordering::SeqCst);
    });
    let threads: Vec<_> = (0..4)
        .map(|n| {
            let store = Arc::clone(&store);
            std::thread::spawn(move || {
                for _ in 0..100 {
                    apply(&store, &format!("s{n}"), chunk("agent_message_chunk", "x"));
                    apply(&store, "shared", chunk("agent_message_chunk", "y"));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("thread");
    }
    assert_eq!(delivered.load(Ordering::SeqCst), 800);
    assert_eq!(message(&snap(&store, "shared"), 0).text().len(), 400);
    assert_eq!(message(&snap(&store, "s3"), 0).text(), "x".repeat(100));
}

#[test]
fn invalid_envelopes_are_rejected_precisely() {
    let store = SessionStore::new();
    let cases = [
        ("[1]", "params must be an object, got an array"),
        (
            r#"{"update": {"sessionUpdate": "plan", "entries": []}}"#,
            "missing `sessionId`",
        ),
        (
            r#"{"sessionId": 1, "update": {}}"#,
            "`sessionId` must be a string, got a number",
        ),
        (r#"{"sessionId": "s"}"#, "missing `update`"),
        (
            r#"{"sessionId": "s", "update": "plan"}"#,
            "`update` must be an object, got a string",
        ),
        (
            r#"{"sessionId": "s", "update": {"entries": []}}"#,
            "missing `update.sessionUpdate`",
        ),
        (
            r#"{"sessionId": "s", "update": {"sessionUpdate": null}}"#,
            "`update.sessionUpdate` must be a string, got null",
        ),
    ];
    for (raw, detail) in cases {
        assert_eq!(
            error_detail(&store, raw),
            format!("session/update: {detail}"),
            "{raw}"
        );
    }
    assert!(store.session_ids().is_empty());
}

#[test]
fn known_variants_missing_what_the_fold_needs_are_rejected_without_side_effects() {
    let store = SessionStore::new();
    let cases = [
        (
            json!({"sessionUpdate": "agent_message_chunk"}),
            "`update.content` is required in `agent_message_chunk` and must be a ContentBlock object",
        ),
        (
            json!({"sessionUpdate": "user_message_chunk", "content": "hi"}),
            "`update.content` in `user_message_chunk` must be a ContentBlock object, got a string",
        ),
        (
            json!({"sessionUpdate": "tool_call", "title": "x"}),
            "`update.toolCallId` is required in `tool_call` and must be a string",
        ),
        (
            json!({"sessionUpdate": "tool_call_update", "toolCallId": 3}),
            "`update.toolCallId` in `tool_call_update` must be a string, got a number",
        ),
        (
            json!({"sessionUpdate": "current_mode_update"}),
            "`update.currentModeId` is required in `current_mode_update` and must be a string",
        ),
        (
            json!({"sessionUpdate": "usage_update", "used": -1, "size": 3}),
            "`update.used` in `usage_update` must be a non-negative integer, got a number",
        ),
        (
            json!({"sessionUpdate": "usage_update", "used": 1}),
            "`update.size` is required in `usage_update` and must be a non-negative integer",
        ),
        (
            json!({"sessionUpdate": "compaction_update", "status": "in_progress"}),
            "`update.compactionId` is required in `compaction_update` and must be a string",
        ),
        (
            json!({"sessionUpdate": "compaction_update", "compactionId": 3}),
            "`update.compactionId` in `compaction_update` must be a string, got a number",
        ),
        (
            json!({"sessionUpdate": "compaction_summary_chunk", "compactionId": "c"}),
            "`update.content` is required in `compaction_summary_chunk` and must be a ContentBlock object",
        ),
        (
            json!({"sessionUpdate": "compaction_summary_chunk",
                   "content": {"type": "text", "text": "x"}}),
            "`update.compactionId` is required in `compaction_summary_chunk` and must be a string",
        ),
        (
            json!({"sessionUpdate": "notice", "title": "T"}),
            "`update.severity` is required in `notice` and must be a string",
        ),
        (
            json!({"sessionUpdate": "notice", "severity": "info", "title": 5}),
            "`update.title` in `notice` must be a string, got a number",
        ),
        (
            json!({"sessionUpdate": "plan_update"}),
            "`update.plan` is required in `plan_update` and must be a PlanUpdateContent object",
        ),
        (
            json!({"sessionUpdate": "plan_update", "plan": "markdown"}),
            "`update.plan` in `plan_update` must be a PlanUpdateContent object, got a string",
        ),
        (
            json!({"sessionUpdate": "plan_update", "plan": {"type": "markdown", "content": "x"}}),
            "`update.plan.planId` is required in `plan_update` and must be a string",
        ),
        (
            json!({"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": 1}}),
            "`update.plan.planId` in `plan_update` must be a string, got a number",
        ),
        (
            json!({"sessionUpdate": "plan_removed"}),
            "`update.planId` is required in `plan_removed` and must be a string",
        ),
        (
            json!({"sessionUpdate": "subagent_update", "title": "child"}),
            "`update.sessionId` is required in `subagent_update` and must be a string",
        ),
        (
            json!({"sessionUpdate": "session_message", "content": []}),
            "`update.messageId` is required in `session_message` and must be a string",
        ),
        (
            json!({"sessionUpdate": "session_message_chunk", "messageId": 1,
                   "content": {"type": "text", "text": "x"}}),
            "`update.messageId` in `session_message_chunk` must be a string, got a number",
        ),
        (
            json!({"sessionUpdate": "session_message_chunk", "messageId": "m",
                   "content": null}),
            "`update.content` in `session_message_chunk` must be a ContentBlock object, got null",
        ),
    ];
    for (update, detail) in cases {
        let raw = json!({"sessionId": "s", "update": update}).to_string();
        assert_eq!(
            error_detail(&store, &raw),
            format!("session/update: {detail}")
        );
    }
    assert!(store.snapshot("s").is_none(), "nothing was created");
}

#[test]
fn lenient_defaults_for_optional_and_missing_fields() {
    let store = SessionStore::new();
    // No title, no status: accepted with schema defaults.
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "tool_call", "toolCallId": "t"}),
    );
    // Missing or mistyped lists read as empty; the mistyped value is kept.
    apply(&store, "s", json!({"sessionUpdate": "plan"}));
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "available_commands_update", "availableCommands": {"no": 1}}),
    );
    let s = snap(&store, "s");
    let t = s.tool_call("t").expect("t");
    assert_eq!(
        (t.title.as_str(), &t.status),
        ("", &ToolCallStatus::Pending)
    );
    assert!(s.plan.expect("plan").entries.is_empty());
    let commands = s.commands.expect("commands");
    assert!(commands.available_commands.is_empty());
    assert_eq!(
        Value::Object(commands.extra),
        json!({"availableCommands": {"no": 1}})
    );
}

#[test]
fn status_conversions() {
    for s in [
        "pending",
        "in_progress",
        "completed",
        "failed",
        "cancelled",
        "weird",
    ] {
        assert_eq!(ToolCallStatus::from_wire(s).as_str(), s);
    }
    assert_eq!(
        ToolCallStatus::from(v1::ToolCallStatus::InProgress),
        ToolCallStatus::InProgress
    );
    assert!(!ToolCallStatus::Other("x".into()).is_finished());
    assert!(ToolCallStatus::Cancelled.is_finished());
}

// ---------------------------------------------------------------------------
// Compactions, notices, plans by id, subagents, inter-session messages
// ---------------------------------------------------------------------------

fn meta_of(meta: &Option<JsonObject>) -> Option<Value> {
    meta.clone().map(Value::Object)
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

fn compaction(store: &SessionStore, id: &str) -> CompactionState {
    store.compaction("s", id).expect("compaction")
}

fn subagent(store: &SessionStore, id: &str) -> SubagentState {
    store.subagent("s", id).expect("subagent")
}

fn session_message(store: &SessionStore, id: &str) -> SessionMessageEntry {
    snap(store, "s")
        .session_message(id)
        .cloned()
        .expect("session message")
}

#[test]
fn compaction_update_upserts_in_the_place_it_first_appeared() {
    let store = SessionStore::new();
    apply(&store, "s", chunk("agent_message_chunk", "before"));
    let c = apply(
        &store,
        "s",
        json!({"sessionUpdate": "compaction_update", "compactionId": "c1",
               "status": "in_progress"}),
    );
    assert_eq!(c.entry_appended, Some(1));
    assert_eq!(c.entry_updated, None);
    assert_eq!(c.compactions, ["c1"]);
    assert!(c.tool_calls.is_empty());
    // The compaction ends the agent message: "after" is a new entry.
    let c = apply(&store, "s", chunk("agent_message_chunk", "after"));
    assert_eq!(c.entry_appended, Some(2));
    assert!(c.compactions.is_empty());
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "compaction_update", "compactionId": "c2",
               "status": "in_progress"}),
    );
    let c = apply(
        &store,
        "s",
        json!({"sessionUpdate": "compaction_update", "compactionId": "c1",
               "status": "completed", "summary": [text_block("Summary")]}),
    );
    assert_eq!(c.entry_appended, None, "a later update does not move it");
    assert_eq!(c.entry_updated, None);
    assert_eq!(c.compactions, ["c1"]);

    let s = snap(&store, "s");
    assert_eq!(s.entries.len(), 4);
    assert_eq!(message(&s, 0).text(), "before");
    assert_eq!(s.entries[1].compaction_id(), Some("c1"));
    assert_eq!(message(&s, 2).text(), "after");
    assert_eq!(s.entries[3].compaction_id(), Some("c2"));
    assert_eq!(s.entries[1].as_message(), None);
    assert_eq!(s.entries[1].tool_call_id(), None);
    let ids: Vec<_> = s
        .compactions
        .iter()
        .map(|c| c.compaction_id.as_str())
        .collect();
    assert_eq!(ids, ["c1", "c2"]);
    let c1 = s.compaction("c1").expect("c1");
    assert_eq!(c1.status, "completed");
    assert_eq!(c1.status_typed(), v1::CompactionStatus::Completed);
    assert!(c1.is_finished());
    assert_eq!(c1.entry_index, 1);
    assert_eq!(c1.summary, vec![text_block("Summary")]);
    assert_eq!(c1.summary_text(), "Summary");
    assert_eq!(c1.typed_summary().len(), 1);
    assert_eq!(s.compaction("c2").expect("c2").entry_index, 3);
    assert!(!s.compaction("c2").expect("c2").is_finished());
    assert!(s.compaction("nope").is_none());
    assert!(store.compaction("s", "nope").is_none());
    assert!(store.compaction("other", "c1").is_none());
}

#[test]
fn compaction_summary_error_and_meta_are_patches() {
    let store = SessionStore::new();
    let update = |extra: Value| {
        let mut update = json!({"sessionUpdate": "compaction_update", "compactionId": "c",
                                "status": "in_progress"});
        for (k, v) in extra.as_object().expect("object") {
            update[k] = v.clone();
        }
        apply(&store, "s", update)
    };
    update(json!({"summary": [text_block("a")], "error": "boom", "_meta": {"x": 1}}));
    // Omitted: unchanged.
    let c = update(json!({"status": "failed"}));
    assert_eq!(c.compactions, ["c"]);
    let got = compaction(&store, "c");
    assert_eq!(got.status, "failed");
    assert_eq!(got.summary, vec![text_block("a")]);
    assert_eq!(got.error.as_deref(), Some("boom"));
    assert_eq!(meta_of(&got.meta), Some(json!({"x": 1})));
    // A value replaces, whole (`_meta` is not merged).
    update(
        json!({"summary": [text_block("b"), text_block("c")], "error": "again",
                  "_meta": {"y": 2}}),
    );
    let got = compaction(&store, "c");
    assert_eq!(got.summary, vec![text_block("b"), text_block("c")]);
    assert_eq!(got.error.as_deref(), Some("again"));
    assert_eq!(meta_of(&got.meta), Some(json!({"y": 2})));
    // `null` clears.
    update(json!({"error": null, "_meta": null}));
    let got = compaction(&store, "c");
    assert_eq!(got.error, None);
    assert_eq!(got.meta, None);
    assert_eq!(got.summary.len(), 2, "summary omitted: unchanged");
    update(json!({"summary": null}));
    assert!(compaction(&store, "c").summary.is_empty());
    // `[]` clears too.
    update(json!({"summary": [text_block("d")]}));
    assert_eq!(compaction(&store, "c").summary.len(), 1);
    update(json!({"summary": []}));
    let got = compaction(&store, "c");
    assert!(got.summary.is_empty());
    assert_eq!(got.summary_text(), "");
    assert!(got.extra.is_empty());
    assert_eq!(snap(&store, "s").entries.len(), 1);
}

#[test]
fn compaction_summary_chunks_append_and_create_in_progress() {
    let store = SessionStore::new();
    apply(&store, "s", chunk("user_message_chunk", "compact please"));
    let summary_chunk = |content: Value, meta: Value| {
        apply(
            &store,
            "s",
            json!({"sessionUpdate": "compaction_summary_chunk", "compactionId": "c",
                   "content": content, "_meta": meta}),
        )
    };
    // A first-seen id creates an in-progress compaction, placed here.
    let c = summary_chunk(text_block("Sum"), json!({"k": 1}));
    assert_eq!(c.entry_appended, Some(1));
    assert_eq!(c.compactions, ["c"]);
    let got = compaction(&store, "c");
    assert_eq!(got.status, "in_progress");
    assert_eq!(got.status_typed(), v1::CompactionStatus::InProgress);
    assert_eq!(got.entry_index, 1);
    // Chunks append in order; adjacent text joins; chunk `_meta` is merged
    // into `chunk_meta`, not into the compaction's `_meta`.
    let c = summary_chunk(text_block("mary"), json!({"j": 2}));
    assert_eq!(c.entry_appended, None);
    assert_eq!(c.compactions, ["c"]);
    let image = json!({"type": "image", "data": "AAAA", "mimeType": "image/png"});
    summary_chunk(image.clone(), Value::Null);
    let got = compaction(&store, "c");
    assert_eq!(got.summary, vec![text_block("Summary"), image.clone()]);
    assert_eq!(got.summary_text(), "Summary");
    assert_eq!(meta_of(&got.chunk_meta), Some(json!({"k": 1, "j": 2})));
    assert_eq!(got.meta, None);
    // An update without `summary` keeps what chunks appended.
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "compaction_update", "compactionId": "c",
               "status": "completed", "_meta": {"m": true}}),
    );
    let got = compaction(&store, "c");
    assert_eq!(got.summary.len(), 2);
    assert_eq!(got.status, "completed");
    assert_eq!(meta_of(&got.meta), Some(json!({"m": true})));
    assert_eq!(meta_of(&got.chunk_meta), Some(json!({"k": 1, "j": 2})));
    // An update with `summary` replaces everything; later chunks append to it.
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "compaction_update", "compactionId": "c",
               "status": "completed", "summary": [text_block("Final")]}),
    );
    summary_chunk(text_block("!"), Value::Null);
    let got = compaction(&store, "c");
    assert_eq!(got.summary, vec![text_block("Final!")]);
    let s = snap(&store, "s");
    assert_eq!(s.entries.len(), 2);
    assert_eq!(s.compactions.len(), 1);
}

#[test]
fn compaction_wrong_types_fall_back_and_are_kept_in_extra() {
    let store = SessionStore::new();
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "compaction_update", "compactionId": "c", "status": "failed",
               "summary": [text_block("keep")], "error": "kept", "_meta": {"a": 1}}),
    );
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "compaction_update", "compactionId": "c", "status": 5,
               "summary": "nope", "error": 7, "_meta": "m", "vendor": {"v": 1}}),
    );
    let got = compaction(&store, "c");
    assert_eq!(got.status, "failed", "a mistyped status is no update");
    assert_eq!(got.summary, vec![text_block("keep")]);
    assert_eq!(got.error.as_deref(), Some("kept"));
    assert_eq!(meta_of(&got.meta), Some(json!({"a": 1})));
    assert_eq!(
        Value::Object(got.extra.clone()),
        json!({"status": 5, "summary": "nope", "error": 7, "_meta": "m", "vendor": {"v": 1}})
    );
    // A missing status leaves it too, and a new compaction without one is in
    // progress; a chunk's unknown fields join `extra`.
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "compaction_update", "compactionId": "d"}),
    );
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "compaction_summary_chunk", "compactionId": "d",
               "content": {"type": "hologram"}, "_meta": 4, "chunkNo": 1}),
    );
    let got = compaction(&store, "d");
    assert_eq!(got.status, "in_progress");
    assert_eq!(got.summary, vec![json!({"type": "hologram"})]);
    assert!(got.typed_summary().is_empty(), "kept raw, not decodable");
    assert_eq!(got.chunk_meta, None);
    assert_eq!(
        Value::Object(got.extra.clone()),
        json!({"_meta": 4, "chunkNo": 1})
    );
    // Custom statuses are kept as received; invalid summary items are kept
    // raw too.
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "compaction_update", "compactionId": "d", "status": "_paused",
               "summary": [text_block("ok"), {"type": "text"}]}),
    );
    let got = compaction(&store, "d");
    assert_eq!(got.status, "_paused");
    assert_eq!(
        got.status_typed(),
        v1::CompactionStatus::Other("_paused".into())
    );
    assert!(!got.is_finished());
    assert_eq!(got.summary.len(), 2);
    assert_eq!(got.typed_summary().len(), 1);
    assert_eq!(got.summary_text(), "ok");
}

#[test]
fn notices_stay_out_of_the_conversation() {
    let store = SessionStore::new();
    apply(&store, "s", chunk("agent_message_chunk", "a"));
    let c = apply(
        &store,
        "s",
        json!({"sessionUpdate": "notice", "severity": "warning", "title": "Rate limited",
               "description": "Retrying in 5s", "_meta": {"retry": 5}, "code": 429}),
    );
    assert!(c.notices);
    assert_eq!(c.entry_appended, None);
    assert_eq!(c.entry_updated, None);
    assert!(!c.unknown);
    // The notice does not end the message.
    let c = apply(&store, "s", chunk("agent_message_chunk", "b"));
    assert_eq!(c.entry_updated, Some(0));
    assert!(!c.notices);
    let s = snap(&store, "s");
    assert_eq!(s.entries.len(), 1);
    assert_eq!(message(&s, 0).text(), "ab");
    assert_eq!(s.notices.len(), 1);
    assert_eq!(s.notices_dropped, 0);
    let notice = &s.notices[0];
    assert_eq!(notice.severity, "warning");
    assert_eq!(notice.severity_typed(), v1::NoticeSeverity::Warning);
    assert_eq!(notice.title, "Rate limited");
    assert_eq!(notice.description.as_deref(), Some("Retrying in 5s"));
    assert_eq!(meta_of(&notice.meta), Some(json!({"retry": 5})));
    assert_eq!(Value::Object(notice.extra.clone()), json!({"code": 429}));
    assert!(s.unknown.is_empty());

    // `null` and a wrong type both mean no description / no `_meta`; the
    // wrong-typed values are kept in `extra`. Custom severities are kept.
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "notice", "severity": "_debug", "title": "x",
               "description": null, "_meta": null}),
    );
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "notice", "severity": "error", "title": "y",
               "description": 5, "_meta": [1]}),
    );
    let s = snap(&store, "s");
    assert_eq!(s.notices[1].description, None);
    assert_eq!(s.notices[1].meta, None);
    assert!(s.notices[1].extra.is_empty());
    assert_eq!(
        s.notices[1].severity_typed(),
        v1::NoticeSeverity::Other("_debug".into())
    );
    assert_eq!(s.notices[2].description, None);
    assert_eq!(s.notices[2].meta, None);
    assert_eq!(
        Value::Object(s.notices[2].extra.clone()),
        json!({"description": 5, "_meta": [1]})
    );
    assert_eq!(s.notices[2].severity_typed(), v1::NoticeSeverity::Error);
}

#[test]
fn notices_are_bounded_and_count_what_was_dropped() {
    let store = SessionStore::new();
    let limit = SessionSnapshot::NOTICE_LIMIT;
    assert_eq!(limit, 64);
    let notice =
        |n: usize| json!({"sessionUpdate": "notice", "severity": "info", "title": format!("n{n}")});
    for n in 0..limit {
        assert!(apply(&store, "s", notice(n)).notices);
    }
    let s = snap(&store, "s");
    assert_eq!(s.notices.len(), limit);
    assert_eq!(s.notices_dropped, 0);
    assert_eq!(s.notices[0].title, "n0");
    for n in limit..limit + 6 {
        let c = apply(&store, "s", notice(n));
        assert!(c.notices);
    }
    let s = snap(&store, "s");
    assert_eq!(s.notices.len(), limit);
    assert_eq!(s.notices_dropped, 6);
    assert_eq!(s.notices[0].title, "n6");
    assert_eq!(s.notices[limit - 1].title, format!("n{}", limit + 5));
    let json = store.snapshot_json("s").expect("json");
    assert_eq!(json["noticesDropped"], 6);
    assert_eq!(json["notices"].as_array().expect("array").len(), limit);
    assert_eq!(json["notices"][0]["title"], "n6");
    assert!(s.entries.is_empty());
    // Per session.
    apply(&store, "t", notice(0));
    assert_eq!(snap(&store, "t").notices.len(), 1);
    assert_eq!(snap(&store, "t").notices_dropped, 0);
}

#[test]
fn plans_by_id_are_upserted_and_removed_beside_the_plan() {
    let store = SessionStore::new();
    let entry = |c: &str| json!({"content": c, "priority": "high", "status": "pending"});
    let items = |id: &str, entries: Value| {
        json!({"sessionUpdate": "plan_update",
               "plan": {"type": "items", "planId": id, "entries": entries}})
    };
    let mut first = items("p1", json!([entry("a")]));
    first["_meta"] = json!({"v": 1});
    first["vendor"] = json!(true);
    let c = apply(&store, "s", first);
    assert_eq!(c.plans, ["p1"]);
    assert!(!c.plan, "not the single plan");
    assert_eq!(c.entry_appended, None);
    let markdown = json!({"sessionUpdate": "plan_update",
                          "plan": {"type": "markdown", "planId": "p2", "content": "# Plan"}});
    apply(&store, "s", markdown);
    let p1 = store.plan_by_id("s", "p1").expect("p1");
    assert_eq!(p1.plan_type(), Some("items"));
    assert_eq!(p1.typed_entries().len(), 1);
    assert_eq!(meta_of(&p1.meta), Some(json!({"v": 1})));
    assert_eq!(Value::Object(p1.extra.clone()), json!({"vendor": true}));

    // An update replaces the plan whole, in place.
    let c = apply(&store, "s", items("p1", json!([entry("b"), entry("c")])));
    assert_eq!(c.plans, ["p1"]);
    let s = snap(&store, "s");
    let ids: Vec<_> = s.plans.iter().map(|p| p.plan_id.as_str()).collect();
    assert_eq!(ids, ["p1", "p2"]);
    let p1 = s.plan_by_id("p1").expect("p1");
    assert_eq!(p1.plan["entries"], json!([entry("b"), entry("c")]));
    assert_eq!(p1.typed_entries().len(), 2);
    assert_eq!(p1.meta, None);
    assert!(p1.extra.is_empty());
    let p2 = s.plan_by_id("p2").expect("p2");
    assert_eq!(p2.plan_type(), Some("markdown"));
    assert!(p2.typed_entries().is_empty());
    assert!(s.plan.is_none());

    // The stable `plan` is its own part.
    let c = apply(
        &store,
        "s",
        json!({"sessionUpdate": "plan", "entries": [entry("z")]}),
    );
    assert!(c.plan);
    assert!(c.plans.is_empty());
    assert_eq!(snap(&store, "s").plans.len(), 2);

    // Removal; an unknown id changes nothing and notifies no one.
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&calls);
    store.subscribe(move |_| {
        seen.fetch_add(1, Ordering::SeqCst);
    });
    let c = apply(
        &store,
        "s",
        json!({"sessionUpdate": "plan_removed", "planId": "p1", "_meta": {"why": "done"}}),
    );
    assert_eq!(c.plans, ["p1"]);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(store.plan_by_id("s", "p1").is_none());
    let c = apply(
        &store,
        "s",
        json!({"sessionUpdate": "plan_removed", "planId": "ghost"}),
    );
    assert!(c.is_empty());
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // Re-adding a removed id puts it last; an unknown plan type is kept raw.
    apply(&store, "s", items("p1", json!([])));
    let diagram = json!({"type": "diagram", "planId": "p3", "nodes": [1]});
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "plan_update", "plan": diagram}),
    );
    let s = snap(&store, "s");
    let ids: Vec<_> = s.plans.iter().map(|p| p.plan_id.as_str()).collect();
    assert_eq!(ids, ["p2", "p1", "p3"]);
    assert_eq!(s.plan_by_id("p3").expect("p3").plan, diagram);
    assert!(s.unknown.is_empty());
    assert!(s.entries.is_empty());
    assert_eq!(s.plan.expect("plan").entries, vec![entry("z")]);
}

#[test]
fn subagents_are_patched_field_by_field() {
    let store = SessionStore::new();
    let update = |fields: Value| {
        let mut update = json!({"sessionUpdate": "subagent_update", "sessionId": "child"});
        for (k, v) in fields.as_object().expect("object") {
            update[k] = v.clone();
        }
        apply(&store, "s", update)
    };
    let c = update(json!({"title": "Researcher", "description": "Finds things",
                          "capabilities": {"cancel": {}}, "state": {"state": "running"},
                          "cwd": "/w", "additionalDirectories": ["/a", "/b"],
                          "_meta": {"x": 1}}));
    assert!(c.session_added);
    assert_eq!(c.subagents, ["child"]);
    assert_eq!(c.entry_appended, None);
    let got = subagent(&store, "child");
    assert_eq!(got.title.as_deref(), Some("Researcher"));
    assert_eq!(got.description.as_deref(), Some("Finds things"));
    assert_eq!(got.capabilities, Some(json!({"cancel": {}})));
    assert_eq!(got.state_tag(), Some("running"));
    assert_eq!(got.cwd.as_deref(), Some("/w"));
    assert_eq!(
        got.additional_directories,
        Some(vec!["/a".to_owned(), "/b".to_owned()])
    );
    assert_eq!(meta_of(&got.meta), Some(json!({"x": 1})));

    // Omitted: unchanged; a concrete state replaces the whole state object.
    let idle = json!({"state": "idle", "stopReason": "end_turn", "usage": {"totalTokens": 3}});
    let c = update(json!({"state": idle}));
    assert_eq!(c.subagents, ["child"]);
    let got = subagent(&store, "child");
    assert_eq!(got.state, Some(idle));
    assert_eq!(got.state_tag(), Some("idle"));
    assert_eq!(got.title.as_deref(), Some("Researcher"));
    assert_eq!(got.capabilities, Some(json!({"cancel": {}})));
    assert_eq!(got.cwd.as_deref(), Some("/w"));
    update(json!({"state": {"state": "requires_action"}}));
    assert_eq!(
        subagent(&store, "child").state,
        Some(json!({"state": "requires_action"}))
    );

    // A value replaces whole; `null` clears; `[]` is a value.
    update(
        json!({"title": null, "capabilities": null, "additionalDirectories": [],
                  "_meta": {"y": 2}, "cwd": "/elsewhere"}),
    );
    let got = subagent(&store, "child");
    assert_eq!(got.title, None);
    assert_eq!(got.description.as_deref(), Some("Finds things"));
    assert_eq!(got.capabilities, None);
    assert_eq!(got.additional_directories, Some(Vec::new()));
    assert_eq!(meta_of(&got.meta), Some(json!({"y": 2})));
    assert_eq!(got.cwd.as_deref(), Some("/elsewhere"));
    update(
        json!({"state": null, "cwd": null, "additionalDirectories": null,
                  "description": null, "_meta": null}),
    );
    let got = subagent(&store, "child");
    assert_eq!(got.state, None);
    assert_eq!(got.state_tag(), None);
    assert_eq!(got.cwd, None);
    assert_eq!(got.additional_directories, None);
    assert_eq!(got.description, None);
    assert_eq!(got.meta, None);
    assert!(got.extra.is_empty());

    // A second child is listed after; updating the first keeps the order.
    update(json!({"title": "again"}));
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "subagent_update", "sessionId": "child2"}),
    );
    update(json!({"description": "d"}));
    let s = snap(&store, "s");
    let ids: Vec<_> = s.subagents.iter().map(|a| a.session_id.as_str()).collect();
    assert_eq!(ids, ["child", "child2"]);
    let child2 = s.subagent("child2").expect("child2");
    assert_eq!((child2.title.as_ref(), child2.state.as_ref()), (None, None));
    assert!(s.entries.is_empty());
    assert!(s.unknown.is_empty());
    assert!(
        store.snapshot("child").is_none(),
        "not a session of its own"
    );
    assert!(store.subagent("s", "nope").is_none());
}

#[test]
fn subagent_wrong_types_fall_back_and_are_kept_in_extra() {
    let store = SessionStore::new();
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "subagent_update", "sessionId": "c", "title": "T",
               "description": "D", "capabilities": {}, "state": {"state": "running"},
               "cwd": "/w", "additionalDirectories": ["/a"], "_meta": {"m": 1}}),
    );
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "subagent_update", "sessionId": "c", "title": 5,
               "description": ["d"], "capabilities": "all", "state": {"phase": "running"},
               "cwd": 7, "additionalDirectories": ["/b", 3], "_meta": "m", "vendor": 1}),
    );
    let got = subagent(&store, "c");
    assert_eq!(got.title.as_deref(), Some("T"));
    assert_eq!(got.description.as_deref(), Some("D"));
    assert_eq!(got.capabilities, Some(json!({})));
    assert_eq!(got.state, Some(json!({"state": "running"})));
    assert_eq!(got.cwd.as_deref(), Some("/w"));
    assert_eq!(got.additional_directories, Some(vec!["/a".to_owned()]));
    assert_eq!(meta_of(&got.meta), Some(json!({"m": 1})));
    assert_eq!(
        Value::Object(got.extra.clone()),
        json!({"title": 5, "description": ["d"], "capabilities": "all",
               "state": {"phase": "running"}, "cwd": 7,
               "additionalDirectories": ["/b", 3], "_meta": "m", "vendor": 1})
    );
    // A state that is not an object is the wrong type too; a custom tag is
    // a state.
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "subagent_update", "sessionId": "c", "state": "idle"}),
    );
    let got = subagent(&store, "c");
    assert_eq!(got.state_tag(), Some("running"));
    assert_eq!(got.extra["state"], json!("idle"));
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "subagent_update", "sessionId": "c",
               "state": {"state": "_sleeping", "until": 9}}),
    );
    assert_eq!(subagent(&store, "c").state_tag(), Some("_sleeping"));
}

#[test]
fn session_messages_are_upserted_by_id_in_the_conversation() {
    let store = SessionStore::new();
    apply(&store, "s", chunk("agent_message_chunk", "a"));
    let c = apply(
        &store,
        "s",
        json!({"sessionUpdate": "session_message", "messageId": "m1",
               "senderSessionId": "s", "recipientSessionId": "child",
               "content": [text_block("do it")], "_meta": {"u": 1}}),
    );
    assert_eq!(c.entry_appended, Some(1));
    assert_eq!(c.entry_updated, None);
    // It ends the agent message.
    let c = apply(&store, "s", chunk("agent_message_chunk", "b"));
    assert_eq!(c.entry_appended, Some(2));
    // A chunk appends to its message wherever it is, text joined.
    let c = apply(
        &store,
        "s",
        json!({"sessionUpdate": "session_message_chunk", "messageId": "m1",
               "content": text_block(" now"), "_meta": {"c": 1}}),
    );
    assert_eq!(c.entry_updated, Some(1));
    assert_eq!(c.entry_appended, None);
    let m1 = session_message(&store, "m1");
    assert_eq!(m1.content, vec![text_block("do it now")]);
    assert_eq!(m1.text(), "do it now");
    assert_eq!(m1.typed_content().len(), 1);
    assert_eq!(m1.sender_session_id.as_deref(), Some("s"));
    assert_eq!(m1.recipient_session_id.as_deref(), Some("child"));
    assert_eq!(meta_of(&m1.meta), Some(json!({"u": 1})));
    assert_eq!(meta_of(&m1.chunk_meta), Some(json!({"c": 1})));
    // The next agent chunk still joins the agent message after it.
    let c = apply(&store, "s", chunk("agent_message_chunk", "c"));
    assert_eq!(c.entry_updated, Some(2));

    // A chunk for an unknown id creates the message; its participants and
    // references may come later.
    let c = apply(
        &store,
        "s",
        json!({"sessionUpdate": "session_message_chunk", "messageId": "m2",
               "content": text_block("done")}),
    );
    assert_eq!(c.entry_appended, Some(3));
    let m2 = session_message(&store, "m2");
    assert_eq!(m2.sender_session_id, None);
    assert_eq!(m2.text(), "done");
    let c = apply(
        &store,
        "s",
        json!({"sessionUpdate": "session_message", "messageId": "m2",
               "senderSessionId": "child", "recipientSessionId": "s",
               "senderMessageId": "cm9"}),
    );
    assert_eq!(c.entry_updated, Some(3));
    let m2 = session_message(&store, "m2");
    assert_eq!(m2.sender_session_id.as_deref(), Some("child"));
    assert_eq!(m2.sender_message_id.as_deref(), Some("cm9"));
    assert_eq!(m2.content, vec![text_block("done")], "content omitted");

    let s = snap(&store, "s");
    assert_eq!(s.entries.len(), 4);
    assert_eq!(message(&s, 0).text(), "a");
    assert_eq!(
        s.entries[1]
            .as_session_message()
            .map(|m| m.message_id.as_str()),
        Some("m1")
    );
    assert_eq!(message(&s, 2).text(), "bc");
    assert_eq!(
        s.entries[3]
            .as_session_message()
            .map(|m| m.message_id.as_str()),
        Some("m2")
    );
    assert_eq!(s.entries[3].as_message(), None);
    assert!(s.session_message("nope").is_none());
}

#[test]
fn session_message_fields_are_patches() {
    let store = SessionStore::new();
    let upsert = |fields: Value| {
        let mut update = json!({"sessionUpdate": "session_message", "messageId": "m"});
        for (k, v) in fields.as_object().expect("object") {
            update[k] = v.clone();
        }
        apply(&store, "s", update)
    };
    upsert(json!({"senderSessionId": "a", "recipientSessionId": "b",
                  "senderMessageId": "x", "content": [text_block("one")],
                  "_meta": {"k": 1}}));
    upsert(json!({"recipientMessageId": "y"}));
    let m = session_message(&store, "m");
    assert_eq!(
        (
            m.sender_session_id.as_deref(),
            m.recipient_session_id.as_deref(),
            m.sender_message_id.as_deref(),
            m.recipient_message_id.as_deref(),
        ),
        (Some("a"), Some("b"), Some("x"), Some("y"))
    );
    assert_eq!(m.content, vec![text_block("one")]);
    assert_eq!(meta_of(&m.meta), Some(json!({"k": 1})));
    // A value replaces whole (`_meta` too), `null` clears.
    upsert(
        json!({"senderSessionId": null, "content": [text_block("two"), text_block("!")],
                  "_meta": {"j": 2}}),
    );
    let m = session_message(&store, "m");
    assert_eq!(m.sender_session_id, None);
    assert_eq!(m.recipient_session_id.as_deref(), Some("b"));
    assert_eq!(m.content, vec![text_block("two"), text_block("!")]);
    assert_eq!(meta_of(&m.meta), Some(json!({"j": 2})));
    upsert(json!({"content": []}));
    assert!(session_message(&store, "m").content.is_empty());
    upsert(json!({"content": [text_block("three")]}));
    upsert(json!({"content": null, "_meta": null, "recipientMessageId": null}));
    let m = session_message(&store, "m");
    assert!(m.content.is_empty());
    assert_eq!(m.meta, None);
    assert_eq!(m.recipient_message_id, None);
    assert!(m.extra.is_empty());
    // Wrong types: no change, kept in `extra` (with chunk fields).
    upsert(
        json!({"recipientSessionId": 5, "content": "text", "_meta": 3,
                  "senderMessageId": {"id": 1}, "vendor": "v"}),
    );
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "session_message_chunk", "messageId": "m",
               "content": {"type": "hologram"}, "_meta": "bad", "seq": 1}),
    );
    let m = session_message(&store, "m");
    assert_eq!(m.recipient_session_id.as_deref(), Some("b"));
    assert_eq!(m.sender_message_id.as_deref(), Some("x"));
    assert_eq!(m.content, vec![json!({"type": "hologram"})]);
    assert!(m.typed_content().is_empty());
    assert_eq!(m.chunk_meta, None);
    assert_eq!(
        Value::Object(m.extra.clone()),
        json!({"recipientSessionId": 5, "content": "text", "_meta": "bad",
               "senderMessageId": {"id": 1}, "vendor": "v", "seq": 1})
    );
    assert_eq!(snap(&store, "s").entries.len(), 1);
}

#[test]
fn new_parts_have_the_documented_json_shape() {
    let store = SessionStore::new();
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "compaction_update", "compactionId": "c",
               "status": "completed", "summary": [text_block("S")], "error": null}),
    );
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "compaction_summary_chunk", "compactionId": "c",
               "content": text_block("!"), "_meta": {"n": 1}}),
    );
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "session_message", "messageId": "m",
               "recipientSessionId": "kid", "content": [text_block("go")]}),
    );
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "notice", "severity": "info", "title": "Hi"}),
    );
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "plan_update",
               "plan": {"type": "file", "planId": "p", "uri": "file:///plan.md"}}),
    );
    apply(
        &store,
        "s",
        json!({"sessionUpdate": "subagent_update", "sessionId": "kid", "title": "Kid",
               "state": {"state": "running"}}),
    );
    let compaction = json!({"compactionId": "c", "status": "completed",
                            "summary": [text_block("S!")], "summaryText": "S!",
                            "error": null, "entryIndex": 0, "_meta": null,
                            "chunkMeta": {"n": 1}, "extra": {}});
    let plan = json!({"planId": "p",
                      "plan": {"type": "file", "planId": "p", "uri": "file:///plan.md"},
                      "_meta": null, "extra": {}});
    let kid = json!({"sessionId": "kid", "title": "Kid", "description": null,
                     "capabilities": null, "state": {"state": "running"}, "cwd": null,
                     "additionalDirectories": null, "_meta": null, "extra": {}});
    let expected = json!({
        "sessionId": "s",
        "entries": [
            {"type": "compaction", "compactionId": "c"},
            {"type": "session_message", "messageId": "m", "senderSessionId": null,
             "recipientSessionId": "kid", "senderMessageId": null,
             "recipientMessageId": null, "text": "go", "content": [text_block("go")],
             "_meta": null, "chunkMeta": null, "extra": {}}
        ],
        "toolCalls": [],
        "plan": null,
        "mode": null,
        "commands": null,
        "config": null,
        "info": {"title": null, "updatedAt": null, "_meta": null, "extra": {}},
        "usage": null,
        "compactions": [compaction],
        "notices": [{"severity": "info", "title": "Hi", "description": null,
                     "_meta": null, "extra": {}}],
        "noticesDropped": 0,
        "plans": [plan],
        "subagents": [kid],
        "unknown": []
    });
    assert_eq!(store.snapshot_json("s").expect("session"), expected);
    assert_eq!(
        serde_json::to_value(snap(&store, "s")).expect("serialize"),
        expected
    );
    assert_eq!(store.compaction_json("s", "c"), Some(compaction));
    assert_eq!(store.plan_by_id_json("s", "p"), Some(plan));
    assert_eq!(store.subagent_json("s", "kid"), Some(kid));
    assert_eq!(
        store.entry_json("s", 0),
        Some(expected["entries"][0].clone())
    );
    assert_eq!(
        store.entry_json("s", 1),
        Some(expected["entries"][1].clone())
    );
    assert_eq!(store.compaction_json("s", "x"), None);
    assert_eq!(store.plan_by_id_json("s", "x"), None);
    assert_eq!(store.subagent_json("s", "x"), None);
    assert_eq!(store.compaction_json("missing", "c"), None);
}

#[test]
fn change_flags_of_the_new_parts() {
    let store = SessionStore::new();
    let log = Arc::new(Mutex::new(Vec::<Value>::new()));
    let sink = Arc::clone(&log);
    store.subscribe(move |change| sink.lock().expect("log").push(change.to_json()));
    let base = |session_added: bool| {
        json!({"sessionId": "s", "sessionAdded": session_added, "sessionRemoved": false,
               "entryAppended": null, "entryUpdated": null, "toolCalls": [],
               "plan": false, "mode": false, "commands": false, "config": false,
               "info": false, "usage": false, "compactions": [], "notices": false,
               "plans": [], "subagents": [], "unknown": false})
    };
    let with = |session_added: bool, changes: Value| {
        let mut expected = base(session_added);
        for (k, v) in changes.as_object().expect("object") {
            expected[k] = v.clone();
        }
        expected
    };
    let updates = [
        json!({"sessionUpdate": "compaction_update", "compactionId": "c", "status": "in_progress"}),
        json!({"sessionUpdate": "compaction_summary_chunk", "compactionId": "c",
               "content": text_block("x")}),
        json!({"sessionUpdate": "notice", "severity": "info", "title": "n"}),
        json!({"sessionUpdate": "plan_update", "plan": {"type": "markdown", "planId": "p",
                                                        "content": "x"}}),
        json!({"sessionUpdate": "plan_removed", "planId": "p"}),
        json!({"sessionUpdate": "subagent_update", "sessionId": "k"}),
        json!({"sessionUpdate": "session_message", "messageId": "m"}),
        json!({"sessionUpdate": "session_message_chunk", "messageId": "m",
               "content": text_block("y")}),
        json!({"sessionUpdate": "plan_removed", "planId": "p"}),
    ];
    let changes: Vec<Value> = updates
        .into_iter()
        .map(|u| apply(&store, "s", u).to_json())
        .collect();
    let expected = vec![
        with(true, json!({"entryAppended": 0, "compactions": ["c"]})),
        with(false, json!({"compactions": ["c"]})),
        with(false, json!({"notices": true})),
        with(false, json!({"plans": ["p"]})),
        with(false, json!({"plans": ["p"]})),
        with(false, json!({"subagents": ["k"]})),
        with(false, json!({"entryAppended": 1})),
        with(false, json!({"entryUpdated": 1})),
        base(false),
    ];
    assert_eq!(changes, expected);
    // Every non-empty change was delivered; the empty one was not.
    assert_eq!(*log.lock().expect("log"), expected[..8].to_vec());

    let flag = |f: fn(&mut Change)| {
        let mut c = Change::default();
        f(&mut c);
        c.is_empty()
    };
    assert!(flag(|_| {}));
    assert!(!flag(|c| c.compactions.push("c".into())));
    assert!(!flag(|c| c.notices = true));
    assert!(!flag(|c| c.plans.push("p".into())));
    assert!(!flag(|c| c.subagents.push("k".into())));
}
