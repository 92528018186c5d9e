//! Sandboxed `fs/read_text_file` and `fs/write_text_file` handlers.
//!
//! A [`SandboxedFs`] maps each session id to its *roots*: the session's
//! working directory, and the `additionalDirectories` the client granted it
//! (`session/new`, `load`, `resume`), each canonicalised once when the host
//! registers the session with [`SandboxedFs::add_session`] or
//! [`SandboxedFs::add_session_roots`]. Every request is resolved against the
//! real file system (symlinks followed, `..` applied the way the kernel
//! applies it) and refused unless the resolved path lies inside one of
//! them (below, "the root" is the one it lies in). This holds
//! for files that do not exist yet too: the deepest existing ancestor is
//! canonicalised and the missing components are appended, so a new file
//! below a symlink that points outside the root is refused, and so is a
//! dangling symlink whose target lies outside.
//!
//! # Contract
//!
//! * **Threads.** `SandboxedFs` is `Send + Sync`; share it behind an `Arc`
//!   and call it from any task. The request handlers do their file I/O on
//!   Tokio's blocking pool ([`tokio::task::spawn_blocking`]), never on the
//!   async worker thread, so they must be awaited inside a Tokio runtime.
//!   [`SandboxedFs::add_session`] is synchronous and performs one
//!   `canonicalize` call on the caller's thread.
//! * **Ownership.** The host owns the session table: it registers a session
//!   when it is created or loaded and removes it when it ends. Requests for
//!   an unregistered session are refused. Handlers borrow `&self` only; a
//!   request cancelled by dropping its future may still finish its blocking
//!   part (a write may still land), as with any `spawn_blocking` work.
//! * **Scope.** The sandbox confines paths chosen by the *peer*. It is not a
//!   defence against a local process that swaps directories for symlinks
//!   while a request runs; the final file is opened with `O_NOFOLLOW` and new
//!   parent directories are re-checked after creation, which narrows that
//!   window but does not close it.
//!
//! # Errors (all [`RpcError`], sent to the peer as they are)
//!
//! | Situation | Code | `data` |
//! |---|---|---|
//! | session not registered | `-32002` | `{sessionId}` |
//! | `path` not absolute | `-32602` | `{path}` |
//! | resolved path outside every root | `-32602` | `{path, root}` (the working directory), and `additionalRoots` when there are some |
//! | `line` is `0` | `-32602` | `{path, line}` |
//! | file (or a parent directory, when reading) missing | `-32002` | `{path}` |
//! | not a regular file (directory, FIFO, device, ...) | `-32602` | `{path}` |
//! | selected text is not valid UTF-8 | `-32602` | `{path, byteOffset}` |
//! | selected text larger than the read cap | `-32602` | `{path, maxBytes}` |
//! | path malformed for the OS (NUL byte, too long, symlink loop) | `-32602` | `{path, error}` |
//! | any other I/O failure (permissions, disk full, ...) | `-32603` | `{path, error}` |
//!
//! A non-UTF-8 file is reported as `-32602` (Invalid params) rather than
//! `-32603`: the request asked for *text* from a file that is not text, which
//! is a problem with the parameters, not with the client. `byteOffset` is the
//! offset in the file of the first invalid byte.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::json;

use crate::error::{RpcError, codes};
use crate::v1;

/// The largest text [`SandboxedFs::read_text_file`] returns by default
/// (16 MiB). Larger selections are refused so that one read cannot exhaust
/// memory or exceed the peer's frame limit; the peer can read in parts with
/// `line` and `limit`. Change it with [`SandboxedFs::with_max_read_bytes`].
pub const DEFAULT_MAX_READ_BYTES: usize = 16 * 1024 * 1024;

/// How many symlinks one path resolution may follow (as Linux's `MAXSYMLINKS`).
const MAX_SYMLINK_HOPS: usize = 40;

/// A session's roots, canonical: its working directory first, then the
/// additional directories.
#[derive(Debug)]
struct Roots(Vec<PathBuf>);

impl Roots {
    /// The root `resolved` (canonical) lies in, if any.
    fn containing(&self, resolved: &Path) -> Option<&Path> {
        self.0
            .iter()
            .map(PathBuf::as_path)
            .find(|root| resolved.starts_with(root))
    }
}

/// `fs/read_text_file` and `fs/write_text_file`, confined to each session's
/// working directory and additional directories. See the [module documentation](self) for the contract.
#[derive(Debug)]
pub struct SandboxedFs {
    roots: Mutex<HashMap<String, Arc<Roots>>>,
    max_read_bytes: usize,
}

impl Default for SandboxedFs {
    fn default() -> Self {
        Self::new()
    }
}

