import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ResponseFramer } from './response-framer.ts';

const response = (status: number, body: string, extra = '') =>
  `HTTP/1.1 ${status} X\r\nContent-Type: text/plain\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

describe('ResponseFramer (where responses end on a keep-alive connection)', () => {
  it('completes a response at the last byte of its Content-Length body', () => {
    const framer = new ResponseFramer();
    const bytes = Buffer.from(response(200, 'User-agent: *\n'));
    expect(framer.feed(bytes.subarray(0, bytes.length - 1))).toEqual([]);
    expect(framer.feed(bytes.subarray(bytes.length - 1))).toEqual([200]);
  });

  it('finds the same responses however the bytes are split', () => {
    const stream = Buffer.from(
      response(200, 'a') + response(403, 'blocked\r\n\r\n') + response(204, '') + response(200, ''),
    );
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: stream.length - 1 })), (cuts) => {
        const framer = new ResponseFramer();
        const points = [0, ...cuts.sort((a, b) => a - b), stream.length];
        const statuses = points
          .slice(1)
          .flatMap((end, i) => framer.feed(stream.subarray(points[i], end)));
        expect(statuses).toEqual([200, 403, 204, 200]);
      }),
    );
  });

  it('reads header names in any case, and no body for 204 and 304 without a length', () => {
    const framer = new ResponseFramer();
    const noLength = 'HTTP/1.1 304 Not Modified\r\nETag: "x"\r\n\r\n';
    expect(
      framer.feed(Buffer.from(`${noLength}HTTP/1.1 200 OK\r\ncontent-LENGTH: 2\r\n\r\nok`)),
    ).toEqual([304, 200]);
  });

  it('refuses framings it cannot time: chunked, unframed, malformed', () => {
    const feed = (text: string) => () => new ResponseFramer().feed(Buffer.from(text));
    expect(feed('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n')).toThrow(
      /Transfer-Encoding chunked/,
    );
    expect(feed('HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n')).toThrow(/no Content-Length/);
    expect(feed('HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n')).toThrow(/bad Content-Length/);
    expect(feed('SSH-2.0-OpenSSH\r\n\r\n')).toThrow(/not an HTTP\/1.x status line/);
  });
});
