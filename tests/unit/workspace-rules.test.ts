import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { homesFromPasswd, otherHomes, registrationProblem, servicePaths, type ServicePaths } from '../../src/core/workspaces/workspace-rules.js';

// CONTRACT §11 "Workspace registration", from the attacker's side: every account's home (not only
// the service user's), all of /var but /var/tmp, and the service's runtime folders, by name,
// by link and from any instance.

const PASSWD = [
  'root:x:0:0:root:/root:/bin/bash',
  'daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin',
  'www-data:x:33:33:www-data:/var/www:/usr/sbin/nologin',
  'postgres:x:101:101::/var/lib/postgresql:/bin/bash',
  'systemd-network:x:998:998::/:/usr/sbin/nologin',
  'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin',
  '# a comment:x:0:0::/home/comment:/bin/sh',
  'short:x:1:1:/home/short',
  'relative:x:1002:1002::home/relative:/bin/sh',
  'bob:x:1000:1000:Bob,,,:/home/bob/:/bin/bash',
  'carol:x:1001:1001::/srv/users/carol:/bin/zsh',
  '',
].join('\n');

const config = { DATABASE_URL: 'postgresql://127.0.0.1/unused' };

describe('homes from /etc/passwd (the fixture, so the test does not depend on this machine)', () => {
  it('reads each account home; `/`, `/nonexistent`, comments, short and relative lines name none', () => {
    expect(homesFromPasswd(PASSWD)).toEqual([
      { user: 'root', home: '/root' },
      { user: 'daemon', home: '/usr/sbin' },
      { user: 'www-data', home: '/var/www' },
      { user: 'postgres', home: '/var/lib/postgresql' },
      { user: 'bob', home: '/home/bob' },
      { user: 'carol', home: '/srv/users/carol' },
    ]);
  });

  it('keeps the homes that need the home rule: not the system folders already forbidden', () => {
    const paths = servicePaths(config);
    expect(otherHomes(homesFromPasswd(PASSWD), { ...paths, home: '/home/service' }).map(({ user }) => user)).toEqual(['bob', 'carol']);
    // The service user's own home has its own message and is not repeated.
    expect(otherHomes(homesFromPasswd(PASSWD), { ...paths, home: '/home/bob' }).map(({ user }) => user)).toEqual(['carol']);
  });

  it("refuses another user's home, what holds it and its hidden folders; a project inside is fine", () => {
    const base = servicePaths(config);
    const paths: ServicePaths = { ...base, home: '/home/service', homes: otherHomes(homesFromPasswd(PASSWD), { ...base, home: '/home/service' }) };
    expect(registrationProblem('/home/bob', paths)).toBe("/home/bob is or holds bob's home (/home/bob)");
    expect(registrationProblem('/home/bob/.ssh', paths)).toBe("/home/bob/.ssh lies in a hidden folder of bob's home (/home/bob/.ssh)");
    expect(registrationProblem('/home/bob/.config/autostart', paths)).toMatch(/hidden folder of bob's home/);
    expect(registrationProblem('/srv/users/carol', paths)).toMatch(/carol's home/);
    expect(registrationProblem('/srv/users', paths)).toMatch(/is or holds carol's home/);
    expect(registrationProblem('/srv/users/carol/.bashrc.d', paths)).toMatch(/hidden folder of carol's home/);
    expect(registrationProblem('/home', paths)).toMatch(/shared/);
    expect(registrationProblem('/home/bob/projects/app', paths)).toBeNull();
    expect(registrationProblem('/srv/users/carol/site', paths)).toBeNull();
    expect(registrationProblem('/home/service', paths)).toMatch(/service user's home/);
  });
});

describe('/var', () => {
  const paths = servicePaths(config);

  it('refuses all of /var, whatever lies there, and what holds it', () => {
    for (const path of ['/var', '/var/www', '/var/www/html', '/var/opt', '/var/opt/app', '/var/local', '/var/local/bin', '/var/lib/dpkg', '/var/spool/cron', '/var/mail']) {
      expect(registrationProblem(path, paths), path).toMatch(/lies inside \/var, which commands must not reach/);
    }
  });

  it('keeps /var/tmp a shared parent: not itself, but a folder in it', () => {
    expect(registrationProblem('/var/tmp', paths)).toMatch(/shared/);
    expect(registrationProblem('/var/tmp/project', paths)).toBeNull();
    expect(registrationProblem('/var/tmp/project/app', paths)).toBeNull();
  });
});

describe('runtime folders (command pipes, proxy sockets, the file helper)', () => {
  let base: string;
  beforeAll(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'workspace-rules-')));
  });
  afterAll(() => {
    rmSync(base, { recursive: true, force: true });
  });

  it("refuses any instance's runtime root, what lies in it, and older versions' folders, wherever they are", () => {
    const paths = servicePaths(config);
    for (const path of [
      '/tmp/assistant-runtime-Ab12Cd',
      '/tmp/assistant-runtime-Ab12Cd/shell-Xy34Zw',
      '/tmp/assistant-runtime-Ab12Cd/net-Xy34Zw',
      '/tmp/assistant-runtime-Ab12Cd/file-helper-Q1w2E3',
      '/tmp/assistant-shell-Xy34Zw',
      '/tmp/assistant-net-Xy34Zw',
      '/tmp/assistant-file-helper-Xy34Zw',
      // Another instance's TMPDIR (systemd's PrivateTmp, seen from the host).
      '/tmp/systemd-private-0f1e-assistant.service-a1b2/tmp/assistant-runtime-Ab12Cd/shell-Xy34Zw',
      '/srv/scratch/assistant-runtime-Ab12Cd',
    ]) {
      expect(registrationProblem(path, paths), path).toMatch(/runtime folder of this service or another instance/);
    }
    // Test fixtures and ordinary folders are not runtime folders.
    expect(registrationProblem('/var/tmp/assistant-test-Ab12Cd', paths)).toBeNull();
  });

  it('refuses a folder that holds a runtime root, and one whose link leads into one (judged by real path)', () => {
    const holder = join(base, 'holder');
    mkdirSync(join(holder, 'assistant-runtime-planted', 'shell-one'), { recursive: true });
    const paths = { ...servicePaths(config), temporary: [...(servicePaths(config).temporary ?? []), holder] };
    expect(registrationProblem(holder, paths)).toMatch(/holds .*assistant-runtime-planted, a runtime folder/);
    symlinkSync(join(holder, 'assistant-runtime-planted', 'shell-one'), join(base, 'link'));
    expect(registrationProblem(realpathSync(join(base, 'link')), paths)).toMatch(/runtime folder/);
  });
});
