#!/usr/bin/env node
// Generates ts/schema.ts (the TypeScript types of every ACP v1 type) from
// the ACP v1 JSON schema with json-schema-to-typescript (pinned in
// devDependencies), and ts/methods.ts (the method tables) from the same
// schema's `x-method` and `x-side`.
//
//   node scripts/generate-schema.mjs           rewrite both
//   node scripts/generate-schema.mjs --check   exit 1 if either differs
//
// Input: spec/ts-sdk-2.4.0/v1/schema.unstable.json, the v1 schema with the
// unstable extensions as the TypeScript SDK 2.4.0 ships it, and, to tell
// what is stable, spec/ts-sdk-2.4.0/v1/schema.json (spec/README.md;
// scripts/check-spec.sh checks the copies). Changes made before compiling,
// none of which changes a type:
//   * the root's envelope union (`Agent | Client | ProtocolLevel`, whole
//     JSON-RPC messages) is left out: hosts handle params and results, and
//     its titled variants would take names (`Request`, `Null`, `Str`, ...)
//     that collide with the definitions';
//   * `title`s inside definitions are dropped (the keyword, not members
//     named `title`), so every exported name is a definition's name (a
//     titled inline variant would be exported on its own under its title);
//   * a definition schema.json lacks whose description does not start with
//     the schema's `**UNSTABLE**` mark gets it (the unstable members and
//     variants already have it), so every unstable type says so.
// The generator's "referenced by" comment lines and the empty root
// interface are removed from its output.
//
// ts/methods.ts: for each side that handles methods (`x-side` "agent" or
// "client"; "protocol", the engine's `$/cancel_request`, is neither an
// agent's nor a client's), each method's params and result type names
// (result null: a notification, whose params are a `...Notification`;
// `mcp/message` is a request the client handles and a notification the
// agent handles) and whether it is stable (schema.json has it on the same
// side). The side "proxy" (proxy chains, between a conductor and its
// proxies) gets two tables of its own, its requests and its notifications
// (`proxy/successor` is both); which role handles which is ts/typed.ts's
// (the schema does not say).

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { compile } from "json-schema-to-typescript";
import * as prettier from "prettier";

const here = path.dirname(fileURLToPath(import.meta.url));
const pkg = path.resolve(here, "..");
const spec = path.resolve(pkg, "../../spec/ts-sdk-2.4.0/v1");
const input = path.join(spec, "schema.unstable.json");
const stableInput = path.join(spec, "schema.json");
const output = path.join(pkg, "ts/schema.ts");
const methodsOutput = path.join(pkg, "ts/methods.ts");
const UNSTABLE = "**UNSTABLE**";
const SIDES = ["agent", "client"];

/**
 * `node` without the `title` keyword of any schema in it. The keys of a
 * `properties` map are member names, not keywords: a member named `title`
 * (`ToolCall.title`, `SessionInfo.title`) is kept.
 */
function stripTitles(node) {
  if (Array.isArray(node)) {
    return node.map(stripTitles);
  }
  if (node !== null && typeof node === "object") {
    const out = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === "properties" && value !== null && typeof value === "object") {
        out[key] = Object.fromEntries(
          Object.entries(value).map(([name, member]) => [name, stripTitles(member)]),
        );
      } else if (key !== "title") {
        out[key] = stripTitles(value);
      }
    }
    return out;
  }
  return node;
}

function readDefs(file) {
  return JSON.parse(fs.readFileSync(file, "utf8")).$defs;
}

/** Marks `def` unstable in its description, unless it already is. */
function markUnstable(def) {
  const description = def.description ?? "";
  if (description.startsWith(UNSTABLE)) {
    return def;
  }
  return { ...def, description: description ? `${UNSTABLE}\n\n${description}` : UNSTABLE };
}

