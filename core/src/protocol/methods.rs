//! The ACP v1 method table (checked against the `x-method` and `x-side` of
//! the project's copy of the schema, `spec/ts-sdk-2.4.0/v1`): who handles
//! each method, whether it is scoped to a session, which advertised
//! capability it needs, and which unstable feature turns it on.

use serde_json::Value;

use super::Role;
use super::unstable::{Feature, Features};

/// How a method relates to sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionScope {
    /// Not about one session.
    None,
    /// Creates a session; its id is in the result (`session/new`).
    Creates,
    /// (Re)opens the session named in the params (`session/load`, `session/resume`).
    Opens,
    /// Names a session that must be open on this connection.
    Required,
    /// Names the session it copies (which need not be open here) and
    /// creates a session whose id is in the result (`session/fork`).
    Forks,
    /// May name a session; checked when it does.
    Optional,
}

/// A capability advertised in `initialize` that a method (or, in
/// [`super::payload`], a part of a message) needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    /// `agentCapabilities.loadSession`
    LoadSession,
    /// `agentCapabilities.sessionCapabilities.list`
    ListSessions,
    /// `agentCapabilities.sessionCapabilities.resume`
    ResumeSession,
    /// `agentCapabilities.sessionCapabilities.close`
    CloseSession,
    /// `agentCapabilities.sessionCapabilities.delete`
    DeleteSession,
    /// `agentCapabilities.auth.logout`
    Logout,
    /// `clientCapabilities.fs.readTextFile`
    ReadTextFile,
    /// `clientCapabilities.fs.writeTextFile`
    WriteTextFile,
    /// `clientCapabilities.terminal`
    Terminal,
    /// `clientCapabilities.elicitation`
    Elicitation,
    /// `agentCapabilities.promptCapabilities.image`
    PromptImage,
    /// `agentCapabilities.promptCapabilities.audio`
    PromptAudio,
    /// `agentCapabilities.promptCapabilities.embeddedContext`
    PromptEmbeddedContext,
    /// `agentCapabilities.sessionCapabilities.additionalDirectories`: the
    /// `additionalDirectories` of `session/new|load|resume|fork`.
    AdditionalDirectories,
    /// `agentCapabilities.mcpCapabilities.http`
    McpHttp,
    /// `agentCapabilities.mcpCapabilities.sse`
    McpSse,
    /// `clientCapabilities.session.notices`
    Notices,
    /// `clientCapabilities.session.compaction`
    Compaction,
    /// `clientCapabilities.session.configOptions.boolean`
    BooleanConfigOptions,
    /// `clientCapabilities.elicitation.form`
    ElicitationForm,
    /// `clientCapabilities.elicitation.url`
    ElicitationUrl,
    /// `clientCapabilities.auth.terminal`
    AuthTerminal,
    /// `agentCapabilities.sessionCapabilities.fork` (unstable)
    ForkSession,
    /// `agentCapabilities.sessionCapabilities.archive` (unstable)
    ArchiveSession,
    /// `agentCapabilities.sessionCapabilities.status` (unstable)
    SessionStatus,
    /// `agentCapabilities.sessionCapabilities.title` (unstable)
    SetSessionTitle,
    /// `agentCapabilities.sessionCapabilities.systemPrompt` (unstable)
    SystemPrompt,
    /// `agentCapabilities.sessionCapabilities.systemPrompt.mode.override`
    /// (unstable)
    SystemPromptOverride,
    /// `agentCapabilities.auth.status` (unstable)
    AuthStatus,
    /// `agentCapabilities.providers` (unstable)
    Providers,
    /// `agentCapabilities.mcpCapabilities.acp` (unstable)
    McpAcp,
    /// `clientCapabilities.plan` (unstable)
    Plan,
    /// `clientCapabilities.subagents` (unstable)
    Subagents,
}

