// Debian's Chromium for the browser tests (the dashboard, the Web SDK), headless, with what keeps
// it quiet on a CI box; it fails naming the package when it is missing, never skips.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

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
