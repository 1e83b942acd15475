/**
 * HTTP asks of servers started here: one GET read whole as text (`getText`: what tests of nginx
 * and prexy ask; a fresh connection each time, `agent: false`, so a test sees each answer on its
 * own, and any `Host` header the caller sets is sent as given), and the readiness poll every
 * launcher waits on (`waitForOk`).
 */
import { request } from 'node:http';
import { delay } from './free-port.js';

export interface TextAnswer {
  readonly status: number;
  readonly body: string;
}

export function getText(
  port: number,
  path: string,
  headers: Readonly<Record<string, string>> = {},
): Promise<TextAnswer> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

/**
 * Polls `url` until it answers 200, for at most `timeoutMs`: `'ready'`, or why not (the last
 * status or error). What every launcher here waits on before calling a program started.
 */
export async function waitForOk(url: string, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await response.body?.cancel();
      if (response.status === 200) return 'ready';
      last = `status ${response.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await delay(100);
  }
  return `not ready within ${timeoutMs} ms (last: ${last})`;
}
