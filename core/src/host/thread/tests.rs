use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::Mutex;
use std::thread::ThreadId;

use serde_json::value::RawValue;

use super::*;
use crate::host::{HostConnection, HostOptions};
use crate::protocol::{AcpOptions, Role};
use crate::rpc::{ConnectionOptions, Direction};
use crate::transport::Transport;

type Traced = Arc<Mutex<Vec<(Direction, ThreadId)>>>;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// A client connection over a socket pair, read by a [`HostThread`]; the
/// other end is the scripted peer (blocking).
fn start(
    rt: &tokio::runtime::Runtime,
    capacity: usize,
) -> (HostConnection<u32>, HostThread<u32>, UnixStream, Traced) {
    let (ours, theirs) = UnixStream::pair().expect("socketpair");
    let transport = Transport::from_socket(ours.into()).expect("transport");
    let traced: Traced = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&traced);
    let trace: crate::rpc::TraceHook = Arc::new(move |d: Direction, _: &[u8]| {
        seen.lock()
            .expect("trace")
            .push((d, std::thread::current().id()));
    });
    let bell = Bell::new().expect("eventfd");
    let inbox = Inbox::new(capacity, bell.wake());
    let options = HostOptions {
        acp: AcpOptions {
            connection: ConnectionOptions {
                trace: Some(trace),
                ..ConnectionOptions::default()
            },
            ..AcpOptions::default()
        },
        drive_reads: true,
        hooks: Default::default(),
    };
    let conn = HostConnection::start(
        rt.handle(),
        Role::Client,
        transport,
        Arc::clone(&inbox),
        options,
    );
    let reader = conn.take_reader();
    assert!(reader.is_some(), "a socket is read by the host");
    (conn, HostThread::new(inbox, bell, reader), theirs, traced)
}

fn method_of(delivery: &Delivery<u32>) -> String {
    match delivery {
        Delivery::Notification { method, .. } => format!("n:{method}"),
        Delivery::Request(r) => format!("q:{}", r.method),
        Delivery::Log(line) => format!("l:{line}"),
        Delivery::Closed(_) => "closed".into(),
        other => format!("{other:?}"),
    }
}

#[test]
fn a_round_trip_is_read_handled_and_answered_on_the_host_thread() {
    let rt = runtime();
    let (_conn, mut thread, peer, traced) = start(&rt, 64);
    let mut lines = BufReader::new(peer.try_clone().expect("clone"));
    let mut peer = peer;
    for i in 0..20 {
        writeln!(
            peer,
            r#"{{"jsonrpc":"2.0","id":{i},"method":"_echo","params":{{"i":{i}}}}}"#
        )
        .expect("write");
        let Delivery::Request(request) = thread.next_delivery() else {
            panic!("not a request");
        };
        let params = request
            .params
            .as_deref()
            .map(RawValue::get)
            .expect("params");
        let raw = RawValue::from_string(params.to_owned()).expect("json");
        request.respond(Ok(raw)).expect("respond");
        let mut answer = String::new();
        lines.read_line(&mut answer).expect("answer");
        let answer: serde_json::Value = serde_json::from_str(&answer).expect("json");
        assert_eq!(answer["id"], i);
        assert_eq!(answer["result"]["i"], i);
    }
    // Every request was read (and handed over) by this thread: no
    // hand-off. (The answers too are written here once the writer has
    // published its descriptor for direct writes, the writer's business.)
    let me = std::thread::current().id();
    let traced = traced.lock().expect("trace").clone();
    let incoming: Vec<ThreadId> = traced
        .iter()
        .filter(|(d, _)| *d == Direction::Incoming)
        .map(|(_, t)| *t)
        .collect();
    assert_eq!(incoming.len(), 20);
    assert!(
        incoming.iter().all(|t| *t == me),
        "a request was read by another thread: {traced:?}"
    );
    drop(peer);
    drop(lines);
    assert_eq!(method_of(&thread.next_delivery()), "closed");
}

#[test]
fn a_delivery_pushed_by_another_thread_wakes_the_sleeping_thread() {
    let rt = runtime();
    let (conn, mut thread, _peer, _) = start(&rt, 64);
    let inbox = Arc::clone(conn.inbox());
    // The push comes while `next_delivery` sleeps (or before it: then it is taken
    // at once); either way it must be delivered.
    let pusher = std::thread::spawn(move || inbox.push_log("from elsewhere"));
    assert_eq!(method_of(&thread.next_delivery()), "l:from elsewhere");
    pusher.join().expect("pusher");
}

#[test]
fn a_full_inbox_pauses_the_reader_and_taking_resumes_it_in_order() {
    let rt = runtime();
    // Room for two notifications: the reader waits for room many times.
    let (_conn, mut thread, mut peer, _) = start(&rt, 2);
    let writer = std::thread::spawn(move || {
        for i in 0..200 {
            writeln!(
                peer,
                r#"{{"jsonrpc":"2.0","method":"_n","params":{{"i":{i}}}}}"#
            )
            .expect("write");
        }
        // End of stream: the connection closes after the last one.
    });
    let mut order = Vec::new();
    loop {
        match thread.next_delivery() {
            Delivery::Notification { params, .. } => {
                let params = params.expect("params");
                let v: serde_json::Value = serde_json::from_str(params.get()).expect("json");
                order.push(v["i"].as_u64().expect("i"));
            }
            Delivery::Closed(_) => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    writer.join().expect("writer");
    assert_eq!(order, (0..200).collect::<Vec<u64>>());
}
