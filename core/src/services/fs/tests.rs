//! The tests of `services/fs.rs` (a sibling file, as `framing/tests.rs`).

use super::*;
use crate::services::test_dir::TempDir;
use std::os::unix::fs::symlink;

/// A sandbox with session "s" rooted at `<tmp>/root`, next to `<tmp>/outside`.
struct Fixture {
    fs: SandboxedFs,
    root: PathBuf,
    outside: PathBuf,
    _tmp: TempDir,
}

fn fixture(tag: &str) -> Fixture {
    let tmp = TempDir::new(tag);
    let root = tmp.path().join("root");
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&root).unwrap();
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "secret\n").unwrap();
    let fs = SandboxedFs::new();
    fs.add_session("s", &root).unwrap();
    Fixture {
        fs,
        root,
        outside,
        _tmp: tmp,
    }
}

impl Fixture {
    async fn read(&self, path: impl Into<PathBuf>) -> Result<String, RpcError> {
        self.fs
            .read_text_file(v1::ReadTextFileRequest::new("s", path))
            .await
            .map(|r| r.content)
    }
    async fn read_lines(
        &self,
        path: impl Into<PathBuf>,
        line: Option<u32>,
        limit: Option<u32>,
    ) -> Result<String, RpcError> {
        self.fs
            .read_text_file(
                v1::ReadTextFileRequest::new("s", path)
                    .line(line)
                    .limit(limit),
            )
            .await
            .map(|r| r.content)
    }
    async fn write(&self, path: impl Into<PathBuf>, content: &str) -> Result<(), RpcError> {
        self.fs
            .write_text_file(v1::WriteTextFileRequest::new("s", path, content))
            .await
            .map(|_| ())
    }
}

fn assert_outside(err: &RpcError) {
    assert_eq!(err.code, codes::INVALID_PARAMS, "{err}");
    assert!(
        err.message
            .contains("outside the session's working directory"),
        "{err}"
    );
    let data = err.data.as_ref().unwrap();
    assert!(
        data.get("path").is_some() && data.get("root").is_some(),
        "{err}"
    );
}

#[tokio::test]
async fn reads_a_file_inside_the_root() {
    let f = fixture("read");
    std::fs::write(f.root.join("a.txt"), "one\ntwo\n").unwrap();
    assert_eq!(f.read(f.root.join("a.txt")).await.unwrap(), "one\ntwo\n");
}

#[tokio::test]
async fn relative_path_is_invalid_params_with_the_path() {
    let f = fixture("relative");
    std::fs::write(f.root.join("a.txt"), "x").unwrap();
    for err in [
        f.read("a.txt").await.unwrap_err(),
        f.write("a.txt", "y").await.unwrap_err(),
    ] {
        assert_eq!(err.code, codes::INVALID_PARAMS);
        assert_eq!(err.data, Some(json!({ "path": "a.txt" })));
    }
    assert_eq!(std::fs::read_to_string(f.root.join("a.txt")).unwrap(), "x");
}

#[tokio::test]
async fn unknown_session_is_resource_not_found_with_the_session_id() {
    let f = fixture("nosession");
    let err =
        f.fs.read_text_file(v1::ReadTextFileRequest::new("nope", f.root.join("a.txt")))
            .await
            .unwrap_err();
    assert_eq!(err.code, codes::RESOURCE_NOT_FOUND);
    assert_eq!(err.data, Some(json!({ "sessionId": "nope" })));
    let err =
        f.fs.write_text_file(v1::WriteTextFileRequest::new(
            "nope",
            f.root.join("a.txt"),
            "x",
        ))
        .await
        .unwrap_err();
    assert_eq!(err.code, codes::RESOURCE_NOT_FOUND);
    assert!(!f.root.join("a.txt").exists());
}

#[tokio::test]
async fn removed_session_is_unknown() {
    let f = fixture("removed");
    std::fs::write(f.root.join("a.txt"), "x").unwrap();
    f.fs.remove_session("s");
    assert_eq!(
        f.read(f.root.join("a.txt")).await.unwrap_err().code,
        codes::RESOURCE_NOT_FOUND
    );
    assert!(f.fs.root("s").is_none());
}

