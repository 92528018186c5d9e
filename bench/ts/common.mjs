// Shared pieces of the JS bench programs (see bench/README.md): the prompt
// vocabulary, the payloads (byte for byte those of bench/rust/src/lib.rs),
// the command line, the client-side checks, the workload driver, the result line.

export const CHUNK_LEN = 100;
export const READ_LEN = 1024;
export const SESSION_CWD = "/tmp";
export const RESOURCE_URI = "file:///bench/resource.txt";
export const WRITE_PATH = "/bench/write.txt";
const UNIT = '"q" \\ ';
export const LINE64 = UNIT.repeat(11).slice(0, 63) + "\n";
const PAD89 = UNIT.repeat(15).slice(0, 89);

export const textOf = (n) => LINE64.repeat(Math.floor(n / 64) + 1).slice(0, n);
export const chunkText = (i) => `${String(i).padStart(10, "0")} ${PAD89}`;
export function chunkIndex(text) {
  if (typeof text !== "string" || text.length !== CHUNK_LEN) return null;
  const head = text.slice(0, 10);
  return /^\d{10}$/.test(head) ? Number(head) : null;
}
export const readPath = (i) => `/bench/read/${i}`;
export function readIndex(path) {
  const m = /^\/bench\/read\/(\d+)$/.exec(path);
  return m ? Number(m[1]) : null;
}
export function parseCommand(text) {
  const words = text.trim().split(/\s+/);
  if (words[0] === "echo") return ["echo", 0];
  if (["stream", "read", "write"].includes(words[0]) && /^\d+$/.test(words[1] ?? "")) {
    return [words[0], Number(words[1])];
  }
  return null;
}

const USAGE = "usage: CLIENT (w1 [N] | w2 [M] | w3 [BYTES [REPS]] | w4 [SESSIONS [CHUNKS [INFLIGHT]]] | smoke) -- AGENT_COMMAND...";
const DEFAULTS = { w1: [100000], w2: [20000], w3: [8 << 20, 5], w4: [1000, 10, 64], smoke: [] };

export function invocation(argv) {
  const split = argv.indexOf("--");
  if (split < 1 || split === argv.length - 1 || !(argv[0] in DEFAULTS)) throw new Error(USAGE);
  const mine = argv.slice(0, split);
  const defaults = DEFAULTS[mine[0]];
  const args = [...mine.slice(1).map(Number), ...defaults.slice(mine.length - 1)];
  return { workload: mine[0], args, agent: argv.slice(split + 1) };
}

function usage() {
  const u = process.resourceUsage();
  return { client_rss_kb: u.maxRSS, client_cpu_s: (u.userCPUTime + u.systemCPUTime) / 1e6 };
}

export function emit(impl, workload, result) {
  process.stdout.write(JSON.stringify({ impl, workload, result, usage: usage() }) + "\n");
}

export function fail(impl, workload, error) {
  process.stdout.write(JSON.stringify({ impl, workload, error: String(error), usage: usage() }) + "\n");
}

export function percentile(samples, p) {
  if (samples.length === 0) return 0;
  const s = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(Math.max(rank, 1), s.length) - 1];
}

export class Tracker {
  chunks = new Map();
  readTimes = [];
  nextRead = 0;
  expectedWrite = null;
  writes = 0;
  errors = [];

  chunk(session, text) {
    const seen = this.chunks.get(session) ?? 0;
    if (chunkIndex(text) !== seen) {
      if (this.errors.length < 10) this.errors.push(`session ${session}: chunk ${seen} was ${JSON.stringify(text)}`);
      return;
    }
    this.chunks.set(session, seen + 1);
  }

  read(path) {
    this.readTimes.push(performance.now());
    const expected = this.nextRead++;
    if (readIndex(path) !== expected) {
      const e = `read ${expected} was of ${JSON.stringify(path)}`;
      this.errors.push(e);
      throw new Error(e);
    }
    return textOf(READ_LEN);
  }

