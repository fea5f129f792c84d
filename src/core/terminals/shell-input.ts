// How a command travels to the terminal's bash: exactly as typed, whatever its quotes, newlines,
// control characters or length, and as one command that bash reads and runs as a whole.

/** Canonical TTY input cuts lines at 4095 bytes: longer commands travel as base64 lines. */
const MAX_DIRECT_LINE = 3000;

/** A bash ANSI-C quoted string (`$'…'`) holding exactly `text`. */
export function ansiCQuoted(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what must be escaped
  const escaped = text.replace(/[\\'\x00-\x1f\x7f]/g, (char) => {
    if (char === '\\' || char === "'") return `\\${char}`;
    return `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`;
  });
  return `$'${escaped}'`;
}

/**
 * The keystrokes that make bash run `command`: `eval $'…'`, so a multi-line command is one
 * command (one start and one end marker) and a trailing backslash cannot leave bash waiting;
 * past the line limit, the command arrives base64-encoded in a here-document of short lines.
 */
export function commandInput(command: string, delimiterNonce: string): string {
  const direct = `eval ${ansiCQuoted(command)}\r`;
  if (direct.length <= MAX_DIRECT_LINE) return direct;
  const encoded = Buffer.from(command, 'utf8').toString('base64').match(/.{1,76}/g) ?? [];
  const delimiter = `ASSISTANT_${delimiterNonce}`;
  return `eval "$(base64 -d <<'${delimiter}'\r${encoded.join('\r')}\r${delimiter}\r)"\r`;
}
