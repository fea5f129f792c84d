import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Where the file helper's program is. Built (`npm run build`), it is the compiled folder beside
// this module, which the helper's sandbox binds read-only. Run from TypeScript (tests, `npm run
// dev`), the sources are bundled once per process with esbuild, which tsx and Vite bring along,
// into a private folder under the temporary directory.

export interface HelperProgram {
  /** The folder bound into the sandbox. */
  folder: string;
  /** The entry point's file name inside it. */
  entry: string;
}

const here = dirname(fileURLToPath(import.meta.url));
const ENTRY = 'helper-main.mjs';

let bundled: Promise<HelperProgram> | null = null;

async function bundleSources(): Promise<HelperProgram> {
  // A fresh private folder (mkdtemp makes it 0700): nobody else can put a program in it.
  const folder = mkdtempSync(join(tmpdir(), 'assistant-file-helper-'));
  const { build } = await import('esbuild');
  await build({ entryPoints: [join(here, 'helper-main.mts')], bundle: true, platform: 'node', format: 'esm', outfile: join(folder, ENTRY), logLevel: 'silent' });
  return { folder, entry: ENTRY };
}

export function helperProgram(): Promise<HelperProgram> {
  if (!import.meta.url.endsWith('.ts')) return Promise.resolve({ folder: here, entry: ENTRY });
  bundled ??= bundleSources();
  return bundled;
}