export async function generate() {
  const schema = JSON.parse(fs.readFileSync(input, "utf8"));
  const stable = readDefs(stableInput);
  const defs = {};
  for (const [name, def] of Object.entries(schema.$defs)) {
    defs[name] = stripTitles(name in stable ? def : markUnstable(def));
  }
  const root = {
    title: "AcpSchema",
    type: "object",
    properties: {},
    additionalProperties: false,
    $defs: defs,
  };
  const text = await compile(root, "AcpSchema", {
    bannerComment: "",
    unreachableDefinitions: true,
    additionalProperties: true,
    format: true,
  });
  const body = text
    .replace(
      /\n \*\n \* This interface was referenced by `AcpSchema`'s JSON-Schema\n \* via the `definition` "[^"]+"\./g,
      "",
    )
    .replace(
      /\/\*\*\n \* This interface was referenced by `AcpSchema`'s JSON-Schema\n \* via the `definition` "[^"]+"\.\n \*\/\n/g,
      "",
    )
    .replace(/\nexport interface AcpSchema \{\}\n/, "\n");
  const banner = [
    "/* eslint-disable */",
    "// Generated by scripts/generate-schema.mjs from",
    "// spec/ts-sdk-2.4.0/v1/schema.unstable.json (ACP v1 with its unstable",
    "// extensions) with json-schema-to-typescript. Do not edit: run",
    "// `npm run generate:schema`. `npm run check` fails when it drifts.",
    "//",
    "// Every ACP v1 type, by its schema name; the unstable ones (and unstable",
    "// members and variants) say **UNSTABLE** in their docs. Values are plain",
    "// objects as they travel on the wire; members the schema does not list are",
    "// allowed and kept.",
    "",
  ].join("\n");
  return `${banner}${body}`;
}

/**
 * The methods each side handles, from the definitions' `x-side` and
 * `x-method`: side -> wire name -> { params, result } type names (result
 * null for a notification). Throws on a method without params, or whose
 * params and result disagree about being a notification.
 */
export function schemaMethods(defs) {
  const found = { agent: {}, client: {} };
  for (const [name, def] of Object.entries(defs)) {
    const side = def["x-side"];
    const method = def["x-method"];
    if (!SIDES.includes(side) || !method) {
      continue;
    }
    const entry = (found[side][method] ??= { params: null, result: null });
    const slot = name.endsWith("Response") ? "result" : "params";
    if (entry[slot] !== null) {
      throw new Error(`${side} method ${method}: two definitions (${entry[slot]}, ${name})`);
    }
    entry[slot] = name;
  }
  for (const side of SIDES) {
    for (const [method, { params, result }] of Object.entries(found[side])) {
      if (params === null) {
        throw new Error(`${side} method ${method} has a result type but no params type`);
      }
      if ((result === null) !== params.endsWith("Notification")) {
        throw new Error(`${side} method ${method}: ${params} with result ${result}`);
      }
    }
  }
  return found;
}

/**
 * The proxy-chain methods (`x-side` "proxy"): { requests, notifications },
 * each wire name -> { params, result } type names (result null for a
 * notification). A method may be both a request (a `...Request` and a
 * `...Response`) and a notification (a `...Notification`). Throws on a
 * request without both types, or on two definitions in one place.
 */
export function proxyMethods(defs) {
  const found = { requests: {}, notifications: {} };
  for (const [name, def] of Object.entries(defs)) {
    const method = def["x-method"];
    if (def["x-side"] !== "proxy" || !method) {
      continue;
    }
    const kind = name.endsWith("Notification") ? "notifications" : "requests";
    const entry = (found[kind][method] ??= { params: null, result: null });
    const slot = name.endsWith("Response") ? "result" : "params";
    if (entry[slot] !== null) {
      throw new Error(`proxy method ${method}: two definitions (${entry[slot]}, ${name})`);
    }
    entry[slot] = name;
  }
  for (const [kind, table] of Object.entries(found)) {
    for (const [method, { params, result }] of Object.entries(table)) {
      if (params === null || (result === null) !== (kind === "notifications")) {
        throw new Error(`proxy method ${method}: params ${params} with result ${result}`);
      }
    }
  }
  return found;
}

