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
