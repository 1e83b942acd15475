/**
 * A site's rules: every write is validated by rules-core as a whole rule set (so duplicates and
 * references are caught), applied in one transaction with a revision bump, and followed by a
 * build request. Invalid input changes nothing.
 */
import { Injectable, NotFoundException, UnprocessableEntityException } from '@nestjs/common';
import type { Rule } from '@rampart/rules-core/rules/model';
import { parseRules, type RuleIssue } from '@rampart/rules-core/rules/validate';
import type { Transaction } from 'kysely';
import { BuildQueueService } from '../builds/build-queue.service.js';
import { DatabaseService } from '../database/database.service.js';
import { HubSchema } from '../database/schema.js';
import { AUTOMATIC_RULE_PREFIX } from '../detection/automatic-rules.js';
import { bumpRulesRevision, SitesService } from '../sites/sites.service.js';

export interface RuleList {
  readonly revision: number;
  readonly rules: readonly Rule[];
}

@Injectable()
export class RulesService {
  constructor(
    private readonly database: DatabaseService,
    private readonly sites: SitesService,
    private readonly queue: BuildQueueService,
  ) {}

  async list(siteId: string): Promise<RuleList> {
    const site = await this.sites.get(siteId);
    return { revision: site.rulesRevision, rules: await this.current(siteId) };
  }

  async get(siteId: string, ruleId: string): Promise<Rule> {
    const rule = (await this.list(siteId)).rules.find((r) => r.id === ruleId);
    if (!rule) throw new NotFoundException(`site "${siteId}" has no rule "${ruleId}"`);
    return rule;
  }

  async create(siteId: string, raw: unknown): Promise<Rule> {
    return this.write(
      siteId,
      (existing) => [...existing, raw],
      (rules) => rules.at(-1) as Rule,
    );
  }

  async replace(siteId: string, ruleId: string, raw: unknown): Promise<Rule> {
    const body = isObject(raw) && raw.id === undefined ? { ...raw, id: ruleId } : raw;
    if (isObject(body) && body.id !== ruleId) {
      throw invalid([
        { index: 0, field: 'id', reason: `must match the rule id in the path ("${ruleId}")` },
      ]);
    }
    return this.write(
      siteId,
      (existing) => {
        const at = existing.findIndex((r) => r.id === ruleId);
        if (at === -1) throw new NotFoundException(`site "${siteId}" has no rule "${ruleId}"`);
        return existing.map((r, i) => (i === at ? body : r));
      },
      (rules) => rules.find((r) => r.id === ruleId) as Rule,
    );
  }

  async remove(siteId: string, ruleId: string): Promise<void> {
    await this.write(
      siteId,
      (existing) => {
        if (!existing.some((r) => r.id === ruleId)) {
          throw new NotFoundException(`site "${siteId}" has no rule "${ruleId}"`);
        }
        return existing.filter((r) => r.id !== ruleId);
      },
      () => undefined,
    );
  }

  /** Replaces (or appends to) the whole rule set, all or nothing. */
  async importRules(
    siteId: string,
    rules: readonly unknown[],
    mode: 'replace' | 'append',
  ): Promise<RuleList> {
    await this.write(
      siteId,
      (existing) => (mode === 'replace' ? [...rules] : [...existing, ...rules]),
      () => undefined,
    );
    return this.list(siteId);
  }

  private async current(siteId: string, db = this.database.db): Promise<Rule[]> {
    const rows = await db
      .selectFrom('rules')
      .select('body')
      .where('site_id', '=', siteId)
      .orderBy('position')
      .execute();
    return rows.map((r) => JSON.parse(r.body) as Rule);
  }

  /**
   * Computes the new rule set from the current one, validates it whole, stores it and bumps the
   * revision in one transaction, then asks for a build.
   *
   * The revision is bumped first: that update locks the site's row (PostgreSQL) or takes the
   * write lock (SQLite) before the current rules are read, so concurrent writes to one site, from
   * this or another hub instance, apply one after the other instead of each rewriting the rules
   * it read (lost updates, duplicate-key failures). An invalid change rolls the bump back.
   */
  private async write<T>(
    siteId: string,
    change: (existing: readonly Rule[]) => unknown[],
    result: (rules: readonly Rule[]) => T,
  ): Promise<T> {
    const value = await this.database.db.transaction().execute(async (tx) => {
      if (!(await bumpRulesRevision(tx, siteId))) await this.sites.get(siteId, tx); // 404
      const next = change(await this.current(siteId, tx));
      const issues: RuleIssue[] = [];
      const rules = parseRules(next, issues);
      if (issues.length === 0) issues.push(...reservedIds(rules));
      if (issues.length === 0) issues.push(...(await this.missingLists(rules, tx)));
      if (issues.length > 0) throw invalid(issues);
      await this.store(tx, siteId, rules);
      return result(rules);
    });
    await this.queue.requestBuild(siteId);
    return value;
  }

  private async store(
    tx: Transaction<HubSchema>,
    siteId: string,
    rules: readonly Rule[],
  ): Promise<void> {
    const now = new Date().toISOString();
    await tx.deleteFrom('rules').where('site_id', '=', siteId).execute();
    if (rules.length > 0) {
      await tx
        .insertInto('rules')
        .values(
          rules.map((rule, position) => ({
            site_id: siteId,
            rule_id: rule.id,
            position,
            body: JSON.stringify(rule),
            updated_at: now,
          })),
        )
        .execute();
    }
  }

  /** Reputation rules must name lists that have been uploaded. */
  private async missingLists(
    rules: readonly Rule[],
    tx: Transaction<HubSchema>,
  ): Promise<RuleIssue[]> {
    const known = new Set(
      (
        await tx.selectFrom('datasets').select('name').where('kind', '=', 'reputation').execute()
      ).map((d) => d.name),
    );
    const issues: RuleIssue[] = [];
    rules.forEach((rule, index) => {
      if (rule.type !== 'reputation') return;
      rule.lists.forEach((name, i) => {
        if (!known.has(name)) {
          issues.push({
            index,
            ruleId: rule.id,
            field: `lists[${i}]`,
            reason: `no reputation dataset named "${name}"; upload it first (PUT /v1/datasets/reputation/${name})`,
          });
        }
      });
    });
    return issues;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** 422 with every issue, each naming the rule index, id, field and reason. */
/**
 * Ids starting with `auto:` belong to automatic blocks (detection), which the snapshot adds to the
 * site's rules: a site's own rule may not take one, or reports and the dashboard would file it
 * as a detector's block (and it could meet a block's id in the snapshot).
 */
function reservedIds(rules: readonly Rule[]): RuleIssue[] {
  return rules.flatMap((rule, index) =>
    rule.id.startsWith(AUTOMATIC_RULE_PREFIX)
      ? [
          {
            index,
            ruleId: rule.id,
            field: 'id',
            reason: `must not start with "${AUTOMATIC_RULE_PREFIX}" (the ids of automatic blocks)`,
          },
        ]
      : [],
  );
}

export function invalid(issues: readonly RuleIssue[]): UnprocessableEntityException {
  const first = issues[0];
  const where = first
    ? `${first.index === null ? '' : `rules[${first.index}]${first.ruleId ? ` (id "${first.ruleId}")` : ''}: `}${first.field}: ${first.reason}`
    : 'invalid rules';
  return new UnprocessableEntityException({
    statusCode: 422,
    error: 'Unprocessable Entity',
    message: issues.length > 1 ? `${where} (and ${issues.length - 1} more)` : where,
    issues,
  });
}
