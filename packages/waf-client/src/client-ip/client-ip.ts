/**
 * The client address of a request.
 *
 * The anchor believed `X-Forwarded-For` from anyone (WAF-SPEC defect 7): any client could pick
 * the address the rules saw, walking around every IP block and rate limit. Here:
 *
 * - The starting point is the TCP peer (`socket.remoteAddress`), normalised: IPv4-mapped IPv6
 *   (`::ffff:1.2.3.4`, as a dual-stack socket reports IPv4 clients) becomes `1.2.3.4`, and IPv6
 *   is written in its canonical compressed lower-case form, so one client has one spelling in
 *   rules, rate-limit keys and reports.
 * - `X-Forwarded-For` is read only when that peer is a trusted proxy. Its entries are walked
 *   right to left (the rightmost was appended by the nearest proxy, the only one we can vouch
 *   for); trusted addresses are skipped, and the first untrusted one is the client. If every
 *   entry is trusted, the leftmost is the client.
 * - A malformed entry (not an address, optionally with a port) stops the walk: nothing to its
 *   left can be trusted, so the client is the last trusted hop that handed it over.
 * - `Forwarded` and `X-Real-IP` are ignored: believing them under a different rule would reopen
 *   the spoofing hole.
 *
 * Only the rightmost 32 entries are examined; an attacker cannot make the walk long.
 */
import type { IncomingMessage } from 'node:http';
import { BoundedMemo } from '@rampart/rules-core/evaluator/bounded-memo';
import { formatIpv4, formatIpv6, parseIpInto } from '@rampart/rules-core/ip/address';
import type { TrustedProxies } from './trusted-proxies.js';

const MAX_HOPS = 32;
/** Header values remembered per trusted-proxy set, and the longest one remembered. */
const FORWARDED_MEMO = 2048;
const FORWARDED_MEMO_MAX_LENGTH = 256;
const scratch = new Uint32Array(4);

/** A connection's peer, as {@link resolveClientIp} found it. */
interface Peer {
  /** `socket.remoteAddress` it was computed from (checked, in case a socket is reused). */
  readonly remote: string;
  readonly proxies: TrustedProxies;
  /** Canonical text ('' when the socket had no address). */
  readonly address: string;
  readonly trusted: boolean;
}

/**
 * The peer of each connection, normalised and classified once: a keep-alive connection carries
 * many requests from the same peer. Weak, so it never keeps a closed socket alive; a side table
 * rather than a property on the socket, which would change the hidden class of Node's sockets and
 * slow Node's own socket code down.
 */
const peers = new WeakMap<object, Peer>();

/**
 * Recent `X-Forwarded-For` values and the client each names ('' when it names none, so the peer
 * is the client), per trusted-proxy set. Behind a load balancer every request carries the header
 * and a client's requests repeat it; the answer depends on the header and the set only, so a
 * value seen recently costs one map lookup instead of a walk. Bounded, as the evaluator's memos.
 */
const forwarded = new WeakMap<TrustedProxies, BoundedMemo<string>>();
/** The set asked for last and its memo: a process has one set, so this spares the WeakMap. */
let lastProxies: TrustedProxies | null = null;
let lastMemo: BoundedMemo<string> | null = null;

/** The client address of `req` (see the module comment); '' when the socket has none. */
export function resolveClientIp(req: IncomingMessage, proxies: TrustedProxies): string {
  const peer = peerOf(req, proxies);
  if (!peer.trusted) return peer.address;
  const header = req.headers['x-forwarded-for'];
  if (header === undefined) return peer.address;
  const text = Array.isArray(header) ? header.join(',') : header;
  return forwardedClient(text, proxies) || peer.address;
}

/** The client `header` names for `proxies` ('' for none), remembered for short headers. */
function forwardedClient(header: string, proxies: TrustedProxies): string {
  if (header.length > FORWARDED_MEMO_MAX_LENGTH) return clientInHeader(header, proxies);
  const memo = forwardedMemo(proxies);
  let client = memo.get(header);
  if (client === undefined) {
    client = clientInHeader(header, proxies);
    memo.set(header, client);
  }
  return client;
}

function forwardedMemo(proxies: TrustedProxies): BoundedMemo<string> {
  if (proxies === lastProxies && lastMemo !== null) return lastMemo;
  let memo = forwarded.get(proxies);
  if (memo === undefined) {
    memo = new BoundedMemo<string>(FORWARDED_MEMO);
    forwarded.set(proxies, memo);
  }
  lastProxies = proxies;
  lastMemo = memo;
  return memo;
}

function peerOf(req: IncomingMessage, proxies: TrustedProxies): Peer {
  const socket = req.socket as object | undefined;
  const remote = req.socket?.remoteAddress ?? '';
  const known = socket === undefined ? undefined : peers.get(socket);
  if (known !== undefined && known.remote === remote && known.proxies === proxies) return known;
  const address = normalizeIp(remote);
  const trusted = address !== '' && !proxies.empty && proxies.classify(address).trusted;
  const peer: Peer = { remote, proxies, address, trusted };
  if (socket !== undefined) peers.set(socket, peer);
  return peer;
}

/**
 * The client `header` names, walking right to left: the first untrusted address, or the
 * leftmost when all are trusted, or the last one before a malformed entry; '' when the rightmost
 * usable entry is already malformed (the trusted peer that sent it is then the client).
 */
function clientInHeader(header: string, proxies: TrustedProxies): string {
  let client = '';
  let end = header.length;
  for (let hops = 0; hops < MAX_HOPS && end > 0; hops++) {
    const comma = header.lastIndexOf(',', end - 1);
    const entry = stripPort(header.slice(comma + 1, end).trim());
    end = comma; // -1 when this was the leftmost entry
    if (entry === '' && comma >= 0) continue; // tolerate "a, , b" as proxies sometimes emit it
    // One parse per entry: its canonical text and its trust both come from `scratch`.
    const family = parseIpInto(entry, scratch);
    if (family !== 4 && family !== 6) return client; // malformed: stop at the last trusted hop
    client = canonical(family);
    if (!proxies.containsParsed(family, scratch)) return client;
  }
  return client;
}

/**
 * The canonical text of an address: IPv4 dotted quad (also for IPv4-mapped IPv6), IPv6
 * compressed lower case; '' when `text` is not an address.
 */
export function normalizeIp(text: string): string {
  const family = parseIpInto(text, scratch);
  return family === 4 || family === 6 ? canonical(family) : '';
}

/**
 * The canonical text of the address just parsed into `scratch` as `family`. Always a new string,
 * even for a dotted quad that is already canonical: an entry sliced from a long
 * `X-Forwarded-For` would keep the whole header alive in every rate-limit key and memo that holds
 * the address.
 */
function canonical(family: 4 | 6): string {
  return family === 4 ? formatIpv4(scratch[0] as number) : formatIpv6(scratch);
}

/** `1.2.3.4:80` -> `1.2.3.4`, `[2001:db8::1]:443` -> `2001:db8::1`, anything else unchanged. */
function stripPort(entry: string): string {
  if (entry.startsWith('[')) {
    const close = entry.indexOf(']');
    return close > 0 ? entry.slice(1, close) : entry;
  }
  const colon = entry.indexOf(':');
  if (colon > 0 && colon === entry.lastIndexOf(':') && entry.indexOf('.') !== -1)
    return entry.slice(0, colon);
  return entry;
}
