/**
 * Prexy serves with three V8 heap settings a streaming proxy needs and Node's defaults lack:
 *
 * - A small young generation (`--max-semi-space-size=2`, MiB). A streaming proxy's garbage is
 *   mostly bytes. Every socket read is a fresh 64 KiB buffer and every substituted slice
 *   another, each an ArrayBuffer outside the JavaScript heap, freed only when a garbage
 *   collection finds its small wrapper object dead. Those wrappers are all the young generation
 *   sees of them, so with V8's default (semi-spaces growing to 16 MiB or more) a scavenge comes
 *   only after hundreds of megabytes of bodies, and until then the dead buffers stay resident:
 *   streaming one 1 GiB body took prexy from 80 MB to about 170 MB of RSS. With 2 MiB
 *   semi-spaces scavenges come every few megabytes of bodies, each short because almost nothing
 *   survives, and the same stream peaks around 120 MB.
 * - An old generation that is not collected below 64 MiB (`--initial-old-space-size=64`) and no
 *   memory reducer (`--no-memory-reducer`). V8 sets the old generation's next collection point
 *   from how fast it grew lately. Under a proxy's load it grows slowly (requests' objects die
 *   young), so a mark-compact that happens under load, or the "reducing" ones V8 runs after a
 *   few seconds idle, sets that point just above what is live, and collections then follow every
 *   50-70 ms: measured on a 100 KiB page with ten rules after 20 s idle, 120-150 mark-compacts in
 *   14 s and about 60% of the throughput of a prexy loaded straight after start. With the floor
 *   and without the reducer: two mark-compacts (at start-up) and the same throughput idle or
 *   not. The floor bounds garbage, not memory in use: prexy's live old generation is about
 *   15 MB (its compiled rule sets and caches), so at most ~50 MB of garbage waits for the next
 *   collection; an idle prexy keeps the heap its load gave it.
 *
 * V8 reads these flags only when the heap is set up, so they cannot be switched on from inside
 * a running process: prexy's entry point replaces itself (`process.execve`, same process id,
 * same file descriptors and signals) with the same command plus the flags it lacks, before it
 * reads its configuration. Cluster workers inherit the primary's flags. A setting the user gave
 * (on the command line or in `NODE_OPTIONS`, either polarity of a boolean flag) is left as it
 * is; `npm start` and `npm run dev` give them all, so what `--import` loaded before `main.ts`
 * (the telemetry) is not loaded twice.
 */

/** The Node options prexy serves with, as a launcher should give them (see the module doc). */
export const STREAMING_HEAP_FLAGS: readonly string[] = [
  '--max-semi-space-size=2',
  '--initial-old-space-size=64',
  '--no-memory-reducer',
];

/**
 * The V8 flag a command-line word sets, spelled the way the flags above are (dashes, no `no-`
 * prefix, no value), or undefined when the word is not a flag.
 */
function flagName(word: string): string | undefined {
  if (!word.startsWith('--')) return undefined;
  const name = (word.slice(2).split('=')[0] ?? '').replaceAll('_', '-');
  return name.startsWith('no-') ? name.slice(3) : name;
}

/**
 * The arguments to re-execute this process with (argv[0] first), or undefined when it already
 * runs with each of {@link STREAMING_HEAP_FLAGS} set, to prexy's value or the user's own.
 */
export function streamingHeapArgs(
  execPath: string,
  execArgv: readonly string[],
  argv: readonly string[],
  nodeOptions: string | undefined,
): string[] | undefined {
  const given = new Set([...execArgv, ...(nodeOptions ?? '').split(/\s+/)].map(flagName));
  const missing = STREAMING_HEAP_FLAGS.filter((flag) => !given.has(flagName(flag)));
  if (missing.length === 0) return undefined;
  return [execPath, ...missing, ...execArgv, ...argv.slice(1)];
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
