import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatIp, ipFromBigInt, ipToBigInt, parseIp } from '../ip/address.js';
import type { IpRange } from '../ip/range.js';
import { importCidrListFile, parseCidrList } from './cidr-list.js';
import { DatasetImportError } from './dataset.js';

const ip = (text: string) => ipToBigInt(parseIp(text));
const r4 = (start: string, end: string): IpRange => ({ family: 4, start: ip(start), end: ip(end) });
const r6 = (start: string, end: string): IpRange => ({ family: 6, start: ip(start), end: ip(end) });

const spamhausDrop = [
  '; Spamhaus DROP List 2026/11/30 - (c) 2026 The Spamhaus Project SLU',
  '; https://www.spamhaus.org/drop/drop.txt',
  '; Last-Modified: Mon, 30 Nov 2026 08:00:00 GMT',
  '1.10.16.0/20 ; SBL256894',
  '1.19.0.0/16 ; SBL434604',
  '2001:db8:100::/40 ; SBL999999',
];

const fireholLevel1 = [
  '#',
  '# firehol_level1',
  '#',
  '# An ipset made from blocklists that provide the maximum',
  '',
  '0.0.0.0/8',
  '1.10.16.0/20',
  '  223.254.0.0/16  ',
  '5.6.7.8',
  '10.0.0.1-10.0.0.9',
];

describe('parseCidrList', () => {
  it('reads Spamhaus DROP (; comments, trailing comments)', async () => {
    const result = await parseCidrList('spamhaus-drop', spamhausDrop);
    expect(result).toEqual({
      entries: [
        r4('1.10.16.0', '1.10.31.255'),
        r4('1.19.0.0', '1.19.255.255'),
        r6('2001:db8:100::', '2001:db8:1ff:ffff:ffff:ffff:ffff:ffff'),
      ],
      issues: [],
      lines: 6,
    });
  });

  it('reads FireHOL netsets (# comments, blank lines, addresses and start-end ranges)', async () => {
    const result = await parseCidrList('firehol_level1', fireholLevel1);
    expect(result.issues).toEqual([]);
    expect(result.lines).toBe(10);
    expect(result.entries).toEqual([
      r4('0.0.0.0', '0.255.255.255'),
      r4('1.10.16.0', '1.10.31.255'),
      r4('223.254.0.0', '223.254.255.255'),
      r4('5.6.7.8', '5.6.7.8'),
      r4('10.0.0.1', '10.0.0.9'),
    ]);
  });

  it('accepts a trailing # comment and CRLF line endings', async () => {
    const result = await parseCidrList('x', [
      '1.2.3.0/24 # scanners\r',
      '# whole line\r',
      '\r',
      '::1\r',
    ]);
    expect(result.issues).toEqual([]);
    expect(result.entries).toEqual([r4('1.2.3.0', '1.2.3.255'), r6('::1', '::1')]);
  });

  it('splits IPv6 entries over the IPv4-mapped block; keeps IPv4-compatible ones IPv6', async () => {
    const result = await parseCidrList('x', ['::ffff:10.0.0.0/104', '::1.2.3.0/120']);
    expect(result.entries).toEqual([
      r4('10.0.0.0', '10.255.255.255'),
      { family: 6, start: 0x01020300n, end: 0x010203ffn },
    ]);
  });

  it('reports bad lines with the list name and 1-based line numbers', async () => {
    const result = await parseCidrList('mylist', [
      '# header',
      '1.2.3.4/33',
      '10.0.0.1/8 ; SBL1',
      '1.2.3.0/24',
      'junk',
    ]);
    expect(result.entries).toEqual([r4('1.2.3.0', '1.2.3.255')]);
    expect(result.issues).toEqual([
      {
        file: 'mylist',
        line: 2,
        reason: 'invalid IP range "1.2.3.4/33": prefix length 33 exceeds 32 for IPv4',
      },
      {
        file: 'mylist',
        line: 3,
        reason: 'invalid IP range "10.0.0.1/8": host bits are set; did you mean 10.0.0.0/8?',
      },
      { file: 'mylist', line: 5, reason: expect.stringContaining('invalid IP range "junk"') },
    ]);
  });

  it('names issues by options.file when given', async () => {
    const result = await parseCidrList('mylist', ['bad'], { file: 'lists/mylist.netset' });
    expect(result.issues[0]?.file).toBe('lists/mylist.netset');
  });

  it('reject throws after reading everything, listing every issue, and returns nothing', async () => {
    const lines = ['1.2.3.0/24', 'fe80::1%eth0', '1.2.3.0/24', '300.1.1.1'];
    let error: unknown;
    let result: unknown;
    try {
      result = await parseCidrList('mylist', lines, { onBadLine: 'reject' });
    } catch (e) {
      error = e;
    }
    expect(result).toBeUndefined();
    expect(error).toBeInstanceOf(DatasetImportError);
    const rejected = error as DatasetImportError;
    expect(rejected.issues.map((i) => i.line)).toEqual([2, 4]);
    expect(rejected.message).toContain('2 bad lines');
    expect(rejected.message).toContain('mylist:2: invalid IP range "fe80::1%eth0"');
    expect(rejected.message).toContain('zone ids');
    expect(rejected.message).toContain('mylist:4: invalid IP range "300.1.1.1"');
  });
});

