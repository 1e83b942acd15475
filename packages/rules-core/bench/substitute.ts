/**
 * `npm run bench:substitute`: throughput of the streaming substitution engine against the ways
 * a Node.js proxy would otherwise do it, on one core, in one run.
 *
 * Input: a deterministic 1 MiB HTML page (substitute-corpus.ts) and rule sets of 1, 10 and 50
 * rules, with few matches and with dense matches. Contenders, each on the same rules:
 * - rampart: one compiled rule set, the page streamed in 16 KiB chunks (warm DFA cache, as in a
 *   proxy where the rule set is compiled once and shared by all responses);
 * - js-replace: the whole body buffered as a string, `String.prototype.replace` per rule in turn
 *   (V8's backtracking engine; not streaming);
 * - replacestream: the `replacestream` package, one Transform per rule, chained, 16 KiB chunks;
 * - re2: the `re2` package, `replace` per rule on the buffered body (when it is installed).
 *
 * Each measurement is the median of BENCH_RUNS (default 7) runs in process CPU time
 * (BENCH_CLOCK=wall for wall-clock time), after a warm-up of at least BENCH_WARMUP_MS (default
 * 1000) of the contender's own runs and at least 3 runs. A proxy runs for days with its rule set
 * compiled once, so the figure of interest is the steady state: with a single warm-up run the
 * median still includes V8's tier-up compilations and the first collections of a fresh heap, which
 * moved the result by up to 2x from one run of the benchmark to the next. Every contender gets the
 * same warm-up. MB = 10^6 bytes. A table goes to stdout, then one JSON line (the last line) for
 * scripts.
 */
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { Readable, type Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import {
  type CompiledRuleSet,
  compileRuleSet,
  type SubstitutionRule,
} from '@rampart/rules-core/substitution/rule-set';
import { Substituter } from '@rampart/rules-core/substitution/substituter';
import { denseRules, fewRules, htmlPage } from './substitute-corpus.ts';
import { walkTable } from './table-walk.ts';

const CHUNK = 16 * 1024;
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 1000);
const WARMUP_MIN_RUNS = 3;
const WALL = process.env.BENCH_CLOCK === 'wall';
const SIZES = [1, 10, 50] as const;
const require = createRequire(import.meta.url);

type Density = 'few' | 'dense';

interface Row {
  readonly rules: number;
  readonly density: Density;
  readonly matches: number;
  readonly mbps: Record<string, number | undefined>;
  readonly sameAsJs: boolean;
  /** The machine-state probe timed next to the engine's runs (see table-walk.ts). */
  readonly tableWalkNsPerByte: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

/**
 * MB/s of `run` over `bytes` bytes: median of RUNS runs after the warm-up (see the top of this
 * file), timed by the process's CPU time (user + system) rather than the wall clock, so that
 * other work on the machine does not count against the contender (BENCH_CLOCK=wall to use the
 * wall clock). With a `probe`, the probe is timed after every measured run too (wall clock, ns
 * per byte, median), to tell which state of the machine the runs met (see table-walk.ts).
 */
async function measure(
  bytes: number,
  run: () => unknown,
  probe?: () => unknown,
): Promise<{ mbps: number; probeNsPerByte: number | undefined }> {
  const warmupStart = performance.now();
  for (let i = 0; i < WARMUP_MIN_RUNS || performance.now() - warmupStart < WARMUP_MS; i++)
    await run();
  const times: number[] = [];
  const probes: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const wall = performance.now();
    const cpu = process.cpuUsage();
    await run();
    const used = process.cpuUsage(cpu);
    times.push(WALL ? performance.now() - wall : (used.user + used.system) / 1000);
    if (probe) {
      const started = performance.now();
      probe();
      probes.push(((performance.now() - started) * 1e6) / bytes);
    }
  }
  return {
    mbps: bytes / 1e6 / (median(times) / 1000),
    probeNsPerByte: probe ? median(probes) : undefined,
  };
}

