//! Gives the shared library its SONAME on Linux: `libacp.so.MAJOR`, so a
//! program linked against it records the major version it was built for
//! (installed as `libacp.so.MAJOR.MINOR.PATCH`, with the `libacp.so.MAJOR`
//! and `libacp.so` links: scripts/install-ffi.sh).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libacp.so.{major}");
    }
}
