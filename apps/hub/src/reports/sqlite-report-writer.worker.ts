/**
 * Worker-thread entry of the SQLite report writer (`sqlite-report-writer.ts`): a connection of
 * its own to the hub's database file, writing each group it is sent in one transaction
 * (`writeReportGroup`) and answering, per batch, whether it was new, or the error that rolled
 * the group back. One group at a time, in the order they come.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';
import { openSqlite } from '../database/sqlite-connection.js';
import { EventSample } from './event-sample.js';
import { type GroupEntry, writeReportGroup } from './report-group.js';
import type { WriterAnswer, WriterOptions, WriterRequest } from './sqlite-report-writer.js';

const { file, eventsPerSecond } = workerData as WriterOptions;
const db = openSqlite(file);
const sample = new EventSample(eventsPerSecond);
const statements = new Map<string, SQLite.Statement>();

/** Runs one statement; synchronous underneath (better-sqlite3), so nothing interleaves. */
async function run<R>(sql: string, parameters: readonly unknown[]): Promise<R[]> {
  let statement = statements.get(sql);
  if (statement === undefined) {
    statement = db.prepare(sql);
    statements.set(sql, statement);
  }
  // The parameters as one array (better-sqlite3 binds it), not spread into 10 000 arguments.
  if (statement.reader) return statement.all(parameters) as R[];
  statement.run(parameters);
  return [];
}

async function write(group: readonly GroupEntry[], receivedAt: string): Promise<boolean[]> {
  db.exec('begin immediate');
  try {
    const stored = await writeReportGroup('sqlite', run, group, receivedAt, sample);
    db.exec('commit');
    return stored;
  } catch (error) {
    if (db.inTransaction) db.exec('rollback');
    throw error;
  }
}

let queue = Promise.resolve();
parentPort?.on('message', (message: WriterRequest | 'stop') => {
  if (message === 'stop') {
    void queue.then(() => {
      db.close();
      parentPort?.close();
    });
    return;
  }
  queue = queue.then(async () => {
    let answer: WriterAnswer;
    try {
      answer = { id: message.id, stored: await write(message.group, message.receivedAt) };
    } catch (error) {
      answer = { id: message.id, error: (error as Error).message ?? String(error) };
    }
    parentPort?.postMessage(answer);
  });
});
