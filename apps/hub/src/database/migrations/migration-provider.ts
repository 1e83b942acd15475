import type { Migration, MigrationProvider } from 'kysely/migration';
import { initial } from './001-initial.js';
import { reports } from './002-reports.js';
import { signalKeys } from './003-signal-keys.js';
import { detection } from './004-detection.js';
import { sessions } from './005-sessions.js';
import { proxyConfigs } from './006-proxy-configs.js';
import { eventTraces } from './007-event-traces.js';

/** Every migration, by name; names sort in the order they apply. Never rename or edit one. */
const MIGRATIONS: Record<string, Migration> = {
  '001-initial': initial,
  '002-reports': reports,
  '003-signal-keys': signalKeys,
  '004-detection': detection,
  '005-sessions': sessions,
  '006-proxy-configs': proxyConfigs,
  '007-event-traces': eventTraces,
};

/** Migrations compiled into the hub (no directory scanning, so the build output is self-contained). */
export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