impl SandboxedFs {
    /// An empty sandbox: no session is registered, reads are capped at
    /// [`DEFAULT_MAX_READ_BYTES`].
    pub fn new() -> Self {
        Self {
            roots: Mutex::new(HashMap::new()),
            max_read_bytes: DEFAULT_MAX_READ_BYTES,
        }
    }

    /// Sets the largest text one read may return, in bytes.
    #[must_use]
    pub fn with_max_read_bytes(mut self, max: usize) -> Self {
        self.max_read_bytes = max;
        self
    }

    /// Registers (or re-registers) `session_id` with `cwd` as its root.
    ///
    /// `cwd` must be absolute and name an existing directory; it is
    /// canonicalised now, so a later change to a symlink on the way to it
    /// does not move the root.
    ///
    /// Errors: `-32602` with `data: {cwd}` (and `error` for an OS error) when
    /// `cwd` is relative, missing or not a directory.
    pub fn add_session(&self, session_id: &str, cwd: &Path) -> Result<(), RpcError> {
        self.add_session_roots(session_id, cwd, &[])
    }

    /// [`SandboxedFs::add_session`] with the session's additional
    /// directories (the client's `additionalDirectories`), also roots. One
    /// that is not absolute or not an existing directory is left out (the
    /// session still opens: the agent's requests inside it are refused).
    pub fn add_session_roots(
        &self,
        session_id: &str,
        cwd: &Path,
        additional: &[PathBuf],
    ) -> Result<(), RpcError> {
        let bad_cwd = |message: &str, error: Option<io::Error>| {
            let mut data = json!({ "cwd": cwd.to_string_lossy() });
            if let Some(e) = error {
                data["error"] = json!(e.to_string());
            }
            RpcError::new(codes::INVALID_PARAMS, message).with_data(data)
        };
        if !cwd.is_absolute() {
            return Err(bad_cwd("cwd must be an absolute path", None));
        }
        let root = std::fs::canonicalize(cwd)
            .map_err(|e| bad_cwd("cwd is not an existing directory", Some(e)))?;
        if !root.is_dir() {
            return Err(bad_cwd("cwd is not a directory", None));
        }
        let mut roots = vec![root];
        for dir in additional.iter().filter(|d| d.is_absolute()) {
            if let Ok(dir) = std::fs::canonicalize(dir)
                && dir.is_dir()
                && !roots.contains(&dir)
            {
                roots.push(dir);
            }
        }
        lock(&self.roots).insert(session_id.to_owned(), Arc::new(Roots(roots)));
        Ok(())
    }

    /// Forgets `session_id`; later requests for it fail with `-32002`.
    /// Unknown ids are ignored.
    pub fn remove_session(&self, session_id: &str) {
        lock(&self.roots).remove(session_id);
    }

    /// The canonical root registered for `session_id` (its working
    /// directory), if any.
    pub fn root(&self, session_id: &str) -> Option<PathBuf> {
        lock(&self.roots)
            .get(session_id)
            .and_then(|r| r.0.first().cloned())
    }

    /// Every canonical root of `session_id`: its working directory, then its
    /// additional directories (empty for an unknown session).
    pub fn roots(&self, session_id: &str) -> Vec<PathBuf> {
        lock(&self.roots)
            .get(session_id)
            .map(|r| r.0.clone())
            .unwrap_or_default()
    }

    /// Handles `fs/read_text_file`.
    ///
    /// Returns the text from line `line` (1-based, default 1) on, at most
    /// `limit` lines (default: to the end of the file). Line endings are
    /// kept as they are in the file; a `line` past the end gives an empty
    /// text. Errors: see the [module documentation](self).
    pub async fn read_text_file(
        &self,
        req: v1::ReadTextFileRequest,
    ) -> Result<v1::ReadTextFileResponse, RpcError> {
        let root = self.session_root(&req.session_id)?;
        check_absolute(&req.path)?;
        if req.line == Some(0) {
            return Err(RpcError::new(
                codes::INVALID_PARAMS,
                "line is 1-based and must be at least 1",
            )
            .with_data(json!({ "path": req.path.to_string_lossy(), "line": 0 })));
        }
        let max = self.max_read_bytes;
        let content =
            blocking(move || read_blocking(&root, &req.path, req.line, req.limit, max)).await?;
        Ok(v1::ReadTextFileResponse::new(content))
    }

    /// Handles `fs/write_text_file`.
    ///
    /// Creates the file (and any missing parent directories inside the root)
    /// or truncates and overwrites an existing one. The write is not atomic:
    /// the file keeps its inode, permissions and hard links. An existing
    /// symlink inside the root that points inside the root is followed.
    /// Errors: see the [module documentation](self).
    pub async fn write_text_file(
        &self,
        req: v1::WriteTextFileRequest,
    ) -> Result<v1::WriteTextFileResponse, RpcError> {
        let root = self.session_root(&req.session_id)?;
        check_absolute(&req.path)?;
        blocking(move || write_blocking(&root, &req.path, req.content.as_bytes())).await?;
        Ok(v1::WriteTextFileResponse::new())
    }

