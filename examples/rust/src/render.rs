//! Readable terminal output for a session: every `session/update` is folded
//! into the core's [`SessionStore`] first, then printed from the store's
//! state (so tool call updates are shown as transitions of the merged tool
//! call, whatever the agent chose to repeat or leave out).

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use libacp_core::services::session_model::{SessionStore, ToolCallState, ToolCallStatus};
use libacp_core::{Tolerant, v1};
use serde_json::Value;

use crate::style::{Out, Stream, Style};
use crate::{diff, form};

/// Most lines of one diff printed; the rest is summarised.
const MAX_DIFF_LINES: usize = 60;

/// Turns session updates, permission requests and terminal output into lines
/// on an [`Out`].
#[derive(Debug)]
pub struct Renderer {
    out: Arc<Out>,
    store: SessionStore,
    /// Sessions whose plan was shown whole during the current turn.
    plan_shown: Mutex<HashSet<String>>,
}

impl Renderer {
    /// A renderer writing to `out`, with an empty session store.
    pub fn new(out: Arc<Out>) -> Self {
        Self {
            out,
            store: SessionStore::new(),
            plan_shown: Mutex::new(HashSet::new()),
        }
    }

    /// A prompt turn starts: its first plan is shown whole.
    pub fn begin_turn(&self, session_id: &str) {
        self.plan_shown
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(session_id);
    }

    /// The session state folded so far.
    pub fn store(&self) -> &SessionStore {
        &self.store
    }

    /// The output everything is written to.
    pub fn out(&self) -> &Out {
        &self.out
    }

    fn style(&self) -> Style {
        self.out.style()
    }

    /// Folds one `session/update` into the store and prints it.
    pub fn update(&self, update: &Tolerant<v1::SessionNotification>) {
        let raw = update.raw();
        let Some(n) = update.typed() else {
            // A variant newer than this client: the store keeps it raw.
            let _ = self.store.apply(raw);
            let tag = serde_json::from_str::<Value>(raw.get())
                .ok()
                .and_then(|v| v["update"]["sessionUpdate"].as_str().map(str::to_owned))
                .unwrap_or_else(|| "?".to_owned());
            self.out.line(
                &self
                    .style()
                    .dim(&format!("  (an update this client does not know: `{tag}`)")),
            );
            return;
        };
        let sid = &*n.session_id.0;
        let s = self.style();
        match &n.update {
            v1::SessionUpdate::AgentMessageChunk(c) => {
                let _ = self.store.apply(raw);
                self.out.stream(Stream::Agent, &content_text(&c.content));
            }
            v1::SessionUpdate::AgentThoughtChunk(c) => {
                let _ = self.store.apply(raw);
                self.out.stream(Stream::Thought, &content_text(&c.content));
            }
            v1::SessionUpdate::UserMessageChunk(c) => {
                let _ = self.store.apply(raw);
                self.out.stream(Stream::User, &content_text(&c.content));
            }
            v1::SessionUpdate::ToolCall(v1::ToolCall { tool_call_id, .. })
            | v1::SessionUpdate::ToolCallUpdate(v1::ToolCallUpdate { tool_call_id, .. }) => {
                let id = &*tool_call_id.0;
                let before = self.store.tool_call(sid, id);
                let fresh = matches!(n.update, v1::SessionUpdate::ToolCall(_));
                let _ = self.store.apply(raw);
                if let Some(now) = self.store.tool_call(sid, id) {
                    let before = if fresh { None } else { before };
                    self.out.lines(&self.tool_call_lines(before.as_ref(), &now));
                }
            }
            v1::SessionUpdate::Plan(_) => {
                let before = self
                    .store
                    .snapshot(sid)
                    .and_then(|snap| snap.plan)
                    .map(|p| p.typed_entries());
                let _ = self.store.apply(raw);
                let now = self
                    .store
                    .snapshot(sid)
                    .and_then(|snap| snap.plan)
                    .map(|p| p.typed_entries())
                    .unwrap_or_default();
                let first = self
                    .plan_shown
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(sid.to_owned());
                let before = if first { None } else { before };
                self.out.lines(&self.plan_lines(before.as_deref(), &now));
            }
            v1::SessionUpdate::CurrentModeUpdate(m) => {
                let _ = self.store.apply(raw);
                self.out.line(&format!(
                    "{} {}",
                    s.blue("mode →"),
                    s.bold(&m.current_mode_id.0)
                ));
            }
            v1::SessionUpdate::AvailableCommandsUpdate(c) => {
                let _ = self.store.apply(raw);
                let names: Vec<String> = c
                    .available_commands
                    .iter()
                    .map(|c| format!("/{}", c.name))
                    .collect();
                self.out
                    .line(&s.dim(&format!("commands available: {}", names.join(" "))));
            }
            v1::SessionUpdate::ConfigOptionUpdate(c) => {
                let _ = self.store.apply(raw);
                let names: Vec<&str> = c.config_options.iter().map(|o| o.name.as_str()).collect();
                self.out
                    .line(&s.dim(&format!("config options: {}", names.join(", "))));
            }
            v1::SessionUpdate::SessionInfoUpdate(_) => {
                let _ = self.store.apply(raw);
                if let Some(title) = self.store.snapshot(sid).and_then(|snap| snap.info.title) {
                    self.out.line(&s.dim(&format!("session title: {title}")));
                }
            }
            v1::SessionUpdate::UsageUpdate(u) => {
                let _ = self.store.apply(raw);
                self.out
                    .line(&s.dim(&format!("context: {} of {} tokens used", u.used, u.size)));
            }
            v1::SessionUpdate::Notice(notice) => {
                let _ = self.store.apply(raw);
                let text = match &notice.description {
                    Some(d) => format!("notice: {}: {d}", notice.title),
                    None => format!("notice: {}", notice.title),
                };
                self.out.line(&s.yellow(&text));
            }
            v1::SessionUpdate::CompactionUpdate(c) => {
                let _ = self.store.apply(raw);
                let Some(state) = self.store.compaction(sid, &c.compaction_id.0) else {
                    return;
                };
                let line = match state.status.as_str() {
                    "in_progress" => s.dim("compacting the context…"),
                    "completed" => s.dim(&format!("context compacted: {}", state.summary_text())),
                    other => s.red(&format!(
                        "context compaction {other}{}",
                        state.error.map(|e| format!(": {e}")).unwrap_or_default()
                    )),
                };
                self.out.line(&line);
            }
            // Folded; shown whole when the compaction completes.
            v1::SessionUpdate::CompactionSummaryChunk(_) => {
                let _ = self.store.apply(raw);
            }
            v1::SessionUpdate::SubagentUpdate(u) => {
                let _ = self.store.apply(raw);
                let child = u.session_id.0.to_string();
                let Some(state) = self.store.subagent(sid, &child) else {
                    return;
                };
                let name = state.title.clone().unwrap_or(child);
                let activity = state
                    .state
                    .as_ref()
                    .and_then(|v| v["state"].as_str().map(str::to_owned))
                    .unwrap_or_else(|| "unknown".to_owned());
                self.out
                    .line(&s.dim(&format!("subagent {name}: {activity}")));
            }
            _ => {
                let _ = self.store.apply(raw);
                let tag = serde_json::to_value(&n.update)
                    .ok()
                    .and_then(|v| v["sessionUpdate"].as_str().map(str::to_owned))
                    .unwrap_or_else(|| "?".to_owned());
                self.out.line(&s.dim(&format!("  ({tag})")));
            }
        }
    }

