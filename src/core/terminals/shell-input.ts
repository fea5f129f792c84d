// How a command travels to the terminal's bash: exactly as typed, whatever its quotes, newlines,
// control characters or length, and as one command that bash reads and runs as a whole.

/** Canonical TTY input cuts lines at 4095 bytes: longer commands travel as base64 lines. */
const MAX_DIRECT_LINE = 3000;

/**
 * A bash ANSI-C quoted string (`$'…'`) holding exactly `text`, in printable ASCII only: control
 * characters and every byte of a non-ASCII character are escaped, so the terminal driver gives
 * none of them a meaning and the line's length in bytes is its length in characters.
 */
export function ansiCQuoted(text: string): string {
  let quoted = "$'";
  for (const byte of Buffer.from(text, 'utf8')) {
    if (byte === 0x5c || byte === 0x27) quoted += `\\${String.fromCharCode(byte)}`;
    else if (byte >= 0x20 && byte < 0x7f) quoted += String.fromCharCode(byte);
    else quoted += `\\x${byte.toString(16).padStart(2, '0')}`;
  }
  return `${quoted}'`;
}

/**
 * The keystrokes that make bash run `command`: one line that first prints the start marker (to
 * the terminal itself, where no redirection of the command can hide it) and then runs the
 * command through `eval`, so a multi-line command is one command and a trailing backslash cannot
 * leave bash waiting. Lines end in `\n`, which no `stty` setting turns into something else. Past
 * the line limit, the command arrives base64-encoded in a here-document of short lines.
 */
export function commandInput(command: string, startMarker: string, delimiterNonce: string): string {
  const direct = `${startMarker}; eval ${ansiCQuoted(command)}\n`;
  if (direct.length <= MAX_DIRECT_LINE) return direct;
  const encoded = Buffer.from(command, 'utf8').toString('base64').match(/.{1,76}/g) ?? [];
  const delimiter = `ASSISTANT_${delimiterNonce}`;
  return `${startMarker}; eval "$(base64 -d <<'${delimiter}'\n${encoded.join('\n')}\n${delimiter}\n)"\n`;
}
