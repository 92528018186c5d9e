//! `include/acp.h` is what cbindgen generates from this crate today: the
//! committed header never drifts from the code, and its `ACP_VERSION_*`
//! macros are the crate's version. Regenerate it with
//! `ACP_UPDATE_HEADER=1 cargo test -p libacp-ffi --test header`.

use std::path::Path;

#[test]
fn the_committed_header_matches_the_code() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut config =
        cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml");
    // The crate's version, as numbers: the header always says which libacp
    // it declares (a version bump without regenerating fails this test).
    config.after_includes = Some(format!(
        "\n/* The libacp version this header declares; acp_version() says which\n \
         * one the program runs against. */\n\
         #define ACP_VERSION_MAJOR {}\n#define ACP_VERSION_MINOR {}\n#define ACP_VERSION_PATCH {}\n\n\
         /* An acp_str of a string literal: ACP_STR(\"session/new\"). */\n\
         #ifdef __cplusplus\n#define ACP_STR(literal) (acp_str{{(literal), sizeof(literal) - 1}})\n\
         #else\n#define ACP_STR(literal) ((acp_str){{(literal), sizeof(literal) - 1}})\n#endif\n\n{}",
        env!("CARGO_PKG_VERSION_MAJOR"),
        env!("CARGO_PKG_VERSION_MINOR"),
        env!("CARGO_PKG_VERSION_PATCH"),
        // cbindgen cannot see through the macro that declares it.
        acp::status::acp_status::c_declaration(),
    ));
    let bindings = cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let path = crate_dir.join("../include/acp.h");
    if std::env::var_os("ACP_UPDATE_HEADER").is_some() {
        std::fs::write(&path, &generated).expect("write include/acp.h");
        return;
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/acp.h is out of date: run `ACP_UPDATE_HEADER=1 cargo test -p libacp-ffi --test header` and commit it"
    );
}
