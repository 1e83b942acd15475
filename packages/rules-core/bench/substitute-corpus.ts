/**
 * Deterministic inputs for `npm run bench:substitute`: a 1 MiB HTML page and two families of
 * 50 rules (few matches / dense matches), all written in the common subset of the sregex
 * dialect, JavaScript `RegExp` and RE2 so that every contender runs the same patterns.
 *
 * - "few": the kind of rules prexy runs (host rewrites, analytics IDs, legacy attributes):
 *   literals, classes, alternations, some with groups in the replacement; together they match
 *   a few hundred times in the page.
 * - "dense": rules hitting common tags, attributes and a fifth of the words: roughly one match
 *   every ~25 bytes (about 40 000 in the page).
 */
import type { SubstitutionRule } from '@rampart/rules-core/substitution/rule-set';

/** mulberry32: a tiny seeded PRNG, so the page is identical on every run and machine. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = (
  'lo rem ip sum do lor sit am et con sec tur ad pis cing el sed eius mod tem por in ci dunt ut ' +
  'la bo re ma gna al qua en im ve ni nos trud ex er ta ul co ris'
).split(' ');

/** 200 distinct pseudo-words; the dense rules target the first 40 (a fifth of the words). */
const WORDS: readonly string[] = (() => {
  const random = prng(0x0c0ffee);
  const pick = () => SYLLABLES[Math.floor(random() * SYLLABLES.length)] as string;
  const words = new Set<string>();
  while (words.size < 200) words.add(pick() + pick() + (random() < 0.3 ? pick() : ''));
  return [...words];
})();

/** The 50 "few matches" rules; `fewMarker(k)` is text that rule k matches. */
export function fewRules(): SubstitutionRule[] {
  return Array.from({ length: 50 }, (_, k): SubstitutionRule => {
    switch (k % 5) {
      case 0:
        return {
          pattern: `cdn${k}\\.old-example\\.com`,
          replacement: `cdn${k}.example.net`,
          flags: 'g',
        };
      case 1:
        return { pattern: `UA-${k}\\d{4,6}-\\d`, replacement: `UA-${k}0000-0`, flags: 'g' };
      case 2:
        return {
          pattern: `(?:alpha|beta|gamma)-widget-${k}\\b`,
          replacement: `widget-${k}`,
          flags: 'gi',
        };
      case 3:
        return {
          pattern: `data-legacy-${k}="([a-z]+)"`,
          replacement: `data-modern-${k}="$1"`,
          flags: 'g',
        };
      default:
        return {
          pattern: `http://(shop|blog)${k}\\.example\\.org/([a-z]+)`,
          replacement: `https://$1.example${k}.org/$2`,
          flags: 'g',
        };
    }
  });
}

function fewMarker(k: number, random: () => number): string {
  const n = Math.floor(random() * 9000) + 1000;
  switch (k % 5) {
    case 0:
      return `<script src="https://cdn${k}.old-example.com/app.js"></script>`;
    case 1:
      return `<script>ga('create', 'UA-${k}${n}-1');</script>`;
    case 2:
      return `<span class="Beta-widget-${k}">w</span>`;
    case 3:
      return `<div data-legacy-${k}="promo">x</div>`;
    default:
      return `<a href="http://shop${k}.example.org/catalog">shop</a>`;
  }
}

/** The 50 "dense matches" rules. */
export function denseRules(): SubstitutionRule[] {
  const structural: SubstitutionRule[] = [
    { pattern: 'class="([a-z]+) ([a-z]+-\\d+)"', replacement: 'class="$1 v2-$2"', flags: 'g' },
    { pattern: 'href="http://([a-z.]+)/', replacement: 'href="https://$1/', flags: 'g' },
    { pattern: '<p>', replacement: '<p class="t">', flags: 'g' },
    { pattern: '</h2>|</h3>', replacement: '</h4>', flags: 'g' },
    { pattern: 'src="/img/(\\d+)\\.png"', replacement: 'src="/img/$1.webp"', flags: 'g' },
    { pattern: 'alt="[^"]*"', replacement: 'alt=""', flags: 'g' },
    { pattern: '<li>', replacement: '<li class="i">', flags: 'g' },
    { pattern: 'Read more', replacement: 'Continue', flags: 'gi' },
    { pattern: 'article-(\\d+)', replacement: 'post-$1', flags: 'g' },
    { pattern: '\\bwww\\.example\\.com\\b', replacement: 'example.com', flags: 'g' },
  ];
  const words = WORDS.slice(0, 40).map(
    (w): SubstitutionRule => ({ pattern: `\\b${w}\\b`, replacement: w.toUpperCase(), flags: 'g' }),
  );
  return [...structural, ...words];
}

/** A 1 MiB HTML page (exactly `size` bytes), the same on every run. */
export function htmlPage(size = 1 << 20): Buffer {
  const random = prng(0x5eed);
  const word = () => WORDS[Math.floor(random() * WORDS.length)] as string;
  const parts: string[] = [
    '<!doctype html>\n<html><head><meta charset="utf-8"><title>Rampart bench</title></head><body>\n',
  ];
  let length = parts[0]?.length ?? 0;
  let item = 0;
  while (length < size) {
    let block = `<div class="card item-${item}"><h2>${word()} ${word()}</h2>\n<ul>`;
    for (let i = 0; i < 3; i++) block += `<li>${word()} ${word()}</li>`;
    block += '</ul>\n<p>';
    const sentence = 20 + Math.floor(random() * 30);
    for (let i = 0; i < sentence; i++) block += `${word()}${i % 9 === 8 ? '. ' : ' '}`;
    block += `</p>\n<a href="http://www.example.com/article-${item}">Read more</a>`;
    block += `<img src="/img/${item}.png" alt="${word()} ${word()}">\n`;
    // About one marker for a "few" rule per 3 KiB: a few hundred matches in the page.
    if (random() < 0.4) block += `${fewMarker(Math.floor(random() * 50), random)}\n`;
    block += '</div>\n';
    parts.push(block);
    length += block.length;
    item++;
  }
  return Buffer.from(parts.join(''), 'latin1').subarray(0, size);
}
