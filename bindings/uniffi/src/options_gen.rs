//! Renders `options_record.rs` (the [`crate::ConnectOptions`] record) from
//! the core's option table, `libacp_core::options::OPTIONS`: one field per
//! option, named as in the table, typed by its kind, documented with its
//! doc and default. `cargo test -p libacp-uniffi` fails when the committed
//! file differs from what the table gives;
//! `LIBACP_REGENERATE=1 cargo test -p libacp-uniffi options_record` writes
//! it (then regenerate the Kotlin and Swift sources:
//! `scripts/uniffi/generate.sh`).

use libacp_core::options::{Kind, OPTIONS, OptionSpec};

/// The Rust type of an option's field (UniFFI maps it to Kotlin and Swift).
fn field_type(kind: Kind) -> &'static str {
    match kind {
        Kind::Bool | Kind::Callback => "Option<bool>",
        Kind::Count { .. } | Kind::Millis { .. } => "Option<u64>",
        Kind::Choice(_) | Kind::Text | Kind::Path => "Option<String>",
        Kind::Texts => "Option<Vec<String>>",
        Kind::Pairs => "Option<HashMap<String, String>>",
    }
}

/// How a set field becomes the core's `Value`.
fn to_value(spec: &OptionSpec) -> String {
    let v = format!("self.{}", spec.name);
    let expr = match spec.kind {
        Kind::Bool | Kind::Callback => "Value::Bool(*v)",
        Kind::Count { .. } | Kind::Millis { .. } => "count(*v)",
        Kind::Choice(_) | Kind::Text | Kind::Path => "Value::Text(v.clone())",
        Kind::Texts => "Value::Texts(v.clone())",
        Kind::Pairs => "pairs(v)",
    };
    format!(
        "        if let Some(v) = &{v} {{\n            out.push((\"{}\", {expr}));\n        }}\n",
        spec.name
    )
}

fn doc_lines(spec: &OptionSpec) -> String {
    let mut text = spec.doc.trim().to_owned();
    if spec.kind == Kind::Callback {
        let method = match spec.name {
            "trace" => "on_frame",
            "events" => "on_engine_event",
            _ => "on_stderr",
        };
        text.push_str(&format!(
            " Here a flag: `true` hands them to `HostHandler.{method}`."
        ));
    }
    if let Kind::Choice(choices) = spec.kind {
        text.push_str(&format!(" One of `{}`.", choices.join("`, `")));
    }
    if !spec.default.is_empty() {
        text.push_str(&format!(" Default: {}.", spec.default));
    }
    // UniFFI copies doc comments into Kotlin, where `/*` opens a comment.
    let text = text.replace("/*", "/ *");
    let mut out = String::new();
    let mut line = String::from("    ///");
    for word in text.split_whitespace() {
        if line.len() + 1 + word.len() > 80 && line.len() > 7 {
            out.push_str(&line);
            out.push('\n');
            line = String::from("    ///");
        }
        line.push(' ');
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// The source of `options_record.rs`.
pub(crate) fn render() -> String {
    let mut s = String::from(
        "// @generated from the core's option table (core/src/options.rs) by\n\
         // src/options_gen.rs: do not edit. Regenerate with\n\
         // `LIBACP_REGENERATE=1 cargo test -p libacp-uniffi options_record`.\n\
         \n\
         use std::collections::HashMap;\n\
         \n\
         use libacp_core::options::Value;\n\
         \n\
         /// The settings of a connection or a server: every option of the core's\n\
         /// one table (the same names, units and ranges in every binding;\n\
         /// durations in milliseconds, sizes in bytes). Every field is optional:\n\
         /// `None` keeps the default. Which apply depends on how the connection\n\
         /// is made (spawned, local, connected by URL, served); setting one that\n\
         /// does not apply throws `InvalidArgument` naming it, as does a value\n\
         /// out of range.\n\
         #[derive(Debug, Clone, Default, PartialEq, uniffi::Record)]\n\
         pub struct ConnectOptions {\n",
    );
    for spec in OPTIONS {
        s.push_str(&doc_lines(spec));
        s.push_str("    #[uniffi(default)]\n");
        s.push_str(&format!(
            "    pub {}: {},\n",
            spec.name,
            field_type(spec.kind)
        ));
    }
    s.push_str(
        "}\n\
         \n\
         impl ConnectOptions {\n\
         \x20   /// The options set, by name, as the core's values.\n\
         \x20   pub(crate) fn values(&self) -> Vec<(&'static str, Value)> {\n\
         \x20       let mut out = Vec::new();\n",
    );
    for spec in OPTIONS {
        s.push_str(&to_value(spec));
    }
    s.push_str(
        "        out\n\
         \x20   }\n\
         }\n\
         \n\
         /// A count or a duration: beyond `i64` it is out of every range, which\n\
         /// the core says.\n\
         fn count(n: u64) -> Value {\n\
         \x20   i64::try_from(n).map_or(Value::Float(f64::INFINITY), Value::Int)\n\
         }\n\
         \n\
         /// Name and value pairs, in name order (a map has none of its own).\n\
         fn pairs(map: &HashMap<String, String>) -> Value {\n\
         \x20   let mut pairs: Vec<(String, String)> =\n\
         \x20       map.iter().map(|(k, v)| (k.clone(), v.clone())).collect();\n\
         \x20   pairs.sort();\n\
         \x20   Value::Pairs(pairs)\n\
         }\n",
    );
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn options_record_matches_the_core_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/options_record.rs");
        let want = super::render();
        if std::env::var_os("LIBACP_REGENERATE").is_some() {
            std::fs::write(path, &want).expect("write options_record.rs");
            return;
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            have == want,
            "bindings/uniffi/src/options_record.rs is not what the core's option table gives: \
             run `LIBACP_REGENERATE=1 cargo test -p libacp-uniffi options_record`, then \
             scripts/uniffi/generate.sh"
        );
    }
}
