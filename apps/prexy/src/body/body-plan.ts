/**
 * Whether a response's body is substituted, and how its headers change when it is
 * (SUBSTITUTION-SPEC 15-17). Pure functions of the request and the upstream's response head.
 *
 * Substituted only when all hold: the path has rules; the request is not HEAD and asks for no
 * range; the status has a body and is not a partial answer (not 1xx, 204, 206 or 304); the
 * `Content-Length`, if any, is not 0; the media type (lowercased, without parameters) is in the
 * route's list (`*` = any); and the body's coding is one prexy decodes. Anything else passes
 * through with its headers unchanged.
 *
 * A substituted response loses `Content-Length` (it is sent chunked) and, unless the route keeps
 * it, `Last-Modified`; a strong `ETag` is marked weak (`W/`), since the bytes changed but their
 * meaning did not (nginx's module leaves it strong, which lets a cache serve byte ranges of one
 * body against another). It is encoded again with the upstream's coding if the client accepts
 * that, else sent as identity; since that choice follows the client's `Accept-Encoding`, such
 * a response says so in `Vary` (whether or not the upstream did), so no cache downstream hands
 * one client's coding to another.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeader, OutgoingHttpHeaders } from 'node:http';
import { accepts, type Coding, responseCoding } from './content-coding.js';

export type BodyPlan =
  | { readonly substitute: false }
  | { readonly substitute: true; readonly from: Coding; readonly to: Coding };

export interface PlanInput {
  readonly method: string;
  readonly requestHeaders: IncomingHttpHeaders;
  readonly status: number;
  readonly responseHeaders: IncomingHttpHeaders;
  readonly hasRules: boolean;
  readonly contentTypes: readonly string[];
}

const PASS: BodyPlan = { substitute: false };

/** The media type of a `Content-Type`, lowercased and without parameters. */
export function mediaType(contentType: string | string[] | undefined): string | undefined {
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  if (value === undefined) return undefined;
  const type = value.split(';', 1)[0]?.trim().toLowerCase();
  return type === '' ? undefined : type;
}

export function planBody(input: PlanInput): BodyPlan {
  const { status, responseHeaders: h } = input;
  if (!input.hasRules || input.method === 'HEAD') return PASS;
  if (input.requestHeaders.range !== undefined) return PASS;
  if (status < 200 || status === 204 || status === 206 || status === 304) return PASS;
  if (h['content-length'] !== undefined && Number(h['content-length']) === 0) return PASS;
  const type = mediaType(h['content-type']);
  if (
    !input.contentTypes.includes('*') &&
    (type === undefined || !input.contentTypes.includes(type))
  ) {
    return PASS;
  }
  const from = responseCoding(h['content-encoding']);
  if (from === undefined) return PASS;
  const to =
    from !== 'identity' && accepts(input.requestHeaders['accept-encoding'], from)
      ? from
      : 'identity';
  return { substitute: true, from, to };
}

/** The response headers of a substituted body, from the upstream's (already end-to-end). */
export function substitutedHeaders(
  headers: OutgoingHttpHeaders,
  plan: Extract<BodyPlan, { substitute: true }>,
  keepLastModified: boolean,
): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = { ...headers };
  delete out['content-length'];
  if (!keepLastModified) delete out['last-modified'];
  // Typed as one string, but a field sent on several lines comes as an array (undici).
  const fields: Record<string, OutgoingHttpHeader | undefined> = out;
  const etag = fields.etag;
  const weak = (tag: string) => (tag.startsWith('W/') ? tag : `W/${tag}`);
  if (typeof etag === 'string') fields.etag = weak(etag);
  else if (Array.isArray(etag)) fields.etag = etag.map(weak);
  if (plan.to === 'identity') delete out['content-encoding'];
  else out['content-encoding'] = plan.to;
  if (plan.from !== 'identity') out.vary = varyOnAcceptEncoding(out.vary);
  return out;
}

/** `Vary` naming `Accept-Encoding`, added to what the upstream's says (unless it varies on `*`). */
function varyOnAcceptEncoding(vary: OutgoingHttpHeader | undefined): string {
  const value = Array.isArray(vary) ? vary.join(', ') : vary === undefined ? '' : String(vary);
  const names = value.split(',').map((name) => name.trim().toLowerCase());
  if (names.includes('*') || names.includes('accept-encoding')) return value;
  return value.trim() === '' ? 'Accept-Encoding' : `${value}, Accept-Encoding`;
}
