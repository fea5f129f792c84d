import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { shellLaunch } from '../../src/core/terminals/shell-launch.js';
import { ShellSession } from '../../src/core/terminals/shell-session.js';
import { initRepository, makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { describeWithSandbox, placementIn } from '../helpers/sandbox.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

// What the sandbox guarantees even for commands the risk analysis lets through (CONTRACT §4,
// §11): each probe is a script file, which the analysis rates medium and runs at once, so only
// the sandbox stands between it and the host. The attacks of §11 are in confinement-attacks.test.ts.

describeWithSandbox('sandbox', () => {
  let svc: TestService;
  let workspace: Folder;
  let outside: Folder;
  let data: Folder;
  let terminalId: string;

  beforeAll(async () => {
    workspace = makeFolder();
    outside = makeFolder();
    data = makeFolder();
    initRepository(workspace.path);
    svc = await startTestService('sqlite', {
      ENABLE_SYSTEM_COMMANDS: 'true',
      SANDBOX: 'bwrap',
      DATABASE_URL: `file:${join(data.path, 'assistant.db')}`,
    });
    await svc.request('POST', '/api/workspaces/add', { json: { name: 'sandboxed', path: workspace.path } });
    terminalId = (await svc.request('POST', '/api/terminals', { json: {} })).body.terminalId as string;
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    for (const folder of [workspace, outside, data]) folder[Symbol.dispose]();
  });

  /** Writes `body` as an executable script in the workspace and runs it through the API. */
  const runScript = async (name: string, body: string) => {
    workspace.file(name, `#!/bin/bash\n${body}\n`, 0o755);
    const res = await svc.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command: `./${name}` } });
    expect(res.body.risk, res.text).toBe('medium');
    return res.body.output as string;
  };

  it('is named by /api/status, with its network and how its limits hold', async () => {
    expect((await svc.request('GET', '/api/status')).body).toMatchObject({
      sandbox: 'bwrap',
      sandboxNetwork: 'proxy',
      limits: 'cgroup',
      systemCommands: true,
    });
  });

  it('keeps a script that writes outside the workspaces from doing so', async () => {
    const planted = `planted-${Date.now()}`;
    // `{ …; } 2>/dev/null` also silences the shell's own message when the redirection fails.
    const output = await runScript(
      'escape.sh',
      [
        `{ echo pwned > ${outside.path}/stolen; } 2>/dev/null; echo "outside=$?"`,
        'touch inside-ok; echo "inside=$?"',
        `echo x > /tmp/${planted}; echo "tmp=$?"`,
        `echo x > ~/${planted}; echo "home=$?"`,
      ].join('\n'),
    );
    expect(output.split('\n')).toEqual(['outside=1', 'inside=0', 'tmp=0', 'home=0']);
    expect(existsSync(join(outside.path, 'stolen'))).toBe(false);
    expect(existsSync(join(workspace.path, 'inside-ok'))).toBe(true);
    // /tmp and home inside are private: nothing written there reaches the host.
    expect(existsSync(join('/tmp', planted))).toBe(false);
    expect(existsSync(join(homedir(), planted))).toBe(false);
  });

  it('drops every capability: root inside cannot remount / writable', async () => {
    const probe = `/usr/.assistant-probe-${Date.now()}`;
    const output = await runScript(
      'remount.sh',
      ['mount -o remount,rw / 2>/dev/null; echo "mount=$?"', `touch ${probe} 2>/dev/null; echo "touch=$?"`, "grep CapEff /proc/self/status | tr -d '\\t'"].join('\n'),
    );
    const [mount, touch, caps] = output.split('\n');
    expect(mount).not.toBe('mount=0');
    expect(touch).toBe('touch=1');
    expect(caps).toBe('CapEff:0000000000000000');
    expect(existsSync(probe)).toBe(false);
  });

  it("runs in its own PID namespace: the service's processes (and their secrets) are out of sight", async () => {
    const output = await runScript('pids.sh', [`test -e /proc/${process.pid}/environ && echo visible || echo hidden`, 'cat /proc/1/comm'].join('\n'));
    expect(output).toBe('hidden\nbwrap');
  });

  it("makes the repository's hooks and config read-only", async () => {
    const output = await runScript(
      'git-guard.sh',
      [
        '{ echo "touch /tmp/owned" > .git/hooks/post-checkout; } 2>/dev/null; echo "hooks=$?"',
        '{ echo "[core]" >> .git/config; } 2>/dev/null; echo "config=$?"',
        'touch .git/description-copy; echo "gitdir=$?"',
      ].join('\n'),
    );
    expect(output).toBe('hooks=1\nconfig=1\ngitdir=0');
    expect(existsSync(join(workspace.path, '.git', 'hooks', 'post-checkout'))).toBe(false);
  });

  it("masks the service's database folder and its user's home, whatever HOME the terminal is given", async () => {
    expect(readdirSync(homedir()).length).toBeGreaterThan(0);
    workspace.file('peek.sh', `#!/bin/bash\nls -A ${data.path} 2>/dev/null | wc -l; ls -A ${homedir()} 2>/dev/null | grep -v '^.gitconfig$' | wc -l\n`, 0o755);
    for (const environment of [{}, { HOME: '/nonexistent' }, { HOME: outside.path }]) {
      const res = await svc.request('POST', '/api/terminals', { json: { environment } });
      const terminal = res.body.terminalId as string;
      const ran = await svc.request('POST', `/api/terminals/${terminal}/execute`, { json: { command: './peek.sh' } });
      expect({ environment, output: ran.body.output }).toEqual({ environment, output: '0\n0' });
      await svc.request('DELETE', `/api/terminals/${terminal}`);
    }
    expect(readdirSync(data.path).length).toBeGreaterThan(0);
  });

  it("masks /run, where the host's sockets live", async () => {
    const host = readdirSync('/run');
    expect(host.length).toBeGreaterThan(0);
    // The sandbox's own /run is private and may hold what its commands made (mount's lock folder).
    const inside = (await runScript('run.sh', 'ls -A /run')).split('\n').filter((entry) => entry !== '');
    expect(inside.filter((entry) => host.includes(entry) && entry !== 'mount')).toEqual([]);
  });

  it("confines the programs a repository's config makes the service's own Git calls run", async () => {
    using repository = makeFolder();
    initRepository(repository.path);
    const marker = join(outside.path, `filter-ran-${Date.now()}`);
    // A clean filter is what `git status` runs on a changed file; no Git switch turns it off.
    execFileSync('git', ['config', 'filter.planted.clean', `sh -c 'touch ${marker}; cat'`], { cwd: repository.path });
    repository.file('.gitattributes', '* filter=planted\n');
    // Same size as committed, so Git must read the content (through the filter) to compare it.
    repository.file('README.md', '# fixturE\n');
    execFileSync('git', ['-c', 'safe.directory=*', 'status', '--porcelain'], { cwd: repository.path });
    expect(existsSync(marker)).toBe(true);
    rmSync(marker);
    const added = await svc.request('POST', '/api/workspaces/add', { json: { name: 'planted', path: repository.path } });
    expect(added.body.workspace.status).toBe('dirty');
    await svc.request('POST', `/api/workspaces/${added.body.workspaceId as string}/refresh`);
    expect(existsSync(marker)).toBe(false);
    await svc.request('DELETE', `/api/workspaces/${added.body.workspaceId as string}`);
  });

  it('cannot reach the service at all: the connection itself fails, so no command can confirm another', async () => {
    const port = new URL(svc.url).port;
    const output = await runScript('api.sh', `(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo connected || echo refused`);
    expect(output).toBe('refused');
    expect((await svc.request('GET', '/api/security/pending')).status).toBe(200);
  });

  it('starts terminals whatever a repository keeps in .git/hooks', async () => {
    using repository = makeFolder();
    initRepository(repository.path);
    rmSync(join(repository.path, '.git', 'hooks'), { recursive: true, force: true });
    symlinkSync('/nonexistent/hooks', join(repository.path, '.git', 'hooks'));
    const added = await svc.request('POST', '/api/workspaces/add', { json: { name: 'odd-hooks', path: repository.path } });
    const res = await svc.request('POST', '/api/terminals', { json: { workingDirectory: repository.path } });
    expect(res.status, res.text).toBe(200);
    await svc.request('DELETE', `/api/terminals/${res.body.terminalId as string}`);
    await svc.request('DELETE', `/api/workspaces/${added.body.workspaceId as string}`);
  });

  it("runs with the system's programs only on its PATH, and sees nothing of the host's cgroups", async () => {
    // A folder of the service's own PATH under its user's home would be writable inside (home is
    // a private tmpfs): a program planted there would run in place of the one a command names.
    const output = await runScript('path.sh', 'echo "$PATH"; ls -A /sys/fs/cgroup | wc -l');
    expect(output).toBe('/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n0');
  });

  it('has its own network by default: only loopback, and the proxy variables pointing at the bridge inside', async () => {
    // /proc/net follows the shell's network namespace (/sys would show the host's).
    const output = await runScript('net.sh', ["tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '", 'echo "$HTTPS_PROXY $http_proxy $ALL_PROXY ${NO_PROXY-unset}"'].join('\n'));
    expect(output).toBe('lo\nhttp://127.0.0.1:3128 http://127.0.0.1:3128 http://127.0.0.1:3128 unset');
  });
});

