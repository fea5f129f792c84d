import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProcedureMeta } from '../../src/procedures/meta.js';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

// The package as another project gets it (issue 21): packed the way a Git URL install packs it
// (`prepare` builds dist/, package.json "files" picks what ships), installed into a separate
// package, and examples/typed-client.ts compiled there with `skipLibCheck: false` and strict, then
// run against a service. Only the npm registry (or npm's cache) is used.

const run = promisify(execFile);
const repo = new URL('../..', import.meta.url).pathname;
const versionOf = (name: string) => (JSON.parse(readFileSync(join(repo, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

/** The exported meta type is declared without trpc-to-openapi's (procedures/meta.ts); it must stay assignable to it. */
const asTrpcToOpenapiMeta = (meta: ProcedureMeta): OpenApiMeta => meta;

describe('the typed client as a package', () => {
  let root: string;
  let tarball: string;
  let consumer: string;
  let fake: FakeOllama;
  let service: TestService;
  // What beforeAll made, undone in reverse even when it stopped part way.
  const cleanups: (() => PromiseLike<void> | void)[] = [];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'typed-client-package-'));
    cleanups.push(() => {
      rmSync(root, { recursive: true, force: true });
    });
    // The working tree's sources (with the generated Prisma clients a checkout makes on install)
    // and the checkout's node_modules: what a Git install has in its clone when `prepare` runs.
    const source = join(root, 'source');
    mkdirSync(source);
    for (const entry of ['package.json', 'README.md', 'tsconfig.json', 'tsconfig.build.json', 'vite.config.ts', 'src', 'web', 'prisma', 'scripts', 'docs']) {
      cpSync(join(repo, entry), join(source, entry), { recursive: true });
    }
    symlinkSync(join(repo, 'node_modules'), join(source, 'node_modules'), 'dir');
    // `npm pack` runs `prepare`, as npm does in the clone of a Git dependency before packing it.
    await run('npm', ['pack', '--silent', '--pack-destination', root], { cwd: source, timeout: 600_000, maxBuffer: 64 * 1024 * 1024 });
    const packed = readdirSync(root).find((name) => name.endsWith('.tgz'));
    if (!packed) throw new Error('npm pack wrote no tarball');
    tarball = join(root, packed);

    consumer = join(root, 'consumer');
    mkdirSync(consumer);
    writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'typed-client-consumer', private: true, type: 'module' }));
    // Install scripts of the service's own native dependencies (better-sqlite3, node-pty) would
    // fetch prebuilt binaries from outside the registry: they are left out, and the package's own
    // postinstall is run on its own below.
    await run(
      'npm',
      [
        'install',
        tarball,
        `typescript@${versionOf('typescript')}`,
        `@types/node@${versionOf('@types/node')}`,
        `eventsource@${versionOf('eventsource')}`,
        '--ignore-scripts',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
      ],
      { cwd: consumer, timeout: 600_000, maxBuffer: 64 * 1024 * 1024 },
    );
    fake = await startFakeOllama();
    cleanups.push(() => fake.close());
    service = await startTestService('sqlite', { OLLAMA_BASE_URL: fake.url });
    cleanups.push(() => service[Symbol.asyncDispose]());
  }, 900_000);
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('ships a built dist/ and what the service needs to run, without its sources or the build cache', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball], { maxBuffer: 64 * 1024 * 1024 });
    const files = stdout.split('\n').map((line) => line.replace(/^package\//, ''));
    expect(files).toEqual(expect.arrayContaining(['package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/main.js', 'dist/web/index.html', 'scripts/package-lifecycle.mjs']));
    expect(files.some((file) => file.startsWith('prisma/sqlite/migrations/'))).toBe(true);
    expect(files.filter((file) => file.startsWith('src/') || file.startsWith('tests/') || file === 'dist/.tsbuildinfo')).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(consumer, 'node_modules/assistant-service/package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.private).toBeUndefined();
    // The installed copy's postinstall has nothing to generate (its dist/ carries the clients) and succeeds.
    await run('npm', ['rebuild', 'assistant-service', '--foreground-scripts'], { cwd: consumer, timeout: 120_000 });
  }, 180_000);

  it('compiles the example for a consumer with skipLibCheck false and strict, and runs it against the service', async () => {
    const example = readFileSync(join(repo, 'examples/typed-client.ts'), 'utf8');
    const asConsumer = example.replace("from '../src/index.js'", "from 'assistant-service'");
    expect(asConsumer).not.toBe(example);
    writeFileSync(join(consumer, 'typed-client.ts'), asConsumer);
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2023',
          // DOM for fetch's types, which @trpc/client's declarations name (RequestInfo).
          lib: ['ES2023', 'DOM'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: ['node'],
          strict: true,
          noUncheckedIndexedAccess: true,
          exactOptionalPropertyTypes: true,
          skipLibCheck: false,
          outDir: 'out',
        },
        files: ['typed-client.ts'],
      }),
    );
    const compiled = await run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', '.'], { cwd: consumer, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 }).catch(
      (error: unknown) => ({ stdout: (error as { stdout?: string }).stdout ?? (error instanceof Error ? error.message : 'tsc failed') }),
    );
    expect(compiled.stdout).toBe('');
    // Nothing of trpc-to-openapi's adapters (h3, koa, fastify, next) is in the consumer's program.
    const { stdout: programFiles } = await run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', '.', '--listFilesOnly'], { cwd: consumer, maxBuffer: 16 * 1024 * 1024 });
    expect(programFiles).not.toMatch(/node_modules\/(trpc-to-openapi|h3|koa|fastify|next)\//);

    fake.enqueue({ kind: 'text', chunks: ['Packaged', ' answer'] });
    const { stdout } = await run(process.execPath, ['out/typed-client.js', 'From the package'], {
      cwd: consumer,
      env: { ...process.env, ASSISTANT_URL: service.url },
      timeout: 60_000,
    });
    expect(stdout).toMatch(/^service ok, version /);
    expect(stdout).toContain('Packaged answer');
    expect(stdout).toMatch(/\(stop, conversation [0-9a-f-]{36}\)/);
    expect(stdout).toContain('- From the package: 2 messages');
  }, 300_000);

  it('re-exports the client error class and guard, which recognise the service errors', async () => {
    const script = [
      "import { createAssistantClient, isTRPCClientError, TRPCClientError } from 'assistant-service';",
      'const client = createAssistantClient({ baseUrl: process.env.ASSISTANT_URL });',
      "const error = await client.conversations.get.query({ id: 'missing' }).catch((caught) => caught);",
      'console.log(JSON.stringify({ guard: isTRPCClientError(error), instance: error instanceof TRPCClientError, appCode: error.data?.appCode }));',
    ].join('\n');
    writeFileSync(join(consumer, 'errors.mjs'), script);
    const { stdout } = await run(process.execPath, ['errors.mjs'], { cwd: consumer, env: { ...process.env, ASSISTANT_URL: service.url }, timeout: 60_000 });
    expect(JSON.parse(stdout)).toEqual({ guard: true, instance: true, appCode: 'NOT_FOUND' });
  });

  it('prepare does not fail where devDependencies are absent (npm ci --omit=dev), and builds nothing there', async () => {
    const deployment = join(root, 'omit-dev');
    mkdirSync(join(deployment, 'scripts'), { recursive: true });
    cpSync(join(repo, 'scripts/package-lifecycle.mjs'), join(deployment, 'scripts/package-lifecycle.mjs'));
    const { stdout } = await run(process.execPath, ['scripts/package-lifecycle.mjs', 'prepare'], { cwd: deployment, timeout: 30_000 });
    expect(stdout).toContain('devDependencies are not installed');
    expect(readdirSync(deployment)).toEqual(['scripts']);
  });

  it('the exported meta type stays assignable to trpc-to-openapi’s', () => {
    const meta = asTrpcToOpenapiMeta({ openapi: { method: 'GET', path: '/api/status', protect: false }, rateGroup: 'none' });
    expect(meta.openapi?.path).toBe('/api/status');
  });
});
