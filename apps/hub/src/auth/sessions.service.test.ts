/**
 * Dashboard sessions on each database: opened only with the admin token, found by the cookie's
 * token (stored only as its hash), ended by expiry and by logout, and the CSRF token compared.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sharedPostgres } from '@rampart/test-services/postgres-server';
import type { Request } from 'express';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HubConfig } from '../config/hub-config.js';
import { DatabaseService } from '../database/database.service.js';
import { carriesCsrfToken, SESSION_COOKIE, SessionsService } from './sessions.service.js';

const postgres = sharedPostgres('sessions');
afterAll(() => postgres.stop());

const ADMIN_TOKEN = 'admin-token-of-at-least-32-characters!';
const HOUR = 3_600_000;

/** A request as Express hands it over: only the headers matter here. */
const requestWith = (headers: Record<string, string>) => ({ headers }) as unknown as Request;
const withCookie = (token: string, extra: Record<string, string> = {}) =>
  requestWith({ cookie: `theme=dark; ${SESSION_COOKIE}=${token}`, ...extra });

describe.each(['sqlite', 'postgres'] as const)('dashboard sessions on %s', (kind) => {
  let dataDir: string;
  let database: DatabaseService;
  let sessions: SessionsService;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sessions-'));
    const databaseUrl = kind === 'postgres' ? await postgres.freshDatabase() : undefined;
    const config = { databaseUrl, dataDir, adminToken: ADMIN_TOKEN, sessionHours: 12 } as HubConfig;
    database = new DatabaseService(config);
    await database.onModuleInit();
    sessions = new SessionsService(database, config);
  });
  afterEach(async () => {
    await database.onModuleDestroy();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('opens a session only for the admin token', async () => {
    expect(await sessions.open('wrong')).toBeUndefined();
    expect(await sessions.open(`${ADMIN_TOKEN}x`)).toBeUndefined();
    const opened = await sessions.open(ADMIN_TOKEN);
    expect(opened?.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(opened?.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(opened?.csrfToken).not.toBe(opened?.token);
  });

  it('finds the session by its cookie and stores only the hash of its token', async () => {
    const opened = await sessions.open(ADMIN_TOKEN, Date.now());
    if (!opened) throw new Error('not opened');
    expect(await sessions.ofRequest(withCookie(opened.token))).toEqual({
      csrfToken: opened.csrfToken,
      expiresAt: opened.expiresAt,
    });
    const rows = await database.db.selectFrom('sessions').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(opened.token);
    expect(await sessions.ofRequest(requestWith({}))).toBeUndefined();
    expect(await sessions.ofRequest(withCookie('x'.repeat(43)))).toBeUndefined();
    expect(await sessions.ofRequest(withCookie('not a token'))).toBeUndefined();
  });

  it('ends a session at its expiry, and deletes expired ones at the next login', async () => {
    const past = Date.now() - 13 * HOUR;
    const old = await sessions.open(ADMIN_TOKEN, past);
    if (!old) throw new Error('not opened');
    expect(Date.parse(old.expiresAt)).toBe(past + 12 * HOUR);
    expect(await sessions.ofRequest(withCookie(old.token))).toBeUndefined();
    await sessions.open(ADMIN_TOKEN);
    expect(await database.db.selectFrom('sessions').selectAll().execute()).toHaveLength(1);
  });

  it('ends a session at logout, leaving the others', async () => {
    const one = await sessions.open(ADMIN_TOKEN);
    const two = await sessions.open(ADMIN_TOKEN);
    if (!one || !two) throw new Error('not opened');
    await sessions.close(withCookie(one.token));
    expect(await sessions.ofRequest(withCookie(one.token))).toBeUndefined();
    expect(await sessions.ofRequest(withCookie(two.token))).toBeDefined();
    await sessions.close(requestWith({})); // no session: nothing happens
  });

  it('accepts a write only with the session’s own CSRF token', async () => {
    const one = await sessions.open(ADMIN_TOKEN);
    const two = await sessions.open(ADMIN_TOKEN);
    if (!one || !two) throw new Error('not opened');
    const session = { csrfToken: one.csrfToken, expiresAt: one.expiresAt };
    expect(
      carriesCsrfToken(withCookie(one.token, { 'x-csrf-token': one.csrfToken }), session),
    ).toBe(true);
    expect(carriesCsrfToken(withCookie(one.token), session)).toBe(false);
    expect(
      carriesCsrfToken(withCookie(one.token, { 'x-csrf-token': two.csrfToken }), session),
    ).toBe(false);
    expect(carriesCsrfToken(withCookie(one.token, { 'x-csrf-token': '' }), session)).toBe(false);
  });
});
