import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runtimeFolder } from '../../sandbox/runtime-folder.js';

// Where the file helper's program is. Built (`npm run build`), it is the compiled folder beside
// this module, which the helper's sandbox binds read-only. Run from TypeScript (tests, `npm run
// dev`), the sources are bundled with esbuild, which tsx and Vite bring along, into a private
// folder of the service's runtime root (runtime-folder.ts): no workspace may be or hold it, so
// no command can change the program every workspace's helper runs, and it goes with the root.

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
  // Made 0700 by mkdtemp, in a root made 0700: nobody else can put a program in it.
  const folder = runtimeFolder('file-helper', { cache: true });
  const { build } = await import('esbuild');
  await build({ entryPoints: [join(here, 'helper-main.mts')], bundle: true, platform: 'node', format: 'esm', outfile: join(folder, ENTRY), logLevel: 'silent' });
  return { folder, entry: ENTRY };
}

export async function helperProgram(): Promise<HelperProgram> {
  if (!import.meta.url.endsWith('.ts')) return { folder: here, entry: ENTRY };
  const current = (bundled ??= bundleSources());
  const program = await current;
  if (existsSync(join(program.folder, ENTRY))) return program;
  // The runtime root went with a service's stop (or a cleaner of old temporary files): bundled
  // again, once, however many callers noticed.
  if (bundled === current) bundled = bundleSources();
  return bundled;
}