#[test]
fn add_session_requires_an_absolute_existing_directory() {
    let tmp = TempDir::new("add");
    let fs = SandboxedFs::new();
    assert_eq!(
        fs.add_session("a", Path::new("rel")).unwrap_err().code,
        codes::INVALID_PARAMS
    );
    let missing = tmp.path().join("missing");
    assert_eq!(
        fs.add_session("a", &missing).unwrap_err().code,
        codes::INVALID_PARAMS
    );
    let file = tmp.path().join("file");
    std::fs::write(&file, "").unwrap();
    assert_eq!(
        fs.add_session("a", &file).unwrap_err().code,
        codes::INVALID_PARAMS
    );
    assert!(fs.root("a").is_none());
    fs.add_session("a", tmp.path()).unwrap();
    assert_eq!(fs.root("a").unwrap(), tmp.path());
}

#[tokio::test]
async fn root_is_canonicalised_when_registered_through_a_symlink() {
    let f = fixture("rootlink");
    let link = f.root.parent().unwrap().join("rootlink");
    symlink(&f.root, &link).unwrap();
    f.fs.add_session("s", &link).unwrap();
    std::fs::write(f.root.join("a.txt"), "x").unwrap();
    // Both spellings of the same file are inside.
    assert_eq!(f.read(link.join("a.txt")).await.unwrap(), "x");
    assert_eq!(f.read(f.root.join("a.txt")).await.unwrap(), "x");
}

#[tokio::test]
async fn dot_dot_escape_is_refused() {
    let f = fixture("dotdot");
    let escape = f.root.join("..").join("outside").join("secret.txt");
    assert_outside(&f.read(&escape).await.unwrap_err());
    assert_outside(&f.write(&escape, "pwned").await.unwrap_err());
    assert_eq!(
        std::fs::read_to_string(f.outside.join("secret.txt")).unwrap(),
        "secret\n"
    );
    // A new file reached through `..` is refused as well.
    let new = f.root.join("..").join("outside").join("new.txt");
    assert_outside(&f.write(&new, "x").await.unwrap_err());
    assert!(!f.outside.join("new.txt").exists());
    // Going above the root through a missing directory too.
    let deep = f
        .root
        .join("missing")
        .join("..")
        .join("..")
        .join("evil.txt");
    assert_outside(&f.write(&deep, "x").await.unwrap_err());
    assert!(!f.root.parent().unwrap().join("evil.txt").exists());
}

#[tokio::test]
async fn dot_dot_that_stays_inside_is_allowed() {
    let f = fixture("dotdot-in");
    std::fs::create_dir(f.root.join("sub")).unwrap();
    std::fs::write(f.root.join("a.txt"), "x").unwrap();
    assert_eq!(
        f.read(f.root.join("sub").join("..").join("a.txt"))
            .await
            .unwrap(),
        "x"
    );
    f.write(f.root.join("new").join("..").join("b.txt"), "y")
        .await
        .unwrap();
    assert_eq!(std::fs::read_to_string(f.root.join("b.txt")).unwrap(), "y");
}

#[tokio::test]
async fn sibling_with_the_root_as_name_prefix_is_outside() {
    let f = fixture("prefix");
    let sibling = PathBuf::from(format!("{}2", f.root.display()));
    std::fs::create_dir(&sibling).unwrap();
    std::fs::write(sibling.join("a.txt"), "x").unwrap();
    assert_outside(&f.read(sibling.join("a.txt")).await.unwrap_err());
}

#[tokio::test]
async fn symlink_to_a_file_outside_is_refused() {
    let f = fixture("symfile");
    symlink(f.outside.join("secret.txt"), f.root.join("link.txt")).unwrap();
    assert_outside(&f.read(f.root.join("link.txt")).await.unwrap_err());
    assert_outside(&f.write(f.root.join("link.txt"), "pwned").await.unwrap_err());
    assert_eq!(
        std::fs::read_to_string(f.outside.join("secret.txt")).unwrap(),
        "secret\n"
    );
}

