/**
 * Debian's chromium, headless, for browser tests (playwright-core drives it; no browser is
 * downloaded). Each launch has a fresh temporary profile, which `close()` removes with the
 * browser. Launch is bounded in time; background networking is off, so the browser itself calls
 * nowhere and only the loopback pages a test opens are loaded.
 *
 * Usage: `const browser = await startChromium(); try { const page = await browser.newPage();
 * ... } finally { await browser.close(); }`.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Where Debian's `chromium` package puts the browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

const LAUNCH_TIMEOUT_MS = 30_000;

/** Starts a headless chromium; fails with what to install when the package is missing. */
export async function startChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `${CHROMIUM_PATH} not found: install Debian's chromium package (npm test does: scripts/bootstrap.sh --apt chromium)`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    timeout: LAUNCH_TIMEOUT_MS,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}
