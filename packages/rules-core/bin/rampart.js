#!/usr/bin/env node
// The `rampart` command. It checks the Node.js version before it loads the CLI, because the CLI
// loads better-sqlite3, which crashes older versions with a segmentation fault and no message
// (src/cli/node-version.ts). This file runs on whatever Node.js is first on PATH, so it stays
// plain JavaScript that old versions parse: a static import of the check only (a module that
// imports nothing), the CLI through import(), no top-level await, no `??` or `?.`.
import { UNSUPPORTED_NODE_EXIT, unsupportedNodeMessage } from '../dist/cli/node-version.js';

const tooOld = unsupportedNodeMessage(process.versions.node);
if (tooOld !== null) {
  process.stderr.write(tooOld);
  process.exitCode = UNSUPPORTED_NODE_EXIT;
} else {
  const io = { stdout: process.stdout, stderr: process.stderr };
  import('../dist/cli/main.js')
    .then((cli) => cli.main(process.argv.slice(2), io))
    .then((code) => {
      process.exitCode = code;
    });
}
