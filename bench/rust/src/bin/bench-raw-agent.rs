//! The raw baseline agent: blocking std I/O, every line parsed into a
//! `serde_json::Value`, answers built with `json!`, no protocol logic (no
//! phases, capabilities, validation or concurrency: one message at a time).
//! It understands the whole prompt vocabulary so any client can drive it,
//! but the runner times it on W1 and W2 only.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, BufWriter, Write};

use libacp_bench::{Command, READ_LEN, WRITE_PATH, parse_command, read_path, text_of};
use serde_json::{Value, json};

type Out = BufWriter<std::io::StdoutLock<'static>>;

fn send(out: &mut Out, message: &Value) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, message)?;
    out.write_all(b"\n")
}

struct Agent {
    input: BufReader<std::io::StdinLock<'static>>,
    out: Out,
    /// Messages read while waiting for an answer, handled afterwards.
    queued: VecDeque<Value>,
    sessions: u64,
    next_id: u64,
    line: String,
}

impl Agent {
    fn read(&mut self) -> std::io::Result<Option<Value>> {
        loop {
            self.line.clear();
            if self.input.read_line(&mut self.line)? == 0 {
                return Ok(None);
            }
            if self.line.trim().is_empty() {
                continue;
            }
            return serde_json::from_str(&self.line)
                .map(Some)
                .map_err(std::io::Error::other);
        }
    }

    /// Sends a request and returns its result (queueing what else arrives).
    fn call(&mut self, method: &str, params: Value) -> std::io::Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        send(
            &mut self.out,
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )?;
        self.out.flush()?;
        loop {
            let Some(message) = self.read()? else {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            };
            if message.get("method").is_none() && message["id"] == json!(id) {
                return match message.get("result") {
                    Some(result) => Ok(result.clone()),
                    None => Err(std::io::Error::other(format!(
                        "{method}: {}",
                        message["error"]
                    ))),
                };
            }
            self.queued.push_back(message);
        }
    }

    fn prompt(&mut self, params: &Value) -> std::io::Result<Result<Value, String>> {
        let session = params["sessionId"].clone();
        let text = params["prompt"]
            .as_array()
            .and_then(|blocks| blocks.iter().find(|b| b["type"] == "text"))
            .and_then(|b| b["text"].as_str())
            .unwrap_or_default();
        match parse_command(text) {
            Some(Command::Stream(n)) => {
                for i in 0..n {
                    let update = json!({"jsonrpc": "2.0", "method": "session/update", "params": {
                        "sessionId": session,
                        "update": {"sessionUpdate": "agent_message_chunk",
                                   "content": {"type": "text", "text": libacp_bench::chunk_text(i)}}}});
                    send(&mut self.out, &update)?;
                }
            }
            Some(Command::Read(m)) => {
                for i in 0..m {
                    let file = self.call(
                        "fs/read_text_file",
                        json!({"sessionId": session, "path": read_path(i)}),
                    )?;
                    let len = file["content"].as_str().map_or(0, str::len);
                    if len != READ_LEN {
                        return Ok(Err(format!("read {i}: {len} bytes")));
                    }
                }
            }
            Some(Command::Write(bytes)) => {
                self.call(
                    "fs/write_text_file",
                    json!({"sessionId": session, "path": WRITE_PATH, "content": text_of(bytes)}),
                )?;
            }
            Some(Command::Echo) => {}
            None => return Ok(Err(format!("unknown bench command {text:?}"))),
        }
        Ok(Ok(json!({"stopReason": "end_turn"})))
    }

    fn handle(&mut self, message: Value) -> std::io::Result<()> {
        let (Some(method), Some(id)) = (message["method"].as_str(), message.get("id")) else {
            return Ok(()); // notifications and stray responses
        };
        let answer = match method {
            "initialize" => Ok(json!({"protocolVersion": 1,
                "agentCapabilities": {"promptCapabilities": {"embeddedContext": true}}, "authMethods": []})),
            "session/new" => {
                self.sessions += 1;
                Ok(json!({"sessionId": format!("raw-{}", self.sessions)}))
            }
            "session/prompt" => self.prompt(&message["params"])?,
            _ => Err(format!("method not found: {method}")),
        };
        let reply = match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": e}}),
        };
        send(&mut self.out, &reply)?;
        self.out.flush()
    }
}

fn main() -> std::io::Result<()> {
    let mut agent = Agent {
        input: BufReader::with_capacity(1 << 16, std::io::stdin().lock()),
        out: BufWriter::with_capacity(1 << 16, std::io::stdout().lock()),
        queued: VecDeque::new(),
        sessions: 0,
        next_id: 0,
        line: String::new(),
    };
    loop {
        let message = match agent.queued.pop_front() {
            Some(m) => m,
            None => match agent.read()? {
                Some(m) => m,
                None => return Ok(()),
            },
        };
        agent.handle(message)?;
    }
}
