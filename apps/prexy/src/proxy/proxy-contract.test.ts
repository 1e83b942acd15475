/**
 * More of the proxy's HTTP contract end to end on loopback (a real origin, a real prexy, real
 * clients), beside `proxy-handler.test.ts`: pass-through that keeps bytes and headers exactly,
 * matches at every split point (also inside a gzip stream) and prompt streaming, how codings
 * are negotiated, unusual but valid upstream answers, hop-by-hop fields both ways, request
 * bodies streamed while they arrive, and what the counters say after each kind of failure.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request } from 'node:http';
import { connect } from 'node:net';
import { constants, createGzip, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eventually,
  exchange,
  fetch,
  HOST,
  type Origin,
  type Prexy,
  readWhilePaused,
  siteFile,
  sleep,
  startOrigin,
  startPrexy,
} from '../test-support/loopback.js';

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
const SHORT = '<p>foobar</p>';
const PAGE = '<html><body><h1>Acme Shop</h1><p>foobar at the Shop</p></body></html>';
const EXPECTED = '<html><body><h1>Acme Store</h1><p>X at the Store</p></body></html>';

/** What the origin sends with every pass-through answer: each must reach the client as sent. */
const ORIGIN_HEADERS = {
  etag: '"p1"',
  'last-modified': 'Tue, 01 Dec 2026 10:00:00 GMT',
  'cache-control': 'max-age=60',
  'x-origin': 'yes',
} as const;
/** Not UTF-8, and with a word a rule would change were the body substituted. */
const BINARY = Buffer.concat([
  Buffer.from('Shop \xff\xfe\x00 foobar', 'latin1'),
  Buffer.alloc(300, 7),
]);

/** Bytes of the upstream request bodies received so far, by path. */
const received = new Map<string, number>();
/** Writes the rest of `/held` (set while it waits). */
let release: (() => void) | undefined;
let upstreamClosed = false;
/** What the origin wrote of `/big-css` so far. */
let bigWritten = 0;
const BIG_BYTES = 64 * 1024 * 1024;

