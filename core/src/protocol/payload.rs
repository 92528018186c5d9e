//! Payload capability rules: what a message may *contain*, given what the
//! receiving side advertised in `initialize` (the method rules, which
//! methods may be called at all, are in [`super::methods`]). Every rule of
//! the schema's descriptions is one row of [`RULES`].
//!
//! How each direction treats a breach:
//!
//! * **Sent by this side.** The core never sends what the peer did not
//!   advertise. A request or notification the host sends is refused,
//!   nothing sent: [`crate::CallError::Refused`] with
//!   [`crate::Refusal::CapabilityNotAdvertised`], whose `method` is the
//!   method and the offending member (`session/update /update/sessionUpdate`)
//!   and whose `capability` is the rule's. An answer the host gives cannot be
//!   refused (the peer waits for it): the offending items are removed from
//!   it (a boolean config option, a terminal auth method) and the host is
//!   told through the engine event [`crate::Event::PayloadRule`] with
//!   `withheld: true`.
//! * **Received from the peer.** Rules marked [`Receipt::Refuse`] (the
//!   stable rules libacp always enforced: `additionalDirectories`, prompt
//!   content types) answer `-32602` naming the member. Every other breach is
//!   delivered as received (tolerance) and reported as
//!   [`crate::Event::PayloadRule`] with `withheld: false`.
//!
//! Rules of an unstable feature apply only while the feature is on (off,
//! its members are opaque to the core, like any extension).

use std::sync::LazyLock;

use memchr::memmem;
use serde_json::Value;
use serde_json::value::RawValue;

use super::Role;
use super::methods::Capability;
use super::unstable::{Feature, Features};
use crate::json::scan;

/// Where in a message a rule looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The params of a request or notification.
    Params,
    /// The result of a request.
    Result,
}

/// What a rule looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matcher {
    /// A `session/update` whose `update.sessionUpdate` is one of these.
    Update(&'static [&'static str]),
    /// A top-level member that is present and not `null`.
    Member(&'static str),
    /// A top-level array member that is not empty.
    NonEmpty(&'static str),
    /// The string at the JSON pointer equals the value.
    Equals(&'static str, &'static str),
    /// An item of the array at the JSON pointer whose `key` member equals
    /// the value.
    Item {
        /// JSON pointer of the array.
        array: &'static str,
        /// The item's member.
        key: &'static str,
        /// Its value.
        value: &'static str,
    },
}

/// What the receiving side does with a breach it receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Receipt {
    /// Answer `-32602` naming the member (requests only).
    Refuse,
    /// Deliver it, and report [`crate::Event::PayloadRule`].
    Report,
}

/// One payload rule.
#[derive(Debug, Clone, Copy)]
pub struct PayloadRule {
    /// A short stable name, as events report it.
    pub name: &'static str,
    /// The side that sends the message.
    pub sender: Role,
    /// The methods whose messages it applies to.
    pub methods: &'static [&'static str],
    /// Params or result.
    pub part: Part,
    /// What it looks for.
    pub matcher: Matcher,
    /// What the receiving side must have advertised for it.
    pub capability: Capability,
    /// The unstable feature it belongs to (`None`: stable).
    pub feature: Option<Feature>,
    /// What the receiver does with a breach.
    pub receipt: Receipt,
}

const LIFECYCLE: &[&str] = &[
    "session/new",
    "session/load",
    "session/resume",
    "session/fork",
];
const CONFIG_ANSWERS: &[&str] = &[
    "session/new",
    "session/load",
    "session/resume",
    "session/fork",
    "session/set_config_option",
];
const UPDATE: &[&str] = &["session/update"];

const fn rule(
    name: &'static str,
    sender: Role,
    methods: &'static [&'static str],
    part: Part,
    matcher: Matcher,
    capability: Capability,
) -> PayloadRule {
    PayloadRule {
        name,
        sender,
        methods,
        part,
        matcher,
        capability,
        feature: None,
        receipt: Receipt::Report,
    }
}

const fn unstable(feature: Feature, mut r: PayloadRule) -> PayloadRule {
    r.feature = Some(feature);
    r
}

