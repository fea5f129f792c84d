import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandJudge } from '../../src/core/security/command-judge.js';
import { makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { describeWithSandbox } from '../helpers/sandbox.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';

// CONTRACT §11 "Bounded analysis": a line longer than MAX_COMMAND_LENGTH is refused before it is
// judged, and judging never stalls other requests: it runs on a thread of its own, and a line that
// takes too long there is answered `high` rather than waited for.

describeWithSandbox('bounded analysis', () => {
  let svc: TestService;
  let workspace: Folder;
  const terminals: string[] = [];

  beforeAll(async () => {
    workspace = makeFolder();
    svc = await startTestService('sqlite', { ENABLE_SYSTEM_COMMANDS: 'true', MAX_TERMINALS_PER_USER: '10' });
    await svc.request('POST', '/api/workspaces/add', { json: { name: 'bounded', path: workspace.path } });
    for (let index = 0; index < 4; index++) terminals.push((await svc.request('POST', '/api/terminals', { json: {} })).body.terminalId as string);
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    workspace[Symbol.dispose]();
  });

  it('refuses a line longer than MAX_COMMAND_LENGTH with 400', async () => {
    const res = await svc.request('POST', `/api/terminals/${terminals[0] ?? ''}/execute`, { json: { command: `echo ${'a'.repeat(16_384)}` } });
    expect(expectEnvelope(res, 400, 'INVALID_REQUEST').details).toMatchObject({ reason: 'too_long', maxLength: 16_384 });
  });

  it('keeps answering others while maximum-length lines are judged', async () => {
    // The slowest lines this analysis knows of, at the limit: thousands of words or commands.
    const heavy = [`echo ${'a '.repeat(8190)}`, 'ls; '.repeat(4096)].map((line) => line.slice(0, 16_384));
    const burst = terminals.map((terminal, index) => svc.request('POST', `/api/terminals/${terminal}/execute`, { json: { command: heavy[index % 2] ?? 'ls' } }));
    const latencies: number[] = [];
    const started = Date.now();
    const state = { settled: false };
    void Promise.all(burst).finally(() => {
      state.settled = true;
    });
    while (!state.settled && Date.now() - started < 30_000) {
      const begin = performance.now();
      expect((await svc.request('GET', '/api/status')).status).toBe(200);
      latencies.push(performance.now() - begin);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const replies = await Promise.all(burst);
    expect(replies.map((reply) => reply.status)).toEqual(replies.map(() => expect.any(Number)));
    expect(latencies.length).toBeGreaterThan(5);
    // Each heavy line takes about half a second to judge; on the event loop, status would wait that long.
    expect(Math.max(...latencies)).toBeLessThan(250);
  });
});

describe('an analysis that takes too long', () => {
  it('is answered high instead of waited for, and the next line is judged normally on a fresh thread', async () => {
    // A budget far below what a long line takes, so the slow path is certain on any machine.
    const judge = new CommandJudge({ timeoutMs: 50 });
    const context = { cwd: '/var/tmp', home: '/root', workspaceRoots: ['/var/tmp'], restrictToWorkspaces: true };
    try {
      await judge.judge({ command: 'true', context });
      const slow = await judge.judge({ command: 'ls; '.repeat(4096), context });
      expect(slow.verdict).toEqual({ level: 'high', reasons: ['cannot be analysed: the analysis took longer than 0.05 s'] });
      const next = await judge.judge({ command: 'echo fine', context });
      expect(next.verdict.level).toBe('low');
    } finally {
      await judge.close();
    }
  });
});
