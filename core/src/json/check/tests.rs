use super::*;
use serde_json::value::RawValue;

/// The oracle: what `serde_json` accepts as one raw value.
fn serde_accepts(text: &str) -> bool {
    serde_json::from_str::<&RawValue>(text).is_ok()
}

/// Whether `text` is valid, once both agree on it.
fn assert_agrees(text: &str) -> bool {
    let valid = is_valid(text);
    assert_eq!(
        valid,
        serde_accepts(text),
        "is_valid and serde_json disagree on {text:?}"
    );
    valid
}

use crate::test_rng::Rng;

#[test]
fn agrees_with_serde_on_hand_picked_cases() {
    let cases = [
        "",
        " ",
        "{}",
        " {} \n",
        "[]",
        "[ ]",
        "{ }",
        "[1,]",
        "[,1]",
        "{,}",
        r#"{"a":1,}"#,
        r#"{"a" 1}"#,
        r#"{"a":}"#,
        r#"{1:1}"#,
        r#"{"a":1 "b":2}"#,
        "[1 2]",
        "[1}",
        "{]",
        "[[[]]]",
        "[[[]]",
        "[]]",
        "0",
        "-0",
        "-",
        "01",
        "-01",
        "1.",
        "1.5",
        ".5",
        "1e",
        "1e+",
        "1e+5",
        "1E-05",
        "1.5e3",
        "2.e3",
        "1e999",
        "123456789012345678901234567890",
        "true",
        "tru",
        "truex",
        "[truex]",
        "[true,false,null]",
        "nul",
        "NaN",
        "Infinity",
        "\"\"",
        "\"a",
        "\"\\\"",
        "\"\\\\\"",
        "\"\\/\\b\\f\\n\\r\\t\"",
        "\"\\a\"",
        "\"\\u00e9\"",
        "\"\\u00E9\"",
        "\"\\u00g9\"",
        "\"\\u00\"",
        "\"\\u\"",
        "\"\\ud800\"",
        "\"\\udc00\\ud800\"",
        "\"tab\there\"",
        "\"nl\nhere\"",
        "\"del\u{7f}ok\"",
        "\"é ü 漢字 🎉\"",
        "\"\u{0}\"",
        "{\"a\":\"b\"}x",
        "{\"a\":\"b\"} {}",
        "\t[\r\n1\r\n]\t",
        "[1\u{b}]",
        "\u{feff}{}",
        r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"x":[1,2.5,-3e2,true,null,"s"]}}"#,
    ];
    for case in cases {
        assert_agrees(case);
    }
}

/// Strings whose escapes, backslash runs, `\u` digits and closing quotes
/// fall on every position around the 64-byte blocks.
#[test]
fn agrees_with_serde_around_block_edges() {
    let tails = [
        "\"",
        "\\\"\"",
        "\\\\\"",
        "\\u1234\"",
        "\\u12\"",
        "\\\\\\\"\"",
        "\\x\"",
        "\n\"",
        "\\",
        "\\u",
        "\\u123",
    ];
    for pad in 0..140 {
        for tail in tails {
            let text = format!("\"{}{tail}", "a".repeat(pad));
            assert_agrees(&text);
            assert_agrees(&format!("[{text},1]"));
            let runs = format!("\"{}{tail}", "\\\\".repeat(pad / 2));
            assert_agrees(&runs);
        }
    }
}

/// Random text from JSON's own pieces (most of it near-valid), and
/// single-byte mutations of valid documents.
#[test]
fn agrees_with_serde_on_generated_text() {
    const PIECES: [&str; 30] = [
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        " ",
        "\"",
        "\"k\"",
        "\"v\\\"\"",
        "\\",
        "\\\\",
        "\\u00e9",
        "\\u12",
        "\\n",
        "\\q",
        "0",
        "-",
        "1",
        "12.5",
        "e",
        "E+",
        ".",
        "true",
        "null",
        "fals",
        "\n",
        "\u{1}",
        "é",
        "x",
    ];
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    // How many texts were valid, and how many not.
    let mut seen = [0usize; 2];
    for _ in 0..60_000 {
        let n = rng.below(12);
        let text: String = (0..n).map(|_| PIECES[rng.below(PIECES.len())]).collect();
        seen[usize::from(assert_agrees(&text))] += 1;
    }
    let docs = [
        r#"{"jsonrpc":"2.0","id":7,"method":"fs/read_text_file","params":{"path":"/a\"b","line":1e3,"limit":null,"x":[true,false,-0.5]}}"#,
        r#"[{"a":[[],{}],"b":"\\\\\"\u00ff\n"},-12.5e-3,"é"]"#,
    ];
    let alphabet = b"{}[],:\" \\0123456789.eE+-tfnulrsax\n\t\x01";
    for doc in docs {
        assert_agrees(doc);
        for _ in 0..20_000 {
            let mut bytes = doc.as_bytes().to_vec();
            let at = rng.below(bytes.len());
            match rng.below(3) {
                0 => bytes[at] = alphabet[rng.below(alphabet.len())],
                1 => {
                    bytes.remove(at);
                }
                _ => bytes.insert(at, alphabet[rng.below(alphabet.len())]),
            }
            if let Ok(text) = std::str::from_utf8(&bytes) {
                seen[usize::from(assert_agrees(text))] += 1;
            }
        }
    }
    // Both answers were exercised, not only one.
    assert!(
        seen[0] > 5_000 && seen[1] > 5_000,
        "valid/invalid: {seen:?}"
    );
}

/// Long escape-dense strings (W3's payload shape) and deep nesting.
#[test]
fn agrees_with_serde_on_large_and_deep_text() {
    let dense = "\"q\" \\ ".repeat(40_000);
    let escaped = serde_json::to_string(&dense).expect("a string serializes");
    assert!(is_valid(&escaped));
    assert!(is_valid(&format!("{{\"text\":{escaped}}}")));
    let mut broken = escaped.clone();
    broken.insert_str(escaped.len() / 2, "\\x");
    assert_agrees(&broken);
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(
        is_valid(&deep),
        "serde_json's raw values have no depth limit"
    );
    assert!(!is_valid(&deep[1..]));
}

#[test]
fn the_simd_masks_match_the_portable_ones() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let alphabet = b"\\\"\x00\x1f\x20\x7f\x80\xffabnrtu/";
    for _ in 0..5_000 {
        let block: Vec<u8> = (0..64)
            .map(|_| alphabet[rng.below(alphabet.len())])
            .collect();
        let (fast, slow) = (masks(&block), masks_portable(&block));
        assert_eq!(fast.backslashes, slow.backslashes);
        assert_eq!(fast.quotes, slow.quotes);
        assert_eq!(fast.controls, slow.controls);
        assert_eq!(simple_escapes(&block), simple_escapes_portable(&block));
    }
}
