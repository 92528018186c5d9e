//! Client services run by the core for the client role: advertised in
//! `initialize` automatically, `fs/*` and `terminal/*` answered inside the
//! session's cwd without reaching the host, `session/update` folded into the
//! session model, and a cancelled turn marking its unfinished tool calls.

use libacp_core::{AcpConnection, AcpOptions, ClientServices, FnHandler, Role, Transport};
use libacp_tests::{Events, within};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

struct Agent {
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    writer: tokio::io::WriteHalf<tokio::io::DuplexStream>,
}

impl Agent {
    async fn send(&mut self, v: Value) {
        let mut line = serde_json::to_vec(&v).expect("json");
        line.push(b'\n');
        self.writer.write_all(&line).await.expect("write");
    }
    async fn recv(&mut self) -> Value {
        let line = within("frame", self.lines.next_line())
            .await
            .expect("read")
            .expect("a frame");
        serde_json::from_str(&line).expect("json")
    }
    /// Sends a request and returns the client's answer.
    async fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let answer = self.recv().await;
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }
}

/// A client with every service on, initialized, with one session in a
/// fresh directory. The host handler must never be called for fs/terminal.
async fn setup() -> (AcpConnection, Agent, std::path::PathBuf, Events) {
    setup_with(&[]).await
}

/// [`setup`], the session also granted `additional` directories (the
/// agent advertises `sessionCapabilities.additionalDirectories`).
async fn setup_with(
    additional: &[std::path::PathBuf],
) -> (AcpConnection, Agent, std::path::PathBuf, Events) {
    let dir = std::env::temp_dir().join(format!(
        "libacp-services-{}-{}",
        std::process::id(),
        rand_suffix()
    ));
    std::fs::create_dir_all(&dir).expect("dir");
    let dir = dir.canonicalize().expect("canonical");
    let host = FnHandler::new().on_request(|req| async move {
        panic!("the host must not see {}", req.method);
        #[allow(unreachable_code)]
        Ok(Value::Null)
    });
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let events = Events::default();
    let options = AcpOptions {
        services: ClientServices::all(),
        connection: events.options(),
        ..AcpOptions::default()
    };
    let client = AcpConnection::start(Role::Client, Transport::from_stream(ours), host, options);
    let (r, w) = tokio::io::split(theirs);
    let mut agent = Agent {
        lines: BufReader::new(r).lines(),
        writer: w,
    };
    let init = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .request_json("initialize", &json!({"protocolVersion": 1}))
                .await
        }
    });
    let request = agent.recv().await;
    assert_eq!(
        request["params"]["clientCapabilities"],
        json!({"fs": {"readTextFile": true, "writeTextFile": true}, "terminal": true}),
        "services advertised"
    );
    let caps = json!({"sessionCapabilities": {"additionalDirectories": {}}});
    agent
        .send(json!({"jsonrpc": "2.0", "id": request["id"],
            "result": {"protocolVersion": 1, "agentCapabilities": caps}}))
        .await;
    within("init", init).await.expect("task").expect("ok");
    let mut params = json!({"cwd": dir, "mcpServers": []});
    if !additional.is_empty() {
        params["additionalDirectories"] = json!(additional);
    }
    let new = tokio::spawn({
        let client = client.clone();
        async move { client.request_json("session/new", &params).await }
    });
    let request = agent.recv().await;
    agent
        .send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {"sessionId": "s1"}}))
        .await;
    within("session", new).await.expect("task").expect("ok");
    (client, agent, dir, events)
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

