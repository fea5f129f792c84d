import { AppError } from '../errors/app-error.js';

// Typed input for a shell or an interpreter (CONTRACT §11) is taken a line at a time, so that
// each line can be judged before the reader sees any of it: printable text ended by a carriage
// return. Ctrl-C and Ctrl-D pass; any other control character or escape sequence (cursor keys,
// backspace, a bracketed paste, Ctrl-V's literal next) is refused, since the line the reader
// would end up with is then no longer the one that was judged.

export type TypedEvent = { kind: 'line'; text: string } | { kind: 'interrupt' } | { kind: 'eof' };

const CTRL_C = '\u0003';
const CTRL_D = '\u0004';

/**
 * Printable text, the line ends (CR, and LF as sent by a paste) and Ctrl-C / Ctrl-D. Not a tab:
 * readline completes the word with it, so the line run would not be the line judged.
 */
function allowed(code: number): boolean {
  return (code >= 0x20 && code !== 0x7f && !(code >= 0x80 && code < 0xa0)) || code === 0x0a || code === 0x0d || code === 0x03 || code === 0x04;
}

export class TypedLines {
  private pending = '';
  /** The last character taken was a CR: an LF right after it ends nothing more (CRLF). */
  private afterReturn = false;

  constructor(private readonly maxLength: number) {}

  /** Text typed since the last line ended, not yet judged nor sent. */
  get partial(): string {
    return this.pending;
  }

  clear(): void {
    this.pending = '';
    this.afterReturn = false;
  }

  /**
   * The events one frame of input makes. A frame holding a refused character is refused whole,
   * before anything in it counts; a line longer than `maxLength` is refused and dropped.
   */
  take(data: string): TypedEvent[] {
    for (let index = 0; index < data.length; index += 1) {
      const code = data.charCodeAt(index);
      if (!allowed(code)) {
        throw AppError.invalid(
          'Only printable text, Enter, Ctrl-C and Ctrl-D are taken while a shell or an interpreter reads this terminal; control and escape sequences are refused',
          { reason: 'control_sequence', character: `U+${code.toString(16).toUpperCase().padStart(4, '0')}` },
        );
      }
    }
    const events: TypedEvent[] = [];
    for (const character of data) {
      const wasReturn = this.afterReturn;
      this.afterReturn = character === '\r';
      if (character === '\n' && wasReturn) continue;
      if (character === '\r' || character === '\n') {
        events.push({ kind: 'line', text: this.pending });
        this.pending = '';
      } else if (character === CTRL_C) {
        this.pending = '';
        events.push({ kind: 'interrupt' });
      } else if (character === CTRL_D) {
        // As at a terminal's prompt: end of input only on an empty line.
        if (this.pending === '') events.push({ kind: 'eof' });
      } else {
        this.pending += character;
        if (this.pending.length > this.maxLength) {
          this.pending = '';
          throw AppError.invalid(`The line typed is longer than MAX_COMMAND_LENGTH (${this.maxLength} characters); it was dropped`, {
            reason: 'too_long', maxLength: this.maxLength,
          });
        }
      }
    }
    return events;
  }
}

/**
 * Lines typed into any other program, kept only to audit each one when it ends (CONTRACT §11):
 * the keystrokes themselves pass at once. A line is cut at `maxLength` for the record.
 */
export class TypedRecord {
  private pending = '';

  constructor(private readonly maxLength = 4096) {}

  /** The lines this frame ends, as typed (control characters kept). */
  take(data: string): string[] {
    const lines: string[] = [];
    for (const character of data) {
      if (character === '\r' || character === '\n') {
        if (this.pending !== '') lines.push(this.pending);
        this.pending = '';
      } else if (this.pending.length < this.maxLength) {
        this.pending += character;
      } else {
        lines.push(this.pending);
        this.pending = character;
      }
    }
    return lines;
  }

  clear(): void {
    this.pending = '';
  }
}
