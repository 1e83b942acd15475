import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { compileRuleSet } from './rule-set.js';
import { createSubstitutionStream } from './transform.js';

describe('SubstitutionStream', () => {
  it('pipes a chunked body through the rules and exposes statistics at the end', async () => {
    const set = compileRuleSet([
      { pattern: 'http://old\\.example', replacement: 'https://new.example', flags: 'g' },
      { pattern: 'UA-\\d+', replacement: 'UA-0', flags: '' },
    ]);
    const stream = createSubstitutionStream(set);
    const chunks: Buffer[] = [];
    const body = ['<a href="http://old.ex', 'ample/x">UA-12', '34 UA-99 http://old.example</a>'];
    await pipeline(Readable.from(body.map((s) => Buffer.from(s))), stream, async (source) => {
      for await (const chunk of source) chunks.push(chunk as Buffer);
    });
    expect(Buffer.concat(chunks).toString()).toBe(
      '<a href="https://new.example/x">UA-0 UA-99 https://new.example</a>',
    );
    expect(stream.stats.rules.map((r) => [r.matches, r.replacements])).toEqual([
      [2, 2],
      [2, 1],
    ]);
  });
});
