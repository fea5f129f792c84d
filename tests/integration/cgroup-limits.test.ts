import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect, it } from 'vitest';
import { detectCgroups, SandboxCgroup } from '../../src/core/sandbox/cgroup-limits.js';
import { prepareWorkspaceProcess } from '../../src/core/sandbox/workspace-process.js';
import { bwrapSandbox, describeWithSandbox } from '../helpers/sandbox.js';
import { makeFolder } from '../helpers/fixture-folders.js';
import { execFile } from 'node:child_process';

// The cgroups that bound each sandbox (CONTRACT §11): where the host lets root make them, which is
// the case on this machine and in CI (`limits: "cgroup"` is asserted by sandbox.test.ts).

const support = detectCgroups();

describeWithSandbox('sandbox cgroups', () => {
  it('sets the memory and process limits and a smaller processor weight, and removes the group once empty', async () => {
    if (support === null) throw new Error('no cgroup can be made here');
    const group = SandboxCgroup.create(support, `test-${Date.now()}`, { memoryBytes: 64 * 1024 * 1024, processes: 12 });
    const folders = group.procsFiles().map(dirname);
    const read = (name: string) => folders.map((folder) => join(folder, name)).filter(existsSync).map((file) => readFileSync(file, 'utf8').trim());
    expect(read(support.version === 1 ? 'memory.limit_in_bytes' : 'memory.max')).toContain(String(64 * 1024 * 1024));
    expect(read('pids.max')).toContain('12');
    if (support.parents.cpu !== undefined) expect(read(support.version === 1 ? 'cpu.shares' : 'cpu.weight')).toContain(support.version === 1 ? '128' : '12');
    await group.remove();
    expect(folders.filter(existsSync)).toEqual([]);
  });

  it("bounds what a Git call or a file helper starts: a repository's program cannot fork past its limit", async () => {
    using workspace = makeFolder();
    const sandbox = { ...bwrapSandbox, cgroups: support };
    const prepared = prepareWorkspaceProcess(
      { sandbox, workspace: { path: workspace.path, device: null, inode: null }, writable: false, limits: { memoryBytes: 128 * 1024 * 1024, processes: 16 }, kind: 'test' },
      ['/bin/sh', '-c', 'n=0; for i in $(seq 1 100); do sleep 2 & n=$((n+1)); done 2>/dev/null; jobs -p | wc -l'],
    );
    const [file = '/bin/bash', ...args] = prepared.argv;
    const output = await new Promise<string>((resolve) => {
      execFile(file, args, { encoding: 'utf8' }, (_error, stdout) => { resolve(stdout); });
    });
    prepared.pins.close();
    await prepared.release();
    expect(Number(output.trim())).toBeLessThan(16);
  });
});
