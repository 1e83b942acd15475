/**
 * `rampart substitute`: applies substitution rules to stdin, writing stdout (options and
 * formats: `SUBSTITUTE`, which `rampart substitute --help` prints).
 */
import { readFile } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import {
  compileRuleSet,
  type MatchKind,
  RuleSetError,
  type SubstitutionRule,
} from '../substitution/rule-set.js';
import { DEFAULT_MAX_BUFFERED_BYTES, Substituter } from '../substitution/substituter.js';
import { type CliIo, dataError, noInputError, usageError } from './cli-error.js';
import { parseOptions } from './parse-options.js';
import type { CommandSpec } from './usage.js';

export const SUBSTITUTE = {
  name: 'substitute',
  summary: 'apply substitution rules to stdin in one streaming pass, writing stdout',
  options: {
    rules: {
      type: 'string',
      value: 'RULES.json',
      required: true,
      description: 'JSON array of {pattern, replacement, flags} in priority order',
    },
    'match-kind': {
      type: 'string',
      value: 'KIND',
      default: 'leftmost-first',
      description: 'leftmost-first or leftmost-longest',
    },
    'max-buffered': {
      type: 'string',
      value: 'N',
      default: String(DEFAULT_MAX_BUFFERED_BYTES),
      description: 'longest partial match held back before it is given up with a warning',
    },
    'chunk-size': {
      type: 'string',
      value: 'N',
      description: 'feed stdin in pieces of N bytes (to check that chunking changes nothing)',
    },
  },
  tail: '< BODY > RESULT',
  notes: ['A bad rule exits 65 with the message; buffer-limit warnings go to stderr.'],
  examples: ['rampart substitute --rules rewrites.json < page.html > rewritten.html'],
} as const satisfies CommandSpec;

/** The byte streams the command reads and writes; injected so tests can use memory streams. */
export interface ByteStreams {
  readonly stdin: Readable;
  readonly stdout: Writable;
}

export async function substituteCommand(
  argv: readonly string[],
  io: CliIo,
  streams: ByteStreams = { stdin: process.stdin, stdout: process.stdout },
): Promise<void> {
  const { values } = parseOptions(argv, SUBSTITUTE);
  const matchKind = values['match-kind'];
  if (matchKind !== 'leftmost-first' && matchKind !== 'leftmost-longest') {
    throw usageError('--match-kind must be leftmost-first or leftmost-longest');
  }
  const maxBufferedBytes = optionalCount(values['max-buffered'], 'max-buffered', 0);
  const chunkSize = optionalCount(values['chunk-size'], 'chunk-size', 1);
  const rules = await readRules(values.rules);
  let set: ReturnType<typeof compileRuleSet>;
  try {
    set = compileRuleSet(rules, { matchKind: matchKind as MatchKind });
  } catch (error) {
    if (error instanceof RuleSetError) throw dataError(error.message);
    throw error;
  }
  const substituter = new Substituter(set, {
    ...(maxBufferedBytes === undefined ? {} : { maxBufferedBytes }),
    warn: (message) => io.stderr.write(`rampart: warning: ${message}\n`),
  });
  for await (const chunk of rechunk(streams.stdin, chunkSize)) {
    await write(streams.stdout, substituter.feed(chunk));
  }
  await write(streams.stdout, substituter.end());
}

function optionalCount(text: string | undefined, name: string, min: number): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min)
    throw usageError(`--${name} must be an integer >= ${min}`);
  return n;
}

async function readRules(path: string): Promise<SubstitutionRule[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw noInputError(`cannot read ${path}: ${(error as Error).message}`);
  }
  let rules: unknown;
  try {
    rules = JSON.parse(text);
  } catch (error) {
    throw dataError(`${path}: invalid JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(rules)) throw dataError(`${path}: must be a JSON array of rules`);
  return rules as SubstitutionRule[];
}

/** The input as chunks of exactly `size` bytes (the last one shorter), or as it comes. */
async function* rechunk(input: Readable, size: number | undefined): AsyncGenerator<Uint8Array> {
  let carry: Buffer = Buffer.alloc(0);
  for await (const piece of input) {
    const bytes = typeof piece === 'string' ? Buffer.from(piece) : (piece as Buffer);
    if (size === undefined) {
      yield bytes;
      continue;
    }
    carry = carry.length === 0 ? bytes : Buffer.concat([carry, bytes]);
    let at = 0;
    for (; at + size <= carry.length; at += size) yield carry.subarray(at, at + size);
    carry = carry.subarray(at);
  }
  if (carry.length > 0) yield carry;
}

function write(out: Writable, bytes: Buffer): Promise<void> {
  if (bytes.length === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    out.write(bytes, (error) => (error ? reject(error) : resolve()));
  });
}
