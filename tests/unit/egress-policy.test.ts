import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import {
  createEgressPolicy, decideDestination, parseEgressAllowList, type EgressPolicyOptions, type ResolvedAddress,
} from '../../src/core/sandbox/egress-policy.js';

// The egress policy's table (CONTRACT §11, "No path back to the host"): each case names an
// address or entry that a missing rule would let through, or a legitimate one a too-broad rule
// would stop.

/** A resolver standing in for DNS at the network edge; unknown names do not resolve. */
function fakeDns(records: Record<string, readonly string[]>, asked: string[] = []): (host: string) => Promise<readonly ResolvedAddress[]> {
  return (host) => {
    asked.push(host);
    const addresses = records[host];
    if (addresses === undefined) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));
    return Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  };
}

function policy(options: Partial<EgressPolicyOptions> = {}) {
  return createEgressPolicy({ allow: [], protectedPorts: [], hostAddresses: () => [], hostNetworks: () => [], lookup: fakeDns({}), ...options });
}

describe('parseEgressAllowList', () => {
  it('reads names, wildcards, ports and addresses, case-insensitively and without a trailing dot', () => {
    expect(parseEgressAllowList(['GitHub.COM.', '*.npmjs.org', 'registry.test:8443', '*.example.test:443'])).toEqual([
      { kind: 'name', name: 'github.com', port: null },
      { kind: 'wildcard', suffix: 'npmjs.org', port: null },
      { kind: 'name', name: 'registry.test', port: 8443 },
      { kind: 'wildcard', suffix: 'example.test', port: 443 },
    ]);
    expect(parseEgressAllowList(['127.0.0.3:8080', '10.0.0.5', '[::1]:8080', '[FD00:0::5]', '::1', '[::ffff:127.0.0.1]:80'])).toEqual([
      { kind: 'address', address: '127.0.0.3', family: 4, port: 8080 },
      { kind: 'address', address: '10.0.0.5', family: 4, port: null },
      { kind: 'address', address: '::1', family: 6, port: 8080 },
      { kind: 'address', address: 'fd00::5', family: 6, port: null },
      { kind: 'address', address: '::1', family: 6, port: null },
      { kind: 'address', address: '127.0.0.1', family: 4, port: 80 },
    ]);
    expect(parseEgressAllowList(['  github.com  '])).toEqual([{ kind: 'name', name: 'github.com', port: null }]);
  });

  it.each([
    'github.com:0', 'github.com:65536', 'github.com:', 'github.com:http', 'exa mple.com', 'a..b', '-bad.test', '*', '*.',
    'http://github.com', '[::1', '[zz::1]:80', '[::1]:', '::1:80:', '999.1.1.1', '127.1', '10.0.0.5:99999', 'host/path', '',
  ])('rejects %j with a message that names it and says what is expected', (entry) => {
    expect(() => parseEgressAllowList(['github.com', entry])).toThrow(`"${entry.trim()}"`);
    expect(() => parseEgressAllowList([entry])).toThrow(/expected a host name/);
  });
});

