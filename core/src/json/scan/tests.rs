use super::*;

/// The obvious byte-at-a-time reference.
fn naive_string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

#[test]
fn strings_end_at_the_first_unescaped_quote_whatever_the_escapes() {
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..20_000 {
        let len = usize::try_from(next() % 300).expect("small");
        let text: Vec<u8> = (0..len)
            .map(|_| match next() % 5 {
                0 | 1 => b'\\',
                2 => b'"',
                _ => b'a',
            })
            .collect();
        for start in [0, 1, 63, 64, 65] {
            if start <= text.len() {
                assert_eq!(
                    skip_string(&text, start),
                    naive_string_end(&text, start),
                    "{:?} from {start}",
                    String::from_utf8_lossy(&text)
                );
            }
        }
    }
}

#[test]
fn byte_masks_without_simd_agree() {
    let mut block = [0u8; 64];
    for round in 0..2000u32 {
        for (i, b) in block.iter_mut().enumerate() {
            let x = (round as usize * 31 + i * 17) ^ (i * i + round as usize);
            *b = match x % 7 {
                0 => b'\\',
                1 => b'"',
                2 => 0x80 | (x as u8),
                3 => 0,
                _ => x as u8,
            };
        }
        assert_eq!(masks_swar(&block), masks(&block));
    }
}

#[test]
fn values_are_skipped_whole() {
    let text = br#"{"a": [1, "x\"]", {"b": "}"}], "c": -1.5e3} , true"#;
    let end = skip_value(text, 0).expect("object");
    assert_eq!(&text[end..], b" , true");
    assert_eq!(skip_value(b"-1.5e3,", 0), Some(6));
    assert_eq!(skip_value(b"null", 0), Some(4));
    assert_eq!(skip_value(br#""\\""#, 0), Some(4));
    let big = serde_json::to_string(&"\"q\" \\".repeat(100_000)).expect("json");
    assert_eq!(skip_value(big.as_bytes(), 0), Some(big.len()));
    for bad in [&b""[..], b"[1, 2", br#""abc"#, br#"{"a": "}"#, b",", b" 1"] {
        assert_eq!(
            skip_value(bad, 0),
            None,
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
}

/// A selection spelled out: members by name, each with what it keeps.
#[derive(Debug, Clone, Copy)]
enum Pick {
    Whole,
    Type,
    Members(&'static [(&'static str, Pick)]),
    Items(&'static Pick),
}

impl Select for Pick {
    fn keep(self) -> Keep<Self> {
        match self {
            Pick::Whole => Keep::Whole,
            Pick::Type => Keep::Type,
            Pick::Members(_) => Keep::Members,
            Pick::Items(item) => Keep::Items(*item),
        }
    }

    fn member(self, name: &str) -> Option<Self> {
        let Pick::Members(members) = self else {
            return None;
        };
        members.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
    }
}

const PICK: Pick = Pick::Members(&[
    ("id", Pick::Whole),
    ("body", Pick::Type),
    ("list", Pick::Type),
    ("map", Pick::Type),
    ("n", Pick::Type),
    (
        "items",
        Pick::Items(&Pick::Members(&[("type", Pick::Whole)])),
    ),
]);

#[test]
fn sparse_trees_keep_what_is_selected_and_skip_the_rest() {
    let text = r#" { "id" : "a\"b", "body": "\\\"x\"", "list": [1, {"y": "]"}], "map": {"k": [2]},
        "n": -1.5e3, "skipped": {"deep": [[[["\"}"]]]]},
        "items": [{"type": "t", "data": "\u0000"}, 3, "s", {"data": 1}, []] } "#;
    assert_eq!(
        sparse(text, PICK),
        Some(
            serde_json::json!({"id": "a\"b", "body": "", "list": [], "map": {}, "n": -1500.0,
            "items": [{"type": "t"}, 3, "s", {}, []]})
        )
    );
    // Anything other than what the selection expects is kept whole.
    assert_eq!(
        sparse(r#"[1, {"id": 2}]"#, PICK),
        Some(serde_json::json!([1, {"id": 2}]))
    );
    assert_eq!(
        sparse(r#"{"items": {"type": 1}}"#, PICK),
        Some(serde_json::json!({"items": {"type": 1}}))
    );
    assert_eq!(sparse("{}", PICK), Some(serde_json::json!({})));
}

#[test]
fn sparse_keys_are_matched_unescaped_and_later_duplicates_win() {
    assert_eq!(
        sparse(
            r#"{"\u0069d": 1, "id": 2, "i\u0064": 3, "\u0069x": 4}"#,
            PICK
        ),
        Some(serde_json::json!({"id": 3}))
    );
}

#[test]
fn sparse_trees_of_text_that_is_not_json_are_none() {
    for bad in [
        "",
        "{",
        r#"{"id": 1"#,
        r#"{"id": 1,}"#,
        r#"{"id" 1}"#,
        r#"{1: 2}"#,
        r#"{"id": 1} x"#,
        r#"{"items": [1 2]}"#,
        r#"{"id": tru}"#,
    ] {
        assert_eq!(sparse(bad, PICK), None, "{bad}");
    }
    // A kept value deeper than serde_json builds.
    let deep = format!(r#"{{"id": {}{}}}"#, "[".repeat(200), "]".repeat(200));
    assert_eq!(sparse(&deep, PICK), None);
}