    /// The lines announcing a tool call (`before` is `None`) or what an
    /// update changed in it.
    pub fn tool_call_lines(
        &self,
        before: Option<&ToolCallState>,
        now: &ToolCallState,
    ) -> Vec<String> {
        let s = self.style();
        let mut lines = Vec::new();
        let title = if now.title.is_empty() {
            now.tool_call_id.as_str()
        } else {
            now.title.as_str()
        };
        match before {
            None => {
                lines.push(format!(
                    "{} {} {} {} {}",
                    s.bold(&s.blue("▸")),
                    s.blue(&format!("[{}]", now.kind)),
                    s.bold(title),
                    s.dim("·"),
                    self.status(&now.status)
                ));
                lines.extend(self.location_lines(&now.locations));
                lines.extend(self.content_lines(&[], &now.content));
            }
            Some(before) => {
                if before.title != now.title && !now.title.is_empty() {
                    lines.push(format!("  {} {}", s.dim("↳ now:"), s.bold(title)));
                }
                if before.status != now.status {
                    lines.push(format!(
                        "  {} {title}: {}",
                        s.dim("↳"),
                        self.status(&now.status)
                    ));
                }
                if before.locations != now.locations {
                    lines.extend(self.location_lines(&now.locations));
                }
                if before.content != now.content {
                    lines.extend(self.content_lines(&before.content, &now.content));
                }
            }
        }
        lines
    }

    /// A tool call status, coloured.
    pub fn status(&self, status: &ToolCallStatus) -> String {
        let s = self.style();
        match status {
            ToolCallStatus::Pending => s.dim("pending"),
            ToolCallStatus::InProgress => s.yellow("in progress"),
            ToolCallStatus::Completed => s.green("✓ completed"),
            ToolCallStatus::Failed => s.red("✗ failed"),
            ToolCallStatus::Cancelled => s.yellow("cancelled"),
            other => s.dim(other.as_str()),
        }
    }