impl Capability {
    /// Where the capability lives, as written in the spec.
    pub fn path(self) -> &'static str {
        match self {
            Self::LoadSession => "agentCapabilities.loadSession",
            Self::ListSessions => "agentCapabilities.sessionCapabilities.list",
            Self::ResumeSession => "agentCapabilities.sessionCapabilities.resume",
            Self::CloseSession => "agentCapabilities.sessionCapabilities.close",
            Self::DeleteSession => "agentCapabilities.sessionCapabilities.delete",
            Self::Logout => "agentCapabilities.auth.logout",
            Self::ReadTextFile => "clientCapabilities.fs.readTextFile",
            Self::WriteTextFile => "clientCapabilities.fs.writeTextFile",
            Self::Terminal => "clientCapabilities.terminal",
            Self::Elicitation => "clientCapabilities.elicitation",
            Self::PromptImage => "agentCapabilities.promptCapabilities.image",
            Self::PromptAudio => "agentCapabilities.promptCapabilities.audio",
            Self::PromptEmbeddedContext => "agentCapabilities.promptCapabilities.embeddedContext",
            Self::AdditionalDirectories => {
                "agentCapabilities.sessionCapabilities.additionalDirectories"
            }
            Self::McpHttp => "agentCapabilities.mcpCapabilities.http",
            Self::McpSse => "agentCapabilities.mcpCapabilities.sse",
            Self::Notices => "clientCapabilities.session.notices",
            Self::Compaction => "clientCapabilities.session.compaction",
            Self::BooleanConfigOptions => "clientCapabilities.session.configOptions.boolean",
            Self::ElicitationForm => "clientCapabilities.elicitation.form",
            Self::ElicitationUrl => "clientCapabilities.elicitation.url",
            Self::AuthTerminal => "clientCapabilities.auth.terminal",
            Self::ForkSession => "agentCapabilities.sessionCapabilities.fork",
            Self::ArchiveSession => "agentCapabilities.sessionCapabilities.archive",
            Self::SessionStatus => "agentCapabilities.sessionCapabilities.status",
            Self::SetSessionTitle => "agentCapabilities.sessionCapabilities.title",
            Self::SystemPrompt => "agentCapabilities.sessionCapabilities.systemPrompt",
            Self::SystemPromptOverride => {
                "agentCapabilities.sessionCapabilities.systemPrompt.mode.override"
            }
            Self::AuthStatus => "agentCapabilities.auth.status",
            Self::Providers => "agentCapabilities.providers",
            Self::McpAcp => "agentCapabilities.mcpCapabilities.acp",
            Self::Plan => "clientCapabilities.plan",
            Self::Subagents => "clientCapabilities.subagents",
        }
    }

    /// Whether `caps` (the `agentCapabilities` or `clientCapabilities`
    /// object) advertises it. Booleans must be `true`; object-valued
    /// capabilities must be present and not `null` (the spec's "supplying
    /// `{}` means supported").
    pub fn advertised_in(self, caps: &Value) -> bool {
        let mut at = caps;
        // The path after its first segment (`agentCapabilities`).
        for key in self.path().split('.').skip(1) {
            match at.get(key) {
                Some(next) => at = next,
                None => return false,
            }
        }
        match at {
            Value::Bool(b) => *b,
            Value::Object(_) => true,
            _ => false,
        }
    }
}

/// One method of the protocol.
#[derive(Debug, Clone, Copy)]
pub struct MethodInfo {
    /// The wire name.
    pub name: &'static str,
    /// The side that handles it (receives it).
    pub handled_by: Role,
    /// Whether it is a notification.
    pub notification: bool,
    /// How it relates to sessions.
    pub session: SessionScope,
    /// The capability the handling side must have advertised.
    pub capability: Option<Capability>,
    /// The unstable feature that turns it on (`None`: stable).
    pub feature: Option<Feature>,
}

const fn m(
    name: &'static str,
    handled_by: Role,
    notification: bool,
    session: SessionScope,
    capability: Option<Capability>,
) -> MethodInfo {
    MethodInfo {
        name,
        handled_by,
        notification,
        session,
        capability,
        feature: None,
    }
}

/// An unstable method: like [`m`], on only with `feature`.
const fn u(
    feature: Feature,
    name: &'static str,
    handled_by: Role,
    notification: bool,
    session: SessionScope,
    capability: Option<Capability>,
) -> MethodInfo {
    MethodInfo {
        name,
        handled_by,
        notification,
        session,
        capability,
        feature: Some(feature),
    }
}

use Capability as C;
use Feature as F;
use Role::{Agent, Client};
use SessionScope as S;

