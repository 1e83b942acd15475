import { afterEach, describe, expect, it } from 'vitest';
import { regexEngine, registerRegexEngine } from '../rules/regex-extension.js';
import { SregexMatcher, sregexEngine } from './waf-engine.js';

describe('the WAF regex engine', () => {
  afterEach(() => registerRegexEngine(sregexEngine));

  it('test() is "a match anywhere", with sregex semantics', () => {
    const m = sregexEngine.compile('^/wp-(admin|login)\\b', '');
    expect(m.test('/wp-admin/x')).toBe(true);
    expect(m.test('/wp-administrator')).toBe(false);
    expect(m.test('/blog/wp-admin')).toBe(false);
    expect(new SregexMatcher('sqlmap|nikto', 'i').test('Mozilla NIKTO/2.1')).toBe(true);
    expect(new SregexMatcher('x$').test('abx')).toBe(true);
    expect(new SregexMatcher('').test('')).toBe(true);
  });

  it('matches non-ASCII input as UTF-8 bytes', () => {
    expect(new SregexMatcher('caf\\xc3\\xa9').test('café')).toBe(true);
    expect(new SregexMatcher('é').test('une été')).toBe(true);
  });

  it('rejects unsupported syntax and flags with a message naming the problem', () => {
    expect(() => sregexEngine.compile('a(?=b)', '')).toThrow(
      'regex "a(?=b)": position 1: lookahead is not supported',
    );
    expect(() => sregexEngine.compile('a', 'g')).toThrow('regex flag "g" is not supported');
  });

  it('stays linear on pathological patterns', () => {
    const m = sregexEngine.compile('(a+)+b', '');
    const t0 = performance.now();
    expect(m.test('a'.repeat(200_000))).toBe(false);
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  it('is the engine installed at the extension point by default', () => {
    expect(regexEngine()).toBe(sregexEngine);
  });
});
