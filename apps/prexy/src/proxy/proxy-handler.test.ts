/**
 * The proxy end to end on loopback: a real origin (`node:http`), a real prexy in front of it,
 * real clients. Each `describe` is one part of the and the spec's contract.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request } from 'node:http';
import {
  brotliCompressSync,
  brotliDecompressSync,
  deflateSync,
  gunzipSync,
  gzipSync,
  inflateSync,
} from 'node:zlib';
import { findFreePort } from '@rampart/test-services/free-port';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePrexyFile, type SiteEntry } from '../config/prexy-file.js';
import {
  eventually,
  exchange,
  fetch,
  HOST,
  type Origin,
  type Prexy,
  readWhilePaused,
  siteFile,
  startOrigin,
  startPrexy,
} from '../test-support/loopback.js';

const PAGE = '<html><body><h1>Acme Shop</h1><p>foobar at the Shop</p></body></html>';
const EXPECTED = '<html><body><h1>Acme Store</h1><p>X at the Store</p></body></html>';
const RULES = [
  {
    pathPrefix: '/',
    rules: [
      { pattern: 'Shop', replacement: 'Store', flags: 'g' },
      { pattern: 'foobar', replacement: 'X', flags: 'g' },
      { pattern: 'start[a-z]*end', replacement: 'S', flags: 'g' },
    ],
  },
];
/**
 * `/big`: this line 2600 times per write (about 64 KiB), until 64 MiB are written: far more
 * than loopback's socket buffers (a few MiB each way) can hide.
 */
const BIG_LINE = '<p>Shop and more Shop</p>\n';
const BIG_WRITE = BIG_LINE.length * 2600;
const BIG_BYTES = 64 * 1024 * 1024;
const BIG_WRITES = Math.ceil(BIG_BYTES / BIG_WRITE);
/** Each line grows by two bytes ("Shop" -> "Store" twice). */
const BIG_OUT = BIG_WRITES * 2600 * (BIG_LINE.length + 2);

/** What the origin wrote of `/big` so far (backpressure test). */
let bigWritten = 0;
/** Set when the origin's `/hang` or `/slow-body` response was closed from prexy's side. */
let upstreamClosed = false;

function html(res: ServerResponse, extra: Record<string, string> = {}) {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...extra });
}

