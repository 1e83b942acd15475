/**
 * Request ids: the one an upstream proxy or load balancer assigned (`X-Request-Id`) when it is
 * well formed, so a blocked request can be found in every log along the way; otherwise a new
 * UUID. "Well formed" is deliberately narrow (1-128 characters of letters, digits and `._:-+=/`):
 * the id is echoed in a response header, a response body and reports, so it must not carry
 * markup, control characters or unbounded length.
 */
import { randomUUID } from 'node:crypto';

const WELL_FORMED = /^[A-Za-z0-9._:+=/-]{1,128}$/;

export function requestIdOf(header: string | string[] | undefined): string {
  if (typeof header === 'string' && WELL_FORMED.test(header)) return header;
  return randomUUID();
}
