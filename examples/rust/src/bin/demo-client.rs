//! A terminal ACP client for any agent, built on libacp-core's typed API.
//!
//! It spawns the agent, initializes it (offering `fs`, `terminal` and form
//! elicitation), prints what the agent offers (capabilities, auth methods),
//! authenticates if asked, opens a session (new, loaded or resumed), sends
//! the prompts (with image and audio attachments) and prints what the agent
//! does as it happens: streamed text inline, thoughts dimmed, the plan as a
//! checklist, tool calls with their status transitions, diffs as `-`/`+`
//! lines, terminal output, questions (elicitation), mode and config changes
//! and the stop reason. It can also list, close and delete sessions and log
//! out. It shows the agent's notices and context compactions (it
//! advertises `session.notices` and `session.compaction`). With
//! `--unstable` it speaks the unstable v1 extensions too: it shows the
//! turn's token usage and the agent's subagents, and `--auth-status`,
//! `--title`, `--status`, `--fork` and `--archive` call `auth/status`,
//! `session/set_title`, `session/status`, `session/fork` and
//! `session/archive`. Files are served by the core's `SandboxedFs` (confined to the
//! session's directory) and commands by its `TerminalManager`. Ctrl-C during
//! a turn cancels it (`session/cancel`); a second Ctrl-C quits.
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

use libacp_core::protocol::unstable::Features;
use libacp_core::services::fs::SandboxedFs;
use libacp_core::services::terminal::TerminalManager;
use libacp_core::{
    AcpOptions, AgentCommand, CallError, Client, ClientConnection, ConnectionOptions, Direction,
    Refusal, RequestContext, RpcError, Tolerant, codes, v1,
};
use libacp_examples::media::{self, MediaKind};
use libacp_examples::render::{self, Renderer};
use libacp_examples::style::{Out, Style};
use libacp_examples::{form, script};
use tokio::sync::mpsc;

const USAGE: &str = "\
usage: demo-client [--yes|--no|--ask] [--cwd DIR] [--add-dir DIR]...
                   [--prompt TEXT]... [--image PATH]... [--audio PATH]...
                   [--load SESSION_ID | --resume SESSION_ID] [--mode MODE_ID]
                   [--model NAME] [--config ID=VALUE]... [--auth METHOD_ID]
                   [--list] [--close] [--delete SESSION_ID] [--logout]
                   [--unstable [--auth-status] [--title TEXT] [--status]
                    [--fork] [--archive] [--unarchive SESSION_ID]]
                   [--trace] [-- AGENT_COMMAND ARGS...]

Spawns an ACP agent (default: the demo-agent next to this program), shows
what it offers, opens a session in DIR (default: a new temporary directory),
sends each prompt (default: one prompt, unless --load or --resume is given)
and shows what the agent does.

  --yes / --no      answer permission requests and questions: allow and
                    accept the defaults / reject and decline
  --ask             ask on the terminal (the default when stdin is a terminal,
                    else --yes)
  --cwd DIR         the session's working directory (files and commands are
                    confined to it); with --list, list only its sessions
  --add-dir DIR     an additional directory of the session, for the agent
                    (this client serves files from --cwd only); repeatable
  --prompt TEXT     a prompt to send; repeat for several turns
  --image PATH      attach an image to the first prompt (.png, .jpg, .gif,
                    .webp, .svg); repeatable
  --audio PATH      attach audio to the first prompt (.wav, .mp3, .ogg, .flac,
                    .m4a, .webm); repeatable
  --load ID         load an earlier session (its history is replayed) instead
                    of creating one
  --resume ID       resume an earlier session without replaying it
                    (without --cwd: in its own directory, from session/list)
  --mode MODE_ID    switch the session to this mode first
  --model NAME      choose the agent's model (its config option of category
                    `model`), by value id or name
  --config ID=VALUE set any config option (true/false for a boolean)
  --auth METHOD_ID  authenticate with this method (one of the agent's auth
                    methods, printed at the start) before the session
  --list            list the agent's sessions (session/list)
  --close           close the session at the end (session/close)
  --delete ID       delete a session (session/delete)
  --logout          log out at the end (logout)
  --unstable        speak the unstable v1 extensions (the default agent is
                    started with --unstable too); then:
  --auth-status     show the agent's authentication state (auth/status)
  --title TEXT      retitle the session after the prompts (session/set_title)
  --status          show whether the agent holds the session
                    (session/status)
  --fork            fork the session after the prompts (session/fork) and
                    show the fork's status
  --archive         archive the session at the end (session/archive)
  --unarchive ID    list an archived session again (session/unarchive)
  --trace           also print every JSON-RPC frame
  Ctrl-C            cancel the running turn; press again to quit

