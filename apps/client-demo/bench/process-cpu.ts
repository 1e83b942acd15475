/**
 * CPU time a process has used, all its threads together, from `/proc/<pid>/stat` (Linux).
 *
 * The benchmark divides it by the requests served to get CPU per request: unlike requests per
 * second, it does not depend on how busy wrk kept the app (under wrk's load the app still waits
 * for requests 10-15% of the time here), so it shows what the WAF costs in CPU. Resolution: one
 * clock tick (10 ms at the usual 100 Hz), under 1% of a 5 s run.
 */
import { readFileSync } from 'node:fs';

/** Clock ticks per second of `/proc` times (`getconf CLK_TCK`; 100 on Linux for decades). */
const TICKS_PER_SECOND = 100;

/** User plus system CPU time of `pid` so far, in milliseconds; null if unreadable. */
export function processCpuMs(pid: number): number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  return cpuMsOfStat(stat);
}

/** Fields 14 and 15 (utime, stime) of a `/proc/<pid>/stat` line; the name may hold spaces. */
export function cpuMsOfStat(stat: string): number | null {
  const afterName = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // afterName[0] is field 3 (state), so field n is afterName[n - 3].
  const utime = Number(afterName[11]);
  const stime = Number(afterName[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return null;
  return ((utime + stime) * 1000) / TICKS_PER_SECOND;
}

/** The machine's CPU time so far, from the `cpu` line of `/proc/stat`, in clock ticks. */
export interface HostCpuTicks {
  /** Time the hypervisor ran other guests while this machine's CPUs wanted to run. */
  readonly steal: number;
  /** user + nice + system + idle + iowait + irq + softirq + steal. */
  readonly total: number;
}

/**
 * The machine's CPU time so far; null where `/proc/stat` is unreadable. On a shared virtual
 * machine, steal time is the other guests' share: when it rises, everything here runs slower
 * and stalls longer, whatever the WAF does, so the benchmark prints it beside each window.
 */
export function hostCpuTicks(): HostCpuTicks | null {
  try {
    return cpuTicksOfProcStat(readFileSync('/proc/stat', 'utf8'));
  } catch {
    return null;
  }
}

/** The first (`cpu`, all CPUs) line of a `/proc/stat` text; null when it is not there. */
export function cpuTicksOfProcStat(text: string): HostCpuTicks | null {
  const line = text.split('\n', 1)[0] ?? '';
  const fields = line.trim().split(/\s+/);
  if (fields[0] !== 'cpu' || fields.length < 9) return null;
  const ticks = fields.slice(1, 9).map(Number);
  if (!ticks.every(Number.isFinite)) return null;
  return { steal: ticks[7] as number, total: ticks.reduce((a, b) => a + b, 0) };
}

/** Share of the machine's CPU time that was stolen between two readings; null without both. */
export function stealShare(before: HostCpuTicks | null, after: HostCpuTicks | null): number | null {
  if (before === null || after === null || after.total <= before.total) return null;
  return (after.steal - before.steal) / (after.total - before.total);
}
