import { expect, it } from 'vitest';
import { CommandDecisions } from '../../src/core/commands/command-decisions.js';

// The meeting point of a paused agent and the confirmation of its held command.

it('every waiter on a command hears its decision once; other commands are not disturbed', async () => {
  const decisions = new CommandDecisions();
  const signal = new AbortController().signal;
  const first = decisions.wait('a', signal);
  const second = decisions.wait('a', signal);
  const other = decisions.wait('b', signal);
  decisions.settle('a', { kind: 'rejected' });
  // A second settle (a late duplicate) reaches nobody.
  decisions.settle('a', { kind: 'expired' });
  expect(await first).toEqual({ kind: 'rejected' });
  expect(await second).toEqual({ kind: 'rejected' });
  expect(decisions.waiting).toBe(1);
  decisions.settle('b', { kind: 'expired' });
  expect(await other).toEqual({ kind: 'expired' });
  expect(decisions.waiting).toBe(0);
});

it('an aborted wait resolves null at once and leaves nothing behind; a later decision is harmless', async () => {
  const decisions = new CommandDecisions();
  const controller = new AbortController();
  const waiting = decisions.wait('a', controller.signal);
  controller.abort();
  expect(await waiting).toBeNull();
  expect(decisions.waiting).toBe(0);
  decisions.settle('a', { kind: 'rejected' });
  expect(await decisions.wait('a', controller.signal)).toBeNull();
});
