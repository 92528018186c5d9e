//! The raw baseline client: blocking std I/O, every line parsed into a
//! `serde_json::Value`, no protocol logic. W1, W2 and smoke (stream and
//! read) only. `bench-raw-client WORKLOAD [ARGS] -- AGENT_COMMAND...`.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{ChildStdin, ChildStdout, ExitCode, Stdio};
use std::time::Instant;

use libacp_bench::{SESSION_CWD, Tracker, Workload, emit, fail, invocation, percentile};
use serde_json::{Value, json};

const IMPL: &str = "raw";

struct Conn {
    out: BufWriter<ChildStdin>,
    input: BufReader<ChildStdout>,
    next_id: u64,
    line: String,
}

impl Conn {
    fn send(&mut self, message: &Value) -> Result<(), String> {
        serde_json::to_writer(&mut self.out, message).map_err(|e| e.to_string())?;
        self.out.write_all(b"\n").map_err(|e| e.to_string())?;
        self.out.flush().map_err(|e| e.to_string())
    }

    fn read(&mut self) -> Result<Value, String> {
        loop {
            self.line.clear();
            let n = self
                .input
                .read_line(&mut self.line)
                .map_err(|e| e.to_string())?;
            if n == 0 {
                return Err("agent closed its stdout".into());
            }
            if !self.line.trim().is_empty() {
                return serde_json::from_str(&self.line).map_err(|e| e.to_string());
            }
        }
    }

    /// Sends a request and handles what arrives until its response.
    fn call(&mut self, tracker: &Tracker, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            let message = self.read()?;
            match message["method"].as_str() {
                Some("session/update") => {
                    let update = &message["params"]["update"];
                    if update["sessionUpdate"] == "agent_message_chunk"
                        && let (Some(session), Some(text)) = (
                            message["params"]["sessionId"].as_str(),
                            update["content"]["text"].as_str(),
                        )
                    {
                        tracker.chunk(session, text);
                    }
                }
                Some("fs/read_text_file") => {
                    let path = message["params"]["path"].as_str().unwrap_or_default();
                    let reply = match tracker.read(path) {
                        Ok(content) => {
                            json!({"jsonrpc": "2.0", "id": message["id"], "result": {"content": content}})
                        }
                        Err(e) => {
                            json!({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32602, "message": e}})
                        }
                    };
                    self.send(&reply)?;
                }
                Some(other) => {
                    if let Some(rid) = message.get("id") {
                        let reply = json!({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": format!("method not found: {other}")}});
                        self.send(&reply)?;
                    }
                }
                None if message["id"] == json!(id) => {
                    return match message.get("result") {
                        Some(result) => Ok(result.clone()),
                        None => Err(format!("{method}: {}", message["error"])),
                    };
                }
                None => {}
            }
        }
    }
}

fn prompt(conn: &mut Conn, tracker: &Tracker, session: &str, text: &str) -> Result<f64, String> {
    let start = Instant::now();
    let done = conn.call(
        tracker,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
    )?;
    let took = start.elapsed().as_secs_f64();
    if done["stopReason"] != "end_turn" {
        return Err(format!("{text}: stopReason {}", done["stopReason"]));
    }
    tracker.check()?;
    Ok(took)
}

fn stream(conn: &mut Conn, tracker: &Tracker, session: &str, n: u64) -> Result<f64, String> {
    let took = prompt(conn, tracker, session, &format!("stream {n}"))?;
    let got = tracker.take_chunks(session);
    if got != n {
        return Err(format!("stream {n}: got {got} chunks"));
    }
    Ok(took)
}

fn reads(
    conn: &mut Conn,
    tracker: &Tracker,
    session: &str,
    m: u64,
) -> Result<(f64, Vec<f64>), String> {
    tracker.take_reads();
    let took = prompt(conn, tracker, session, &format!("read {m}"))?;
    let times = tracker.take_reads();
    if times.len() as u64 != m {
        return Err(format!("read {m}: got {} reads", times.len()));
    }
    let gaps = times
        .windows(2)
        .map(|w| w[1].duration_since(w[0]).as_secs_f64() * 1e6)
        .collect();
    Ok((took, gaps))
}

fn run(workload: Workload, agent: &[String]) -> Result<Value, String> {
    let (program, args) = agent.split_first().ok_or("no agent")?;
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("no pipes".into());
    };
    let mut conn = Conn {
        out: BufWriter::with_capacity(1 << 16, stdin),
        input: BufReader::with_capacity(1 << 16, stdout),
        next_id: 0,
        line: String::new(),
    };
    let tracker = Tracker::default();
    conn.call(
        &tracker,
        "initialize",
        json!({"protocolVersion": 1,
        "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}}}),
    )?;
    let session = conn.call(
        &tracker,
        "session/new",
        json!({"cwd": SESSION_CWD, "mcpServers": []}),
    )?;
    let session = session["sessionId"]
        .as_str()
        .ok_or("no sessionId")?
        .to_owned();
    let result = match workload {
        Workload::W1 { n } => {
            let s = stream(&mut conn, &tracker, &session, n)?;
            json!({"n": n, "seconds": s, "per_s": n as f64 / s})
        }
        Workload::W2 { m } => {
            let (s, gaps) = reads(&mut conn, &tracker, &session, m)?;
            json!({"m": m, "seconds": s, "per_s": m as f64 / s,
                   "p50_us": percentile(&gaps, 50.0), "p99_us": percentile(&gaps, 99.0)})
        }
        Workload::Smoke => {
            stream(&mut conn, &tracker, &session, 50)?;
            reads(&mut conn, &tracker, &session, 20)?;
            json!({"ok": true, "partial": "stream and read only"})
        }
        other => return Err(format!("the raw client does not run {}", other.name())),
    };
    drop(conn);
    let _ = child.wait();
    Ok(result)
}

fn main() -> ExitCode {
    let inv = match invocation() {
        Ok(inv) => inv,
        Err(e) => return fail(IMPL, "?", &e),
    };
    let name = inv.workload.name();
    match run(inv.workload, &inv.agent) {
        Ok(result) => {
            emit(IMPL, name, result);
            ExitCode::SUCCESS
        }
        Err(e) => fail(IMPL, name, &e),
    }
}
