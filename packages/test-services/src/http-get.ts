/**
 * One GET to a loopback server, read whole as text: what tests of servers started here (nginx,
 * prexy) ask. A fresh connection each time (`agent: false`), so a test sees each answer on its
 * own, and any `Host` header the caller sets is sent as given.
 */
import { request } from 'node:http';

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
