// An Electron-style ACP client on libacp, as main-process code: it spawns an
// agent, streams each turn to the renderer, asks the renderer about
// permissions, and cancels a turn. Here the "renderer" prints to the
// terminal, so it runs as plain Node:
//
//   node examples/node/electron-client.cjs [AGENT_COMMAND ARGS...]
//
// (default: the example agent beside it). In Electron, `renderer` is a
// window's `webContents` and `askRenderer` an `ipcMain.handle` round trip.
const path = require("node:path");
const { ClientConnection, RequestError } = require("libacp");

/** A stand-in for `BrowserWindow.webContents`. */
const renderer = {
  /** @param {string} channel @param {unknown} payload */
  send(channel, payload) {
    if (channel === "acp:chunk") process.stdout.write(String(payload));
    else console.log(`\n[${channel}] ${JSON.stringify(payload)}`);
  },
};

/**
 * The renderer's answer to a permission dialog (here: the first option).
 * @param {import("libacp").schema.RequestPermissionRequest} request
 * @param {AbortSignal} signal aborts when the agent no longer needs the answer
 */
async function askRenderer(request, signal) {
  renderer.send("acp:permission", { title: request.toolCall.title ?? request.toolCall.toolCallId });
  await new Promise((resolve) => setTimeout(resolve, 10));
  if (signal.aborted) return null;
  return request.options[0]?.optionId ?? null;
}

/** Called with the next chunk the agent streams (once). */
let onChunk = () => {};

/** @type {import("libacp").Client} */
const client = {
  sessionUpdate({ update }) {
    if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") {
      renderer.send("acp:chunk", update.content.text);
      onChunk();
    } else {
      renderer.send("acp:update", { kind: update.sessionUpdate });
    }
  },
  async requestPermission(params, { signal }) {
    const optionId = await askRenderer(params, signal);
    if (optionId === null) return { outcome: { outcome: "cancelled" } };
    return { outcome: { outcome: "selected", optionId } };
  },
  readTextFile() {
    throw new RequestError(-32002, "this client shares no files");
  },
};

async function main() {
  const [command, ...args] =
    process.argv.length > 2
      ? process.argv.slice(2)
      : [process.execPath, path.join(__dirname, "agent.mjs")];
  const agent = ClientConnection.spawn(command, args, client, {
    stderr: (line) => renderer.send("acp:agent-log", line),
  });
  try {
    await agent.initialize({
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: true } },
      clientInfo: { name: "electron-style-client", version: "1.0.0" },
    });
    const { sessionId } = await agent.newSession({ cwd: process.cwd(), mcpServers: [] });

    // A whole turn: resolves after every update of the turn was handled.
    const first = await agent.prompt({
      sessionId,
      prompt: [{ type: "text", text: "hello from Electron" }],
    });
    renderer.send("acp:turn-ended", first);

    // A turn the user stops: cancelled once the first chunk arrived.
    const firstChunk = new Promise((resolve) => (onChunk = () => resolve(undefined)));
    const turn = agent.prompt({
      sessionId,
      prompt: [{ type: "text", text: "a long answer, please" }],
    });
    await firstChunk;
    onChunk = () => {};
    await agent.cancel(sessionId);
    renderer.send("acp:turn-ended", await turn);
  } finally {
    await agent.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