#[tokio::test]
async fn new_file_below_a_symlinked_directory_outside_is_refused() {
    let f = fixture("symdir");
    symlink(&f.outside, f.root.join("out")).unwrap();
    assert_outside(
        &f.read(f.root.join("out").join("secret.txt"))
            .await
            .unwrap_err(),
    );
    let new = f.root.join("out").join("new.txt");
    assert_outside(&f.write(&new, "x").await.unwrap_err());
    assert!(!f.outside.join("new.txt").exists());
    // Also with missing directories below the symlink.
    let deep = f.root.join("out").join("a").join("b.txt");
    assert_outside(&f.write(&deep, "x").await.unwrap_err());
    assert!(!f.outside.join("a").exists());
}

#[tokio::test]
async fn dangling_symlink_pointing_outside_is_refused() {
    let f = fixture("dangling");
    symlink(f.outside.join("created.txt"), f.root.join("dangling")).unwrap();
    assert_outside(&f.write(f.root.join("dangling"), "x").await.unwrap_err());
    assert!(!f.outside.join("created.txt").exists());
    // A dangling symlink to a missing directory outside, used as a parent.
    symlink(f.outside.join("dir"), f.root.join("dirlink")).unwrap();
    let err = f
        .write(f.root.join("dirlink").join("x.txt"), "x")
        .await
        .unwrap_err();
    assert_outside(&err);
    assert!(!f.outside.join("dir").exists());
}

#[tokio::test]
async fn symlink_inside_the_root_is_followed() {
    let f = fixture("symin");
    std::fs::write(f.root.join("target.txt"), "old").unwrap();
    symlink("target.txt", f.root.join("link.txt")).unwrap();
    assert_eq!(f.read(f.root.join("link.txt")).await.unwrap(), "old");
    f.write(f.root.join("link.txt"), "new").await.unwrap();
    assert_eq!(
        std::fs::read_to_string(f.root.join("target.txt")).unwrap(),
        "new"
    );
    assert!(
        std::fs::symlink_metadata(f.root.join("link.txt"))
            .unwrap()
            .is_symlink()
    );
}

#[tokio::test]
async fn symlink_loop_is_an_error_not_a_hang() {
    let f = fixture("loop");
    symlink("b", f.root.join("a")).unwrap();
    symlink("a", f.root.join("b")).unwrap();
    let err = f.read(f.root.join("a")).await.unwrap_err();
    assert_eq!(err.code, codes::INVALID_PARAMS, "{err}");
    let err = f.write(f.root.join("a"), "x").await.unwrap_err();
    assert_eq!(err.code, codes::INVALID_PARAMS, "{err}");
}

#[tokio::test]
async fn line_and_limit_select_lines() {
    let f = fixture("lines");
    let p = f.root.join("l.txt");
    std::fs::write(&p, "1\n2\n3\n4\n5").unwrap();
    assert_eq!(
        f.read_lines(&p, Some(1), None).await.unwrap(),
        "1\n2\n3\n4\n5"
    );
    assert_eq!(f.read_lines(&p, Some(2), Some(2)).await.unwrap(), "2\n3\n");
    assert_eq!(f.read_lines(&p, None, Some(1)).await.unwrap(), "1\n");
    assert_eq!(f.read_lines(&p, Some(4), None).await.unwrap(), "4\n5");
    assert_eq!(f.read_lines(&p, Some(5), Some(10)).await.unwrap(), "5");
    assert_eq!(f.read_lines(&p, Some(6), None).await.unwrap(), "");
    assert_eq!(f.read_lines(&p, Some(100), Some(3)).await.unwrap(), "");
    assert_eq!(f.read_lines(&p, Some(2), Some(0)).await.unwrap(), "");
}

#[tokio::test]
async fn line_endings_are_kept() {
    let f = fixture("crlf");
    let p = f.root.join("crlf.txt");
    std::fs::write(&p, "a\r\nb\r\nc\r\n").unwrap();
    assert_eq!(f.read_lines(&p, Some(2), Some(1)).await.unwrap(), "b\r\n");
}

#[tokio::test]
async fn line_zero_is_invalid_params() {
    let f = fixture("line0");
    let p = f.root.join("l.txt");
    std::fs::write(&p, "1\n").unwrap();
    let err = f.read_lines(&p, Some(0), None).await.unwrap_err();
    assert_eq!(err.code, codes::INVALID_PARAMS);
    assert_eq!(err.data.unwrap()["line"], 0);
}

