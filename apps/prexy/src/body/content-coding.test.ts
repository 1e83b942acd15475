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

  it('has no codec for identity', () => {
    expect(encoder('identity')).toBeUndefined();
    expect(decoder('identity')).toBeUndefined();
  });
});
