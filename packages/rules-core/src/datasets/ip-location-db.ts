/**
 * Importers for the `@ip-location-db/*` CSV files (https://github.com/sapics/ip-location-db).
 *
 * - Country (`geo-whois-asn-country-ipv4.csv`, `-ipv6.csv`...): `start,end,CC`, for example
 *   `1.0.0.0,1.0.0.255,AU`.
 * - ASN (`asn-ipv4.csv`, `asn-ipv6.csv`): `start,end,asn,org`, the organisation RFC 4180-quoted
 *   when it holds a comma or a quote: `1.0.0.0,1.0.0.255,13335,"Cloudflare, Inc."`.
 *
 * Start and end are addresses of one family, in any textual form. IPv6 rows that overlap the
 * IPv4-mapped block ::ffff:0:0/96 are split by `normalizeRange`, so the IPv4 part is found by
 * IPv4 lookups, as everywhere else in Rampart. The `-num.csv` variants (decimal integers) are not
 * read: the textual files carry the same data and keep the family visible.
 *
 * Rows are returned as published, in file order. They are not always disjoint: the country files
 * nest more specific rows inside wider ones (`2.58.196.0,2.58.197.255,DE` then
 * `2.58.197.15,2.58.197.15,BE`), about 7,500 overlaps in total. Deciding what an address in both
 * means (both labels, or the most specific) belongs to whoever builds the lookup table.
 */
import { normalizeRange } from '../ip/range.js';
import type { AsnEntry, CountryEntry, ImportOptions, ImportResult } from './dataset.js';
import { field, importFileLines, importLines, parseStartEnd } from './line-import.js';

/** Largest 32-bit AS number. */
const MAX_ASN = 4294967295;

/**
 * Per-import organisation names by AS number. Half a million rows name some eighty thousand
 * organisations: rows of one AS share one string instead of a copy each (a slice would also keep
 * its whole source line alive). Keyed by number so the common case, a row repeating its AS's
 * name, is an integer lookup and an in-place comparison ({@link isOrgAt}): no slice, no hashing
 * of the name (which, measured, cost more than the rest of the row).
 */
type OrgNames = Map<number, string>;

/** Parses `start,end,CC` rows (see the module comment). */
export function parseCountryCsv(
  lines: Iterable<string> | AsyncIterable<string>,
  options: ImportOptions,
): Promise<ImportResult<CountryEntry>> {
  return importLines(lines, options, parseCountryLine, undefined);
}

/** Parses `start,end,asn,org` rows (see the module comment). */
export function parseAsnCsv(
  lines: Iterable<string> | AsyncIterable<string>,
  options: ImportOptions,
): Promise<ImportResult<AsnEntry>> {
  return importLines(lines, options, parseAsnLine, new Map());
}

/** Streams a country CSV file; issues name the file by `options.file`, else by `path`. */
export function importCountryCsvFile(
  path: string,
  options: Partial<ImportOptions> = {},
): Promise<ImportResult<CountryEntry>> {
  return importFileLines(
    path,
    { ...options, file: options.file ?? path },
    parseCountryLine,
    undefined,
  );
}

/** Streams an ASN CSV file; issues name the file by `options.file`, else by `path`. */
export function importAsnCsvFile(
  path: string,
  options: Partial<ImportOptions> = {},
): Promise<ImportResult<AsnEntry>> {
  return importFileLines(path, { ...options, file: options.file ?? path }, parseAsnLine, new Map());
}

function parseCountryLine(line: string, entries: CountryEntry[]): string | undefined {
  const c1 = line.indexOf(',');
  const c2 = c1 === -1 ? -1 : line.indexOf(',', c1 + 1);
  if (c2 === -1 || line.indexOf(',', c2 + 1) !== -1) {
    return 'expected 3 comma-separated fields: start,end,country';
  }
  const range = parseStartEnd(field(line, 0, c1), field(line, c1 + 1, c2));
  if (typeof range === 'string') return range;
  const code = field(line, c2 + 1, line.length);
  const country = countryCode(code);
  if (country === undefined) {
    return `invalid country code ${JSON.stringify(code)}: expected two letters (ISO 3166-1 alpha-2)`;
  }
  if (range.family === 4) {
    entries.push({ range, country });
  } else {
    for (const part of normalizeRange(range)) entries.push({ range: part, country });
  }
  return undefined;
}