describe('decideDestination: refused address ranges (empty allow list)', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1 is a loopback address'],
    ['127.255.255.254', '127.255.255.254 is a loopback address'],
    ['::1', '::1 is a loopback address'],
    ['[::1]', '::1 is a loopback address'],
    ['[0:0:0:0:0:0:0:1]', '::1 is a loopback address'],
    ['::ffff:127.0.0.1', '127.0.0.1 is a loopback address'],
    ['[::ffff:7f00:1]', '127.0.0.1 is a loopback address'],
    ['0.0.0.0', '0.0.0.0 is an unspecified address'],
    ['::', ':: is an unspecified address'],
    ['10.1.2.3', '10.1.2.3 is a private address'],
    ['172.16.0.1', '172.16.0.1 is a private address'],
    ['172.31.255.255', '172.31.255.255 is a private address'],
    ['192.168.1.1', '192.168.1.1 is a private address'],
    ['100.64.0.1', '100.64.0.1 is a private address'],
    ['100.127.255.255', '100.127.255.255 is a private address'],
    ['::ffff:10.0.0.1', '10.0.0.1 is a private address'],
    ['fc00::1', 'fc00::1 is a private address'],
    ['fd12:3456::1', 'fd12:3456::1 is a private address'],
    ['169.254.169.254', '169.254.169.254 is a link-local address'],
    ['fe80::1', 'fe80::1 is a link-local address'],
    ['224.0.0.1', '224.0.0.1 is a multicast, reserved or broadcast address'],
    ['239.255.255.250', '239.255.255.250 is a multicast, reserved or broadcast address'],
    ['240.0.0.1', '240.0.0.1 is a multicast, reserved or broadcast address'],
    ['255.255.255.255', '255.255.255.255 is a multicast, reserved or broadcast address'],
    ['ff02::1', 'ff02::1 is a multicast, reserved or broadcast address'],
    ['::7f00:1', '::7f00:1 is a multicast, reserved or broadcast address'],
    ['64:ff9b::a9fe:a9fe', '64:ff9b::a9fe:a9fe leads through NAT64 to 169.254.169.254 is a link-local address'],
  ])('%s is refused: %s', async (host, reason) => {
    expect(await decideDestination(policy(), host, 80)).toEqual({ allowed: false, reason });
  });

  it.each([
    ['172.32.0.1', 4], ['172.15.255.255', 4], ['100.63.255.255', 4], ['100.128.0.1', 4], ['169.253.255.255', 4],
    ['223.255.255.255', 4], ['11.0.0.1', 4], ['8.8.8.8', 4], ['::ffff:8.8.8.8', 4], ['[2606:4700::1111]', 6], ['64:ff9b::808:808', 6],
  ] as const)('%s, just outside every range, is allowed', async (host, family) => {
    const decision = await decideDestination(policy(), host, 443);
    expect(decision).toMatchObject({ allowed: true, family });
  });

  it('hands back the address to connect to, IPv4-mapped addresses as IPv4', async () => {
    expect(await decideDestination(policy(), '::ffff:8.8.8.8', 443)).toEqual({ allowed: true, address: '8.8.8.8', family: 4 });
    expect(await decideDestination(policy(), '[2606:4700:0::1111]', 443)).toEqual({ allowed: true, address: '2606:4700::1111', family: 6 });
  });

  it('refuses ports outside 1–65535 and text that is no host name', async () => {
    for (const port of [0, 65536, 1.5, -1]) {
      expect(await decideDestination(policy(), '8.8.8.8', port)).toEqual({ allowed: false, reason: `port ${port} is not between 1 and 65535` });
    }
    for (const host of ['', 'exa mple.test', '2130706433', 'a..b']) {
      expect(await decideDestination(policy(), host, 80)).toEqual({ allowed: false, reason: 'not a valid host name' });
    }
  });
});

describe("decideDestination: this host's own addresses", () => {
  it('refuses an address of the host even when it is public', async () => {
    const own = policy({ hostAddresses: () => ['8.8.4.7', 'fe80::1', '2606:4700::7'] });
    expect(await decideDestination(own, '8.8.4.7', 443)).toEqual({ allowed: false, reason: "8.8.4.7 is one of this host's addresses" });
    expect(await decideDestination(own, '[2606:4700:0::7]', 443)).toEqual({ allowed: false, reason: "2606:4700::7 is one of this host's addresses" });
    expect(await decideDestination(own, '8.8.4.8', 443)).toMatchObject({ allowed: true });
  });

  it("refuses the host's neighbours: any address on a network the host is attached to", async () => {
    const attached = policy({ hostNetworks: () => ['8.8.4.0/24', '2606:4700::/64'] });
    expect(await decideDestination(attached, '8.8.4.1', 80)).toEqual({ allowed: false, reason: "8.8.4.1 is on one of this host's own networks" });
    expect(await decideDestination(attached, '[2606:4700::99]', 80)).toEqual({ allowed: false, reason: "2606:4700::99 is on one of this host's own networks" });
    expect(await decideDestination(attached, '8.8.5.1', 80)).toMatchObject({ allowed: true });
    // An explicit address entry still lets one through.
    const named = policy({ allow: ['8.8.4.1:80'], hostNetworks: () => ['8.8.4.0/24'] });
    expect(await decideDestination(named, '8.8.4.1', 80)).toMatchObject({ allowed: true });
  });

  it('refuses the special-use ranges: documentation, benchmarking and IETF protocol assignments', async () => {
    for (const address of ['192.0.0.8', '192.0.2.1', '198.18.0.1', '198.19.255.254', '198.51.100.7', '203.0.113.9', '[2001:db8::1]']) {
      expect(await decideDestination(policy(), address, 80), address).toMatchObject({ allowed: false, reason: expect.stringMatching(/special-use/) });
    }
    expect(await decideDestination(policy(), '198.20.0.1', 80)).toMatchObject({ allowed: true });
  });

  it('reads the real interfaces by default: every address of this machine is refused', async () => {
    const addresses = Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).map((entry) => entry.address));
    expect(addresses.length).toBeGreaterThan(0);
    const real = createEgressPolicy({ allow: [], protectedPorts: [] });
    for (const address of addresses) {
      expect(await decideDestination(real, address, 443), address).toMatchObject({ allowed: false });
    }
  });
});

