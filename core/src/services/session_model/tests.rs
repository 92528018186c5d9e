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
    let notice = json!({"sessionUpdate": "notice", "message": "heads up"});
    let c = apply(&store, "s", hologram.clone());
    assert!(c.unknown);
    assert!(c.session_added);
    apply(&store, "s", notice.clone());
    let s = snap(&store, "s");
    assert_eq!(s.unknown, vec![hologram, notice]);
    assert!(s.entries.is_empty());
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
               "info": false, "usage": false, "unknown": false})
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
