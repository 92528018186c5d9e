//! `Transport::from_fds` / `from_raw_fds`: the one descriptor contract every
//! binding exposes. A read end and a write end (pipes, FIFOs, sockets,
//! files), or one stream socket given as both; descriptors that are not
//! open, a pipe given twice, or a datagram socket are refused before
//! anything is taken over.

use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::time::Duration;

use libacp_core::{CloseReason, Connection, ConnectionOptions, FnHandler, Transport};
use libacp_tests::within;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into `fds`.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: fresh descriptors we own.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

fn is_open(fd: RawFd) -> bool {
    // SAFETY: F_GETFD only checks the descriptor.
    unsafe { libc::fcntl(fd, libc::F_GETFD) >= 0 }
}

fn echo() -> FnHandler {
    FnHandler::new().on_request(|r| async move { r.params_as::<Value>() })
}

/// An echoing connection over two pipes, and the peer's ends of them
/// (the one it reads, the one it writes).
fn over_pipes() -> (Connection, OwnedFd, OwnedFd) {
    let (our_read, their_write) = pipe();
    let (their_read, our_write) = pipe();
    let conn = Connection::start(
        Transport::from_fds(our_read, our_write).expect("transport"),
        echo(),
        ConnectionOptions::default(),
    );
    (conn, their_read, their_write)
}

async fn read_json(reader: &mut (impl tokio::io::AsyncBufRead + Unpin)) -> Option<Value> {
    let mut line = String::new();
    let n = within("read", reader.read_line(&mut line))
        .await
        .expect("read");
    (n > 0).then(|| serde_json::from_str(&line).expect("json"))
}

#[tokio::test]
async fn a_read_pipe_and_a_write_pipe_carry_a_connection_and_its_end() {
    let (conn, their_read, their_write) = over_pipes();
    let mut writer = tokio::net::unix::pipe::Sender::from_owned_fd(their_write).expect("sender");
    let mut reader =
        BufReader::new(tokio::net::unix::pipe::Receiver::from_owned_fd(their_read).expect("rx"));
    writer
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"_e\",\"params\":{\"x\":1}}\n")
        .await
        .expect("write");
    let answer = read_json(&mut reader).await.expect("answer");
    assert_eq!(answer["result"], json!({"x": 1}));
    drop(writer);
    assert_eq!(
        within("closed", conn.closed()).await,
        CloseReason::PeerClosed
    );
    // The connection's write end was closed: the peer reads end of stream.
    assert_eq!(read_json(&mut reader).await, None);
}

#[tokio::test]
async fn one_socket_given_twice_carries_a_connection_and_is_shut_down_on_close() {
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().expect("pair");
    let raw = ours.into_raw_fd();
    // SAFETY: an open descriptor we give up.
    let transport = unsafe { Transport::from_raw_fds(raw, raw) }.expect("one socket");
    let conn = Connection::start(transport, echo(), ConnectionOptions::default());
    // A duplicate of the peer's end stays open, as a leaked descriptor
    // would: end of stream must still reach the peer (SHUT_WR).
    let keep = theirs.try_clone().expect("dup");
    theirs.set_nonblocking(true).expect("nb");
    let theirs = tokio::net::UnixStream::from_std(theirs).expect("tokio");
    let (r, mut w) = theirs.into_split();
    let mut reader = BufReader::new(r);
    w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"_e\",\"params\":[2]}\n")
        .await
        .expect("write");
    assert_eq!(
        read_json(&mut reader).await.expect("answer")["result"],
        json!([2])
    );
    conn.close().await;
    assert_eq!(read_json(&mut reader).await, None);
    drop(keep);
}

#[tokio::test]
async fn the_same_descriptor_twice_must_be_a_socket_and_nothing_is_taken_over() {
    let (r, w) = pipe();
    let raw = r.as_raw_fd();
    // SAFETY: refused before anything is taken over (checked below).
    let err = unsafe { Transport::from_raw_fds(raw, raw) }.expect_err("a pipe twice");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("stream socket"), "{err}");
    assert!(is_open(raw), "the refused descriptor was closed");
    drop((r, w));
}