const fn refused(mut r: PayloadRule) -> PayloadRule {
    r.receipt = Receipt::Refuse;
    r
}

use Capability as C;
use Matcher::{Equals, Item, Member, NonEmpty, Update};
use Part::{Params, Result as Answer};
use Role::{Agent, Client};

/// Every payload rule of the schema (the sentences they come from are
/// quoted in each capability's description: "Agents MUST only send this
/// update when the Client advertised ...", "Clients MUST only send this
/// when the Agent advertises ...", "Only available when the Agent
/// capabilities indicate ...").
pub const RULES: &[PayloadRule] = &[
    // What the agent sends.
    rule(
        "notice",
        Agent,
        UPDATE,
        Params,
        Update(&["notice"]),
        C::Notices,
    ),
    rule(
        "compaction",
        Agent,
        UPDATE,
        Params,
        Update(&["compaction_update", "compaction_summary_chunk"]),
        C::Compaction,
    ),
    rule(
        "boolean_config_option",
        Agent,
        CONFIG_ANSWERS,
        Answer,
        Item {
            array: "/configOptions",
            key: "type",
            value: "boolean",
        },
        C::BooleanConfigOptions,
    ),
    rule(
        "boolean_config_option_update",
        Agent,
        UPDATE,
        Params,
        Item {
            array: "/update/configOptions",
            key: "type",
            value: "boolean",
        },
        C::BooleanConfigOptions,
    ),
    rule(
        "form_elicitation",
        Agent,
        &["elicitation/create"],
        Params,
        Equals("/mode", "form"),
        C::ElicitationForm,
    ),
    rule(
        "url_elicitation",
        Agent,
        &["elicitation/create"],
        Params,
        Equals("/mode", "url"),
        C::ElicitationUrl,
    ),
    rule(
        "terminal_auth_method",
        Agent,
        &["initialize", "proxy/initialize"],
        Answer,
        Item {
            array: "/authMethods",
            key: "type",
            value: "terminal",
        },
        C::AuthTerminal,
    ),
    unstable(
        Feature::PlanOperations,
        rule(
            "plan_operations",
            Agent,
            UPDATE,
            Params,
            Update(&["plan_update", "plan_removed"]),
            C::Plan,
        ),
    ),
    unstable(
        Feature::Subagents,
        rule(
            "subagents",
            Agent,
            UPDATE,
            Params,
            Update(&[
                "subagent_update",
                "session_message",
                "session_message_chunk",
            ]),
            C::Subagents,
        ),
    ),
    // What the client sends.
    refused(rule(
        "additional_directories",
        Client,
        LIFECYCLE,
        Params,
        NonEmpty("additionalDirectories"),
        C::AdditionalDirectories,
    )),
    refused(rule(
        "image_prompt",
        Client,
        &["session/prompt"],
        Params,
        Item {
            array: "/prompt",
            key: "type",
            value: "image",
        },
        C::PromptImage,
    )),
    refused(rule(
        "audio_prompt",
        Client,
        &["session/prompt"],
        Params,
        Item {
            array: "/prompt",
            key: "type",
            value: "audio",
        },
        C::PromptAudio,
    )),
    refused(rule(
        "embedded_context_prompt",
        Client,
        &["session/prompt"],
        Params,
        Item {
            array: "/prompt",
            key: "type",
            value: "resource",
        },
        C::PromptEmbeddedContext,
    )),
    rule(
        "http_mcp_server",
        Client,
        LIFECYCLE,
        Params,
        Item {
            array: "/mcpServers",
            key: "type",
            value: "http",
        },
        C::McpHttp,
    ),
    rule(
        "sse_mcp_server",
        Client,
        LIFECYCLE,
        Params,
        Item {
            array: "/mcpServers",
            key: "type",
            value: "sse",
        },
        C::McpSse,
    ),
    unstable(
        Feature::McpOverAcp,
        rule(
            "acp_mcp_server",
            Client,
            LIFECYCLE,
            Params,
            Item {
                array: "/mcpServers",
                key: "type",
                value: "acp",
            },
            C::McpAcp,
        ),
    ),
    unstable(
        Feature::SessionSystemPrompt,
        rule(
            "system_prompt",
            Client,
            LIFECYCLE,
            Params,
            Member("systemPrompt"),
            C::SystemPrompt,
        ),
    ),
    unstable(
        Feature::SessionSystemPrompt,
        rule(
            "system_prompt_override",
            Client,
            LIFECYCLE,
            Params,
            Equals("/systemPrompt/mode", "override"),
            C::SystemPromptOverride,
        ),
    ),
    unstable(
        Feature::SessionArchive,
        rule(
            "archived_filter",
            Client,
            &["session/list"],
            Params,
            Member("archived"),
            C::ArchiveSession,
        ),
    ),
];

