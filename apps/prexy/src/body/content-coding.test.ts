import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  accepts,
  type Coding,
  decoder,
  encoder,
  parseAcceptEncoding,
  responseCoding,
  upstreamAcceptEncoding,
} from './content-coding.js';

describe('Accept-Encoding', () => {
  it('parses codings with q-values, x-gzip as gzip, out-of-range q clamped', () => {
    expect([...parseAcceptEncoding('GZIP;q=0.5, br, x-gzip;q=2, *;q=0')]).toEqual([
      ['gzip', 1],
      ['br', 1],
      ['*', 0],
    ]);
  });

  it('accepts identity unless refused; other codings only when named or by *', () => {
    expect(accepts(undefined, 'identity')).toBe(true);
    expect(accepts('identity;q=0', 'identity')).toBe(false);
    expect(accepts(undefined, 'gzip')).toBe(false);
    expect(accepts('*', 'br')).toBe(true);
    expect(accepts('br;q=0, *', 'br')).toBe(false);
  });

  it('asks the upstream only for codings prexy decodes, best first', () => {
    expect(upstreamAcceptEncoding('gzip, zstd, br')).toBe('br, gzip');
    expect(upstreamAcceptEncoding('zstd')).toBeUndefined();
    expect(upstreamAcceptEncoding(undefined)).toBeUndefined();
  });

  it('reads the response coding; several or unknown ones are not decodable', () => {
    expect(responseCoding(undefined)).toBe('identity');
    expect(responseCoding('identity')).toBe('identity');
    expect(responseCoding('X-Gzip')).toBe('gzip');
    expect(responseCoding('br')).toBe('br');
    expect(responseCoding('gzip, br')).toBeUndefined();
    expect(responseCoding('compress')).toBeUndefined();
  });
});

describe('streaming codecs', () => {
  const roundTrip = async (coding: Coding, chunks: readonly Uint8Array[]): Promise<string> => {
    const encode = encoder(coding);
    const decode = decoder(coding);
    if (encode === undefined || decode === undefined) throw new Error(`${coding} has no codec`);
    const source = Readable.from(chunks.map((c) => Buffer.from(c)));
    const out = text(decode);
    await pipeline(source, encode, decode);
    return out;
  };

  it('decode(encode(bytes)) is the bytes, for any chunking, in every coding', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Coding>('gzip', 'deflate', 'br'),
        fc.array(
          fc.string({ maxLength: 300 }).map((s) => new TextEncoder().encode(s)),
          {
            maxLength: 12,
          },
        ),
        async (coding, chunks) => {
          const whole = Buffer.concat(chunks.map((c) => Buffer.from(c))).toString();
          expect(await roundTrip(coding, chunks)).toBe(whole);
        },
      ),
      { numRuns: 60 },
    );
  });

  /** `bytes` cut at the given offsets (any order, duplicates allowed). */
  const cutAt = (bytes: Buffer, cuts: readonly number[]): Buffer[] => {
    const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
    return [...at, bytes.length].map((end, i) => bytes.subarray(i === 0 ? 0 : at[i - 1], end));
  };
  /** Everything `stream` puts out for `chunks` (read to its end, not only to its finish). */
  const run = async (stream: ReturnType<typeof decoder>, chunks: readonly Buffer[]) => {
    if (stream === undefined) throw new Error('no codec');
    const out: Buffer[] = [];
    await pipeline(Readable.from(chunks), stream, async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) out.push(chunk);
    });
    return Buffer.concat(out);
  };

  it('round-trips any bytes, the plain body and the coded stream each cut anywhere', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Coding>('gzip', 'deflate', 'br'),
        fc.uint8Array({ maxLength: 4000 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        async (coding, bytes, plainCuts, codedCuts) => {
          const plain = Buffer.from(bytes);
          const coded = await run(encoder(coding), cutAt(plain, plainCuts));
          expect((await run(decoder(coding), cutAt(coded, codedCuts))).equals(plain)).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('decodes an empty body to an empty body, and still fails on a cut stream', async () => {
    for (const coding of ['gzip', 'deflate', 'br'] as const) {
      expect((await run(decoder(coding), [])).length, coding).toBe(0);
      const coded = await run(encoder(coding), [Buffer.from('<p>a body</p>'.repeat(20))]);
      await expect(
        run(decoder(coding), [coded.subarray(0, coded.length - 5)]),
        coding,
      ).rejects.toThrow();
    }
  });

  it('has no codec for identity', () => {
    expect(encoder('identity')).toBeUndefined();
    expect(decoder('identity')).toBeUndefined();
  });
});