function rampart(set: CompiledRuleSet, page: Buffer): { output: Buffer; matches: number } {
  const s = new Substituter(set);
  const out: Buffer[] = [];
  for (let i = 0; i < page.length; i += CHUNK) out.push(s.feed(page.subarray(i, i + CHUNK)));
  out.push(s.end());
  const matches = s.stats.rules.reduce((sum, r) => sum + r.matches, 0);
  return { output: Buffer.concat(out), matches };
}

function jsFlags(rule: SubstitutionRule): string {
  return `${(rule.flags ?? '').includes('g') ? 'g' : ''}${(rule.flags ?? '').includes('i') ? 'i' : ''}`;
}

function sequentialReplace(regexes: readonly [RegExp, string][], page: Buffer): Buffer {
  let text = page.toString('latin1');
  for (const [re, replacement] of regexes) text = text.replace(re, replacement);
  return Buffer.from(text, 'latin1');
}

type ReplaceStream = (search: RegExp, replace: string, options: object) => Transform;

async function chainedReplaceStream(
  replaceStream: ReplaceStream,
  rules: readonly SubstitutionRule[],
  page: Buffer,
): Promise<number> {
  const stages = rules.map((r) =>
    replaceStream(new RegExp(r.pattern, jsFlags(r)), r.replacement, {
      encoding: 'latin1',
      maxMatchLen: 200,
    }),
  );
  let length = 0;
  const chunks = Array.from({ length: Math.ceil(page.length / CHUNK) }, (_, i) =>
    page.subarray(i * CHUNK, (i + 1) * CHUNK),
  );
  const sink = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      length += chunk.length;
      done();
    },
  });
  // pipeline's typings only spell out fixed arities; a chain of N transforms needs the array form.
  const chain = pipeline as unknown as (
    streams: ReadonlyArray<NodeJS.ReadableStream | NodeJS.WritableStream>,
  ) => Promise<void>;
  await chain([Readable.from(chunks), ...stages, sink]);
  return length;
}

interface Re2Like {
  new (pattern: string, flags: string): RegExp;
}

/** A peer from node_modules or from .bench-cache/peers (see scripts/ensure-bench-peers.mjs). */
function loadOptional<T>(name: string): T | undefined {
  const peers = fileURLToPath(new URL('../.bench-cache/peers/node_modules/', import.meta.url));
  for (const from of [name, `${peers}${name}`]) {
    try {
      return require(from) as T;
    } catch {
      // try the next place
    }
  }
  return undefined;
}

async function benchOne(
  rules: readonly SubstitutionRule[],
  density: Density,
  page: Buffer,
  peers: { replaceStream: ReplaceStream | undefined; re2: Re2Like | undefined },
): Promise<Row> {
  const set = compileRuleSet(rules);
  const { output, matches } = rampart(set, page);
  const regexes = rules.map((r): [RegExp, string] => [
    new RegExp(r.pattern, jsFlags(r)),
    r.replacement,
  ]);
  const mbps: Record<string, number | undefined> = {};
  const engine = await measure(
    page.length,
    () => rampart(set, page),
    () => walkTable(set, page),
  );
  mbps.rampart = engine.mbps;
  mbps['js-replace'] = (await measure(page.length, () => sequentialReplace(regexes, page))).mbps;
  const { replaceStream, re2 } = peers;
  mbps.replacestream = replaceStream
    ? (await measure(page.length, () => chainedReplaceStream(replaceStream, rules, page))).mbps
    : undefined;
  if (re2) {
    const compiled = rules.map((r): [RegExp, string] => [
      new re2(r.pattern, jsFlags(r)),
      r.replacement,
    ]);
    mbps.re2 = (await measure(page.length, () => sequentialReplace(compiled, page))).mbps;
  }
  // With "few" rules nothing interacts, so one pass and rule-by-rule passes agree byte for byte.
  const sameAsJs = output.equals(sequentialReplace(regexes, page));
  return {
    rules: rules.length,
    density,
    matches,
    mbps,
    sameAsJs,
    tableWalkNsPerByte: engine.probeNsPerByte as number,
  };
}

