//! Shared code of the libacp examples.
//!
//! * [`script`]: what the scripted `demo-agent` does (file name, content,
//!   terminal command), shared with the tests that check it;
//! * [`style`]: plain ANSI styling (only on a TTY) and [`style::Out`], the
//!   one writer every line of `demo-client` goes through, so streamed text,
//!   logs and prompts never tear each other's lines;
//! * [`diff`]: a small line diff, to show edits as `-`/`+` lines;
//! * [`form`]: filling an elicitation form from a terminal;
//! * [`media`]: base64 and MIME types for image and audio attachments;
//! * [`render`]: turns `session/update` notifications (folded into the
//!   core's [`libacp_core::services::session_model::SessionStore`]) into
//!   readable terminal lines.

pub mod diff;
pub mod form;
pub mod media;
pub mod render;
pub mod script;
pub mod style;
