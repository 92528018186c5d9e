// A client program for the process-exit tests: spawns the echo agent,
// prints `pid <agent pid>`, then, by its first argument:
//   close  runs a call, closes, and returns from main (the process must
//          then exit by itself: nothing of libacp keeps it alive);
//   exit   calls process.exit(0) with the agent still running (the agent
//          must be killed);
//   peer   asks the agent to exit, awaits closed(), and returns from main.
import path from "node:path";
import { fileURLToPath } from "node:url";

import { ClientConnection } from "libacp";

const agentPath = path.join(path.dirname(fileURLToPath(import.meta.url)), "echo-agent.mjs");
const mode = process.argv[2];
const agent = ClientConnection.spawn(process.execPath, [agentPath]);
console.log(`pid ${agent.pid}`);
await agent.initialize({ protocolVersion: 1, clientCapabilities: {} });
if (mode === "close") {
  await agent.extMethod("_do", { what: "echo" });
  await agent.close();
} else if (mode === "exit") {
  process.exit(0);
} else if (mode === "peer") {
  agent.extMethod("_do", { what: "exit", code: 0 }).catch(() => {});
  console.log(`closed: ${await agent.closed()}`);
}
console.log("main returned");