describe('decideDestination: the allow list', () => {
  const records = {
    'api.example.test': ['93.184.216.34'],
    'deep.api.example.test': ['93.184.216.35'],
    'example.test': ['93.184.216.36'],
    'evilexample.test': ['93.184.216.37'],
    'github.com': ['140.82.112.3'],
    'registry.test': ['93.184.216.38'],
  };

  it('a wildcard allows every subdomain, not the apex nor a name that merely ends alike', async () => {
    const wildcard = policy({ allow: ['*.example.test'], lookup: fakeDns(records) });
    expect(await decideDestination(wildcard, 'api.example.test', 443)).toEqual({ allowed: true, address: '93.184.216.34', family: 4 });
    expect(await decideDestination(wildcard, 'deep.api.example.test', 8080)).toMatchObject({ allowed: true });
    expect(await decideDestination(wildcard, 'example.test', 443)).toEqual({ allowed: false, reason: 'not in SANDBOX_NETWORK_ALLOW' });
    expect(await decideDestination(wildcard, 'evilexample.test', 443)).toEqual({ allowed: false, reason: 'not in SANDBOX_NETWORK_ALLOW' });
  });

  it('matches names case-insensitively and without a trailing dot', async () => {
    const named = policy({ allow: ['GitHub.com'], lookup: fakeDns(records) });
    expect(await decideDestination(named, 'GITHUB.COM.', 443)).toMatchObject({ allowed: true, address: '140.82.112.3' });
  });

  it('a host:port entry allows that port only', async () => {
    const ported = policy({ allow: ['registry.test:8443'], lookup: fakeDns(records) });
    expect(await decideDestination(ported, 'registry.test', 8443)).toMatchObject({ allowed: true });
    expect(await decideDestination(ported, 'registry.test', 443)).toEqual({ allowed: false, reason: 'not in SANDBOX_NETWORK_ALLOW' });
  });

  it('refuses a public name or address not on the list, before asking DNS about the name', async () => {
    const asked: string[] = [];
    const listed = policy({ allow: ['github.com'], lookup: fakeDns(records, asked) });
    expect(await decideDestination(listed, 'api.example.test', 443)).toEqual({ allowed: false, reason: 'not in SANDBOX_NETWORK_ALLOW' });
    expect(await decideDestination(listed, '8.8.8.8', 443)).toEqual({ allowed: false, reason: 'not in SANDBOX_NETWORK_ALLOW' });
    expect(asked).toEqual([]);
    expect(await decideDestination(listed, 'github.com', 443)).toMatchObject({ allowed: true });
    expect(asked).toEqual(['github.com']);
  });

  it('a name entry never makes a loopback address acceptable (localhost, real resolver)', async () => {
    const rebinding = createEgressPolicy({ allow: ['localhost'], protectedPorts: [] });
    const decision = await decideDestination(rebinding, 'localhost', 8080);
    expect(decision).toMatchObject({ allowed: false });
    expect(decision.allowed ? '' : decision.reason).toMatch(/^(127\.0\.0\.1|::1) is a loopback address$/);
  });

  it('a name entry never makes a private or metadata address acceptable (rebinding)', async () => {
    const rebound = policy({ allow: ['*.example.test'], lookup: fakeDns({ 'meta.example.test': ['169.254.169.254'], 'lan.example.test': ['::ffff:192.168.0.1'] }) });
    expect(await decideDestination(rebound, 'meta.example.test', 80)).toEqual({ allowed: false, reason: '169.254.169.254 is a link-local address' });
    expect(await decideDestination(rebound, 'lan.example.test', 80)).toEqual({ allowed: false, reason: '192.168.0.1 is a private address' });
  });

  it('an ip:port entry allows that loopback address on that port only', async () => {
    const exact = policy({ allow: ['127.0.0.3:8080'] });
    expect(await decideDestination(exact, '127.0.0.3', 8080)).toEqual({ allowed: true, address: '127.0.0.3', family: 4 });
    expect(await decideDestination(exact, '::ffff:127.0.0.3', 8080)).toEqual({ allowed: true, address: '127.0.0.3', family: 4 });
    expect(await decideDestination(exact, '127.0.0.3', 8081)).toEqual({ allowed: false, reason: '127.0.0.3 is a loopback address' });
    expect(await decideDestination(exact, '127.0.0.4', 8080)).toEqual({ allowed: false, reason: '127.0.0.4 is a loopback address' });
  });

  it('a bare address entry allows that address on any port; an IPv6 one in brackets', async () => {
    const bare = policy({ allow: ['10.0.0.5', '[::1]:8080'] });
    expect(await decideDestination(bare, '10.0.0.5', 22)).toMatchObject({ allowed: true, address: '10.0.0.5' });
    expect(await decideDestination(bare, '10.0.0.6', 22)).toEqual({ allowed: false, reason: '10.0.0.6 is a private address' });
    expect(await decideDestination(bare, '[::1]', 8080)).toEqual({ allowed: true, address: '::1', family: 6 });
    expect(await decideDestination(bare, '[::1]', 8081)).toEqual({ allowed: false, reason: '::1 is a loopback address' });
  });

  it('an address entry covers the address a listed name resolves to (nothing the literal could not reach)', async () => {
    const internal = policy({ allow: ['registry.internal', '10.0.0.5:443'], lookup: fakeDns({ 'registry.internal': ['10.0.0.5'] }) });
    expect(await decideDestination(internal, 'registry.internal', 443)).toEqual({ allowed: true, address: '10.0.0.5', family: 4 });
    expect(await decideDestination(internal, 'registry.internal', 80)).toEqual({ allowed: false, reason: '10.0.0.5 is a private address' });
  });
});

