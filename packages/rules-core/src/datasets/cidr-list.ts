/**
 * Importer for reputation lists in the FireHOL / Spamhaus DROP style:
 *
 * ```
 * # FireHOL level 1 (whole-line comments start with #)
 * 1.10.16.0/29 ; SBL256894      <- Spamhaus: a trailing comment after ;
 * 2001:db8::/32
 * 203.0.113.7                    <- a single address
 * ```
 *
 * Each line holds one CIDR, one address or one `start-end` range (whatever `parseIpRange`
 * accepts), in either family; blank lines are ignored. A trailing `#` comment is accepted like a
 * `;` one: neither character can occur in an address, so nothing is lost by being lenient. A CIDR
 * with host bits set is a bad line, not a guess (see `parseIpRange`).
 */
import { basename, extname } from 'node:path';
import { type IpRange, IpRangeParseError, parseIpRange } from '../ip/range.js';
import type { ImportIssue, ImportOptions, ImportResult, ReputationList } from './dataset.js';
import { importFileLines, importLines } from './line-import.js';

/** What {@link importCidrListFile} returns: the list itself, plus the import's report. */
export interface CidrListImport {
  readonly list: ReputationList;
  readonly issues: ImportIssue[];
  readonly lines: number;
}

export interface CidrListFileOptions extends Partial<ImportOptions> {
  /** The list's name; defaults to the file's base name without extension. */
  readonly name?: string;
}

/**
 * Parses the lines of the list `name` into ranges (IPv6 ranges overlapping the IPv4-mapped block
 * come back split, so one line may give more than one range). `name` is not used for parsing;
 * it is the default for `options.file`, so issues name the list when no file name is given.
 */
export function parseCidrList(
  name: string,
  lines: Iterable<string> | AsyncIterable<string>,
  options: Partial<ImportOptions> = {},
): Promise<ImportResult<IpRange>> {
  return importLines(lines, { ...options, file: options.file ?? name }, parseCidrLine, undefined);
}

/** Streams a list file; issues name the file by `options.file`, else by `path`. */
export async function importCidrListFile(
  path: string,
  options: CidrListFileOptions = {},
): Promise<CidrListImport> {
  const name = options.name ?? basename(path, extname(path));
  const result = await importFileLines(
    path,
    { onBadLine: options.onBadLine, file: options.file ?? path },
    parseCidrLine,
    undefined,
  );
  return { list: { name, ranges: result.entries }, issues: result.issues, lines: result.lines };
}

function parseCidrLine(line: string, ranges: IpRange[]): string | undefined {
  let end = line.length;
  const hash = line.indexOf('#');
  if (hash !== -1) end = hash;
  const semicolon = line.indexOf(';');
  if (semicolon !== -1 && semicolon < end) end = semicolon;
  const text = (end === line.length ? line : line.slice(0, end)).trim();
  if (text === '') return undefined; // a comment line
  try {
    for (const range of parseIpRange(text)) ranges.push(range);
    return undefined;
  } catch (error) {
    if (error instanceof IpRangeParseError) return error.message;
    throw error;
  }
}
