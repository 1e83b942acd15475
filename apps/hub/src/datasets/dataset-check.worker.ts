/**
 * Worker-thread entry that parses an uploaded dataset with the same importer the build uses, so
 * a file is accepted only if builds can read it, without blocking the event loop for the seconds
 * a million-line file takes.
 */
import { workerData } from 'node:worker_threads';
import { importCidrListFile } from '@rampart/rules-core/datasets/cidr-list';
import { DatasetImportError, type ImportIssue } from '@rampart/rules-core/datasets/dataset';
import {
  importAsnCsvFile,
  importCountryCsvFile,
} from '@rampart/rules-core/datasets/ip-location-db';
import { postResult } from '../workers/run-worker.js';
import { CheckInput, CheckMessage } from './dataset-check-io.js';

const MAX_REPORTED_ISSUES = 100;

async function check(input: CheckInput): Promise<CheckMessage> {
  const options = { file: input.name, onBadLine: input.onBadLine };
  try {
    let entries: number;
    let result: { issues: ImportIssue[]; lines: number };
    if (input.kind === 'country') {
      const r = await importCountryCsvFile(input.path, options);
      entries = r.entries.length;
      result = r;
    } else if (input.kind === 'asn') {
      const r = await importAsnCsvFile(input.path, options);
      entries = r.entries.length;
      result = r;
    } else {
      const r = await importCidrListFile(input.path, { ...options, name: input.name });
      entries = r.list.ranges.length;
      result = r;
    }
    return {
      ok: true,
      entries,
      lines: result.lines,
      skippedLines: result.issues.length,
      issues: result.issues.slice(0, MAX_REPORTED_ISSUES),
    };
  } catch (error) {
    if (error instanceof DatasetImportError) {
      return {
        ok: false,
        message: error.message,
        issueCount: error.issues.length,
        issues: error.issues.slice(0, MAX_REPORTED_ISSUES),
      };
    }
    return { ok: false, message: (error as Error).message, issueCount: 0, issues: [] };
  }
}

check(workerData as CheckInput).then(postResult);