    fn location_lines(&self, locations: &[Value]) -> Vec<String> {
        let s = self.style();
        locations
            .iter()
            .map(
                |raw| match serde_json::from_value::<v1::ToolCallLocation>(raw.clone()) {
                    Ok(loc) => {
                        let line = loc.line.map(|l| format!(":{l}")).unwrap_or_default();
                        s.dim(&format!("    at {}{line}", loc.path.display()))
                    }
                    Err(_) => s.dim(&format!("    at {raw}")),
                },
            )
            .collect()
    }

    /// Lines for the content items of `now` that are not already in
    /// `before` at the same position.
    fn content_lines(&self, before: &[Value], now: &[Value]) -> Vec<String> {
        let s = self.style();
        let mut lines = Vec::new();
        for (i, raw) in now.iter().enumerate() {
            if before.get(i) == Some(raw) {
                continue;
            }
            match serde_json::from_value::<v1::ToolCallContent>(raw.clone()) {
                Ok(v1::ToolCallContent::Content(c)) => {
                    for line in content_text(&c.content).lines() {
                        lines.push(format!("    {} {line}", s.dim("│")));
                    }
                }
                Ok(v1::ToolCallContent::Diff(d)) => {
                    lines.extend(self.diff_lines(&d));
                }
                Ok(v1::ToolCallContent::Terminal(t)) => {
                    lines.push(s.dim(&format!(
                        "    terminal {} (its output is shown when the command ends)",
                        t.terminal_id.0
                    )));
                }
                _ => {
                    let kind = raw["type"].as_str().unwrap_or("?");
                    lines.push(s.dim(&format!("    (content of type `{kind}`)")));
                }
            }
        }
        lines
    }

    /// A diff as `-`/`+` lines with two lines of context.
    pub fn diff_lines(&self, d: &v1::Diff) -> Vec<String> {
        let s = self.style();
        let what = if d.old_text.is_some() {
            "edit"
        } else {
            "new file"
        };
        let mut lines = vec![s.dim(&format!("    {what} {}", d.path.display()))];
        let all = diff::lines(d.old_text.as_deref(), &d.new_text);
        if all.iter().all(|l| matches!(l, diff::Line::Same(_))) {
            lines.push(s.dim("     (no change)"));
            return lines;
        }
        let shown = diff::hunks(&all, 2);
        let total = shown.len();
        for line in shown.into_iter().take(MAX_DIFF_LINES) {
            lines.push(match line {
                Some(diff::Line::Same(l)) => s.dim(&format!("     {l}")),
                Some(diff::Line::Removed(l)) => s.red(&format!("    -{l}")),
                Some(diff::Line::Added(l)) => s.green(&format!("    +{l}")),
                None => s.dim("     ..."),
            });
        }
        if total > MAX_DIFF_LINES {
            lines.push(s.dim(&format!("     ({} more lines)", total - MAX_DIFF_LINES)));
        }
        lines
    }

    /// The plan as a checklist; when only statuses changed, just the
    /// entries that changed.
    pub fn plan_lines(
        &self,
        before: Option<&[v1::PlanEntry]>,
        now: &[v1::PlanEntry],
    ) -> Vec<String> {
        let s = self.style();
        let same_entries = before.is_some_and(|b| {
            b.len() == now.len() && b.iter().zip(now).all(|(x, y)| x.content == y.content)
        });
        let check = |e: &v1::PlanEntry| match e.status {
            v1::PlanEntryStatus::Completed => format!("{} {}", s.green("[x]"), e.content),
            v1::PlanEntryStatus::InProgress => {
                format!("{} {}", s.yellow("[~]"), s.bold(&e.content))
            }
            _ => format!("{} {}", s.dim("[ ]"), e.content),
        };
        if let (true, Some(before)) = (same_entries, before) {
            return now
                .iter()
                .zip(before)
                .filter(|(n, b)| n.status != b.status)
                .map(|(n, _)| format!("{} {}", s.magenta("plan"), check(n)))
                .collect();
        }
        let mut lines = vec![s.magenta("plan:")];
        lines.extend(now.iter().map(|e| format!("  {}", check(e))));
        lines
    }

