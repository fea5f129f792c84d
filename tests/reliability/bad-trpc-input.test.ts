import { expect, it } from 'vitest';
import { appRouter } from '../../src/routers/app-router.js';
import { startFakeOllama } from '../fakes/index.js';
import { describeOnDatabases } from '../helpers/databases.js';
import { startTestService } from '../helpers/test-service.js';
import { reliabilityCount } from './reliability-level.js';

// Bad input at /trpc, the typed clients' door, which the OpenAPI-driven fuzz does not knock on:
// every procedure of the router is called over tRPC's HTTP protocol with inputs that are not
// JSON, not superjson, of the wrong types, with superjson metadata that lies about them
// (unknown types, `__proto__` paths, BigInts that are not numbers), as batches that do not match
// their paths, and too large. No reply may be a 5xx or carry a stack trace; every error is tRPC's
// shape with the contract's code (`data.appCode`); nothing reaches Object.prototype; the service
// answers normally afterwards.

type Kind = 'query' | 'mutation' | 'subscription';

const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, { _def: { type: Kind } }>).map(([path, procedure]) => ({
  path,
  type: procedure._def.type,
}));

/** CONTRACT §2's codes (a 5xx is caught by its status already). */
const contractCodes = new Set([
  'INVALID_REQUEST', 'UNAUTHORIZED', 'FORBIDDEN', 'SECURITY_VIOLATION', 'NOT_FOUND', 'RATE_LIMIT_EXCEEDED', 'TOOL_EXECUTION_ERROR',
  'STREAMING_ERROR', 'INTERNAL_ERROR', 'MODEL_UNAVAILABLE', 'SERVICE_UNAVAILABLE', 'WORKSPACE_ERROR',
]);

/** Raw inputs: the `input` query value of a query, or the body of a mutation. */
function rawInputs(round: number): string[] {
  const junk = [1, 'x', null, true, [], {}, { $gt: '' }, 'x'.repeat(2000), '\u0000', -1, 1e308];
  const inputs = [
    '{',
    'not json',
    'null',
    '[]',
    '42',
    '"text"',
    '{"json":null}',
    '{"json":{},"meta":"x"}',
    '{"json":{},"meta":{"values":1}}',
    '{"json":{"a":"1"},"meta":{"values":{"a":["bigint"]}}}',
    '{"json":{"a":"x"},"meta":{"values":{"a":["bigint"]}}}',
    '{"json":{"a":"1e99999"},"meta":{"values":{"a":["bigint"]}}}',
    '{"json":{"a":"x"},"meta":{"values":{"a":["Date"]}}}',
    '{"json":{"a":{}},"meta":{"values":{"a":["nonsense"]}}}',
    '{"json":{"a":[]},"meta":{"values":{"a":["set"]}}}',
    '{"json":{},"meta":{"values":{"__proto__.polluted":["undefined"]}}}',
    '{"json":{"__proto__":{"polluted":1}}}',
    '{"json":{"constructor":{"prototype":{"polluted":1}}}}',
    '{"json":{},"meta":{"referentialEqualities":{"a":["__proto__.polluted"]}}}',
    `{"json":${'['.repeat(5000)}${']'.repeat(5000)}}`,
  ];
  for (const value of junk) {
    inputs.push(JSON.stringify({ json: value }));
    inputs.push(JSON.stringify({ json: { [`field${String(round)}`]: value, limit: value, id: value, conversationId: value, title: value, message: value } }));
  }
  return inputs;
}

async function send(url: string, path: string, type: Kind, raw: string, batch: boolean) {
  const route = `${url}/trpc/${path}${batch ? `,${path}` : ''}`;
  const signal = AbortSignal.timeout(10_000);
  if (type === 'mutation') {
    const body = batch ? `{"0":${raw},"1":${raw}}` : raw;
    return fetch(`${route}${batch ? '?batch=1' : ''}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal });
  }
  const input = batch ? `{"0":${raw},"1":${raw}}` : raw;
  return fetch(`${route}?${batch ? 'batch=1&' : ''}input=${encodeURIComponent(input)}`, { signal });
}

describeOnDatabases('bad input at /trpc', (kind) => {
  it('every procedure, malformed: no 5xx, tRPC errors with the contract code, nothing polluted', async () => {
    await using fake = await startFakeOllama();
    await using svc = await startTestService(kind, { OLLAMA_BASE_URL: fake.url, ENABLE_SYSTEM_COMMANDS: 'true' });
    expect(procedures.length).toBeGreaterThan(50);
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let sent = 0;
    for (let round = 0; round < reliabilityCount(1, 3); round++) {
      for (const { path, type } of procedures) {
        for (const raw of rawInputs(round)) {
          for (const batch of [false, true]) {
            const label = `${type} ${path}${batch ? ' (batch)' : ''} ${raw.slice(0, 80)}`;
            let status: number;
            let text: string;
            try {
              const reply = await send(svc.url, path, type, raw, batch);
              status = reply.status;
              // A subscription that accepted its input streams; only its first bytes are read.
              text = reply.headers.get('content-type')?.startsWith('text/event-stream') ? '' : await reply.text();
              if (!reply.bodyUsed) await reply.body?.cancel();
            } catch (error) {
              failures.push(`${label} -> ${String(error)}`);
              continue;
            }
            sent++;
            statuses.set(status, (statuses.get(status) ?? 0) + 1);
            if (status >= 500 || /\n\s+at /.test(text)) {
              failures.push(`${label} -> ${String(status)} ${text.slice(0, 200)}`);
              continue;
            }
            if (status < 400 || text === '') continue;
            const parsed = JSON.parse(text) as { success?: boolean; error?: { code?: string } };
            // A URL too long for Node's HTTP parser is refused before any route is known: the
            // contract's plain envelope (src/http/client-error.ts), not tRPC's shape.
            if (!Array.isArray(parsed) && parsed.success === false) {
              if (!contractCodes.has(parsed.error?.code ?? '')) failures.push(`${label} -> envelope ${text.slice(0, 160)}`);
              continue;
            }
            // A batch answers each call on its own: results pass, every error needs a contract code.
            for (const entry of Array.isArray(parsed) ? (parsed as unknown[]) : [parsed]) {
              const { error } = entry as { error?: { json?: { data?: { appCode?: string } } } };
              if (error === undefined) continue;
              const appCode = error.json?.data?.appCode;
              if (!contractCodes.has(appCode ?? '')) failures.push(`${label} -> appCode ${String(appCode)}: ${text.slice(0, 160)}`);
            }
          }
        }
      }
    }
    console.log(`bad /trpc input on ${kind}: ${String(sent)} requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(1000);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((await svc.request('GET', '/api/status')).body.status).toBe('ok');
    const saved = await svc.request('POST', '/api/conversation/save', { json: { title: 'after the fuzz', conversationData: { messages: [{ role: 'user', content: 'ok' }] } } });
    expect(saved.status).toBe(200);
  }, 300_000);
});
