/**
 * Automatic blocks: what the detectors publish, each a rule with an expiry and its evidence.
 *
 * - A finding becomes a block unless a standing block of the same detector already covers its
 *   subject (claims in Redis, across hub instances) or an allow rule covers it: then it is
 *   recorded with `allowedBy` and never built into a snapshot.
 * - A new block bumps the site's revision and asks for a build at once (coalesced with any
 *   other by the build queue), so clients enforce it after one build and one push.
 * - Expired and revoked blocks drop out of the next snapshot: revoking rebuilds at once, and a
 *   sweep (every few seconds, on the ingestion queue's scheduler) rebuilds the sites whose
 *   blocks expired. Clients stop enforcing a block at its expiry even before that build (the
 *   rule carries `expiresAt`).
 */
import { randomUUID } from 'node:crypto';
import { ConflictException, Injectable, Logger, NotFoundException } from '@nestjs/common';
import type { Rule } from '@rampart/rules-core/rules/model';
import { BuildQueueService } from '../builds/build-queue.service.js';
import { DatabaseService } from '../database/database.service.js';
import type { AutomaticBlocksTable } from '../database/schema.js';
import type { Labeler } from '../reports/report-store.js';
import { RulesService } from '../rules/rules.service.js';
import { SitesService } from '../sites/sites.service.js';
import { AUTOMATIC_RULE_PREFIX, ruleOf, uncovered } from './automatic-rules.js';
import { DetectionRedis } from './detection-redis.js';
import type { DetectorAction, DetectorMode } from './detection-settings.js';
import type { BlockSubject, Evidence, Finding } from './detectors.js';

export type BlockStatus = 'active' | 'expired' | 'revoked' | 'allowed';

export interface AutomaticBlockView {
  readonly id: string;
  /** The rule id in the snapshot (`auto:<id>`). */
  readonly ruleId: string;
  readonly detector: string;
  readonly subject: BlockSubject;
  readonly mode: DetectorMode;
  readonly action: DetectorAction;
  readonly status: BlockStatus;
  readonly evidence: Evidence;
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly revokedAt: string | null;
  /** The allow rules that kept the detector from blocking (status `allowed`). */
  readonly allowedBy: readonly string[];
}

/** How long a subject an allow rule covers is left alone before being judged again. */
const ALLOWED_CLAIM_MS = 60_000;
const RULES_CACHE_MS = 5000;

@Injectable()
export class AutomaticBlocksService {
  private readonly logger = new Logger(AutomaticBlocksService.name);
  private readonly siteRules = new Map<string, { at: number; rules: Promise<Rule[]> }>();

  constructor(
    private readonly database: DatabaseService,
    private readonly sites: SitesService,
    private readonly builds: BuildQueueService,
    private readonly redis: DetectionRedis,
    private readonly rules: RulesService,
  ) {}

  /** The site's own rules (not the automatic ones), cached briefly: findings come in bursts. */
  rulesOf(siteId: string, now = Date.now()): Promise<Rule[]> {
    const hit = this.siteRules.get(siteId);
    if (hit && now - hit.at < RULES_CACHE_MS) return hit.rules;
    const rules = this.database.db
      .selectFrom('rules')
      .select('body')
      .where('site_id', '=', siteId)
      .orderBy('position')
      .execute()
      .then((rows) => rows.map((r) => JSON.parse(r.body) as Rule));
    if (this.siteRules.size > 10_000) this.siteRules.clear();
    this.siteRules.set(siteId, { at: now, rules });
    rules.catch(() => this.siteRules.delete(siteId));
    return rules;
  }