function route(req: IncomingMessage, res: ServerResponse): void {
  const path = req.url ?? '';
  if (path === '/page') {
    html(res, {
      'content-length': String(PAGE.length),
      etag: '"v1"',
      'last-modified': 'Tue, 01 Dec 2026 10:00:00 GMT',
    });
    res.end(PAGE);
  } else if (path === '/plain-etag') {
    html(res, { etag: '"plain"' });
    res.end('<p>nothing to change here</p>');
  } else if (path === '/weak-etag') {
    html(res, { etag: 'W/"weak"' });
    res.end(PAGE);
  } else if (path === '/css') {
    res.writeHead(200, { 'content-type': 'text/css', 'content-length': String(PAGE.length) });
    res.end(PAGE);
  } else if (path === '/split') {
    // The match "foobar" and "Shop" arrive across writes.
    html(res);
    const pieces = ['<p>foo', 'bar and Sh', 'op', '</p>'];
    let i = 0;
    const next = () => {
      if (i === pieces.length) {
        res.end();
        return;
      }
      res.write(pieces[i++]);
      setTimeout(next, 15);
    };
    next();
  } else if (path.startsWith('/coded/')) {
    const coding = path.slice('/coded/'.length);
    const body = Buffer.from(PAGE.repeat(50));
    const coded =
      coding === 'gzip'
        ? gzipSync(body)
        : coding === 'br'
          ? brotliCompressSync(body)
          : deflateSync(body);
    html(res, { 'content-encoding': coding, vary: 'accept-encoding' });
    // Two writes, cut inside the compressed stream.
    const half = Math.floor(coded.length / 2);
    res.write(coded.subarray(0, half));
    setTimeout(() => res.end(coded.subarray(half)), 15);
  } else if (path === '/range') {
    res.writeHead(206, {
      'content-type': 'text/html',
      'content-range': `bytes 0-9/${PAGE.length}`,
      'content-length': '10',
    });
    res.end(PAGE.slice(0, 10));
  } else if (path === '/not-modified') {
    res.writeHead(304, { etag: '"v1"' });
    res.end();
  } else if (path === '/no-content') {
    res.writeHead(204);
    res.end();
  } else if (path === '/headers') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(req.headers));
  } else if (path === '/echo') {
    const hash = createHash('sha256');
    let n = 0;
    req.on('data', (c: Buffer) => {
      n += c.length;
      hash.update(c);
    });
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ bytes: n, sha256: hash.digest('hex') }));
    });
  } else if (path === '/hang') {
    res.on('close', () => {
      upstreamClosed = true;
    });
    // Never answers: the headers timeout applies.
  } else if (path === '/cut' || path === '/cut-css') {
    res.writeHead(200, {
      'content-type': path === '/cut' ? 'text/html' : 'text/css',
      'content-length': '100000',
    });
    res.write('Shop '.repeat(1000));
    setTimeout(() => res.socket?.destroy(), 30);
  } else if (path === '/slow-body') {
    html(res);
    res.on('close', () => {
      upstreamClosed = true;
    });
    const timer = setInterval(() => res.write('Shop '.repeat(200)), 10);
    res.on('close', () => clearInterval(timer));
  } else if (path === '/big') {
    html(res);
    const chunk = Buffer.from(BIG_LINE.repeat(2600));
    const pump = () => {
      while (bigWritten < BIG_BYTES) {
        bigWritten += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    pump();
  } else if (path === '/long-partial') {
    html(res);
    res.end(`Shop start${'a'.repeat(20_000)} Shop foobar`);
  } else {
    res.writeHead(404);
    res.end();
  }
}

let origin: Origin;
let prexy: Prexy;
let deadPort = 0;

beforeAll(async () => {
  origin = await startOrigin(route);
  deadPort = await findFreePort();
  prexy = await startPrexy(
    [
      ...siteFile(origin.url, RULES),
      {
        name: 'dead',
        proxy: {
          routes: [{ host: 'dead.test', upstream: `http://127.0.0.1:${deadPort}` }],
          ruleSets: RULES,
        },
      },
    ],
    { timeouts: { headersMs: 300, bodyMs: 2_000 } },
  );
});

afterAll(async () => {
  await prexy?.close();
  await origin?.close();
});

describe('substitution and response headers (spec 15-17)', () => {
  it('rewrites an HTML body, drops Content-Length, weakens the ETag, drops Last-Modified', async () => {
    const answer = await fetch(prexy.port, '/page');
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe(EXPECTED);
    expect(answer.headers['content-length']).toBeUndefined();
    expect(answer.headers.etag).toBe('W/"v1"');
    expect(answer.headers['last-modified']).toBeUndefined();
  });

  it('keeps Last-Modified when the route says so', async () => {
    const own = await startPrexy(siteFile(origin.url, RULES, { keepLastModified: true }));
    try {
      const answer = await fetch(own.port, '/page');
      expect(answer.headers['last-modified']).toBe('Tue, 01 Dec 2026 10:00:00 GMT');
      expect(answer.body.toString()).toBe(EXPECTED);
    } finally {
      await own.close();
    }
  });

  it('passes other content types, HEAD, 204, 304 and ranges through untouched', async () => {
    const css = await fetch(prexy.port, '/css');
    expect(css.body.toString()).toBe(PAGE);
    expect(css.headers['content-length']).toBe(String(PAGE.length));

    const head = await fetch(prexy.port, '/page', { method: 'HEAD' });
    expect(head.headers['content-length']).toBe(String(PAGE.length));
    expect(head.headers.etag).toBe('"v1"');

    const ranged = await fetch(prexy.port, '/range', { headers: { range: 'bytes=0-9' } });
    expect(ranged.status).toBe(206);
    expect(ranged.body.toString()).toBe(PAGE.slice(0, 10));

    expect((await fetch(prexy.port, '/not-modified')).status).toBe(304);
    expect((await fetch(prexy.port, '/no-content')).status).toBe(204);
  });

  it('finds matches split across upstream writes', async () => {
    const answer = await fetch(prexy.port, '/split');
    expect(answer.body.toString()).toBe('<p>X and Store</p>');
  });
});

describe('content codings', () => {
  const whole = EXPECTED.repeat(50);
  const decoders = { gzip: gunzipSync, br: brotliDecompressSync, deflate: inflateSync } as const;

  for (const coding of ['gzip', 'br', 'deflate'] as const) {
    it(`decodes ${coding}, substitutes and re-encodes it for a client that accepts it`, async () => {
      const answer = await fetch(prexy.port, `/coded/${coding}`, {
        headers: { 'accept-encoding': coding },
      });
      expect(answer.headers['content-encoding']).toBe(coding);
      expect(decoders[coding](answer.body).toString()).toBe(whole);
    });

    it(`sends ${coding} bodies as identity to a client that does not accept it`, async () => {
      const answer = await fetch(prexy.port, `/coded/${coding}`, {
        headers: { 'accept-encoding': 'identity' },
      });
      expect(answer.headers['content-encoding']).toBeUndefined();
      expect(answer.body.toString()).toBe(whole);
    });
  }
});

describe('timings', () => {
  it('sends Server-Timing with the stages, and substitution and total as a trailer on TE: trailers', async () => {
    const answer = await fetch(prexy.port, '/page', { headers: { te: 'trailers' } });
    expect(answer.headers['server-timing']).toMatch(
      /upstream-connect;dur=[\d.]+, upstream-headers;dur=[\d.]+, rules;dur=[\d.]+/,
    );
    expect(answer.headers.trailer?.toLowerCase()).toBe('server-timing');
    expect(answer.trailers['server-timing']).toMatch(/substitution;dur=[\d.]+, total;dur=[\d.]+/);
  });

  it('sends no trailer to a client that did not ask for one', async () => {
    const answer = await fetch(prexy.port, '/page');
    expect(answer.headers.trailer).toBeUndefined();
    expect(answer.trailers['server-timing']).toBeUndefined();
  });
});

describe('the per-asset rule bitmap', () => {
  it('runs only the rules that matched on the next response of an asset, with the same bytes', async () => {
    const own = await startPrexy(siteFile(origin.url, RULES), { matchCacheBytes: 1 << 20 });
    try {
      const first = await fetch(own.port, '/page');
      const narrowedBefore = own.server.counters.bitmapNarrowed;
      const second = await fetch(own.port, '/page');
      expect(second.body.equals(first.body)).toBe(true);
      expect(own.server.counters.bitmapNarrowed).toBe(narrowedBefore + 1);
    } finally {
      await own.close();
    }
  });

  it('streams an asset no rule ever matched straight through', async () => {
    const own = await startPrexy(siteFile(origin.url, RULES), { matchCacheBytes: 1 << 20 });
    try {
      await fetch(own.port, '/plain-etag');
      const again = await fetch(own.port, '/plain-etag', { headers: { te: 'trailers' } });
      expect(again.body.toString()).toBe('<p>nothing to change here</p>');
      expect(own.server.counters.bitmapSkippedAll).toBe(1);
      expect(again.headers.etag).toBe('W/"plain"');
      expect(again.trailers['server-timing']).toMatch(/substitution;dur=0\.000, total;dur=/);
    } finally {
      await own.close();
    }
  });

  it('does not remember responses with a weak ETag', async () => {
    const own = await startPrexy(siteFile(origin.url, RULES), { matchCacheBytes: 1 << 20 });
    try {
      await fetch(own.port, '/weak-etag');
      await fetch(own.port, '/weak-etag');
      expect(own.server.counters.bitmapNarrowed + own.server.counters.bitmapSkippedAll).toBe(0);
    } finally {
      await own.close();
    }
  });

  it('forgets what it learned when the rule set changes', async () => {
    const own = await startPrexy(siteFile(origin.url, RULES), { matchCacheBytes: 1 << 20 });
    try {
      await fetch(own.port, '/plain-etag');
      const changed = [
        { pathPrefix: '/', rules: [{ pattern: 'nothing', replacement: 'something', flags: 'g' }] },
      ];
      own.install(siteFile(origin.url, changed));
      const answer = await fetch(own.port, '/plain-etag');
      expect(answer.body.toString()).toBe('<p>something to change here</p>');
      expect(own.server.counters.bitmapSkippedAll).toBe(0);
    } finally {
      await own.close();
    }
  });
});

describe('never an open proxy', () => {
  it('answers 421 for a host no route names, without contacting any upstream', async () => {
    const before = origin.seen.length;
    const answer = await fetch(prexy.port, '/page', { headers: { host: 'elsewhere.test' } });
    expect(answer.status).toBe(421);
    expect(origin.seen.length).toBe(before);
  });

  it('refuses an absolute-form target naming another host, and CONNECT', async () => {
    const before = origin.seen.length;
    const absolute = await exchange(
      prexy.port,
      `GET http://elsewhere.test/page HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`,
    );
    expect(absolute).toMatch(/^HTTP\/1\.1 4\d\d /);
    const tunnel = await exchange(
      prexy.port,
      `CONNECT elsewhere.test:443 HTTP/1.1\r\nHost: elsewhere.test:443\r\n\r\n`,
    );
    expect(tunnel).toMatch(/^HTTP\/1\.1 (4\d\d|405) /);
    expect(origin.seen.length).toBe(before);
  });

  it('answers 400 to a malformed request and 431 to oversized headers, before any upstream', async () => {
    const before = origin.seen.length;
    expect(await exchange(prexy.port, 'NOT A REQUEST\r\n\r\n')).toMatch(/^HTTP\/1\.1 400 /);
    const huge = `GET /page HTTP/1.1\r\nHost: ${HOST}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`;
    expect(await exchange(prexy.port, huge)).toMatch(/^HTTP\/1\.1 431 /);
    expect(await exchange(prexy.port, 'GET /page HTTP/1.1\r\n\r\n')).toMatch(/^HTTP\/1\.1 400 /);
    expect(origin.seen.length).toBe(before);
  });
});

describe('headers and request bodies', () => {
  it('drops hop-by-hop headers and appends the forwarding fields', async () => {
    const answer = await fetch(prexy.port, '/headers', {
      headers: {
        connection: 'x-private, keep-alive',
        'x-private': 'secret',
        'keep-alive': 'timeout=5',
        'proxy-authorization': 'Basic abc',
        'x-forwarded-for': '203.0.113.9',
        forwarded: 'for=203.0.113.9',
        'x-kept': 'yes',
      },
    });
    const seen = JSON.parse(answer.body.toString()) as Record<string, string>;
    expect(seen['x-private']).toBeUndefined();
    expect(seen['keep-alive']).toBeUndefined();
    expect(seen['proxy-authorization']).toBeUndefined();
    expect(seen['x-kept']).toBe('yes');
    expect(seen['x-forwarded-for']).toBe('203.0.113.9, 127.0.0.1');
    expect(seen['x-forwarded-host']).toBe(HOST);
    expect(seen['x-forwarded-proto']).toBe('http');
    expect(seen.forwarded).toMatch(
      /^for=203\.0\.113\.9, for=127\.0\.0\.1;host="shop\.test";proto=http$/,
    );
  });

  it('streams a request body of several MiB upstream unchanged', async () => {
    const body = Buffer.alloc(5 * 1024 * 1024, 'Shop ');
    const answer = await fetch(prexy.port, '/echo', {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body,
    });
    const echoed = JSON.parse(answer.body.toString()) as { bytes: number; sha256: string };
    expect(echoed.bytes).toBe(body.length);
    expect(echoed.sha256).toBe(createHash('sha256').update(body).digest('hex'));
  });
});

describe('upstream faults', () => {
  it('answers 502 when the upstream refuses the connection, and counts it', async () => {
    const errors = prexy.server.counters.upstreamErrors;
    const before = errors.connect_refused ?? 0;
    const answer = await fetch(prexy.port, '/page', { headers: { host: 'dead.test' } });
    expect(answer.status).toBe(502);
    expect(errors.connect_refused).toBe(before + 1);
  });

  it('answers 504 when the upstream sends no headers in time, and closes its request', async () => {
    upstreamClosed = false;
    const answer = await fetch(prexy.port, '/hang');
    expect(answer.status).toBe(504);
    await eventually('the upstream request closed', () => upstreamClosed);
  });

  for (const path of ['/cut', '/cut-css']) {
    it(`cuts the client's response when the upstream closes mid-body (${path})`, async () => {
      await expect(fetch(prexy.port, path)).rejects.toThrow(
        /aborted|incomplete|socket hang up|ECONNRESET/,
      );
    });
  }

  it('cancels the upstream request when the client goes away', async () => {
    upstreamClosed = false;
    await new Promise<void>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: prexy.port,
          path: '/slow-body',
          headers: { host: HOST },
          agent: false,
        },
        (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        },
      );
      req.on('error', (error) => {
        if (!req.destroyed) reject(error);
      });
      req.end();
    });
    await eventually('the upstream request closed', () => upstreamClosed);
  });
});

