//! The unstable v1 extensions: off by default, turned on per connection
//! (the `unstable` option: `["all"]` or feature names), named as the
//! official Rust SDK's cargo features name them (`unstable_session_fork`;
//! the short form `session_fork` is accepted too).
//!
//! A feature that is off leaves its methods unknown to the protocol layer:
//! they reach the host as extension methods do (default `-32601`), neither
//! routed nor checked. A feature that is on makes its methods follow every
//! rule a stable method follows: direction, phase, params and results,
//! capabilities, sessions (see `methods::METHODS`).

use std::fmt;

/// One unstable extension of ACP v1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Feature {
    /// `auth/status`, `auth/status_update`.
    AuthStatus,
    /// `usage` in the `session/prompt` answer.
    EndTurnTokenUsage,
    /// `providers/list`, `providers/set`, `providers/disable`.
    LlmProviders,
    /// `mcp/message` (MCP servers of transport `acp`).
    McpOverAcp,
    /// `plan_update` and `plan_removed` session updates.
    PlanOperations,
    /// `proxy/initialize`, `proxy/successor` (proxy chains: a proxy is an
    /// agent-role connection, its conductor a client-role one).
    ProxyChains,
    /// `session/archive`, `session/unarchive`.
    SessionArchive,
    /// `session/fork`.
    SessionFork,
    /// `session/set_title`.
    SessionSetTitle,
    /// `session/status`.
    SessionStatus,
    /// `systemPrompt` on the session lifecycle requests.
    SessionSystemPrompt,
    /// `subagent_update`, `session_message`, `session_message_chunk`.
    Subagents,
}

impl Feature {
    /// Every feature, in name order.
    pub const ALL: [Feature; 12] = [
        Self::AuthStatus,
        Self::EndTurnTokenUsage,
        Self::LlmProviders,
        Self::McpOverAcp,
        Self::PlanOperations,
        Self::ProxyChains,
        Self::SessionArchive,
        Self::SessionFork,
        Self::SessionSetTitle,
        Self::SessionStatus,
        Self::SessionSystemPrompt,
        Self::Subagents,
    ];

    /// The Rust SDK's feature name (`unstable_session_fork`).
    pub fn name(self) -> &'static str {
        match self {
            Self::AuthStatus => "unstable_auth_status",
            Self::EndTurnTokenUsage => "unstable_end_turn_token_usage",
            Self::LlmProviders => "unstable_llm_providers",
            Self::McpOverAcp => "unstable_mcp_over_acp",
            Self::PlanOperations => "unstable_plan_operations",
            Self::ProxyChains => "unstable_proxy_chains",
            Self::SessionArchive => "unstable_session_archive",
            Self::SessionFork => "unstable_session_fork",
            Self::SessionSetTitle => "unstable_session_set_title",
            Self::SessionStatus => "unstable_session_status",
            Self::SessionSystemPrompt => "unstable_session_system_prompt",
            Self::Subagents => "unstable_subagents",
        }
    }

    /// The feature named `name` (with or without the `unstable_` prefix).
    pub fn from_name(name: &str) -> Option<Self> {
        let short = name.strip_prefix("unstable_").unwrap_or(name);
        Self::ALL
            .into_iter()
            .find(|f| f.name().strip_prefix("unstable_") == Some(short))
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of unstable features; empty by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Features(u16);

impl Features {
    /// No feature (the default).
    pub const NONE: Self = Self(0);

    /// Every feature.
    pub fn all() -> Self {
        Feature::ALL.into_iter().collect()
    }

    /// Whether `feature` is on.
    pub fn has(self, feature: Feature) -> bool {
        self.0 & feature.bit() != 0
    }

    /// This set with `feature` on.
    #[must_use]
    pub fn with(self, feature: Feature) -> Self {
        Self(self.0 | feature.bit())
    }

    /// Whether no feature is on.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The features that are on, in name order.
    pub fn iter(self) -> impl Iterator<Item = Feature> {
        Feature::ALL.into_iter().filter(move |f| self.has(*f))
    }

    /// Parses the `unstable` option: `"all"` (or `"unstable"`, the Rust
    /// SDK's umbrella feature) and feature names. `Err` names the first
    /// unknown entry.
    pub fn parse<S: AsRef<str>>(names: &[S]) -> Result<Self, String> {
        let mut set = Self::NONE;
        for name in names {
            let name = name.as_ref();
            if matches!(name, "all" | "unstable") {
                set = Self::all();
            } else if let Some(feature) = Feature::from_name(name) {
                set = set.with(feature);
            } else {
                return Err(name.to_owned());
            }
        }
        Ok(set)
    }
}

impl FromIterator<Feature> for Features {
    fn from_iter<I: IntoIterator<Item = Feature>>(iter: I) -> Self {
        iter.into_iter().fold(Self::NONE, Self::with)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_with_and_without_prefix() {
        for f in Feature::ALL {
            assert_eq!(Feature::from_name(f.name()), Some(f));
            let short = f.name().strip_prefix("unstable_").expect("prefix");
            assert_eq!(Feature::from_name(short), Some(f));
        }
        assert_eq!(Feature::from_name("session_forks"), None);
        assert_eq!(Feature::from_name("unstable_"), None);
    }

    #[test]
    fn parse_accepts_all_and_names_and_refuses_typos() {
        assert_eq!(Features::parse::<&str>(&[]), Ok(Features::NONE));
        assert_eq!(Features::parse(&["all"]), Ok(Features::all()));
        assert_eq!(Features::parse(&["unstable"]), Ok(Features::all()));
        let two = Features::parse(&["session_fork", "unstable_auth_status"]).expect("names");
        assert_eq!(
            two.iter().collect::<Vec<_>>(),
            [Feature::AuthStatus, Feature::SessionFork]
        );
        assert_eq!(
            Features::parse(&["session_fork", "fork"]),
            Err("fork".to_owned())
        );
    }

    /// The names are the Rust SDK's: its `unstable` feature list (5.0.0),
    /// plus proxy chains, which the schema crate names and the SDK's
    /// umbrella leaves out.
    #[test]
    fn names_are_the_rust_sdks() {
        let sdk = [
            "unstable_auth_status",
            "unstable_end_turn_token_usage",
            "unstable_llm_providers",
            "unstable_mcp_over_acp",
            "unstable_plan_operations",
            "unstable_session_archive",
            "unstable_session_fork",
            "unstable_session_set_title",
            "unstable_session_status",
            "unstable_session_system_prompt",
            "unstable_subagents",
        ];
        let ours: Vec<&str> = Feature::ALL
            .into_iter()
            .filter(|f| *f != Feature::ProxyChains)
            .map(Feature::name)
            .collect();
        assert_eq!(ours, sdk);
    }
}