function route(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://origin');
  const path = url.pathname;
  const passThrough = (type: string, body: Buffer, extra: Record<string, string> = {}) => {
    res.writeHead(200, {
      'content-type': type,
      'content-length': String(body.length),
      ...ORIGIN_HEADERS,
      ...extra,
    });
    res.end(body);
  };
  if (path === '/binary') passThrough('application/octet-stream', BINARY);
  else if (path === '/unknown-coding') {
    passThrough('text/html', BINARY, { 'content-encoding': 'zstd' });
  } else if (path === '/stacked-coding') {
    passThrough('text/html', gzipSync(gzipSync(PAGE)), { 'content-encoding': 'gzip, gzip' });
  } else if (path === '/page') passThrough('text/html; charset=utf-8', Buffer.from(PAGE));
  else if (path === '/range') {
    res.writeHead(206, {
      'content-type': 'text/html',
      'content-range': `bytes 0-9/${PAGE.length}`,
      'content-length': '10',
      ...ORIGIN_HEADERS,
    });
    res.end(PAGE.slice(0, 10));
  } else if (path === '/not-modified') {
    res.writeHead(304, ORIGIN_HEADERS);
    res.end();
  } else if (path === '/no-content') {
    res.writeHead(204, ORIGIN_HEADERS);
    res.end();
  } else if (path === '/split') {
    // The body in two writes, cut at byte `at`.
    const at = Number(url.searchParams.get('at'));
    res.writeHead(200, { 'content-type': 'text/html' });
    res.write(SHORT.slice(0, at));
    setTimeout(() => res.end(SHORT.slice(at)), 15);
  } else if (path === '/gzip-split') {
    // One gzip stream, flushed after byte `at`: the match is cut inside the compressed body.
    const at = Number(url.searchParams.get('at'));
    res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
    const gzip = createGzip();
    gzip.pipe(res);
    gzip.write(SHORT.slice(0, at));
    gzip.flush(constants.Z_SYNC_FLUSH, () => setTimeout(() => gzip.end(SHORT.slice(at)), 15));
  } else if (path === '/held') {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.write('<p>hello ');
    release = () => res.end('foobar</p>');
  } else if (path === '/always-gzip') {
    // Ignores Accept-Encoding and says nothing of it in Vary.
    res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
    res.end(gzipSync(PAGE));
  } else if (path === '/empty-gzip') {
    res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
    res.end();
  } else if (path === '/bad-gzip') {
    res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
    res.end('this is not gzip at all, it only says so');
  } else if (path === '/asset') {
    res.writeHead(200, { 'content-type': 'text/html', etag: '"a1"' });
    res.end(PAGE);
  } else if (path === '/asset-gzip') {
    res.writeHead(200, { 'content-type': 'text/html', etag: '"g1"', 'content-encoding': 'gzip' });
    res.end(gzipSync(PAGE.repeat(20)));
  } else if (path === '/unmatched') {
    res.writeHead(200, { 'content-type': 'text/html', etag: '"u1"' });
    res.end('<p>nothing to change</p>');
  } else if (path === '/no-store') {
    res.writeHead(200, { 'content-type': 'text/html', etag: '"n1"', 'cache-control': 'no-store' });
    res.end(PAGE);
  } else if (path === '/long-partial') {
    res.writeHead(200, { 'content-type': 'text/html', etag: '"l1"' });
    res.end(`Shop start${'a'.repeat(20_000)} Shop`);
  } else if (path === '/duplicate-lines') {
    // Valid HTTP: a list field sent as two lines, as some frameworks do.
    res.setHeader('content-type', 'text/html');
    res.setHeader('cache-control', ['public', 'max-age=60']);
    res.setHeader('etag', '"d1"');
    res.end(PAGE);
  } else if (path === '/duplicate-etag') {
    res.setHeader('content-type', 'text/html');
    res.setHeader('etag', ['"e1"', '"e2"']);
    res.end(PAGE);
  } else if (path === '/headers') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(req.headers));
  } else if (path === '/hop') {
    res.writeHead(200, {
      'content-type': 'text/plain',
      connection: 'x-origin-hop',
      'x-origin-hop': 'hop',
      'keep-alive': 'timeout=99',
      'proxy-authenticate': 'Basic realm="origin"',
      upgrade: 'h2c',
      'x-kept': 'kept',
    });
    res.end('ok');
  } else if (path === '/peer') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(String(req.socket.remotePort));
  } else if (path === '/echo') {
    const hash = createHash('sha256');
    received.set(path, 0);
    req.on('data', (c: Buffer) => {
      received.set(path, (received.get(path) ?? 0) + c.length);
      hash.update(c);
    });
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ bytes: received.get(path), sha256: hash.digest('hex') }));
    });
  } else if (path === '/hang') {
    res.on('close', () => {
      upstreamClosed = true;
    });
  } else if (path === '/drip') {
    res.writeHead(200, { 'content-type': 'text/html' });
    const timer = setInterval(() => res.write('Shop '.repeat(200)), 10);
    res.on('close', () => {
      clearInterval(timer);
      upstreamClosed = true;
    });
  } else if (path === '/cut') {
    res.writeHead(200, { 'content-type': 'text/html', 'content-length': '100000' });
    res.write('Shop '.repeat(1000));
    setTimeout(() => res.socket?.destroy(), 30);
  } else if (path === '/big-css') {
    res.writeHead(200, { 'content-type': 'text/css' });
    const chunk = Buffer.alloc(64 * 1024, 'Shop ');
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
  } else {
    res.writeHead(404);
    res.end();
  }
}

let origin: Origin;
let prexy: Prexy;

beforeAll(async () => {
  origin = await startOrigin(route);
  prexy = await startPrexy(siteFile(origin.url, RULES), {
    matchCacheBytes: 1 << 20,
    timeouts: { headersMs: 300, bodyMs: 2_000 },
  });
});

afterAll(async () => {
  await prexy?.close();
  await origin?.close();
});

