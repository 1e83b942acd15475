import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXIT } from './cli-error.js';
import {
  MINIMUM_NODE_TEXT,
  UNSUPPORTED_NODE_EXIT,
  unsupportedNodeMessage,
} from './node-version.js';

const engines = (relative: string) =>
  (
    JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as {
      engines: { node: string };
    }
  ).engines.node;

describe('unsupportedNodeMessage', () => {
  it.each(['22.12.0', '22.12.1', '22.13.0', '23.0.0', '24.22.3', '100.0.0', 'v24.0.0'])(
    'lets Node.js %s run the CLI',
    (version) => {
      expect(unsupportedNodeMessage(version)).toBeNull();
    },
  );

  it.each(['22.11.0', '22.0.0', '21.7.3', '20.20.2', '18.19.1', '12.22.9', '0.10.48', 'v20.0.0'])(
    'refuses Node.js %s',
    (version) => {
      expect(unsupportedNodeMessage(version)).toContain(
        `Node.js ${version.replace(/^v/, '')} is too old`,
      );
    },
  );

  it('compares minor versions as numbers, not as text', () => {
    expect(unsupportedNodeMessage('22.9.0')).not.toBeNull();
    expect(unsupportedNodeMessage('22.100.0')).toBeNull();
  });

  it('lets through a version it cannot read rather than refuse a Node.js that may work', () => {
    for (const version of ['', 'nightly', '24', 'x22.1.0']) {
      expect(unsupportedNodeMessage(version)).toBeNull();
    }
  });

  it('says what is needed, why, and what to run instead, in lines that fit a terminal', () => {
    const message = unsupportedNodeMessage('20.20.2') ?? '';
    expect(message).toMatch(/^rampart: /);
    expect(message).toContain(`needs Node.js >= ${MINIMUM_NODE_TEXT}`);
    expect(message).toContain('better-sqlite3');
    expect(message).toContain('npm run rampart -- ');
    expect(message).toContain('first on PATH');
    expect(message.endsWith('\n')).toBe(true);
    for (const line of message.split('\n')) expect(line.length).toBeLessThanOrEqual(100);
  });

  it('exits with its own code, listed with the other exit codes', () => {
    expect(EXIT.unsupportedNode).toBe(UNSUPPORTED_NODE_EXIT);
    const others = Object.entries(EXIT).filter(([name]) => name !== 'unsupportedNode');
    expect(others.map(([, code]) => code)).not.toContain(UNSUPPORTED_NODE_EXIT);
  });

  it('holds the same minimum as the engines field of the package and of the repository', () => {
    expect(engines('../../package.json')).toBe(`>=${MINIMUM_NODE_TEXT}`);
    expect(engines('../../../../package.json')).toBe(`>=${MINIMUM_NODE_TEXT}`);
  });
});