describeWithSandbox('sandbox without network', () => {
  it('cuts the network with SANDBOX_NETWORK=none (and the old spelling false)', async () => {
    for (const setting of ['none', 'false']) {
      using workspace = makeFolder();
      await using svc = await startTestService('sqlite', { ENABLE_SYSTEM_COMMANDS: 'true', SANDBOX_NETWORK: setting });
      expect((await svc.request('GET', '/api/status')).body.sandboxNetwork).toBe('none');
      await svc.request('POST', '/api/workspaces/add', { json: { name: 'offline', path: workspace.path } });
      const terminalId = (await svc.request('POST', '/api/terminals', { json: {} })).body.terminalId as string;
      const port = new URL(svc.url).port;
      workspace.file(
        'net.sh',
        `#!/bin/bash\n(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo connected || echo refused\ntail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '\necho "\${HTTPS_PROXY-none}"\n`,
        0o755,
      );
      const res = await svc.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command: './net.sh' } });
      expect(res.body.output, res.text).toBe('refused\nlo\nnone');
    }
  });
});

describeWithSandbox("sandbox on the host's network", () => {
  it('with SANDBOX_NETWORK=host still refuses requests from inside a terminal (403)', async () => {
    using workspace = makeFolder();
    await using svc = await startTestService('sqlite', { ENABLE_SYSTEM_COMMANDS: 'true', SANDBOX_NETWORK: 'host' });
    await svc.request('POST', '/api/workspaces/add', { json: { name: 'shared', path: workspace.path } });
    const terminalId = (await svc.request('POST', '/api/terminals', { json: {} })).body.terminalId as string;
    const port = new URL(svc.url).port;
    const request = (path: string) =>
      `exec 3<>/dev/tcp/127.0.0.1/${port}; printf 'GET ${path} HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n' >&3; head -1 <&3`;
    workspace.file('api.sh', `#!/bin/bash\n${request('/api/security/pending')}\n`, 0o755);
    const res = await svc.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command: './api.sh' } });
    expect(res.body.output, res.text).toMatch(/^HTTP\/1\.1 403/);
    expect((await svc.request('GET', '/api/security/pending')).status).toBe(200);
  });
});

