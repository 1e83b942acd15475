/**
 * Credentials: how site keys look, how they are stored and compared.
 *
 * A site key is `rk_<key id>_<secret>`: the id (public, 16 hex chars) finds the stored row, the
 * whole key is compared with the stored SHA-256 in constant time. Keys carry 256 bits of
 * randomness, so a fast hash is as good as a slow one and keeps the snapshot path cheap. Keys
 * travel only in the `Authorization: Bearer` header: never in URLs, never in logs.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const KEY_PATTERN = /^rk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

export interface IssuedKey {
  readonly id: string;
  /** The full key, shown once to the operator. */
  readonly key: string;
  readonly hash: string;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A new random site key and what to store about it. */
export function issueSiteKey(): IssuedKey {
  const id = randomBytes(8).toString('hex');
  const key = `rk_${id}_${randomBytes(32).toString('base64url')}`;
  return { id, key, hash: sha256Hex(key) };
}

/** The key id of a well-formed key, or undefined (without saying why: callers answer 401). */
export function siteKeyId(key: string): string | undefined {
  return KEY_PATTERN.exec(key)?.[1];
}

/** Constant-time equality of two hex digests of the same length. */
export function digestsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Compares a presented secret with the expected one without leaking where they differ. */
export function secretsEqual(presented: string, expected: string): boolean {
  return digestsEqual(sha256Hex(presented), sha256Hex(expected));
}

/** The bearer token of an `Authorization` header value, if that is what it holds. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}
