/**
 * The shapes public range data is imported into, and how an import reports bad input.
 *
 * Public datasets (country and ASN CSVs, FireHOL/Spamhaus CIDR lists) are large, third-party and
 * occasionally malformed. An import therefore never half-succeeds silently: every line it cannot
 * use is reported with its file and line number, and the caller chooses between skipping those
 * lines (the default: one bad row among a million should not stop a country block from working)
 * and rejecting the whole file (for curated lists, where a bad line means the list is not what
 * the operator thinks it is).
 */
import type { IpRange } from '../ip/range.js';

/** A range of addresses registered to one country. */
export interface CountryEntry {
  readonly range: IpRange;
  /** ISO 3166-1 alpha-2, upper case (input may be lower case; it is normalised). */
  readonly country: string;
}

/** A range of addresses announced by one autonomous system. */
export interface AsnEntry {
  readonly range: IpRange;
  /** 0 .. 4294967295 (32-bit AS numbers). */
  readonly asn: number;
  /** The organisation name as published, unquoted; may be empty. */
  readonly org: string;
}

/** A named reputation list (FireHOL, Spamhaus DROP...), for rules like "block list X". */
export interface ReputationList {
  readonly name: string;
  readonly ranges: IpRange[];
}

/** One line an import could not use. */
export interface ImportIssue {
  /** The name given in {@link ImportOptions.file} (by default the path read). */
  readonly file: string;
  /** 1-based, counting every physical line (blank and comment lines included), as editors do. */
  readonly line: number;
  readonly reason: string;
}

export interface ImportResult<T> {
  readonly entries: T[];
  /** Lines skipped because they could not be used; empty on a clean import. */
  readonly issues: ImportIssue[];
  /** Physical lines read, blank and comment lines included. */
  readonly lines: number;
}

export interface ImportOptions {
  /** The name used in issues and error messages (a path, a URL, a dataset name). */
  readonly file: string;
  /**
   * `skip` (default): bad lines are left out and listed in {@link ImportResult.issues}.
   * `reject`: the whole input is still read, so that every problem is reported at once, then the
   * import throws {@link DatasetImportError} and returns nothing.
   */
  readonly onBadLine?: 'skip' | 'reject';
}

/** How many issues a {@link DatasetImportError} message spells out; the rest are counted. */
const MESSAGE_ISSUES = 5;

/**
 * Thrown by an import with `onBadLine: 'reject'` when any line was bad. It carries every issue;
 * the message names the first few (file:line: reason) and the total, so a log line alone is
 * enough to find the problem.
 */
export class DatasetImportError extends Error {
  constructor(readonly issues: readonly ImportIssue[]) {
    const shown = issues.slice(0, MESSAGE_ISSUES).map((i) => `${i.file}:${i.line}: ${i.reason}`);
    const more = issues.length - shown.length;
    const noun = issues.length === 1 ? 'bad line' : 'bad lines';
    super(
      `dataset import rejected, ${issues.length} ${noun}: ${shown.join('; ')}` +
        (more > 0 ? `; and ${more} more` : ''),
    );
    this.name = 'DatasetImportError';
  }
}
