// npm's install hooks for this package, which is both a service run from its checkout and a
// typed client installed by others (from a Git URL or a packed tarball):
//   node scripts/package-lifecycle.mjs postinstall   generate the Prisma clients into src/generated
//   node scripts/package-lifecycle.mjs prepare       build dist/ (server, typed client, web UI)
// npm runs `prepare` after a local `npm install` / `npm ci`, before `npm pack`, and in the clone
// when a Git URL is installed, so a Git install gets a built dist/ (package.json "files").
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

function installed(name) {
  try {
    require.resolve(`${name}/package.json`);
    return true;
  } catch {
    return false;
  }
}

function run(command, args) {
  const result = spawnSync(command, args, { stdio: 'inherit' });
  process.exit(result.status ?? 1);
}

const hook = process.argv[2];
if (hook === 'postinstall') {
  // An installed copy of the package has no src/: its dist/ already carries the compiled clients.
  if (!existsSync('src')) process.exit(0);
  run(process.execPath, ['scripts/prisma.mjs', 'generate']);
} else if (hook === 'prepare') {
  // `npm ci --omit=dev` runs prepare too, without the compilers: a deployment that ships a built
  // dist/ (or builds it elsewhere) must not fail here, so the build is left out with a note.
  if (!installed('typescript') || !installed('vite')) {
    console.log('prepare: devDependencies are not installed; dist/ is not built (run `npm run build` with them)');
    process.exit(0);
  }
  run(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'build', '--silent']);
} else {
  console.error('usage: node scripts/package-lifecycle.mjs postinstall|prepare');
  process.exit(2);
}
