#!/usr/bin/env node
/**
 * Installs the optional benchmark peer `re2` into .bench-cache/peers (git-ignored), once.
 *
 * re2 is a native module that takes minutes to compile on a small machine; as a dependency it
 * would make every `npm ci` (and so every CI run) pay for a benchmark peer that no test uses.
 * When the install fails, bench:substitute runs without it and says so.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const RE2_VERSION = '1.27.1';
const peers = join(dirname(fileURLToPath(import.meta.url)), '..', '.bench-cache', 'peers');

function loads() {
  const probe = spawnSync(process.execPath, [
    '-e',
    `require(${JSON.stringify(join(peers, 'node_modules', 're2'))})`,
  ]);
  return probe.status === 0;
}

if (!loads()) {
  mkdirSync(peers, { recursive: true });
  // Install scripts are allowed through package.json: npm 11 refuses --allow-scripts in a
  // project-scoped install ("EALLOWSCRIPTS"), and re2 needs its script to build.
  writeFileSync(
    join(peers, 'package.json'),
    `${JSON.stringify({ name: 'rampart-bench-peers', private: true, allowScripts: { [`re2@${RE2_VERSION}`]: true } }, null, 2)}\n`,
  );
  process.stderr.write(
    `bench: installing re2@${RE2_VERSION} into ${peers} (native build, a few minutes, once)\n`,
  );
  const install = spawnSync(
    'npm',
    ['install', '--no-audit', '--no-fund', '--loglevel=error', `re2@${RE2_VERSION}`],
    { cwd: peers, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  if (install.status !== 0 || !loads()) {
    process.stderr.write('bench: re2 could not be installed; the benchmark runs without it\n');
  }
}