describeWithSandbox('sandboxed shell', () => {
  it('has job control and follows a resize', async () => {
    using workspace = makeFolder();
    const shell = await ShellSession.start(shellLaunch(placementIn(workspace.path)));
    try {
      const run = async (command: string) => (await shell.execute(command).finished).output;
      expect(await run('sleep 30 & jobs')).toMatch(/^\[1\] \d+\n\[1\]\+\s+Running\s+sleep 30 &$/);
      expect(await run('stty size')).toBe('50 200');
      shell.resize(100, 40);
      expect(await run('stty size')).toBe('40 100');
      expect(await run('kill %1; wait; echo reaped')).toMatch(/reaped$/);
      // A shell killed in the middle of a command reports it as shells do: 128 + SIGKILL.
      const { finished } = shell.execute('sleep 30');
      await new Promise((resolve) => setTimeout(resolve, 100));
      shell.kill();
      expect(await finished).toMatchObject({ exitCode: 137, shellExited: true });
    } finally {
      shell.kill();
    }
  });
});

describeWithSandbox('interrupting a shell', () => {
  it('stops the command however soon the interrupt follows it, whatever runs in the foreground', async () => {
    using workspace = makeFolder();
    const shell = await ShellSession.start(shellLaunch(placementIn(workspace.path)));
    // A job, bash itself in a loop, a list that must stop after its first part, a pipeline, a
    // subshell and a nested shell. Interrupting at once hits every race between bash reading
    // the line, forking and exec'ing the program.
    const commands = ['sleep 30', 'while :; do :; done', 'sleep 30; echo after', 'sleep 30 | cat', '(sleep 30; echo after)', 'bash -c "sleep 30"'];
    try {
      for (let round = 0; round < 24; round++) {
        const { finished } = shell.execute(commands[round % commands.length] ?? 'sleep 30');
        shell.interrupt();
        const outcome = await Promise.race([
          finished,
          new Promise<null>((resolve) => {
            setTimeout(() => {
              resolve(null);
            }, 5000);
          }),
        ]);
        expect(outcome, `round ${round}`).toMatchObject({ exitCode: 130, shellExited: false });
        expect(outcome?.output).not.toContain('after');
      }
      expect((await shell.execute('echo still here').finished).output).toBe('still here');
    } finally {
      shell.kill();
    }
  });
});

