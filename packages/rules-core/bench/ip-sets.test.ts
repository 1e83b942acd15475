import { isIp } from '@rampart/rules-core/ip/address';
import { parseIpRange } from '@rampart/rules-core/ip/range';
import { describe, expect, it } from 'vitest';
import { generateIpSet, rangeStartSet } from './ip-sets.ts';

const v6Ranges = parseIpRange('2001:db8::/48');

describe('IP sets', () => {
  const source = { v4Share: 0.7, v6Ranges, v6AnnouncedShare: 1 };

  it('is deterministic for a seed and differs between seeds', () => {
    expect(generateIpSet(500, 1, source)).toEqual(generateIpSet(500, 1, source));
    expect(generateIpSet(500, 2, source)).not.toEqual(generateIpSet(500, 1, source));
  });

  it('mixes families in the requested share and draws IPv6 inside announced ranges', () => {
    const ips = generateIpSet(10_000, 7, source);
    expect(ips.every(isIp)).toBe(true);
    const v6 = ips.filter((ip) => ip.includes(':'));
    expect(v6.length / ips.length).toBeGreaterThan(0.27);
    expect(v6.length / ips.length).toBeLessThan(0.33);
    expect(v6.every((ip) => ip.startsWith('2001:db8:'))).toBe(true);
  });

  it('picks range starts', () => {
    expect(rangeStartSet(3, 1, parseIpRange('192.0.2.16/28'))).toEqual([
      '192.0.2.16',
      '192.0.2.16',
      '192.0.2.16',
    ]);
  });
});