--list, --delete, --logout, --auth-status and --unarchive alone open no
session and send no prompt.";

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
    add_dirs: Vec<PathBuf>,
    prompts: Vec<String>,
    attachments: Vec<(MediaKind, PathBuf)>,
    load: Option<String>,
    resume: Option<String>,
    mode: Option<String>,
    model: Option<String>,
    /// `--config ID=VALUE`, in order.
    config: Vec<(String, String)>,
    auth: Option<String>,
    list: bool,
    close: bool,
    delete: Option<String>,
    logout: bool,
    /// `--unstable` and the unstable calls it enables.
    unstable: bool,
    auth_status: bool,
    title: Option<String>,
    status: bool,
    fork: bool,
    archive: bool,
    unarchive: Option<String>,
    /// Whether to open a session (and prompt): not when only --list,
    /// --delete or --logout were asked for.
    session: bool,
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
        add_dirs: Vec::new(),
        prompts: Vec::new(),
        attachments: Vec::new(),
        load: None,
        resume: None,
        mode: None,
        model: None,
        config: Vec::new(),
        auth: None,
        list: false,
        close: false,
        delete: None,
        logout: false,
        unstable: false,
        auth_status: false,
        title: None,
        status: false,
        fork: false,
        archive: false,
        unarchive: None,
        session: true,
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
            "--add-dir" => args.add_dirs.push(PathBuf::from(value("--add-dir")?)),
            "--image" => args
                .attachments
                .push((MediaKind::Image, PathBuf::from(value("--image")?))),
            "--audio" => args
                .attachments
                .push((MediaKind::Audio, PathBuf::from(value("--audio")?))),
            "--load" => args.load = Some(value("--load")?),
            "--resume" => args.resume = Some(value("--resume")?),
            "--mode" => args.mode = Some(value("--mode")?),
            "--model" => args.model = Some(value("--model")?),
            "--config" => {
                let setting = value("--config")?;
                let (id, v) = setting
                    .split_once('=')
                    .ok_or_else(|| format!("--config {setting}: expected ID=VALUE"))?;
                args.config.push((id.to_owned(), v.to_owned()));
            }
            "--auth" => args.auth = Some(value("--auth")?),
            "--list" => args.list = true,
            "--close" => args.close = true,
            "--delete" => args.delete = Some(value("--delete")?),
            "--logout" => args.logout = true,
            "--unstable" => args.unstable = true,
            "--auth-status" => args.auth_status = true,
            "--title" => args.title = Some(value("--title")?),
            "--status" => args.status = true,
            "--fork" => args.fork = true,
            "--archive" => args.archive = true,
            "--unarchive" => args.unarchive = Some(value("--unarchive")?),
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
    if args.load.is_some() && args.resume.is_some() {
        return Err("--load and --resume exclude each other".to_owned());
    }
    let unstable_calls = [
        ("--auth-status", args.auth_status),
        ("--title", args.title.is_some()),
        ("--status", args.status),
        ("--fork", args.fork),
        ("--archive", args.archive),
        ("--unarchive", args.unarchive.is_some()),
    ];
    if let Some((flag, _)) = unstable_calls.iter().find(|(_, on)| *on)
        && !args.unstable
    {
        return Err(format!("{flag} is an unstable extension: add --unstable"));
    }
    let reopens = args.load.is_some() || args.resume.is_some();
    let needs_session = reopens
        || !args.prompts.is_empty()
        || !args.attachments.is_empty()
        || !args.add_dirs.is_empty()
        || args.mode.is_some()
        || args.model.is_some()
        || !args.config.is_empty()
        || args.close
        || args.title.is_some()
        || args.status
        || args.fork
        || args.archive;
    let only_actions = args.list
        || args.delete.is_some()
        || args.logout
        || args.auth_status
        || args.unarchive.is_some();
    args.session = needs_session || !only_actions;
    if args.session && args.prompts.is_empty() && (!reopens || !args.attachments.is_empty()) {
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

    /// How answers are given, to show after them.
    fn how(&self) -> &'static str {
        match self.permissions {
            Permissions::Yes => " (--yes)",
            Permissions::No => " (--no)",
            Permissions::Ask => "",
        }
    }

    /// Answers an `elicitation/create`: the form's defaults with `--yes`,
    /// declined with `--no`, field by field on the terminal with `--ask`.
    /// URL questions are declined (this client opens no browser).
    async fn elicit(&self, args: &v1::CreateElicitationRequest) -> v1::ElicitationAction {
        let s = self.style();
        let how = self.how();
        let v1::ElicitationMode::Form(f) = &args.mode else {
            self.out().line(&format!(
                "    {} declined: this client only answers forms",
                s.dim("→")
            ));
            return v1::ElicitationAction::Decline;
        };
        let schema = &f.requested_schema;
        let required = schema.required.clone().unwrap_or_default();
        let mut content = std::collections::BTreeMap::new();
        for (name, field) in &schema.properties {
            let default = form::default_of(field);
            let value = match self.permissions {
                Permissions::No => None,
                Permissions::Yes => default,
                Permissions::Ask if form::answerable(field) => {
                    match self.read_field(name, field, default).await {
                        Ok(v) => v,
                        Err(()) => {
                            self.out()
                                .line(&format!("    {} cancelled (end of input)", s.dim("→")));
                            return v1::ElicitationAction::Cancel;
                        }
                    }
                }
                Permissions::Ask => default,
            };
            match value {
                Some(v) => {
                    content.insert(name.clone(), v);
                }
                None if required.contains(name) => {
                    let why = if self.permissions == Permissions::No {
                        String::new()
                    } else {
                        format!(": no answer for `{name}`")
                    };
                    self.out().line(&format!(
                        "    {} {}{why}{how}",
                        s.dim("→"),
                        s.red("declined")
                    ));
                    return v1::ElicitationAction::Decline;
                }
                None => {}
            }
        }
        let shown: Vec<String> = content
            .iter()
            .map(|(k, v)| format!("{k} = {}", form::show(v)))
            .collect();
        self.out().line(&format!(
            "    {} {} {}{how}",
            s.dim("→"),
            s.green("answered"),
            shown.join(", ")
        ));
        v1::ElicitationAction::Accept(v1::ElicitationAcceptAction::new().content(content))
    }

    /// Reads one form field on the terminal (empty: its default). `Err` at
    /// the end of input.
    async fn read_field(
        &self,
        name: &str,
        field: &v1::ElicitationPropertySchema,
        default: Option<v1::ElicitationContentValue>,
    ) -> Result<Option<v1::ElicitationContentValue>, ()> {
        let s = self.style();
        let shown_default = default
            .as_ref()
            .map(|d| format!(" [{}]", form::show(d)))
            .unwrap_or_default();
        loop {
            self.out().ask(&format!(
                "    {} ",
                s.bold(&format!("{}{shown_default} >", form::title(name, field)))
            ));
            let typed = std::io::stdin().is_terminal();
            let Some(line) = self.stdin.next().await else {
                self.out().answered(Some("(end of input)"));
                return Err(());
            };
            let line = line.trim();
            self.out().answered((!typed).then_some(line));
            if line.is_empty() {
                return Ok(default);
            }
            match form::parse(field, line) {
                Ok(v) => return Ok(Some(v)),
                Err(expected) => self
                    .out()
                    .line(&s.yellow(&format!("    please type {expected}"))),
            }
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
        let how = self.how();
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

    async fn create_elicitation(
        &self,
        cx: RequestContext<ClientConnection>,
        args: v1::CreateElicitationRequest,
    ) -> Result<v1::CreateElicitationResponse, RpcError> {
        let shared = &self.0;
        shared.out().lines(&shared.render.elicitation_lines(&args));
        let action = tokio::select! {
            () = cx.cancellation.cancelled() => v1::ElicitationAction::Cancel,
            action = shared.elicit(&args) => action,
        };
        Ok(v1::CreateElicitationResponse::new(action))
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
    // Everything given on the command line is checked before the agent
    // starts.
    let inputs = Inputs {
        cwd: args
            .cwd
            .as_deref()
            .map(|d| given_dir("--cwd", d))
            .transpose()?,
        add_dirs: args
            .add_dirs
            .iter()
            .map(|d| given_dir("--add-dir", d))
            .collect::<Result<_, _>>()?,
        attachments: args
            .attachments
            .iter()
            .map(|(kind, path)| attachment(*kind, path))
            .collect::<Result<_, _>>()?,
    };

    // The agent command, its stderr forwarded line by line, dimmed.
    let (command, shown) = if args.agent.is_empty() {
        let exe = std::env::current_exe().map_err(|e| format!("cannot locate myself: {e}"))?;
        let agent = exe.with_file_name("demo-agent");
        if args.unstable {
            let shown = format!("{} --unstable", agent.display());
            (AgentCommand::new(agent).args(["--unstable"]), shown)
        } else {
            let shown = agent.display().to_string();
            (AgentCommand::new(agent), shown)
        }
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
    if args.unstable {
        options.unstable = Features::all();
    }
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

    let result = drive(&args, &conn, &shared, inputs).await;
    conn.close().await;
    if let Some(exit) = conn.acp().process().and_then(|p| p.try_exit()) {
        out.line(&s.dim(&format!("agent exited: {exit}")));
    }
    result
}

/// What the command line names, read and checked.
#[derive(Debug)]
struct Inputs {
    cwd: Option<PathBuf>,
    add_dirs: Vec<PathBuf>,
    /// Content blocks for the first prompt, with how to show them.
    attachments: Vec<(v1::ContentBlock, String)>,
}

/// A directory given as `flag`, made absolute (session directories must be).
fn given_dir(flag: &str, dir: &Path) -> Result<PathBuf, String> {
    let abs = std::fs::canonicalize(dir).map_err(|e| format!("{flag} {}: {e}", dir.display()))?;
    if abs.is_dir() {
        Ok(abs)
    } else {
        Err(format!("{flag} {}: not a directory", abs.display()))
    }
}

/// `--image`/`--audio`: the file as a content block (base64, with the MIME
/// type its extension gives), and a short description.
fn attachment(kind: MediaKind, path: &Path) -> Result<(v1::ContentBlock, String), String> {
    let (flag, what) = match kind {
        MediaKind::Image => ("--image", "image"),
        MediaKind::Audio => ("--audio", "audio"),
    };
    let mime = media::mime_type(kind, path).ok_or_else(|| {
        format!(
            "{flag} {}: unknown file type (known: {})",
            path.display(),
            media::known_extensions(kind)
        )
    })?;
    let bytes = std::fs::read(path).map_err(|e| format!("{flag} {}: {e}", path.display()))?;
    let data = media::base64_encode(&bytes);
    let block = match kind {
        MediaKind::Image => v1::ContentBlock::Image(v1::ImageContent::new(data, mime)),
        MediaKind::Audio => v1::ContentBlock::Audio(v1::AudioContent::new(data, mime)),
    };
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    Ok((
        block,
        format!("{what} {name} ({mime}, {} bytes)", bytes.len()),
    ))
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
    inputs: Inputs,
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
                        .terminal(true)
                        .elicitation(
                            v1::ElicitationCapabilities::new()
                                .form(v1::ElicitationFormCapabilities::new()),
                        )
                        // `--config ID=true|false` sets boolean options;
                        // notices and compactions are shown.
                        .session(
                            v1::ClientSessionCapabilities::new()
                                .config_options(
                                    v1::SessionConfigOptionsCapabilities::new()
                                        .boolean(v1::BooleanConfigOptionCapabilities::new()),
                                )
                                .notices(v1::NoticeCapabilities::new())
                                .compaction(v1::CompactionCapabilities::new()),
                        )
                        .subagents(args.unstable.then(v1::SubagentCapabilities::new)),
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
    show_agent(out, &init, args.auth.as_deref());
    let methods = &init.auth_methods;

    if let Some(method) = &args.auth {
        authenticate(conn, methods, method, out).await?;
    }
    if args.auth_status {
        let status = conn
            .auth_status(&v1::AuthStatusRequest::new())
            .await
            .map_err(|e| explain(e, "auth/status", methods))?;
        out.line(&format!(
            "{} {}",
            s.blue("authentication state:"),
            s.bold(&json_word(&status.state))
        ));
    }
    if let Some(id) = &args.delete {
        conn.delete_session(&v1::DeleteSessionRequest::new(id.clone()))
            .await
            .map_err(|e| explain(e, &format!("session/delete {id}"), methods))?;
        out.line(&format!("{} {}", s.green("deleted session"), s.bold(id)));
    }
    if let Some(id) = &args.unarchive {
        conn.unarchive_session(&v1::UnarchiveSessionRequest::new(id.clone()))
            .await
            .map_err(|e| explain(e, &format!("session/unarchive {id}"), methods))?;
        out.line(&format!("{} {}", s.green("unarchived session"), s.bold(id)));
    }
    if args.list {
        show_sessions(conn, inputs.cwd.as_deref(), out, methods).await?;
    }
    let code = if args.session {
        run_session(args, conn, shared, &init, inputs, &turn).await?
    } else {
        0
    };
    if args.logout {
        conn.logout(&v1::LogoutRequest::new())
            .await
            .map_err(|e| explain(e, "logout", methods))?;
        out.line(&s.green("logged out"));
    }
    Ok(code)
}

/// The startup summary: who the agent is, what it offers, how to log in.
fn show_agent(out: &Out, init: &v1::InitializeResponse, auth: Option<&str>) {
    let s = out.style();
    let agent = init.agent_info.as_ref().map_or_else(
        || "an unnamed agent".to_owned(),
        |i| format!("{} {}", i.name, i.version),
    );
    let protocol = serde_json::to_value(init.protocol_version)
        .map(|v| v.to_string())
        .unwrap_or_default();
    out.line(&format!(
        "{} {} {}",
        s.green("connected to"),
        s.bold(&agent),
        s.dim(&format!("(ACP v{protocol})"))
    ));
    let caps = &init.agent_capabilities;
    let named = |pairs: &[(bool, &str)]| -> Vec<String> {
        pairs
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, name)| (*name).to_owned())
            .collect()
    };
    let prompt = &caps.prompt_capabilities;
    let sessions = &caps.session_capabilities;
    let mut offers = named(&[(caps.load_session, "loadSession")]);
    let groups = [
        (
            "prompts with",
            named(&[
                (prompt.image, "image"),
                (prompt.audio, "audio"),
                (prompt.embedded_context, "embeddedContext"),
            ]),
        ),
        (
            "session/",
            named(&[
                (sessions.list.is_some(), "list"),
                (sessions.resume.is_some(), "resume"),
                (sessions.close.is_some(), "close"),
                (sessions.delete.is_some(), "delete"),
                (sessions.fork.is_some(), "fork"),
                (sessions.archive.is_some(), "archive, unarchive"),
                (sessions.status.is_some(), "status"),
                (sessions.title.is_some(), "set_title"),
            ]),
        ),
    ];
    for (label, names) in groups {
        if !names.is_empty() {
            let sep = if label.ends_with('/') { "" } else { " " };
            offers.push(format!("{label}{sep}{}", names.join(", ")));
        }
    }
    offers.extend(named(&[
        (
            sessions.additional_directories.is_some(),
            "additionalDirectories",
        ),
        (caps.auth.logout.is_some(), "logout"),
        (caps.auth.status.is_some(), "auth/status"),
    ]));
    out.line(&s.dim(&format!(
        "  offers: {}",
        if offers.is_empty() {
            "no optional capabilities".to_owned()
        } else {
            offers.join(" · ")
        }
    )));
    if init.auth_methods.is_empty() {
        return;
    }
    let listed: Vec<String> = init
        .auth_methods
        .iter()
        .map(|m| {
            let terminal = if matches!(m, v1::AuthMethod::Agent(_)) {
                ""
            } else {
                ", a terminal login this client cannot run"
            };
            match m.description() {
                Some(d) => format!("{} ({}: {d}{terminal})", m.id().0, m.name()),
                None => format!("{} ({}{terminal})", m.id().0, m.name()),
            }
        })
        .collect();
    let hint = if auth.is_some() {
        ""
    } else {
        "; log in with --auth METHOD_ID"
    };
    out.line(&s.dim(&format!("  auth methods: {}{hint}", listed.join(", "))));
}

/// `authenticate` with one of the agent's methods.
async fn authenticate(
    conn: &ClientConnection,
    methods: &[v1::AuthMethod],
    method: &str,
    out: &Out,
) -> Result<(), String> {
    let s = out.style();
    match methods.iter().find(|m| &*m.id().0 == method) {
        Some(v1::AuthMethod::Agent(_)) => {}
        Some(_) => {
            return Err(format!(
                "--auth {method}: a terminal login, which this client cannot run"
            ));
        }
        None => {
            return Err(format!(
                "--auth {method}: the agent offers no such method ({})",
                if methods.is_empty() {
                    "it offers none".to_owned()
                } else {
                    format!("it offers: {}", auth_ids(methods))
                }
            ));
        }
    }
    conn.authenticate(&v1::AuthenticateRequest::new(method.to_owned()))
        .await
        .map_err(|e| format!("authenticate {method}: {e}"))?;
    out.line(&format!(
        "{} {}",
        s.green("authenticated"),
        s.dim(&format!("(method {method})"))
    ));
    Ok(())
}

/// The ids of the methods `authenticate` takes, for messages.
fn auth_ids(methods: &[v1::AuthMethod]) -> String {
    let ids: Vec<&str> = methods.iter().map(|m| &*m.id().0).collect();
    ids.join(", ")
}

/// A failed call as a sentence: a capability the agent did not advertise
/// and authentication it requires are said plainly.
fn explain(e: CallError, call: &str, methods: &[v1::AuthMethod]) -> String {
    match e {
        CallError::Refused(Refusal::CapabilityNotAdvertised { capability, .. }) => {
            format!("{call}: this agent does not offer it (no {capability})")
        }
        CallError::Rpc(e) if e.code == codes::AUTH_REQUIRED => {
            let how = if methods.is_empty() {
                "it lists no auth method".to_owned()
            } else {
                format!(
                    "run again with --auth METHOD_ID (one of: {})",
                    auth_ids(methods)
                )
            };
            format!("{call}: the agent requires authentication: {how}")
        }
        e => format!("{call}: {e}"),
    }
}

/// Every page of `session/list` (only the sessions in `cwd`, if given),
/// and how many pages it took.
async fn all_sessions(
    conn: &ClientConnection,
    cwd: Option<&Path>,
) -> Result<(Vec<v1::SessionInfo>, usize), CallError> {
    let mut sessions = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let page = conn
            .list_sessions(
                &v1::ListSessionsRequest::new()
                    .cwd(cwd.map(Path::to_path_buf))
                    .cursor(cursor.clone()),
            )
            .await?;
        pages += 1;
        sessions.extend(page.sessions);
        match page.next_cursor {
            // A cursor that does not move would never end.
            Some(next) if cursor.as_ref() != Some(&next) => cursor = Some(next),
            _ => break,
        }
    }
    Ok((sessions, pages))
}