/// A broken rule: which, and the member that breaks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Breach {
    /// The rule.
    pub rule: &'static PayloadRule,
    /// JSON pointer of the offending member (`/prompt/1/type`).
    pub field: String,
}

impl Breach {
    /// The engine event that reports it: `withheld` when this side removed
    /// it from its own answer to `method`, else the peer sent it.
    pub fn event(self, method: &str, withheld: bool) -> crate::rpc::Event {
        crate::rpc::Event::PayloadRule {
            rule: self.rule.name,
            withheld,
            method: method.to_owned(),
            field: self.field,
            capability: self.rule.capability.path(),
        }
    }
}

impl PartialEq for PayloadRule {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for PayloadRule {}

/// Whether `rule` applies to `part` of `method` sent by `sender`.
fn selects(rule: &PayloadRule, sender: Role, method: &str, part: Part, features: Features) -> bool {
    rule.sender == sender
        && rule.part == part
        && rule.methods.contains(&method)
        && rule.feature.is_none_or(|f| features.has(f))
}

/// The rules that apply to `part` of `method` sent by `sender`.
fn rules_for(
    sender: Role,
    method: &str,
    part: Part,
    features: Features,
) -> impl Iterator<Item = &'static PayloadRule> + '_ {
    RULES
        .iter()
        .filter(move |r| selects(r, sender, method, part, features))
}

/// What each rule of [`RULES`] (same index) looks for in raw text: its
/// matcher's values as JSON strings, quotes included (`"notice"`), each
/// with its searcher built once (building them per message was 2 % of each
/// side's samples on a stream of updates: bench/README.md, W1). Empty for
/// the matchers a word cannot tell ([`Member`], [`NonEmpty`]).
static NEEDLES: LazyLock<Vec<Vec<memmem::Finder<'static>>>> = LazyLock::new(|| {
    RULES
        .iter()
        .map(|rule| {
            let words: Vec<&str> = match rule.matcher {
                Update(tags) => tags.to_vec(),
                Equals(_, v) | Item { value: v, .. } => vec![v],
                Member(_) | NonEmpty(_) => Vec::new(),
            };
            words
                .into_iter()
                .map(|w| memmem::Finder::new(format!("\"{w}\"").as_bytes()).into_owned())
                .collect()
        })
        .collect()
});

/// Whether any rule applies to `part` of `method` from `sender`.
pub fn applies(sender: Role, method: &str, part: Part, features: Features) -> bool {
    rules_for(sender, method, part, features).next().is_some()
}

/// The breaches of `value` (the params or result of `method`, sent by
/// `sender`) against what the receiver advertised (`receiver_caps`, its
/// `agentCapabilities` or `clientCapabilities`).
pub fn breaches(
    sender: Role,
    method: &str,
    part: Part,
    value: &Value,
    receiver_caps: &Value,
    features: Features,
) -> Vec<Breach> {
    let mut out = Vec::new();
    for rule in rules_for(sender, method, part, features) {
        if rule.capability.advertised_in(receiver_caps) {
            continue;
        }
        for field in matches(rule.matcher, value) {
            out.push(Breach { rule, field });
        }
    }
    out
}