#[tokio::test]
async fn a_descriptor_that_is_not_open_is_refused_and_the_other_is_left_alone() {
    let (r, w) = pipe();
    for (read, write) in [(r.as_raw_fd(), 1_000_000), (-1, w.as_raw_fd())] {
        // SAFETY: refused before anything is taken over.
        let err = unsafe { Transport::from_raw_fds(read, write) }.expect_err("not open");
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
        assert!(
            err.to_string().contains("not an open file descriptor"),
            "{err}"
        );
    }
    assert!(is_open(r.as_raw_fd()) && is_open(w.as_raw_fd()));
}

#[tokio::test]
async fn a_datagram_socket_is_refused() {
    let (a, b) = std::os::unix::net::UnixDatagram::pair().expect("pair");
    let (ra, rb) = (a.as_raw_fd(), b.as_raw_fd());
    // SAFETY: refused before anything is taken over.
    let err = unsafe { Transport::from_raw_fds(ra, rb) }.expect_err("datagram");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(is_open(ra) && is_open(rb));
}

#[tokio::test]
async fn a_fifo_to_read_and_a_regular_file_to_write_carry_a_connection() {
    let dir = std::env::temp_dir().join(format!("libacp-fd-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let fifo = dir.join("in.fifo");
    let path = std::ffi::CString::new(fifo.to_str().expect("utf8")).expect("path");
    // SAFETY: mkfifo with a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    // Open the write side first without blocking forever: a reader opens
    // non-blocking, then the writer, then the reader is handed over.
    let reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .expect("fifo reader");
    let mut writer = std::fs::OpenOptions::new()
        .write(true)
        .open(&fifo)
        .expect("fifo writer");
    let out_path = dir.join("out.ndjson");
    let out = std::fs::File::create(&out_path).expect("out file");
    let conn = Connection::start(
        Transport::from_fds(reader.into(), out.into()).expect("transport"),
        echo(),
        ConnectionOptions::default(),
    );
    writer
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"_e\",\"params\":{\"f\":true}}\n")
        .expect("write");
    drop(writer);
    assert_eq!(
        within("closed", conn.closed()).await,
        CloseReason::PeerClosed
    );
    within("terminated", conn.terminated()).await;
    let written = std::fs::read_to_string(&out_path).expect("out");
    let answer: Value = serde_json::from_str(written.trim()).expect("one answer");
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["result"], json!({"f": true}));
    let _ = std::fs::remove_dir_all(&dir);
    tokio::time::sleep(Duration::from_millis(1)).await;
}

use std::os::unix::fs::OpenOptionsExt;

#[tokio::test]
async fn a_socket_reset_by_the_peer_closes_as_the_peer_closing() {
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().expect("pair");
    let raw = ours.into_raw_fd();
    // SAFETY: an open descriptor we give up.
    let transport = unsafe { Transport::from_raw_fds(raw, raw) }.expect("one socket");
    let conn = Connection::start(transport, echo(), ConnectionOptions::default());
    // The peer asks, never reads the answer and closes: its unread answer
    // makes the kernel reset the connection (ECONNRESET on our side).
    (&theirs)
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"_e\",\"params\":{}}\n")
        .expect("write");
    let mut waited = 0;
    while {
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes the byte count into `n`.
        unsafe { libc::ioctl(theirs.as_raw_fd(), libc::FIONREAD, &mut n) };
        n == 0
    } {
        waited += 1;
        assert!(waited < 12_000, "the answer never arrived");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    drop(theirs);
    assert_eq!(
        within("closed", conn.closed()).await,
        CloseReason::PeerClosed
    );
}

#[tokio::test]
async fn a_write_to_a_pipe_whose_reader_is_gone_closes_as_the_peer_closing() {
    let (conn, their_read, their_write) = over_pipes();
    // The peer stops reading but keeps its write end open: only the write
    // can notice (EPIPE), and it reports the peer closing, not an I/O error.
    drop(their_read);
    let err = within("the call fails", conn.request("_x", &json!({})))
        .await
        .expect_err("nobody reads the request");
    assert_eq!(
        err,
        libacp_core::CallError::Connection(libacp_core::ConnectionError::Closed(
            CloseReason::PeerClosed
        ))
    );
    assert_eq!(
        within("closed", conn.closed()).await,
        CloseReason::PeerClosed
    );
    drop(their_write);
}