/** Upper-case codes by letter pair, so all rows of a country share one string. */
const countryCodes: (string | undefined)[] = new Array(26 * 26);

/** 0..25 for A-Z or a-z, else -1. */
function letterIndex(c: number): number {
  if (c >= 65 && c <= 90) return c - 65;
  if (c >= 97 && c <= 122) return c - 97;
  return -1;
}

/** The upper-case code for two letters (either case), or undefined. */
function countryCode(text: string): string | undefined {
  if (text.length !== 2) return undefined;
  const a = letterIndex(text.charCodeAt(0));
  const b = letterIndex(text.charCodeAt(1));
  if (a < 0 || b < 0) return undefined;
  const k = a * 26 + b;
  let code = countryCodes[k];
  if (code === undefined) {
    code = String.fromCharCode(65 + a, 65 + b);
    countryCodes[k] = code;
  }
  return code;
}

function parseAsnLine(line: string, entries: AsnEntry[], names: OrgNames): string | undefined {
  const c1 = line.indexOf(',');
  const c2 = c1 === -1 ? -1 : line.indexOf(',', c1 + 1);
  const c3 = c2 === -1 ? -1 : line.indexOf(',', c2 + 1);
  if (c3 === -1) return 'expected 4 comma-separated fields: start,end,asn,org';
  const range = parseStartEnd(field(line, 0, c1), field(line, c1 + 1, c2));
  if (typeof range === 'string') return range;
  let asn = parseAsn(line, c2 + 1, c3);
  if (asn < 0) {
    const asnText = field(line, c2 + 1, c3);
    asn = parseAsn(asnText, 0, asnText.length);
    if (asn < 0)
      return `invalid AS number ${JSON.stringify(asnText)}: expected an integer 0..${MAX_ASN}`;
  }
  let org = names.get(asn);
  if (org === undefined || !isOrgAt(line, c3 + 1, org)) {
    const orgFailure = parseOrg(line, c3 + 1);
    if (orgFailure !== undefined) return orgFailure;
    org = parsedOrg;
    // Names with quotes are rare and need unescaping: they are not remembered (see isOrgAt).
    if (org.indexOf('"') === -1) names.set(asn, org);
  }
  if (range.family === 4) {
    entries.push({ range, asn, org });
  } else {
    for (const part of normalizeRange(range)) entries.push({ range: part, asn, org });
  }
  return undefined;
}

/** Decimal digits only (no sign, no exponent) in line[from, to); -1 when not a 32-bit AS number. */
function parseAsn(line: string, from: number, to: number): number {
  const n = to - from;
  if (n === 0 || n > 10) return -1;
  let value = 0;
  for (let i = from; i < to; i++) {
    const c = line.charCodeAt(i);
    if (c < 48 || c > 57) return -1;
    value = value * 10 + (c - 48);
  }
  return value > MAX_ASN ? -1 : value;
}

/**
 * True when the org field from `from` to the end of the line is exactly `org` (which contains no
 * quote), bare or quoted: the common case of a row repeating its AS's name, checked without
 * slicing the line.
 */
function isOrgAt(line: string, from: number, org: string): boolean {
  const length = line.length - from;
  if (length === org.length) return line.startsWith(org, from);
  return (
    length === org.length + 2 &&
    line.charCodeAt(from) === 34 &&
    line.charCodeAt(line.length - 1) === 34 &&
    line.startsWith(org, from + 1)
  );
}

/**
 * Reads the last field, from `from` to the end of the line, into {@link parsedOrg}. A quoted
 * field ends at its closing quote (a doubled quote inside is one quote) and must end the line;
 * an unquoted one is taken as is, commas included, but may not contain a quote. Quoted fields
 * spanning lines are not supported (the published files have none). Returns a reason on failure.
 */
function parseOrg(line: string, from: number): string | undefined {
  const text = field(line, from, line.length);
  if (text.charCodeAt(0) !== 34) {
    if (text.indexOf('"') !== -1) return 'stray quote in the unquoted org field';
    parsedOrg = text;
    return undefined;
  }
  let org = '';
  let at = 1;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote === -1) return 'unterminated quoted org field';
    if (text.charCodeAt(quote + 1) === 34) {
      org += text.slice(at, quote + 1);
      at = quote + 2;
      continue;
    }
    if (quote !== text.length - 1) return 'text after the closing quote of the org field';
    parsedOrg = org + text.slice(at, quote);
    return undefined;
  }
}
let parsedOrg = '';