#[tokio::test]
async fn missing_file_is_resource_not_found_with_the_path() {
    let f = fixture("missing");
    let p = f.root.join("nope.txt");
    let err = f.read(&p).await.unwrap_err();
    assert_eq!(err.code, codes::RESOURCE_NOT_FOUND);
    assert_eq!(err.data, Some(json!({ "path": p.to_string_lossy() })));
    let err = f
        .read(f.root.join("nodir").join("nope.txt"))
        .await
        .unwrap_err();
    assert_eq!(err.code, codes::RESOURCE_NOT_FOUND);
}

#[tokio::test]
async fn missing_file_outside_is_reported_as_outside() {
    // No information about what exists outside the root leaks out.
    let f = fixture("missing-out");
    assert_outside(&f.read(f.outside.join("nope.txt")).await.unwrap_err());
    assert_outside(&f.read("/definitely/not/here.txt").await.unwrap_err());
}

#[tokio::test]
async fn non_utf8_file_is_invalid_params_with_the_offset() {
    let f = fixture("utf8");
    let p = f.root.join("bin");
    std::fs::write(&p, b"ok\nab\xffcd\n").unwrap();
    let err = f.read(&p).await.unwrap_err();
    assert_eq!(err.code, codes::INVALID_PARAMS);
    assert!(err.message.contains("UTF-8"), "{err}");
    assert_eq!(err.data.unwrap()["byteOffset"], 5);
    // Only the selected text must be valid.
    assert_eq!(f.read_lines(&p, Some(1), Some(1)).await.unwrap(), "ok\n");
    let err = f.read_lines(&p, Some(2), None).await.unwrap_err();
    assert_eq!(err.data.unwrap()["byteOffset"], 5);
}

#[tokio::test]
async fn directories_and_fifos_are_not_regular_files() {
    let f = fixture("notfile");
    std::fs::create_dir(f.root.join("dir")).unwrap();
    let err = f.read(f.root.join("dir")).await.unwrap_err();
    assert_eq!(err.code, codes::INVALID_PARAMS, "{err}");
    let err = f.write(f.root.join("dir"), "x").await.unwrap_err();
    assert_eq!(err.code, codes::INVALID_PARAMS, "{err}");
    let err = f.write(&f.root, "x").await.unwrap_err();
    assert_eq!(err.code, codes::INVALID_PARAMS, "{err}");
    let fifo = f.root.join("fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path for the call's duration.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let Ok(read) = tokio::time::timeout(std::time::Duration::from_secs(5), f.read(&fifo)).await
    else {
        // Unblock the stuck open(2) so that the runtime can shut down.
        let _ = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo);
        panic!("reading a FIFO hung");
    };
    let err = read.unwrap_err();
    assert_eq!(err.code, codes::INVALID_PARAMS, "{err}");
    let err = f.write(&fifo, "x").await.unwrap_err();
    assert_eq!(err.code, codes::INVALID_PARAMS, "{err}");
}

#[tokio::test]
async fn reads_larger_than_the_cap_are_refused() {
    let f = fixture("cap");
    let fs = SandboxedFs::new().with_max_read_bytes(8);
    fs.add_session("s", &f.root).unwrap();
    let p = f.root.join("big.txt");
    std::fs::write(&p, "12345678\nabc\n").unwrap();
    let read = |line: Option<u32>, limit: Option<u32>| {
        fs.read_text_file(
            v1::ReadTextFileRequest::new("s", &p)
                .line(line)
                .limit(limit),
        )
    };
    let err = read(None, None).await.unwrap_err();
    assert_eq!(err.code, codes::INVALID_PARAMS);
    assert_eq!(err.data.unwrap()["maxBytes"], 8);
    assert_eq!(read(Some(2), None).await.unwrap().content, "abc\n");
    // Exactly at the cap is fine.
    std::fs::write(&p, "1234567\n").unwrap();
    assert_eq!(read(None, None).await.unwrap().content, "1234567\n");
}

#[tokio::test]
async fn write_creates_and_overwrites() {
    let f = fixture("write");
    let p = f.root.join("w.txt");
    f.write(&p, "first").await.unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "first");
    f.write(&p, "2").await.unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "2");
    f.write(&p, "").await.unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "");
}

