import { createSocket } from 'node:dgram';
import type { Socket as UdpSocket } from 'node:dgram';
import { promises as dns } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEgressPolicy, decideDestination, type EgressPolicy } from '../../src/core/sandbox/egress-policy.js';
import { createNameResolver, parseHosts } from '../../src/core/sandbox/name-resolver.js';

// The egress proxy's resolver asks DNS through c-ares, which never reads /etc/hosts; the resolver
// reads it itself, so a name the hosts file maps is answered (and judged by the policy) as the
// system's resolver answered it before (CONTRACT §11, "No path back to the host").

const HOSTS = [
  '# a comment line',
  '127.0.0.1\tlocalhost loopback.test   # trailing comment',
  '::1 localhost ip6-localhost',
  '10.1.2.3 DB.Internal.Test. db',
  '169.254.169.254 metadata.internal.test',
  '93.184.216.34 public.internal.test',
  '2606:4700::1111 public.internal.test',
  '93.184.216.34 public.internal.test',
  'not-an-address ignored.test',
  '   ',
  '#127.0.0.9 commented.test',
].join('\n');

/** A UDP "name server" that counts the queries it gets and never answers one. */
let silent: UdpSocket;
let queries = 0;
let server = '';

beforeAll(async () => {
  silent = createSocket('udp4');
  silent.on('message', () => { queries += 1; });
  await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
  server = `127.0.0.1:${silent.address().port}`;
});

afterAll(() => {
  silent.close();
});

describe('parseHosts', () => {
  it('reads addresses and their names, case-insensitively, each name across all its lines, skipping comments and junk', () => {
    const names = parseHosts(HOSTS);
    expect(names.get('localhost')).toEqual([{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }]);
    expect(names.get('loopback.test')).toEqual([{ address: '127.0.0.1', family: 4 }]);
    expect(names.get('db.internal.test')).toEqual([{ address: '10.1.2.3', family: 4 }]);
    expect(names.get('db')).toEqual([{ address: '10.1.2.3', family: 4 }]);
    expect(names.get('public.internal.test')).toEqual([{ address: '93.184.216.34', family: 4 }, { address: '2606:4700::1111', family: 6 }]);
    for (const name of ['ignored.test', 'commented.test', 'not-an-address', '#127.0.0.9']) expect(names.has(name), name).toBe(false);
  });
});

describe('createNameResolver', () => {
  it('answers names from the hosts file without asking DNS', async () => {
    const before = queries;
    const resolver = createNameResolver({ budgetMs: 1000, servers: [server], hosts: () => HOSTS });
    expect(await resolver('DB.internal.test.')).toEqual([{ address: '10.1.2.3', family: 4 }]);
    expect(await resolver('localhost')).toEqual([{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }]);
    expect(queries).toBe(before);
  });

  it('answers localhost and its subdomains with loopback when the hosts file lacks them, without asking DNS', async () => {
    const before = queries;
    const bare = createNameResolver({ budgetMs: 1000, servers: [server], hosts: () => '' });
    const loopback = [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }];
    expect(await bare('localhost')).toEqual(loopback);
    expect(await bare('app.LOCALHOST')).toEqual(loopback);
    expect(queries).toBe(before);
  });

  it('hands an IP address back as itself', async () => {
    const resolve = createNameResolver({ budgetMs: 1000, servers: [server], hosts: () => HOSTS });
    expect(await resolve('93.184.216.34')).toEqual([{ address: '93.184.216.34', family: 4 }]);
    expect(await resolve('2606:4700::1111')).toEqual([{ address: '2606:4700::1111', family: 6 }]);
  });

  it('answers localhost from the real hosts file as getaddrinfo does', async () => {
    const system = createNameResolver({ budgetMs: 1000 });
    const before = (await dns.lookup('localhost', { all: true, verbatim: true })).map((entry) => entry.address).sort();
    expect((await system('localhost')).map((entry) => entry.address).sort()).toEqual(before);
  });

  it('refuses name servers it cannot use when it is made, not at each lookup', () => {
    expect(() => createNameResolver({ budgetMs: 1000, servers: ['not a server'] })).toThrow();
  });

  it('asks DNS for other names, and stops asking the moment its signal aborts', async () => {
    const resolver = createNameResolver({ budgetMs: 400, servers: [server], hosts: () => HOSTS });
    const before = queries;
    const started = Date.now();
    const lookup = resolver('elsewhere.test', AbortSignal.timeout(150));
    await expect(lookup).rejects.toMatchObject({ code: 'ECANCELLED' });
    expect(Date.now() - started).toBeLessThan(400);
    // Both families were asked for; after the cancel, no try follows (each try waits 100 ms).
    expect(queries - before).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(queries - before).toBe(2);
  });
});

describe('the policy judges hosts-file names as it judged them through getaddrinfo', () => {
  let policy: EgressPolicy;

  beforeAll(() => {
    // The silent server stands behind it: a name that reached DNS would not resolve at all.
    policy = createEgressPolicy({
      allow: [],
      protectedPorts: [3000],
      hostAddresses: () => [],
      hostNetworks: () => [],
      lookup: createNameResolver({ budgetMs: 1000, servers: [server], hosts: () => HOSTS }),
    });
  });

  it.each([
    ['localhost', '127.0.0.1 is a loopback address'],
    ['loopback.test', '127.0.0.1 is a loopback address'],
    ['db.internal.test', '10.1.2.3 is a private address'],
    ['metadata.internal.test', '169.254.169.254 is a link-local address'],
  ])('%s is refused: %s', async (host, reason) => {
    expect(await decideDestination(policy, host, 80)).toEqual({ allowed: false, reason });
  });

  it("localhost on the service's port is refused as the service's own port", async () => {
    expect(await decideDestination(policy, 'localhost', 3000)).toEqual({ allowed: false, reason: "port 3000 on 127.0.0.1 is the service's own port" });
  });

  it('a public address the hosts file gives is the one connected to', async () => {
    expect(await decideDestination(policy, 'public.internal.test', 443)).toEqual({ allowed: true, address: '93.184.216.34', family: 4 });
  });

  it('literal addresses are judged as before, never looked up', async () => {
    const before = queries;
    expect(await decideDestination(policy, '127.0.0.1', 80)).toEqual({ allowed: false, reason: '127.0.0.1 is a loopback address' });
    expect(await decideDestination(policy, '[::ffff:8.8.8.8]', 443)).toEqual({ allowed: true, address: '8.8.8.8', family: 4 });
    expect(queries).toBe(before);
  });
});
