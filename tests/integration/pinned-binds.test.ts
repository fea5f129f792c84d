import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { isolationArguments, procArguments } from '../../src/core/sandbox/bwrap-arguments.js';
import { launchPrefix, pinnedBindArguments } from '../../src/core/sandbox/launch-prefix.js';
import { misplacedMounts } from '../../src/core/sandbox/mount-check.js';
import { PinError, PinnedBinds } from '../../src/core/sandbox/pinned-binds.js';
import { systemViewArguments } from '../../src/core/sandbox/system-view.js';
import { makeFolder } from '../helpers/fixture-folders.js';
import { describeWithSandbox } from '../helpers/sandbox.js';

// A sandbox binds a workspace by the folder the service opened, not by its name (CONTRACT §11):
// whatever the name leads to by the time bubblewrap mounts it, the checked folder is what appears.

function runSandboxed(pins: PinnedBinds, script: string): Promise<string> {
  const argv = [
    ...launchPrefix({ cgroupFiles: [], pins, prlimit: null, rlimits: [] }),
    'bwrap',
    ...isolationArguments({ network: 'none', userNamespace: true }),
    '--dev', '/dev', ...procArguments(), ...systemViewArguments({ etc: false }),
    ...pinnedBindArguments(pins),
    '--', '/bin/sh', '-c', script,
  ];
  const [file = '/bin/bash', ...args] = argv;
  return new Promise((resolve, reject) => {
    execFile(file, args, { encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${error.message}: ${stderr}`));
      else resolve(stdout);
    });
  });
}

describeWithSandbox('pinned binds', () => {
  it('binds the folder that was checked even when its name leads to /etc by the time bubblewrap mounts it', async () => {
    using folder = makeFolder();
    const workspace = join(folder.path, 'ws');
    mkdirSync(join(workspace, '.git', 'hooks'), { recursive: true });
    writeFileSync(join(workspace, '.git', 'config'), '[core]\n');
    writeFileSync(join(workspace, 'inside.txt'), 'inside');
    const pins = new PinnedBinds();
    pins.addWorkspace(workspace, null, { writable: true, protectGit: true });
    try {
      // The race won: the workspace's name now leads to the host's /etc.
      renameSync(workspace, `${workspace}.real`);
      symlinkSync('/etc', workspace);
      const output = await runSandboxed(pins, `cat ${workspace}/inside.txt; echo; ls ${workspace}/passwd 2>&1 | head -1; { echo x >> ${workspace}/.git/config; } 2>/dev/null && echo config-written || echo config-read-only`);
      expect(output.split('\n')).toEqual(['inside', expect.stringMatching(/No such file/), 'config-read-only', '']);
    } finally {
      pins.close();
      rmSync(workspace);
      renameSync(`${workspace}.real`, workspace);
    }
  });

  it('refuses to pin a link, or a folder that is not the registered one', () => {
    using folder = makeFolder();
    const real = join(folder.path, 'real');
    mkdirSync(real);
    symlinkSync(real, join(folder.path, 'link'));
    expect(() => { new PinnedBinds().addWorkspace(join(folder.path, 'link'), null, { writable: true, protectGit: false }); }).toThrow(PinError);
    expect(() => { new PinnedBinds().addWorkspace(real, { device: '1', inode: '2' }, { writable: true, protectGit: false }); }).toThrow(/not the folder that was registered/);
  });

  it("does not follow a link planted as one of .git's protected entries, nor create through it", () => {
    using folder = makeFolder();
    const workspace = join(folder.path, 'ws');
    mkdirSync(join(workspace, '.git'), { recursive: true });
    symlinkSync(join(folder.path, 'elsewhere'), join(workspace, '.git', 'hooks'));
    const pins = new PinnedBinds();
    pins.addWorkspace(workspace, null, { writable: true, protectGit: true });
    pins.close();
    expect(existsSync(join(folder.path, 'elsewhere'))).toBe(false);
    expect(pins.binds.map((bind) => bind.target)).toEqual([workspace, join(workspace, '.git'), ...['info', 'modules'].map((name) => join(workspace, '.git', name))]);
  });

  it('finds a mount that is not what was pinned', () => {
    using folder = makeFolder();
    const pins = new PinnedBinds();
    pins.addWorkspace(folder.path, null, { writable: true, protectGit: false });
    pins.close();
    const [expected] = pins.expectedMounts();
    if (!expected) throw new Error('nothing pinned');
    // This process's own root: the folder is there but not mounted on its own.
    expect(misplacedMounts(process.pid, [expected])).toMatch(/not mounted where it should be/);
    expect(misplacedMounts(process.pid, [{ ...expected, target: '/', inode: expected.inode + 1 }])).toMatch(/not what was pinned/);
  });
});
