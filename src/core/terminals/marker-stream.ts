// Splits a shell's PTY output into ordinary output and the markers our bash settings print: an
// OSC sequence `ESC ] 6973 ; <kind> ; <nonce> [; <exit code>] BEL`. A marker may arrive cut
// between two chunks; output that merely looks like one passes through untouched.

const MARKER_INTRO = '\x1b]6973;';
const MAX_MARKER_LENGTH = 128;

export type Marker = { kind: 'started' } | { kind: 'prompt'; exitCode: number };

/** The settings that make bash print the markers: PS0 after reading a line, PROMPT_COMMAND at each prompt. */
export function markerSettings(nonce: string): string[] {
  return [`PS0='\\e]6973;B;${nonce}\\a'`, `PROMPT_COMMAND='printf "\\e]6973;D;${nonce};%s\\a" "$?"'`];
}

export class MarkerStream {
  private carry = '';

  constructor(
    private readonly nonce: string,
    private readonly onOutput: (raw: string) => void,
    private readonly onMarker: (marker: Marker) => void,
  ) {}

  push(chunk: string): void {
    let text = this.carry + chunk;
    this.carry = '';
    for (;;) {
      const start = text.indexOf(MARKER_INTRO);
      if (start < 0) {
        const held = partialIntroLength(text);
        this.emit(text.slice(0, text.length - held));
        this.carry = text.slice(text.length - held);
        return;
      }
      this.emit(text.slice(0, start));
      const end = text.indexOf('\x07', start);
      if (end < 0) {
        if (text.length - start <= MAX_MARKER_LENGTH) {
          this.carry = text.slice(start);
          return;
        }
        // Too long to be ours: ordinary output that happens to look alike.
        this.emit(text.slice(start, start + MARKER_INTRO.length));
        text = text.slice(start + MARKER_INTRO.length);
        continue;
      }
      const marker = this.parse(text.slice(start + MARKER_INTRO.length, end));
      if (marker) this.onMarker(marker);
      else this.emit(text.slice(start, end + 1));
      text = text.slice(end + 1);
    }
  }

  /** Whatever is held back, as output: the shell has ended and no marker will complete it. */
  flush(): void {
    const rest = this.carry;
    this.carry = '';
    this.emit(rest);
  }

  private parse(body: string): Marker | null {
    const [kind, nonce, code] = body.split(';');
    if (nonce !== this.nonce) return null;
    if (kind === 'B') return { kind: 'started' };
    if (kind === 'D' && code !== undefined && /^\d+$/.test(code)) return { kind: 'prompt', exitCode: Number(code) };
    return null;
  }

  private emit(raw: string): void {
    if (raw !== '') this.onOutput(raw);
  }
}

/** How many trailing characters could be the beginning of a marker still on its way. */
function partialIntroLength(text: string): number {
  for (let length = Math.min(MARKER_INTRO.length - 1, text.length); length > 0; length--) {
    if (text.endsWith(MARKER_INTRO.slice(0, length))) return length;
  }
  return 0;
}
