//! A terminal ACP client for any agent, built on libacp-core's typed API.
//!
//! It spawns the agent, initializes it (offering `fs` and `terminal`),
//! opens a session (or loads one), sends the prompts and prints what the
//! agent does as it happens: streamed text inline, thoughts dimmed, the plan
//! as a checklist, tool calls with their status transitions, diffs as `-`/`+`
//! lines, terminal output, mode changes and the stop reason. Files are
//! served by the core's `SandboxedFs` (confined to the session's directory)
//! and commands by its `TerminalManager`. Ctrl-C during a turn cancels it
//! (`session/cancel`); a second Ctrl-C quits.
//!
//! With no agent command it runs the `demo-agent` built next to it.

use std::collections::HashSet;
use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use libacp_core::services::fs::SandboxedFs;
use libacp_core::services::terminal::TerminalManager;
use libacp_core::{
    AcpOptions, AgentCommand, CallError, Client, ClientConnection, ConnectionOptions, Direction,
    Refusal, RequestContext, RpcError, Tolerant, v1,
};
use libacp_examples::render::{self, Renderer};
use libacp_examples::script;
use libacp_examples::style::{Out, Style};
use tokio::sync::mpsc;

const USAGE: &str = "\
usage: demo-client [--yes|--no|--ask] [--cwd DIR] [--prompt TEXT]... [--load SESSION_ID]
                   [--mode MODE_ID] [--trace] [-- AGENT_COMMAND ARGS...]

Spawns an ACP agent (default: the demo-agent next to this program), opens a
session in DIR (default: a new temporary directory), sends each prompt
(default: one prompt, unless --load is given) and shows what the agent does.

  --yes / --no      answer permission requests: allow / reject
  --ask             ask on the terminal (the default when stdin is a terminal,
                    else --yes)
  --cwd DIR         the session's working directory (files and commands are
                    confined to it)
  --prompt TEXT     a prompt to send; repeat for several turns
  --load ID         load an earlier session (its history is replayed) instead
                    of creating one
  --mode MODE_ID    switch the session to this mode first
  --trace           also print every JSON-RPC frame
  Ctrl-C            cancel the running turn; press again to quit";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Permissions {
    Yes,
    No,
    Ask,
}

#[derive(Debug)]
struct Args {
    permissions: Permissions,
    cwd: Option<PathBuf>,
    prompts: Vec<String>,
    load: Option<String>,
    mode: Option<String>,
    trace: bool,
    /// Hidden, for tests: cancel each turn this long after sending it.
    cancel_after: Option<Duration>,
    agent: Vec<OsString>,
}

