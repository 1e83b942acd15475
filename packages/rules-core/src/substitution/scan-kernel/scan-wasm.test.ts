import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileScanWat } from '../../../scripts/scan-kernel-wat.mjs';
import { SCAN_WASM } from './scan-wasm.js';

describe('scan-wasm.ts', () => {
  it('is scan.wat compiled (run `npm run build:scan-kernel -w @rampart/rules-core` after editing it)', async () => {
    const text = readFileSync(new URL('./scan.wat', import.meta.url), 'utf8');
    const bytes = await compileScanWat(text);
    expect(Buffer.from(SCAN_WASM).equals(Buffer.from(bytes))).toBe(true);
  });
});
