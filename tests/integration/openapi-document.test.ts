import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/test-service.js';

const run = promisify(execFile);

// The OpenAPI document must list exactly the REST paths of the areas built so far, as the
// specification's and the contract's tables name them. Each later area adds its rows here.
const expectedOperations = [
  // interface-spec.md "Chat and assistant" (the non-chat rows)
  'GET /api/status',
  'GET /api/context',
  'POST /api/context/clear',
  // interface-spec.md "Conversations"
  'GET /api/conversations',
  'POST /api/conversation/save',
  'GET /api/conversation/{id}',
  'DELETE /api/conversation/{id}',
  'POST /api/conversation/{id}/set-current',
  'GET /api/conversation/current',
  // interface-spec.md "Alternative paths" (conversation rows)
  'POST /api/conversations/save',
  'POST /api/conversations/load',
  'DELETE /api/conversations/{id}',
  // CONTRACT §7 rename, §5 auth/me
  'POST /api/conversation/{id}/rename',
  'GET /api/auth/me',
  // interface-spec.md "Models", the per-provider model lists and the model alternative paths
  'POST /api/message',
  'POST /api/message/stream',
  'POST /api/message/stream/markdown',
  'POST /api/markdown/stream',
  'POST /api/unified/message',
  'POST /api/unified/stream',
  'POST /api/openai/message',
  'POST /api/openai/stream',
  'POST /api/anthropic/message',
  'POST /api/anthropic/stream',
  'POST /api/ollama/message',
  'POST /api/ollama/stream',
  'GET /api/streams/{streamId}',
  'POST /api/streams/{streamId}/abort',
  'GET /api/models',
  'POST /api/model/download',
  'POST /api/model/switch',
  'GET /api/model/current',
  // CONTRACT §12: the service default model
  'POST /api/model/default',
  'GET /api/openai/models',
  'GET /api/anthropic/models',
  'GET /api/ollama/models',
  'POST /api/models/download',
  'DELETE /api/models/{name}',
  // interface-spec.md "Prompt orders and audit" (prompt-order rows)
  'GET /api/prompt-orders',
  'POST /api/prompt-orders',
  'DELETE /api/prompt-orders/{orderId}',
  // interface-spec.md "Workspaces"
  'GET /api/workspaces',
  'POST /api/workspaces/switch',
  'POST /api/workspaces/add',
  'DELETE /api/workspaces/{workspaceId}',
  'POST /api/workspaces/{workspaceId}/refresh',
  'POST /api/workspaces/refresh-all',
  'GET /api/workspaces/{workspaceId}/branches',
  'POST /api/workspaces/{workspaceId}/switch-branch',
  // interface-spec.md "Terminals" and CONTRACT §4 (interrupt, the caller's list)
  'POST /api/terminals',
  'GET /api/terminals',
  'GET /api/terminals/{terminalId}',
  'DELETE /api/terminals/{terminalId}',
  'POST /api/terminals/{terminalId}/execute',
  'POST /api/terminals/{terminalId}/interrupt',
  'GET /api/terminals/{terminalId}/output',
  // interface-spec.md "Prompt orders and audit" (audit row) and "Security"
  'GET /api/audit/log',
  'GET /api/usage',
  'GET /api/usage/limits',
  'GET /api/policies',
  'PUT /api/policies',
  'GET /api/security/audit',
  'GET /api/security/pending',
  'POST /api/security/confirm',
];

