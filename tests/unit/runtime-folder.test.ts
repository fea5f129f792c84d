import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  holdRuntimeRoot,
  ownerRecord,
  removeRuntimeFolder,
  runtimeFolder,
  runtimeRootPath,
  sweepRuntimeRoots,
} from '../../src/core/sandbox/runtime-folder.js';
import { helperProgram } from '../../src/core/workspaces/file-helper/helper-script.js';

// The service's runtime folders (terminal pipes and proxy sockets, the file helper's program):
// one private root per process, removed at a clean stop, and swept at the next start when the
// process that made it is gone (kill -9), never while it runs.

/** A pid that belonged to a process which has ended. */
function deadPid(): number {
  const result = spawnSync('true');
  if (result.status !== 0) throw new Error('could not run true');
  return result.pid;
}

describe('the runtime root', () => {
  it('is private (0700), names its process, and holds every runtime folder, each private too', () => {
    const release = holdRuntimeRoot();
    const shell = runtimeFolder('shell');
    const root = runtimeRootPath();
    expect(root).not.toBeNull();
    if (root === null) return;
    expect(dirname(shell)).toBe(root);
    expect(root.startsWith(join(tmpdir(), 'assistant-runtime-'))).toBe(true);
    expect(statSync(root).mode & 0o777).toBe(0o700);
    expect(statSync(shell).mode & 0o777).toBe(0o700);
    const owner = JSON.parse(readFileSync(join(root, 'owner'), 'utf8')) as { pid: number; started: string | null };
    expect(owner.pid).toBe(process.pid);
    // A live root is never swept, by this process or another.
    expect(sweepRuntimeRoots()).not.toContain(root);
    removeRuntimeFolder(shell);
    release();
    expect(existsSync(root)).toBe(false);
    expect(runtimeRootPath()).toBeNull();
  });

  it("stays while another holder or a terminal's folder needs it; the file helper's bundle is made again after it went", async () => {
    const first = holdRuntimeRoot();
    const second = holdRuntimeRoot();
    const program = await helperProgram();
    const root = runtimeRootPath();
    expect(root !== null && dirname(program.folder) === root).toBe(true);
    const net = runtimeFolder('net');
    first();
    first();
    expect(existsSync(net)).toBe(true);
    second();
    // A terminal's folder was still in it: the root goes once that folder does.
    expect(existsSync(net)).toBe(true);
    removeRuntimeFolder(net);
    expect(root !== null && existsSync(root)).toBe(false);
    const again = await helperProgram();
    expect(again.folder).not.toBe(program.folder);
    expect(existsSync(join(again.folder, again.entry))).toBe(true);
    // The bundle alone (a cache) never keeps the root.
    holdRuntimeRoot()();
    expect(existsSync(again.folder)).toBe(false);
  });

  it('is made again when removed under the service (a cleaner of old temporary files)', () => {
    const release = holdRuntimeRoot();
    const first = runtimeFolder('shell');
    rmSync(dirname(first), { recursive: true, force: true });
    const second = runtimeFolder('shell');
    expect(existsSync(second)).toBe(true);
    removeRuntimeFolder(first);
    removeRuntimeFolder(second);
    release();
  });
});

describe('the start-up sweep', () => {
  let parent: string;
  let sleeper: ChildProcess;
  beforeAll(() => {
    parent = mkdtempSync(join(tmpdir(), 'runtime-sweep-'));
    sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
  });
  afterAll(() => {
    sleeper.kill('SIGKILL');
    rmSync(parent, { recursive: true, force: true });
  });

  const plantRoot = (name: string, owner: string | null, uid?: number) => {
    const root = join(parent, name);
    mkdirSync(join(root, 'shell-abc123'), { recursive: true, mode: 0o700 });
    writeFileSync(join(root, 'shell-abc123', 'commands'), '');
    if (owner !== null) writeFileSync(join(root, 'owner'), owner, { mode: 0o600 });
    if (uid !== undefined) chownSync(root, uid, uid);
    return root;
  };

  /** An owner record of `pid` with some fields changed. */
  const recordWith = (pid: number, changes: Record<string, unknown>) => `${JSON.stringify({ ...(JSON.parse(ownerRecord(pid)) as object), ...changes })}\n`;

  it("removes a root whose process is gone, keeps a live process's, and removes one whose pid now names another process", () => {
    const dead = plantRoot('assistant-runtime-dead01', ownerRecord(deadPid()));
    const alive = plantRoot('assistant-runtime-alive1', ownerRecord(sleeper.pid ?? 0));
    const self = plantRoot('assistant-runtime-self01', ownerRecord(process.pid));
    // The same pid, started at another time: the process that made the root is gone.
    const reused = plantRoot('assistant-runtime-reuse1', recordWith(sleeper.pid ?? 0, { started: '1' }));
    // Left from an earlier boot (a /tmp that survives reboots): whatever runs under that pid now.
    const earlierBoot = plantRoot('assistant-runtime-boot01', recordWith(process.pid, { boot: '00000000-0000-0000-0000-000000000000' }));
    // A process of another PID namespace (a container sharing /tmp) cannot be looked up: kept.
    const elsewhere = plantRoot('assistant-runtime-elsew1', recordWith(deadPid(), { namespace: 'pid:[1]' }));
    expect(sweepRuntimeRoots(parent).sort()).toEqual([dead, reused, earlierBoot].sort());
    for (const root of [dead, reused, earlierBoot]) expect(existsSync(root), root).toBe(false);
    for (const root of [alive, self, elsewhere]) expect(existsSync(root), root).toBe(true);
  });

  it('leaves what it cannot vouch for: no or a malformed owner record, a pipe for one, another user\'s root, other names', () => {
    const none = plantRoot('assistant-runtime-none01', null);
    const malformed = plantRoot('assistant-runtime-bad001', '{"pid": 0}');
    const group = plantRoot('assistant-runtime-group1', recordWith(deadPid(), { pid: -1 }));
    const pipe = plantRoot('assistant-runtime-fifo01', null);
    spawnSync('mkfifo', [join(pipe, 'owner')]);
    const other = plantRoot('assistant-test-dead001', ownerRecord(deadPid()));
    const planted = [none, malformed, group, pipe, other];
    if (process.getuid?.() === 0) planted.push(plantRoot('assistant-runtime-user01', ownerRecord(deadPid()), 65534));
    expect(sweepRuntimeRoots(parent)).toEqual([]);
    for (const root of planted) expect(existsSync(root), root).toBe(true);
  });
});
