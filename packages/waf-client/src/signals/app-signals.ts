/**
 * `rampart.signal(req, kind, { account })`: what only the app knows about a request, such as a
 * failed login, reported to the hub where the credential-stuffing detectors read it.
 *
 * - Signals are never sampled: every one is queued and sent with the next batch, within
 *   {@link URGENT_FLUSH_MS} (the hub acts on them in seconds).
 * - Nothing leaves the process in clear but the address, path and user agent the request had
 *   anyway. The account is sent only as HMAC-SHA256 under the site's signal key, which the hub
 *   builds into the snapshot: the hub can group failures by account, and look up one account an
 *   operator names, but a report read on the way cannot be reversed into account names. Before
 *   the first snapshot (or from a hub without keys) the account is left out, never sent in clear.
 * - Accounts are compared after trimming and lower-casing, so `Alice@Example.com ` and
 *   `alice@example.com` count as one account (an attacker varying case would otherwise look like
 *   many).
 * - It costs the request a queue push (and one HMAC when an account is given); it never throws
 *   for a broken request, and never waits.
 */
import { createHmac, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { resolveClientIp } from '../client-ip/client-ip.js';
import type { TrustedProxies } from '../client-ip/trusted-proxies.js';
import type { ReportFlusher } from '../reports/report-flusher.js';
import {
  REPORT_TEXT_LIMITS,
  type ReportQueue,
  reportText,
  type SignalKind,
} from '../reports/report-queue.js';
import type { Stats } from '../stats/stats.js';
import type { ActiveSnapshot } from '../sync/active-snapshot.js';

export type { SignalKind };

/** The kinds a hub understands. */
export const SIGNAL_KINDS: readonly SignalKind[] = ['login_failed', 'login_succeeded'];

export interface SignalDetails {
  /** The account the login was for (user name or e-mail), as the user typed it. */
  readonly account?: string;
}

/** The account's digest under the site's hex `signalKey`: 64 lower-case hex digits. */
export function accountDigest(signalKey: string, account: string): string {
  return createHmac('sha256', Buffer.from(signalKey, 'hex'))
    .update(account.trim().toLowerCase())
    .digest('hex');
}

export class AppSignals {
  constructor(
    private readonly proxies: TrustedProxies,
    private readonly active: ActiveSnapshot,
    private readonly queue: ReportQueue,
    private readonly flusher: ReportFlusher | null,
    private readonly stats: Stats,
  ) {}

  /** Queues the signal; throws only for a kind the hub does not know (a programming error). */
  signal(req: IncomingMessage, kind: SignalKind, details: SignalDetails = {}): void {
    if (!SIGNAL_KINDS.includes(kind))
      throw new TypeError(
        `rampart.signal: unknown kind "${String(kind)}" (one of ${SIGNAL_KINDS.join(', ')})`,
      );
    this.stats.reports.signals++;
    if (this.flusher === null || this.flusher.disabled) {
      this.stats.reports.dropped++;
      return;
    }
    const info = req.rampart;
    const key = this.active.current?.snapshot.signalKey ?? null;
    const account =
      typeof details.account === 'string' && details.account.trim() !== '' && key !== null
        ? accountDigest(key, details.account)
        : null;
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const accepted = this.queue.pushSignal({
      kind,
      requestId: info?.requestId ?? randomUUID(),
      time: Date.now(),
      ip: info?.clientIp || this.clientIp(req),
      path: reportText(q === -1 ? url : url.slice(0, q), REPORT_TEXT_LIMITS.path),
      userAgent: reportText(req.headers['user-agent'] ?? '', REPORT_TEXT_LIMITS.userAgent),
      account,
    });
    if (!accepted) {
      this.stats.reports.dropped++;
      return;
    }
    this.flusher.notifyUrgent();
  }

  private clientIp(req: IncomingMessage): string {
    try {
      return resolveClientIp(req, this.proxies);
    } catch {
      return req.socket?.remoteAddress ?? '';
    }
  }
}