/// `--list`: the agent's sessions, two lines each.
async fn show_sessions(
    conn: &ClientConnection,
    cwd: Option<&Path>,
    out: &Out,
    methods: &[v1::AuthMethod],
) -> Result<(), String> {
    let s = out.style();
    let (sessions, pages) = all_sessions(conn, cwd)
        .await
        .map_err(|e| explain(e, "session/list", methods))?;
    let place = cwd
        .map(|d| format!(" in {}", d.display()))
        .unwrap_or_default();
    let pages = if pages > 1 {
        format!(", {pages} pages")
    } else {
        String::new()
    };
    if sessions.is_empty() {
        out.line(&s.dim(&format!("no sessions{place}")));
        return Ok(());
    }
    let mut lines = vec![s.bold(&format!("sessions{place} ({}{pages}):", sessions.len()))];
    for info in &sessions {
        lines.push(format!(
            "  {}  {}",
            s.bold(&info.session_id.0),
            info.title.as_deref().unwrap_or("(untitled)")
        ));
        let mut about = vec![format!("in {}", info.cwd.display())];
        if !info.additional_directories.is_empty() {
            about.push(format!(
                "also {}",
                render::path_list(&info.additional_directories)
            ));
        }
        if let Some(at) = &info.updated_at {
            about.push(format!("updated {at}"));
        }
        lines.push(s.dim(&format!("      {}", about.join(" · "))));
    }
    out.lines(&lines);
    Ok(())
}

