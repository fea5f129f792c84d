import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { networkInterfaces } from 'node:os';
import { createNameResolver } from './name-resolver.js';
import type { NameLookup, ResolvedAddress } from './name-resolver.js';

export type { ResolvedAddress } from './name-resolver.js';

// Which destinations the sandbox's egress proxy may connect to (CONTRACT §11, "No path back to
// the host"). Commands have their own network namespace; this policy is what keeps the proxy
// from becoming their way back to the host's ports, its private network or the cloud metadata
// service. Every decision is made on the address the proxy will actually connect to.

/** One entry of SANDBOX_NETWORK_ALLOW; `port: null` means any port. */
export type EgressRule =
  | { kind: 'name'; name: string; port: number | null }
  /** `*.npmjs.org`: `suffix` is `npmjs.org`; its subdomains match, the apex does not. */
  | { kind: 'wildcard'; suffix: string; port: number | null }
  | { kind: 'address'; address: string; family: 4 | 6; port: number | null };

/**
 * Name lookups in flight, refused past a cap (CONTRACT §11, "Limits"): each one holds a DNS query
 * for up to the lookup budget, and a command can ask for names no server answers as fast as it
 * likes. One count per terminal (its proxy's) and one for the service (its policy's).
 */
export class LookupSlots {
  #inFlight = 0;

  constructor(readonly max: number) {}

  get inFlight(): number {
    return this.#inFlight;
  }

