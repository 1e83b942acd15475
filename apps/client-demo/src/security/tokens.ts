import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A random URL-safe token of `bytes` bytes of entropy. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** Constant-time string equality (false at once when the lengths differ, which is public). */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** HMAC-SHA256 of `data` under `secret`, base64url. */
export function sign(secret: string, data: string): string {
  return createHmac('sha256', secret).update(data).digest('base64url');
}
