/**
 * prexy.dev.json, what `npm run dev` runs prexy with in front of the demo shop: it passes the
 * real file parser, its routes serve the address prexy listens on, and demo-like pages come out
 * of the proxy's own substitution stage (route table, rule-set lookup, compiled-set cache,
 * sliced substitution) with the visible changes; under `/products` the child rule set replaces
 * the site-wide one instead of adding to it.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { SlicedSubstitution } from '../body/sliced-substitution.js';
import { RouteTable, ruleSetFor, type SiteRoute } from '../routing/route-table.js';
import { CompiledSets } from '../rules/compiled-sets.js';
import { type PrexyFile, readPrexyFile } from './prexy-file.js';

const DEV_FILE = fileURLToPath(new URL('../../prexy.dev.json', import.meta.url));
/** The demo shop's default address (apps/client-demo/src/config/config.ts). */
const DEMO = 'http://127.0.0.1:3000';

/** A page shaped like the demo's layout (apps/client-demo/src/views/layout.eta). */
function page(heading: string): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head><title>Home · Rampart Garden Supply</title></head>',
    '<body>',
    '  <header class="site"><a class="brand" href="/">Rampart Garden Supply</a></header>',
    `  <main><h1>${heading}</h1>`,
    '  <ul class="cards"><li class="card"><a href="/products/copper-watering-can">Copper watering can</a></li></ul></main>',
    '  <footer class="site">A demo shop protected by Rampart. Nothing here is for sale.</footer>',
    '</body>',
    '</html>',
  ].join('\n');
}

/** `html` through the proxy's substitution stage for `path`, fed in small pieces like a stream. */
async function throughPrexy(route: SiteRoute, path: string, html: string): Promise<string> {
  const rules = ruleSetFor(route, path);
  if (rules === undefined) return html;
  const bytes = Buffer.from(html);
  const pieces: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += 7) pieces.push(bytes.subarray(at, at + 7));
  const out: Buffer[] = [];
  await pipeline(
    Readable.from(pieces),
    new SlicedSubstitution(rules.set, route.route.maxBufferedBytes, (message) => {
      throw new Error(`unexpected warning: ${message}`);
    }),
    async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) out.push(chunk);
    },
  );
  return Buffer.concat(out).toString('utf8');
}

describe('prexy.dev.json', () => {
  let file: PrexyFile;
  let table: RouteTable;
  let port: number;

  beforeAll(async () => {
    file = await readPrexyFile(DEV_FILE);
    table = RouteTable.build(file.sites, new CompiledSets());
    port = file.listen.port;
  });

  it('listens on loopback, on a port none of the other dev apps uses, with one worker', () => {
    expect(file.listen.host).toBe('127.0.0.1');
    expect([3000, 4000, 16379]).not.toContain(port);
    expect(file.workers).toBe(1);
    expect(file.accessLog).toBe(true);
    expect(file.sites.every((site) => site.hub === undefined)).toBe(true);
  });

  it('routes the addresses prexy listens on to the demo shop', () => {
    expect([...table.hosts].sort()).toEqual([`127.0.0.1:${port}`, `localhost:${port}`]);
    for (const host of table.hosts) expect(table.route(host)?.route.upstream).toBe(DEMO);
  });

  it('makes the visible changes on a demo page', async () => {
    const route = table.route(`127.0.0.1:${port}`) as SiteRoute;
    const out = await throughPrexy(route, '/', page('Tools for patient gardeners'));
    expect(out).toMatch(
      /<body>\n {2}<header class="site prexy-banner"><strong>Served through prexy/,
    );
    expect(out).toContain('<title>Home · Prexy Garden Supply</title>');
    expect(out).toContain('<a class="brand" href="/">Prexy Garden Supply</a>');
    expect(out).not.toContain('Rampart Garden Supply');
    expect(out).toContain(
      '<h1>Tools for patient gardeners <small>(rewritten by prexy)</small></h1>',
    );
    expect(out).toContain('>Brass watering can</a>');
    // A literal outside every pattern is left alone (only the brand's name was rewritten).
    expect(out).toContain('A demo shop protected by Rampart.');
  });

  it('uses the /products rule set alone under /products: a child list replaces its parent', async () => {
    const route = table.route(`localhost:${port}`) as SiteRoute;
    expect(ruleSetFor(route, '/products/copper-watering-can')).toBe(ruleSetFor(route, '/products'));
    expect(ruleSetFor(route, '/products')).not.toBe(ruleSetFor(route, '/'));
    const out = await throughPrexy(route, '/products', page('Products'));
    expect(out).toContain('rule set "/products": it replaces "/"');
    expect(out).toContain('>Brass watering can</a>');
    expect(out).toContain('<a class="brand" href="/">Rampart Garden Supply</a>');
    expect(out).toContain('<h1>Products</h1>');
  });
});