  take(): boolean {
    if (this.#inFlight >= this.max) return false;
    this.#inFlight += 1;
    return true;
  }

  release(): void {
    this.#inFlight = Math.max(0, this.#inFlight - 1);
  }
}

export interface EgressPolicyOptions {
  /** The entries of SANDBOX_NETWORK_ALLOW; empty allows every public destination. */
  allow: readonly string[];
  /** The service's own listen ports: never reachable on loopback or the host's addresses. */
  protectedPorts: readonly number[];
  /**
   * Names the service is reached by from outside (ALLOWED_HOSTS, OIDC_BASE_URL's host): behind a
   * reverse proxy on this host they lead back to the API, so they and the addresses they
   * resolve to are refused whatever the allow list says.
   */
  serviceNames?: readonly string[];
  /**
   * The resolver; the hosts file then DNS through c-ares (name-resolver.ts) unless a test stands
   * in for it. It is given an AbortSignal that aborts when the lookup's budget is over, and
   * should stop then: its slot is counted free from that moment.
   */
  lookup?: NameLookup;
  /** The name servers the default resolver asks (`address[:port]`); the system's by default. */
  dnsServers?: readonly string[];
  /** Name lookups in flight across the whole service (every terminal's proxy together). */
  maxLookups?: number;
  /** This machine's addresses; read from `os.networkInterfaces()` at each decision by default. */
  hostAddresses?: () => Iterable<string>;
  /** The networks this machine sits on (CIDR); read from `os.networkInterfaces()` by default. */
  hostNetworks?: () => Iterable<string>;
  lookupTimeoutMs?: number;
}

export interface EgressPolicy {
  readonly rules: readonly EgressRule[];
  readonly serviceNames: ReadonlySet<string>;
  readonly protectedPorts: ReadonlySet<number>;
  readonly lookup: NameLookup;
  /** The service-wide count of lookups in flight. */
  readonly lookups: LookupSlots;
  readonly hostAddresses: () => Iterable<string>;
  readonly hostNetworks: () => Iterable<string>;
  readonly lookupTimeoutMs: number;
}

export type EgressDecision = { allowed: true; address: string; family: 4 | 6 } | { allowed: false; reason: string };

const DEFAULT_LOOKUP_TIMEOUT_MS = 5000;
/** Service-wide: with 8 per terminal, eight terminals at their cap before the rest are refused. */
const DEFAULT_MAX_LOOKUPS = 64;

const HOST_LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;
const PORT = /^[0-9]{1,5}$/;

/** A DNS name as a client or an entry may write it: lower case, no trailing dot. */
function normaliseName(text: string): string {
  return text.toLowerCase().replace(/\.$/, '');
}

/**
 * Whether `name` is a host name. An all-digit last label is refused: `127.1` or `2130706433` are
 * IPv4 addresses to the system resolver, and must never pass as a name that the private-address
 * rules do not see.
 */
function isHostName(name: string): boolean {
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.split('.');
  if (!labels.every((label) => HOST_LABEL.test(label))) return false;
  return !/^[0-9]+$/.test(labels[labels.length - 1] ?? '');
}

function parsePort(text: string): number | null {
  if (!PORT.test(text)) return null;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : null;
}

/**
 * The one spelling of an IP address used for every comparison, or null when `text` is not one.
 * IPv4 must be a plain dotted quad (no octal or shortened forms); IPv6 is canonicalised by the
 * WHATWG URL parser, which also refuses zone identifiers (`fe80::1%eth0`). An IPv4-mapped IPv6
 * address is the IPv4 address: connecting to `::ffff:127.0.0.1` reaches 127.0.0.1.
 */
export function canonicalAddress(text: string): { address: string; family: 4 | 6 } | null {
  const bare = text.replace(/^\[(.*)\]$/, '$1');
  if (isIPv4(bare)) return { address: bare, family: 4 };
  if (!isIPv6(bare) || bare.includes('%')) return null;
  let canonical: string;
  try {
    canonical = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (mapped) {
    const high = parseInt(mapped[1] ?? '0', 16);
    const low = parseInt(mapped[2] ?? '0', 16);
    return { address: [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.'), family: 4 };
  }
  return { address: canonical, family: 6 };
}

function malformed(entry: string, why: string): Error {
  return new Error(
    `SANDBOX_NETWORK_ALLOW entry "${entry}" ${why}; expected a host name (github.com), a wildcard (*.npmjs.org), ` +
      'either with an optional :port, an IPv4 address with an optional :port (10.0.0.5:8080) ' +
      'or an IPv6 address, in brackets when it has a port ([fd00::5]:8080)',
  );
}

function parseEntry(raw: string): EgressRule {
  const entry = raw.trim();
  if (entry === '') throw malformed(raw, 'is empty');

  const bracketed = /^\[([^\]]*)\](?::([^:]*))?$/.exec(entry);
  if (bracketed) {
    const address = canonicalAddress(bracketed[1] ?? '');
    if (address === null) throw malformed(entry, 'does not hold a valid IPv6 address in its brackets');
    const portText = bracketed[2];
    const port = portText === undefined ? null : parsePort(portText);
    if (portText !== undefined && port === null) throw malformed(entry, 'has a port outside 1–65535');
    return { kind: 'address', ...address, port };
  }

  // An unbracketed IPv6 address can hold no port (`::1:8080` is itself an address).
  const bareAddress = canonicalAddress(entry);
  if (bareAddress !== null) return { kind: 'address', ...bareAddress, port: null };
  if ((entry.match(/:/g) ?? []).length > 1) throw malformed(entry, 'is not a valid IPv6 address (with a port it needs brackets)');

  const colon = entry.indexOf(':');
  const hostText = colon === -1 ? entry : entry.slice(0, colon);
  const port = colon === -1 ? null : parsePort(entry.slice(colon + 1));
  if (colon !== -1 && port === null) throw malformed(entry, 'has a port outside 1–65535');

  if (isIPv4(hostText)) return { kind: 'address', address: hostText, family: 4, port };
  const name = normaliseName(hostText);
  if (name.startsWith('*.')) {
    const suffix = name.slice(2);
    if (!isHostName(suffix)) throw malformed(entry, 'is not a valid wildcard');
    return { kind: 'wildcard', suffix, port };
  }
  if (!isHostName(name)) throw malformed(entry, 'is not a valid host name or IPv4 address');
  return { kind: 'name', name, port };
}

/** Parses SANDBOX_NETWORK_ALLOW; throws an Error naming the first malformed entry. */
export function parseEgressAllowList(entries: readonly string[]): EgressRule[] {
  return entries.map(parseEntry);
}

function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).map((entry) => entry.address));
}

function interfaceNetworks(): string[] {
  return Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).flatMap((entry) => (entry.cidr === null ? [] : [entry.cidr])));
}

