//! Interop with the official TypeScript, Python and Rust SDKs, both directions,
//! over real pipes: a libacp client drives each SDK's agent, and each SDK's
//! client drives a libacp agent, through the whole check sequence of
//! `tests/interop/README.md` (initialize, session/new, streaming, permission,
//! fs read and write, terminal, cancel, load).
//!
//! Needs `scripts/setup-interop.sh` to have run (the README's test command
//! does it): the pinned npm and PyPI packages are not vendored.

use libacp_tests::{repo_root, ts_peer};
use std::process::Command;

fn ts(script: &str) -> Vec<String> {
    ts_peer(script, &[])
}

fn python(script: &str) -> Vec<String> {
    let python = repo_root().join(".venv-interop/bin/python");
    assert!(
        python.exists(),
        "the Python SDK is not installed: run scripts/setup-interop.sh"
    );
    vec![
        python.display().to_string(),
        repo_root()
            .join("tests/interop/python")
            .join(script)
            .display()
            .to_string(),
    ]
}

fn libacp_agent() -> Vec<String> {
    vec![env!("CARGO_BIN_EXE_libacp-interop-agent").into()]
}

fn libacp_client() -> Vec<String> {
    vec![env!("CARGO_BIN_EXE_libacp-interop-client").into()]
}

/// Runs `client -- agent...` and asserts it printed OK.
fn check(client: Vec<String>, agent: Vec<String>) {
    let mut cmd = Command::new(&client[0]);
    // libacp's client checks the whole replay (see libacp_interop_client.rs).
    cmd.env("LIBACP_INTEROP_STRICT_LOAD", "1");
    cmd.args(&client[1..]).arg("--").args(&agent);
    let out = cmd.output().expect("run the interop client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.lines().any(|l| l == "OK"),
        "{client:?} -- {agent:?} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
}

#[test]
fn libacp_client_drives_the_typescript_agent() {
    check(libacp_client(), ts("agent.mjs"));
}

#[test]
fn libacp_client_drives_the_python_agent() {
    check(libacp_client(), python("agent.py"));
}

#[test]
fn the_typescript_client_drives_a_libacp_agent() {
    check(ts("client.mjs"), libacp_agent());
}

#[test]
fn the_python_client_drives_a_libacp_agent() {
    check(python("client.py"), libacp_agent());
}

#[test]
fn libacp_client_drives_a_libacp_agent() {
    check(libacp_client(), libacp_agent());
}

// The official Rust SDK (`agent-client-protocol`): its peers are built in this
// package (tests/bin/official_rust_*.rs), so they need no setup.

fn rust_sdk_agent() -> Vec<String> {
    vec![env!("CARGO_BIN_EXE_official-rust-agent").into()]
}

fn rust_sdk_client() -> Vec<String> {
    vec![env!("CARGO_BIN_EXE_official-rust-client").into()]
}

#[test]
fn libacp_client_drives_the_rust_sdk_agent() {
    check(libacp_client(), rust_sdk_agent());
}

#[test]
fn the_rust_sdk_client_drives_a_libacp_agent() {
    check(rust_sdk_client(), libacp_agent());
}