describe('importCidrListFile', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rampart-cidr-list-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('names the list after the file and issues after the path', async () => {
    const path = join(dir, 'drop_v4.txt');
    await writeFile(path, `${spamhausDrop.join('\r\n')}\r\nnot-an-ip ; SBL0\r\n`);
    const result = await importCidrListFile(path);
    expect(result.list.name).toBe('drop_v4');
    expect(result.list.ranges).toHaveLength(3);
    expect(result.lines).toBe(7);
    expect(result.issues).toEqual([
      { file: path, line: 7, reason: expect.stringContaining('"not-an-ip"') },
    ]);
  });

  it('takes an explicit name and file name, and rejects on request', async () => {
    const path = join(dir, 'firehol_level1.netset');
    await writeFile(path, `${fireholLevel1.join('\n')}\n`);
    const result = await importCidrListFile(path, { name: 'level1' });
    expect(result.list).toEqual({ name: 'level1', ranges: expect.any(Array) });
    expect(result.list.ranges).toHaveLength(5);

    await writeFile(path, '1.2.3.0/24\n1.2.3.0/33\n');
    await expect(
      importCidrListFile(path, { file: 'level1.netset', onBadLine: 'reject' }),
    ).rejects.toThrow('level1.netset:2: invalid IP range "1.2.3.0/33"');
  });

  it('a missing file is an error', async () => {
    await expect(importCidrListFile(join(dir, 'nope.netset'))).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });
});

describe('properties', () => {
  it('random CIDRs written one per line, with comments around them, parse back', async () => {
    const cidr = fc
      .oneof(
        fc.record({
          family: fc.constant(4 as const),
          value: fc.bigInt({ min: 0n, max: 0xffffffffn }),
          prefix: fc.nat(32),
        }),
        // Clear of ::ffff:0:0/96 so no entry splits: top bit set.
        fc.record({
          family: fc.constant(6 as const),
          value: fc.bigInt({ min: 1n << 127n, max: (1n << 128n) - 1n }),
          prefix: fc.integer({ min: 1, max: 128 }),
        }),
      )
      .map(({ family, value, prefix }): IpRange => {
        const bits = family === 4 ? 32n : 128n;
        const hostMask = (1n << (bits - BigInt(prefix))) - 1n;
        return { family, start: value & ~hostMask, end: value | hostMask };
      });
    const comment = fc.constantFrom('', ' ; SBL123', ' # note', '\r');
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(cidr, comment)), async (rows) => {
        const lines = ['# header', ''];
        for (const [range, trailer] of rows) {
          const size = range.end - range.start + 1n;
          const prefix = (range.family === 4 ? 32 : 128) - (size.toString(2).length - 1);
          lines.push(`${formatIp(ipFromBigInt(range.family, range.start))}/${prefix}${trailer}`);
        }
        const result = await parseCidrList('p', lines, { onBadLine: 'reject' });
        expect(result.entries).toEqual(rows.map(([range]) => range));
        expect(result.lines).toBe(lines.length);
      }),
      { numRuns: 300 },
    );
  });
});