export function createEgressPolicy(options: EgressPolicyOptions): EgressPolicy {
  const lookupTimeoutMs = options.lookupTimeoutMs ?? DEFAULT_LOOKUP_TIMEOUT_MS;
  return {
    rules: parseEgressAllowList(options.allow),
    serviceNames: new Set((options.serviceNames ?? []).map(normaliseName).filter((name) => name !== '')),
    protectedPorts: new Set(options.protectedPorts),
    lookup: options.lookup ?? createNameResolver({ budgetMs: lookupTimeoutMs, ...(options.dnsServers ? { servers: options.dnsServers } : {}) }),
    lookups: new LookupSlots(options.maxLookups ?? DEFAULT_MAX_LOOKUPS),
    hostAddresses: options.hostAddresses ?? interfaceAddresses,
    hostNetworks: options.hostNetworks ?? interfaceNetworks,
    lookupTimeoutMs,
  };
}

function blockList(ipv4: readonly (readonly [string, number])[], ipv6: readonly (readonly [string, number])[]): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of ipv4) list.addSubnet(network, prefix, 'ipv4');
  for (const [network, prefix] of ipv6) list.addSubnet(network, prefix, 'ipv6');
  return list;
}

/** Addresses that reach this machine itself: where the service's own port must stay out of reach. */
const LOOPBACK = blockList([['127.0.0.0', 8]], [['::1', 128]]);
// Linux connects 0.0.0.0 and :: to the local host, so they count as loopback for protected ports.
const UNSPECIFIED = blockList([['0.0.0.0', 8]], [['::', 128]]);