/** The access log line of the latest request for `target` (written once the response closed). */
async function logOf(target: string, count: number) {
  await eventually(`${count} log lines for ${target}`, () => linesOf(target).length >= count);
  return linesOf(target)[count - 1];
}
const linesOf = (target: string) => prexy.logs.filter((l) => l.target === target);

describe('what passes through keeps its bytes and headers exactly (spec 15)', () => {
  const cases: [string, string, Record<string, string>?][] = [
    ['a content type outside the list', '/binary'],
    ['an HTML body in a coding prexy does not decode', '/unknown-coding'],
    ['an HTML body with codings applied one over another', '/stacked-coding'],
    ['an HTML body answering a Range request whole', '/page', { range: 'bytes=0-9' }],
  ];
  for (const [what, path, headers] of cases) {
    it(what, async () => {
      const answer = await fetch(prexy.port, path, {
        headers: { 'accept-encoding': 'gzip', ...headers },
      });
      expect(answer.status).toBe(200);
      expect(answer.headers).toMatchObject(ORIGIN_HEADERS);
      expect(answer.headers['content-length']).toBeDefined();
      if (path === '/page') expect(answer.body.toString()).toBe(PAGE);
      else if (path === '/stacked-coding') expect(answer.body).toEqual(gzipSync(gzipSync(PAGE)));
      else expect(answer.body).toEqual(BINARY);
    });
  }

  it('HEAD, 204, 304 and 206 keep every header the origin sent', async () => {
    const head = await fetch(prexy.port, '/page', { method: 'HEAD' });
    expect(head.headers).toMatchObject({
      ...ORIGIN_HEADERS,
      'content-length': String(PAGE.length),
    });
    expect(head.body.length).toBe(0);
    const partial = await fetch(prexy.port, '/range', { headers: { range: 'bytes=0-9' } });
    expect(partial.status).toBe(206);
    expect(partial.headers).toMatchObject({
      ...ORIGIN_HEADERS,
      'content-range': `bytes 0-9/${PAGE.length}`,
    });
    expect(partial.body.toString()).toBe(PAGE.slice(0, 10));
    for (const [path, status] of [
      ['/not-modified', 304],
      ['/no-content', 204],
    ] as const) {
      const answer = await fetch(prexy.port, path);
      expect(answer.status).toBe(status);
      expect(answer.headers).toMatchObject(ORIGIN_HEADERS);
    }
  });
});

describe('streaming substitution', () => {
  const splits = Array.from({ length: SHORT.length - 1 }, (_, i) => i + 1);

  it('finds a match cut between two upstream writes at every byte position', async () => {
    const bodies = await Promise.all(
      splits.map(async (at) => (await fetch(prexy.port, `/split?at=${at}`)).body.toString()),
    );
    expect(bodies).toEqual(splits.map(() => '<p>X</p>'));
  });

  it('finds a match cut at every byte position inside one gzip stream', async () => {
    const bodies = await Promise.all(
      splits.map(async (at) => {
        const answer = await fetch(prexy.port, `/gzip-split?at=${at}`, {
          headers: { 'accept-encoding': 'gzip' },
        });
        expect(answer.headers['content-encoding']).toBe('gzip');
        return gunzipSync(answer.body).toString();
      }),
    );
    expect(bodies).toEqual(splits.map(() => '<p>X</p>'));
  });

  it('sends bytes that cannot be part of a match before the upstream sends the rest (spec 12)', async () => {
    release = undefined;
    const body = await new Promise<string>((resolve, reject) => {
      let text = '';
      const req = request(
        {
          host: '127.0.0.1',
          port: prexy.port,
          path: '/held',
          headers: { host: HOST },
          agent: false,
        },
        (res) => {
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            text += c;
            // Only once the first part arrived does the origin send the second.
            if (text === '<p>hello ') release?.();
          });
          res.on('end', () => resolve(text));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.setTimeout(5_000, () => req.destroy(new Error('the first part never arrived')));
      req.end();
    });
    expect(body).toBe('<p>hello X</p>');
  });
});

