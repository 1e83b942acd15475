import { createReadStream, existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatIp, ipFromBigInt, ipToBigInt, parseIp } from '../ip/address.js';
import { type IpRange, normalizeRange } from '../ip/range.js';
import { DatasetImportError, type ImportResult } from './dataset.js';
import {
  importAsnCsvFile,
  importCountryCsvFile,
  parseAsnCsv,
  parseCountryCsv,
} from './ip-location-db.js';

const ip = (text: string) => ipToBigInt(parseIp(text));
const r4 = (start: string, end: string): IpRange => ({ family: 4, start: ip(start), end: ip(end) });
const r6 = (start: string, end: string): IpRange => ({ family: 6, start: ip(start), end: ip(end) });
const MAPPED_START = 0xffffn << 32n;

/** Runs `fn` and returns what it threw (failing when it returns). */
async function rejection(promise: Promise<unknown>): Promise<DatasetImportError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(DatasetImportError);
    return error as DatasetImportError;
  }
  throw new Error('expected the import to be rejected');
}

async function* asAsync(lines: readonly string[]): AsyncGenerator<string> {
  for (const line of lines) yield line;
}

describe('parseCountryCsv', () => {
  it('reads IPv4 and IPv6 rows, normalising the country code to upper case', async () => {
    const result = await parseCountryCsv(
      [
        '1.0.0.0,1.0.0.255,AU',
        '1.0.1.0,1.0.3.255,cn',
        '2001:200::,2001:218:2000:51:ffff:ffff:ffff:ffff,AU',
      ],
      { file: 'country.csv' },
    );
    expect(result).toEqual({
      entries: [
        { range: r4('1.0.0.0', '1.0.0.255'), country: 'AU' },
        { range: r4('1.0.1.0', '1.0.3.255'), country: 'CN' },
        { range: r6('2001:200::', '2001:218:2000:51:ffff:ffff:ffff:ffff'), country: 'AU' },
      ],
      issues: [],
      lines: 3,
    });
  });

  it('accepts any textual form of an address, and a single-address row', async () => {
    const { entries, issues } = await parseCountryCsv(
      ['2001:0DB8:0000:0000:0000:0000:0000:0000,2001:db8::ffff,de', '9.9.9.9,9.9.9.9,US'],
      { file: 'x.csv' },
    );
    expect(issues).toEqual([]);
    expect(entries.map((e) => e.range)).toEqual([
      r6('2001:db8::', '2001:db8::ffff'),
      r4('9.9.9.9', '9.9.9.9'),
    ]);
  });

  it('splits IPv6 rows overlapping the IPv4-mapped block (normalizeRange)', async () => {
    const { entries } = await parseCountryCsv(
      ['::ffff:1.0.0.0,::ffff:1.0.0.255,AU', '::fffe:ffff:ffff,::ffff:0.0.0.1,ZZ'],
      { file: 'x.csv' },
    );
    expect(entries).toEqual([
      { range: r4('1.0.0.0', '1.0.0.255'), country: 'AU' },
      { range: { family: 6, start: MAPPED_START - 1n, end: MAPPED_START - 1n }, country: 'ZZ' },
      { range: r4('0.0.0.0', '0.0.0.1'), country: 'ZZ' },
    ]);
  });

  it('skips blank lines (counting them), CRLF line endings and a byte-order mark', async () => {
    const { entries, issues, lines } = await parseCountryCsv(
      ['\uFEFF1.0.0.0,1.0.0.255,AU\r', '\r', '', '   ', '1.0.1.0,1.0.3.255,CN\r'],
      { file: 'crlf.csv' },
    );
    expect(issues).toEqual([]);
    expect(lines).toBe(5);
    expect(entries.map((e) => e.country)).toEqual(['AU', 'CN']);
  });

  it('reads async iterables the same way', async () => {
    const lines = ['1.0.0.0,1.0.0.255,AU', 'bad', '1.0.1.0,1.0.3.255,CN'];
    const sync = await parseCountryCsv(lines, { file: 'a.csv' });
    const async = await parseCountryCsv(asAsync(lines), { file: 'a.csv' });
    expect(async).toEqual(sync);
    expect(sync.entries).toHaveLength(2);
  });

  const badRows: [string, string][] = [
    ['1.0.0.0,1.0.0.255', 'expected 3 comma-separated fields: start,end,country'],
    ['1.0.0.0,1.0.0.255,AU,extra', 'expected 3 comma-separated fields: start,end,country'],
    ['1.0.0.0', 'expected 3 comma-separated fields'],
    [
      '1.0.0.256,1.0.0.255,AU',
      'invalid start address "1.0.0.256": an IPv4 octet is greater than 255',
    ],
    ['1.0.0.0,1.0.0,AU', 'invalid end address "1.0.0"'],
    ['1.0.0.0,,AU', 'invalid end address "": empty string'],
    ['01.0.0.0,1.0.0.255,AU', 'leading zero'],
    ['fe80::1%eth0,fe80::2,AU', 'zone ids'],
    ['1.0.0.255,1.0.0.0,AU', 'start is after end'],
    ['1.0.0.0,2001:db8::,AU', 'start and end are of different IP families'],
    [
      '1.0.0.0,1.0.0.255,AUS',
      'invalid country code "AUS": expected two letters (ISO 3166-1 alpha-2)',
    ],
    ['1.0.0.0,1.0.0.255,', 'invalid country code ""'],
    ['1.0.0.0,1.0.0.255,A1', 'invalid country code "A1"'],
    ['1.0.0.0,1.0.0.255,"AU"', 'invalid country code'],
  ];
  it.each(badRows)('reports %j: %s', async (row, reason) => {
    const { entries, issues } = await parseCountryCsv(['1.0.0.0,1.0.0.255,AU', row], {
      file: 'geo.csv',
    });
    expect(entries).toHaveLength(1);
    expect(issues).toHaveLength(1);
    expect(issues[0]?.file).toBe('geo.csv');
    expect(issues[0]?.line).toBe(2);
    expect(issues[0]?.reason).toContain(reason);
  });

  it('tolerates spaces around fields', async () => {
    const { entries, issues } = await parseCountryCsv(['1.0.0.0 , 1.0.0.255 , au'], {
      file: 'x.csv',
    });
    expect(issues).toEqual([]);
    expect(entries).toEqual([{ range: r4('1.0.0.0', '1.0.0.255'), country: 'AU' }]);
  });
});

