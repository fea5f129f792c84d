// Splits a shell's PTY output into ordinary output and the markers our bash settings print: an
// OSC sequence `ESC ] 6973 ; <kind> ; <nonce> [; <exit code>] BEL`: B a command started, D the
// prompt with the last exit code, F a request to end the typeahead discard (shell-input.ts). A marker may arrive cut
// between two chunks; output that merely looks like one passes through untouched.

const MARKER_INTRO = '\x1b]6973;';
const MAX_MARKER_LENGTH = 128;

export type Marker = { kind: 'started' } | { kind: 'prompt'; exitCode: number } | { kind: 'flush' };

/**
 * The shell settings for the markers: PROMPT_COMMAND prints the prompt marker with `$?`, to
 * /dev/tty so that `exec >/dev/null` cannot hide it, and it and the prompts are read-only so a
 * command cannot switch them off. The start marker is printed by each command line itself.
 * Before the marker, PROMPT_COMMAND ends the shell at once if its input is no longer the service's command pipe
 * (`commandsPath`, see command-pipe.ts), say because a command closed the copy bash restores it
 * from: it must never read a line from anywhere else, the terminal's keystrokes least of all.
 */
export function markerSettings(nonce: string, commandsPath: string): string[] {
  return [
    "PS0=''",
    "PS1=''",
    "PS2=''",
    `PROMPT_COMMAND='__assistant_status=$?; [[ /proc/$$/fd/0 -ef ${commandsPath} ]] || builtin kill -KILL $$; printf "\\e]6973;D;${nonce};%s\\a" "$__assistant_status" >/dev/tty'`,
    'readonly PS0 PS1 PS2 PROMPT_COMMAND',
  ];
}

/** The start marker as a command, put at the head of each command line. */
export function startMarkerCommand(nonce: string): string {
  return `printf '\\e]6973;B;${nonce}\\a' >/dev/tty`;
}

/**
 * Discards keystrokes still on their way to the terminal (sent to a program that ended before
 * reading them), so they cannot answer the next program's prompt. With echo off, it asks for the
 * end of the discard (marker F); the service answers with the line `<nonce>` behind everything it
 * has written to the terminal, and the lines before it are dropped. It gives up after 5 s without
 * a line, and puts the terminal's settings back as it found them.
 */
export function typeaheadDiscardCommand(nonce: string): string {
  return [
    '__assistant_tty=$(stty -g </dev/tty 2>/dev/null)',
    'stty -echo </dev/tty 2>/dev/null',
    `printf '\\e]6973;F;${nonce}\\a' >/dev/tty`,
    `while IFS= read -r -t 5 __assistant_line </dev/tty && [[ $__assistant_line != ${nonce} ]]; do :; done`,
    'stty "$__assistant_tty" </dev/tty 2>/dev/null',
    'unset __assistant_tty __assistant_line',
  ].join('; ');
}

/** What the service writes to end a discard: a line of its own, after any unfinished one. */
export function typeaheadEnd(nonce: string): string {
  return `\n${nonce}\n`;
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
