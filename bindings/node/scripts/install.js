#!/usr/bin/env node
// Makes sure the native module for this platform is present, building it
// from source when it is not: run by npm when the package is installed from
// its folder (`npm install ./bindings/node`) or from a tarball, and by
// `npm pack` (prepack, with --pack) so that the tarball carries the module
// built on this platform. `--rebuild` builds even when a module is present.
// A module it builds (or packs) has its debug information stripped (about
// 3 MB instead of 20), when a `strip` program is there.
//
// Where the module is looked for, as napi-rs lays packages out:
//   1. libacp.<platform>.node next to package.json (a local build, or the
//      one packed into the tarball);
//   2. the per-platform package libacp-<platform> (a release's prebuilt
//      binaries, as optional dependencies).
// Otherwise, if the package sits in the libacp repository (its Rust
// workspace is two levels up), it runs
//   cargo build --release --locked -p libacp-node
// and copies the library next to package.json. Plain CommonJS, no
// dependencies: devDependencies are not installed for users.
"use strict";

const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..");

/** The platform suffix napi-rs uses: linux-x64-gnu, darwin-arm64, ... */
function platformTriple() {
  const { platform, arch } = process;
  if (platform === "linux") {
    const report = process.report && process.report.getReport();
    const glibc = report && report.header && report.header.glibcVersionRuntime;
    return `linux-${arch}-${glibc ? "gnu" : "musl"}`;
  }
  return `${platform}-${arch}`;
}

function present(triple) {
  if (fs.existsSync(path.join(root, `libacp.${triple}.node`))) {
    return true;
  }
  try {
    require.resolve(`libacp-${triple}/package.json`, { paths: [root] });
    return true;
  } catch {
    return false;
  }
}

function build(triple) {
  const workspace = path.resolve(root, "..", "..");
  const manifest = path.join(workspace, "Cargo.toml");
  if (!fs.existsSync(manifest) || !fs.existsSync(path.join(workspace, "core", "Cargo.toml"))) {
    throw new Error(
      `libacp: no native module for ${triple} in this package, no prebuilt package ` +
        `libacp-${triple}, and no libacp source tree to build it from ` +
        `(looked for ${manifest}). Install from the libacp repository ` +
        `(npm install path/to/libacp/bindings/node) or from a tarball made by npm pack there.`,
    );
  }
  console.error(`libacp: building the native module for ${triple} (cargo build --release)`);
  execFileSync("cargo", ["build", "--release", "--locked", "-p", "libacp-node"], {
    cwd: workspace,
    stdio: ["ignore", "inherit", "inherit"],
  });
  const targetDir = process.env.CARGO_TARGET_DIR
    ? path.resolve(workspace, process.env.CARGO_TARGET_DIR)
    : path.join(workspace, "target");
  const lib = process.platform === "darwin" ? "liblibacp_node.dylib" : "liblibacp_node.so";
  const module = path.join(root, `libacp.${triple}.node`);
  // Copied beside it, then renamed over it: a process that has the old one
  // loaded keeps its mapping.
  fs.copyFileSync(path.join(targetDir, "release", lib), `${module}.tmp`);
  fs.renameSync(`${module}.tmp`, module);
  strip(module);
}

/**
 * Strips debug information from `file`, if `strip` is installed. The
 * stripped copy is written beside it and renamed over it: strip itself
 * rewrites the file in place, which would crash a process that has the
 * module loaded (the test suite packs while it runs).
 */
function strip(file) {
  const tmp = `${file}.stripped`;
  const args =
    process.platform === "darwin" ? ["-S", "-o", tmp, file] : ["--strip-debug", "-o", tmp, file];
  try {
    execFileSync("strip", args, { stdio: "ignore" });
    fs.renameSync(tmp, file);
  } catch {
    // No strip program (or an unusual file): the module works unstripped.
    fs.rmSync(tmp, { force: true });
  }
}

function main() {
  const triple = platformTriple();
  const force = process.argv.includes("--rebuild");
  if (force || !present(triple)) {
    build(triple);
  } else if (process.argv.includes("--pack")) {
    const module = path.join(root, `libacp.${triple}.node`);
    if (fs.existsSync(module)) {
      strip(module);
    }
  }
}

try {
  main();
} catch (e) {
  console.error(String(e && e.message ? e.message : e));
  process.exit(1);
}
