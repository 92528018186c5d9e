//! [`TempDir`]: a fresh directory for one test of the services, removed
//! when dropped (tests only).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// A unique directory under the system temp dir, removed on drop. Its path
/// is canonical, so that assertions compare like with like even when the
/// temp dir itself sits behind a symlink (macOS /tmp).
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    /// A new empty directory named after `tag`, the process and a counter.
    pub(crate) fn new(tag: &str) -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "libacp-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a temp dir");
        Self(std::fs::canonicalize(&dir).expect("canonicalize the temp dir"))
    }

    /// Its path.
    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