/// The directory a stored session was opened in, from `session/list` (for
/// `--load`/`--resume` without `--cwd`).
async fn session_dir(
    conn: &ClientConnection,
    caps: &v1::AgentCapabilities,
    id: &str,
) -> Option<PathBuf> {
    caps.session_capabilities.list.as_ref()?;
    let (sessions, _) = all_sessions(conn, None).await.ok()?;
    let dir = sessions.into_iter().find(|i| &*i.session_id.0 == id)?.cwd;
    dir.is_dir().then_some(dir)
}

/// The choices of a select option, groups flattened.
fn select_choices(select: &v1::SessionConfigSelect) -> Vec<&v1::SessionConfigSelectOption> {
    match &select.options {
        v1::SessionConfigSelectOptions::Ungrouped(options) => options.iter().collect(),
        v1::SessionConfigSelectOptions::Grouped(groups) => {
            groups.iter().flat_map(|g| &g.options).collect()
        }
        _ => Vec::new(),
    }
}

/// The session's config options in one line, e.g. `Model: demo-small*,
/// demo-large; Thinking: on`.
fn config_text(options: &[v1::SessionConfigOption]) -> String {
    let shown: Vec<String> = options
        .iter()
        .map(|o| match &o.kind {
            v1::SessionConfigKind::Select(select) => {
                let choices: Vec<String> = select_choices(select)
                    .iter()
                    .map(|c| {
                        let star = if c.value == select.current_value {
                            "*"
                        } else {
                            ""
                        };
                        format!("{}{star}", c.value.0)
                    })
                    .collect();
                format!("{}: {}", o.name, choices.join(", "))
            }
            v1::SessionConfigKind::Boolean(b) => {
                format!("{}: {}", o.name, if b.current_value { "on" } else { "off" })
            }
            _ => format!("{}: ?", o.name),
        })
        .collect();
    shown.join("; ")
}

