/**
 * A free loopback TCP port, for servers that cannot be told to listen on port 0 and report back
 * (redis-server refuses `--port 0`; postgres has no way to report the port it got).
 */
import { createServer } from 'node:net';

/**
 * A port the kernel considers free right now on `host`: it binds port 0, reads the port it got
 * and closes the listener. Another process may still take it before the caller binds it; the
 * servers started here then exit with a clear error rather than hang.
 */
export function findFreePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() =>
        port > 0 ? resolve(port) : reject(new Error('could not pick a free port')),
      );
    });
  });
}

/** Resolves after `ms`, or early (without rejecting) when `signal` aborts. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