describeWithSandbox('sandbox with WORKSPACE_RESTRICTION_ENABLED=false', () => {
  it("makes the terminal's own folder writable, but never / or the system's and the service's folders, which it sees empty", async () => {
    using anywhere = makeFolder();
    const probe = `probe-${Date.now()}`;
    await using svc = await startTestService('sqlite', { ENABLE_SYSTEM_COMMANDS: 'true', WORKSPACE_RESTRICTION_ENABLED: 'false' });
    const run = async (workingDirectory: string, command: string) => {
      const created = await svc.request('POST', '/api/terminals', { json: { workingDirectory } });
      expect(created.status, created.text).toBe(200);
      const terminalId = created.body.terminalId as string;
      const res = await svc.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command } });
      await svc.request('DELETE', `/api/terminals/${terminalId}`);
      return res.body.output as string;
    };
    const write = (workingDirectory: string, target: string) => run(workingDirectory, `bash -c '{ echo x > ${target}; } 2>/dev/null; echo $?'`);
    expect(await write(anywhere.path, join(anywhere.path, probe))).toBe('0');
    expect(await write('/', join(anywhere.path, `${probe}-root`))).toBe('1');
    expect(await write('/var', join(anywhere.path, `${probe}-var`))).toBe('1');
    expect(existsSync(join(anywhere.path, probe))).toBe(true);
    expect(existsSync(join(anywhere.path, `${probe}-root`))).toBe(false);
    // The service's own folder is a start folder like any other, but it is empty inside; a folder
    // inside it, or a hidden folder of the service user's home, is never made writable either.
    expect(await run(process.cwd(), 'pwd; ls -A | wc -l')).toBe(`${process.cwd()}\n0`);
    for (const inside of [join(process.cwd(), 'src'), join(process.cwd(), 'node_modules')]) {
      expect(await run(inside, `bash -c 'ls -A | wc -l; { touch planted; } 2>/dev/null && echo written || echo refused'`), inside).toBe('0\nrefused');
      expect(existsSync(join(inside, 'planted'))).toBe(false);
    }
  });
});
