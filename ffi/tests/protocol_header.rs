//! `include/acp_protocol.h`, the protocol constants of C and C++ hosts, is
//! rendered here from the core's tables: the method table
//! (`protocol::methods::METHODS`, `PROXY_METHODS`), the unstable features
//! (`protocol::unstable::Feature::ALL`), the capabilities those tables
//! name, and the payload rules (`protocol::payload::RULES`). The committed
//! header never drifts from them: regenerate it with
//! `ACP_UPDATE_HEADER=1 cargo test -p libacp-ffi --test protocol_header`.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use libacp_core::Role;
use libacp_core::protocol::methods::{Capability, METHODS, PROXY_METHODS};
use libacp_core::protocol::payload::RULES;
use libacp_core::protocol::unstable::{Feature, Features};

/// What `unstable: ["all"]` means: every feature (`Features::parse`).
const ALL: &str = "all";

/// `session/set_config_option` -> `SESSION_SET_CONFIG_OPTION`.
fn method_macro(name: &str) -> String {
    format!("ACP_METHOD_{}", name.replace('/', "_").to_uppercase())
}

/// `unstable_session_fork` -> `ACP_FEATURE_SESSION_FORK`.
fn feature_macro(feature: Feature) -> String {
    let short = feature.name().trim_start_matches("unstable_");
    format!("ACP_FEATURE_{}", short.to_uppercase())
}

