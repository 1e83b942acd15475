/**
 * Automatic blocks as rules (what the snapshot builder adds to a site's own rules), and the
 * check that keeps a detector off what an allow rule covers. Pure.
 */
import { type IpAddress, ipToBigInt, parseIp } from '@rampart/rules-core/ip/address';
import { type IpRange, parseIpRange, rangeContains } from '@rampart/rules-core/ip/range';
import type { Rule } from '@rampart/rules-core/rules/model';
import type { Labeler } from '../reports/report-store.js';
import type { DetectorAction, DetectorMode } from './detection-settings.js';
import type { BlockSubject } from './detectors.js';

/** Rule ids of automatic blocks start with this (a site's own rules should not). */
export const AUTOMATIC_RULE_PREFIX = 'auto:';

/** What `rate_limit` allows an address an automatic rule limits: this many requests a minute. */
export const AUTOMATIC_RATE_LIMIT = Object.freeze({ limit: 30, windowSeconds: 60 });

export interface AutomaticBlock {
  readonly id: string;
  readonly detector: string;
  readonly subject: BlockSubject;
  readonly mode: DetectorMode;
  readonly action: DetectorAction;
  readonly expiresAt: string;
}

/** The rule that enforces `block` until it expires. */
export function ruleOf(block: AutomaticBlock): Rule {
  const base = {
    id: `${AUTOMATIC_RULE_PREFIX}${block.id}`,
    mode: block.mode,
    expiresAt: block.expiresAt,
    note: `automatic: ${block.detector}`,
  };
  const s = block.subject;
  switch (s.kind) {
    case 'ip':
      return block.action === 'rate_limit'
        ? {
            ...base,
            type: 'rate_limit',
            when: [],
            ranges: s.addresses,
            key: { kind: 'ip' },
            ...AUTOMATIC_RATE_LIMIT,
          }
        : { ...base, type: 'ip', action: 'block', ranges: s.addresses };
    case 'asn':
      return { ...base, type: 'asn', action: 'block', asns: [s.asn] };
    case 'country':
      return { ...base, type: 'country', action: 'block', countries: [s.country] };
    case 'header':
      return block.action === 'rate_limit'
        ? {
            ...base,
            type: 'rate_limit',
            when: [{ field: 'header', name: s.name, match: 'exact', value: s.value }],
            key: { kind: 'header', name: s.name },
            ...AUTOMATIC_RATE_LIMIT,
          }
        : {
            ...base,
            type: 'pattern',
            action: 'block',
            when: [{ field: 'header', name: s.name, match: 'exact', value: s.value }],
          };
  }
}

/** A subject with what an allow rule covers taken out, and the rules that covered it. */
export interface Coverage {
  /** What may still be blocked; null when nothing is left. */
  readonly subject: BlockSubject | null;
  /** Ids of the allow rules that covered some or all of it. */
  readonly allowedBy: readonly string[];
}

/**
 * Removes from `subject` whatever an enforcing, unexpired allow rule of `rules` covers: an
 * address inside an allowed range, country or AS; an AS or country that is allowed itself.
 */
export function uncovered(
  subject: BlockSubject,
  rules: readonly Rule[],
  label: Labeler,
  now: number,
): Coverage {
  const allows = rules.filter(
    (r) =>
      r.mode === 'enforce' &&
      'action' in r &&
      r.action === 'allow' &&
      (r.expiresAt === undefined || Date.parse(r.expiresAt) > now),
  );
  if (allows.length === 0) return { subject, allowedBy: [] };
  const allowedBy = new Set<string>();
  const covers = (match: (r: Rule) => boolean) => {
    const rule = allows.find(match);
    if (rule) allowedBy.add(rule.id);
    return rule !== undefined;
  };
  switch (subject.kind) {
    case 'ip': {
      const ranges = allows.flatMap((r) =>
        r.type === 'ip'
          ? r.ranges.flatMap((text) => parsed(text).map((range) => ({ id: r.id, range })))
          : [],
      );
      const left = subject.addresses.filter((ip) => {
        const address = parsedAddress(ip);
        if (address === null) return false; // not an address: never blocked
        const value = ipToBigInt(address);
        const inRange = ranges.find((e) => rangeContains(e.range, address.family, value));
        if (inRange) {
          allowedBy.add(inRange.id);
          return false;
        }
        const { asn, country } = label(ip);
        if (asn !== null && covers((r) => r.type === 'asn' && r.asns.includes(asn))) return false;
        if (
          country !== null &&
          covers((r) => r.type === 'country' && r.countries.includes(country))
        )
          return false;
        return true;
      });
      return {
        subject: left.length > 0 ? { kind: 'ip', addresses: left } : null,
        allowedBy: [...allowedBy],
      };
    }
    case 'asn':
      return covers((r) => r.type === 'asn' && r.asns.includes(subject.asn))
        ? { subject: null, allowedBy: [...allowedBy] }
        : { subject, allowedBy: [] };
    case 'country':
      return covers((r) => r.type === 'country' && r.countries.includes(subject.country))
        ? { subject: null, allowedBy: [...allowedBy] }
        : { subject, allowedBy: [] };
    case 'header':
      return { subject, allowedBy: [] };
  }
}

function parsed(text: string): IpRange[] {
  try {
    return parseIpRange(text);
  } catch {
    return [];
  }
}

function parsedAddress(ip: string): IpAddress | null {
  try {
    return parseIp(ip);
  } catch {
    return null;
  }
}
