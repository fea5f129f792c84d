import { expect, it } from 'vitest';
import { jsonInSteps } from '../../src/core/providers/json-in-steps.js';

// A provider request body serialised in steps must be exactly what JSON.stringify makes of it.

const bodies: Record<string, unknown>[] = [
  {},
  { model: 'm', stream: true, messages: [] },
  {
    model: 'llama3.2',
    skipped: undefined,
    fn: () => 1,
    messages: [
      { role: 'system', content: 'é ü 你好 🎉 "quoted" \\ back\nline\u2028sep' },
      { role: 'user', content: 'x'.repeat(100_000), extra: undefined },
      undefined,
      null,
      [1, [2, 3]],
    ],
    options: { temperature: 0.2, stop: ['\n\n'], nested: { deep: [true, false, null] } },
    tools: [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }],
    format: 'json',
    max: Number.NaN,
    when: new Date(0),
  },
];

it('joins to JSON.stringify of the body, with its UTF-8 length', async () => {
  for (const body of bodies) {
    const { pieces, bytes } = await jsonInSteps(body);
    const whole = pieces.join('');
    expect(whole).toBe(JSON.stringify(body));
    expect(bytes).toBe(Buffer.byteLength(whole));
  }
});

it('lets other work run while it serialises a large history', async () => {
  const messages = Array.from({ length: 50 }, (_, index) => ({ role: index % 2 ? 'assistant' : 'user', content: `${index} `.repeat(50_000) }));
  let turns = 0;
  const ticker = setInterval(() => {
    turns++;
  }, 0);
  try {
    const { pieces } = await jsonInSteps({ model: 'm', messages });
    expect(pieces.join('')).toBe(JSON.stringify({ model: 'm', messages }));
  } finally {
    clearInterval(ticker);
  }
  // The serialisation took far more than one step, and the timer ran in between.
  expect(turns).toBeGreaterThan(0);
});

it('hands an ordinary body back at once, not as a promise, and a large one later', async () => {
  const ordinary = jsonInSteps({ model: 'm', messages: [{ role: 'user', content: 'hello' }], stream: true });
  expect(ordinary).not.toBeInstanceOf(Promise);
  expect((ordinary as { pieces: string[] }).pieces.join('')).toBe(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hello' }], stream: true }));
  const messages = Array.from({ length: 50 }, (_, index) => ({ role: 'user', content: `${index} `.repeat(50_000) }));
  const large = jsonInSteps({ model: 'm', messages });
  expect(large).toBeInstanceOf(Promise);
  expect((await large).pieces.join('')).toBe(JSON.stringify({ model: 'm', messages }));
});
