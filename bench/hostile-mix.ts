// Issue 20's hostile mix, one authenticated-but-hostile client of each kind against a running
// service, while /api/status is polled: used by bench/hostile-load.ts (the figures) and by
// tests/reliability/hostile-load.test.ts (a shorter run that checks only that every status reply
// arrives). Each client sends its next request as soon as its last one is answered.
//  - importer: the largest import allowed (MAX_IMPORT_MESSAGES messages), again and again
//  - searcher: GET /api/conversations?q=… over whatever is stored
//  - bodies:   bodies of BODY_LIMIT to the chat and save paths (a maximum-length chat message,
//              a save padded with an unknown field), and one byte over it (413)
//  - pager:    GET /api/conversations at huge offsets

export interface HostileMixOptions {
  url: string;
  seconds: number;
  /** MAX_IMPORT_MESSAGES of the service. */
  importMessages: number;
  /** BODY_LIMIT of the service, in bytes. */
  bodyLimit: number;
  /** MAX_MESSAGE_LENGTH of the service. */
  maxMessageLength: number;
  statusEveryMs?: number;
  /** The clients to run (default: all), to see which one holds the loop. */
  only?: readonly ClientName[];
}

export interface HostileMixResult {
  /** /api/status round trips in ms, sorted. */
  status: number[];
  /** /api/status replies that were not 200, or failed. */
  statusFailures: number;
  /** Durations in ms, sorted, of each client's requests; `replies` counts them by HTTP status. */
  clients: Record<ClientName, { ms: number[]; replies: Record<number, number> }>;
}

export type ClientName = 'importer' | 'searcher' | 'bodies' | 'pager';

const searches = ['zzz', 'lorem', 'Message 1999', 'IPSUM DOLOR', 'sit amet Message 7', 'hostile 42'];
const pages = ['/api/conversations?offset=10000000&limit=100', '/api/conversations?offset=9000&limit=100', '/api/conversations?offset=100000&limit=100'];

/** Words that differ, so a long message holds many distinct trigrams for a search index. */
function varied(length: number, seed: number): string {
  let text = '';
  let state = seed;
  while (text.length < length) {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    text += `${state.toString(36)} `;
  }
  return text.slice(0, length);
}

/** A JSON body of exactly `bytes` bytes: `fields`, padded with an unknown field (ignored, CONTRACT §2). */
function paddedBody(fields: Record<string, unknown>, bytes: number): string {
  const bare = JSON.stringify({ ...fields, padding: '' });
  return JSON.stringify({ ...fields, padding: 'p'.repeat(Math.max(0, bytes - bare.length)) });
}

function importBody(count: number): string {
  const messages = Array.from({ length: count }, (_, index) => ({ role: index % 2 === 0 ? 'user' : 'assistant', content: `hostile ${index} lorem` }));
  return JSON.stringify({ title: 'hostile import', conversationData: { messages } });
}

export async function runHostileMix(options: HostileMixOptions): Promise<HostileMixResult> {
  const { url } = options;
  const deadline = performance.now() + options.seconds * 1000;
  const running = () => performance.now() < deadline;
  const clients = {} as HostileMixResult['clients'];
  for (const name of ['importer', 'searcher', 'bodies', 'pager'] as const) clients[name] = { ms: [], replies: {} };

  const send = async (client: ClientName, path: string, init: RequestInit = {}): Promise<void> => {
    const started = performance.now();
    let status = 0;
    try {
      const reply = await fetch(`${url}${path}`, init);
      await reply.arrayBuffer();
      status = reply.status;
    } catch {
      // Counted as status 0: the service dropped the connection.
    }
    const record = clients[client];
    record.ms.push(performance.now() - started);
    record.replies[status] = (record.replies[status] ?? 0) + 1;
  };
  const post = (body: string): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body });

  const imports = importBody(options.importMessages);
  // The chat body holds a message of MAX_MESSAGE_LENGTH characters; the save body only padding.
  const chatBody = paddedBody({ message: varied(options.maxMessageLength, 7), mode: 'chat' }, options.bodyLimit);
  const saveBody = paddedBody({ title: 'hostile save' }, options.bodyLimit);
  const overBody = paddedBody({ title: 'over' }, options.bodyLimit + 1);
  const bodies: [string, string][] = [
    ['/api/message', chatBody],
    ['/api/conversation/save', saveBody],
    ['/api/conversation/save', overBody],
  ];

  const loop = async (work: (index: number) => Promise<void>, client?: ClientName) => {
    if (client && options.only && !options.only.includes(client)) return;
    for (let index = 0; running(); index++) await work(index);
  };
  const status: number[] = [];
  let statusFailures = 0;
  const poller = loop(async () => {
    const started = performance.now();
    try {
      const reply = await fetch(`${url}/api/status`);
      await reply.arrayBuffer();
      if (reply.status !== 200) statusFailures++;
    } catch {
      statusFailures++;
    }
    status.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, options.statusEveryMs ?? 20));
  });
  await Promise.all([
    poller,
    loop(() => send('importer', '/api/conversation/save', post(imports)), 'importer'),
    loop((index) => send('searcher', `/api/conversations?q=${encodeURIComponent(searches[index % searches.length] ?? 'zzz')}`), 'searcher'),
    loop((index) => {
      const [path, body] = bodies[index % bodies.length] ?? bodies[0] ?? ['/api/status', ''];
      return send('bodies', path, post(body));
    }, 'bodies'),
    loop((index) => send('pager', pages[index % pages.length] ?? '/api/conversations'), 'pager'),
  ]);
  for (const record of Object.values(clients)) record.ms.sort((a, b) => a - b);
  return { status: status.sort((a, b) => a - b), statusFailures, clients };
}

/** The event-loop lag histogram's buckets (`le` in seconds → cumulative count), or null without one. */
export async function scrapeLoopLag(url: string): Promise<Map<number, number> | null> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const buckets = new Map<number, number>();
  for (const match of text.matchAll(/^assistant_event_loop_lag_seconds_bucket\{le="([^"]+)"\} (\S+)$/gm)) {
    buckets.set(match[1] === '+Inf' ? Infinity : Number(match[1]), Number(match[2]));
  }
  return buckets.size > 0 ? buckets : null;
}

/**
 * The bucket bound (ms) under which `fraction` of the observations made between two scrapes fall:
 * a histogram gives the p99 to within its bucket.
 */
export function lagPercentile(before: Map<number, number>, after: Map<number, number>, fraction: number): number {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const total = (after.get(Infinity) ?? 0) - (before.get(Infinity) ?? 0);
  for (const bound of bounds) {
    if ((after.get(bound) ?? 0) - (before.get(bound) ?? 0) >= fraction * total) return bound * 1000;
  }
  return Infinity;
}