describe('backpressure and limits', () => {
  it('reads the upstream only as fast as a slow client takes the substituted body', async () => {
    bigWritten = 0;
    expect(await readWhilePaused(prexy.port, '/big', () => bigWritten, BIG_BYTES)).toBe(BIG_OUT);
  });

  it('gives up a partial match longer than maxBufferedBytes: the rest passes unchanged, counted and warned (spec 13)', async () => {
    const before = prexy.server.counters.bufferLimitHits;
    const answer = await fetch(prexy.port, '/long-partial');
    expect(answer.body.toString()).toBe(`Store start${'a'.repeat(20_000)} Shop foobar`);
    expect(prexy.server.counters.bufferLimitHits).toBe(before + 1);
    expect(prexy.warnings.some((w) => w.includes('maxBufferedBytes'))).toBe(true);
  });

  it('keeps the configuration in force when a new one does not compile', async () => {
    // Past the file parser (which refuses it too): what install() itself does.
    const file = parsePrexyFile({ sites: siteFile(origin.url, RULES) });
    const site = file.ok ? file.file.sites[0] : undefined;
    if (site === undefined) throw new Error('the test file did not parse');
    const broken: SiteEntry = {
      ...site,
      proxy: {
        ...site.proxy,
        ruleSets: [
          {
            pathPrefix: '/',
            matchKind: 'leftmost-first',
            rules: [{ pattern: '(?=x)', replacement: 'y', flags: '' }],
          },
        ],
      },
    };
    expect(() => prexy.server.install([broken])).toThrow();
    expect((await fetch(prexy.port, '/page')).body.toString()).toBe(EXPECTED);
  });
});