/// Every v1 method: the stable ones, then the unstable ones (each with its
/// feature). A name has one row, except `mcp/message`, which is a request
/// to the client and a notification to the agent.
pub const METHODS: &[MethodInfo] = &[
    m("initialize", Agent, false, S::None, None),
    m("authenticate", Agent, false, S::None, None),
    m("logout", Agent, false, S::None, Some(C::Logout)),
    m("session/new", Agent, false, S::Creates, None),
    m("session/load", Agent, false, S::Opens, Some(C::LoadSession)),
    m(
        "session/resume",
        Agent,
        false,
        S::Opens,
        Some(C::ResumeSession),
    ),
    m("session/list", Agent, false, S::None, Some(C::ListSessions)),
    m(
        "session/close",
        Agent,
        false,
        S::Required,
        Some(C::CloseSession),
    ),
    m(
        "session/delete",
        Agent,
        false,
        S::None,
        Some(C::DeleteSession),
    ),
    m("session/set_mode", Agent, false, S::Required, None),
    m("session/set_config_option", Agent, false, S::Required, None),
    m("session/prompt", Agent, false, S::Required, None),
    m("session/cancel", Agent, true, S::Required, None),
    m(
        "session/request_permission",
        Client,
        false,
        S::Required,
        None,
    ),
    m(
        "fs/read_text_file",
        Client,
        false,
        S::Required,
        Some(C::ReadTextFile),
    ),
    m(
        "fs/write_text_file",
        Client,
        false,
        S::Required,
        Some(C::WriteTextFile),
    ),
    m(
        "terminal/create",
        Client,
        false,
        S::Required,
        Some(C::Terminal),
    ),
    m(
        "terminal/output",
        Client,
        false,
        S::Required,
        Some(C::Terminal),
    ),
    m(
        "terminal/wait_for_exit",
        Client,
        false,
        S::Required,
        Some(C::Terminal),
    ),
    m(
        "terminal/kill",
        Client,
        false,
        S::Required,
        Some(C::Terminal),
    ),
    m(
        "terminal/release",
        Client,
        false,
        S::Required,
        Some(C::Terminal),
    ),
    m(
        "elicitation/create",
        Client,
        false,
        S::Optional,
        Some(C::Elicitation),
    ),
    m("session/update", Client, true, S::Required, None),
    m("elicitation/complete", Client, true, S::None, None),
    // Unstable. Archive, status and title may name any session the agent
    // knows (a listed one, not open here), as `session/delete` may.
    u(
        F::AuthStatus,
        "auth/status",
        Agent,
        false,
        S::None,
        Some(C::AuthStatus),
    ),
    u(
        F::AuthStatus,
        "auth/status_update",
        Client,
        true,
        S::None,
        None,
    ),
    u(
        F::LlmProviders,
        "providers/list",
        Agent,
        false,
        S::None,
        Some(C::Providers),
    ),
    u(
        F::LlmProviders,
        "providers/set",
        Agent,
        false,
        S::None,
        Some(C::Providers),
    ),
    u(
        F::LlmProviders,
        "providers/disable",
        Agent,
        false,
        S::None,
        Some(C::Providers),
    ),
    u(
        F::SessionFork,
        "session/fork",
        Agent,
        false,
        S::Forks,
        Some(C::ForkSession),
    ),
    u(
        F::SessionArchive,
        "session/archive",
        Agent,
        false,
        S::None,
        Some(C::ArchiveSession),
    ),
    u(
        F::SessionArchive,
        "session/unarchive",
        Agent,
        false,
        S::None,
        Some(C::ArchiveSession),
    ),
    u(
        F::SessionStatus,
        "session/status",
        Agent,
        false,
        S::None,
        Some(C::SessionStatus),
    ),
    u(
        F::SessionSetTitle,
        "session/set_title",
        Agent,
        false,
        S::None,
        Some(C::SetSessionTitle),
    ),
    u(F::McpOverAcp, "mcp/message", Client, false, S::None, None),
    u(F::McpOverAcp, "mcp/message", Agent, true, S::None, None),
];

/// The proxy-chain methods (feature [`Feature::ProxyChains`]; the schema's
/// side `proxy`): between a conductor and the proxies it runs. A proxy is
/// an agent-role connection to its conductor, a conductor a client-role
/// connection to each proxy.
pub const PROXY_METHODS: &[&str] = &["proxy/initialize", "proxy/successor"];

/// The rows of [`PROXY_METHODS`], apart from [`METHODS`] (the agent and
/// client methods every binding's typed tables mirror). `proxy/initialize`
/// is the conductor's `initialize` of a proxy: the same params, answer and
/// phase rules. `proxy/successor` wraps one request or notification, each
/// way: the proxy forwards to its successor, the conductor delivers from
/// it.
pub const PROXY_ROWS: &[MethodInfo] = &[
    u(
        F::ProxyChains,
        "proxy/initialize",
        Agent,
        false,
        S::None,
        None,
    ),
    u(
        F::ProxyChains,
        "proxy/successor",
        Agent,
        false,
        S::None,
        None,
    ),
    u(
        F::ProxyChains,
        "proxy/successor",
        Client,
        false,
        S::None,
        None,
    ),
    u(
        F::ProxyChains,
        "proxy/successor",
        Agent,
        true,
        S::None,
        None,
    ),
    u(
        F::ProxyChains,
        "proxy/successor",
        Client,
        true,
        S::None,
        None,
    ),
];

