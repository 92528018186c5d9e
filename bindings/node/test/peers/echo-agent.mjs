// A small libacp Node agent for the process tests: answers initialize and
// session/new, and an ext method `_do` whose `what` says what to do:
// `env` (its cwd and the variable `name`), `stderr` (writes `lines` to
// stderr), `exit` (exits with `code` at once), `echo` (returns params).
import { runAgent } from "libacp";

await runAgent({
  initialize: () => ({ protocolVersion: 1, agentCapabilities: {} }),
  newSession: () => ({ sessionId: "s1" }),
  prompt: () => ({ stopReason: "end_turn" }),
  extMethod(_method, params) {
    const p = /** @type {{ what: string, name?: string, lines?: string[], code?: number }} */ (
      params
    );
    switch (p.what) {
      case "env":
        return { cwd: process.cwd(), value: process.env[p.name ?? ""] ?? null };
      case "stderr":
        for (const line of p.lines ?? []) process.stderr.write(`${line}\n`);
        return {};
      case "exit":
        process.exit(p.code ?? 0);
      default:
        return params;
    }
  },
});