describe('content codings (spec 17)', () => {
  it('asks the upstream only for codings both the client and prexy take', async () => {
    const sent = async (acceptEncoding?: string) => {
      const headers: Record<string, string> =
        acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding };
      const answer = await fetch(prexy.port, '/headers', { headers });
      return (JSON.parse(answer.body.toString()) as Record<string, string>)['accept-encoding'];
    };
    expect(await sent('zstd, gzip;q=0.5, br, deflate;q=0')).toBe('br, gzip');
    expect(await sent('GZIP')).toBe('gzip');
    expect(await sent('*')).toBe('br, gzip, deflate');
    expect(await sent('zstd')).toBeUndefined();
    expect(await sent(undefined)).toBeUndefined();
  });

  it("sends identity to a client that does not take the upstream's coding", async () => {
    const answer = await fetch(prexy.port, '/always-gzip', {
      headers: { 'accept-encoding': 'br' },
    });
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(answer.body.toString()).toBe(EXPECTED);
  });

  it('says Vary: Accept-Encoding when the coding it sends depends on the client', async () => {
    for (const acceptEncoding of ['gzip', 'identity']) {
      const answer = await fetch(prexy.port, '/always-gzip', {
        headers: { 'accept-encoding': acceptEncoding },
      });
      expect(answer.headers.vary?.toLowerCase()).toContain('accept-encoding');
    }
  });

  it('answers an empty body labelled with a coding as an empty body', async () => {
    const plain = await fetch(prexy.port, '/empty-gzip');
    expect(plain.status).toBe(200);
    expect(plain.body.length).toBe(0);
    const coded = await fetch(prexy.port, '/empty-gzip', {
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(coded.status).toBe(200);
    expect(gunzipSync(coded.body).length).toBe(0);
  });

  it('cuts the response of a body that does not decode instead of completing it', async () => {
    await expect(fetch(prexy.port, '/bad-gzip')).rejects.toThrow(
      /aborted|incomplete|hang up|ECONNRESET/,
    );
  });
});

describe('unusual but valid upstream answers', () => {
  it('substitutes a body whose list field came as two header lines', async () => {
    const answer = await fetch(prexy.port, '/duplicate-lines');
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe(EXPECTED);
    expect(answer.headers['cache-control']).toBe('public, max-age=60');
  });

  it('substitutes a body with two ETag lines, and does not remember it', async () => {
    for (let i = 0; i < 2; i++) {
      const answer = await fetch(prexy.port, '/duplicate-etag');
      expect(answer.status).toBe(200);
      expect(answer.body.toString()).toBe(EXPECTED);
    }
    expect((await logOf('/duplicate-etag', 2))?.rules).toBe('all');
  });
});

describe('the per-asset rule bitmap', () => {
  it('logs how many rules ran: all, then only those that matched', async () => {
    const first = await fetch(prexy.port, '/asset');
    const second = await fetch(prexy.port, '/asset');
    expect(second.body).toEqual(first.body);
    expect(second.body.toString()).toBe(EXPECTED);
    expect((await logOf('/asset', 1))?.rules).toBe('all');
    expect((await logOf('/asset', 2))?.rules).toBe('narrowed');
  });

  it('skips an asset no rule matched, with the same bytes', async () => {
    const skippedBefore = prexy.server.counters.bitmapSkippedAll;
    await fetch(prexy.port, '/unmatched');
    const again = await fetch(prexy.port, '/unmatched', { headers: { te: 'trailers' } });
    expect(again.body.toString()).toBe('<p>nothing to change</p>');
    expect(again.trailers['server-timing']).toMatch(/substitution;dur=[\d.]+, total;dur=/);
    expect(prexy.server.counters.bitmapSkippedAll).toBe(skippedBefore + 1);
    expect((await logOf('/unmatched', 2))?.rules).toBe('skipped');
  });

  it('narrows a gzip asset too, with the same decoded body', async () => {
    const get = () => fetch(prexy.port, '/asset-gzip', { headers: { 'accept-encoding': 'gzip' } });
    const first = gunzipSync((await get()).body).toString();
    const second = gunzipSync((await get()).body).toString();
    expect(first).toBe(EXPECTED.repeat(20));
    expect(second).toBe(first);
    expect((await logOf('/asset-gzip', 2))?.rules).toBe('narrowed');
  });

  it('does not remember a no-store response, nor a body that hit the buffer limit', async () => {
    for (const path of ['/no-store', '/long-partial']) {
      await fetch(prexy.port, path);
      await fetch(prexy.port, path);
      expect((await logOf(path, 2))?.rules, path).toBe('all');
    }
  });
});

describe('headers across the proxy (RFC 9110 7.6)', () => {
  it('does not forward TE, Upgrade, Proxy-Connection or what Connection names', async () => {
    const answer = await fetch(prexy.port, '/headers', {
      headers: {
        te: 'trailers',
        connection: 'upgrade, x-hop',
        upgrade: 'websocket',
        'x-hop': 'hop',
        'proxy-connection': 'keep-alive',
        'x-kept': 'kept',
      },
    });
    const seen = JSON.parse(answer.body.toString()) as Record<string, string>;
    for (const name of ['te', 'upgrade', 'x-hop', 'proxy-connection']) {
      expect(seen[name], name).toBeUndefined();
    }
    expect(seen['x-kept']).toBe('kept');
    expect(seen.connection).not.toMatch(/upgrade|x-hop/);
  });

  it("does not forward the upstream's hop-by-hop fields to the client", async () => {
    const answer = await fetch(prexy.port, '/hop');
    expect(answer.headers['x-kept']).toBe('kept');
    expect(answer.headers['x-origin-hop']).toBeUndefined();
    expect(answer.headers['proxy-authenticate']).toBeUndefined();
    expect(answer.headers.upgrade).toBeUndefined();
    expect(answer.headers['keep-alive']).not.toBe('timeout=99');
  });

  it("sends the upstream's own Host, or the client's with preserveHost", async () => {
    const seenHost = async (port: number) =>
      (JSON.parse((await fetch(port, '/headers')).body.toString()) as Record<string, string>).host;
    expect(await seenHost(prexy.port)).toBe(`127.0.0.1:${origin.port}`);
    const own = await startPrexy(siteFile(origin.url, RULES, { preserveHost: true }));
    try {
      expect(await seenHost(own.port)).toBe(HOST);
    } finally {
      await own.close();
    }
  });

  it('reuses its upstream connection for the next request', async () => {
    const first = (await fetch(prexy.port, '/peer')).body.toString();
    const second = (await fetch(prexy.port, '/peer')).body.toString();
    expect(second).toBe(first);
  });
});

describe('never an open proxy, and what prexy answers itself', () => {
  it('serves an absolute-form target naming its own host, with the path in origin-form', async () => {
    const raw = await exchange(
      prexy.port,
      `GET http://${HOST}/headers HTTP/1.1\r\nHost: elsewhere.test\r\nConnection: close\r\n\r\n`,
    );
    expect(raw).toMatch(/^HTTP\/1\.1 200 /);
    expect(raw).toContain(`"x-forwarded-host":"${HOST}"`);
  });

  it('answers OPTIONS * itself, and counts a 421 as refused', async () => {
    const before = origin.seen.length;
    const refused = prexy.server.counters.refused;
    expect(
      await exchange(
        prexy.port,
        `OPTIONS * HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`,
      ),
    ).toMatch(/^HTTP\/1\.1 204 [\s\S]*\r\nallow: GET/i);
    expect((await fetch(prexy.port, '/page', { headers: { host: 'elsewhere.test' } })).status).toBe(
      421,
    );
    expect(prexy.server.counters.refused).toBe(refused + 1);
    expect(origin.seen.length).toBe(before);
  });
});

describe('request bodies', () => {
  it('streams the body upstream while the client is still sending it', async () => {
    const part = Buffer.alloc(1024 * 1024, 'a');
    const whole = Buffer.concat([part, part, part, part]);
    const answer = await new Promise<string>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: prexy.port,
          path: '/echo',
          method: 'POST',
          headers: { host: HOST, 'content-length': String(whole.length) },
          agent: false,
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            text += c;
          });
          res.on('end', () => resolve(text));
        },
      );
      req.on('error', reject);
      req.write(part);
      // The rest is sent only once the origin has bytes of the first MiB.
      eventually('the origin receiving the first part', () => (received.get('/echo') ?? 0) > 0)
        .then(() => req.end(Buffer.concat([part, part, part])))
        .catch(reject);
    });
    const echoed = JSON.parse(answer) as { bytes: number; sha256: string };
    expect(echoed.bytes).toBe(whole.length);
    expect(echoed.sha256).toBe(createHash('sha256').update(whole).digest('hex'));
  });

  it('streams a chunked body (no Content-Length) upstream unchanged', async () => {
    const pieces = Array.from({ length: 20 }, (_, i) => Buffer.alloc(50_000 + i, i));
    const whole = Buffer.concat(pieces);
    const answer = await new Promise<string>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: prexy.port,
          path: '/echo',
          method: 'POST',
          headers: { host: HOST },
          agent: false,
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            text += c;
          });
          res.on('end', () => resolve(text));
        },
      );
      req.on('error', reject);
      for (const piece of pieces) req.write(piece);
      req.end();
    });
    expect(JSON.parse(answer)).toEqual({
      bytes: whole.length,
      sha256: createHash('sha256').update(whole).digest('hex'),
    });
  });
});

