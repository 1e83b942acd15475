import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseIpRange } from '@rampart/rules-core/ip/range';
import { afterAll, describe, expect, it } from 'vitest';
import { matchNeighbours, memberId, tableMembers } from './wafris-layout.ts';
import { buildWafrisSqlite, openWafrisSqlite } from './wafris-sqlite.ts';

const ranges = [
  '10.0.0.0/8',
  '10.1.0.0/16',
  '192.0.2.7/32',
  '198.51.100.0/24',
  '2001:db8::/32',
].map((text) => parseIpRange(text)[0] as NonNullable<ReturnType<typeof parseIpRange>[0]>);
const dir = mkdtempSync(join(tmpdir(), 'rampart-wafris-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Wafris layout', () => {
  it('stores two members per range, sorted, with the range id last', () => {
    const members = tableMembers(ranges);
    expect(members).toHaveLength(ranges.length * 2);
    expect([...members].sort()).toEqual(members);
    expect(members.map(memberId).filter((id) => id === '3')).toHaveLength(2);
  });

  it('matches only when both neighbours carry one id', () => {
    expect(matchNeighbours('x-end-4', 'y-start-4')).toBe(4);
    expect(matchNeighbours('x-end-4', 'y-end-3')).toBe(-1);
    expect(matchNeighbours(undefined, 'y-start-4')).toBe(-1);
  });

  describe('in SQLite, with the anchor defects', () => {
    const path = join(dir, 'wafris.sqlite');
    buildWafrisSqlite(path, [{ name: 'ranges', ranges }]);
    const lookup = openWafrisSqlite(path, ['ranges']);
    afterAll(() => lookup.close());
    const find = (ip: string) => {
      const out = new Int32Array(1);
      lookup.lookup(ip, out, 0);
      return out[0];
    };

    it('finds addresses inside a range, including its last address', () => {
      expect(find('198.51.100.77')).toBe(3);
      expect(find('198.51.100.255')).toBe(3);
      expect(find('2001:db8:1::1')).toBe(4);
      expect(find('203.0.113.1')).toBe(-1);
    });

    it('defect 1: misses the first address of a range and every /32', () => {
      expect(find('198.51.100.0')).toBe(-1);
      expect(find('192.0.2.7')).toBe(-1);
    });

    it('defect 2: misses the outer range around a nested one', () => {
      expect(find('10.1.2.3')).toBe(1);
      expect(find('10.200.0.1')).toBe(-1); // inside 10/8, after 10.1/16
    });
  });
});
