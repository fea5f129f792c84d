import { expect, it } from 'vitest';
import { missingTwice } from '../../src/core/conversations/close-interrupted-answers.js';

// The periodic closing of answers counts a writer as gone only when it is missing from the bus on
// two runs in a row: one reading taken while Redis comes back must not close live answers.

it('counts a writer gone only when missing twice in a row, and forgets a miss once it is back', async () => {
  const present = new Set(['a']);
  const alive = missingTwice((writer) => Promise.resolve(present.has(writer)));
  expect(await alive('a')).toBe(true);
  expect(await alive('b')).toBe(true); // first miss
  present.add('b');
  expect(await alive('b')).toBe(true); // back: the miss is forgotten
  present.delete('b');
  expect(await alive('b')).toBe(true); // a first miss again
  expect(await alive('b')).toBe(false); // the second in a row
});
