//! The ACP v1 method table (checked against `spec/v1/meta.json`, the
//! project's copy of the spec's): who handles each method, whether it is
//! scoped to a session, and which advertised
//! capability it needs.

use serde_json::Value;

use super::Role;

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
    /// May name a session; checked when it does.
    Optional,
}

/// A capability a method needs, advertised in `initialize`.
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
    /// `additionalDirectories` of `session/new|load|resume`.
    AdditionalDirectories,
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
        }
    }

    /// Whether `caps` (the `agentCapabilities` or `clientCapabilities`
    /// object) advertises it. Booleans must be `true`; object-valued
    /// capabilities must be present and not `null` (the spec's "supplying
    /// `{}` means supported").
    pub fn advertised_in(self, caps: &Value) -> bool {
        let pointer = match self {
            Self::LoadSession => "/loadSession",
            Self::ListSessions => "/sessionCapabilities/list",
            Self::ResumeSession => "/sessionCapabilities/resume",
            Self::CloseSession => "/sessionCapabilities/close",
            Self::DeleteSession => "/sessionCapabilities/delete",
            Self::Logout => "/auth/logout",
            Self::ReadTextFile => "/fs/readTextFile",
            Self::WriteTextFile => "/fs/writeTextFile",
            Self::Terminal => "/terminal",
            Self::Elicitation => "/elicitation",
            Self::PromptImage => "/promptCapabilities/image",
            Self::PromptAudio => "/promptCapabilities/audio",
            Self::PromptEmbeddedContext => "/promptCapabilities/embeddedContext",
            Self::AdditionalDirectories => "/sessionCapabilities/additionalDirectories",
        };
        match caps.pointer(pointer) {
            Some(Value::Bool(b)) => *b,
            Some(Value::Object(_)) => true,
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
    }
}

use Capability as C;
use Role::{Agent, Client};
use SessionScope as S;

/// Every stable v1 method.
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
];

/// Looks a method up by its wire name.
pub fn lookup(name: &str) -> Option<&'static MethodInfo> {
    METHODS.iter().find(|m| m.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table covers exactly the methods of the spec's meta.json.
    #[test]
    fn table_matches_the_spec_meta() {
        let meta: Value =
            serde_json::from_str(include_str!("../../../spec/v1/meta.json")).expect("meta.json");
        let mut spec: Vec<(String, Role)> = Vec::new();
        for (group, role) in [("agentMethods", Agent), ("clientMethods", Client)] {
            for name in meta[group].as_object().expect(group).values() {
                spec.push((name.as_str().expect("name").to_owned(), role));
            }
        }
        spec.sort_by(|a, b| a.0.cmp(&b.0));
        let mut ours: Vec<(String, Role)> = METHODS
            .iter()
            .map(|m| (m.name.to_owned(), m.handled_by))
            .collect();
        ours.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(ours, spec);
    }

    /// The table is what the schema itself says: each definition's
    /// `x-method` and `x-side` (the side that handles it), and whether the
    /// method is a notification (its params are a `...Notification`, and no
    /// `...Response` names it). `$/cancel_request` (side `protocol`) is the
    /// engine's.
    #[test]
    fn table_matches_the_schema_x_method_and_x_side() {
        let schema: Value = serde_json::from_str(include_str!("../../../spec/v1/schema.json"))
            .expect("schema.json");
        let defs = schema["$defs"].as_object().expect("$defs");
        let mut spec: std::collections::BTreeMap<String, (Role, bool)> = Default::default();
        for (name, def) in defs {
            let (Some(method), Some(side)) = (def["x-method"].as_str(), def["x-side"].as_str())
            else {
                continue;
            };
            let role = match side {
                "agent" => Agent,
                "client" => Client,
                _ => continue,
            };
            let entry = spec.entry(method.to_owned()).or_insert((role, true));
            assert_eq!(entry.0, role, "{method}: two sides");
            if name.ends_with("Request") || name.ends_with("Response") {
                entry.1 = false;
            }
        }
        let ours: std::collections::BTreeMap<String, (Role, bool)> = METHODS
            .iter()
            .map(|m| (m.name.to_owned(), (m.handled_by, m.notification)))
            .collect();
        assert_eq!(ours, spec);
    }

    #[test]
    fn capabilities_follow_the_spec_encoding() {
        let caps = serde_json::json!({
            "loadSession": true,
            "sessionCapabilities": {"list": {}, "resume": null},
            "promptCapabilities": {"image": false},
        });
        assert!(Capability::LoadSession.advertised_in(&caps));
        assert!(Capability::ListSessions.advertised_in(&caps));
        assert!(!Capability::ResumeSession.advertised_in(&caps));
        assert!(!Capability::CloseSession.advertised_in(&caps));
        assert!(!Capability::PromptImage.advertised_in(&caps));
    }
}
