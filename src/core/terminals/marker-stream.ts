// Splits a shell's PTY output into ordinary output and the markers our bash settings print: an
// OSC sequence `ESC ] 6973 ; <kind> ; <nonce> [; <exit code>] BEL`: B a command started, D the
// prompt with the last exit code, F a request to end the typeahead discard, R the discard done.
// A marker may arrive cut between two chunks; output that merely looks like one passes through.

const MARKER_INTRO = '\x1b]6973;';
const MAX_MARKER_LENGTH = 128;

export type Marker = { kind: 'started' } | { kind: 'prompt'; exitCode: number } | { kind: 'flush' } | { kind: 'ready' };

/** The shell functions the settings define; read-only, so no command can redefine them. */
const PROMPT_FUNCTION = '__assistant_prompt';
const DISCARD_FUNCTION = '__assistant_discard';

const marker = (kind: string, nonce: string) => `builtin printf '\\e]6973;${kind};${nonce}\\a' >/dev/tty`;

/**
 * The shell settings for the markers, as read-only functions and read-only prompts that take no
 * variables (a command could make any variable read-only and so break them):
 * - PROMPT_COMMAND calls the prompt function with `$?`. It first ends the shell at once if its
 *   input is no longer the service's command pipe (`commandsPath`, see command-pipe.ts), say
 *   because a command closed the copy bash restores it from: the shell must never read a line
 *   from anywhere else, the terminal's keystrokes least of all. Then it prints the prompt marker
 *   to /dev/tty, so that `exec >/dev/null` cannot hide it.
 * - The discard function drops keystrokes still on their way to the terminal (sent to a program
 *   that ended before reading them), so they cannot answer the next program's prompt: with echo
 *   and signals off it asks for the end of the discard (marker F), and reads lines until the
 *   service's answer, a line holding the command's one-time token that it writes behind
 *   everything it sent before; then it puts the terminal's settings back as they were.
 */
export function markerSettings(nonce: string, commandsPath: string): string[] {
  return [
    "PS0=''",
    "PS1=''",
    "PS2=''",
    `${PROMPT_FUNCTION}() { [[ /proc/$$/fd/0 -ef ${commandsPath} ]] || builtin kill -KILL $$; builtin printf '\\e]6973;D;${nonce};%s\\a' "$1" >/dev/tty; }`,
    `${DISCARD_FUNCTION}() { builtin set -- "$1" "$(stty -g </dev/tty 2>/dev/null)"; stty -echo -isig </dev/tty 2>/dev/null; ${marker('F', nonce)}; ` +
      `timeout 30 sed -n "/^$1\\$/q" </dev/tty; stty "$2" </dev/tty 2>/dev/null; }`,
    `readonly -f ${PROMPT_FUNCTION} ${DISCARD_FUNCTION}`,
    `PROMPT_COMMAND='${PROMPT_FUNCTION} "$?"'`,
    'readonly PS0 PS1 PS2 PROMPT_COMMAND',
  ];
}

/**
 * What each command line starts with: the start marker (B), then, when keystrokes may be left
 * over, the discard up to `token` and the ready marker (R), before which the service holds back
 * any new keystrokes.
 */
export function commandPreamble(nonce: string, discardToken: string | null): string {
  const start = marker('B', nonce);
  return discardToken === null ? start : `${start}; ${DISCARD_FUNCTION} ${discardToken}; ${marker('R', nonce)}`;
}

/** What the service writes to end a discard: a line of its own, after any unfinished one. */
export function typeaheadEnd(token: string): string {
  return `\n${token}\n`;
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
      text = text.slice(start);
      const end = text.indexOf('\x07');
      if (end < 0 && text.length <= MAX_MARKER_LENGTH) {
        this.carry = text;
        return;
      }
      const marker = end < 0 || end > MAX_MARKER_LENGTH ? null : this.parse(text.slice(MARKER_INTRO.length, end));
      if (marker) {
        this.onMarker(marker);
        text = text.slice(end + 1);
      } else {
        // Not one of ours: give up only its first byte, so a look-alike printed just before a
        // real marker cannot swallow it.
        this.emit(text.slice(0, 1));
        text = text.slice(1);
      }
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
    if (kind === 'F') return { kind: 'flush' };
    if (kind === 'R') return { kind: 'ready' };
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
