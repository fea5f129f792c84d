import { promises as dns } from 'node:dns';
import { readFileSync } from 'node:fs';
import { isIPv4, isIPv6 } from 'node:net';

// The egress proxy's resolver (CONTRACT §11, "Limits": the service keeps answering whatever a
// terminal does). `dns.lookup` runs getaddrinfo on libuv's four-thread pool and cannot be
// cancelled, so names whose server never answers, asked for by a command, would hold the pool
// that the whole service shares (its files, its own DNS, its crypto). This resolver asks DNS
// through c-ares instead, which runs on the event loop, and every query can be cancelled.
// c-ares does not read /etc/hosts, so that file is read here, before DNS, as getaddrinfo would.

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a name; rejects when it does not resolve, with code ETIMEOUT when DNS did not answer. */
export type NameLookup = (host: string, signal?: AbortSignal) => Promise<readonly ResolvedAddress[]>;

export interface NameResolverOptions {
  /** The time a lookup is given; each try waits a quarter of it. The caller cancels at its end. */
  budgetMs: number;
  /** Name servers (`address` or `address:port`); the system's (/etc/resolv.conf) by default. */
  servers?: readonly string[];
  /** The text of the hosts file; /etc/hosts, read again at most every few seconds, by default. */
  hosts?: () => string;
}

/** Once one address family has answered, how long the other may still take (RFC 8305 §3 waits too). */
const SECOND_FAMILY_GRACE_MS = 250;
const HOSTS_PATH = '/etc/hosts';
const HOSTS_TTL_MS = 5000;

/** Lower case, no trailing dot: the spelling names are compared in. */
function normalise(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

function literalFamily(address: string): 4 | 6 | null {
  if (isIPv4(address)) return 4;
  // A zone (`fe80::1%eth0`) is kept as written; the policy refuses what it cannot compare.
  return isIPv6(address.replace(/%.*$/, '')) ? 6 : null;
}

/**
 * The names of a hosts file and their addresses, each name's addresses in file order across all
 * its lines (as glibc's files backend answers getaddrinfo). Lines whose first field is no IP
 * address are skipped, as the C library skips them.
 */
export function parseHosts(text: string): Map<string, ResolvedAddress[]> {
  const names = new Map<string, ResolvedAddress[]>();
  for (const line of text.split('\n')) {
    const [address, ...aliases] = line.replace(/#.*$/, '').trim().split(/\s+/);
    if (address === undefined || address === '') continue;
    const family = literalFamily(address);
    if (family === null) continue;
    for (const alias of aliases) {
      const name = normalise(alias);
      const known = names.get(name) ?? [];
      if (!known.some((entry) => entry.address === address)) known.push({ address, family });
      names.set(name, known);
    }
  }
  return names;
}

let systemHosts: { at: number; names: Map<string, ResolvedAddress[]> } | null = null;

/**
 * /etc/hosts, parsed, re-read at most every few seconds. Read synchronously: a small local file,
 * and an asynchronous read would queue on the very thread pool this resolver keeps away from.
 */
function systemHostNames(): Map<string, ResolvedAddress[]> {
  if (systemHosts !== null && Date.now() - systemHosts.at < HOSTS_TTL_MS) return systemHosts.names;
  let text = '';
  try {
    text = readFileSync(HOSTS_PATH, 'utf8');
  } catch {
    // No hosts file: every name goes to DNS, as with the C library.
  }
  systemHosts = { at: Date.now(), names: parseHosts(text) };
  return systemHosts.names;
}

/**
 * `localhost` and its subdomains are loopback whether or not the hosts file says so (RFC 6761
 * §6.3), and never go to DNS, whose answer for them could be anything.
 */
function isLocalhost(name: string): boolean {
  return name === 'localhost' || name.endsWith('.localhost');
}

const LOOPBACK: readonly ResolvedAddress[] = [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }];

function errorCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

function notResolved(host: string, code: string): Error {
  return Object.assign(new Error(`${code === 'ETIMEOUT' ? 'no answer in time for' : 'no address for'} ${host}`), { code });
}

/**
 * Asks DNS for both families on a resolver of its own, so cancelling it ends this lookup alone.
 * IPv4 addresses come first: the proxy connects to the first acceptable one, and a host without
 * an IPv6 route still reaches a name that has both.
 */
async function queryDns(host: string, options: NameResolverOptions, signal: AbortSignal | undefined): Promise<readonly ResolvedAddress[]> {
  const resolver = new dns.Resolver({ timeout: Math.max(1, Math.floor(options.budgetMs / 4)), tries: 2 });
  if (options.servers !== undefined) resolver.setServers(options.servers);
  const cancel = (): void => { resolver.cancel(); };
  if (signal?.aborted === true) throw notResolved(host, 'ECANCELLED');
  signal?.addEventListener('abort', cancel, { once: true });
  let grace: NodeJS.Timeout | undefined;
  const answered = (addresses: string[]): string[] => {
    // The first family with addresses starts the other's grace; a silent AAAA (or A) server
    // must not cost the answer already in.
    grace ??= setTimeout(cancel, SECOND_FAMILY_GRACE_MS);
    return addresses;
  };
  try {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(host).then(answered), resolver.resolve6(host).then(answered)]);
    const addresses = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (addresses.length > 0) return addresses;
    const codes = [v4, v6].map((result) => (result.status === 'rejected' ? errorCode(result.reason) : undefined));
    throw notResolved(host, codes.includes('ETIMEOUT') ? 'ETIMEOUT' : codes.find((code) => code !== undefined) ?? 'ENOTFOUND');
  } finally {
    clearTimeout(grace);
    signal?.removeEventListener('abort', cancel);
    resolver.cancel();
  }
}

/**
 * A lookup in the order the system's resolver takes (the hosts file, then DNS), that never
 * touches the thread pool and stops when `signal` aborts. An IP address is its own answer.
 */
export function createNameResolver(options: NameResolverOptions): NameLookup {
  // Servers the resolver cannot use fail here, at start, rather than as every lookup's refusal.
  if (options.servers !== undefined) new dns.Resolver().setServers(options.servers);
  const hostNames = options.hosts === undefined ? systemHostNames : (): Map<string, ResolvedAddress[]> => parseHosts(options.hosts?.() ?? '');
  return async (host, signal) => {
    const family = literalFamily(host);
    if (family !== null) return [{ address: host, family }];
    const name = normalise(host);
    const listed = hostNames().get(name);
    if (listed !== undefined) return listed;
    if (isLocalhost(name)) return LOOPBACK;
    return queryDns(name, options, signal);
  };
}
