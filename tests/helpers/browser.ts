import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium, type Browser, type Page } from 'playwright-core';
import { build } from 'vite';
import { beforeEach, describe } from 'vitest';

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

function webBuildIsFresh(): boolean {
  const index = join(webRoot, 'index.html');
  return existsSync(index) && statSync(index).mtimeMs >= newestChange(join(repository, 'web'));
}

/**
 * Runs `body` holding an exclusive lock file. Test files run in parallel processes, and a build
 * empties dist/web first: without the lock, one file's build would pull the page out from under
 * another file's browser, or two builds would write into each other.
 */
async function withLock(path: string, body: () => Promise<void>): Promise<void> {
  const staleAfterMs = 120_000;
  for (;;) {
    try {
      writeFileSync(path, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    // A lock left by a killed run would otherwise block every later one.
    const age = Date.now() - (statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if (age > staleAfterMs) rmSync(path, { force: true });
    else await sleep(200);
  }
  try {
    await body();
  } finally {
    rmSync(path, { force: true });
  }
}

/**
 * Builds the page with Vite when dist/web is missing or older than web/ (CI has run `npm run
 * build` already; a developer editing web/ gets a fresh build without a step to remember).
 */
export async function ensureWebBuilt(): Promise<void> {
  if (webBuildIsFresh()) return;
  mkdirSync(join(repository, 'dist'), { recursive: true });
  await withLock(join(repository, 'dist', '.web-build.lock'), async () => {
    // Another file may have built it while this one waited for the lock.
    if (!webBuildIsFresh()) await build({ configFile: join(repository, 'vite.config.ts'), logLevel: 'warn' });
  });
}

/** Where screenshots go: test-artifacts/e2e (ignored by Git). */
export function screenshotPath(name: string): string {
  const folder = join(repository, 'test-artifacts', 'e2e');
  mkdirSync(folder, { recursive: true });
  return join(folder, `${name}.png`);
}

/**
 * Saves a screenshot of the page when a test of the suite fails (named after the test), so a
 * failure in CI can be seen, not only read. `page` is read at failure time: it may not exist yet.
 */
export function screenshotOnFailure(page: () => Page | undefined): void {
  beforeEach(({ task, onTestFailed }) => {
    onTestFailed(async () => {
      const name = `failed-${task.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 80)}`;
      await page()
        ?.screenshot({ path: screenshotPath(name) })
        .catch((error: unknown) => {
          console.warn('no failure screenshot:', error);
        });
    });
  });
}

/**
 * The README's picture of the web interface: written to docs/ only when UPDATE_DOCS_SCREENSHOT=1
 * (so a test run leaves the checkout clean), else among the other artifacts.
 */
export function docsScreenshotPath(): string {
  return process.env.UPDATE_DOCS_SCREENSHOT === '1' ? join(repository, 'docs', 'web-interface.png') : screenshotPath('web-interface');
}