    fn session_root(&self, session_id: &v1::SessionId) -> Result<Arc<Roots>, RpcError> {
        lock(&self.roots)
            .get(&*session_id.0)
            .cloned()
            .ok_or_else(|| {
                RpcError::new(codes::RESOURCE_NOT_FOUND, "unknown session")
                    .with_data(json!({ "sessionId": &*session_id.0 }))
            })
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `f` on the blocking pool; a panic or a runtime shutting down
/// becomes `-32603`.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, RpcError> + Send + 'static,
) -> Result<T, RpcError> {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| Err(RpcError::internal_error(format!("file task failed: {e}"))))
}

fn path_data(path: &Path) -> serde_json::Value {
    json!({ "path": path.to_string_lossy() })
}

fn check_absolute(path: &Path) -> Result<(), RpcError> {
    if path.is_absolute() {
        Ok(())
    } else {
        Err(
            RpcError::new(codes::INVALID_PARAMS, "path must be absolute")
                .with_data(path_data(path)),
        )
    }
}

fn not_regular(path: &Path) -> RpcError {
    RpcError::new(codes::INVALID_PARAMS, "path is not a regular file").with_data(path_data(path))
}

/// Maps an I/O error on `path` (the path the peer sent) to the wire error.
fn io_error(path: &Path, e: &io::Error) -> RpcError {
    let data = json!({ "path": path.to_string_lossy(), "error": e.to_string() });
    let malformed = matches!(e.kind(), io::ErrorKind::InvalidInput)
        || matches!(
            e.raw_os_error(),
            Some(libc::ELOOP | libc::ENAMETOOLONG | libc::EISDIR)
        );
    match e.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory => {
            RpcError::new(codes::RESOURCE_NOT_FOUND, "file not found").with_data(path_data(path))
        }
        _ if malformed => {
            RpcError::new(codes::INVALID_PARAMS, format!("invalid path: {e}")).with_data(data)
        }
        _ => {
            RpcError::new(codes::INTERNAL_ERROR, format!("file system error: {e}")).with_data(data)
        }
    }
}

/// Resolves `path` (absolute) and checks that it lies inside one of
/// `roots`. Returns the resolved path and the root it lies in.
fn confine<'r>(roots: &'r Roots, path: &Path) -> Result<(PathBuf, &'r Path), RpcError> {
    let mut hops = 0;
    let resolved = resolve(path, &mut hops).map_err(|e| io_error(path, &e))?;
    match roots.containing(&resolved) {
        Some(root) => Ok((resolved, root)),
        None => Err(outside(roots, path)),
    }
}

fn outside(roots: &Roots, path: &Path) -> RpcError {
    let mut data = json!({ "path": path.to_string_lossy() });
    if let Some((cwd, additional)) = roots.0.split_first() {
        data["root"] = json!(cwd.to_string_lossy());
        if !additional.is_empty() {
            data["additionalRoots"] = additional
                .iter()
                .map(|r| json!(r.to_string_lossy()))
                .collect();
        }
    }
    let message = if roots.0.len() > 1 {
        "path is outside the session's working directory and additional directories"
    } else {
        "path is outside the session's working directory"
    };
    RpcError::new(codes::INVALID_PARAMS, message).with_data(data)
}

/// Resolves an absolute path the way the kernel would, also when its tail
/// does not exist yet: the deepest existing ancestor is canonicalised
/// (symlinks followed, `..` applied physically), dangling symlinks are
/// followed to their targets, and the missing components are appended (a
/// `..` after a missing component removes it lexically, which is exact
/// because the path built so far contains no symlinks).
fn resolve(path: &Path, hops: &mut usize) -> io::Result<PathBuf> {
    match std::fs::canonicalize(path) {
        Ok(p) => return Ok(p),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) => {}
        Err(e) => return Err(e),
    }
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && meta.file_type().is_symlink()
    {
        // A dangling symlink: resolve its target instead.
        *hops += 1;
        if *hops > MAX_SYMLINK_HOPS {
            return Err(io::Error::from_raw_os_error(libc::ELOOP));
        }
        let target = std::fs::read_link(path)?;
        let base = path.parent().unwrap_or(Path::new("/"));
        return resolve(&base.join(target), hops);
    }
    let mut components = path.components();
    match components.next_back() {
        Some(Component::Normal(name)) => Ok(resolve(components.as_path(), hops)?.join(name)),
        Some(Component::ParentDir) => {
            let parent = resolve(components.as_path(), hops)?;
            Ok(parent.parent().map(Path::to_path_buf).unwrap_or(parent))
        }
        Some(Component::CurDir) => resolve(components.as_path(), hops),
        // The root always canonicalises; reaching this means it could not
        // be found, which we report as such.
        Some(Component::RootDir | Component::Prefix(_)) | None => {
            Err(io::Error::from(io::ErrorKind::NotFound))
        }
    }
}

