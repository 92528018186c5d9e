// The interop agent of agent-app.mjs, served remotely by the official
// TypeScript SDK's experimental server (`AcpServer` with its Node adapters):
// WebSocket and Streamable HTTP on one port, a fresh agent per connection.
//
//   node remote-agent.mjs [--listen HOST:PORT]     (default 127.0.0.1:0)
//
// Contract (the same for every remote interop agent, see ../README.md):
// * the first line on stderr is `listening on HOST:PORT`, with the port
//   actually bound; the endpoint is `http://HOST:PORT/acp` and
//   `ws://HOST:PORT/acp` (this server ignores the path);
// * it serves until its stdin closes (then exits 0) or it is killed;
// * stdout stays empty; diagnostics go to stderr.
//
// The `ws` package provides the WebSocket server (the SDK has no runtime
// dependency on it).

import http from "node:http";

import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import {
  createNodeHttpHandler,
  createNodeWebSocketUpgradeHandler,
} from "@agentclientprotocol/sdk/experimental/node";
import { WebSocketServer } from "ws";

import { createAgentApp } from "./agent-app.mjs";

function usage(message) {
  console.error(`remote-agent: ${message}\nusage: node remote-agent.mjs [--listen HOST:PORT]`);
  process.exit(2);
}

function parseListen(argv) {
  let listen = "127.0.0.1:0";
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--listen" && i + 1 < argv.length) {
      listen = argv[++i];
    } else {
      usage(`unexpected argument ${JSON.stringify(argv[i])}`);
    }
  }
  const at = listen.lastIndexOf(":");
  const host = listen.slice(0, at).replace(/^\[(.*)\]$/, "$1");
  const port = Number.parseInt(listen.slice(at + 1), 10);
  if (at < 0 || !host || !Number.isInteger(port) || port < 0 || port > 65535) {
    usage(`bad --listen ${JSON.stringify(listen)} (want HOST:PORT)`);
  }
  return { host, port };
}

const { host, port } = parseListen(process.argv.slice(2));

const acp = new AcpServer({ createAgent: createAgentApp });
const server = http.createServer(createNodeHttpHandler(acp));
const wss = new WebSocketServer({ noServer: true });
server.on("upgrade", createNodeWebSocketUpgradeHandler(acp, wss));
server.on("error", (error) => {
  console.error(`remote-agent: ${error.message}`);
  process.exit(1);
});

server.listen(port, host, () => {
  const address = server.address();
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  console.error(`listening on ${shown}:${address.port}`);
});

// Serve until stdin closes.
process.stdin.on("data", () => {});
process.stdin.on("end", async () => {
  await acp.close();
  process.exit(0);
});
process.stdin.on("error", () => process.exit(0));