  /** Turns findings into blocks; returns the blocks created (allowed ones included). */
  async apply(
    siteId: string,
    findings: readonly Finding[],
    label: Labeler,
    now = Date.now(),
  ): Promise<AutomaticBlockView[]> {
    const created: AutomaticBlockView[] = [];
    let publish = false;
    for (const finding of findings) {
      const claimed = await this.claim(siteId, finding);
      if (claimed === null) continue;
      const { subject, allowedBy } = uncovered(claimed, await this.rulesOf(siteId), label, now);
      const expiresAt = new Date(now + finding.blockSeconds * 1000).toISOString();
      const rows: AutomaticBlocksTable[] = [];
      const row = (s: BlockSubject, allowed: string | null): AutomaticBlocksTable => ({
        id: randomUUID(),
        site_id: siteId,
        detector: finding.detector,
        subject: JSON.stringify(s),
        mode: finding.mode,
        action: finding.action,
        evidence: JSON.stringify(finding.evidence),
        created_at: new Date(now).toISOString(),
        expires_at: expiresAt,
        revoked_at: null,
        allowed_by: allowed,
        expiry_built: 0,
      });
      if (subject) rows.push(row(subject, null));
      if (allowedBy.length > 0) {
        const left = subject?.kind === 'ip' ? new Set(subject.addresses) : new Set<string>();
        const spared: BlockSubject =
          claimed.kind === 'ip'
            ? { kind: 'ip', addresses: claimed.addresses.filter((a) => !left.has(a)) }
            : claimed;
        rows.push(row(spared, allowedBy.join(',')));
        for (const key of claimKeys(siteId, finding.detector, spared))
          await this.redis.counters.claim(key, ALLOWED_CLAIM_MS).catch(() => false);
      }
      if (rows.length === 0) continue;
      await this.database.db.insertInto('automatic_blocks').values(rows).execute();
      for (const r of rows) created.push(view(r, now));
      if (subject) {
        publish = true;
        this.logger.log(
          `${finding.detector} ${finding.mode === 'enforce' ? 'blocks' : 'monitors'} ${describe(subject)} of site ${siteId} until ${expiresAt} (${finding.evidence.count} in ${finding.evidence.windowSeconds} s)`,
        );
      }
    }
    if (publish) await this.rebuild(siteId);
    return created;
  }

  async list(siteId: string, status?: BlockStatus, limit = 100): Promise<AutomaticBlockView[]> {
    await this.sites.get(siteId);
    const now = Date.now();
    const nowIso = new Date(now).toISOString();
    let query = this.database.db
      .selectFrom('automatic_blocks')
      .selectAll()
      .where('site_id', '=', siteId);
    if (status === 'active')
      query = query
        .where('revoked_at', 'is', null)
        .where('allowed_by', 'is', null)
        .where('expires_at', '>', nowIso);
    else if (status === 'expired')
      query = query
        .where('revoked_at', 'is', null)
        .where('allowed_by', 'is', null)
        .where('expires_at', '<=', nowIso);
    else if (status === 'revoked') query = query.where('revoked_at', 'is not', null);
    else if (status === 'allowed') query = query.where('allowed_by', 'is not', null);
    const rows = await query.orderBy('created_at', 'desc').orderBy('id').limit(limit).execute();
    return rows.map((r) => view(r, now));
  }

  async get(siteId: string, blockId: string): Promise<AutomaticBlockView> {
    const row = await this.database.db
      .selectFrom('automatic_blocks')
      .selectAll()
      .where('site_id', '=', siteId)
      .where('id', '=', blockId)
      .executeTakeFirst();
    if (!row) {
      await this.sites.get(siteId); // 404 for the site first
      throw new NotFoundException(`site "${siteId}" has no automatic block "${blockId}"`);
    }
    return view(row, Date.now());
  }

  /**
   * Revokes a block: out of the next snapshot (built at once), and its detector may fire on the
   * subject again. Revoking a block that is no longer active changes nothing.
   */
  async revoke(siteId: string, blockId: string): Promise<AutomaticBlockView> {
    const block = await this.get(siteId, blockId);
    if (block.status !== 'active') return block;
    await this.database.db
      .updateTable('automatic_blocks')
      .set({ revoked_at: new Date().toISOString() })
      .where('id', '=', blockId)
      .where('revoked_at', 'is', null)
      .execute();
    for (const key of claimKeys(siteId, block.detector, block.subject))
      await this.redis.counters.release(key).catch(() => undefined);
    await this.rebuild(siteId);
    return this.get(siteId, blockId);
  }

  /**
   * Keeps an active block for good: the rule it publishes, without its expiry and under an id of
   * its own (`kept-<block id>`), becomes one of the site's rules; then the block is revoked, the
   * rule doing its work from the same build on. Resolves with the new rule.
   */
  async keep(siteId: string, blockId: string): Promise<Rule> {
    const block = await this.get(siteId, blockId);
    if (block.status !== 'active') {
      throw new ConflictException(
        `automatic block "${blockId}" is ${block.status}: only an active block can be kept`,
      );
    }
    const { expiresAt: _expiry, ...rule } = ruleOf(block);
    const kept = await this.rules.create(siteId, {
      ...rule,
      id: `kept-${block.id}`,
      note: `kept from automatic block ${block.id} (${block.detector}, ${block.createdAt})`,
    });
    await this.revoke(siteId, blockId);
    return kept;
  }

