//! Client services run by the core on the host's behalf (client role),
//! each enabled by setting it in [`ClientServices`]:
//!
//! * `sessions`: every `session/update` is folded into the
//!   [`SessionStore`] before the host's handler sees it; a cancelled turn
//!   marks its unfinished tool calls `cancelled`;
//! * `fs`: `fs/read_text_file` and `fs/write_text_file` are answered by the
//!   [`SandboxedFs`], rooted at each session's `cwd`;
//! * `terminals`: `terminal/*` are answered by the [`TerminalManager`].
//!
//! Sessions are registered with the services when `session/new`, `load` or
//! `resume` succeed and unregistered when they are closed or deleted. An
//! enabled `fs` or `terminals` service is advertised in `initialize`
//! automatically; the host's handler never sees the calls they answer.

use std::path::Path;
use std::sync::Arc;

use serde::Serialize;
use serde_json::value::RawValue;

use crate::error::RpcError;
use crate::rpc::{BoxFuture, IncomingRequest};
use crate::services::fs::SandboxedFs;
use crate::services::session_model::SessionStore;
use crate::services::terminal::TerminalManager;

/// Which client services the core runs (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct ClientServices {
    /// Folds `session/update` into snapshots.
    pub sessions: Option<Arc<SessionStore>>,
    /// Answers `fs/*` inside each session's cwd.
    pub fs: Option<Arc<SandboxedFs>>,
    /// Answers `terminal/*` with real processes.
    pub terminals: Option<Arc<TerminalManager>>,
}

impl ClientServices {
    /// All three services, freshly made.
    pub fn all() -> Self {
        Self {
            sessions: Some(Arc::new(SessionStore::new())),
            fs: Some(Arc::new(SandboxedFs::new())),
            terminals: Some(Arc::new(TerminalManager::new())),
        }
    }

    /// Whether any service is enabled.
    pub fn any(&self) -> bool {
        self.sessions.is_some() || self.fs.is_some() || self.terminals.is_some()
    }

    /// Adds what the enabled services need to `clientCapabilities`.
    pub(crate) fn advertise(&self, caps: &mut serde_json::Value) {
        let Some(obj) = caps.as_object_mut() else {
            return;
        };
        if self.fs.is_some() {
            let fs = obj.entry("fs").or_insert_with(|| serde_json::json!({}));
            if let Some(fs) = fs.as_object_mut() {
                fs.insert("readTextFile".into(), true.into());
                fs.insert("writeTextFile".into(), true.into());
            }
        }
        if self.terminals.is_some() {
            obj.insert("terminal".into(), true.into());
        }
    }

    /// A session opened with `cwd` and the client's `additionalDirectories`
    /// (roots of the fs service too; terminals may already run in any
    /// existing directory).
    pub(crate) fn opened(&self, session_id: &str, cwd: Option<&Path>, additional: &[String]) {
        let Some(cwd) = cwd else { return };
        // A cwd the services cannot use (not a directory) only disables
        // them for that session: their calls then answer -32002.
        if let Some(fs) = &self.fs {
            let additional: Vec<std::path::PathBuf> = additional.iter().map(Into::into).collect();
            let _ = fs.add_session_roots(session_id, cwd, &additional);
        }
        if let Some(t) = &self.terminals {
            let _ = t.add_session(session_id, cwd);
        }
    }

    pub(crate) fn closed(&self, session_id: &str) {
        if let Some(fs) = &self.fs {
            fs.remove_session(session_id);
        }
        if let Some(t) = &self.terminals {
            t.release_session(session_id);
            t.remove_session(session_id);
        }
        if let Some(s) = &self.sessions {
            s.remove(session_id);
        }
    }

    pub(crate) fn turn_cancelled(&self, session_id: &str) {
        if let Some(s) = &self.sessions {
            s.mark_turn_cancelled(session_id);
        }
    }

    /// The service's answer to `request`, if a service handles it.
    pub(crate) fn route(
        &self,
        request: &IncomingRequest,
    ) -> Option<BoxFuture<'static, Result<Box<RawValue>, RpcError>>> {
        macro_rules! call {
            ($svc:expr, $method:ident) => {{
                let svc = Arc::clone($svc);
                let args = match request.params_as() {
                    Ok(args) => args,
                    Err(e) => return Some(Box::pin(async move { Err(e) })),
                };
                Some(Box::pin(async move { raw(svc.$method(args).await) }))
            }};
        }
        match (request.method.as_str(), &self.fs, &self.terminals) {
            ("fs/read_text_file", Some(fs), _) => call!(fs, read_text_file),
            ("fs/write_text_file", Some(fs), _) => call!(fs, write_text_file),
            ("terminal/create", _, Some(t)) => call!(t, create),
            ("terminal/output", _, Some(t)) => call!(t, output),
            ("terminal/wait_for_exit", _, Some(t)) => call!(t, wait_for_exit),
            ("terminal/kill", _, Some(t)) => call!(t, kill),
            ("terminal/release", _, Some(t)) => call!(t, release),
            _ => None,
        }
    }
}

fn raw<T: Serialize>(result: Result<T, RpcError>) -> Result<Box<RawValue>, RpcError> {
    result
        .and_then(|v| crate::json::to_raw(&v).map_err(|e| RpcError::internal_error(e.to_string())))
}
