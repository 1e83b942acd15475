/**
 * Password hashes: scrypt (node:crypto) with a random 16-byte salt per user, compared in
 * constant time. The stored form names its parameters, so they can be raised later without
 * invalidating existing hashes:
 *
 *     scrypt$<N>$<r>$<p>$<salt base64url>$<hash base64url>
 *
 * `crypto.scrypt` runs on libuv's thread pool, so hashing (tens of milliseconds by design) never
 * blocks the event loop, and concurrent logins are bounded by the pool size (4 by default):
 * exactly the cost a credential-stuffing burst makes an app pay, and what the WAF's rate limit on
 * `POST /login` is there to cut short.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

export interface ScryptParams {
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

/**
 * One of OWASP's equivalent scrypt minimums (N=2^14, r=8, p=5): the same work as N=2^17, p=1
 * but 16 MiB of memory per hash instead of 128 MiB, which matters when a burst of logins fills
 * the thread pool. About 0.25 s per hash on a busy 2-core machine.
 */
export const DEFAULT_PARAMS: ScryptParams = { N: 2 ** 14, r: 8, p: 5 };
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

function derive(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(
      password.normalize('NFC'),
      salt,
      KEY_LENGTH,
      { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r },
      (error, key) => (error ? reject(error) : resolve(key)),
    );
  });
}

export async function hashPassword(
  password: string,
  params: ScryptParams = DEFAULT_PARAMS,
): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const hash = await derive(password, salt, params);
  return [
    'scrypt',
    params.N,
    params.r,
    params.p,
    salt.toString('base64url'),
    hash.toString('base64url'),
  ].join('$');
}

/** True when `password` matches `stored`; false for a wrong password or a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![N, r, p].every((n) => Number.isSafeInteger(n) && n > 0)) return false;
  const salt = Buffer.from(parts[4] as string, 'base64url');
  const expected = Buffer.from(parts[5] as string, 'base64url');
  if (expected.length !== KEY_LENGTH) return false;
  const actual = await derive(password, salt, { N, r, p });
  return timingSafeEqual(actual, expected);
}

/**
 * A hash of a random password, to verify against when the e-mail is unknown: the answer then
 * takes as long as for a known user with a wrong password, so timing does not reveal which
 * e-mail addresses have accounts.
 */
export function decoyHash(params: ScryptParams = DEFAULT_PARAMS): Promise<string> {
  return hashPassword(randomBytes(16).toString('base64url'), params);
}