#[tokio::test]
async fn write_creates_missing_parent_directories_inside_the_root() {
    let f = fixture("mkdir");
    let p = f.root.join("a").join("b").join("c.txt");
    f.write(&p, "deep").await.unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "deep");
    assert_eq!(f.read(&p).await.unwrap(), "deep");
}

#[tokio::test]
async fn write_below_a_file_is_invalid_params() {
    let f = fixture("belowfile");
    std::fs::write(f.root.join("file"), "x").unwrap();
    let err = f
        .write(f.root.join("file").join("x.txt"), "x")
        .await
        .unwrap_err();
    assert_eq!(err.code, codes::INVALID_PARAMS, "{err}");
    assert_eq!(std::fs::read_to_string(f.root.join("file")).unwrap(), "x");
}

#[tokio::test]
async fn nul_byte_in_path_is_invalid_params() {
    let f = fixture("nul");
    let err = f.read(f.root.join("a\0b")).await.unwrap_err();
    assert_eq!(err.code, codes::INVALID_PARAMS, "{err}");
    let err = f.write(f.root.join("a\0b"), "x").await.unwrap_err();
    assert_eq!(err.code, codes::INVALID_PARAMS, "{err}");
}

#[tokio::test]
async fn sessions_are_isolated() {
    let f = fixture("iso");
    let other = f.root.parent().unwrap().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("o.txt"), "o").unwrap();
    f.fs.add_session("t", &other).unwrap();
    assert_outside(&f.read(other.join("o.txt")).await.unwrap_err());
    let r =
        f.fs.read_text_file(v1::ReadTextFileRequest::new("t", other.join("o.txt")))
            .await
            .unwrap();
    assert_eq!(r.content, "o");
}

#[test]
fn select_lines_memory_is_bounded_while_skipping() {
    // A 1 MiB first line is skipped without being collected.
    let mut data = vec![b'x'; 1 << 20];
    data.extend_from_slice(b"\nsecond\n");
    let Ok((bytes, skipped)) = select_lines(&data[..], Some(2), None, 16) else {
        panic!("select failed");
    };
    assert_eq!(bytes, b"second\n");
    assert_eq!(skipped, (1 << 20) + 1);
}

/// The client's `additionalDirectories` are roots too: reads and writes
/// inside one succeed (a symlink out of it is still refused), a path
/// outside all of them is refused naming them, and one that is not an
/// existing absolute directory is left out without failing the session.
#[tokio::test]
async fn additional_directories_are_roots_too() {
    let f = fixture("fs-additional");
    let extra = f.outside.parent().unwrap().join("extra");
    std::fs::create_dir(&extra).unwrap();
    std::fs::write(extra.join("notes.txt"), "in extra\n").unwrap();
    symlink(f.outside.join("secret.txt"), extra.join("link")).unwrap();
    let missing = f.outside.parent().unwrap().join("missing");
    f.fs.add_session_roots(
        "s",
        &f.root,
        &[extra.clone(), missing, PathBuf::from("relative")],
    )
    .unwrap();
    let extra = std::fs::canonicalize(&extra).unwrap();
    assert_eq!(
        f.fs.roots("s"),
        [std::fs::canonicalize(&f.root).unwrap(), extra.clone()]
    );
    assert_eq!(f.read(extra.join("notes.txt")).await.unwrap(), "in extra\n");
    f.write(extra.join("sub/new.txt"), "made").await.unwrap();
    assert_eq!(
        std::fs::read_to_string(extra.join("sub/new.txt")).unwrap(),
        "made"
    );
    let escaped = f.read(extra.join("link")).await.unwrap_err();
    assert_outside(&escaped);
    let err = f.read(f.outside.join("secret.txt")).await.unwrap_err();
    assert_outside(&err);
    let data = err.data.expect("data");
    assert_eq!(data["additionalRoots"], json!([extra.to_string_lossy()]));
    // The working directory stays what `root` names.
    assert_eq!(
        f.fs.root("s"),
        Some(std::fs::canonicalize(&f.root).unwrap())
    );
}