describe('bad lines: skip or reject', () => {
  const input = [
    '1.0.0.0,1.0.0.255,AU', // 1
    '', // 2
    '1.0.0.300,1.0.1.0,AU', // 3
    '1.0.2.0,1.0.2.255,CN', // 4
    '1.0.3.0,1.0.3.255,Australia', // 5
  ];

  it('skip (the default) keeps the good lines and lists the bad ones with 1-based line numbers', async () => {
    const result = await parseCountryCsv(input, { file: 'geo.csv' });
    expect(result.entries.map((e) => e.country)).toEqual(['AU', 'CN']);
    expect(result.lines).toBe(5);
    expect(result.issues).toEqual([
      {
        file: 'geo.csv',
        line: 3,
        reason: 'invalid start address "1.0.0.300": an IPv4 octet is greater than 255',
      },
      {
        file: 'geo.csv',
        line: 5,
        reason: 'invalid country code "Australia": expected two letters (ISO 3166-1 alpha-2)',
      },
    ]);
  });

  it('reject reads everything, then throws with every issue and returns nothing', async () => {
    const error = await rejection(parseCountryCsv(input, { file: 'geo.csv', onBadLine: 'reject' }));
    expect(error.issues.map((i) => i.line)).toEqual([3, 5]);
    expect(error.message).toContain('2 bad lines');
    expect(error.message).toContain('geo.csv:3: invalid start address "1.0.0.300"');
    expect(error.message).toContain('geo.csv:5: invalid country code "Australia"');
    expect(error.name).toBe('DatasetImportError');
  });

  it('reject on clean input returns the entries', async () => {
    const result = await parseCountryCsv(['1.0.0.0,1.0.0.255,AU'], {
      file: 'geo.csv',
      onBadLine: 'reject',
    });
    expect(result.entries).toHaveLength(1);
    expect(result.issues).toEqual([]);
  });

  it('the error message names the first few issues and counts the rest', async () => {
    const many = Array.from({ length: 12 }, (_, i) => `bad row ${i}`);
    const error = await rejection(parseCountryCsv(many, { file: 'junk.csv', onBadLine: 'reject' }));
    expect(error.issues).toHaveLength(12);
    expect(error.message).toMatch(/^dataset import rejected, 12 bad lines: junk\.csv:1: /);
    expect(error.message).toContain('junk.csv:5:');
    expect(error.message).not.toContain('junk.csv:6:');
    expect(error.message).toMatch(/; and 7 more$/);
  });

  it('a single issue reads as one bad line', async () => {
    const error = await rejection(parseAsnCsv(['x'], { file: 'asn.csv', onBadLine: 'reject' }));
    expect(error.message).toBe(
      'dataset import rejected, 1 bad line: asn.csv:1: expected 4 comma-separated fields: start,end,asn,org',
    );
  });
});

