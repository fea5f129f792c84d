import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { shellLaunch } from '../../src/core/terminals/shell-launch.js';
import { ShellSession } from '../../src/core/terminals/shell-session.js';
import { makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { describeWithSandbox, placementIn } from '../helpers/sandbox.js';
import { waitFor } from '../helpers/wait-for.js';

// Keystrokes sent to a terminal's programs are data, never a command of the terminal's bash
// (CONTRACT §8's `input`; src/core/terminals/command-pipe.ts). Each case runs a command that
// tries to make bash read its next lines from somewhere keystrokes reach, or to write into its
// command pipe, then types `touch <marker>` and checks the marker file never appears. These hold
// whatever the risk analysis rates the command: they are the shell's own defences.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeWithSandbox('keystrokes never become commands', () => {
  let workspace: Folder;
  let shell: ShellSession;

  afterEach(() => {
    shell.kill();
    workspace[Symbol.dispose]();
  });

  async function start(): Promise<void> {
    workspace = makeFolder();
    shell = await ShellSession.start(
      shellLaunch(placementIn(workspace.path)),
    );
  }

  /** Runs `command`, types each key while it runs, and waits for its end (or the shell's). */
  async function typeInto(command: string, keys: readonly string[]): Promise<{ output: string; exitCode: number; shellExited: boolean }> {
    const { finished } = shell.execute(command);
    const run = await waitFor(() => shell.inputTarget() ?? undefined, 5000, 'the command to start');
    for (const key of keys) {
      await sleep(200);
      shell.input(key, run);
    }
    return Promise.race([finished, sleep(8000).then(() => Promise.reject(new Error(`${command} did not end`)))]);
  }

  const touched = (name: string) => existsSync(join(workspace.path, name));

  it.each([
    ['closing the copy bash restores its input from', 'exec 10<&-; sleep 1'],
    ['closing it through a variable, then reading the terminal through a pipe', 'x=10; exec {x}<&-; exec 0< <(cat /dev/tty); sleep 1'],
  ])('%s: the shell ends before it reads a line', async (_case, command) => {
    await start();
    const result = await typeInto(command, ['touch typed-command\n']);
    await sleep(300);
    expect(touched('typed-command')).toBe(false);
    expect(result).toMatchObject({ shellExited: true, exitCode: 137 });
    expect(shell.exited).toBe(true);
  });

  it.each([
    ['its saved copy', 'cat >/dev/fd/10'],
    ['its path in the sandbox', 'cat >/run/assistant-shell/commands'],
    ['the pipe made writable again', 'chmod 600 /proc/self/fd/10; cat >/proc/self/fd/10'],
  ])('the command pipe cannot be written through %s', async (_case, command) => {
    await start();
    const result = await typeInto(command, ['touch typed-command\n', '\x04']);
    expect(result.exitCode).not.toBe(0);
    await sleep(300);
    expect(touched('typed-command')).toBe(false);
    // The shell still works, and nothing more arrived on its pipe.
    expect((await shell.execute('echo still-here').finished).output).toBe('still-here');
    expect(touched('typed-command')).toBe(false);
  });

  it('read-only variables cannot break the prompt or the discard', async () => {
    await start();
    await typeInto('readonly __assistant_status=x __assistant_line REPLY; sleep 1', ['y\n']);
    expect((await shell.execute('read -t 1 answer; echo "got=[$answer]"').finished).output).toBe('got=[]');
    expect((await shell.execute('(exit 3)').finished).exitCode).toBe(3);
  });

  it.each([
    ['with the interrupt character on newline', 'stty intr ^J; sleep 1', ['abc\n', 'def\n']],
    ['with a Ctrl-C behind more than the terminal buffers', 'sleep 1', [`${'x'.repeat(8000)}\x03`]],
  ])('keystrokes left over %s do not wedge the next command', async (_case, command, keys) => {
    await start();
    await typeInto(command, keys);
    const next = await Promise.race([shell.execute('echo alive').finished, sleep(10_000).then(() => null)]);
    expect(next).toMatchObject({ output: 'alive', exitCode: 0 });
    expect(touched('typed-command')).toBe(false);
  });

  it('keystrokes left unread, however many, never reach the next program', async () => {
    await start();
    const { finished } = shell.execute('sleep 1.5');
    const run = await waitFor(() => shell.inputTarget() ?? undefined, 5000, 'the command to start');
    for (let frame = 0; frame < 5; frame++) shell.input('y\n'.repeat(30_000), run);
    await finished;
    const next = await shell.execute('read -t 1 answer; echo "got=[$answer]"').finished;
    expect(next.output).toBe('got=[]');
    // The terminal's settings are as the discard found them: echo is back on.
    expect((await shell.execute('stty -a </dev/tty | grep -o -- "-\\?echo " | head -n 1').finished).output.trim()).toBe('echo');
  });
});
