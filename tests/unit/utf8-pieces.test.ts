import { StringDecoder } from 'node:string_decoder';
import { describe, expect, it } from 'vitest';
import { Utf8Pieces } from '../../src/core/providers/utf8-pieces.js';

// The provider client decodes a body's pieces itself (instead of res.setEncoding's
// StringDecoder, which cost every open stream about 400 B): it must give exactly the text a
// StringDecoder gives, however the body is split, valid UTF-8 or not.

function decodeWith(pieces: Buffer[], decoder: { push(piece: Buffer): string; end(): string }): string {
  let text = '';
  for (const piece of pieces) text += decoder.push(piece);
  return text + decoder.end();
}

const stringDecoder = () => {
  const decoder = new StringDecoder('utf8');
  return { push: (piece: Buffer) => decoder.write(piece), end: () => decoder.end() };
};

/** `bytes` cut at the given offsets. */
function cut(bytes: Buffer, offsets: number[]): Buffer[] {
  const pieces: Buffer[] = [];
  let from = 0;
  for (const offset of [...offsets, bytes.length]) {
    pieces.push(bytes.subarray(from, offset));
    from = offset;
  }
  return pieces;
}

describe('Utf8Pieces', () => {
  it('never splits a character, wherever the pieces are cut', () => {
    const text = 'a é € 𝄞 ü🙂\n';
    const bytes = Buffer.from(text);
    for (let offset = 0; offset <= bytes.length; offset++) {
      for (let second = offset; second <= bytes.length; second++) {
        const pieces = cut(bytes, [offset, second]);
        const decoder = new Utf8Pieces();
        const decoded = pieces.map((piece) => decoder.push(piece));
        // No piece of text ends in half a character (a lone surrogate or U+FFFD).
        for (const piece of decoded) expect(piece).not.toMatch(/\uFFFD|[\uD800-\uDBFF]$/);
        expect(decoded.join('') + decoder.end()).toBe(text);
      }
    }
  });

  it('gives what a StringDecoder gives for random bytes split at random', () => {
    // Seeded, so a failure replays: bytes drawn mostly from the ranges UTF-8 is made of.
    let seed = 24;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const ranges = [
      [0x20, 0x7f],
      [0x80, 0xbf],
      [0xc0, 0xdf],
      [0xe0, 0xef],
      [0xf0, 0xff],
    ] as const;
    for (let round = 0; round < 3000; round++) {
      const bytes = Buffer.from(
        Array.from({ length: 1 + Math.floor(random() * 12) }, () => {
          const [low, high] = ranges[Math.floor(random() * ranges.length)] ?? [0x20, 0x7f];
          return low + Math.floor(random() * (high - low + 1));
        }),
      );
      const offsets = Array.from({ length: Math.floor(random() * 4) }, () => Math.floor(random() * (bytes.length + 1))).sort((a, b) => a - b);
      const pieces = cut(bytes, offsets);
      expect(decodeWith(pieces, new Utf8Pieces()), `bytes ${bytes.toString('hex')} cut at ${offsets.join(',')}`).toBe(decodeWith(pieces, stringDecoder()));
    }
  });

  it('gives an unfinished last character at the end as U+FFFD', () => {
    const decoder = new Utf8Pieces();
    expect(decoder.push(Buffer.from([0x61, 0xe2, 0x82]))).toBe('a');
    expect(decoder.end()).toBe('\uFFFD');
  });
});