/// Looks a method up by its wire name among the stable methods and the
/// unstable ones `features` turns on. Of a name with several rows, the one
/// of the kind asked (`notification`) handled by `handled_by` is chosen,
/// else one of that kind, else any: callers then refuse the wrong kind or
/// direction.
pub fn lookup(
    name: &str,
    features: Features,
    notification: bool,
    handled_by: Role,
) -> Option<&'static MethodInfo> {
    let mut rows = METHODS
        .iter()
        .chain(PROXY_ROWS)
        .filter(|m| m.name == name && m.feature.is_none_or(|f| features.has(f)));
    let first = rows.next()?;
    let mut same_kind = (first.notification == notification).then_some(first);
    if same_kind.is_some_and(|m| m.handled_by == handled_by) {
        return same_kind;
    }
    for info in rows {
        if info.notification == notification {
            if info.handled_by == handled_by {
                return Some(info);
            }
            same_kind.get_or_insert(info);
        }
    }
    Some(same_kind.unwrap_or(first))
}

/// Whether the result of `method` is an object, so that a `null` result
/// reads as `{}`: every ACP result is, except `proxy/successor`'s, which is
/// the successor's result unchanged (any JSON value, `null` included).
pub fn result_is_object(method: &str) -> bool {
    method != "proxy/successor"
}

/// Whether `name` is an ACP method (stable, or unstable with any feature).
pub fn is_protocol_method(name: &str) -> bool {
    METHODS.iter().chain(PROXY_ROWS).any(|m| m.name == name)
}