describe('parseAsnCsv', () => {
  it('reads plain and quoted organisation names', async () => {
    const { entries, issues } = await parseAsnCsv(
      [
        '1.0.0.0,1.0.0.255,13335,"Cloudflare, Inc."',
        '1.0.4.0,1.0.7.255,38803,Gtelecom Pty Ltd',
        '2.56.8.0,2.56.11.255,201907,"LLC ""SPUTNIK"""',
        '2.56.12.0,2.56.12.255,1,"""Quoted"" start, and ""end"""',
        '2.56.13.0,2.56.13.255,2,""',
        '2.56.14.0,2.56.14.255,3,',
        '2.56.15.0,2.56.15.255,4294967295,Max',
        '2001::,2001::ffff:ffff:ffff:ffff:ffff:ffff,6939,Hurricane Electric LLC',
      ],
      { file: 'asn.csv' },
    );
    expect(issues).toEqual([]);
    expect(entries.map((e) => [e.asn, e.org])).toEqual([
      [13335, 'Cloudflare, Inc.'],
      [38803, 'Gtelecom Pty Ltd'],
      [201907, 'LLC "SPUTNIK"'],
      [1, '"Quoted" start, and "end"'],
      [2, ''],
      [3, ''],
      [4294967295, 'Max'],
      [6939, 'Hurricane Electric LLC'],
    ]);
    expect(entries[0]?.range).toEqual(r4('1.0.0.0', '1.0.0.255'));
    expect(entries[7]?.range).toEqual(r6('2001::', '2001::ffff:ffff:ffff:ffff:ffff:ffff'));
  });

  it('reads every row of an AS in full, however its name is written', async () => {
    const { entries, issues } = await parseAsnCsv(
      [
        '1.0.0.0,1.0.0.255,13335,"Cloudflare, Inc."',
        '1.1.1.0,1.1.1.255,13335,"Cloudflare, Inc."',
        '1.1.2.0,1.1.2.255,13335,Cloudflare',
        '1.1.3.0,1.1.3.255,13335,"Cloudflare"',
        '1.1.4.0,1.1.4.255,13335,Cloudflare"',
        '1.1.5.0,1.1.5.255,13335, Cloudflare ',
        '1.1.6.0,1.1.6.255,13335,"Cloudflare',
        '1.1.7.0,1.1.7.255,13335,Cloudflare, Inc.',
        '1.1.8.0,1.1.8.255,64500,"LLC ""X"""',
        '1.1.9.0,1.1.9.255,64500,"LLC ""X"""',
        '1.1.10.0,1.1.10.255,64500,LLC "X"',
      ],
      { file: 'asn.csv' },
    );
    expect(entries.map((e) => e.org)).toEqual([
      'Cloudflare, Inc.',
      'Cloudflare, Inc.',
      'Cloudflare',
      'Cloudflare',
      'Cloudflare',
      'Cloudflare, Inc.',
      'LLC "X"',
      'LLC "X"',
    ]);
    expect(issues.map((i) => [i.line, i.reason])).toEqual([
      [5, 'stray quote in the unquoted org field'],
      [7, 'unterminated quoted org field'],
      [11, 'stray quote in the unquoted org field'],
    ]);
    expect(entries[0]?.org).toBe(entries[1]?.org); // one shared string
  });

  const badRows: [string, string][] = [
    ['1.0.0.0,1.0.0.255,13335', 'expected 4 comma-separated fields: start,end,asn,org'],
    [
      '1.0.0.0,1.0.0.255,AS13335,Cloudflare',
      'invalid AS number "AS13335": expected an integer 0..4294967295',
    ],
    ['1.0.0.0,1.0.0.255,4294967296,Big', 'invalid AS number "4294967296"'],
    ['1.0.0.0,1.0.0.255,-1,Neg', 'invalid AS number "-1"'],
    ['1.0.0.0,1.0.0.255,1.5,Frac', 'invalid AS number "1.5"'],
    ['1.0.0.0,1.0.0.255,,Empty', 'invalid AS number ""'],
    ['1.0.0.0,1.0.0.255,1,"Cloudflare, Inc.', 'unterminated quoted org field'],
    ['1.0.0.0,1.0.0.255,1,"Cloudflare" Inc.', 'text after the closing quote of the org field'],
    ['1.0.0.0,1.0.0.255,1,Cloud"flare', 'stray quote in the unquoted org field'],
    ['2001:db8::,1.0.0.255,1,Mixed', 'start and end are of different IP families'],
    ['::1,::,1,Reversed', 'start is after end'],
  ];
  it.each(badRows)('reports %j: %s', async (row, reason) => {
    const { entries, issues } = await parseAsnCsv([row], { file: 'asn.csv' });
    expect(entries).toEqual([]);
    expect(issues).toEqual([{ file: 'asn.csv', line: 1, reason: expect.stringContaining(reason) }]);
  });
});

