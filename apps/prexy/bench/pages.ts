/**
 * What `bench:prexy` serves and substitutes: realistic shop pages (product cards with links,
 * images, analytics snippets and tracking attributes) of a chosen size, and rule sets of 1, 10
 * and 50 regex rules (plus 10 literal ones for nginx's `sub_filter`).
 *
 * The rules are chosen so that PCRE (nginx's subs_filter, which applies rule after rule, line by
 * line) and Rampart's engine (all rules in one pass, leftmost-first) give the same bytes: no rule
 * spans a line, no two rules' matches overlap, and no replacement creates a match of another
 * rule. The benchmark checks the bytes before it times anything.
 */

export interface BenchRule {
  readonly pattern: string;
  readonly replacement: string;
}

/** Rules that match on every page (domain rewrites, analytics ids, prices...). */
const CORE_RULES: readonly BenchRule[] = [
  { pattern: 'https://cdn\\.example\\.com/', replacement: 'https://cdn.rampart.example/' },
  { pattern: 'shop\\.example\\.com', replacement: 'store.example.org' },
  { pattern: 'UA-[0-9]+-[0-9]+', replacement: 'UA-000000-0' },
  { pattern: 'G-[A-Z0-9]{8}', replacement: 'G-00000000' },
  { pattern: 'utm_source=[a-z]+', replacement: 'utm_source=rampart' },
  { pattern: 'SKU-([0-9]+)', replacement: 'ITEM-$1' },
  { pattern: 'EUR ([0-9]+)\\.([0-9][0-9])', replacement: '$1,$2 EUR' },
  { pattern: 'loading="lazy"', replacement: 'loading="eager"' },
  { pattern: 'Garden chair', replacement: 'Patio chair' },
  { pattern: 'class="title"', replacement: 'class="product-title"' },
];

/** Tracking attributes `data-ref="rK-xxxxxxxx"`: rule K rewrites those of its K. */
function refRule(k: number): BenchRule {
  return { pattern: `data-ref="r${k}-[0-9a-f]{8}"`, replacement: `data-ref="moved-${k}"` };
}

/** `count` regex rules: the core ten first, then tracking-attribute rules. */
export function regexRules(count: number): BenchRule[] {
  const rules = CORE_RULES.slice(0, count);
  for (let k = 0; rules.length < count; k++) rules.push(refRule(k));
  return rules;
}

/** Ten literal rules (for nginx's `sub_filter`, which has no regexes). */
export function literalRules(): BenchRule[] {
  return [
    { pattern: 'https://cdn.example.com/', replacement: 'https://cdn.rampart.example/' },
    { pattern: 'shop.example.com', replacement: 'store.example.org' },
    { pattern: 'UA-123456-7', replacement: 'UA-000000-0' },
    { pattern: 'G-7QX2K9PL', replacement: 'G-00000000' },
    { pattern: 'utm_source=newsletter', replacement: 'utm_source=rampart' },
    { pattern: 'data-sku=', replacement: 'data-item=' },
    { pattern: 'EUR ', replacement: '€ ' },
    { pattern: 'loading="lazy"', replacement: 'loading="eager"' },
    { pattern: 'Garden chair', replacement: 'Patio chair' },
    { pattern: 'class="title"', replacement: 'class="product-title"' },
  ];
}

/** The same pattern as a regex source (for engines that only take regexes). */
export function escapeLiteral(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, (c) => `\\${c}`);
}

/** A deterministic page of at least `bytes` bytes (then cut at a card boundary + footer). */
export function shopPage(bytes: number): string {
  let seed = 12345;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed;
  };
  const head = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Garden furniture | Shop</title>
<link rel="stylesheet" href="https://cdn.example.com/css/site.4f9a1c.css">
<script async src="https://www.googletagmanager.com/gtag/js?id=UA-123456-7"></script>
<script>window.dataLayer = window.dataLayer || []; gtag('config', 'G-7QX2K9PL');</script>
</head>
<body>
<header><a href="https://shop.example.com/">Home</a> <a href="https://shop.example.com/cart">Cart</a></header>
<main class="grid">
`;
  const foot = `</main>
<footer><p>Prices include VAT. <a href="https://shop.example.com/legal?utm_source=footer">Legal</a></p></footer>
<script src="https://cdn.example.com/js/app.91b2e0.js" defer></script>
</body>
</html>
`;
  const parts = [head];
  let size = head.length + foot.length;
  for (let n = 1; size < bytes; n++) {
    const price = `${10 + (next() % 490)}.${String(next() % 100).padStart(2, '0')}`;
    const ref = `r${next() % 60}-${(next() % 0xffffffff).toString(16).padStart(8, '0')}`;
    const card = `<div class="card" data-sku="SKU-${n}" data-ref="${ref}">
  <a href="https://shop.example.com/products/${n}?utm_source=newsletter&amp;utm_medium=email">
    <img src="https://cdn.example.com/img/p${n}.jpg" alt="Garden chair model ${n}" loading="lazy" width="320" height="240"></a>
  <h3 class="title">Garden chair model ${n}</h3>
  <p class="price">EUR ${price}</p>
  <p class="blurb">Weatherproof teak, folds flat, ships in two to four working days. Rated ${1 + (next() % 5)} of 5 by customers.</p>
  <script>window.dataLayer.push({ event: 'impression', id: 'G-7QX2K9PL', sku: 'SKU-${n}' });</script>
</div>
`;
    parts.push(card);
    size += card.length;
  }
  parts.push(foot);
  return parts.join('');
}

/**
 * A deterministic article page of at least `bytes` bytes that none of the bench rules matches
 * (no shop links, ids or prices): what the bitmap cache learns to stream straight through.
 */
export function articlePage(bytes: number): string {
  const head = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Caring for outdoor wood</title>
<link rel="stylesheet" href="/static/article.css"></head>
<body>
<article>
`;
  const foot = `</article>
</body>
</html>
`;
  const parts = [head];
  let size = head.length + foot.length;
  for (let n = 1; size < bytes; n++) {
    const section = `<section id="s${n}">
  <h2>Season ${n}: oil, wait, repeat</h2>
  <p>Clean the surface with a soft brush, let it dry for a day, then apply a thin coat of oil
  along the grain. Wipe off what the wood does not take after twenty minutes.</p>
  <p>In wet weeks, cover the furniture at night and keep the legs off the lawn.</p>
</section>
`;
    parts.push(section);
    size += section.length;
  }
  parts.push(foot);
  return parts.join('');
}

/** nginx `subs_filter` directives for `rules` (regex mode, every match). */
export function subsFilterDirectives(rules: readonly BenchRule[]): string {
  return rules
    .map((r) => `subs_filter ${nginxQuote(r.pattern)} ${nginxQuote(r.replacement)} gr;`)
    .join('\n      ');
}

/** nginx `sub_filter` directives for literal `rules`. */
export function subFilterDirectives(rules: readonly BenchRule[]): string {
  return [
    ...rules.map((r) => `sub_filter ${nginxQuote(r.pattern)} ${nginxQuote(r.replacement)};`),
    'sub_filter_once off;',
    'sub_filter_types text/html;',
  ].join('\n      ');
}

/** A single-quoted nginx string: `\` and `'` escaped, everything else as is. */
function nginxQuote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