describe('OpenAPI document and docs page', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService('sqlite');
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
  });

  it('is OpenAPI 3 and lists exactly the expected method + path pairs', async () => {
    const res = await svc.request('GET', '/api/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\./);
    const operations = Object.entries(res.body.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual([...expectedOperations].sort());
  });

  it('documents request schemas and the contract error envelope', async () => {
    const { body } = await svc.request('GET', '/api/openapi.json');
    const save = body.paths['/api/conversation/save'].post;
    expect(save.requestBody.content['application/json'].schema.properties).toHaveProperty('conversationData');
    expect(body.components.schemas.ErrorEnvelope.properties.error.required).toEqual(['code', 'message', 'details', 'timestamp']);
    // Every error response is the envelope, not trpc-to-openapi's own error shape.
    expect(Object.keys(body.components.schemas).filter((name) => name.startsWith('error.'))).toEqual([]);
    for (const [path, item] of Object.entries(body.paths as Record<string, Record<string, { responses: Record<string, any> }>>)) {
      for (const [method, operation] of Object.entries(item)) {
        const errors = Object.entries(operation.responses).filter(([status]) => !status.startsWith('2'));
        expect(errors.length, `${method} ${path}`).toBeGreaterThan(0);
        for (const [status, response] of errors) {
          expect(response.content['application/json'].schema, `${status} of ${method} ${path}`).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
        }
        expect('429' in operation.responses, `429 of ${method} ${path}`).toBe(path !== '/api/status');
      }
    }
    const ids = new Set<string>();
    for (const item of Object.values(body.paths as Record<string, Record<string, { operationId: string }>>)) {
      for (const operation of Object.values(item)) {
        expect(ids.has(operation.operationId)).toBe(false);
        ids.add(operation.operationId);
      }
    }
  });

  it('documents the bearer token on every operation but the public health check', async () => {
    const { body } = await svc.request('GET', '/api/openapi.json');
    expect(body.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    for (const [path, item] of Object.entries(body.paths as Record<string, Record<string, { security?: unknown }>>)) {
      for (const [method, operation] of Object.entries(item)) {
        const expected = path === '/api/status' ? [] : [{ bearerAuth: [] }];
        expect(operation.security, `${method} ${path}`).toEqual(expected);
      }
    }
  });

  it('passes the Redocly linter with no errors', async () => {
    const { body } = await svc.request('GET', '/api/openapi.json');
    const folder = await mkdtemp(join(tmpdir(), 'openapi-'));
    const file = join(folder, 'openapi.json');
    await writeFile(file, JSON.stringify(body));
    // Redocly's telemetry and update check would reach for the internet.
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
    const lint = await run(process.execPath, ['node_modules/@redocly/cli/bin/cli.js', 'lint', file, '--format=json'], { env, timeout: 60_000 }).catch(
      // A lint with errors exits non-zero; its report is still on stdout.
      (error: unknown) => error as { stdout: string },
    );
    await rm(folder, { recursive: true, force: true });
    const report = JSON.parse(lint.stdout.slice(lint.stdout.indexOf('{'))) as { totals: { errors: number }; problems: { ruleId: string; message: string; severity: string }[] };
    expect(report.problems.filter((problem) => problem.severity === 'error')).toEqual([]);
    expect(report.totals.errors).toBe(0);
  }, 90_000);

  it('documents the streaming paths as text/event-stream replies', async () => {
    const { body } = await svc.request('GET', '/api/openapi.json');
    const streaming = ['/api/message/stream', '/api/message/stream/markdown', '/api/markdown/stream', '/api/unified/stream', '/api/ollama/stream'];
    for (const path of streaming) {
      expect(Object.keys(body.paths[path].post.responses['200'].content)).toEqual(['text/event-stream']);
    }
    expect(Object.keys(body.paths['/api/streams/{streamId}'].get.responses['200'].content)).toEqual(['text/event-stream']);
    expect(Object.keys(body.paths['/api/message'].post.responses['200'].content)).toEqual(['application/json']);
  });

  it('every documented path is served by a procedure (none answers the 404 of an unknown route)', async () => {
    const { body } = await svc.request('GET', '/api/openapi.json');
    for (const [path, item] of Object.entries(body.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(item)) {
        const concrete = path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
        const res = await svc.request(method.toUpperCase(), concrete, method === 'get' || method === 'delete' ? {} : { json: {} });
        expect({ path, method, message: res.body?.error?.message }).not.toEqual({ path, method, message: 'Not found' });
      }
    }
  });

  it('renders /api/docs from locally served assets', async () => {
    const page = await svc.request('GET', '/api/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.text).toContain('/api/openapi.json');
    const script = await fetch(`${svc.url}/api/docs/assets/swagger-ui-bundle.js`);
    expect(script.status).toBe(200);
    expect((await script.text()).length).toBeGreaterThan(100_000);
  });
});
