//! `json::is_valid` (the fast check of every frame a peer sends) and
//! `json::raw_from_string` against `serde_json` on arbitrary text.
//! Invariants: no panic; `is_valid` accepts exactly what
//! `serde_json::from_str::<&RawValue>` accepts; `raw_from_string` gives
//! what `RawValue::from_string` gives (the same text, or an error for both).
#![no_main]

use libacp_core::RawValue;
use libacp_core::json;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let serde = serde_json::from_str::<&RawValue>(text).is_ok();
    assert_eq!(json::is_valid(text), serde, "is_valid disagrees with serde_json");
    let fast = json::raw_from_string(text.to_owned());
    let slow = RawValue::from_string(text.to_owned());
    match (fast, slow) {
        (Ok(fast), Ok(slow)) => assert_eq!(fast.get(), slow.get()),
        (Err(_), Err(_)) => {}
        (fast, slow) => panic!("raw_from_string {fast:?}, RawValue::from_string {slow:?}"),
    }
});