/** Ranges refused unless an address entry names the address, each with the word for its refusal. */
const REFUSED_RANGES: readonly { kind: string; list: BlockList }[] = [
  { kind: 'a loopback', list: LOOPBACK },
  { kind: 'an unspecified', list: UNSPECIFIED },
  {
    kind: 'a private',
    list: blockList(
      [['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['100.64.0.0', 10]],
      // fec0::/10 is the deprecated site-local range, still private wherever it is in use.
      [['fc00::', 7], ['fec0::', 10]],
    ),
  },
  // 169.254.169.254 is the cloud metadata service, which hands out the instance's credentials.
  { kind: 'a link-local', list: blockList([['169.254.0.0', 16]], [['fe80::', 10]]) },
  // Documentation, benchmarking and IETF ranges: not public, and where they are used at all it is
  // inside a private network (a lab, a container host's gateway).
  {
    kind: 'a special-use',
    list: blockList(
      [['192.0.0.0', 24], ['192.0.2.0', 24], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24]],
      [['2001:db8::', 32], ['100::', 64]],
    ),
  },
  {
    kind: 'a multicast, reserved or broadcast',
    // ::/96 (IPv4-compatible addresses) is deprecated and has no public use.
    list: blockList([['224.0.0.0', 4], ['240.0.0.0', 4]], [['ff00::', 8], ['::', 96]]),
  },
];

/** NAT64 addresses reach the IPv4 address in their last 32 bits, which is what must be judged. */
const NAT64 = blockList([], [['64:ff9b::', 96]]);

function ipv4OfNat64(address: string): string {
  const tail = /:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(address);
  const high = parseInt(tail?.[1] ?? '0', 16);
  const low = parseInt(tail?.[2] ?? '0', 16);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

function familyName(family: 4 | 6): 'ipv4' | 'ipv6' {
  return family === 4 ? 'ipv4' : 'ipv6';
}

function rangeRefusal(address: string, family: 4 | 6): string | null {
  if (family === 6 && NAT64.check(address, 'ipv6')) {
    const embedded = ipv4OfNat64(address);
    const refusal = rangeRefusal(embedded, 4);
    return refusal === null ? null : `${address} leads through NAT64 to ${refusal}`;
  }
  const range = REFUSED_RANGES.find(({ list }) => list.check(address, familyName(family)));
  return range ? `${address} is ${range.kind} address` : null;
}

function isHostAddress(policy: EgressPolicy, address: string): boolean {
  for (const own of policy.hostAddresses()) {
    if (canonicalAddress(own)?.address === address) return true;
  }
  return false;
}

/**
 * Whether an address lies on a network this machine is attached to: its neighbours (the gateway,
 * other hosts of the LAN, a container bridge) are as private as the host itself, whatever range
 * their addresses come from.
 */
function onHostNetwork(policy: EgressPolicy, address: string, family: 4 | 6): boolean {
  for (const cidr of policy.hostNetworks()) {
    const [network = '', prefix = ''] = cidr.split('/');
    const canonical = canonicalAddress(network);
    if (canonical === null || canonical.family !== family) continue;
    const list = new BlockList();
    list.addSubnet(canonical.address, Number(prefix), familyName(family));
    if (list.check(address, familyName(family))) return true;
  }
  return false;
}

function portMatches(rule: EgressRule, port: number): boolean {
  return rule.port === null || rule.port === port;
}

function nameMatches(policy: EgressPolicy, name: string, port: number): boolean {
  return policy.rules.some((rule) => {
    if (!portMatches(rule, port)) return false;
    if (rule.kind === 'name') return rule.name === name;
    if (rule.kind === 'wildcard') return name.endsWith(`.${rule.suffix}`);
    return false;
  });
}

function addressNamed(policy: EgressPolicy, address: string, port: number): boolean {
  return policy.rules.some((rule) => rule.kind === 'address' && rule.address === address && portMatches(rule, port));
}

/**
 * Judges one address the proxy would connect to. Only an address entry (exactly this address,
 * and port when it has one) lifts the range and host-address refusals; it grants nothing a client
 * could not reach by writing the literal itself. A name entry never does, or a name whose DNS an
 * attacker controls could point at 127.0.0.1 or 169.254.169.254 (DNS rebinding).
 */
function judgeAddress(policy: EgressPolicy, address: string, family: 4 | 6, port: number, listed: boolean): string | null {
  const named = addressNamed(policy, address, port);
  const ownAddress = isHostAddress(policy, address);
  const local = ownAddress || LOOPBACK.check(address, familyName(family)) || UNSPECIFIED.check(address, familyName(family));
  // The service's own port stays out of reach even when an entry names the address: that is
  // the API that runs commands, and reaching it would turn one terminal into every other.
  if (local && policy.protectedPorts.has(port)) return `port ${port} on ${address} is the service's own port`;
  if (!named) {
    const refusal = rangeRefusal(address, family);
    if (refusal !== null) return refusal;
    if (ownAddress) return `${address} is one of this host's addresses`;
    if (onHostNetwork(policy, address, family)) return `${address} is on one of this host's own networks`;
  }
  if (!listed && !named) return 'not in SANDBOX_NETWORK_ALLOW';
  return null;
}

type Resolution = readonly ResolvedAddress[] | 'timeout' | 'unresolved' | 'busy';

/** Lookups in flight by name: a second request for a name being looked up waits for that lookup. */
const lookupsInFlight = new WeakMap<EgressPolicy, Map<string, Promise<Resolution>>>();

/**
 * Looks a name up within the policy's budget, taking one slot of each cap in `caps` for as long
 * as the lookup runs; 'busy' at once when one is full. Concurrent requests for one name share a
 * lookup and take no slot: a package manager opening many connections to one registry costs one.
 */
function resolveName(policy: EgressPolicy, name: string, caps: readonly LookupSlots[]): Promise<Resolution> {
  let inFlight = lookupsInFlight.get(policy);
  if (inFlight === undefined) {
    inFlight = new Map();
    lookupsInFlight.set(policy, inFlight);
  }
  const shared = inFlight.get(name);
  if (shared !== undefined) return shared;
  const taken: LookupSlots[] = [];
  for (const cap of caps) {
    if (!cap.take()) {
      for (const slot of taken) slot.release();
      return Promise.resolve('busy');
    }
    taken.push(cap);
  }
  const running = inFlight;
  const lookup = lookupWithinBudget(policy, name).finally(() => {
    for (const slot of taken) slot.release();
    running.delete(name);
  });
  running.set(name, lookup);
  return lookup;
}

function isTimeout(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEOUT';
}

async function lookupWithinBudget(policy: EgressPolicy, name: string): Promise<Resolution> {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => { resolve('timeout'); }, policy.lookupTimeoutMs);
  });
  try {
    const answer = policy.lookup(name, abort.signal).catch((error: unknown) => (isTimeout(error) ? ('timeout' as const) : ('unresolved' as const)));
    return await Promise.race([answer, timeout]);
  } finally {
    clearTimeout(timer);
    // The budget is spent (or the answer is in): a query still out is cancelled, so a name server
    // that never answers holds nothing past the budget.
    abort.abort();
  }
}