/// The pointers of the members `matcher` finds in `value`.
fn matches(matcher: Matcher, value: &Value) -> Vec<String> {
    match matcher {
        Update(tags) => {
            let tag = value
                .pointer("/update/sessionUpdate")
                .and_then(Value::as_str);
            if tag.is_some_and(|t| tags.contains(&t)) {
                vec!["/update/sessionUpdate".to_owned()]
            } else {
                Vec::new()
            }
        }
        Member(name) => match value.get(name) {
            Some(v) if !v.is_null() => vec![format!("/{name}")],
            _ => Vec::new(),
        },
        NonEmpty(name) => match value.get(name).and_then(Value::as_array) {
            Some(items) if !items.is_empty() => vec![format!("/{name}")],
            _ => Vec::new(),
        },
        Equals(pointer, wanted) => {
            if value.pointer(pointer).and_then(Value::as_str) == Some(wanted) {
                vec![pointer.to_owned()]
            } else {
                Vec::new()
            }
        }
        Item {
            array,
            key,
            value: wanted,
        } => value
            .pointer(array)
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .enumerate()
                    .filter(|(_, item)| item.get(key).and_then(Value::as_str) == Some(wanted))
                    .map(|(i, _)| format!("{array}/{i}/{key}"))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// Whether any rule on `part` of `method` may match the raw text: a cheap
/// test on the hot path (`session/update`), before any parse: the words a
/// rule looks for, as JSON strings. A `\u` escape could spell any of them,
/// so it counts as a yes.
pub fn may_match(
    sender: Role,
    method: &str,
    part: Part,
    raw: &RawValue,
    receiver_caps: &Value,
    features: Features,
) -> bool {
    let text = raw.get().as_bytes();
    let mut any = false;
    for (rule, needles) in RULES.iter().zip(NEEDLES.iter()) {
        if !selects(rule, sender, method, part, features)
            || rule.capability.advertised_in(receiver_caps)
        {
            continue;
        }
        any = true;
        if matches!(rule.matcher, Member(_) | NonEmpty(_))
            || needles.iter().any(|n| n.find(text).is_some())
        {
            return true;
        }
    }
    any && scan::may_hold_unicode_escape(text)
}

/// Removes what `breaches` found from `value` (the items of arrays; the
/// members otherwise), for an answer this side cannot refuse.
pub fn strip(value: &mut Value, breaches: &[Breach]) {
    // Array items: highest index first, so earlier indexes stay valid.
    let mut items: Vec<(&str, usize)> = Vec::new();
    for b in breaches {
        if let Item { array, key, .. } = b.rule.matcher {
            let index = b
                .field
                .strip_prefix(array)
                .and_then(|rest| rest.strip_suffix(&format!("/{key}")))
                .and_then(|i| i.strip_prefix('/'))
                .and_then(|i| i.parse::<usize>().ok());
            if let Some(i) = index {
                items.push((array, i));
            }
        } else if let Some(obj) = value.as_object_mut()
            && let Some(name) = b.field.strip_prefix('/')
            && !name.contains('/')
        {
            obj.remove(name);
        }
    }
    items.sort_by_key(|item| std::cmp::Reverse(item.1));
    for (array, i) in items {
        if let Some(list) = value.pointer_mut(array).and_then(Value::as_array_mut)
            && i < list.len()
        {
            list.remove(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn caps() -> Value {
        json!({})
    }

    #[test]
    fn a_notice_needs_the_clients_notices_capability() {
        let notice = json!({"sessionId": "s", "update": {"sessionUpdate": "notice", "severity": "info", "title": "t"}});
        let found = breaches(
            Agent,
            "session/update",
            Params,
            &notice,
            &caps(),
            Features::NONE,
        );
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].rule.name, "notice");
        assert_eq!(found[0].field, "/update/sessionUpdate");
        let advertised = json!({"session": {"notices": {}}});
        assert!(
            breaches(
                Agent,
                "session/update",
                Params,
                &notice,
                &advertised,
                Features::NONE
            )
            .is_empty()
        );
    }

    #[test]
    fn unstable_rules_apply_only_with_their_feature() {
        let update =
            json!({"sessionId": "s", "update": {"sessionUpdate": "plan_update", "plan": {}}});
        assert!(
            breaches(
                Agent,
                "session/update",
                Params,
                &update,
                &caps(),
                Features::NONE
            )
            .is_empty()
        );
        let on = Features::NONE.with(Feature::PlanOperations);
        assert_eq!(
            breaches(Agent, "session/update", Params, &update, &caps(), on).len(),
            1
        );
    }

    #[test]
    fn boolean_config_options_are_stripped_from_answers() {
        let mut answer = json!({"sessionId": "s", "configOptions": [
            {"id": "a", "type": "boolean", "currentValue": true},
            {"id": "b", "type": "select"},
            {"id": "c", "type": "boolean"},
        ]});
        let found = breaches(
            Agent,
            "session/new",
            Answer,
            &answer,
            &caps(),
            Features::NONE,
        );
        assert_eq!(
            found.iter().map(|b| b.field.as_str()).collect::<Vec<_>>(),
            ["/configOptions/0/type", "/configOptions/2/type"]
        );
        strip(&mut answer, &found);
        assert_eq!(
            answer["configOptions"],
            json!([{"id": "b", "type": "select"}])
        );
        let advertised = json!({"session": {"configOptions": {"boolean": {}}}});
        assert!(
            breaches(
                Agent,
                "session/new",
                Answer,
                &answer,
                &advertised,
                Features::NONE
            )
            .is_empty()
        );
    }

    #[test]
    fn members_are_stripped_and_found_by_pointer() {
        let mut params = json!({"cwd": "/w", "systemPrompt": {"content": [], "mode": "override"}});
        let on = Features::NONE.with(Feature::SessionSystemPrompt);
        let found = breaches(Client, "session/new", Params, &params, &caps(), on);
        let names: Vec<&str> = found.iter().map(|b| b.rule.name).collect();
        assert_eq!(names, ["system_prompt", "system_prompt_override"]);
        let only_append = json!({"sessionCapabilities": {"systemPrompt": {}}});
        let found = breaches(Client, "session/new", Params, &params, &only_append, on);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].field, "/systemPrompt/mode");
        let all = breaches(Client, "session/new", Params, &params, &caps(), on);
        strip(&mut params, &all);
        assert_eq!(params, json!({"cwd": "/w"}));
    }

    #[test]
    fn the_prefilter_never_misses_a_breach() {
        let cases = [
            r#"{"sessionId":"s","update":{"sessionUpdate":"notice","title":"t"}}"#,
            r#"{"sessionId":"s","update":{"sessionUpdate":"compaction_update","compactionId":"c"}}"#,
            r#"{"sessionId":"s","update":{"sessionUpdate":"config_option_update","configOptions":[{"type":"boolean"}]}}"#,
            r#"{"sessionId":"s","update":{"session\u0055pdate":"notice"}}"#,
        ];
        for text in cases {
            let raw = RawValue::from_string(text.to_owned()).expect("raw");
            assert!(
                may_match(
                    Agent,
                    "session/update",
                    Params,
                    &raw,
                    &caps(),
                    Features::NONE
                ),
                "{text}"
            );
        }
        let chunk = RawValue::from_string(
            r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a \"notice\""}}}"#
                .to_owned(),
        )
        .expect("raw");
        // A quoted word inside text is escaped: no match on the raw text.
        assert!(!may_match(
            Agent,
            "session/update",
            Params,
            &chunk,
            &caps(),
            Features::NONE
        ));
        let all =
            json!({"session": {"notices": {}, "compaction": {}, "configOptions": {"boolean": {}}}});
        let raw = RawValue::from_string(cases[0].to_owned()).expect("raw");
        assert!(!may_match(
            Agent,
            "session/update",
            Params,
            &raw,
            &all,
            Features::NONE
        ));
    }

    /// Every capability a rule names is one the schema's descriptions say
    /// gates a payload, and every rule has a distinct name.
    #[test]
    fn rules_are_named_once() {
        let mut names: Vec<&str> = RULES.iter().map(|r| r.name).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(names.len(), before);
    }
}