/// A value for a config option, read from the command line: a choice's
/// value id or name (any case) for a select, true/false (on/off, yes/no)
/// for a boolean. Also returns how to show it.
fn config_value(
    option: &v1::SessionConfigOption,
    value: &str,
) -> Result<(v1::SessionConfigOptionValue, String), String> {
    let wanted = value.to_lowercase();
    match &option.kind {
        v1::SessionConfigKind::Select(select) => {
            let choices = select_choices(select);
            choices
                .iter()
                .find(|c| c.value.0.to_lowercase() == wanted || c.name.to_lowercase() == wanted)
                .map(|c| {
                    (
                        v1::SessionConfigOptionValue::value_id(c.value.clone()),
                        c.name.clone(),
                    )
                })
                .ok_or_else(|| {
                    let ids: Vec<&str> = choices.iter().map(|c| &*c.value.0).collect();
                    format!("`{value}` is not a choice ({})", ids.join(", "))
                })
        }
        v1::SessionConfigKind::Boolean(_) => match wanted.as_str() {
            "true" | "on" | "yes" | "1" => {
                Ok((v1::SessionConfigOptionValue::boolean(true), "on".into()))
            }
            "false" | "off" | "no" | "0" => {
                Ok((v1::SessionConfigOptionValue::boolean(false), "off".into()))
            }
            _ => Err(format!("`{value}`: expected true or false")),
        },
        _ => Err("an option kind this client does not know".to_owned()),
    }
}

