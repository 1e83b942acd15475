#!/usr/bin/env node
/**
 * `npm run dev`'s Jaeger: the binary the set-up provides (`$JAEGER_BIN`, else the one built into
 * `.tools/jaeger`, else `jaeger` on the PATH), traces in memory, on the usual ports of one
 * machine: OTLP/HTTP on 127.0.0.1:4318 (the apps' default exporter endpoint) and the query API
 * on 127.0.0.1:16686. Reuses a Jaeger already answering there. Stops with Ctrl-C.
 *
 * This Jaeger is built from the Go module, which serves the whole query API but only a
 * placeholder page for the UI (the UI is a separate project): read traces through the hub's
 * dashboard (an event's trace) or the API, or run Jaeger's release build or container image for
 * the full UI (see packages/telemetry/README.md).
 */
import { startJaeger } from '@rampart/test-services/jaeger-server';

const OTLP_PORT = 4318;
const QUERY_PORT = 16686;
const log = (message) => process.stdout.write(`[jaeger dev] ${message}\n`);

async function answers(url) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

if (await answers(`http://127.0.0.1:${QUERY_PORT}/api/services`)) {
  log(`using the Jaeger already on http://127.0.0.1:${QUERY_PORT}`);
  // Stay up like the other dev tasks, doing nothing.
  setInterval(() => {}, 1 << 30);
} else {
  let jaeger;
  try {
    jaeger = await startJaeger({ otlpHttpPort: OTLP_PORT, queryPort: QUERY_PORT });
  } catch (error) {
    log(
      `${error.message.split('\n')[0]}; the apps run without traces (their exports fail quietly)`,
    );
    setInterval(() => {}, 1 << 30);
  }
  if (jaeger) {
    log(`traces in memory; OTLP/HTTP on ${jaeger.otlpEndpoint}, query API on ${jaeger.queryUrl}`);
    log(
      `e.g. curl '${jaeger.queryUrl}/api/traces?service=rampart-client-demo&limit=5' (this build's UI page is a placeholder)`,
    );
    const stop = () => void jaeger.stop().then(() => process.exit(0));
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  }
}
