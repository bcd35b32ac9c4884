// Debian's Chromium for the browser tests (the dashboard, the Web SDK), headless, with what keeps
// it quiet on a CI box; it fails naming the package when it is missing, never skips.
import { existsSync } from 'node:fs';
import assert from 'node:assert/strict';
import { chromium, type Browser, type Locator } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install Debian's chromium package (apt-get install chromium; .ci/run does) or set CHROMIUM_PATH`);
  }
}

/** Launches headless Chromium; `extraArgs` add to the common flags (fake media devices, ...). */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  requireChromium();
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  });
}

/** Polls a page until `read()` returns `expected` (10 s), then asserts, so a failure shows the last value seen. */
export async function eventually<T>(read: () => Promise<T>, expected: T, what: string): Promise<void> {
  const deadline = Date.now() + 10000;
  let last: T = await read();
  while (JSON.stringify(last) !== JSON.stringify(expected) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    last = await read();
  }
  assert.deepEqual(last, expected, what);
}

/**
 * The first element's trimmed text, or '<absent>'. One read that never waits: an element removed
 * between a count and a read would otherwise make the read wait out Playwright's 30 s timeout.
 */
export const text = async (l: Locator): Promise<string> => {
  const [first] = await l.allTextContents();
  return first === undefined ? '<absent>' : first.trim();
};
