// An ACP v1 agent built only on the official TypeScript SDK
// (`@agentclientprotocol/sdk`), serving on its stdin/stdout. libacp's clients
// (and client.mjs / client.py here) drive it. The agent itself is in
// agent-app.mjs; the prompt commands it understands are listed in ../README.md.
//
// It exits 0 once its stdin closes. Diagnostics go to stderr only: stdout
// carries nothing but ACP messages.

import { Readable, Writable } from "node:stream";

import { ndJsonStream } from "@agentclientprotocol/sdk";

import { createAgentApp } from "./agent-app.mjs";

const connection = createAgentApp().connect(
  ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)),
);
await connection.closed;
process.exit(0);