  /** Rebuilds every site with blocks that expired since; returns how many sites. */
  async sweepExpired(now = Date.now()): Promise<number> {
    const nowIso = new Date(now).toISOString();
    const db = this.database.db;
    const expired = await db
      .selectFrom('automatic_blocks')
      .select(['id', 'site_id'])
      .where('expiry_built', '=', 0)
      .where('expires_at', '<=', nowIso)
      .limit(10_000)
      .execute();
    if (expired.length === 0) return 0;
    const sites = [...new Set(expired.map((e) => e.site_id))];
    await db
      .updateTable('automatic_blocks')
      .set({ expiry_built: 1 })
      .where(
        'id',
        'in',
        expired.map((e) => e.id),
      )
      .execute();
    for (const siteId of sites) await this.rebuild(siteId);
    return sites.length;
  }

  /** A new revision for the site and a build at once (coalesced with any waiting). */
  private async rebuild(siteId: string): Promise<void> {
    await this.database.db
      .updateTable('sites')
      .set((eb) => ({ rules_revision: eb('rules_revision', '+', 1) }))
      .where('id', '=', siteId)
      .execute();
    await this.builds.requestBuild(siteId, 0);
  }

  /** The part of the finding's subject no standing block of its detector covers, claimed. */
  private async claim(siteId: string, finding: Finding): Promise<BlockSubject | null> {
    const ttl = finding.blockSeconds * 1000;
    const subject = finding.subject;
    if (subject.kind !== 'ip') {
      const [key] = claimKeys(siteId, finding.detector, subject);
      return key !== undefined && (await this.redis.counters.claim(key, ttl)) ? subject : null;
    }
    const addresses: string[] = [];
    for (const address of subject.addresses)
      if (await this.redis.counters.claim(claimKey(siteId, finding.detector, `ip ${address}`), ttl))
        addresses.push(address);
    return addresses.length > 0 ? { kind: 'ip', addresses } : null;
  }
}

/** The rules of a site's standing automatic blocks, as the snapshot builder adds them. */
export async function activeAutomaticRules(
  database: DatabaseService,
  siteId: string,
  now = Date.now(),
): Promise<Rule[]> {
  const rows = await database.db
    .selectFrom('automatic_blocks')
    .selectAll()
    .where('site_id', '=', siteId)
    .where('revoked_at', 'is', null)
    .where('allowed_by', 'is', null)
    .where('expires_at', '>', new Date(now).toISOString())
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((r) =>
    ruleOf({
      id: r.id,
      detector: r.detector,
      subject: JSON.parse(r.subject) as BlockSubject,
      mode: r.mode,
      action: r.action,
      expiresAt: r.expires_at,
    }),
  );
}

function claimKey(siteId: string, detector: string, subject: string): string {
  return `${siteId}:${detector}:${subject}`;
}

function claimKeys(siteId: string, detector: string, subject: BlockSubject): string[] {
  switch (subject.kind) {
    case 'ip':
      return subject.addresses.map((a) => claimKey(siteId, detector, `ip ${a}`));
    case 'asn':
      return [claimKey(siteId, detector, `asn ${subject.asn}`)];
    case 'country':
      return [claimKey(siteId, detector, `country ${subject.country}`)];
    case 'header':
      return [claimKey(siteId, detector, `header ${subject.name} ${subject.value}`)];
  }
}

function describe(subject: BlockSubject): string {
  switch (subject.kind) {
    case 'ip':
      return subject.addresses.length === 1
        ? `address ${subject.addresses[0]}`
        : `${subject.addresses.length} addresses`;
    case 'asn':
      return `AS${subject.asn}`;
    case 'country':
      return `country ${subject.country}`;
    case 'header':
      return `header ${subject.name}`;
  }
}

function view(row: AutomaticBlocksTable, now: number): AutomaticBlockView {
  const status: BlockStatus =
    row.allowed_by !== null
      ? 'allowed'
      : row.revoked_at !== null
        ? 'revoked'
        : Date.parse(row.expires_at) <= now
          ? 'expired'
          : 'active';
  return {
    id: row.id,
    ruleId: `${AUTOMATIC_RULE_PREFIX}${row.id}`,
    detector: row.detector,
    subject: JSON.parse(row.subject) as BlockSubject,
    mode: row.mode,
    action: row.action,
    status,
    evidence: JSON.parse(row.evidence) as Evidence,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    allowedBy: row.allowed_by ? row.allowed_by.split(',') : [],
  };
}