/** Addresses of the service's own names, refreshed at most once a minute. */
const serviceAddressCache = new WeakMap<EgressPolicy, { at: number; addresses: Set<string> }>();
const SERVICE_ADDRESS_TTL_MS = 60_000;

async function serviceAddresses(policy: EgressPolicy): Promise<Set<string>> {
  const cached = serviceAddressCache.get(policy);
  if (cached && Date.now() - cached.at < SERVICE_ADDRESS_TTL_MS) return cached.addresses;
  const addresses = new Set<string>();
  for (const name of policy.serviceNames) {
    const literal = canonicalAddress(name);
    if (literal !== null) {
      addresses.add(literal.address);
      continue;
    }
    // The service's own names are few and fixed, so no cap refuses them: a command filling the
    // caps must not empty this set and so open the service's addresses to itself.
    const resolved = await resolveName(policy, name, []);
    if (typeof resolved === 'string') continue;
    for (const entry of resolved) {
      const address = canonicalAddress(entry.address);
      if (address !== null) addresses.add(address.address);
    }
  }
  serviceAddressCache.set(policy, { at: Date.now(), addresses });
  return addresses;
}

/**
 * Decides where a client's `host:port` may go, and to which address. The proxy connects to the
 * returned address and never resolves the name again, so what was checked is what is reached.
 * `terminalLookups` is the asking terminal's cap on lookups in flight; the policy's own is
 * service-wide.
 */
export async function decideDestination(policy: EgressPolicy, host: string, port: number, terminalLookups?: LookupSlots): Promise<EgressDecision> {
  const decision = await decideByRules(policy, host, port, terminalLookups === undefined ? [policy.lookups] : [terminalLookups, policy.lookups]);
  if (!decision.allowed || policy.serviceNames.size === 0) return decision;
  if (policy.serviceNames.has(normaliseName(host)) || (await serviceAddresses(policy)).has(decision.address)) {
    return { allowed: false, reason: `${host} is one of this service's own addresses` };
  }
  return decision;
}

async function decideByRules(policy: EgressPolicy, host: string, port: number, caps: readonly LookupSlots[]): Promise<EgressDecision> {
  if (!Number.isInteger(port) || port < 1 || port > 65535) return { allowed: false, reason: `port ${port} is not between 1 and 65535` };
  const everythingPublic = policy.rules.length === 0;

  const literal = canonicalAddress(host);
  if (literal !== null) {
    const refusal = judgeAddress(policy, literal.address, literal.family, port, everythingPublic);
    return refusal === null ? { allowed: true, ...literal } : { allowed: false, reason: refusal };
  }

  const name = normaliseName(host);
  if (!isHostName(name)) return { allowed: false, reason: 'not a valid host name' };
  const listed = everythingPublic || nameMatches(policy, name, port);
  // A name on no list is refused before any DNS query, so a command cannot smuggle data out
  // in the names it asks the resolver about.
  if (!listed) return { allowed: false, reason: 'not in SANDBOX_NETWORK_ALLOW' };

  const resolved = await resolveName(policy, name, caps);
  if (resolved === 'busy') return { allowed: false, reason: 'too many name lookups in flight' };
  if (resolved === 'timeout') return { allowed: false, reason: 'name did not resolve in time' };
  if (resolved === 'unresolved' || resolved.length === 0) return { allowed: false, reason: 'name does not resolve' };
  let firstRefusal: string | null = null;
  for (const entry of resolved) {
    const candidate = canonicalAddress(entry.address);
    if (candidate === null) continue;
    const refusal = judgeAddress(policy, candidate.address, candidate.family, port, listed);
    if (refusal === null) return { allowed: true, ...candidate };
    firstRefusal ??= refusal;
  }
  return { allowed: false, reason: firstRefusal ?? 'name does not resolve to a usable address' };
}
