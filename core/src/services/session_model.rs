//! The client-side session model: folds `session/update` notifications into
//! one state snapshot per session, for editors to render.
//!
//! A [`SessionStore`] holds any number of sessions by id. Feed it the raw
//! params of every `session/update` notification with [`SessionStore::apply`];
//! read the state back with [`SessionStore::snapshot`] (typed) or
//! [`SessionStore::snapshot_json`] (the stable JSON shape below, which the
//! bindings expose), or a single part with [`SessionStore::entry`] /
//! [`SessionStore::tool_call`] and their `_json` twins. Every mutation returns
//! a [`Change`] saying which parts moved, and [`SessionStore::subscribe`]
//! delivers the same [`Change`]s to callbacks, so a UI redraws only those.
//!
//! # What the fold does
//!
//! * **Conversation.** `user_message_chunk`, `agent_message_chunk` and
//!   `agent_thought_chunk` build [`Entry::Message`] entries. A chunk joins the
//!   last entry when that entry is a message of the same kind and the
//!   `messageId`s do not disagree (a change of `messageId` starts a new
//!   message, as the schema says; a missing id never does). Inside an entry,
//!   a text block directly after a text block with the same other fields
//!   (`annotations`, `_meta`, ...) is concatenated into it; any other block
//!   (image, audio, resource, a text block after an image, a block of a type
//!   this crate does not know) is appended as its own block, raw. Any other
//!   entry in between (another kind, a tool call) ends the message.
//! * **Tool calls.** `tool_call` creates a tool call, `tool_call_update`
//!   merges into it by `toolCallId`: only fields present (and not `null`) in
//!   the update overwrite; `content` and `locations` are replaced whole when
//!   present. An update for an unknown id creates the tool call (as the
//!   spec allows, with an empty title until one arrives). A `tool_call` for
//!   an id already known re-initialises it in place. Tool calls are kept in
//!   first-seen order and referenced from the conversation by an
//!   [`Entry::ToolCall`] at the point they first appeared.
//! * **Plan, mode, commands, config options, usage**: the latest update
//!   replaces the previous one whole.
//! * **Session info** (`session_info_update`): merged field by field. An
//!   absent field is left alone, `null` clears it; `_meta` keys are merged
//!   into the stored `_meta` (`"_meta": null` clears it).
//! * **Unknown variants** (any `sessionUpdate` tag outside the stable v1
//!   schema, including ones the schema crate knows but the stable schema does
//!   not, such as `notice`) are appended, raw and whole, to
//!   [`SessionSnapshot::unknown`].
//!
//! # Tolerance
//!
//! Nothing the agent sends is dropped. Fields a variant does not define go to
//! the part's `extra` object (merged key by key for messages, tool calls and
//! session info; replaced with the part otherwise). `_meta` objects are kept
//! (merged key by key for messages and tool calls, whose `_meta` arrives in
//! pieces). A known field with the wrong JSON type falls back to its schema
//! default (the schema's `x-deserialize-default-on-error`) and its value is
//! kept in `extra` under its own name. Unknown tool kinds and statuses are
//! kept as the strings received. Content blocks, tool call content,
//! locations, plan entries, commands, config options and costs are kept as
//! raw JSON; `typed_*` methods decode them with the official schema crate on
//! demand.
//!
//! The notification-level `_meta` (beside `sessionId`) describes the
//! notification, not the session, and is not folded; the host still sees it
//! in the raw notification.
//!
//! # Errors
//!
//! [`SessionStore::apply`] answers [`RpcError::invalid_params`] (`-32602`),
//! with a precise description in `data`, and leaves every session untouched,
//! when the params are not a `SessionNotification` envelope (not an object;
//! `sessionId` missing or not a string; `update` missing or not an object;
//! `update.sessionUpdate` missing or not a string), or when a known variant
//! lacks what the fold needs: a chunk's `content` object, a tool call's
//! `toolCallId` string, `currentModeId` string, or usage `used`/`size`
//! (non-negative integers). A session is created by the first update that
//! names it (updates may arrive before the `session/new` response).
//!
//! # JSON shape ([`SessionStore::snapshot_json`])
//!
//! Every key is always present (`null` when unset), so bindings can decode
//! into fixed records. Values written `<...>` are raw JSON as the agent sent
//! them (wire names, camelCase).
//!
//! ```text
//! Snapshot = {
//!   "sessionId": string,
//!   "entries": [Entry],                 // conversation order
//!   "toolCalls": [ToolCall],            // first-seen order
//!   "plan": null | {"entries": [<PlanEntry>], "_meta": object|null, "extra": object},
//!   "mode": null | {"currentModeId": string, "_meta": object|null, "extra": object},
//!   "commands": null | {"availableCommands": [<AvailableCommand>], "_meta": object|null, "extra": object},
//!   "config": null | {"configOptions": [<SessionConfigOption>], "_meta": object|null, "extra": object},
//!   "info": {"title": string|null, "updatedAt": string|null, "_meta": object|null, "extra": object},
//!   "usage": null | {"used": integer, "size": integer, "cost": <Cost>|null, "_meta": object|null, "extra": object},
//!   "unknown": [<update object, "sessionUpdate" included>]
//! }
//! Entry = {"type": "user_message" | "agent_message" | "agent_thought",
//!          "messageId": string|null,
//!          "text": string,               // all text blocks concatenated
//!          "content": [<ContentBlock>],  // adjacent text chunks joined
//!          "_meta": object|null, "extra": object}
//!       | {"type": "tool_call", "toolCallId": string}
//! ToolCall = {"toolCallId": string, "title": string,
//!             "kind": string,            // wire value, "other" by default
//!             "status": "pending" | "in_progress" | "completed" | "failed"
//!                     | "cancelled"      // local: SessionStore::mark_turn_cancelled
//!                     | string,          // an unknown status, as received
//!             "content": [<ToolCallContent>], "locations": [<ToolCallLocation>],
//!             "rawInput": any|null, "rawOutput": any|null,
//!             "entryIndex": integer,     // its Entry in "entries"
//!             "_meta": object|null, "extra": object}
//! ```
//!
//! [`Change::to_json`] gives:
//!
//! ```text
//! Change = {"sessionId": string, "sessionAdded": bool, "sessionRemoved": bool,
//!           "entryAppended": integer|null, "entryUpdated": integer|null,
//!           "toolCalls": [string], "plan": bool, "mode": bool, "commands": bool,
//!           "config": bool, "info": bool, "usage": bool, "unknown": bool}
//! ```
//!
//! # Example
//!
//! ```
//! use libacp_core::services::session_model::SessionStore;
//! use libacp_core::RawValue;
//!
//! let store = SessionStore::new();
//! for text in ["Hel", "lo"] {
//!     let params = serde_json::json!({"sessionId": "s1", "update": {
//!         "sessionUpdate": "agent_message_chunk",
//!         "content": {"type": "text", "text": text}}});
//!     let raw = RawValue::from_string(params.to_string()).unwrap();
//!     store.apply(&raw).unwrap();
//! }
//! let json = store.snapshot_json("s1").unwrap();
//! assert_eq!(json["entries"][0]["text"], "Hello");
//! ```
//!
//! [`RpcError::invalid_params`]: crate::RpcError::invalid_params

// The parts: `parse` decodes a notification into an update, `fold` applies
// it to a session's `snapshot`, `store` holds the sessions and delivers the
// `Change`s to subscribers.
mod fold;
mod parse;
mod snapshot;
mod store;

pub use snapshot::{
    CommandsState, ConfigState, Entry, JsonObject, MessageEntry, MessageKind, ModeState, PlanState,
    SessionInfo, SessionSnapshot, ToolCallState, ToolCallStatus, UsageState,
};
pub use store::{Change, SessionStore, SubscriptionId};

#[cfg(test)]
mod tests;
