import { Injectable } from '@nestjs/common';
import { runWorker } from '../workers/run-worker.js';
import { BuildInput, BuildMessage, BuildOutput } from './build-io.js';

/** Runs one snapshot build on a worker thread (see snapshot-build.worker.ts for why). */
@Injectable()
export class SnapshotBuilder {
  async build(input: BuildInput): Promise<BuildOutput> {
    const message = await runWorker<BuildMessage>(
      new URL('./snapshot-build.worker.js', import.meta.url),
      input,
    );
    if (!message.ok) throw new Error(message.error);
    return message.output;
  }
}