/// Opens the session (new, loaded or resumed), applies the mode and config
/// options, sends the prompts, closes it if asked. Returns the exit code.
async fn run_session(
    args: &Args,
    conn: &ClientConnection,
    shared: &Arc<Shared>,
    init: &v1::InitializeResponse,
    inputs: Inputs,
    turn: &Arc<Mutex<TurnState>>,
) -> Result<i32, String> {
    let out = shared.out();
    let s = out.style();
    let caps = &init.agent_capabilities;
    let methods = &init.auth_methods;
    let dirs = inputs.add_dirs;
    if !dirs.is_empty() && caps.session_capabilities.additional_directories.is_none() {
        return Err(
            "--add-dir: this agent does not take additional directories \
                    (no agentCapabilities.sessionCapabilities.additionalDirectories)"
                .to_owned(),
        );
    }
    let reopened = args.load.as_deref().or(args.resume.as_deref());
    let cwd = match (inputs.cwd, reopened) {
        (Some(dir), _) => dir,
        (None, Some(id)) => match session_dir(conn, caps, id).await {
            Some(dir) => dir,
            None => fresh_dir()?,
        },
        (None, None) => fresh_dir()?,
    };
    let (session_id, modes, config) = if let Some(id) = &args.load {
        out.line(&s.dim(&format!("loading session {id} (history follows)")));
        let loaded = conn
            .load_session(
                &v1::LoadSessionRequest::new(id.clone(), cwd.clone())
                    .additional_directories(dirs.clone()),
            )
            .await
            .map_err(|e| explain(e, &format!("session/load {id}"), methods))?;
        out.end_stream();
        (
            v1::SessionId::new(id.as_str()),
            loaded.modes,
            loaded.config_options,
        )
    } else if let Some(id) = &args.resume {
        let resumed = conn
            .resume_session(
                &v1::ResumeSessionRequest::new(id.clone(), cwd.clone())
                    .additional_directories(dirs.clone()),
            )
            .await
            .map_err(|e| explain(e, &format!("session/resume {id}"), methods))?;
        out.line(&s.dim(&format!(
            "resumed session {id} (its history stays with the agent: nothing is replayed)"
        )));
        (
            v1::SessionId::new(id.as_str()),
            resumed.modes,
            resumed.config_options,
        )
    } else {
        let created = conn
            .new_session(
                &v1::NewSessionRequest::new(cwd.clone()).additional_directories(dirs.clone()),
            )
            .await
            .map_err(|e| explain(e, "session/new", methods))?;
        (created.session_id, created.modes, created.config_options)
    };
    let sid = session_id.0.to_string();
    shared
        .fs
        .add_session(&sid, &cwd)
        .map_err(|e| format!("cannot serve files in {}: {e}", cwd.display()))?;
    shared
        .terminals
        .add_session(&sid, &cwd)
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
    if !dirs.is_empty() {
        out.line(&s.dim(&format!(
            "  additional directories: {}",
            render::path_list(&dirs)
        )));
    }
    let mut config = config.unwrap_or_default();
    if !config.is_empty() {
        out.line(&s.dim(&format!("  config: {}", config_text(&config))));
    }

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

    // --model (the option of category `model`), then each --config.
    let mut settings: Vec<(String, Option<String>, &str)> = Vec::new();
    if let Some(model) = &args.model {
        let id = config
            .iter()
            .find(|o| o.category == Some(v1::SessionConfigOptionCategory::Model))
            .map(|o| o.id.0.to_string());
        settings.push((format!("--model {model}"), id, model));
    }
    for (id, value) in &args.config {
        settings.push((format!("--config {id}={value}"), Some(id.clone()), value));
    }
    for (flag, id, value) in settings {
        let option = id.and_then(|id| config.iter().find(|o| *o.id.0 == *id).cloned());
        let Some(option) = option else {
            out.line(&s.red(&format!(
                "{flag}: the agent offers no such option{}",
                if config.is_empty() {
                    String::new()
                } else {
                    format!(" (it offers: {})", config_text(&config))
                }
            )));
            continue;
        };
        let (value, shown) = match config_value(&option, value) {
            Ok(v) => v,
            Err(e) => {
                out.line(&s.red(&format!("{flag}: {}: {e}", option.name)));
                continue;
            }
        };
        match conn
            .set_session_config_option(&v1::SetSessionConfigOptionRequest::new(
                session_id.clone(),
                option.id.clone(),
                value,
            ))
            .await
        {
            Ok(answer) => {
                config = answer.config_options;
                out.line(&format!(
                    "{} {}",
                    s.blue(&format!("{} →", option.name)),
                    s.bold(&shown)
                ));
            }
            Err(e) => out.line(&s.red(&format!("session/set_config_option {flag}: {e}"))),
        }
    }

    let code = send_prompts(args, conn, shared, &session_id, inputs.attachments, turn).await;
    if let Err(e) = unstable_calls(args, conn, &session_id, &cwd, out).await {
        out.line(&s.red(&explain(e.1, e.0, methods)));
        return Ok(1);
    }

    if args.close {
        match conn
            .close_session(&v1::CloseSessionRequest::new(session_id.clone()))
            .await
        {
            Ok(_) => out.line(&format!(
                "{} {}",
                s.green("closed session"),
                s.dim(&format!("{sid} (session/close)"))
            )),
            Err(e) => {
                out.line(&s.red(&explain(e, "session/close", methods)));
                return Ok(1);
            }
        }
    }
    show_hints(args, caps, &sid, &cwd, out);
    Ok(code)
}

