/**
 * Content codings across the proxy (SUBSTITUTION-SPEC 17). nginx's module skips encoded bodies;
 * prexy decodes gzip, deflate and br from the upstream, substitutes, and encodes again with the
 * same coding for the client (which asked for it), all as streams.
 *
 * Towards the upstream, the client's `Accept-Encoding` is narrowed to the codings prexy can
 * decode, so an upstream never answers in one prexy would have to pass through unsubstituted.
 * Prexy never compresses a body the upstream sent plain: that stays the upstream's decision.
 */
import type { Transform } from 'node:stream';
import zlib from 'node:zlib';

export type Coding = 'identity' | 'gzip' | 'deflate' | 'br';
const DECODABLE: readonly Coding[] = ['br', 'gzip', 'deflate'];

/** Codings and their q-values (RFC 9110 12.5.3), lowercased; `x-gzip` counts as `gzip`. */
export function parseAcceptEncoding(header: string | undefined): Map<string, number> {
  const out = new Map<string, number>();
  if (header === undefined) return out;
  for (const part of header.split(',')) {
    const [name, ...params] = part.split(';');
    const coding = name?.trim().toLowerCase();
    if (!coding) continue;
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (m) q = Math.min(1, Math.max(0, Number(m[1])));
    }
    out.set(coding === 'x-gzip' ? 'gzip' : coding, Number.isNaN(q) ? 0 : q);
  }
  return out;
}

/** Whether the client takes `coding` (identity is acceptable unless refused explicitly). */
export function accepts(header: string | undefined, coding: Coding): boolean {
  const accepted = parseAcceptEncoding(header);
  const q = accepted.get(coding) ?? accepted.get('*');
  if (coding === 'identity') return q === undefined || q > 0;
  return q !== undefined && q > 0;
}

/**
 * The `Accept-Encoding` to send upstream: the client's acceptable codings that prexy decodes,
 * best first; undefined (identity only) when there are none.
 */
export function upstreamAcceptEncoding(header: string | undefined): string | undefined {
  const usable = DECODABLE.filter((c) => accepts(header, c));
  return usable.length > 0 ? usable.join(', ') : undefined;
}

/**
 * The coding of a response from its `Content-Encoding`; undefined when prexy cannot decode it
 * (an unknown coding, or several applied one over another), so the body must pass untouched.
 */
export function responseCoding(header: string | string[] | undefined): Coding | undefined {
  if (header === undefined) return 'identity';
  const codings = (Array.isArray(header) ? header.join(',') : header)
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return 'identity';
  if (codings.length > 1) return undefined;
  const [only] = codings;
  if (only === 'gzip' || only === 'x-gzip') return 'gzip';
  if (only === 'deflate' || only === 'br') return only;
  return undefined;
}

/**
 * A streaming decoder for `coding` (undefined for identity). An empty body decodes to an empty
 * body: upstreams label empty bodies with their coding too, and zlib would fail on the missing
 * stream header ("unexpected end of file") before prexy had sent the response's status line.
 * A body cut inside its compressed stream still fails.
 */
export function decoder(coding: Coding): Transform | undefined {
  switch (coding) {
    case 'gzip':
      return emptyDecodesEmpty(zlib.createGunzip());
    case 'deflate':
      return emptyDecodesEmpty(zlib.createInflate());
    case 'br':
      return emptyDecodesEmpty(zlib.createBrotliDecompress());
    case 'identity':
      return undefined;
  }
}

function emptyDecodesEmpty(decode: Transform): Transform {
  let empty = true;
  const transform = decode._transform.bind(decode);
  const flush = decode._flush?.bind(decode);
  decode._transform = (chunk: Buffer, encoding, done) => {
    if (chunk.length > 0) empty = false;
    transform(chunk, encoding, done);
  };
  decode._flush = (done) => {
    if (empty || flush === undefined) done();
    else flush(done);
  };
  return decode;
}

/**
 * A streaming encoder for `coding` (undefined for identity). Levels favour speed, as dynamic
 * content wants: gzip and deflate at 4 (nginx's default is 1), brotli at quality 4.
 */
export function encoder(coding: Coding): Transform | undefined {
  switch (coding) {
    case 'gzip':
      return zlib.createGzip({ level: 4 });
    case 'deflate':
      return zlib.createDeflate({ level: 4 });
    case 'br':
      return zlib.createBrotliCompress({
        params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 },
      });
    case 'identity':
      return undefined;
  }
}
