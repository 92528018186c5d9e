// The first notification handler of a process that returns a promise runs
// before libacp follows handlers' async contexts (see ts/connection.ts,
// "Ordering"): its own calls to the peer must still skip the barrier. This
// file is its own process, so its handler is the first.
import assert from "node:assert/strict";
import { test } from "node:test";

import { closeBoth, dynamicPair, turns, within, INIT_PARAMS, INIT_RESULT } from "./support.mjs";

test("the process's first async notification handler may await a call to the peer", async () => {
  /** @type {unknown[]} */
  const answers = [];
  const pair = dynamicPair(
    {
      onRequest(method, params) {
        if (method === "initialize") return INIT_RESULT;
        return { echo: params };
      },
    },
    {
      async onNotification(_method, params) {
        await turns(1); // suspended before its call, too
        answers.push(await pair.client.request("_echo", params));
        answers.push(await pair.client.request("_echo", { again: true }));
      },
    },
  );
  await within(pair.client.request("initialize", INIT_PARAMS), "initialize");
  await pair.agent.notify("_first", { n: 1 });
  await pair.agent.notify("_second", { n: 2 });
  await within(
    (async () => {
      while (answers.length < 4) await turns(1);
    })(),
    "both handlers",
  );
  assert.deepEqual(answers, [
    { echo: { n: 1 } },
    { echo: { again: true } },
    { echo: { n: 2 } },
    { echo: { again: true } },
  ]);
  await closeBoth(pair);
});