/// `camelCase` -> `CAMEL_CASE`.
fn upper_snake(word: &str) -> String {
    let mut out = String::new();
    for c in word.chars() {
        if c.is_ascii_uppercase() && !out.is_empty() {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// `agentCapabilities.sessionCapabilities.fork` ->
/// `ACP_CAPABILITY_AGENT_SESSION_FORK` (each `...Capabilities` segment
/// loses that word).
fn capability_macro(capability: Capability) -> String {
    let words: Vec<String> = capability
        .path()
        .split('.')
        .map(|segment| upper_snake(segment.strip_suffix("Capabilities").unwrap_or(segment)))
        .collect();
    format!("ACP_CAPABILITY_{}", words.join("_"))
}

fn rule_macro(name: &str) -> String {
    format!("ACP_PAYLOAD_RULE_{}", name.to_uppercase())
}

fn role(role: Role) -> &'static str {
    match role {
        Role::Agent => "ACP_ROLE_AGENT",
        Role::Client => "ACP_ROLE_CLIENT",
    }
}

fn or_null(macro_name: Option<String>) -> String {
    macro_name.unwrap_or_else(|| "NULL".to_owned())
}

/// Every capability the tables name, by path.
fn capabilities() -> Vec<Capability> {
    let mut out: Vec<Capability> = Vec::new();
    let named = METHODS
        .iter()
        .filter_map(|m| m.capability)
        .chain(RULES.iter().map(|r| r.capability));
    for capability in named {
        if !out.contains(&capability) {
            out.push(capability);
        }
    }
    out.sort_by_key(|c| c.path());
    out
}

/// One `#define NAME "value"` line, the value aligned.
fn define(out: &mut String, name: &str, value: &str) {
    let _ = writeln!(out, "#define {name:<52} \"{value}\"");
}

/// The source of include/acp_protocol.h.
fn render() -> String {
    let mut s = String::from(
        "/*
 * libacp protocol constants. GENERATED from the core's tables
 * (core/src/protocol: methods.rs, unstable.rs, payload.rs) by
 * ffi/tests/protocol_header.rs: do not edit.
 * Regenerate: ACP_UPDATE_HEADER=1 cargo test -p libacp-ffi --test protocol_header
 *
 * Every ACP v1 method, stable and unstable, spelled once: its wire name,
 * the side that handles it, whether it is a notification, the capability
 * that side must advertise and the unstable feature that turns it on; the
 * feature names the `unstable` option takes; the capability paths libacp
 * checks; the payload rule names of `payload_rule` engine events. C99 and
 * C++; include/README.md says how to use them.
 */
#ifndef LIBACP_ACP_PROTOCOL_H
#define LIBACP_ACP_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>

#include \"acp.h\"

/* ---- Methods: wire names ---- */

/* Stable ACP v1 methods. */
",
    );
    let mut seen = BTreeSet::new();
    for stable in [true, false] {
        if !stable {
            s.push_str(
                "\n/* Unstable v1 methods: ACP methods only while their feature is on (the\n \
                 * `unstable` option), extension methods to libacp otherwise. */\n",
            );
        }
        for m in METHODS.iter().filter(|m| m.feature.is_none() == stable) {
            if seen.insert(m.name) {
                define(&mut s, &method_macro(m.name), m.name);
            }
        }
    }
    let _ = writeln!(
        s,
        "\n/* Proxy chains ({}): the schema's side `proxy`, between a\n \
         * conductor (a client-role connection) and its proxies (agent-role\n \
         * connections): proxy/initialize is a proxy's initialize, and\n \
         * proxy/successor wraps one message each way. Not in ACP_METHODS. */",
        Feature::ProxyChains.name()
    );
    for name in PROXY_METHODS {
        define(&mut s, &method_macro(name), name);
    }

    s.push_str(
        "\n/* ---- Unstable features: what the `unstable` option takes ---- */\n\n\
         /* acp_options_add_string(o, ACP_STR(\"unstable\"), ACP_STR(ACP_FEATURE_SESSION_FORK), &err);\n \
         * The Rust SDK's cargo feature names; the short form without `unstable_`\n \
         * is accepted too, and ACP_FEATURE_ALL turns every feature on. */\n",
    );
    define(&mut s, "ACP_FEATURE_ALL", ALL);
    for f in Feature::ALL {
        define(&mut s, &feature_macro(f), f.name());
    }
    let _ = writeln!(s, "#define ACP_FEATURE_COUNT {}", Feature::ALL.len());
    s.push_str("static const char *const ACP_FEATURES[ACP_FEATURE_COUNT] = {\n");
    for f in Feature::ALL {
        let _ = writeln!(s, "    {},", feature_macro(f));
    }
    s.push_str("};\n");

    s.push_str(
        "\n/* ---- Capabilities: where each lives in the `initialize` exchange ---- */\n\n\
         /* As written in the spec and in libacp's refusals (the `capability` of a\n \
         * CapabilityNotAdvertised refusal's data, of a `payload_rule` event's\n \
         * details). A boolean capability counts when true, an object one when\n \
         * present and not null. */\n",
    );
    let caps = capabilities();
    for c in &caps {
        define(&mut s, &capability_macro(*c), c.path());
    }

    s.push_str(
        "\n/* ---- Payload rules: what a message may contain ---- */\n\n\
         /* A rule the sender breaks: its own request or notification is refused\n \
         * (ACP_ERR_REFUSED, nothing sent); its own answer goes out without the\n \
         * offending items; what the peer sends is delivered. Each case is an\n \
         * ACP_EVENT_ENGINE event of kind \"payload_rule\" (acp_options_set_engine_events)\n \
         * whose details name the rule. */\n",
    );
    for r in RULES {
        define(&mut s, &rule_macro(r.name), r.name);
    }
    s.push_str(
        "\n/* ---- The method table ---- */\n\n\
         /* One row per method and kind (`mcp/message` has two: a request the\n \
         * client handles, a notification the agent handles). */\n\
         typedef struct acp_method_info {\n\
         \x20 /* The wire name (an ACP_METHOD_* macro). */\n\
         \x20 const char *name;\n\
         \x20 /* The side that receives it and, for a request, answers it. */\n\
         \x20 acp_role handled_by;\n\
         \x20 /* A notification (no answer), or a request. */\n\
         \x20 bool notification;\n\
         \x20 /* The capability the handling side must advertise for it to be sent\n\
         \x20  * (an ACP_CAPABILITY_* path), or NULL. */\n\
         \x20 const char *capability;\n\
         \x20 /* The unstable feature that turns it on (an ACP_FEATURE_* name), or\n\
         \x20  * NULL for a stable method. */\n\
         \x20 const char *feature;\n\
         } acp_method_info;\n\n",
    );
    let _ = writeln!(s, "#define ACP_METHOD_COUNT {}", METHODS.len());
    s.push_str("static const acp_method_info ACP_METHODS[ACP_METHOD_COUNT] = {\n");
    for m in METHODS {
        let _ = writeln!(
            s,
            "    {{{}, {}, {}, {}, {}}},",
            method_macro(m.name),
            role(m.handled_by),
            m.notification,
            or_null(m.capability.map(capability_macro)),
            or_null(m.feature.map(feature_macro)),
        );
    }
    s.push_str("};\n");

    s.push_str(
        "\ntypedef struct acp_payload_rule_info {\n\
         \x20 /* The rule's name (an ACP_PAYLOAD_RULE_* macro). */\n\
         \x20 const char *name;\n\
         \x20 /* The side whose messages it limits. */\n\
         \x20 acp_role sender;\n\
         \x20 /* What the receiving side must have advertised (ACP_CAPABILITY_*). */\n\
         \x20 const char *capability;\n\
         \x20 /* The unstable feature it belongs to (ACP_FEATURE_*), or NULL. */\n\
         \x20 const char *feature;\n\
         } acp_payload_rule_info;\n\n",
    );
    let _ = writeln!(s, "#define ACP_PAYLOAD_RULE_COUNT {}", RULES.len());
    s.push_str(
        "static const acp_payload_rule_info ACP_PAYLOAD_RULES[ACP_PAYLOAD_RULE_COUNT] = {\n",
    );
    for r in RULES {
        let _ = writeln!(
            s,
            "    {{{}, {}, {}, {}}},",
            rule_macro(r.name),
            role(r.sender),
            capability_macro(r.capability),
            or_null(r.feature.map(feature_macro)),
        );
    }
    s.push_str("};\n\n#endif /* LIBACP_ACP_PROTOCOL_H */\n");
    s
}

#[test]
fn the_committed_protocol_header_matches_the_core_tables() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../include/acp_protocol.h");
    let generated = render();
    if std::env::var_os("ACP_UPDATE_HEADER").is_some() {
        std::fs::write(&path, &generated).expect("write include/acp_protocol.h");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/acp_protocol.h is out of date: run \
         `ACP_UPDATE_HEADER=1 cargo test -p libacp-ffi --test protocol_header` and commit it"
    );
}

/// Distinct names get distinct macros (a clash would silently define one
/// twice), and every macro is a C identifier.
#[test]
fn every_macro_name_is_distinct() {
    let mut names: Vec<String> = Vec::new();
    let mut methods: Vec<&str> = METHODS.iter().map(|m| m.name).collect();
    methods.extend(PROXY_METHODS);
    methods.sort_unstable();
    methods.dedup();
    names.extend(methods.iter().map(|m| method_macro(m)));
    names.push("ACP_FEATURE_ALL".to_owned());
    names.extend(Feature::ALL.into_iter().map(feature_macro));
    names.extend(capabilities().into_iter().map(capability_macro));
    names.extend(RULES.iter().map(|r| rule_macro(r.name)));
    let before = names.len();
    let unique: BTreeSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), before, "{names:?}");
    for n in &names {
        assert!(
            n.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'),
            "{n}"
        );
    }
}

/// `ACP_FEATURE_ALL` is what the option takes for every feature.
#[test]
fn feature_all_is_the_options_word_for_every_feature() {
    assert_eq!(Features::parse(&[ALL]), Ok(Features::all()));
}

/// Capability macros are their paths, `...Capabilities` shortened.
#[test]
fn capability_macros_follow_the_paths() {
    assert_eq!(
        capability_macro(Capability::BooleanConfigOptions),
        "ACP_CAPABILITY_CLIENT_SESSION_CONFIG_OPTIONS_BOOLEAN"
    );
    assert_eq!(
        capability_macro(Capability::ForkSession),
        "ACP_CAPABILITY_AGENT_SESSION_FORK"
    );
    assert_eq!(
        capability_macro(Capability::SystemPromptOverride),
        "ACP_CAPABILITY_AGENT_SESSION_SYSTEM_PROMPT_MODE_OVERRIDE"
    );
}