/// A value of the schema as its JSON word (`not_required`, `saved`).
fn json_word<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(word)) => word,
        Ok(other) => other.to_string(),
        Err(_) => "?".to_owned(),
    }
}

/// `--title`, `--status`, `--fork` and `--archive`, in that order, after
/// the prompts. A failure names the call.
async fn unstable_calls(
    args: &Args,
    conn: &ClientConnection,
    session_id: &v1::SessionId,
    cwd: &Path,
    out: &Out,
) -> Result<(), (&'static str, CallError)> {
    let s = out.style();
    if let Some(title) = &args.title {
        let answer = conn
            .set_session_title(&v1::SetSessionTitleRequest::new(
                session_id.clone(),
                title.clone(),
            ))
            .await
            .map_err(|e| ("session/set_title", e))?;
        out.line(&format!(
            "{} {}",
            s.blue("session title →"),
            s.bold(&answer.title)
        ));
    }
    if args.status {
        let answer = conn
            .session_status(&v1::SessionStatusRequest::new(session_id.clone()))
            .await
            .map_err(|e| ("session/status", e))?;
        out.line(&format!(
            "{} {}",
            s.blue("session status:"),
            s.bold(&json_word(&answer.status))
        ));
    }
    if args.fork {
        let fork = conn
            .fork_session(&v1::ForkSessionRequest::new(
                session_id.clone(),
                cwd.to_path_buf(),
            ))
            .await
            .map_err(|e| ("session/fork", e))?;
        let status = conn
            .session_status(&v1::SessionStatusRequest::new(fork.session_id.clone()))
            .await
            .map_err(|e| ("session/status", e))?;
        out.line(&format!(
            "{} {} {}",
            s.green("forked into"),
            s.bold(&fork.session_id.0),
            s.dim(&format!(
                "(session/fork; status {})",
                json_word(&status.status)
            ))
        ));
    }
    if args.archive {
        conn.archive_session(&v1::ArchiveSessionRequest::new(session_id.clone()))
            .await
            .map_err(|e| ("session/archive", e))?;
        out.line(&format!(
            "{} {}",
            s.green("archived session"),
            s.dim(&format!("{} (session/archive)", session_id.0))
        ));
    }
    Ok(())
}

