//! Plain ANSI styling, used only when stdout is a terminal, and [`Out`]: the
//! single writer of `demo-client`'s output.

use std::io::{IsTerminal, Write};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Wraps text in ANSI escapes, or leaves it alone when colour is off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    color: bool,
}

impl Style {
    /// Colour on or off.
    pub fn new(color: bool) -> Self {
        Self { color }
    }

    /// Colour when stdout is a terminal and `NO_COLOR` is unset.
    pub fn for_stdout() -> Self {
        Self::new(std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none())
    }

    /// Colour when stderr is a terminal and `NO_COLOR` is unset.
    pub fn for_stderr() -> Self {
        Self::new(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
    }

    /// Whether escapes are written.
    pub fn color(&self) -> bool {
        self.color
    }

    fn wrap(&self, code: &str, text: &str) -> String {
        if self.color && !text.is_empty() {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    /// Bold.
    pub fn bold(&self, text: &str) -> String {
        self.wrap("1", text)
    }
    /// Dimmed (faint).
    pub fn dim(&self, text: &str) -> String {
        self.wrap("2", text)
    }
    /// Red.
    pub fn red(&self, text: &str) -> String {
        self.wrap("31", text)
    }
    /// Green.
    pub fn green(&self, text: &str) -> String {
        self.wrap("32", text)
    }
    /// Yellow.
    pub fn yellow(&self, text: &str) -> String {
        self.wrap("33", text)
    }
    /// Blue.
    pub fn blue(&self, text: &str) -> String {
        self.wrap("34", text)
    }
    /// Magenta.
    pub fn magenta(&self, text: &str) -> String {
        self.wrap("35", text)
    }
    /// Cyan.
    pub fn cyan(&self, text: &str) -> String {
        self.wrap("36", text)
    }
}

/// A stream of text that arrives in pieces and is printed inline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// `agent_message_chunk`.
    Agent,
    /// `agent_thought_chunk` (dimmed).
    Thought,
    /// `user_message_chunk` (replayed history).
    User,
}

#[derive(Debug, Default)]
struct State {
    /// The cursor is not at the start of a line.
    mid_line: bool,
    /// The stream being printed inline, if any.
    stream: Option<Stream>,
}

/// Every line `demo-client` prints goes through here: whole lines, inline
/// streamed text, and a question waiting for an answer. A whole line that
/// arrives while streamed text is mid-line starts on a fresh line, so the
/// output never interleaves within a line. Writes go to stdout (stderr for
/// [`Out::err_line`]) and are flushed at once.
#[derive(Debug)]
pub struct Out {
    style: Style,
    state: Mutex<State>,
}

impl Out {
    /// A writer with the given style.
    pub fn new(style: Style) -> Self {
        Self {
            style,
            state: Mutex::new(State::default()),
        }
    }

    /// The style lines should be built with.
    pub fn style(&self) -> Style {
        self.style
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn break_line(state: &mut State, out: &mut impl Write) {
        if state.mid_line {
            let _ = writeln!(out);
            state.mid_line = false;
        }
        state.stream = None;
    }

    /// Prints one whole line (ending any inline stream first).
    pub fn line(&self, text: &str) {
        let mut state = self.lock();
        let mut out = std::io::stdout().lock();
        Self::break_line(&mut state, &mut out);
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    }

    /// Prints several whole lines at once (never split by another writer).
    pub fn lines(&self, lines: &[String]) {
        if lines.is_empty() {
            return;
        }
        let mut state = self.lock();
        let mut out = std::io::stdout().lock();
        Self::break_line(&mut state, &mut out);
        for line in lines {
            let _ = writeln!(out, "{line}");
        }
        let _ = out.flush();
    }

    /// Prints a line on stderr, after ending a half-written stdout line.
    pub fn err_line(&self, text: &str) {
        let mut state = self.lock();
        let mut out = std::io::stdout().lock();
        Self::break_line(&mut state, &mut out);
        let _ = out.flush();
        drop(out);
        let _ = writeln!(std::io::stderr().lock(), "{text}");
    }

    /// Appends streamed text inline. A new stream (or another kind) starts
    /// on a fresh line with its label.
    pub fn stream(&self, kind: Stream, text: &str) {
        if text.is_empty() {
            return;
        }
        let style = self.style;
        let mut state = self.lock();
        let mut out = std::io::stdout().lock();
        if state.stream != Some(kind) {
            Self::break_line(&mut state, &mut out);
            let label = match kind {
                Stream::Agent => style.bold(&style.cyan("agent ›")),
                Stream::Thought => style.dim("thinking ›"),
                Stream::User => style.bold(&style.magenta("you ›")),
            };
            let _ = write!(out, "{label} ");
            state.stream = Some(kind);
        }
        let body = match kind {
            Stream::Thought => text
                .split_inclusive('\n')
                .map(|piece| match piece.strip_suffix('\n') {
                    Some(p) => format!("{}\n", style.dim(p)),
                    None => style.dim(piece),
                })
                .collect(),
            Stream::Agent | Stream::User => text.to_owned(),
        };
        let _ = write!(out, "{body}");
        state.mid_line = !text.ends_with('\n');
        let _ = out.flush();
    }

    /// Ends the inline stream, if any (a following stream of the same kind
    /// starts a new labelled line).
    pub fn end_stream(&self) {
        let mut state = self.lock();
        let mut out = std::io::stdout().lock();
        Self::break_line(&mut state, &mut out);
        let _ = out.flush();
    }

    /// Prints a question and leaves the cursor after it; call
    /// [`Out::answered`] once the answer is read.
    pub fn ask(&self, question: &str) {
        let mut state = self.lock();
        let mut out = std::io::stdout().lock();
        Self::break_line(&mut state, &mut out);
        let _ = write!(out, "{question}");
        state.mid_line = true;
        let _ = out.flush();
    }

    /// The answer to [`Out::ask`] was read. `echo`: the answer, to print when
    /// the terminal did not show it (input not typed on a terminal).
    pub fn answered(&self, echo: Option<&str>) {
        let mut state = self.lock();
        if let Some(echo) = echo {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{echo}");
            let _ = out.flush();
        }
        state.mid_line = false;
    }
}