describe('decideDestination: protected ports', () => {
  it("refuses the service's own port on loopback and on the host's addresses, even when an entry allows it", async () => {
    const guarded = policy({
      allow: ['127.0.0.3', '203.0.113.7', '0.0.0.0', '[::1]:3000', '8.8.8.8'],
      protectedPorts: [3000],
      hostAddresses: () => ['203.0.113.7'],
    });
    for (const host of ['127.0.0.3', '203.0.113.7', '0.0.0.0', '[::1]']) {
      const decision = await decideDestination(guarded, host, 3000);
      expect(decision, host).toMatchObject({ allowed: false });
      expect(decision.allowed ? '' : decision.reason).toMatch(/^port 3000 on .* is the service's own port$/);
    }
    expect(await decideDestination(guarded, '127.0.0.3', 3001)).toMatchObject({ allowed: true });
    expect(await decideDestination(guarded, '203.0.113.7', 3001)).toMatchObject({ allowed: true });
    // Elsewhere the same number is just a port.
    expect(await decideDestination(guarded, '8.8.8.8', 3000)).toMatchObject({ allowed: true });
  });
});

describe('decideDestination: names with several addresses', () => {
  const records = {
    'mixed.test': ['10.0.0.1', '93.184.216.34'],
    'v6-mixed.test': ['::1', '2606:4700::1111'],
    'all-refused.test': ['10.0.0.1', '127.0.0.1'],
  };

  it('connects to the first acceptable address', async () => {
    const several = policy({ lookup: fakeDns(records) });
    expect(await decideDestination(several, 'mixed.test', 443)).toEqual({ allowed: true, address: '93.184.216.34', family: 4 });
    expect(await decideDestination(several, 'v6-mixed.test', 443)).toEqual({ allowed: true, address: '2606:4700::1111', family: 6 });
  });

  it('refuses, with the first reason, when none is acceptable', async () => {
    const several = policy({ lookup: fakeDns(records) });
    expect(await decideDestination(several, 'all-refused.test', 443)).toEqual({ allowed: false, reason: '10.0.0.1 is a private address' });
  });

  it('refuses a name that does not resolve, or not in time', async () => {
    expect(await decideDestination(policy(), 'nowhere.test', 443)).toEqual({ allowed: false, reason: 'name does not resolve' });
    const stuck = policy({ lookup: () => new Promise<never>(() => undefined), lookupTimeoutMs: 50 });
    expect(await decideDestination(stuck, 'slow.test', 443)).toEqual({ allowed: false, reason: 'name did not resolve in time' });
  });
});