/// Sends the prompts, one turn each (the attachments go with the first).
/// Returns the exit code.
async fn send_prompts(
    args: &Args,
    conn: &ClientConnection,
    shared: &Arc<Shared>,
    session_id: &v1::SessionId,
    attachments: Vec<(v1::ContentBlock, String)>,
    turn: &Arc<Mutex<TurnState>>,
) -> i32 {
    let out = shared.out();
    let s = out.style();
    let sid = session_id.0.to_string();
    let mut attachments = Some(attachments);
    for (i, text) in args.prompts.iter().enumerate() {
        out.line("");
        out.line(&format!("{} {}", s.bold(&s.magenta("you ›")), s.bold(text)));
        let mut blocks = vec![v1::ContentBlock::from(text.as_str())];
        for (block, shown) in attachments.take().unwrap_or_default() {
            out.line(&s.dim(&format!("      + {shown}")));
            blocks.push(block);
        }
        *lock(turn) = TurnState {
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
            .prompt(&v1::PromptRequest::new(session_id.clone(), blocks))
            .await;
        if let Some((done, task)) = timer {
            done.store(true, Ordering::SeqCst);
            task.abort();
        }
        let interrupted = std::mem::take(&mut *lock(turn)).cancelling;
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
                if let Some(usage) = &answer.usage {
                    out.line(&s.dim(&format!(
                        "  tokens this turn: {} in, {} out, {} in all",
                        usage.input_tokens, usage.output_tokens, usage.total_tokens
                    )));
                }
                if interrupted && i + 1 < args.prompts.len() {
                    out.line(&s.yellow("interrupted: the remaining prompts are not sent"));
                    break;
                }
            }
            Err(e) => {
                out.line(&s.red(&format!("■ the prompt failed: {e}")));
                return 1;
            }
        }
    }
    0
}

/// How to come back to this session.
fn show_hints(args: &Args, caps: &v1::AgentCapabilities, sid: &str, cwd: &Path, out: &Out) {
    if !caps.load_session && caps.session_capabilities.resume.is_none() {
        return;
    }
    let s = out.style();
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
    let tail = format!(
        "{sid} --cwd {}{agent}",
        shell_quote(&cwd.display().to_string())
    );
    out.line("");
    if caps.load_session {
        out.line(&s.dim(&format!(
            "to load this session again: {} --load {tail}",
            shell_quote(&me)
        )));
    }
    if caps.session_capabilities.resume.is_some() {
        out.line(&s.dim(&format!(
            "to resume it without the replay: {} --resume {tail}",
            shell_quote(&me)
        )));
    }
}