describe('files', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rampart-ip-location-db-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('streams a CRLF file and names it by its path in issues', async () => {
    const path = join(dir, 'country.csv');
    await writeFile(
      path,
      '1.0.0.0,1.0.0.255,AU\r\n\r\n1.0.1.0,1.0.3.255,XX1\r\n2001:200::,2001:200::ff,jp\r\n',
    );
    const result = await importCountryCsvFile(path);
    expect(result.entries).toEqual([
      { range: r4('1.0.0.0', '1.0.0.255'), country: 'AU' },
      { range: r6('2001:200::', '2001:200::ff'), country: 'JP' },
    ]);
    expect(result.lines).toBe(4);
    expect(result.issues).toEqual([
      { file: path, line: 3, reason: expect.stringContaining('"XX1"') },
    ]);
  });

  it('uses the given file name and rejects with it', async () => {
    const path = join(dir, 'asn.csv');
    await writeFile(path, '1.0.0.0,1.0.0.255,13335,"Cloudflare, Inc."\nnot a row\n');
    const error = await rejection(
      importAsnCsvFile(path, { file: 'asn-ipv4.csv', onBadLine: 'reject' }),
    );
    expect(error.message).toContain('asn-ipv4.csv:2: expected 4 comma-separated fields');
    const skipped = await importAsnCsvFile(path);
    expect(skipped.entries).toHaveLength(1);
    expect(skipped.issues[0]).toMatchObject({ file: path, line: 2 });
  });

  it('a file without a final newline still yields its last line', async () => {
    const path = join(dir, 'no-newline.csv');
    await writeFile(path, '1.0.0.0,1.0.0.255,AU\n1.0.1.0,1.0.3.255,CN');
    expect((await importCountryCsvFile(path)).entries).toHaveLength(2);
  });

  it('a missing file is an error, not an empty dataset', async () => {
    await expect(importCountryCsvFile(join(dir, 'missing.csv'))).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });

  it('a directory is an error, not an empty dataset', async () => {
    await expect(importCountryCsvFile(dir)).rejects.toMatchObject({ code: 'EISDIR' });
  });
});

// --- The real published files (first 1000 lines of each) ------------------------------------

function packageDir(name: string): string | undefined {
  try {
    return dirname(createRequire(import.meta.url).resolve(`${name}/package.json`));
  } catch {
    return undefined;
  }
}
const countryDir = packageDir('@ip-location-db/geo-whois-asn-country');
const asnDir = packageDir('@ip-location-db/asn');