fn parse_args(mut it: impl Iterator<Item = OsString>) -> Result<Args, String> {
    let mut args = Args {
        permissions: if std::io::stdin().is_terminal() {
            Permissions::Ask
        } else {
            Permissions::Yes
        },
        cwd: None,
        prompts: Vec::new(),
        load: None,
        mode: None,
        trace: false,
        cancel_after: None,
        agent: Vec::new(),
    };
    while let Some(arg) = it.next() {
        let arg = arg
            .into_string()
            .map_err(|a| format!("not valid UTF-8: {a:?}"))?;
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| -> Result<String, String> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => it
                    .next()
                    .and_then(|v| v.into_string().ok())
                    .ok_or_else(|| format!("{name} needs a value")),
            }
        };
        match flag.as_str() {
            "--yes" | "-y" => args.permissions = Permissions::Yes,
            "--no" | "-n" => args.permissions = Permissions::No,
            "--ask" => args.permissions = Permissions::Ask,
            "--cwd" => args.cwd = Some(PathBuf::from(value("--cwd")?)),
            "--prompt" | "-p" => args.prompts.push(value("--prompt")?),
            "--load" => args.load = Some(value("--load")?),
            "--mode" => args.mode = Some(value("--mode")?),
            "--trace" => args.trace = true,
            "--cancel-after-ms" => {
                let ms = value("--cancel-after-ms")?;
                let ms: u64 = ms
                    .parse()
                    .map_err(|_| format!("--cancel-after-ms: not a number: {ms}"))?;
                args.cancel_after = Some(Duration::from_millis(ms));
            }
            "-h" | "--help" => return Err(String::new()),
            "--" => {
                args.agent = it.collect();
                break;
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if args.prompts.is_empty() && args.load.is_none() {
        args.prompts.push(script::DEFAULT_PROMPT.to_owned());
    }
    Ok(args)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Lines typed on stdin, read by one thread for the whole run (so a
/// question abandoned by Ctrl-C leaves no reader behind).
#[derive(Debug)]
struct StdinLines {
    rx: tokio::sync::Mutex<Option<mpsc::UnboundedReceiver<String>>>,
}

impl StdinLines {
    fn new() -> Self {
        Self {
            rx: tokio::sync::Mutex::new(None),
        }
    }

    /// The next line; `None` at end of input.
    async fn next(&self) -> Option<String> {
        let mut rx = self.rx.lock().await;
        let rx = rx.get_or_insert_with(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            std::thread::spawn(move || {
                let mut line = String::new();
                while matches!(std::io::stdin().read_line(&mut line), Ok(n) if n > 0) {
                    if tx.send(std::mem::take(&mut line)).is_err() {
                        break;
                    }
                }
            });
            rx
        });
        rx.recv().await
    }
}

/// What the client handlers share with `main`.
#[derive(Debug)]
struct Shared {
    render: Renderer,
    fs: SandboxedFs,
    terminals: TerminalManager,
    permissions: Permissions,
    stdin: StdinLines,
    /// Terminals whose final output was printed.
    shown_terminals: Mutex<HashSet<String>>,
}

impl Shared {
    fn out(&self) -> &Out {
        self.render.out()
    }

    fn style(&self) -> Style {
        self.out().style()
    }

    /// Prints a terminal's output once, when it is final (or about to go).
    async fn show_terminal(&self, session_id: &v1::SessionId, terminal_id: &v1::TerminalId) {
        if lock(&self.shown_terminals).contains(&*terminal_id.0) {
            return;
        }
        let req = v1::TerminalOutputRequest::new(session_id.clone(), terminal_id.clone());
        if let Ok(output) = self.terminals.output(req).await {
            lock(&self.shown_terminals).insert(terminal_id.0.to_string());
            self.out().lines(&self.render.terminal_lines(&output));
        }
    }

    /// Picks an option for a permission request.
    async fn decide(&self, args: &v1::RequestPermissionRequest) -> v1::RequestPermissionOutcome {
        let s = self.style();
        let pick = |kinds: &[v1::PermissionOptionKind]| {
            kinds
                .iter()
                .find_map(|k| args.options.iter().find(|o| o.kind == *k))
        };
        let choice = match self.permissions {
            Permissions::Yes => pick(&[
                v1::PermissionOptionKind::AllowOnce,
                v1::PermissionOptionKind::AllowAlways,
            ]),
            Permissions::No => pick(&[
                v1::PermissionOptionKind::RejectOnce,
                v1::PermissionOptionKind::RejectAlways,
            ]),
            Permissions::Ask => loop {
                self.out().ask(&format!(
                    "    {} ",
                    s.bold(&format!("choose 1-{} >", args.options.len()))
                ));
                let typed = std::io::stdin().is_terminal();
                let Some(line) = self.stdin.next().await else {
                    self.out().answered(Some("(end of input)"));
                    break pick(&[
                        v1::PermissionOptionKind::RejectOnce,
                        v1::PermissionOptionKind::RejectAlways,
                    ]);
                };
                let line = line.trim();
                self.out().answered((!typed).then_some(line));
                let by_number = line
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| i.checked_sub(1))
                    .and_then(|i| args.options.get(i));
                let by_id = args.options.iter().find(|o| &*o.option_id.0 == line);
                if let Some(o) = by_number.or(by_id) {
                    break Some(o);
                }
            },
        };
        let how = match self.permissions {
            Permissions::Yes => " (--yes)",
            Permissions::No => " (--no)",
            Permissions::Ask => "",
        };
        match choice {
            Some(o) => {
                let name = match o.kind {
                    v1::PermissionOptionKind::AllowOnce | v1::PermissionOptionKind::AllowAlways => {
                        s.green(&o.name)
                    }
                    _ => s.red(&o.name),
                };
                self.out().line(&format!("    {} {name}{how}", s.dim("→")));
                v1::RequestPermissionOutcome::Selected(v1::SelectedPermissionOutcome::new(
                    o.option_id.clone(),
                ))
            }
            None => {
                self.out().line(&format!(
                    "    {} no matching option{how}: answering cancelled",
                    s.dim("→")
                ));
                v1::RequestPermissionOutcome::Cancelled
            }
        }
    }
}

#[derive(Debug, Clone)]
struct DemoClient(Arc<Shared>);

impl Client for DemoClient {
    async fn request_permission(
        &self,
        cx: RequestContext<ClientConnection>,
        args: v1::RequestPermissionRequest,
    ) -> Result<v1::RequestPermissionResponse, RpcError> {
        let shared = &self.0;
        shared.out().lines(&shared.render.permission_lines(&args));
        let outcome = tokio::select! {
            // The turn was cancelled: the core has answered `cancelled`.
            () = cx.cancellation.cancelled() => v1::RequestPermissionOutcome::Cancelled,
            outcome = shared.decide(&args) => outcome,
        };
        Ok(v1::RequestPermissionResponse::new(outcome))
    }

    async fn session_update(
        &self,
        _connection: ClientConnection,
        update: Tolerant<v1::SessionNotification>,
    ) {
        self.0.render.update(&update);
    }

    async fn read_text_file(
        &self,
        _cx: RequestContext<ClientConnection>,
        args: v1::ReadTextFileRequest,
    ) -> Result<v1::ReadTextFileResponse, RpcError> {
        let shared = &self.0;
        let path = args.path.clone();
        let result = shared.fs.read_text_file(args).await;
        let what = match &result {
            Ok(r) => format!("{} bytes", r.content.len()),
            Err(e) if e.code == libacp_core::codes::RESOURCE_NOT_FOUND => "not found".to_owned(),
            Err(e) => format!("refused: {}", e.message),
        };
        shared.out().line(&shared.style().dim(&format!(
            "    fs/read_text_file {} ({what})",
            path.display()
        )));
        result
    }

    async fn write_text_file(
        &self,
        _cx: RequestContext<ClientConnection>,
        args: v1::WriteTextFileRequest,
    ) -> Result<v1::WriteTextFileResponse, RpcError> {
        let shared = &self.0;
        let (path, len) = (args.path.clone(), args.content.len());
        let result = shared.fs.write_text_file(args).await;
        let what = match &result {
            Ok(_) => format!("{len} bytes written"),
            Err(e) => format!("refused: {}", e.message),
        };
        shared.out().line(&shared.style().dim(&format!(
            "    fs/write_text_file {} ({what})",
            path.display()
        )));
        result
    }

    async fn create_terminal(
        &self,
        _cx: RequestContext<ClientConnection>,
        args: v1::CreateTerminalRequest,
    ) -> Result<v1::CreateTerminalResponse, RpcError> {
        let shared = &self.0;
        let command: Vec<String> = std::iter::once(&args.command)
            .chain(&args.args)
            .map(|a| shell_quote(a))
            .collect();
        let result = shared.terminals.create(args).await;
        let s = shared.style();
        match &result {
            Ok(t) => shared.out().line(&format!(
                "    {} {}",
                s.dim(&format!("{} $", t.terminal_id.0)),
                s.bold(&command.join(" "))
            )),
            Err(e) => shared.out().line(&s.red(&format!(
                "    could not run {}: {}",
                command.join(" "),
                e.message
            ))),
        }
        result
    }

    async fn terminal_output(
        &self,
        _cx: RequestContext<ClientConnection>,
        args: v1::TerminalOutputRequest,
    ) -> Result<v1::TerminalOutputResponse, RpcError> {
        self.0.terminals.output(args).await
    }

    async fn wait_for_terminal_exit(
        &self,
        _cx: RequestContext<ClientConnection>,
        args: v1::WaitForTerminalExitRequest,
    ) -> Result<v1::WaitForTerminalExitResponse, RpcError> {
        let (session, terminal) = (args.session_id.clone(), args.terminal_id.clone());
        let result = self.0.terminals.wait_for_exit(args).await;
        if result.is_ok() {
            self.0.show_terminal(&session, &terminal).await;
        }
        result
    }

    async fn kill_terminal(
        &self,
        _cx: RequestContext<ClientConnection>,
        args: v1::KillTerminalRequest,
    ) -> Result<v1::KillTerminalResponse, RpcError> {
        let shared = &self.0;
        shared.out().line(
            &shared
                .style()
                .dim(&format!("    {}: killed", args.terminal_id.0)),
        );
        shared.terminals.kill(args).await
    }

    async fn release_terminal(
        &self,
        _cx: RequestContext<ClientConnection>,
        args: v1::ReleaseTerminalRequest,
    ) -> Result<v1::ReleaseTerminalResponse, RpcError> {
        // The output is gone after release: show it now if nobody waited.
        self.0
            .show_terminal(&args.session_id, &args.terminal_id)
            .await;
        self.0.terminals.release(args).await
    }
}

/// Quotes an argument for display the way a shell would read it.
fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// Set when Ctrl-C asked to quit: whatever fails next is not an error.
static QUITTING: AtomicBool = AtomicBool::new(false);

/// The turn in progress, for Ctrl-C.
#[derive(Debug, Default)]
struct TurnState {
    session_id: Option<String>,
    /// Ctrl-C was pressed during this turn.
    cancelling: bool,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_args(std::env::args_os().skip(1)) {
        Ok(args) => args,
        Err(e) if e.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("demo-client: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let out = Arc::new(Out::new(Style::for_stdout()));
    let code = match run(args, Arc::clone(&out)).await {
        _ if QUITTING.load(Ordering::SeqCst) => 130,
        Ok(code) => code,
        Err(e) => {
            out.err_line(&format!("demo-client: {e}"));
            1
        }
    };
    // Leave at once: a thread may still be blocked reading stdin.
    std::process::exit(code)
}

async fn run(args: Args, out: Arc<Out>) -> Result<i32, String> {
    let s = out.style();
    let cwd = args.cwd.as_deref().map(given_dir).transpose()?;

    // The agent command, its stderr forwarded line by line, dimmed.
    let (command, shown) = if args.agent.is_empty() {
        let exe = std::env::current_exe().map_err(|e| format!("cannot locate myself: {e}"))?;
        let agent = exe.with_file_name("demo-agent");
        let shown = agent.display().to_string();
        (AgentCommand::new(agent), shown)
    } else {
        let shown: Vec<String> = args
            .agent
            .iter()
            .map(|a| shell_quote(&a.to_string_lossy()))
            .collect();
        (
            AgentCommand::new(&args.agent[0]).args(&args.agent[1..]),
            shown.join(" "),
        )
    };
    let log_out = Arc::clone(&out);
    let err_style = Style::for_stderr();
    let command = command.stderr(move |line| {
        let s = err_style;
        log_out.err_line(&format!("{} {}", s.dim("  agent stderr │"), s.dim(line)));
    });

    let mut options = AcpOptions::default();
    if args.trace {
        let trace_out = Arc::clone(&out);
        options.connection = ConnectionOptions {
            trace: Some(Arc::new(move |dir: Direction, frame: &[u8]| {
                let arrow = match dir {
                    Direction::Outgoing => "client → agent",
                    Direction::Incoming => "agent → client",
                };
                let frame = String::from_utf8_lossy(frame);
                let s = trace_out.style();
                trace_out.line(&s.dim(&format!("  {arrow} │ {}", frame.trim_end())));
            })),
            ..ConnectionOptions::default()
        };
    }

    let shared = Arc::new(Shared {
        render: Renderer::new(Arc::clone(&out)),
        fs: SandboxedFs::new(),
        terminals: TerminalManager::new(),
        permissions: args.permissions,
        stdin: StdinLines::new(),
        shown_terminals: Mutex::new(HashSet::new()),
    });
    out.line(&format!(
        "{} {}",
        s.bold("libacp demo-client ▸ agent:"),
        shown
    ));
    let conn = ClientConnection::spawn(&command, DemoClient(Arc::clone(&shared)), options)
        .map_err(|e| {
            if args.agent.is_empty() {
                format!("{e} (build it with `cargo build -p libacp-examples`)")
            } else {
                e.to_string()
            }
        })?;

    let result = drive(&args, &conn, &shared, cwd).await;
    conn.close().await;
    if let Some(exit) = conn.acp().process().and_then(|p| p.try_exit()) {
        out.line(&s.dim(&format!("agent exited: {exit}")));
    }
    result
}

/// `--cwd`, made absolute (the session's directory must be).
fn given_dir(dir: &Path) -> Result<PathBuf, String> {
    let abs = std::fs::canonicalize(dir).map_err(|e| format!("--cwd {}: {e}", dir.display()))?;
    if abs.is_dir() {
        Ok(abs)
    } else {
        Err(format!("--cwd {}: not a directory", abs.display()))
    }
}

/// A new directory under the system's temporary directory.
fn fresh_dir() -> Result<PathBuf, String> {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir().join(format!("libacp-demo-{}-{nanos:x}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::canonicalize(&dir))
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

async fn drive(
    args: &Args,
    conn: &ClientConnection,
    shared: &Arc<Shared>,
    cwd: Option<PathBuf>,
) -> Result<i32, String> {
    let out = shared.out();
    let s = out.style();

    // Ctrl-C: cancel the turn in progress; quit when there is none, or on
    // the second press.
    let turn = Arc::new(Mutex::new(TurnState::default()));
    {
        let (turn, conn, shared) = (Arc::clone(&turn), conn.clone(), Arc::clone(shared));
        tokio::spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                let session = {
                    let mut t = lock(&turn);
                    match (t.session_id.clone(), t.cancelling) {
                        (Some(id), false) => {
                            t.cancelling = true;
                            Some(id)
                        }
                        _ => None,
                    }
                };
                let s = shared.style();
                match session {
                    Some(id) => {
                        shared.out().line(&s.yellow(
                            "^C cancelling the turn (session/cancel); press Ctrl-C again to quit",
                        ));
                        if let Err(e) = conn.cancel(&id).await {
                            shared.out().err_line(&format!("demo-client: cancel: {e}"));
                        }
                    }
                    None => {
                        shared.out().line(&s.yellow("^C quitting"));
                        QUITTING.store(true, Ordering::SeqCst);
                        conn.close().await;
                        std::process::exit(130);
                    }
                }
            }
        });
    }

    // initialize
    let init = conn
        .initialize(
            &v1::InitializeRequest::new(v1::ProtocolVersion::V1)
                .client_capabilities(
                    v1::ClientCapabilities::new()
                        .fs(v1::FileSystemCapabilities::new()
                            .read_text_file(true)
                            .write_text_file(true))
                        .terminal(true),
                )
                .client_info(v1::Implementation::new(
                    "libacp-demo-client",
                    env!("CARGO_PKG_VERSION"),
                )),
        )
        .await
        .map_err(|e| {
            let exit = conn
                .acp()
                .process()
                .and_then(|p| p.try_exit())
                .map(|x| format!(" (agent exited: {x})"))
                .unwrap_or_default();
            format!("the agent failed to initialize: {e}{exit}")
        })?;
    let agent = init.agent_info.as_ref().map_or_else(
        || "an unnamed agent".to_owned(),
        |i| format!("{} {}", i.name, i.version),
    );
    let caps = &init.agent_capabilities;
    let mut features = Vec::new();
    if caps.load_session {
        features.push("loadSession");
    }
    if caps.prompt_capabilities.embedded_context {
        features.push("embeddedContext");
    }
    if caps.prompt_capabilities.image {
        features.push("image");
    }
    if caps.prompt_capabilities.audio {
        features.push("audio");
    }
    let protocol = serde_json::to_value(init.protocol_version)
        .map(|v| v.to_string())
        .unwrap_or_default();
    out.line(&format!(
        "{} {} {}",
        s.green("connected to"),
        s.bold(&agent),
        s.dim(&format!(
            "(ACP v{protocol}; {})",
            if features.is_empty() {
                "no optional capabilities".to_owned()
            } else {
                features.join(", ")
            }
        ))
    ));
    if !init.auth_methods.is_empty() {
        let methods: Vec<&str> = init.auth_methods.iter().map(|m| m.name()).collect();
        out.line(&s.dim(&format!(
            "the agent offers authentication ({}); this client does not authenticate",
            methods.join(", ")
        )));
    }

    // session/new or session/load
    let cwd = match cwd {
        Some(dir) => dir,
        None => fresh_dir()?,
    };
    let cwd = cwd.as_path();
    let (session_id, modes) = match &args.load {
        Some(id) => {
            out.line(&s.dim(&format!("loading session {id} (history follows)")));
            let loaded = conn
                .load_session(&v1::LoadSessionRequest::new(id.clone(), cwd.to_path_buf()))
                .await
                .map_err(|e| match e {
                    CallError::Refused(Refusal::CapabilityNotAdvertised { .. }) => {
                        "this agent cannot load sessions (no loadSession capability)".to_owned()
                    }
                    e => format!("session/load {id}: {e}"),
                })?;
            out.end_stream();
            (v1::SessionId::new(id.as_str()), loaded.modes)
        }
        None => {
            let created = conn
                .new_session(&v1::NewSessionRequest::new(cwd.to_path_buf()))
                .await
                .map_err(|e| format!("session/new: {e}"))?;
            (created.session_id, created.modes)
        }
    };
    let sid = session_id.0.to_string();
    shared
        .fs
        .add_session(&sid, cwd)
        .map_err(|e| format!("cannot serve files in {}: {e}", cwd.display()))?;
    shared
        .terminals
        .add_session(&sid, cwd)
        .map_err(|e| format!("cannot run commands in {}: {e}", cwd.display()))?;
    let modes_text = modes
        .as_ref()
        .map(|m| {
            let list: Vec<String> = m
                .available_modes
                .iter()
                .map(|mode| {
                    if mode.id == m.current_mode_id {
                        format!("{}*", mode.id.0)
                    } else {
                        mode.id.0.to_string()
                    }
                })
                .collect();
            format!("; modes: {}", list.join(", "))
        })
        .unwrap_or_default();
    out.line(&format!(
        "{} {} {}",
        s.green("session"),
        s.bold(&sid),
        s.dim(&format!("in {}{modes_text}", cwd.display()))
    ));

    if let Some(mode) = &args.mode
        && let Err(e) = conn
            .set_session_mode(&v1::SetSessionModeRequest::new(
                session_id.clone(),
                mode.clone(),
            ))
            .await
    {
        out.line(&s.red(&format!("session/set_mode {mode}: {e}")));
    }

    // The prompts, one turn each.
    let mut code = 0;
    for (i, text) in args.prompts.iter().enumerate() {
        out.line("");
        out.line(&format!("{} {}", s.bold(&s.magenta("you ›")), s.bold(text)));
        *lock(&turn) = TurnState {
            session_id: Some(sid.clone()),
            cancelling: false,
        };
        shared.render.begin_turn(&sid);
        let timer = args.cancel_after.map(|after| {
            let (conn, sid, shared) = (conn.clone(), sid.clone(), Arc::clone(shared));
            let done = Arc::new(AtomicBool::new(false));
            let flag = Arc::clone(&done);
            let task = tokio::spawn(async move {
                tokio::time::sleep(after).await;
                if !flag.load(Ordering::SeqCst) {
                    shared.out().line(&shared.style().yellow(&format!(
                        "cancelling the turn after {} ms (session/cancel)",
                        after.as_millis()
                    )));
                    let _ = conn.cancel(&sid).await;
                }
            });
            (done, task)
        });
        let answer = conn
            .prompt(&v1::PromptRequest::new(
                session_id.clone(),
                vec![v1::ContentBlock::from(text.as_str())],
            ))
            .await;
        if let Some((done, task)) = timer {
            done.store(true, Ordering::SeqCst);
            task.abort();
        }
        let interrupted = std::mem::take(&mut *lock(&turn)).cancelling;
        out.end_stream();
        match answer {
            Ok(answer) => {
                let reason = render::stop_reason(answer.stop_reason);
                if answer.stop_reason == v1::StopReason::Cancelled {
                    shared.render.turn_cancelled(&sid);
                }
                let badge = match answer.stop_reason {
                    v1::StopReason::EndTurn => s.green(&format!("■ stop reason: {reason}")),
                    _ => s.yellow(&format!("■ stop reason: {reason}")),
                };
                out.line(&badge);
                if interrupted && i + 1 < args.prompts.len() {
                    out.line(&s.yellow("interrupted: the remaining prompts are not sent"));
                    break;
                }
            }
            Err(e) => {
                out.line(&s.red(&format!("■ the prompt failed: {e}")));
                code = 1;
                break;
            }
        }
    }
    if caps.load_session {
        out.line("");
        let me = std::env::args()
            .next()
            .unwrap_or_else(|| "demo-client".to_owned());
        let agent = if args.agent.is_empty() {
            String::new()
        } else {
            let words: Vec<String> = args
                .agent
                .iter()
                .map(|a| shell_quote(&a.to_string_lossy()))
                .collect();
            format!(" -- {}", words.join(" "))
        };
        out.line(&s.dim(&format!(
            "to load this session again: {} --load {sid} --cwd {}{agent}",
            shell_quote(&me),
            shell_quote(&cwd.display().to_string())
        )));
    }
    Ok(code)
}
