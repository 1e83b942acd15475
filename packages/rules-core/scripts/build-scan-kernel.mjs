// Compiles src/substitution/scan-kernel/scan.wat (WebAssembly text, the source) into
// scan-wasm.ts (the module's bytes, committed, so that neither the build nor the tests need
// wabt at run time). scan-wasm.test.ts fails when the two disagree: edit the .wat, run
// `npm run build:scan-kernel -w @rampart/rules-core`, commit both.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compileScanWat } from './scan-kernel-wat.mjs';

const dir = fileURLToPath(new URL('../src/substitution/scan-kernel/', import.meta.url));
const bytes = await compileScanWat(readFileSync(`${dir}scan.wat`, 'utf8'));
const base64 = Buffer.from(bytes).toString('base64');
const lines = base64.match(/.{1,96}/g) ?? [];
writeFileSync(
  `${dir}scan-wasm.ts`,
  `// Generated from scan.wat by scripts/build-scan-kernel.mjs: do not edit.
/** The scan kernel's WebAssembly module (${bytes.length} bytes). */
export const SCAN_WASM: Uint8Array = Buffer.from(
${lines.map((l) => `  '${l}'`).join(' +\n')},
  'base64',
);
`,
);
console.log(`scan-wasm.ts: ${bytes.length} bytes`);