async function firstLines(path: string, count: number): Promise<string[]> {
  const lines: string[] = [];
  const reader = createInterface({
    input: createReadStream(path),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  for await (const line of reader) {
    lines.push(line);
    if (lines.length === count) break;
  }
  reader.close();
  return lines;
}

function expectClean<T extends { range: IpRange }>(result: ImportResult<T>, family: 4 | 6): void {
  expect(result.issues).toEqual([]);
  expect(result.lines).toBe(1000);
  expect(result.entries).toHaveLength(1000);
  // Sorted by start, but not always disjoint: the country files nest more specific blocks
  // inside wider ones (2.58.197.15 is BE inside a DE /23), so flattening must handle overlaps.
  let previousStart = -1n;
  for (const { range } of result.entries) {
    expect(range.family).toBe(family);
    expect(range.start).toBeGreaterThanOrEqual(previousStart);
    expect(range.end).toBeGreaterThanOrEqual(range.start);
    previousStart = range.start;
  }
}

describe.skipIf(
  countryDir === undefined || !existsSync(join(countryDir, 'geo-whois-asn-country-ipv4.csv')),
)('@ip-location-db/geo-whois-asn-country (first 1000 lines)', () => {
  it.each([
    ['geo-whois-asn-country-ipv4.csv', 4],
    ['geo-whois-asn-country-ipv6.csv', 6],
  ] as const)('%s imports cleanly', async (name, family) => {
    const result = await parseCountryCsv(await firstLines(join(countryDir as string, name), 1000), {
      file: name,
      onBadLine: 'reject',
    });
    expectClean(result, family);
    for (const e of result.entries) expect(e.country).toMatch(/^[A-Z]{2}$/);
  });
});

describe.skipIf(asnDir === undefined || !existsSync(join(asnDir, 'asn-ipv4.csv')))(
  '@ip-location-db/asn (first 1000 lines)',
  () => {
    it.each([
      ['asn-ipv4.csv', 4],
      ['asn-ipv6.csv', 6],
    ] as const)('%s imports cleanly', async (name, family) => {
      const result = await parseAsnCsv(await firstLines(join(asnDir as string, name), 1000), {
        file: name,
        onBadLine: 'reject',
      });
      expectClean(result, family);
      if (family === 4) {
        expect(result.entries[0]).toEqual({
          range: r4('1.0.0.0', '1.0.0.255'),
          asn: 13335,
          org: 'Cloudflare, Inc.',
        });
      }
    });
  },
);

// --- Property: what we write, we read back ---------------------------------------------------

const V6_MAX = (1n << 128n) - 1n;

/** The range between two points, whichever comes first. */
function between(family: 4 | 6, a: bigint, b: bigint): IpRange {
  if (a <= b) return { family, start: a, end: b };
  return { family, start: b, end: a };
}
const v4 = fc.bigInt({ min: 0n, max: 0xffffffffn });
const v6Below = fc.bigInt({ min: 0n, max: MAPPED_START - 1n });
const v6Above = fc.bigInt({ min: MAPPED_START + 0x100000000n, max: V6_MAX });
/** Ranges that need no normalisation (IPv6 ranges clear of the mapped block). */
const rangeArb: fc.Arbitrary<IpRange> = fc.oneof(
  fc.tuple(v4, v4).map(([a, b]) => between(4, a, b)),
  fc.tuple(v6Below, v6Below).map(([a, b]) => between(6, a, b)),
  fc.tuple(v6Above, v6Above).map(([a, b]) => between(6, a, b)),
);

/** Writes a CSV field as the published files do: quoted only when it must be. */
function csvField(text: string): string {
  if (!/[",]/.test(text) && text.trim() === text) return text;
  return `"${text.replaceAll('"', '""')}"`;
}

function csvRow(range: IpRange, ...fields: string[]): string {
  const bound = (value: bigint) => formatIp(ipFromBigInt(range.family, value));
  return [bound(range.start), bound(range.end), ...fields].join(',');
}

describe('properties', () => {
  it('country rows written from random ranges parse back to the same ranges', async () => {
    const letter = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz');
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({ range: rangeArb, country: fc.tuple(letter, letter).map((l) => l.join('')) }),
        ),
        async (rows) => {
          const result = await parseCountryCsv(
            rows.map((r) => csvRow(r.range, r.country)),
            { file: 'p.csv', onBadLine: 'reject' },
          );
          expect(result.entries).toEqual(
            rows.map((r) => ({ range: r.range, country: r.country.toUpperCase() })),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('ASN rows with arbitrary organisation names parse back unchanged', async () => {
    const org = fc
      .string({ unit: fc.constantFrom(...'ab ,"\'é'), maxLength: 12 })
      .map((s) => s.trim());
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ range: rangeArb, asn: fc.nat({ max: 4294967295 }), org })),
        async (rows) => {
          const result = await parseAsnCsv(
            rows.map((r) => csvRow(r.range, String(r.asn), csvField(r.org))),
            { file: 'p.csv', onBadLine: 'reject' },
          );
          expect(result.entries).toEqual(rows);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('IPv6 rows over the mapped block come back as normalizeRange splits them', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.bigInt({ min: MAPPED_START - 0xffffn, max: MAPPED_START + 0x1ffffffffn }),
        fc.bigInt({ min: 0n, max: 0x1ffffffffn }),
        async (start, size) => {
          const range: IpRange = { family: 6, start, end: start + size };
          const { entries } = await parseCountryCsv([csvRow(range, 'AU')], {
            file: 'p.csv',
            onBadLine: 'reject',
          });
          expect(entries.map((e) => e.range)).toEqual(normalizeRange(range));
          let total = 0n;
          for (const e of entries) total += e.range.end - e.range.start + 1n;
          expect(total).toBe(size + 1n);
        },
      ),
      { numRuns: 300 },
    );
  });
});
