import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { homedir, networkInterfaces } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { toolsForMode, type ToolContext } from '../../src/core/chat/chat-tools.js';
import { toWorkspaceRef } from '../../src/core/workspaces/active-workspace.js';
import { sqliteFilePath } from '../../src/core/db/create-db.js';
import { probeSandbox } from '../../src/core/sandbox/sandbox-state.js';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { userWith } from '../helpers/callers.js';
import { initRepository, makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { redisAvailable, redisUrl, freshRedisPrefix } from '../helpers/redis.js';
import { describeOnDatabasesWithSandbox, describeWithSandbox } from '../helpers/sandbox.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';
import { waitFor } from '../helpers/wait-for.js';

// CONTRACT §11 from the attacker's side: a command the risk analysis lets through at once (a
// script file is `medium`), a repository a user registers, a prompt-injected model's file tools
// and a racing process try each way out that the contract closes. Every attempt must fail, and
// fail closed: the host, the service and the other workspaces stay as they were.

/** This machine's own non-loopback IPv4 addresses: a command must not reach them either. */
const hostAddresses = Object.values(networkInterfaces())
  .flatMap((entries) => entries ?? [])
  .filter((entry) => entry.family === 'IPv4' && !entry.internal)
  .map((entry) => entry.address);

describeOnDatabasesWithSandbox('confinement attacks (CONTRACT §11)', (kind) => {
  let svc: TestService;
  let fake: FakeOllama;
  let workspace: Folder;
  let other: Folder;
  let outside: Folder;
  let terminalId: string;
  let abstractListener: Server;
  const abstractName = `\0assistant-attack-${process.pid}-${Date.now()}`;

  beforeAll(async () => {
    fake = await startFakeOllama();
    workspace = makeFolder();
    other = makeFolder();
    outside = makeFolder();
    initRepository(workspace.path);
    other.file('secret.txt', 'other workspace secret');
    outside.file('secret.txt', 'outside secret');
    // A host socket in the abstract namespace (no file to bind or mask): only a network
    // namespace of its own keeps commands from it.
    abstractListener = createServer((socket) => socket.end('abstract-socket-reached\n'));
    await new Promise<void>((resolve) => abstractListener.listen(abstractName, resolve));
    svc = await startTestService(kind, {
      ENABLE_SYSTEM_COMMANDS: 'true',
      OLLAMA_BASE_URL: fake.url,
      SANDBOX_MEMORY_MB: '256',
      SANDBOX_PROCESSES: '64',
      SANDBOX_TMP_MB: '32',
      SANDBOX_FILE_SIZE_MB: '64',
    });
    for (const [name, folder] of [['attacked', workspace], ['other', other]] as const) {
      const added = await svc.request('POST', '/api/workspaces/add', { json: { name, path: folder.path } });
      expect(added.status, added.text).toBe(200);
    }
    terminalId = (await svc.request('POST', '/api/terminals', { json: { workingDirectory: workspace.path } })).body.terminalId as string;
  });

  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    await fake[Symbol.asyncDispose]();
    abstractListener.close();
    for (const folder of [workspace, other, outside]) folder[Symbol.dispose]();
  });

  const execute = (command: string, terminal = terminalId) => svc.request('POST', `/api/terminals/${terminal}/execute`, { json: { command } });

  /** A script the analysis rates medium and runs at once: only the confinement stands in its way. */
  const runScript = async (name: string, body: string, terminal = terminalId) => {
    workspace.file(name, `#!/bin/bash\n${body}\n`, 0o755);
    const res = await execute(`./${name}`, terminal);
    expect(res.body.risk, res.text).toBe('medium');
    return res.body.output as string;
  };

  const connects = (host: string, port: number | string) => `(exec 3<>/dev/tcp/${host}/${port}) 2>/dev/null && echo "${host}:${port} reached" || echo "${host}:${port} refused"`;

  it("reaches no port of the host: the API from any loopback or host address, the model provider, PostgreSQL, Redis", async () => {
    const api = new URL(svc.url).port;
    const provider = new URL(fake.url).port;
    const targets: [string, string][] = [
      ['127.0.0.1', api],
      ['127.0.0.2', api],
      ['127.1.2.3', api],
      ...hostAddresses.map((address): [string, string] => [address, api]),
      ['127.0.0.1', provider],
      ['127.0.0.1', '5432'],
      ['127.0.0.1', '6379'],
    ];
    const output = await runScript('ports.sh', targets.map(([host, port]) => connects(host, port)).join('\n'));
    expect(output.split('\n')).toEqual(targets.map(([host, port]) => `${host}:${port} refused`));
    // The same requests through the egress proxy are refused and audited with the terminal's user.
    const viaProxy = await runScript(
      'proxy-api.sh',
      [`curl -s -o /dev/null -w '%{http_code}\\n' http://127.0.0.1:${api}/api/security/pending`, `curl -s -o /dev/null -w '%{http_code}\\n' http://169.254.169.254/latest/meta-data/`].join('\n'),
    );
    expect(viaProxy).toBe('403\n403');
    const audit = await svc.request('GET', '/api/audit/log?type=command&limit=100');
    const refusals = (audit.body.entries as { userId: string; details: { action: string; destination: string; terminalId: string } }[]).filter(
      (entry) => entry.details.action === 'egress_refused',
    );
    expect(refusals.map((entry) => entry.details.destination)).toEqual(expect.arrayContaining([`127.0.0.1:${api}`, '169.254.169.254:80']));
    expect(refusals.every((entry) => entry.userId === 'local' && entry.details.terminalId === terminalId)).toBe(true);
  });

  it("reaches no Unix socket of the host, by path or in the abstract namespace", async () => {
    const hostSockets = ['/run/postgresql/.s.PGSQL.5432', '/var/run/postgresql/.s.PGSQL.5432', '/run/mysqld/mysqld.sock', '/var/run/docker.sock'];
    const tryConnect = (address: string) =>
      `python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.settimeout(2); s.connect(sys.argv[1]); print("reached", s.recv(64))' '${address}' 2>/dev/null || echo refused`;
    const script = [...hostSockets.map(tryConnect), tryConnect(abstractName.replace('\0', '\\0'))].join('\n');
    // `\0` reaches Python as the two characters; it turns them back into the abstract name.
    const output = await runScript('sockets.sh', script.replace("s.connect(sys.argv[1])", "s.connect(sys.argv[1].replace('\\\\0', '\\0'))"));
    expect(output.split('\n')).toEqual([...hostSockets, abstractName].map(() => 'refused'));
  });

  it('cannot listen where the host listens: a port opened inside is not the host port (the model provider stays the service\'s)', async () => {
    const provider = new URL(fake.url).port;
    // Inside, the provider's port is free (its own network): a fake model can listen there...
    const output = await runScript(
      'listen.sh',
      `python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", ${provider})); s.listen(); print("listening")' 2>&1 | tail -1`,
    );
    expect(output).toBe('listening');
    // ...which the service never talks to: its requests still reach the real provider.
    const models = await svc.request('GET', '/api/ollama/models');
    expect(models.status, models.text).toBe(200);
    expect(fake.requests.some((request) => request.path === '/api/tags')).toBe(true);
  });

  it('cannot write kernel settings, make namespaces, mount, or see the service', async () => {
    const output = await runScript(
      'kernel.sh',
      [
        `{ printf '%s\\n' "$(cat /proc/sys/kernel/hostname)" > /proc/sys/kernel/hostname; } 2>/dev/null && echo hostname-written || echo hostname-refused`,
        `{ echo 1 > /proc/sys/vm/drop_caches; } 2>/dev/null && echo sysctl-written || echo sysctl-refused`,
        'unshare --user true 2>/dev/null && echo userns-made || echo userns-refused',
        'unshare --user --map-root-user --net true 2>/dev/null && echo netns-made || echo netns-refused',
        'mount -t tmpfs none /tmp 2>/dev/null && echo mounted || echo mount-refused',
        `kill -0 ${process.pid} 2>/dev/null && echo service-seen || echo service-unseen`,
        "grep CapEff /proc/self/status | tr -d '\\t'",
      ].join('\n'),
    );
    expect(output.split('\n')).toEqual([
      'hostname-refused',
      'sysctl-refused',
      'userns-refused',
      'netns-refused',
      'mount-refused',
      'service-unseen',
      'CapEff:0000000000000000',
    ]);
  });

  it("cannot change what Git reads or runs: existing entries are read-only, .git cannot be replaced, and planted redirections stop the service's Git", async () => {
    mkdirSync(join(workspace.path, '.git', 'modules', 'lib'), { recursive: true });
    writeFileSync(join(workspace.path, '.git', 'modules', 'lib', 'config'), '[core]\n');
    // A fresh terminal binds what exists now (the submodule's config).
    const fresh = (await svc.request('POST', '/api/terminals', { json: { workingDirectory: workspace.path } })).body.terminalId as string;
    const output = await runScript(
      'git-meta.sh',
      [
        ...['config', 'hooks/pre-commit', 'info/attributes', 'modules/lib/config'].map(
          (entry) => `{ echo '[filter "x"]' >> .git/${entry}; } 2>/dev/null && echo "${entry} written" || echo "${entry} refused"`,
        ),
        'mv .git .git-moved 2>/dev/null && echo moved || echo move-refused',
        'rm -rf .git/hooks 2>/dev/null; [ -d .git/hooks ] && echo hooks-kept || echo hooks-gone',
      ].join('\n'),
      fresh,
    );
    expect(output.split('\n')).toEqual(['config refused', 'hooks/pre-commit refused', 'info/attributes refused', 'modules/lib/config refused', 'move-refused', 'hooks-kept']);
    await svc.request('DELETE', `/api/terminals/${fresh}`);

    // Absent entries cannot be bound (that would create them in the real repository), so a
    // command may create them; then the service runs no Git there and changes nothing outside.
    initRepository(outside.path);
    const marker = join(outside.path, 'smudged');
    execFileSync('git', ['config', 'filter.planted.smudge', `sh -c 'touch ${marker}; cat'`], { cwd: outside.path });
    const id = (await svc.request('GET', '/api/workspaces')).body.workspaces.find((entry: { path: string }) => entry.path === workspace.path).id as string;
    const plants: [entry: string, top: string, content: string][] = [
      ['commondir', 'commondir', `${outside.path}/.git\n`],
      ['config.worktree', 'config.worktree', `[core]\n\tworktree = ${outside.path}\n`],
      ['worktrees/evil/gitdir', 'worktrees', `${outside.path}/.git\n`],
    ];
    for (const [entry, top, content] of plants) {
      const planted = await runScript('plant.sh', `mkdir -p "$(dirname .git/${entry})" && printf '%s' '${content}' > .git/${entry} && echo planted`);
      expect(planted).toBe('planted');
      const refreshed = await svc.request('POST', `/api/workspaces/${id}/refresh`);
      expect(refreshed.body.workspace.status, `${entry}: ${refreshed.text}`).toBe('error');
      const switched = await svc.request('POST', `/api/workspaces/${id}/switch-branch`, { json: { branchName: 'main' } });
      expectEnvelope(switched, 400, 'WORKSPACE_ERROR');
      expectEnvelope(await svc.request('GET', `/api/workspaces/${id}/branches`), 400, 'WORKSPACE_ERROR');
      await runScript('unplant.sh', `rm -rf .git/${top}`);
      expect((await svc.request('POST', `/api/workspaces/${id}/refresh`)).body.workspace.status).not.toBe('error');
    }
    expect(existsSync(marker)).toBe(false);
    expect(readdirSync(outside.path).sort()).toEqual(['.git', 'README.md', 'secret.txt']);
  });

  it("never enters a submodule, whose own configuration could name a filter the service's Git would run", async () => {
    using repo = makeFolder();
    using library = makeFolder();
    initRepository(repo.path);
    initRepository(library.path);
    const git = (cwd: string, ...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@e', '-c', 'protocol.file.allow=always', ...args], { cwd, stdio: 'pipe' });
    git(repo.path, 'submodule', '-q', 'add', library.path, 'sub');
    git(repo.path, 'commit', '-q', '-m', 'submodule');
    const marker = join(outside.path, `submodule-filter-${kind}`);
    // The filter lives in .git/modules/sub/config, which the superproject's blanking never reads.
    git(join(repo.path, 'sub'), 'config', 'filter.evil.clean', `sh -c 'touch ${marker}; cat'`);
    writeFileSync(join(repo.path, 'sub', '.gitattributes'), '* filter=evil\n');
    git(join(repo.path, 'sub'), 'add', '.gitattributes');
    git(join(repo.path, 'sub'), 'commit', '-q', '-m', 'attributes');
    // Same size as committed, so a status inside the submodule must read it through the filter.
    writeFileSync(join(repo.path, 'sub', 'README.md'), '# fixturE\n');
    execFileSync('git', ['status', '--porcelain'], { cwd: repo.path, stdio: 'pipe' });
    expect(existsSync(marker)).toBe(true);
    rmSync(marker);
    const added = await svc.request('POST', '/api/workspaces/add', { json: { name: 'with-submodule', path: repo.path } });
    expect(added.status, added.text).toBe(200);
    await svc.request('POST', `/api/workspaces/${added.body.workspaceId as string}/refresh`);
    await svc.request('GET', `/api/workspaces/${added.body.workspaceId as string}/branches`);
    expect(existsSync(marker)).toBe(false);
    await svc.request('DELETE', `/api/workspaces/${added.body.workspaceId as string}`);
  });

  it("keeps the model's file tools inside the workspace however a racing process swaps a folder for a link", async () => {
    const deps = svc.service.deps;
    const row = await deps.store.db.workspace.findUniqueOrThrow({ where: { path: workspace.path } });
    const context: ToolContext = { deps, actor: { user: userWith('local', ['TheDude']), ip: '127.0.0.1' }, workspace: toWorkspaceRef(row), pauseForApproval: false };
    const tools = new Map(toolsForMode('agent', context).map((tool) => [tool.spec.name, tool]));
    const readTool = tools.get('read_file');
    const writeTool = tools.get('write_file');
    if (!readTool || !writeTool) throw new Error('file tools missing');
    const dataFolder = kind === 'sqlite' ? dirname(sqliteFilePath(svc.database.url)) : outside.path;
    workspace.file('race/file.txt', 'inside');
    // The racing process is a command in the workspace's own terminal: it swaps `race` for links
    // to the service's data folder, another workspace and /etc, as fast as it can.
    // Each state lasts a moment (sleep), so the tools meet all of them: the real folder, a link
    // out, and nothing at all.
    const swap = [
      `while :; do for target in ${dataFolder} ${other.path} /etc ${outside.path}; do`,
      '  mv race race.real 2>/dev/null; ln -sfn "$target" race; sleep 0.002; rm -f race; mv race.real race 2>/dev/null; sleep 0.002',
      'done; done',
    ].join('\n');
    workspace.file('swap.sh', `#!/bin/bash\n${swap}\n`, 0o755);
    const racer = (await svc.request('POST', '/api/terminals', { json: { workingDirectory: workspace.path } })).body.terminalId as string;
    const started = await svc.request('POST', `/api/terminals/${racer}/execute`, { json: { command: './swap.sh', waitForCompletion: false } });
    expect(started.body, started.text).toMatchObject({ status: 'busy' });
    const signal = new AbortController().signal;
    const escapes: string[] = [];
    const outcomes = new Map<string, number>();
    const tally = (outcome: string) => outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    try {
      for (let round = 0; round < 250; round++) {
        for (const name of ['assistant.db', 'secret.txt', 'passwd', 'file.txt']) {
          const result = (await readTool.run({ path: `race/${name}` }, signal)) as { content?: string; error?: string };
          if (typeof result.content === 'string') {
            tally('read');
            if (result.content !== 'inside') escapes.push(`read race/${name}: ${result.content.slice(0, 40)}`);
          } else tally(result.error?.slice(0, 30) ?? 'nothing');
        }
        const written = (await writeTool.run({ path: `race/planted-${round}.txt`, content: 'planted' }, signal)) as { error?: string };
        tally(written.error === undefined ? 'written' : 'write refused');
      }
    } finally {
      await svc.request('DELETE', `/api/terminals/${racer}`);
    }
    expect(escapes).toEqual([]);
    const plantedOutside = [dataFolder, other.path, outside.path].flatMap((folder) =>
      readdirSync(folder).filter((name) => name.startsWith('planted-')).map((name) => join(folder, name)),
    );
    expect(plantedOutside).toEqual([]);
    expect(readFileSync(join(other.path, 'secret.txt'), 'utf8')).toBe('other workspace secret');
    // The race was real: the tools met the real folder (a read or a write went through) and the
    // swapped one (refusals).
    expect((outcomes.get('read') ?? 0) + (outcomes.get('written') ?? 0), JSON.stringify([...outcomes])).toBeGreaterThan(0);
    expect([...outcomes.keys()].some((outcome) => outcome !== 'read' && outcome !== 'written'), JSON.stringify([...outcomes])).toBe(true);
  });

  it("refuses every forbidden workspace path: the service's own folders, its data, the system, home and its hidden folders", async () => {
    const dataFolder = kind === 'sqlite' ? dirname(sqliteFilePath(svc.database.url)) : null;
    const forbidden = [
      process.cwd(),
      join(process.cwd(), 'dist'),
      join(process.cwd(), 'src'),
      dirname(process.cwd()),
      ...(dataFolder === null ? [] : [dataFolder]),
      homedir(),
      join(homedir(), '.ssh'),
      join(homedir(), '.config'),
      '/',
      '/root',
      '/etc',
      '/usr/lib',
      '/var',
      '/var/lib',
      '/run',
      '/proc/self',
      '/sys',
      '/dev',
      '/boot',
      join(workspace.path, '.git'),
    ].filter((path) => existsSync(path));
    // Shared parents may hold a workspace but not be one.
    forbidden.push('/tmp', '/var/tmp');
    if (existsSync('/home')) forbidden.push('/home');
    // A link to one of them is judged by where it leads.
    const link = join(outside.path, 'innocent-looking');
    symlinkSync(process.cwd(), link);
    for (const path of [...forbidden, link]) {
      const res = await svc.request('POST', '/api/workspaces/add', { json: { name: 'forbidden', path } });
      expect(res.status, `${path}: ${res.text}`).toBe(400);
      expect(res.body.error.code).toBe('WORKSPACE_ERROR');
    }
    const listed = (await svc.request('GET', '/api/workspaces')).body.workspaces as { path: string }[];
    expect(listed.map((entry) => entry.path).sort()).toEqual([workspace.path, other.path].sort());
  });

  it('refuses nested workspaces and the data folder reached through a bind mount', async () => {
    using parent = makeFolder();
    mkdirSync(join(parent.path, 'child'));
    const outer = await svc.request('POST', '/api/workspaces/add', { json: { name: 'outer', path: parent.path } });
    expect(outer.status, outer.text).toBe(200);
    expect(expectEnvelope(await svc.request('POST', '/api/workspaces/add', { json: { name: 'inner', path: join(parent.path, 'child') } }), 400, 'WORKSPACE_ERROR').message).toMatch(/may not nest/);
    await svc.request('DELETE', `/api/workspaces/${outer.body.workspaceId as string}`);
    if (kind !== 'sqlite') return;
    using mountPoint = makeFolder();
    execFileSync('mount', ['--bind', dirname(sqliteFilePath(svc.database.url)), mountPoint.path]);
    try {
      const res = await svc.request('POST', '/api/workspaces/add', { json: { name: 'data', path: mountPoint.path } });
      expect(expectEnvelope(res, 400, 'WORKSPACE_ERROR').message).toMatch(/reached by another path/);
    } finally {
      execFileSync('umount', [mountPoint.path]);
    }
  });

  it('runs a confirmed command where it was shown, after judging it again', async () => {
    workspace.file('build/out.txt', 'old build');
    workspace.file('sub/build/keep.txt', 'keep me');
    const held = await execute('rm -r build');
    expect(held.status, held.text).toBe(202);
    const pending = (await svc.request('GET', '/api/security/pending')).body.pending as { id: string; workingDirectory: string }[];
    expect(pending.find((command) => command.id === held.body.commandId)?.workingDirectory).toBe(workspace.path);
    // The shell moves on before the person confirms.
    expect((await execute('cd sub')).body.exitCode).toBe(0);
    const confirmed = await svc.request('POST', '/api/security/confirm', { json: { commandId: held.body.commandId, confirmed: true } });
    expect(confirmed.body, confirmed.text).toMatchObject({ success: true, executed: true, exitCode: 0 });
    expect(existsSync(join(workspace.path, 'build'))).toBe(false);
    expect(readFileSync(join(workspace.path, 'sub/build/keep.txt'), 'utf8')).toBe('keep me');

    // Held as `rm -r target` of a plain folder; by the time it is confirmed the folder has
    // become a link to the workspace itself. Judged again it is worse, and nothing is removed.
    workspace.file('target/x.txt', 'x');
    const second = await execute('rm -r target');
    expect(second.status, second.text).toBe(202);
    rmSync(join(workspace.path, 'target'), { recursive: true });
    symlinkSync(workspace.path, join(workspace.path, 'target'));
    const refused = await svc.request('POST', '/api/security/confirm', { json: { commandId: second.body.commandId, confirmed: true } });
    expectEnvelope(refused, 403, 'SECURITY_VIOLATION');
    expect(existsSync(join(workspace.path, 'README.md'))).toBe(true);
    rmSync(join(workspace.path, 'target'));
  });

  it("cannot make bubblewrap mount a host folder by swapping a workspace's .git for a link while terminals and the file helper start", async () => {
    using racy = makeFolder();
    mkdirSync(join(racy.path, '.git'));
    racy.file('README.md', 'racy');
    const id = (await svc.request('POST', '/api/workspaces/add', { json: { name: 'racy', path: racy.path } })).body.workspaceId as string;
    // `.git` and a link to the host's /etc trade places as fast as the kernel allows (RENAME_EXCHANGE).
    symlinkSync('/etc', join(racy.path, '.gitx'));
    const flipper = (await svc.request('POST', '/api/terminals', { json: { workingDirectory: racy.path } })).body.terminalId as string;
    racy.file(
      'flip.py',
      'import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nwhile True: libc.renameat2(-100, b".git", -100, b".gitx", 2)\n',
    );
    // What each new terminal tries: read the host's secrets or plant a hook through the swapped names.
    racy.file('probe.sh', '#!/bin/bash\nhead -c 12 /etc/shadow .gitx/shadow .git/shadow 2>/dev/null; touch .git/hooks/x .gitx/hooks/x 2>/dev/null; echo end\n', 0o755);
    const flipping = await svc.request('POST', `/api/terminals/${flipper}/execute`, { json: { command: 'python3 flip.py', waitForCompletion: false } });
    expect(flipping.body, flipping.text).toMatchObject({ status: 'busy' });
    const etcBefore = readdirSync('/etc').sort();
    const deps = svc.service.deps;
    const row = await deps.store.db.workspace.findUniqueOrThrow({ where: { id } });
    const ref = toWorkspaceRef(row);
    const seen: string[] = [];
    try {
      for (let attempt = 0; attempt < 15; attempt++) {
        const created = await svc.request('POST', '/api/terminals', { json: { workingDirectory: racy.path } });
        if (created.status === 200) {
          const terminal = created.body.terminalId as string;
          const probe = await execute('./probe.sh', terminal);
          seen.push(String(probe.body.output ?? probe.text));
          await svc.request('DELETE', `/api/terminals/${terminal}`);
        }
        await deps.files.forget(racy.path);
        for (const path of ['.gitx/shadow', '.git/shadow']) {
          seen.push(await deps.files.read(ref, path).then((read) => read.content, (error: unknown) => String(error)));
        }
      }
    } finally {
      await svc.request('DELETE', `/api/terminals/${flipper}`);
      await deps.files.forget(racy.path);
      await svc.request('DELETE', `/api/workspaces/${id}`);
    }
    expect(seen.filter((text) => text.includes('root:'))).toEqual([]);
    expect(readdirSync('/etc').sort()).toEqual(etcBefore);
    // The terminals did start: the race did not simply stop everything.
    expect(seen.filter((text) => text.endsWith('end')).length, JSON.stringify(seen.slice(0, 6))).toBeGreaterThan(0);
  });

  it('turns a workspace replaced by a link or another folder into error: no terminal, tool or Git call uses it', async () => {
    using victim = makeFolder();
    initRepository(victim.path);
    const added = (await svc.request('POST', '/api/workspaces/add', { json: { name: 'victim', path: victim.path } })).body;
    const id = added.workspaceId as string;
    for (const replacement of ['link', 'folder'] as const) {
      renameSync(victim.path, `${victim.path}.real`);
      if (replacement === 'link') symlinkSync(outside.path, victim.path);
      else mkdirSync(victim.path);
      try {
        expect((await svc.request('POST', `/api/workspaces/${id}/refresh`)).body.workspace.status).toBe('error');
        expectEnvelope(await svc.request('POST', '/api/terminals', { json: { workingDirectory: victim.path } }), 403, 'SECURITY_VIOLATION');
        // A terminal made now does not bind it: a command cannot write there.
        const fresh = (await svc.request('POST', '/api/terminals', { json: { workingDirectory: workspace.path } })).body.terminalId as string;
        const planted = await runScript('into-victim.sh', `{ echo x > ${victim.path}/planted; } 2>/dev/null && echo written || echo refused`, fresh);
        await svc.request('DELETE', `/api/terminals/${fresh}`);
        expect(planted).toBe('refused');
        expect(existsSync(join(outside.path, 'planted'))).toBe(false);
        const deps = svc.service.deps;
        const row = await deps.store.db.workspace.findUniqueOrThrow({ where: { id } });
        const context: ToolContext = { deps, actor: { user: userWith('local', ['TheDude']), ip: '127.0.0.1' }, workspace: toWorkspaceRef(row), pauseForApproval: false };
        const read = toolsForMode('agent', context).find((tool) => tool.spec.name === 'read_file');
        expect(await read?.run({ path: 'secret.txt' }, new AbortController().signal)).toMatchObject({ code: 'WORKSPACE_ERROR' });
      } finally {
        rmSync(victim.path, { recursive: true, force: true });
        renameSync(`${victim.path}.real`, victim.path);
      }
    }
    expect((await svc.request('POST', `/api/workspaces/${id}/refresh`)).body.workspace.status).toBe('clean');
    await svc.request('DELETE', `/api/workspaces/${id}`);
  });

  it('ends the terminals that could write a workspace when it is removed, and audits why', async () => {
    using doomed = makeFolder();
    const id = (await svc.request('POST', '/api/workspaces/add', { json: { name: 'doomed', path: doomed.path } })).body.workspaceId as string;
    // Started after the workspace was added, so its sandbox binds it (every terminal binds every workspace).
    const writer = (await svc.request('POST', '/api/terminals', { json: { workingDirectory: workspace.path } })).body.terminalId as string;
    expect((await execute(`touch ${doomed.path}/made && echo made`, writer)).body.output).toBe('made');
    expect((await svc.request('DELETE', `/api/workspaces/${id}`)).status).toBe(200);
    const view = (await svc.request('GET', `/api/terminals/${writer}`)).body;
    expect(view).toMatchObject({ status: 'exited', details: { reason: 'workspace_removed' } });
    const entries = (await svc.request('GET', '/api/audit/log?type=terminal&limit=20')).body.entries as { details: Record<string, unknown> }[];
    expect(entries.some((entry) => entry.details.action === 'ended' && entry.details.terminalId === writer && entry.details.reason === 'workspace_removed')).toBe(true);
    await svc.request('DELETE', `/api/terminals/${writer}`);
  });

  it("ends a fork bomb's terminal within seconds and bounds memory, /tmp and file size; the service and other terminals keep answering", async () => {
    const victim = (await svc.request('POST', '/api/terminals', { json: { workingDirectory: workspace.path } })).body.terminalId as string;
    const bystander = (await svc.request('POST', '/api/terminals', { json: { workingDirectory: workspace.path } })).body.terminalId as string;
    const limits = await runScript(
      'hogs.sh',
      // Each hog runs in a shell of its own, whose end is reported by its exit code alone.
      [
        `bash -c "python3 -c 'x = bytearray(1024 * 1024 * 1024)'" 2>/dev/null; echo "memory=$?"`,
        "bash -c 'echo {1..3000}{1..3000}{1..30} > /dev/null' 2>/dev/null; echo \"braces=$?\"",
        'head -c 100M /dev/zero > /tmp/fill 2>/dev/null; echo "tmp=$?"',
        "bash -c 'yes > big.out' 2>/dev/null; echo \"filesize=$?\"; rm -f big.out",
      ].join('\n'),
      victim,
    );
    // Killed by the memory limit (137), or no room (1), or past RLIMIT_FSIZE (153: SIGXFSZ);
    // bash's own "Killed" notices are left out.
    expect(limits.split('\n').filter((line) => /^\w+=\d+$/.test(line))).toEqual(['memory=137', 'braces=137', 'tmp=1', 'filesize=153']);
    workspace.file('bomb.sh', '#!/bin/bash\nbomb() { bomb | bomb & }; bomb\nsleep 60\n', 0o755);
    const started = Date.now();
    void execute('./bomb.sh', victim);
    const answers: number[] = [];
    await waitFor(async () => {
      const began = Date.now();
      expect((await svc.request('GET', '/api/status')).status).toBe(200);
      answers.push(Date.now() - began);
      const view = (await svc.request('GET', `/api/terminals/${victim}`)).body;
      return view.status === 'exited' && view.details?.reason === 'process_limit' ? true : undefined;
    }, 30_000, 'the terminal of the fork bomb to end');
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(Math.max(...answers)).toBeLessThan(2000);
    expect((await execute('echo still here', bystander)).body.output).toBe('still here');
  });
});

