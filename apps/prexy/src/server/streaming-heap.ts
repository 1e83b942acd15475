/**
 * Prexy serves with a small young generation (`--max-semi-space-size`, 2 MiB).
 *
 * Why: a streaming proxy's garbage is mostly bytes. Every socket read is a fresh 64 KiB buffer
 * and every substituted slice another, each an ArrayBuffer outside the JavaScript heap, freed
 * only when a garbage collection finds its small wrapper object dead. Those wrappers are all
 * the young generation sees of them, so with V8's default (semi-spaces growing to 16 MiB or
 * more) a scavenge comes only after hundreds of megabytes of bodies, and until then the dead
 * buffers stay resident: streaming one 1 GiB body took prexy from 80 MB to about 170 MB of RSS.
 * With 2 MiB semi-spaces scavenges come every few megabytes of bodies, each short because
 * almost nothing survives, and the same stream peaks around 120 MB. Throughput on the
 * benchmark's pages did not measurably change.
 *
 * V8 reads the flag only when the heap is set up, so it cannot be switched on from inside a
 * running process: prexy's entry point replaces itself (`process.execve`, same process id,
 * same file descriptors and signals) with the same command plus the flag, before it reads its
 * configuration. Cluster workers inherit the primary's flags. A flag the user gave (on the
 * command line or in `NODE_OPTIONS`) is left as it is; `npm start` and `npm run dev` give it, so
 * what `--import` loaded before `main.ts` (the telemetry) is not loaded twice.
 */

export const YOUNG_SEMI_SPACE_MB = 2;

const FLAG = '--max-semi-space-size';

/**
 * The arguments to re-execute this process with (argv[0] first), or undefined when it already
 * runs with a semi-space size of its own choosing.
 */
export function streamingHeapArgs(
  execPath: string,
  execArgv: readonly string[],
  argv: readonly string[],
  nodeOptions: string | undefined,
): string[] | undefined {
  const given = (arg: string) => arg === FLAG || arg.startsWith(`${FLAG}=`);
  if (execArgv.some(given)) return undefined;
  if ((nodeOptions ?? '').split(/\s+/).some(given)) return undefined;
  return [execPath, `${FLAG}=${YOUNG_SEMI_SPACE_MB}`, ...execArgv, ...argv.slice(1)];
}

/**
 * Replaces the current process with itself running under {@link streamingHeapArgs}, when it
 * needs to; returns (doing nothing) where `process.execve` does not exist (Windows).
 */
export function ensureStreamingHeap(): void {
  if (typeof process.execve !== 'function') return;
  const args = streamingHeapArgs(
    process.execPath,
    process.execArgv,
    process.argv,
    process.env.NODE_OPTIONS,
  );
  if (args !== undefined) process.execve(process.execPath, args, process.env);
}
