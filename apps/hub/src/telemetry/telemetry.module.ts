/**
 * The hub's side of the telemetry lifecycle: spans still queued are exported before the process
 * exits (`enableShutdownHooks()` runs this on SIGTERM). The SDK itself is started by
 * `@rampart/telemetry` before the hub loads; without it this does nothing.
 */
import { Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { flushTelemetry } from '@rampart/telemetry/sdk/lifecycle';

@Injectable()
class TelemetryShutdown implements OnApplicationShutdown {
  async onApplicationShutdown(): Promise<void> {
    await flushTelemetry();
  }
}

@Module({ providers: [TelemetryShutdown] })
export class TelemetryModule {}