describeWithSandbox('the start-up probe (CONTRACT §11)', () => {
  it('finds a sandbox that would let commands make namespaces, and says so (it fails closed)', async () => {
    // Without a user namespace of its own (and so without --disable-userns), root inside may
    // make one: the probe must notice, and the service then refuses commands.
    const weak = await probeSandbox('none', false);
    expect(weak).toMatchObject({ ok: true, broken: ['a command can create a user namespace'] });
    expect(await probeSandbox('proxy', true)).toEqual({ ok: true, broken: [] });
  });
});

describeWithSandbox('the egress proxy (CONTRACT §11)', () => {
  let allowed: HttpServer;
  let denied: HttpServer;
  let svc: TestService;
  let workspace: Folder;
  let repository: Folder;
  let terminalId: string;

  /** A plain HTTP server on a loopback address: a Git repository (dumb protocol) and an npm registry. */
  async function staticServer(host: string, root: string): Promise<HttpServer> {
    const server = createHttpServer((req, res) => {
      const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
      const file = join(root, path);
      if (!file.startsWith(root) || !existsSync(file) || path.endsWith('/')) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200).end(readFileSync(file));
    });
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    return server;
  }

  const portOf = (server: HttpServer) => (server.address() as { port: number }).port;

  beforeAll(async () => {
    workspace = makeFolder();
    repository = makeFolder();
    // A bare repository served over HTTP, and an npm package document beside it.
    initRepository(repository.path);
    execFileSync('git', ['clone', '-q', '--bare', repository.path, join(repository.path, 'served.git')]);
    execFileSync('git', ['update-server-info'], { cwd: join(repository.path, 'served.git') });
    repository.file('registry/left-pad', JSON.stringify({ name: 'left-pad', 'dist-tags': { latest: '1.0.0' }, versions: { '1.0.0': { name: 'left-pad', version: '1.0.0' } } }));
    allowed = await staticServer('127.0.0.3', repository.path);
    denied = await staticServer('127.0.0.4', repository.path);
    svc = await startTestService('sqlite', { ENABLE_SYSTEM_COMMANDS: 'true', SANDBOX_NETWORK_ALLOW: `127.0.0.3:${portOf(allowed)}` });
    await svc.request('POST', '/api/workspaces/add', { json: { name: 'net', path: workspace.path } });
    terminalId = (await svc.request('POST', '/api/terminals', { json: {} })).body.terminalId as string;
  });

  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    allowed.close();
    denied.close();
    workspace[Symbol.dispose]();
    repository[Symbol.dispose]();
  });

  const runScript = async (name: string, body: string) => {
    workspace.file(name, `#!/bin/bash\n${body}\n`, 0o755);
    const res = await svc.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command: `./${name}` } });
    expect(res.status, res.text).toBe(200);
    return res.body.output as string;
  };

  it('lets curl, git and npm reach a destination named in SANDBOX_NETWORK_ALLOW', async () => {
    const base = `http://127.0.0.3:${portOf(allowed)}`;
    const output = await runScript(
      'allowed.sh',
      [
        `curl -s ${base}/README.md`,
        `git clone -q ${base}/served.git cloned && cat cloned/README.md && rm -rf cloned`,
        `npm view left-pad version --registry ${base}/registry/ 2>/dev/null`,
      ].join('\n'),
    );
    expect(output.split('\n')).toEqual(['# fixture', '# fixture', '1.0.0']);
  });

  it('refuses a loopback destination not on the list, for curl, git and npm alike, and audits each refusal', async () => {
    const base = `http://127.0.0.4:${portOf(denied)}`;
    const before = Date.now();
    const output = await runScript(
      'denied.sh',
      [
        `curl -s -w ' %{http_code}\\n' ${base}/README.md`,
        `git clone -q ${base}/served.git cloned 2>/dev/null && echo cloned || echo git-refused`,
        `npm view left-pad version --registry ${base}/registry/ --fetch-retries=0 >/dev/null 2>&1 && echo npm-reached || echo npm-refused`,
      ].join('\n'),
    );
    expect(output.split('\n')).toEqual([`Refused by the sandbox's egress policy: 127.0.0.4:${portOf(denied)}: 127.0.0.4 is a loopback address`, ' 403', 'git-refused', 'npm-refused']);
    const entries = (await svc.request('GET', '/api/audit/log?type=command&limit=50')).body.entries as { timestamp: string; details: { action: string; destination: string } }[];
    const refusals = entries.filter((entry) => entry.details.action === 'egress_refused' && Date.parse(entry.timestamp) >= before - 1000);
    expect(refusals.length).toBeGreaterThanOrEqual(3);
    expect(new Set(refusals.map((entry) => entry.details.destination))).toEqual(new Set([`127.0.0.4:${portOf(denied)}`]));
  });
});

describeWithSandbox('confinement with Redis (CONTRACT §11)', () => {
  it.skipIf(!redisAvailable)('keeps commands away from the Redis the instances share', async () => {
    using workspace = makeFolder();
    await using svc = await startTestService('sqlite', {
      ENABLE_SYSTEM_COMMANDS: 'true',
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: freshRedisPrefix(),
      CLUSTER_SECRET: 'a-test-secret-that-is-long-enough',
    });
    await svc.request('POST', '/api/workspaces/add', { json: { name: 'redis', path: workspace.path } });
    const terminalId = (await svc.request('POST', '/api/terminals', { json: {} })).body.terminalId as string;
    const port = new URL(redisUrl).port || '6379';
    workspace.file('redis.sh', `#!/bin/bash\n(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo reached || echo refused\ncurl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:${port}/\n`, 0o755);
    const res = await svc.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command: './redis.sh' } });
    expect(res.body.output).toBe('refused\n403');
  });
});
