// Terminal bytes as the API shows them (CONTRACT §4): no ANSI sequences, `\n` line endings, and a
// carriage return overwriting its line as it does on screen (progress bars keep their last state).

// CSI (colours, cursor moves), OSC (titles; ended by BEL or ST), DCS/SOS/PM/APC strings,
// charset selections, and every other two-byte escape (ESC 7/8 cursor save, ESC =/> keypad).
// Matching control characters is the point of these patterns, hence the lint exceptions.
const escapeSequences =
  // eslint-disable-next-line no-control-regex
  /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[PX^_][^\x1b]*\x1b\\|\x1b[()*+][0-9A-Za-z]|\x1b[0-~]|\x1b/g;
// C0 controls other than tab, newline and carriage return, and DEL (backspace is handled first).
// eslint-disable-next-line no-control-regex
const controlCharacters = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

/** Backspaces applied in one pass (each removes the character before it), as a terminal shows them. */
function applyBackspaces(text: string): string {
  if (!text.includes('\b')) return text;
  const kept: string[] = [];
  for (const char of text) {
    if (char === '\b') kept.pop();
    else kept.push(char);
  }
  return kept.join('');
}

/** One line of terminal text without escapes; `\r` keeps what was written after it. */
function cleanLine(line: string): string {
  let text = applyBackspaces(line.replace(escapeSequences, ''));
  text = text.replace(controlCharacters, '');
  const withoutTrailingCr = text.replace(/\r+$/, '');
  const lastCr = withoutTrailingCr.lastIndexOf('\r');
  return lastCr >= 0 ? withoutTrailingCr.slice(lastCr + 1) : withoutTrailingCr;
}

/** Raw terminal output as plain text with `\n` line endings. */
export function plainText(raw: string): string {
  return raw.split('\n').map(cleanLine).join('\n');
}

/** Longest line kept whole in the session log. */
const MAX_LINE = 64 * 1024;

/**
 * The session log behind `GET /api/terminals/:id/output`: plain lines, each command preceded by
 * `$ <command>`, keeping the last `capacity` lines.
 */
export class OutputLog {
  private readonly lines: string[] = [];
  private partial = '';
  lastUpdate = new Date();

  constructor(private readonly capacity: number) {}

  /**
   * Raw output as it arrives; a line is logged once its newline has come. A line that never
   * ends (a progress bar, a binary dump) is logged in pieces of MAX_LINE, so neither memory nor
   * the work per chunk grows with it.
   */
  append(raw: string): void {
    const pieces = (this.partial + raw).split('\n');
    this.partial = pieces.pop() ?? '';
    for (const piece of pieces) this.push(cleanLine(piece));
    while (this.partial.length > MAX_LINE) {
      this.push(cleanLine(this.partial.slice(0, MAX_LINE)));
      this.partial = this.partial.slice(MAX_LINE);
    }
    this.lastUpdate = new Date();
  }

  /** Starts a command's section; output still waiting for its newline is flushed before it. */
  command(command: string): void {
    this.flush();
    for (const line of command.split('\n')) this.push(`$ ${line}`);
    this.lastUpdate = new Date();
  }

  flush(): void {
    if (this.partial === '') return;
    const line = cleanLine(this.partial);
    this.partial = '';
    if (line !== '') this.push(line);
  }

  /** The last `count` lines, the unfinished one included. */
  tail(count: number): string {
    const pending = cleanLine(this.partial);
    const all = pending === '' ? this.lines : [...this.lines, pending];
    return all.slice(-Math.min(count, this.capacity)).join('\n');
  }

  private push(line: string): void {
    this.lines.push(line);
    // Trimmed in batches: splicing the front on every line would make busy output quadratic.
    if (this.lines.length > this.capacity * 2) this.lines.splice(0, this.lines.length - this.capacity);
  }
}