  write(path, content) {
    if (path !== WRITE_PATH || content !== this.expectedWrite) {
      const e = `write of ${content.length} chars to ${JSON.stringify(path)} is not the expected content`;
      this.errors.push(e);
      throw new Error(e);
    }
    this.writes++;
  }

  check() {
    if (this.errors.length) throw new Error(this.errors.slice(0, 10).join("; "));
  }
}

const now = () => performance.now() / 1000;

/**
 * Runs the workload. `peer.newSession()` -> id; `peer.prompt(session, text,
 * resource|null)` -> stopReason; `peer.settle(session, n)` waits (bounded)
 * until n chunks of the session were handled, for SDKs that resolve a
 * response before the notification handlers before it have run.
 */
export async function drive(workload, args, tracker, peer) {
  const session = await peer.newSession();
  const timed = async (text, resource = null, sid = session) => {
    const start = now();
    const stop = await peer.prompt(sid, text, resource);
    const took = now() - start;
    if (stop !== "end_turn") throw new Error(`${text.split(" ")[0]}: stopReason ${stop}`);
    return took;
  };
  const takeChunks = async (sid, n) => {
    await peer.settle(sid, n);
    tracker.check();
    const got = tracker.chunks.get(sid) ?? 0;
    tracker.chunks.delete(sid);
    if (got !== n) throw new Error(`stream ${n}: session ${sid} got ${got} chunks before the response`);
  };
  const stream = async (n) => {
    const took = await timed(`stream ${n}`);
    await takeChunks(session, n);
    return took;
  };
  const reads = async (m) => {
    tracker.readTimes = [];
    tracker.nextRead = 0;
    const took = await timed(`read ${m}`);
    tracker.check();
    const t = tracker.readTimes;
    if (t.length !== m) throw new Error(`read ${m}: got ${t.length} reads`);
    const gaps = [];
    for (let i = 1; i < t.length; i++) gaps.push((t[i] - t[i - 1]) * 1000);
    return [took, gaps];
  };
  const write = async (n) => {
    tracker.expectedWrite = textOf(n);
    const took = await timed(`write ${n}`);
    tracker.check();
    if (tracker.writes !== 1) throw new Error("write: not exactly one write");
    tracker.writes = 0;
    return took;
  };
  const sessions = async (count, chunks, inflight) => {
    const start = now();
    let next = 0;
    const worker = async () => {
      while (next < count) {
        next++;
        const sid = await peer.newSession();
        await timed(`stream ${chunks}`, null, sid);
        await takeChunks(sid, chunks);
      }
    };
    await Promise.all(Array.from({ length: Math.min(inflight, count) }, worker));
    return now() - start;
  };

  switch (workload) {
    case "w1": {
      const [n] = args;
      const s = await stream(n);
      return { n, seconds: s, per_s: n / s };
    }
    case "w2": {
      const [m] = args;
      const [s, gaps] = await reads(m);
      return { m, seconds: s, per_s: m / s, p50_us: percentile(gaps, 50), p99_us: percentile(gaps, 99) };
    }
    case "w3": {
      const [n, reps] = args;
      const writes = [];
      for (let i = 0; i < reps; i++) writes.push(await write(n));
      const text = textOf(n);
      const resources = [];
      for (let i = 0; i < reps; i++) resources.push(await timed("echo", text));
      return { bytes: n, reps, write_s: percentile(writes, 50), resource_s: percentile(resources, 50),
        write_samples: writes, resource_samples: resources };
    }
    case "w4": {
      const [count, chunks, inflight] = args;
      const s = await sessions(count, chunks, inflight);
      return { sessions: count, chunks, inflight, seconds: s };
    }
    default: {
      await stream(50);
      await reads(20);
      await write(10000);
      await timed("echo", textOf(10000));
      await sessions(8, 5, 4);
      return { ok: true };
    }
  }
}
