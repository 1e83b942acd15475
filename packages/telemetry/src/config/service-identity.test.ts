import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appDefaults, DEFAULT_METRICS_PORT, fromManifest } from './service-identity.js';

describe('appDefaults', () => {
  const root = mkdtempSync(join(tmpdir(), 'identity-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('reads the package.json nearest to the entry point', () => {
    writeFileSync(
      join(root, 'package.json'),
      JSON.stringify({ name: '@rampart/hub', version: '0.4.0', rampart: { metricsPort: 9470 } }),
    );
    mkdirSync(join(root, 'dist'), { recursive: true });
    expect(appDefaults(join(root, 'dist', 'main.js'))).toEqual({
      packageName: '@rampart/hub',
      version: '0.4.0',
      metricsPort: 9470,
    });
  });

  it('falls back when there is no entry point', () => {
    expect(appDefaults(undefined).packageName).toBe('unknown_service:node');
  });
});

describe('fromManifest', () => {
  it('ignores what is not a usable value', () => {
    expect(fromManifest('not json')).toMatchObject({ metricsPort: DEFAULT_METRICS_PORT });
    expect(fromManifest('{"name":"a","rampart":{"metricsPort":"80"}}')).toEqual({
      packageName: 'a',
      version: '0.0.0',
      metricsPort: DEFAULT_METRICS_PORT,
    });
    expect(fromManifest('{"rampart":{"metricsPort":70000}}').metricsPort).toBe(
      DEFAULT_METRICS_PORT,
    );
  });
});