function format(rows: readonly Row[], contenders: readonly string[]): string {
  const cell = (v: number | undefined) => (v === undefined ? 'n/a' : v.toFixed(1)).padStart(20);
  const header =
    'rules  matches  density ' +
    contenders.map((c) => ` ${c} MB/s`.padStart(20)).join('') +
    '  rampart/js  rampart/replacestream  table walk ns/B  same output as js';
  const lines = rows.map((r) => {
    const js = r.mbps['js-replace'] ?? Number.NaN;
    const rs = r.mbps.replacestream;
    return (
      `${String(r.rules).padStart(5)}  ${String(r.matches).padStart(7)}  ${r.density.padEnd(7)} ` +
      contenders.map((c) => cell(r.mbps[c])).join('') +
      `${`${((r.mbps.rampart ?? 0) / js).toFixed(2)}x`.padStart(12)}` +
      `${(rs === undefined ? 'n/a' : `${((r.mbps.rampart ?? 0) / rs).toFixed(1)}x`).padStart(23)}` +
      `${r.tableWalkNsPerByte.toFixed(2).padStart(17)}` +
      `  ${r.sameAsJs ? 'yes' : 'no (rules interact when applied in turn)'}`
    );
  });
  return [header, ...lines].join('\n');
}

async function main(): Promise<void> {
  const page = htmlPage();
  const replaceStream = loadOptional<ReplaceStream>('replacestream');
  const re2 = loadOptional<Re2Like>('re2');
  const contenders = ['rampart', 'js-replace', 'replacestream', 're2'];
  process.stderr.write(
    `bench:substitute: ${page.length} bytes, ${CHUNK / 1024} KiB chunks, median of ${RUNS} runs ` +
      `after ${WARMUP_MS} ms of warm-up each; ` +
      `replacestream ${replaceStream ? 'loaded' : 'missing'}, re2 ${re2 ? 'loaded' : 'not installed'}\n`,
  );
  const rows: Row[] = [];
  for (const density of ['few', 'dense'] as const) {
    const all = density === 'few' ? fewRules() : denseRules();
    for (const n of SIZES) {
      process.stderr.write(`  ${n} rules, ${density} matches...\n`);
      rows.push(await benchOne(all.slice(0, n), density, page, { replaceStream, re2 }));
    }
  }
  console.log(
    `Substitution throughput on a ${(page.length / 2 ** 20).toFixed(0)} MiB HTML page, one core ` +
      `(node ${process.version}, ${WALL ? 'wall-clock' : 'CPU'} time); MB = 10^6 bytes`,
  );
  console.log(format(rows, contenders));
  const find = (n: number, d: Density) => rows.find((r) => r.rules === n && r.density === d);
  const few50 = find(50, 'few');
  const dense50 = find(50, 'dense');
  const round = (x: number | undefined) => (x === undefined ? null : Math.round(x * 10) / 10);
  const ratio = (row: Row | undefined, peer: string) =>
    row?.mbps[peer] === undefined
      ? null
      : Math.round(((row.mbps.rampart ?? 0) / (row.mbps[peer] ?? 1)) * 100) / 100;
  console.log(
    JSON.stringify({
      bytes: page.length,
      clock: WALL ? 'wall' : 'cpu',
      warmup_ms: WARMUP_MS,
      mbps_50_rules_few_matches: round(few50?.mbps.rampart),
      mbps_50_rules_dense: round(dense50?.mbps.rampart),
      ratio_vs_sequential_js_replace_50_rules: ratio(few50, 'js-replace'),
      ratio_vs_sequential_js_replace_50_rules_dense: ratio(dense50, 'js-replace'),
      ratio_vs_replacestream_50_rules: ratio(few50, 'replacestream'),
      ratio_vs_re2_50_rules: ratio(few50, 're2'),
      table_walk_ns_per_byte_50_rules_dense: dense50
        ? Math.round(dense50.tableWalkNsPerByte * 100) / 100
        : null,
      rows: rows.map((r) => ({
        rules: r.rules,
        density: r.density,
        matches: r.matches,
        table_walk_ns_per_byte: Math.round(r.tableWalkNsPerByte * 100) / 100,
        ...r.mbps,
      })),
    }),
  );
}

await main();
