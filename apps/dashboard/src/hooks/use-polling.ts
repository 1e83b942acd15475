/**
 * Loads now, then again every `intervalMs` while the page is visible (and at once when it
 * becomes visible again): how the traffic and fleet views stay live while reports arrive.
 * A failed load keeps the last data and says why.
 */
import { useEffect, useState } from 'preact/hooks';

export interface Polled<T> {
  readonly data: T | undefined;
  readonly error: string | undefined;
  /** Loads again now (after a change the view made itself). */
  readonly reload: () => void;
}

export function usePolling<T>(
  load: () => Promise<T>,
  intervalMs: number,
  dependencies: readonly unknown[],
): Polled<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const [tick, setTick] = useState(0);

  useEffect(() => {
    let live = true;
    const run = () => {
      if (document.hidden) return;
      load()
        .then((value) => {
          if (!live) return;
          setData(value);
          setError(undefined);
        })
        .catch((e: unknown) => {
          if (live) setError(e instanceof Error ? e.message : String(e));
        });
    };
    run();
    const timer = setInterval(run, intervalMs);
    document.addEventListener('visibilitychange', run);
    return () => {
      live = false;
      clearInterval(timer);
      document.removeEventListener('visibilitychange', run);
    };
  }, [...dependencies, intervalMs, tick]);

  return { data, error, reload: () => setTick((t) => t + 1) };
}
