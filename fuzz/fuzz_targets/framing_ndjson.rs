//! The NDJSON frame decoder on arbitrary bytes in arbitrary chunkings
//! (see `libacp_fuzz::check_framing`).
#![no_main]

use libacp_core::Framing;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    libacp_fuzz::check_framing(Framing::Ndjson, data);
});
