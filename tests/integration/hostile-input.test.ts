import { expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOllama, startFakeOpenAI } from '../fakes/index.js';
import { describeOnDatabases } from '../helpers/databases.js';
import { startTestService, type TestResponse } from '../helpers/test-service.js';

// Every documented operation, fed hostile ids, query values, field values and raw bodies: no reply
// may be a 5xx, every error must be the envelope, and the service must answer normally afterwards.
// (The generated 5,000-request reliability suite is a later issue; this guards the basics.)

const values: unknown[] = [
  null, true, -1, 1e308, 99999999999999, 1.5, 'NaN', '-0', 'x'.repeat(300), '😀'.repeat(100),
  [], {}, { $gt: '' }, '../../etc/passwd', '%00', "' OR 1=1 --",
];
const ids = ['00000000-0000-4000-8000-000000000000', '..', '%2e%2e', 'a'.repeat(500), '%F0%9F%98%80', "'", '%00'];
const rawBodies = ['{', '[]', 'null', '"text"', '{"title":"a\\u0000"}', '{"title":"\\udc00"}', `{"a":${'['.repeat(3000)}${']'.repeat(3000)}}`];

describeOnDatabases('hostile input', (kind) => {
  it('never gets a 5xx or a bare error', async () => {
    // System commands on, so the terminal and confirmation paths validate what they are sent
    // instead of answering the feature flag's 403; with no workspace registered, no shell starts.
    // The providers are wire-faithful fakes, so a chat that passes validation gets an answer: a
    // 503 here would mean the service failed, not that no model server runs on this machine.
    await using ollama = await startFakeOllama();
    await using openai = await startFakeOpenAI();
    await using anthropic = await startFakeAnthropic();
    await using svc = await startTestService(kind, {
      ENABLE_SYSTEM_COMMANDS: 'true',
      OLLAMA_BASE_URL: ollama.url,
      OPENAI_BASE_URL: openai.url,
      ANTHROPIC_BASE_URL: anthropic.url,
    });
    const doc = (await svc.request('GET', '/api/openapi.json')).body as { paths: Record<string, Record<string, any>> };
    const failures: string[] = [];
    let sent = 0;
    const check = (label: string, res: TestResponse) => {
      sent++;
      const bare = res.status >= 400 && (res.body?.success !== false || typeof res.body?.error?.code !== 'string');
      if (res.status >= 500 || bare) failures.push(`${label} -> ${res.status} ${res.text.slice(0, 120)}`);
    };
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item)) {
        const verb = method.toUpperCase();
        // A path without parameters is sent once, not once per hostile id.
        for (const url of new Set(ids.map((id) => path.replace(/\{[^}]+\}/g, id)))) {
          if (verb === 'GET' || verb === 'DELETE') {
            for (const value of values) {
              for (const key of ['limit', 'offset', 'q']) {
                const query = `${url}?${key}=${encodeURIComponent(String(value))}`;
                check(`${verb} ${query}`, await svc.request(verb, query));
              }
            }
            continue;
          }
          const fields = Object.keys(item[method].requestBody?.content?.['application/json']?.schema?.properties ?? {});
          for (const field of [...fields, 'unexpected']) {
            for (const value of values) check(`${verb} ${url} ${field}`, await svc.request(verb, url, { json: { [field]: value } }));
          }
          for (const body of rawBodies) {
            check(`${verb} ${url} raw ${body.slice(0, 12)}`, await svc.request(verb, url, { body, headers: { 'content-type': 'application/json' } }));
          }
        }
      }
    }
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(1000);
    expect((await svc.request('GET', '/api/status')).body.status).toBe('ok');
  }, 240_000);
});
