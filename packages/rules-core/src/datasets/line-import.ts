/**
 * The line loop shared by the dataset importers (internal to `datasets/`).
 *
 * Public files run to a million lines, so the per-line path is kept lean: one method call per
 * line, no closures, no regexes, and addresses parsed by the allocation-free `parseIpInto`.
 */
import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { describeParseFailure, type IpFamily, parseIpInto } from '../ip/address.js';
import type { IpRange } from '../ip/range.js';
import {
  DatasetImportError,
  type ImportIssue,
  type ImportOptions,
  type ImportResult,
} from './dataset.js';

/**
 * Parses one non-blank line (without its line ending) and pushes what it yields onto `entries`.
 * Returns undefined on success (including a line it deliberately ignores, like a comment) or the
 * reason the line is unusable.
 */
export type LineParser<T, C> = (line: string, entries: T[], context: C) => string | undefined;

/** Feeds lines to a {@link LineParser}, numbering them and collecting issues. */
class LineImport<T, C> {
  readonly entries: T[] = [];
  readonly issues: ImportIssue[] = [];
  lines = 0;
  private readonly reject: boolean;

  constructor(
    private readonly file: string,
    onBadLine: ImportOptions['onBadLine'],
    private readonly parse: LineParser<T, C>,
    private readonly context: C,
  ) {
    this.reject = onBadLine === 'reject';
  }

  feed(raw: string): void {
    this.lines++;
    let line = raw;
    let n = line.length;
    if (n !== 0 && line.charCodeAt(n - 1) === 13) line = line.slice(0, --n); // CRLF input
    if (this.lines === 1 && n !== 0 && line.charCodeAt(0) === 0xfeff) line = line.slice(1); // BOM
    if (line.length === 0) return;
    if ((line.charCodeAt(0) <= 32 || line.charCodeAt(line.length - 1) <= 32) && line.trim() === '')
      return;
    const reason = this.parse(line, this.entries, this.context);
    if (reason === undefined) return;
    this.issues.push({ file: this.file, line: this.lines, reason });
    // A rejected import returns nothing: stop holding on to entries nobody will see.
    if (this.reject) this.entries.length = 0;
  }

  finish(): ImportResult<T> {
    if (this.reject && this.issues.length > 0) throw new DatasetImportError(this.issues);
    return { entries: this.entries, issues: this.issues, lines: this.lines };
  }
}

/** Runs `parse` over every line of `lines` and applies the `onBadLine` policy. */
export async function importLines<T, C>(
  lines: Iterable<string> | AsyncIterable<string>,
  options: ImportOptions,
  parse: LineParser<T, C>,
  context: C,
): Promise<ImportResult<T>> {
  const run = new LineImport(options.file, options.onBadLine, parse, context);
  if (Symbol.asyncIterator in lines) {
    for await (const line of lines) run.feed(line);
  } else {
    // A plain loop: awaiting each element of an array would cost a microtask per line.
    for (const line of lines) run.feed(line);
  }
  return run.finish();
}

/**
 * Runs {@link importLines} over the lines of the file at `path` (UTF-8, LF or CRLF), streamed with
 * node:readline. The file is opened first, so a missing file rejects with its own error (ENOENT)
 * instead of looking like an empty dataset.
 */
export async function importFileLines<T, C>(
  path: string,
  options: ImportOptions,
  parse: LineParser<T, C>,
  context: C,
): Promise<ImportResult<T>> {
  const handle = await open(path, 'r');
  const input = handle.createReadStream({ encoding: 'utf8' }); // closes the handle when done
  const reader = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    return await importLines(reader, options, parse, context);
  } finally {
    reader.close();
    input.destroy();
  }
}

/** The value of a field, without surrounding whitespace (checked first: most fields have none). */
export function field(line: string, from: number, to: number): string {
  const text = line.slice(from, to);
  const n = text.length;
  if (n !== 0 && (text.charCodeAt(0) <= 32 || text.charCodeAt(n - 1) <= 32)) return text.trim();
  return text;
}

/** The IPv4-mapped block ::ffff:0:0/96 starts here, as an IPv6 integer. */
const MAPPED_START = 0xffffn << 32n;
const words = new Uint32Array(4);

/**
 * Parses an address as written: an IPv4-mapped address in IPv6 form keeps its IPv6 value, so
 * that a start and an end written in IPv6 form are one IPv6 range (which `normalizeRange` then
 * splits). Sets {@link parsedFamily}/{@link parsedValue}; returns a reason on failure.
 */
function parseWrittenAddress(text: string, which: string): string | undefined {
  const family = parseIpInto(text, words);
  if (family < 0)
    return `invalid ${which} address ${JSON.stringify(text)}: ${describeParseFailure(family)}`;
  if (family === 6) {
    parsedFamily = 6;
    parsedValue =
      (BigInt(words[0] as number) << 96n) |
      (BigInt(words[1] as number) << 64n) |
      (BigInt(words[2] as number) << 32n) |
      BigInt(words[3] as number);
  } else if (text.indexOf(':') === -1) {
    parsedFamily = 4;
    parsedValue = BigInt(words[0] as number);
  } else {
    parsedFamily = 6;
    parsedValue = MAPPED_START + BigInt(words[0] as number);
  }
  return undefined;
}
let parsedFamily: IpFamily = 4;
let parsedValue = 0n;

/**
 * Parses the `start` and `end` fields of a range row. Returns the range (an IPv6 range may still
 * overlap the IPv4-mapped block: pass it through `normalizeRange`) or the reason it is unusable.
 */
export function parseStartEnd(startText: string, endText: string): IpRange | string {
  const startFailure = parseWrittenAddress(startText, 'start');
  if (startFailure !== undefined) return startFailure;
  const family = parsedFamily;
  const start = parsedValue;
  const endFailure = parseWrittenAddress(endText, 'end');
  if (endFailure !== undefined) return endFailure;
  if (parsedFamily !== family) return 'start and end are of different IP families';
  if (start > parsedValue) return 'start is after end';
  return { family, start, end: parsedValue };
}
