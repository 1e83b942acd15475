#!/usr/bin/env node
/**
 * Checks that Node can run the given TypeScript files by type stripping alone, as it runs the
 * benchmarks (`node bench/x.ts`): no enums, namespaces or parameter properties, which `tsc`
 * accepts but Node refuses at load time. Follows relative `.ts` imports, so a file the
 * benchmarks import from elsewhere is checked too.
 *
 *   node scripts/check-strippable.mjs DIR_OR_FILE...   exit 1 naming each file that fails
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { dirname, join, resolve } from 'node:path';

// stripTypeScriptTypes is marked experimental in Node 24; its one warning per run is noise here.
process.removeAllListeners('warning');

const IMPORT = /(?:from\s+|import\s*\(\s*|new URL\(\s*)'(\.{1,2}\/[^']+\.ts)'/g;

function filesOf(path) {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true })
    .map((name) => join(path, String(name)))
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'));
}

const pending = process.argv.slice(2).flatMap((arg) => filesOf(resolve(arg)));
const seen = new Set();
const failures = [];
while (pending.length > 0) {
  const file = pending.pop();
  if (seen.has(file)) continue;
  seen.add(file);
  const source = readFileSync(file, 'utf8');
  try {
    stripTypeScriptTypes(source, { mode: 'strip' });
  } catch (error) {
    failures.push(`${file}: ${error.message.split('\n')[0]}`);
  }
  for (const match of source.matchAll(IMPORT)) pending.push(resolve(dirname(file), match[1]));
}
if (failures.length > 0) {
  process.stderr.write(`not runnable by Node's type stripping:\n  ${failures.join('\n  ')}\n`);
  process.exit(1);
}
