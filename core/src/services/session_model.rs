//! The client-side session model: folds `session/update` notifications into
//! one state snapshot per session, for editors to render.
//!
//! A [`SessionStore`] holds any number of sessions by id. Feed it the raw
//! params of every `session/update` notification with [`SessionStore::apply`];
//! read the state back with [`SessionStore::snapshot`] (typed) or
//! [`SessionStore::snapshot_json`] (the stable JSON shape below, which the
//! bindings expose), or a single part with [`SessionStore::entry`],
//! [`SessionStore::tool_call`], [`SessionStore::compaction`],
//! [`SessionStore::plan_by_id`], [`SessionStore::subagent`] and their
//! `_json` twins. Every mutation returns a [`Change`] saying which parts
//! moved, and [`SessionStore::subscribe`] delivers the same [`Change`]s to
//! callbacks, so a UI redraws only those.
//!
//! # What the fold does
//!
//! The fold knows every `session/update` variant of the current v1 schema
//! (`spec/ts-sdk-2.4.0/v1/schema.unstable.json`), stable and unstable.
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
//!   entry in between (another kind, a tool call, a compaction, an
//!   inter-session message) ends the message.
//! * **Tool calls.** `tool_call` creates a tool call, `tool_call_update`
//!   merges into it by `toolCallId`: only fields present (and not `null`) in
//!   the update overwrite; `content` and `locations` are replaced whole when
//!   present. An update for an unknown id creates the tool call (as the
//!   spec allows, with an empty title until one arrives). A `tool_call` for
//!   an id already known re-initialises it in place. Tool calls are kept in
//!   first-seen order and referenced from the conversation by an
//!   [`Entry::ToolCall`] at the point they first appeared.
//! * **Compactions** (`compaction_update`, `compaction_summary_chunk`): kept
//!   by `compactionId` in first-seen order and referenced from the
//!   conversation by an [`Entry::Compaction`] at the point they first
//!   appeared (the first update or chunk for an id fixes its place; later
//!   ones patch it in place). A chunk for an unknown id creates the
//!   compaction `in_progress`. An update's `status` replaces the status
//!   (one without a string `status`, which the schema requires, leaves it);
//!   `summary`, `error` and `_meta` are patches: absent leaves the stored
//!   value alone, `null` clears it, a value replaces it whole (`summary: []`
//!   clears too). A chunk appends its content block to the summary (text
//!   joined as in messages) and merges its own `_meta` into the
//!   compaction's `chunk_meta`; an update that sends `summary` replaces
//!   everything chunks appended so far.
//! * **Notices** (`notice`) are live events, not history: they stay out of
//!   the conversation, in [`SessionSnapshot::notices`], in arrival order,
//!   the latest [`SessionSnapshot::NOTICE_LIMIT`] (64) only; each older one
//!   dropped is counted in [`SessionSnapshot::notices_dropped`].
//! * **Plan, mode, commands, config options, usage**: the latest update
//!   replaces the previous one whole.
//! * **Plans by id** (`plan_update`, `plan_removed`; unstable plan
//!   operations), in [`SessionSnapshot::plans`]: a `plan_update` replaces
//!   whole the plan with its `plan.planId`, in place, or adds it after the
//!   others; `plan_removed` removes it (an unknown id changes nothing). They
//!   live beside the single [`SessionSnapshot::plan`], which only the `plan`
//!   variant sets.
//! * **Subagents** (`subagent_update`; unstable): the child sessions this
//!   session owns, by the child's `sessionId`, in first-seen order. Every
//!   field is a patch: absent leaves it alone, `null` clears it, a value
//!   replaces it (`capabilities`, `state`, `additionalDirectories` and
//!   `_meta` whole). The child's own updates name the child's `sessionId`,
//!   so they build a session of their own in the store.
//! * **Inter-session messages** (`session_message`,
//!   `session_message_chunk`; unstable) build [`Entry::SessionMessage`]
//!   entries, by `messageId`, each at the point its id first appeared (an
//!   upsert or a chunk). An upsert patches the participants
//!   (`senderSessionId`, `recipientSessionId`), the references
//!   (`senderMessageId`, `recipientMessageId`), `content` and `_meta`:
//!   absent leaves the stored value alone, `null` clears it, a value
//!   replaces it whole (`content: []` clears too). A chunk appends its
//!   content block (text joined as in messages) and merges its own `_meta`
//!   into the entry's `chunk_meta`, wherever the entry is in the
//!   conversation.
//! * **Session info** (`session_info_update`): merged field by field. An
//!   absent field is left alone, `null` clears it; `_meta` keys are merged
//!   into the stored `_meta` (`"_meta": null` clears it).
//! * **Unknown variants** (any other `sessionUpdate` tag) are appended, raw
//!   and whole, to [`SessionSnapshot::unknown`].
//!
//! # Tolerance
//!
//! Nothing the agent sends is dropped, with one exception: a
//! `plan_removed`'s own `_meta` and unknown fields describe the removal,
//! not a plan, and are not folded (like the notification-level `_meta`
//! below). Fields a variant does not define go to the part's `extra` object
//! (merged key by key for messages, tool calls, compactions, subagents,
//! inter-session messages and session info; replaced with the part
//! otherwise). `_meta` objects are kept: merged key by key for messages and
//! tool calls, whose `_meta` arrives in pieces; replaced whole by each
//! update that sends one for compactions, subagents and inter-session
//! messages, as their schema says; the `_meta` of compaction summary chunks
//! and inter-session message chunks is merged key by key into the part's
//! `chunk_meta`. A known field with the wrong JSON type falls back to its
//! schema default (the schema's `x-deserialize-default-on-error`; for a
//! patch field that is "absent", so the stored value is left alone) and its
//! value is kept in `extra` under its own name. A subagent `state` that is
//! not an object with a string `state` tag, and `additionalDirectories`
//! that are not all strings, count as the wrong type. Unknown tool kinds
//! and statuses, compaction statuses and notice severities are kept as the
//! strings received. Content blocks, tool call content, locations, plan
//! entries, plans by id, commands, config options, costs, subagent
//! capabilities and states are kept as raw JSON; `typed_*` methods decode
//! them with the official schema crate on demand (stable types only: this
//! crate builds it without its unstable features, so the unstable parts
//! have no typed view beyond [`PlanByIdState::typed_entries`]).
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
//! lacks what the fold needs: a chunk's `content` object (message, summary
//! and inter-session message chunks), a tool call's `toolCallId` string,
//! `currentModeId` string, usage `used`/`size` (non-negative integers), a
//! compaction's `compactionId` string, a notice's `severity` and `title`
//! strings, a `plan_update`'s `plan` object and its `planId` string, a
//! `plan_removed`'s `planId` string, a subagent's `sessionId` string, or an
//! inter-session message's `messageId` string. A session is created by the
//! first update that names it (updates may arrive before the `session/new`
//! response).
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
//!   "compactions": [Compaction],        // first-seen order
//!   "notices": [Notice],                // arrival order, the latest 64
//!   "noticesDropped": integer,          // older notices dropped
//!   "plans": [PlanById],                // first-seen order, removed ones gone
//!   "subagents": [Subagent],            // first-seen order
//!   "unknown": [<update object, "sessionUpdate" included>]
//! }
//! Entry = {"type": "user_message" | "agent_message" | "agent_thought",
//!          "messageId": string|null,
//!          "text": string,               // all text blocks concatenated
//!          "content": [<ContentBlock>],  // adjacent text chunks joined
//!          "_meta": object|null, "extra": object}
//!       | {"type": "tool_call", "toolCallId": string}
//!       | {"type": "compaction", "compactionId": string}
//!       | {"type": "session_message", "messageId": string,
//!          "senderSessionId": string|null, "recipientSessionId": string|null,
//!          "senderMessageId": string|null, "recipientMessageId": string|null,
//!          "text": string,               // all text blocks concatenated
//!          "content": [<ContentBlock>],  // adjacent text chunks joined
//!          "_meta": object|null,         // the upserts'
//!          "chunkMeta": object|null,     // the chunks', merged
//!          "extra": object}
//! ToolCall = {"toolCallId": string, "title": string,
//!             "kind": string,            // wire value, "other" by default
//!             "status": "pending" | "in_progress" | "completed" | "failed"
//!                     | "cancelled"      // local: SessionStore::mark_turn_cancelled
//!                     | string,          // an unknown status, as received
//!             "content": [<ToolCallContent>], "locations": [<ToolCallLocation>],
//!             "rawInput": any|null, "rawOutput": any|null,
//!             "entryIndex": integer,     // its Entry in "entries"
//!             "_meta": object|null, "extra": object}
//! Compaction = {"compactionId": string,
//!               "status": "in_progress" | "completed" | "failed" | "cancelled"
//!                       | string,        // a custom or future status, as received
//!               "summary": [<ContentBlock>],  // adjacent text chunks joined
//!               "summaryText": string,   // all text blocks concatenated
//!               "error": string|null,
//!               "entryIndex": integer,   // its Entry in "entries"
//!               "_meta": object|null,    // the updates'
//!               "chunkMeta": object|null,  // the summary chunks', merged
//!               "extra": object}
//! Notice = {"severity": "info" | "warning" | "error" | string,
//!           "title": string, "description": string|null,
//!           "_meta": object|null, "extra": object}
//! PlanById = {"planId": string,
//!             "plan": <PlanUpdateContent>,  // "type": "items" | "file" | "markdown" | ...
//!             "_meta": object|null, "extra": object}
//! Subagent = {"sessionId": string,       // the child session
//!             "title": string|null, "description": string|null,
//!             "capabilities": <SubagentSessionCapabilities>|null,
//!             "state": <StateUpdate>|null,  // "state": "running" | "idle" | ...
//!             "cwd": string|null, "additionalDirectories": [string]|null,
//!             "_meta": object|null, "extra": object}
//! ```
//!
//! [`Change::to_json`] gives:
//!
//! ```text
//! Change = {"sessionId": string, "sessionAdded": bool, "sessionRemoved": bool,
//!           "entryAppended": integer|null, "entryUpdated": integer|null,
//!           "toolCalls": [string], "plan": bool, "mode": bool, "commands": bool,
//!           "config": bool, "info": bool, "usage": bool,
//!           "compactions": [string],   // compactionIds created or changed
//!           "notices": bool,           // a notice was appended (the last one)
//!           "plans": [string],         // planIds upserted or removed
//!           "subagents": [string],     // child sessionIds created or changed
//!           "unknown": bool}
//! ```
//!
//! A new inter-session message or compaction also sets `entryAppended`; a
//! change to an inter-session message sets `entryUpdated`.
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
    CommandsState, CompactionState, ConfigState, Entry, JsonObject, MessageEntry, MessageKind,
    ModeState, NoticeState, PlanByIdState, PlanState, SessionInfo, SessionMessageEntry,
    SessionSnapshot, SubagentState, ToolCallState, ToolCallStatus, UsageState,
};
pub use store::{Change, SessionStore, SubscriptionId};

#[cfg(test)]
mod tests;
