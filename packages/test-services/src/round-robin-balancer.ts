/**
 * A round-robin HTTP load balancer on loopback, in front of a fleet of app instances: what
 * fleet-wide rate limits and time-to-mitigate tests put in front of the demo, and what load
 * scenarios scale (`setUpstreams` adds or removes instances while traffic flows).
 *
 * Each request goes to the next upstream in turn (no stickiness: the worst case for per-process
 * counters). It appends the connecting peer to `X-Forwarded-For`, as a proxy does, so the apps
 * (trusting loopback proxies) see the client address a test puts in `X-Forwarded-For`. An
 * upstream that refuses the connection answers 502; nothing is retried on another one.
 */
import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Balancer {
  readonly url: string;
  /** Requests sent to each upstream (by URL) so far. */
  readonly served: ReadonlyMap<string, number>;
  /** Replaces the fleet; requests in flight finish where they are. */
  setUpstreams(upstreams: readonly string[]): void;
  close(): Promise<void>;
}

export async function startBalancer(upstreams: readonly string[]): Promise<Balancer> {
  let fleet = [...upstreams];
  let next = 0;
  const served = new Map<string, number>();
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });

  const forward = (req: IncomingMessage, res: ServerResponse) => {
    if (fleet.length === 0) return void res.writeHead(503, { 'retry-after': '1' }).end();
    const target = fleet[next++ % fleet.length] as string;
    served.set(target, (served.get(target) ?? 0) + 1);
    const peer = req.socket.remoteAddress ?? '';
    const forwarded = req.headers['x-forwarded-for'];
    const headers = {
      ...req.headers,
      'x-forwarded-for': forwarded ? `${forwarded}, ${peer}` : peer,
    };
    const upstream = request(
      `${target}${req.url ?? '/'}`,
      { method: req.method, headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  };

  const server = createServer(forward);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    setUpstreams: (list) => {
      fleet = [...list];
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}
