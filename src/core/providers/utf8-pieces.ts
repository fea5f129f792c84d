/**
 * UTF-8 text from a body that arrives in pieces split anywhere: a piece's last character, when
 * the piece ends inside it, is held back (at most 3 bytes) and decoded with the next. The same
 * text, replacement characters included, as `setEncoding('utf8')` gives; without its
 * StringDecoder, whose own 7-byte Buffer (a typed array, an ArrayBuffer and its native store,
 * about 400 B) every open provider response kept for as long as its answer streamed.
 */
export class Utf8Pieces {
  private held: Buffer | null = null;

  /** The text of `piece` and what was held before it, up to its last whole character. */
  push(piece: Buffer): string {
    const bytes = this.held === null ? piece : Buffer.concat([this.held, piece]);
    const whole = wholeLength(bytes);
    // Copied: a view would keep the socket's whole read alive.
    this.held = whole === bytes.length ? null : Buffer.from(bytes.subarray(whole));
    return bytes.toString('utf8', 0, whole);
  }

  /** What is still held once the body has ended (an unfinished character: U+FFFD). */
  end(): string {
    const rest = this.held;
    this.held = null;
    return rest === null ? '' : rest.toString('utf8');
  }
}

/** The length of `bytes` without an unfinished character at its end. */
function wholeLength(bytes: Buffer): number {
  const length = bytes.length;
  // Back over at most 3 continuation bytes (10xxxxxx) to the byte that starts the last character.
  let start = length - 1;
  while (start >= 0 && start > length - 4 && ((bytes[start] ?? 0) & 0xc0) === 0x80) start--;
  if (start < 0) return length;
  const lead = bytes[start] ?? 0;
  const needed = lead >= 0xf0 && lead <= 0xf4 ? 4 : lead >= 0xe0 && lead < 0xf0 ? 3 : lead >= 0xc2 && lead < 0xe0 ? 2 : 1;
  return length - start < needed ? start : length;
}
