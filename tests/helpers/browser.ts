import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { build } from 'vite';
import { describe } from 'vitest';

// Browser tests drive Debian's chromium through playwright-core. CI must run them (.ci/run
// installs chromium), so there a missing browser fails the suite; elsewhere they are skipped,
// saying why, as the PostgreSQL and sandbox runs are.

export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const browserAvailable: boolean = (() => {
  if (existsSync(chromiumPath)) return true;
  if (process.env.CI === 'true') throw new Error(`chromium is required in CI: ${chromiumPath} not found (apt-get install chromium)`);
  console.warn(`Web interface browser tests skipped: ${chromiumPath} not found; apt-get install chromium (or set CHROMIUM_PATH)`);
  return false;
})();

/** A suite that needs the browser; declared skipped (and counted) without one. */
export function describeWithBrowser(name: string, body: () => void): void {
  describe.skipIf(!browserAvailable)(name, body);
}

export function launchChromium(): Promise<Browser> {
  // --no-sandbox: CI runs as root, where chromium's own sandbox refuses to start.
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

const repository = resolve(import.meta.dirname, '..', '..');
export const webRoot = join(repository, 'dist', 'web');

function newestChange(path: string): number {
  const stats = statSync(path);
  if (!stats.isDirectory()) return stats.mtimeMs;
  return Math.max(stats.mtimeMs, ...readdirSync(path).map((entry) => newestChange(join(path, entry))));
}

/**
 * Builds the page with Vite when dist/web is missing or older than web/ (CI has run `npm run
 * build` already; a developer editing web/ gets a fresh build without a step to remember).
 */
export async function ensureWebBuilt(): Promise<void> {
  const index = join(webRoot, 'index.html');
  if (existsSync(index) && statSync(index).mtimeMs >= newestChange(join(repository, 'web'))) return;
  await build({ configFile: join(repository, 'vite.config.ts'), logLevel: 'warn' });
}

/** Where screenshots go: test-artifacts/e2e (ignored by Git). */
export function screenshotPath(name: string): string {
  const folder = join(repository, 'test-artifacts', 'e2e');
  mkdirSync(folder, { recursive: true });
  return join(folder, `${name}.png`);
}

/**
 * The README's picture of the web interface: written to docs/ only when UPDATE_DOCS_SCREENSHOT=1
 * (so a test run leaves the checkout clean), else among the other artifacts.
 */
export function docsScreenshotPath(): string {
  return process.env.UPDATE_DOCS_SCREENSHOT === '1' ? join(repository, 'docs', 'web-interface.png') : screenshotPath('web-interface');
}
