/**
 * Headers across the proxy (RFC 9110 section 7.6): hop-by-hop fields are the connection's, not
 * the message's, so they are dropped in both directions: the fixed list plus every field the
 * `Connection` header names. Towards the upstream, the client's address, the host it asked for
 * and the scheme are added as `Forwarded` (RFC 7239) and the `X-Forwarded-*` trio, appended to
 * what an earlier proxy put there.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

/** Always hop-by-hop (RFC 9110 7.6.1), plus `Proxy-Connection`, which old clients still send. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

export interface ClientSide {
  /** The peer's address as the socket reports it. */
  readonly address: string;
  /** The host the client asked for (normalised). */
  readonly host: string;
  readonly proto: 'http' | 'https';
}

/** The fields `Connection` names, lowercased. */
function connectionTokens(connection: string | string[] | undefined): Set<string> {
  const out = new Set<string>();
  if (connection === undefined) return out;
  for (const value of Array.isArray(connection) ? connection : [connection]) {
    for (const token of value.split(',')) {
      const t = token.trim().toLowerCase();
      if (t !== '') out.add(t);
    }
  }
  return out;
}

/** `headers` without hop-by-hop fields (those listed above and those `Connection` names). */
export function endToEnd<H extends IncomingHttpHeaders>(
  headers: H,
): Record<string, string | string[]> {
  const named = connectionTokens(headers.connection);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name)) continue;
    out[name] = value;
  }
  return out;
}

/** `for=` of RFC 7239: IPv6 addresses are quoted and bracketed. */
function forwardedNode(address: string): string {
  const plain = address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
  return plain.includes(':') ? `"[${plain}]"` : plain;
}

/** `value` after a field's existing values (a list field, RFC 9110 5.3). */
export function appendFieldValue(existing: string | string[] | undefined, value: string): string {
  if (existing === undefined) return value;
  return `${Array.isArray(existing) ? existing.join(', ') : existing}, ${value}`;
}

/**
 * The request headers to send upstream: end-to-end fields of the client's request, `Host` set
 * to `upstreamHost` (the upstream's own, or the client's with `preserveHost`), forwarding
 * fields added. `TE` is dropped like every hop-by-hop field: whether the client takes trailers
 * matters only between prexy and the client, and prexy decides that itself.
 */
export function upstreamRequestHeaders(
  headers: IncomingHttpHeaders,
  client: ClientSide,
  upstreamHost: string,
): Record<string, string | string[]> {
  const out = endToEnd(headers);
  out.host = upstreamHost;
  const node = forwardedNode(client.address);
  out.forwarded = appendFieldValue(
    headers.forwarded,
    `for=${node};host=${JSON.stringify(client.host)};proto=${client.proto}`,
  );
  const plain = node.startsWith('"[') ? node.slice(2, -2) : node;
  out['x-forwarded-for'] = appendFieldValue(headers['x-forwarded-for'], plain);
  out['x-forwarded-host'] = client.host;
  out['x-forwarded-proto'] = client.proto;
  return out;
}

/** Upstream response headers minus hop-by-hop fields, ready for `res.writeHead`. */
export function downstreamResponseHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  return endToEnd(headers);
}