#[tokio::test]
async fn fs_is_served_inside_the_session_directory() {
    let (_client, mut agent, dir, events) = setup().await;
    let file = dir.join("notes/a.txt");
    let answer = agent
        .call(
            1,
            "fs/write_text_file",
            json!({"sessionId": "s1", "path": file, "content": "one\ntwo\n"}),
        )
        .await;
    assert!(answer.get("result").is_some(), "{answer}");
    assert_eq!(
        std::fs::read_to_string(&file).expect("written"),
        "one\ntwo\n"
    );
    let answer = agent
        .call(
            2,
            "fs/read_text_file",
            json!({"sessionId": "s1", "path": file, "line": 2}),
        )
        .await;
    assert_eq!(answer["result"]["content"], "two\n");
    let answer = agent
        .call(
            3,
            "fs/read_text_file",
            json!({"sessionId": "s1", "path": dir.join("../../etc/passwd")}),
        )
        .await;
    assert_eq!(
        answer["error"]["code"], -32602,
        "escaping the root is refused"
    );
    // The host never saw those requests, but it is told what was served.
    let served = events.wait_for("method: \"fs/write_text_file\"").await;
    assert!(
        served.contains("Served") && served.contains("a.txt"),
        "{served}"
    );
    let refused = events.wait_for("passwd").await;
    assert!(refused.contains("-32602"), "{refused}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The directories the client grants with `additionalDirectories` are
/// served like the session's own: the agent reads and writes inside them,
/// and still nowhere else.
#[tokio::test]
async fn fs_is_served_inside_the_additional_directories_too() {
    let extra = std::env::temp_dir().join(format!(
        "libacp-services-extra-{}-{}",
        std::process::id(),
        rand_suffix()
    ));
    std::fs::create_dir_all(&extra).expect("dir");
    let extra = extra.canonicalize().expect("canonical");
    std::fs::write(extra.join("shared.txt"), "from the extra root\n").expect("file");
    let (_client, mut agent, dir, _events) = setup_with(std::slice::from_ref(&extra)).await;
    let answer = agent
        .call(
            1,
            "fs/read_text_file",
            json!({"sessionId": "s1", "path": extra.join("shared.txt")}),
        )
        .await;
    assert_eq!(
        answer["result"]["content"], "from the extra root\n",
        "{answer}"
    );
    let answer = agent
        .call(
            2,
            "fs/write_text_file",
            json!({"sessionId": "s1", "path": extra.join("out/b.txt"), "content": "x"}),
        )
        .await;
    assert!(answer.get("result").is_some(), "{answer}");
    assert_eq!(
        std::fs::read_to_string(extra.join("out/b.txt")).expect("written"),
        "x"
    );
    let answer = agent
        .call(
            3,
            "fs/read_text_file",
            json!({"sessionId": "s1", "path": extra.join("../../etc/passwd")}),
        )
        .await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(
        answer["error"]["data"]["additionalRoots"],
        json!([extra]),
        "{answer}"
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&extra);
}

#[tokio::test]
async fn terminals_run_real_commands() {
    let (_client, mut agent, dir, _events) = setup().await;
    let created = agent
        .call(
            1,
            "terminal/create",
            json!({"sessionId": "s1", "command": "sh", "args": ["-c", "pwd; exit 3"]}),
        )
        .await;
    let id = created["result"]["terminalId"].clone();
    let exit = agent
        .call(
            2,
            "terminal/wait_for_exit",
            json!({"sessionId": "s1", "terminalId": id}),
        )
        .await;
    assert_eq!(exit["result"]["exitCode"], 3);
    let output = agent
        .call(
            3,
            "terminal/output",
            json!({"sessionId": "s1", "terminalId": id}),
        )
        .await;
    assert_eq!(
        output["result"]["output"].as_str().map(str::trim),
        dir.to_str(),
        "runs in the session's cwd"
    );
    agent
        .call(
            4,
            "terminal/release",
            json!({"sessionId": "s1", "terminalId": id}),
        )
        .await;
    let gone = agent
        .call(
            5,
            "terminal/output",
            json!({"sessionId": "s1", "terminalId": id}),
        )
        .await;
    assert_eq!(gone["error"]["code"], -32002);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn updates_fold_into_the_model_and_cancel_marks_tool_calls() {
    let (client, mut agent, dir, _events) = setup().await;
    let store = client.services().sessions.expect("session model");
    let prompt = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .request_json(
                    "session/prompt",
                    &json!({"sessionId": "s1", "prompt": [{"type": "text", "text": "go"}]}),
                )
                .await
        }
    });
    let request = agent.recv().await;
    for update in [
        json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hel"}}),
        json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "lo"}}),
        json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit", "status": "in_progress"}),
        json!({"sessionUpdate": "tool_call", "toolCallId": "t2", "title": "Read", "status": "completed"}),
    ] {
        agent
            .send(json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": update}}))
            .await;
    }
    // Let the updates be dispatched before cancelling.
    within("folded", async {
        while store.tool_call("s1", "t2").is_none() {
            tokio::task::yield_now().await;
        }
    })
    .await;
    client.cancel_session("s1").await.expect("cancel");
    let cancel = agent.recv().await;
    assert_eq!(cancel["method"], "session/cancel");
    agent
        .send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {"stopReason": "cancelled"}}))
        .await;
    within("prompt", prompt).await.expect("task").expect("ok");
    let snapshot = store.snapshot_json("s1").expect("snapshot");
    assert_eq!(snapshot["entries"][0]["text"], "Hello");
    assert_eq!(snapshot["toolCalls"][0]["status"], "cancelled");
    assert_eq!(snapshot["toolCalls"][1]["status"], "completed");
    let _ = std::fs::remove_dir_all(&dir);
}
