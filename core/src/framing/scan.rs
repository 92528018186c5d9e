//! A constant-memory scanner that reads the top-level `id` and `method` of a
//! JSON object fed to it in pieces. Used on frames over the size limit, which
//! are discarded without being buffered, so that a request among them can
//! still be answered with an error carrying its id.

/// Longest `id` value kept (longer ones are given up on).
const MAX_ID_LEN: usize = 256;
/// Longest key remembered while scanning (only `id`/`method` matter).
const MAX_KEY_LEN: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the opening `{`.
    Start,
    /// Inside the object, in structure (not in a string).
    Structure,
    /// Inside a string; `escape` is set after a backslash.
    InString { escape: bool },
    /// The frame was not an object: nothing to find.
    NotObject,
}

/// See the module docs. Feed bytes with [`IdScanner::feed`], then read
/// [`IdScanner::id`] and [`IdScanner::has_method`].
#[derive(Debug)]
pub struct IdScanner {
    state: State,
    depth: usize,
    /// Whether the string being read is a key at depth 1.
    string_is_key: bool,
    /// After `:` at depth 1, the key whose value is being read.
    value_of: Option<Key>,
    key: Vec<u8>,
    key_overflow: bool,
    expecting_key: bool,
    id_text: Vec<u8>,
    id_done: bool,
    id_overflow: bool,
    has_method: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Id,
    Method,
    Other,
}

impl Default for IdScanner {
    fn default() -> Self {
        Self::new()
    }
}

impl IdScanner {
    /// A scanner at the start of a frame.
    pub fn new() -> Self {
        Self {
            state: State::Start,
            depth: 0,
            string_is_key: false,
            value_of: None,
            key: Vec::with_capacity(MAX_KEY_LEN),
            key_overflow: false,
            expecting_key: false,
            id_text: Vec::new(),
            id_done: false,
            id_overflow: false,
            has_method: false,
        }
    }

    /// Feeds the next piece of the frame.
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.step(b);
        }
    }

    fn capturing_id(&self) -> bool {
        self.depth == 1 && self.value_of == Some(Key::Id) && !self.id_done
    }

    fn push_id(&mut self, b: u8) {
        if self.id_text.len() < MAX_ID_LEN {
            self.id_text.push(b);
        } else {
            self.id_overflow = true;
        }
    }

    fn end_value(&mut self) {
        if self.value_of == Some(Key::Id) && !self.id_text.is_empty() {
            self.id_done = true;
        }
        self.value_of = None;
    }

    fn step(&mut self, b: u8) {
        match self.state {
            State::NotObject => {}
            State::Start => match b {
                b'{' => {
                    self.state = State::Structure;
                    self.depth = 1;
                    self.expecting_key = true;
                }
                b' ' | b'\t' | b'\r' | b'\n' => {}
                _ => self.state = State::NotObject,
            },
            State::InString { escape } => {
                if self.string_is_key {
                    if escape {
                        self.state = State::InString { escape: false };
                        self.key_overflow = true; // escaped keys are never id/method
                    } else if b == b'\\' {
                        self.state = State::InString { escape: true };
                    } else if b == b'"' {
                        self.state = State::Structure;
                    } else if self.key.len() < MAX_KEY_LEN {
                        self.key.push(b);
                    } else {
                        self.key_overflow = true;
                    }
                    return;
                }
                if self.capturing_id() {
                    self.push_id(b);
                }
                if escape {
                    self.state = State::InString { escape: false };
                } else if b == b'\\' {
                    self.state = State::InString { escape: true };
                } else if b == b'"' {
                    self.state = State::Structure;
                    if self.depth == 1 {
                        self.end_value();
                    }
                }
            }
            State::Structure => self.structure(b),
        }
    }

    fn structure(&mut self, b: u8) {
        match b {
            b'"' => {
                self.string_is_key = self.depth == 1 && self.expecting_key;
                if self.string_is_key {
                    self.key.clear();
                    self.key_overflow = false;
                } else if self.capturing_id() {
                    self.push_id(b);
                }
                self.state = State::InString { escape: false };
            }
            b':' if self.depth == 1 => {
                self.expecting_key = false;
                let key = if self.key_overflow {
                    Key::Other
                } else {
                    match self.key.as_slice() {
                        b"id" => Key::Id,
                        b"method" => Key::Method,
                        _ => Key::Other,
                    }
                };
                if key == Key::Method {
                    self.has_method = true;
                }
                if key == Key::Id {
                    self.id_text.clear();
                }
                self.value_of = Some(key);
            }
            b',' if self.depth == 1 => {
                self.end_value();
                self.expecting_key = true;
            }
            b'{' | b'[' => {
                if self.depth == 1 && self.value_of == Some(Key::Id) {
                    // An object or array id is invalid: give up on it.
                    self.id_overflow = true;
                }
                self.depth += 1;
            }
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                if self.depth == 0 {
                    self.end_value();
                    self.state = State::NotObject; // done
                }
            }
            b' ' | b'\t' | b'\r' | b'\n' => {}
            _ => {
                if self.capturing_id() {
                    self.push_id(b);
                }
            }
        }
    }

    /// The raw JSON text of the top-level `id`, if one was seen in full.
    pub fn id(&self) -> Option<&str> {
        if self.id_overflow || self.id_text.is_empty() {
            return None;
        }
        std::str::from_utf8(&self.id_text).ok()
    }

    /// Whether a top-level `method` key was seen (so the frame was a request
    /// or a notification, not a response).
    pub fn has_method(&self) -> bool {
        self.has_method
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_in_pieces(text: &str, piece: usize) -> (Option<String>, bool) {
        let mut s = IdScanner::new();
        for chunk in text.as_bytes().chunks(piece) {
            s.feed(chunk);
        }
        (s.id().map(str::to_owned), s.has_method())
    }

    #[test]
    fn finds_id_before_or_after_large_params() {
        let big = "x".repeat(10_000);
        let before =
            format!(r#"{{"jsonrpc":"2.0","id":42,"method":"m","params":{{"t":"{big}"}}}}"#);
        let after = format!(r#"{{"method":"m","params":{{"id":1,"t":"{big}\"}}"}},"id":"abc"}}"#);
        for piece in [1, 7, 4096] {
            assert_eq!(scan_in_pieces(&before, piece), (Some("42".into()), true));
            assert_eq!(
                scan_in_pieces(&after, piece),
                (Some("\"abc\"".into()), true)
            );
        }
    }

    #[test]
    fn nested_ids_do_not_count() {
        let text = r#"{"method":"m","params":{"id":5,"nested":{"id":6}}}"#;
        assert_eq!(scan_in_pieces(text, 3), (None, true));
    }

    #[test]
    fn response_without_method() {
        let text = r#"{"jsonrpc":"2.0","id":9,"result":{"data":"..."}}"#;
        assert_eq!(scan_in_pieces(text, 2), (Some("9".into()), false));
    }

    #[test]
    fn strings_with_escapes_and_keys_that_look_alike() {
        let text = r#"{"idx":1,"m\"id":2,"id" : "a\"b" , "method":"x"}"#;
        assert_eq!(scan_in_pieces(text, 1), (Some(r#""a\"b""#.into()), true));
    }

    #[test]
    fn non_objects_yield_nothing() {
        assert_eq!(scan_in_pieces(r#"[{"id":1}]"#, 1), (None, false));
        assert_eq!(scan_in_pieces("garbage", 1), (None, false));
    }
}