    /// Describes a permission request (the tool call's title comes from the
    /// request, or else from the tool call reported earlier).
    pub fn permission_lines(&self, args: &v1::RequestPermissionRequest) -> Vec<String> {
        let s = self.style();
        let id = &*args.tool_call.tool_call_id.0;
        let known = self.store.tool_call(&args.session_id.0, id);
        let title = args
            .tool_call
            .fields
            .title
            .clone()
            .or_else(|| known.as_ref().map(|t| t.title.clone()))
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| id.to_owned());
        let mut lines = vec![format!(
            "{} {}",
            s.bold(&s.yellow("? permission:")),
            s.bold(&title)
        )];
        if let Some(content) = &args.tool_call.fields.content {
            let raw: Vec<Value> = content
                .iter()
                .filter_map(|c| serde_json::to_value(c).ok())
                .collect();
            let shown = known.map(|k| k.content).unwrap_or_default();
            if raw != shown {
                lines.extend(self.content_lines(&[], &raw));
            }
        }
        let options: Vec<String> = args
            .options
            .iter()
            .enumerate()
            .map(|(i, o)| format!("[{}] {} ({})", i + 1, o.name, option_kind(o.kind)))
            .collect();
        lines.push(format!("    {}", options.join("   ")));
        lines
    }

    /// Describes an `elicitation/create` request: the message, then the
    /// form's fields (with their defaults) or the URL to open.
    pub fn elicitation_lines(&self, args: &v1::CreateElicitationRequest) -> Vec<String> {
        let s = self.style();
        let mut lines = vec![format!(
            "{} {}",
            s.bold(&s.yellow("? question:")),
            s.bold(&args.message)
        )];
        match &args.mode {
            v1::ElicitationMode::Form(f) => {
                let required = f.requested_schema.required.clone().unwrap_or_default();
                for (name, field) in &f.requested_schema.properties {
                    let default = form::default_of(field)
                        .map(|v| format!(" [default: {}]", form::show(&v)))
                        .unwrap_or_default();
                    let optional = if required.contains(name) {
                        ""
                    } else {
                        " (optional)"
                    };
                    lines.push(s.dim(&format!(
                        "    {name}: {}{optional}{default}",
                        form::label(name, field)
                    )));
                }
            }
            v1::ElicitationMode::Url(u) => {
                lines.push(s.dim(&format!("    the agent asks you to open {}", u.url)));
            }
            _ => lines.push(s.dim("    (a kind of question this client does not know)")),
        }
        lines
    }

    /// Prints a terminal's final output and exit status.
    pub fn terminal_lines(&self, resp: &v1::TerminalOutputResponse) -> Vec<String> {
        let s = self.style();
        let mut lines = Vec::new();
        if resp.truncated {
            lines.push(s.dim("    │ (earlier output truncated)"));
        }
        for line in resp.output.lines() {
            lines.push(format!("    {} {line}", s.dim("│")));
        }
        let end = match &resp.exit_status {
            Some(v1::TerminalExitStatus {
                exit_code: Some(0), ..
            }) => s.green("exit code 0"),
            Some(v1::TerminalExitStatus {
                exit_code: Some(code),
                ..
            }) => s.red(&format!("exit code {code}")),
            Some(v1::TerminalExitStatus {
                signal: Some(signal),
                ..
            }) => s.red(&format!("killed by {signal}")),
            _ => s.dim("still running"),
        };
        lines.push(format!("    {} {end}", s.dim("└")));
        lines
    }

    /// After a turn ended `cancelled`: marks the session's unfinished tool
    /// calls cancelled in the store and says which.
    pub fn turn_cancelled(&self, session_id: &str) {
        let change = self.store.mark_turn_cancelled(session_id);
        let lines: Vec<String> = change
            .tool_calls
            .iter()
            .filter_map(|id| self.store.tool_call(session_id, id))
            .map(|t| {
                format!(
                    "  {} {}: {}",
                    self.style().dim("↳"),
                    t.title,
                    self.status(&t.status)
                )
            })
            .collect();
        self.out.lines(&lines);
    }
}

/// A content block as text (non-text blocks as a short placeholder).
pub fn content_text(block: &v1::ContentBlock) -> String {
    match block {
        v1::ContentBlock::Text(t) => t.text.clone(),
        v1::ContentBlock::Image(i) => format!("[image {}]", i.mime_type),
        v1::ContentBlock::Audio(a) => format!("[audio {}]", a.mime_type),
        v1::ContentBlock::ResourceLink(l) => format!("[link {}]", l.uri),
        v1::ContentBlock::Resource(_) => "[embedded resource]".to_owned(),
        _ => "[content]".to_owned(),
    }
}

/// Paths as `a, b, c`.
pub fn path_list(paths: &[std::path::PathBuf]) -> String {
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    shown.join(", ")
}

/// A permission option kind as its wire name.
pub fn option_kind(kind: v1::PermissionOptionKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{kind:?}"))
}

/// A stop reason as its wire name.
pub fn stop_reason(reason: v1::StopReason) -> String {
    serde_json::to_value(reason)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{reason:?}"))
}