/// Whether `method` initializes a connection: `initialize`, or a
/// conductor's `proxy/initialize` of a proxy.
pub fn is_initialize(method: &str) -> bool {
    matches!(method, "initialize" | "proxy/initialize")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// `(method, side, notification)` of every definition with an
    /// `x-method` and `x-side` in `schema`: a method is a notification when
    /// its params are a `...Notification` (`mcp/message` is both).
    fn schema_methods(schema: &str) -> BTreeSet<(String, String, bool)> {
        let schema: Value = serde_json::from_str(schema).expect("schema");
        let defs = schema["$defs"].as_object().expect("$defs");
        let mut out = BTreeSet::new();
        for (name, def) in defs {
            let (Some(method), Some(side)) = (def["x-method"].as_str(), def["x-side"].as_str())
            else {
                continue;
            };
            out.insert((
                method.to_owned(),
                side.to_owned(),
                name.ends_with("Notification"),
            ));
        }
        out
    }

    fn ours(rows: impl Iterator<Item = &'static MethodInfo>) -> BTreeSet<(String, String, bool)> {
        rows.map(|m| {
            let side = match m.handled_by {
                Agent => "agent",
                Client => "client",
            };
            (m.name.to_owned(), side.to_owned(), m.notification)
        })
        .collect()
    }

    /// The stable rows are the stable schema's methods; `$/cancel_request`
    /// (side `protocol`) is the engine's.
    #[test]
    fn stable_rows_match_the_stable_schema() {
        let mut spec = schema_methods(include_str!("../../../spec/ts-sdk-2.4.0/v1/schema.json"));
        spec.retain(|(_, side, _)| side != "protocol");
        assert_eq!(ours(METHODS.iter().filter(|m| m.feature.is_none())), spec);
        // The 2026-08 snapshot the project started from has the same.
        let mut old = schema_methods(include_str!("../../../spec/v1/schema.json"));
        old.retain(|(_, side, _)| side != "protocol");
        assert_eq!(old, spec);
    }

    /// Every row is the unstable schema's; the schema's methods we have no
    /// row for are the engine's and the proxy chain's.
    #[test]
    fn all_rows_match_the_unstable_schema() {
        let mut spec = schema_methods(include_str!(
            "../../../spec/ts-sdk-2.4.0/v1/schema.unstable.json"
        ));
        let proxy: BTreeSet<(String, String, bool)> = spec
            .iter()
            .filter(|(_, side, _)| side == "proxy")
            .cloned()
            .collect();
        spec.retain(|(_, side, _)| side != "protocol" && side != "proxy");
        assert_eq!(ours(METHODS.iter()), spec);
        // The proxy rows: each proxy method of the schema, handled by the
        // agent role (a proxy), and `proxy/successor` by both.
        let names: BTreeSet<(String, bool)> =
            proxy.into_iter().map(|(name, _, n)| (name, n)).collect();
        let rows: BTreeSet<(String, bool)> = PROXY_ROWS
            .iter()
            .map(|m| (m.name.to_owned(), m.notification))
            .collect();
        assert_eq!(rows, names);
        assert!(
            PROXY_METHODS
                .iter()
                .all(|n| rows.iter().any(|(r, _)| r == n))
        );
    }

    #[test]
    fn lookup_sees_unstable_methods_only_when_their_feature_is_on() {
        assert!(lookup("session/fork", Features::NONE, false, Agent).is_none());
        let fork = Features::NONE.with(Feature::SessionFork);
        assert_eq!(
            lookup("session/fork", fork, false, Agent).map(|m| m.name),
            Some("session/fork")
        );
        assert!(lookup("session/archive", fork, false, Agent).is_none());
        assert!(
            lookup("session/new", Features::NONE, true, Agent).is_some_and(|m| !m.notification)
        );
        let mcp = Features::NONE.with(Feature::McpOverAcp);
        assert_eq!(
            lookup("mcp/message", mcp, false, Agent).map(|m| m.handled_by),
            Some(Client)
        );
        assert_eq!(
            lookup("mcp/message", mcp, true, Client).map(|m| m.handled_by),
            Some(Agent)
        );
        let proxy = Features::NONE.with(Feature::ProxyChains);
        assert!(lookup("proxy/successor", Features::NONE, false, Agent).is_none());
        for role in [Agent, Client] {
            for kind in [false, true] {
                let row = lookup("proxy/successor", proxy, kind, role).expect("row");
                assert_eq!((row.handled_by, row.notification), (role, kind));
            }
        }
        assert_eq!(
            lookup("proxy/initialize", proxy, false, Client).map(|m| m.handled_by),
            Some(Agent)
        );
        assert!(is_protocol_method("session/fork"));
        assert!(!is_protocol_method("_vendor/x"));
    }

    /// Where the schema's description of an unstable request says which
    /// capability it needs ("Only available if ..."), the row's capability
    /// is that one.
    #[test]
    fn unstable_capabilities_are_the_ones_the_schema_names() {
        let schema: Value = serde_json::from_str(include_str!(
            "../../../spec/ts-sdk-2.4.0/v1/schema.unstable.json"
        ))
        .expect("schema");
        let defs = schema["$defs"].as_object().expect("$defs");
        let mut checked = 0;
        for info in METHODS.iter().filter(|m| m.feature.is_some()) {
            let Some((_, def)) = defs
                .iter()
                .find(|(k, d)| d["x-method"] == info.name && k.ends_with("Request"))
            else {
                continue;
            };
            let text = def["description"].as_str().unwrap_or_default();
            let Some(at) = text.find("Only available") else {
                continue;
            };
            let sentence = &text[at..text[at..].find(". ").map_or(text.len(), |e| at + e)];
            let cap = info.capability.expect("a gated request has a capability");
            let leaf = cap.path().rsplit('.').next().expect("leaf");
            assert!(
                sentence.contains(&format!(".{leaf}`")),
                "{}: {sentence:?} does not name {}",
                info.name,
                cap.path()
            );
            checked += 1;
        }
        assert!(checked >= 5, "only {checked} descriptions checked");
    }

    #[test]
    fn capabilities_follow_the_spec_encoding() {
        let caps = serde_json::json!({
            "loadSession": true,
            "sessionCapabilities": {"list": {}, "resume": null, "systemPrompt": {"mode": {"override": {}}}},
            "promptCapabilities": {"image": false},
        });
        assert!(Capability::LoadSession.advertised_in(&caps));
        assert!(Capability::ListSessions.advertised_in(&caps));
        assert!(!Capability::ResumeSession.advertised_in(&caps));
        assert!(!Capability::CloseSession.advertised_in(&caps));
        assert!(!Capability::PromptImage.advertised_in(&caps));
        assert!(Capability::SystemPrompt.advertised_in(&caps));
        assert!(Capability::SystemPromptOverride.advertised_in(&caps));
        assert!(!Capability::ForkSession.advertised_in(&caps));
    }
}