/** The text of ts/methods.ts (formatted by prettier, as `npm run lint` checks it). */
export async function generateMethods() {
  const every = schemaMethods(readDefs(input));
  const stable = schemaMethods(readDefs(stableInput));
  const proxy = proxyMethods(readDefs(input));
  const stableProxy = proxyMethods(readDefs(stableInput));
  const unstable = new Set();
  const out = [
    "// Generated by scripts/generate-schema.mjs from the x-method and x-side of",
    "// spec/ts-sdk-2.4.0/v1/schema.unstable.json (stable: also in schema.json).",
    "// Do not edit: run `npm run generate:schema`; `--check` fails when it drifts.",
    "",
    "/**",
    " * One method of the schema: the names of its params and result types in",
    " * `./schema` (`result` null: a notification), and whether it is stable.",
    " */",
    "export interface MethodInfo {",
    "  readonly params: string;",
    "  readonly result: string | null;",
    "  readonly stable: boolean;",
    "}",
  ];
  // One table: its doc comment, then a row a method (the unstable ones
  // added to `unstable`).
  const table = (doc, name, methods, stableMethods) => {
    out.push("", ...doc, `export const ${name} = {`);
    for (const wire of Object.keys(methods).sort()) {
      const { params, result } = methods[wire];
      const isStable = Object.hasOwn(stableMethods, wire);
      if (!isStable) {
        unstable.add(wire);
      }
      const r = result === null ? "null" : JSON.stringify(result);
      out.push(
        `  ${JSON.stringify(wire)}: { params: ${JSON.stringify(params)}, result: ${r}, stable: ${isStable} },`,
      );
    }
    out.push("} as const satisfies Record<string, MethodInfo>;");
  };
  for (const side of SIDES) {
    const caller = side === "agent" ? "client" : "agent";
    const doc = `/** The methods the ${side} handles (the ${caller} calls them), by wire name. */`;
    table([doc], `${side.toUpperCase()}_SCHEMA`, every[side], stable[side]);
  }
  for (const kind of ["requests", "notifications"]) {
    const doc = [
      "/**",
      ` * The proxy chain's ${kind} (unstable \`unstable_proxy_chains\`; the schema's`,
      " * side `proxy`, between a conductor and its proxies), by wire name.",
      " */",
    ];
    const name = kind === "requests" ? "PROXY_REQUEST_SCHEMA" : "PROXY_NOTIFICATION_SCHEMA";
    table(doc, name, proxy[kind], stableProxy[kind]);
  }
  out.push(
    "",
    "/** The wire names of the agent's methods. */",
    "export type AgentMethod = keyof typeof AGENT_SCHEMA;",
    "",
    "/** The wire names of the client's methods. */",
    "export type ClientMethod = keyof typeof CLIENT_SCHEMA;",
    "",
    "/** The wire names of the proxy chain's requests. */",
    "export type ProxyRequestMethod = keyof typeof PROXY_REQUEST_SCHEMA;",
    "",
    "/** The wire names of the proxy chain's notifications. */",
    "export type ProxyNotificationMethod = keyof typeof PROXY_NOTIFICATION_SCHEMA;",
    "",
    "/**",
    " * The methods of the unstable v1 extensions (in schema.unstable.json, not in",
    " * schema.json): the core routes and checks them only on a connection whose",
    " * `unstable` option turns their feature on; otherwise they are extension",
    " * methods to it (passed to the host unchecked).",
    " */",
    "export const UNSTABLE_METHODS: ReadonlySet<string> = new Set([",
    ...[...unstable].sort().map((wire) => `  ${JSON.stringify(wire)},`),
    "]);",
    "",
  );
  const config = (await prettier.resolveConfig(methodsOutput)) ?? {};
  return prettier.format(out.join("\n"), { ...config, parser: "typescript" });
}

const isMain =
  process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const outputs = [
    [output, await generate()],
    [methodsOutput, await generateMethods()],
  ];
  if (process.argv.includes("--check")) {
    let stale = false;
    for (const [file, text] of outputs) {
      const current = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
      if (current !== text) {
        console.error(
          `${path.relative(pkg, file)} is out of date with spec/ts-sdk-2.4.0/v1: run \`npm run generate:schema\``,
        );
        stale = true;
      }
    }
    if (stale) {
      process.exit(1);
    }
  } else {
    for (const [file, text] of outputs) {
      fs.writeFileSync(file, text);
      console.log(`wrote ${path.relative(process.cwd(), file)}`);
    }
  }
}
