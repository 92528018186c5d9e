//! Interop of the unstable v1 methods with the official TypeScript SDK
//! (2.4.0, `@agentclientprotocol/sdk/unstable`) and Rust SDK (5.0.0, cargo
//! feature `unstable`), both roles, over real pipes: each client runs the
//! unstable check sequence of `tests/interop/README.md` ("Unstable
//! methods") against an agent and prints `OK` only if every result matched:
//! `session/fork` (the fork is usable for prompts), `session/archive` (the
//! session is closed: libacp's client refuses a prompt for it locally, the
//! agents answer `-32002`, libacp's agent without its handler seeing it),
//! `session/unarchive`, `session/status`, `session/set_title`,
//! `auth/status`, `providers/list|set|disable`, and during prompts
//! `mcp/message` (agent to client, with a client-to-agent `mcp/message`
//! notification before the answer) and `auth/status_update`.
//!
//! The same sequence then checks the unstable features that are payloads
//! (README, "Unstable payloads"), with the values of
//! `tests/interop/unstable-payloads.json`, each compared member by member
//! by the receiving side as its SDK (or libacp's typed view) decoded it:
//! `systemPrompt` on `session/new` and `session/fork` (the agent advertised
//! `sessionCapabilities.systemPrompt` with `override`; an unsupported mode is
//! refused `-32602`), end-of-turn `usage` in a prompt's answer, the plan
//! operation updates (`plan_update` items / markdown / file, `plan_removed`)
//! and the subagent updates (`subagent_update` with its session states
//! running / requires_action / idle / unknown, `session_message`,
//! `session_message_chunk`), which the agents send only because the client
//! advertised `plan` and `subagents` (libacp's agent through its core's
//! rule; libacp's client also requires that its core reported no payload
//! rule breach).
//!
//! Needs `scripts/setup-interop.sh` (the pinned npm packages) for the
//! TypeScript cells; the Rust SDK peers are built in this package.

use std::process::Command;
use std::time::{Duration, Instant};

use libacp_tests::ts_peer;

/// A hang detector, far above what a run takes (a few seconds).
const LIMIT: Duration = Duration::from_secs(120);

fn libacp_agent() -> Vec<String> {
    vec![
        env!("CARGO_BIN_EXE_libacp-interop-agent").into(),
        "--unstable".into(),
    ]
}

fn libacp_client() -> Vec<String> {
    vec![
        env!("CARGO_BIN_EXE_libacp-interop-client").into(),
        "--unstable".into(),
    ]
}

fn rust_sdk_agent() -> Vec<String> {
    vec![
        env!("CARGO_BIN_EXE_official-rust-agent").into(),
        "--unstable".into(),
    ]
}

fn rust_sdk_client() -> Vec<String> {
    vec![
        env!("CARGO_BIN_EXE_official-rust-client").into(),
        "--unstable".into(),
    ]
}

fn ts_agent() -> Vec<String> {
    ts_peer("unstable-agent.mjs", &[])
}

fn ts_client() -> Vec<String> {
    ts_peer("unstable-client.mjs", &[])
}

/// Runs `client -- agent...` and asserts it printed `OK` (every client
/// gives up on its own well within [`LIMIT`]; past it the pair is killed).
fn check(client: Vec<String>, agent: Vec<String>) {
    let mut child = Command::new(&client[0])
        .args(&client[1..])
        .arg("--")
        .args(&agent)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the interop client");
    let started = Instant::now();
    while child.try_wait().expect("wait for the client").is_none() {
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("the client's output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.lines().any(|l| l == "OK"),
        "{client:?} -- {agent:?} failed ({})\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
}

#[test]
fn libacp_client_drives_the_rust_sdk_agent() {
    check(libacp_client(), rust_sdk_agent());
}

#[test]
fn libacp_client_drives_the_typescript_agent() {
    check(libacp_client(), ts_agent());
}

#[test]
fn the_rust_sdk_client_drives_a_libacp_agent() {
    check(rust_sdk_client(), libacp_agent());
}

#[test]
fn the_typescript_client_drives_a_libacp_agent() {
    check(ts_client(), libacp_agent());
}

#[test]
fn libacp_client_drives_a_libacp_agent() {
    check(libacp_client(), libacp_agent());
}

// The official peers against each other: the sequence is one, whoever runs
// it, so the SDKs agree with each other where they agree with libacp.

#[test]
fn the_typescript_client_drives_the_rust_sdk_agent() {
    check(ts_client(), rust_sdk_agent());
}

#[test]
fn the_rust_sdk_client_drives_the_typescript_agent() {
    check(rust_sdk_client(), ts_agent());
}
