//! The script `demo-agent` follows on every prompt, shared with the tests.

/// The file the agent writes in the session's working directory.
pub const HELLO_FILE: &str = "hello.txt";

/// What the agent writes into [`HELLO_FILE`].
pub const HELLO_CONTENT: &str =
    "Hello from the libacp demo agent!\nThis file was written through fs/write_text_file.\n";

/// The program the agent runs through `terminal/create`.
pub const TERMINAL_PROGRAM: &str = "sh";

/// Its arguments.
pub const TERMINAL_ARGS: [&str; 2] = ["-c", "echo hello from the terminal; uname -s"];

/// The first line the command prints.
pub const TERMINAL_GREETING: &str = "hello from the terminal";

/// The prompt `demo-client` sends when given none.
pub const DEFAULT_PROMPT: &str = "Write hello.txt and show me the system name";

/// The session modes the agent offers: `(id, name, description)`.
pub const MODES: [(&str, &str, &str); 2] = [
    ("ask", "Ask", "Asks before every change"),
    (
        "code",
        "Code",
        "Writes code (still asks before writing files)",
    ),
];

/// Environment variable: milliseconds between streamed chunks (default
/// [`DEFAULT_DELAY_MS`]). The tests raise it to make cancellation timing
/// deterministic.
pub const DELAY_ENV: &str = "LIBACP_DEMO_AGENT_DELAY_MS";

/// Default pause between streamed chunks, in milliseconds.
pub const DEFAULT_DELAY_MS: u64 = 30;

/// The (pretend) models of the agent's `model` config option: `(value id,
/// name, description)`. The first is the default.
pub const MODELS: [(&str, &str, &str); 3] = [
    (
        "demo-small",
        "Demo Small",
        "Quick and terse (no model really runs)",
    ),
    (
        "demo-large",
        "Demo Large",
        "Slower and wordier (no model really runs)",
    ),
    (
        "demo-reasoner",
        "Demo Reasoner",
        "Thinks out loud first (no model really runs)",
    ),
];

/// The id of the agent's `model` config option (category `model`).
pub const MODEL_OPTION: &str = "model";

/// The id of the agent's `thinking` config option (a boolean: whether the
/// turn starts with a thought).
pub const THINKING_OPTION: &str = "thinking";

/// The agent's one auth method (type `agent`: `authenticate` with this id
/// is the whole login).
pub const AUTH_METHOD: &str = "demo-token";

/// Environment variable: when `1`, the agent requires `authenticate` before
/// sessions (like its `--require-auth` flag).
pub const REQUIRE_AUTH_ENV: &str = "LIBACP_DEMO_AGENT_REQUIRE_AUTH";

/// Environment variable: most sessions per `session/list` page (default
/// [`DEFAULT_PAGE_SIZE`]).
pub const PAGE_SIZE_ENV: &str = "LIBACP_DEMO_AGENT_PAGE_SIZE";

/// Default `session/list` page size.
pub const DEFAULT_PAGE_SIZE: usize = 20;

/// Words in a prompt that make the agent ask a question
/// (`elicitation/create`), when the client offers form elicitation.
pub const ASK_TRIGGER: &str = "ask me";

/// The field of the agent's question.
pub const ASK_FIELD: &str = "name";

/// Its default answer (what `demo-client --yes` sends).
pub const ASK_DEFAULT: &str = "friend";

/// Set to `1` to start `demo-agent` with the unstable v1 extensions
/// (the same as `--unstable`).
pub const UNSTABLE_ENV: &str = "LIBACP_DEMO_AGENT_UNSTABLE";

/// A prompt containing this makes the agent compact the session's
/// history first (as it does by itself from [`COMPACT_AFTER`] messages on).
pub const COMPACT_TRIGGER: &str = "compact";

/// The agent compacts a session's history once it holds this many
/// messages (for clients that advertise `session.compaction`).
pub const COMPACT_AFTER: usize = 6;

/// The notice the agent shows at a session's first turn (for clients that
/// advertise `session.notices`).
pub const NOTICE_TITLE: &str = "Scripted demo";