describe('failures and what the counters say of them', () => {
  it('counts a headers timeout, and logs it', async () => {
    const before = prexy.server.counters.upstreamErrors.headers_timeout ?? 0;
    expect((await fetch(prexy.port, '/hang')).status).toBe(504);
    expect(prexy.server.counters.upstreamErrors.headers_timeout).toBe(before + 1);
    expect((await logOf('/hang', 1))?.error).toMatch(/^headers_timeout/);
  });

  it('counts an upstream cut mid-body as that, not as a client abort nor a refusal', async () => {
    const counters = prexy.server.counters;
    const { clientAborts, refused } = counters;
    const before = counters.upstreamErrors.body_aborted ?? 0;
    await expect(fetch(prexy.port, '/cut')).rejects.toThrow();
    await eventually('the cut counted', () => counters.upstreamErrors.body_aborted === before + 1);
    await sleep(50);
    expect(counters.clientAborts).toBe(clientAborts);
    expect(counters.refused).toBe(refused);
  });

  it('cancels the upstream request of a client that leaves before the headers, and counts it', async () => {
    upstreamClosed = false;
    const { clientAborts, refused } = prexy.server.counters;
    const seen = origin.seen.length;
    const req = request({
      host: '127.0.0.1',
      port: prexy.port,
      path: '/hang',
      headers: { host: HOST },
      agent: false,
    });
    req.on('error', () => undefined);
    req.end();
    await eventually('the origin receiving the request', () => origin.seen.length > seen);
    req.destroy();
    await eventually('the upstream request closed', () => upstreamClosed, 2_000);
    await eventually(
      'the abort counted',
      () => prexy.server.counters.clientAborts === clientAborts + 1,
    );
    expect(prexy.server.counters.refused).toBe(refused);
  });

  it('counts a client that resets its connection mid-response as an abort, not a refusal', async () => {
    upstreamClosed = false;
    const { clientAborts, refused } = prexy.server.counters;
    const socket = connect(prexy.port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(`GET /drip HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`);
    await new Promise((resolve) => socket.once('data', resolve));
    socket.resetAndDestroy();
    await eventually('the upstream request closed', () => upstreamClosed, 2_000);
    await eventually(
      'the abort counted',
      () => prexy.server.counters.clientAborts === clientAborts + 1,
    );
    await sleep(50);
    expect(prexy.server.counters.refused).toBe(refused);
  });

  it('reads a pass-through body only as fast as a paused client takes it', async () => {
    bigWritten = 0;
    expect(await readWhilePaused(prexy.port, '/big-css', () => bigWritten, BIG_BYTES)).toBe(
      BIG_BYTES,
    );
  });
});