fn read_blocking(
    roots: &Roots,
    path: &Path,
    line: Option<u32>,
    limit: Option<u32>,
    max_bytes: usize,
) -> Result<String, RpcError> {
    let (resolved, _) = confine(roots, path)?;
    // O_NONBLOCK so that opening a FIFO does not hang; it is refused below.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&resolved)
        .map_err(|e| io_error(path, &e))?;
    let meta = file.metadata().map_err(|e| io_error(path, &e))?;
    if !meta.is_file() {
        return Err(not_regular(path));
    }
    let (bytes, skipped) =
        select_lines(BufReader::new(file), line, limit, max_bytes).map_err(|e| match e {
            SelectError::Io(e) => io_error(path, &e),
            SelectError::TooLarge => RpcError::new(
                codes::INVALID_PARAMS,
                format!(
                    "the selected text is larger than {max_bytes} bytes; read it in parts with `line` and `limit`"
                ),
            )
            .with_data(json!({ "path": path.to_string_lossy(), "maxBytes": max_bytes })),
        })?;
    String::from_utf8(bytes).map_err(|e| {
        let offset = skipped.saturating_add(e.utf8_error().valid_up_to() as u64);
        RpcError::new(codes::INVALID_PARAMS, "file is not valid UTF-8 text")
            .with_data(json!({ "path": path.to_string_lossy(), "byteOffset": offset }))
    })
}

enum SelectError {
    Io(io::Error),
    TooLarge,
}

/// Skips `line - 1` lines, then collects at most `limit` lines (at most
/// `max_bytes` bytes). Returns the bytes and the number of bytes skipped.
/// Memory use is bounded by `max_bytes` plus the reader's buffer, however
/// long the skipped lines are.
fn select_lines(
    mut reader: impl BufRead,
    line: Option<u32>,
    limit: Option<u32>,
    max_bytes: usize,
) -> Result<(Vec<u8>, u64), SelectError> {
    let mut skipped: u64 = 0;
    for _ in 1..line.unwrap_or(1) {
        let n = reader.skip_until(b'\n').map_err(SelectError::Io)?;
        if n == 0 {
            return Ok((Vec::new(), skipped));
        }
        skipped = skipped.saturating_add(n as u64);
    }
    let mut out = Vec::new();
    let mut lines: u32 = 0;
    while limit.is_none_or(|l| lines < l) {
        // Read at most one byte more than allowed, to detect the overflow.
        let budget = (max_bytes.saturating_add(1).saturating_sub(out.len())) as u64;
        let n = (&mut reader)
            .take(budget)
            .read_until(b'\n', &mut out)
            .map_err(SelectError::Io)?;
        if out.len() > max_bytes {
            return Err(SelectError::TooLarge);
        }
        if n == 0 {
            break;
        }
        lines = lines.saturating_add(1);
    }
    Ok((out, skipped))
}

fn write_blocking(roots: &Roots, path: &Path, content: &[u8]) -> Result<(), RpcError> {
    let (resolved, root) = confine(roots, path)?;
    let Some(parent) = resolved.parent().filter(|p| p.starts_with(root)) else {
        // `resolved` is the root itself (or `/`): a directory.
        return Err(not_regular(path));
    };
    if !parent.is_dir() {
        std::fs::create_dir_all(parent).map_err(|e| match e.kind() {
            io::ErrorKind::NotADirectory | io::ErrorKind::AlreadyExists => RpcError::new(
                codes::INVALID_PARAMS,
                "a parent of the path exists and is not a directory",
            )
            .with_data(path_data(path)),
            _ => io_error(path, &e),
        })?;
        // Re-check: what was created must still be inside the root.
        let created = std::fs::canonicalize(parent).map_err(|e| io_error(path, &e))?;
        if !created.starts_with(root) {
            return Err(outside(roots, path));
        }
    }
    if let Ok(meta) = std::fs::symlink_metadata(&resolved)
        && !meta.is_file()
    {
        return Err(not_regular(path));
    }
    let mut file: File = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&resolved)
        .map_err(|e| io_error(path, &e))?;
    file.write_all(content)
        .and_then(|()| file.flush())
        .map_err(|e| io_error(path, &e))
}

#[cfg(test)]
mod tests;
