// How a command travels to the terminal's bash: exactly as typed, whatever its quotes, newlines,
// control characters or length, and as one command that bash reads and runs as a whole. Bash
// reads its commands from a pipe of ours, never from the terminal (see shell-session.ts).

/**
 * A bash ANSI-C quoted string (`$'…'`) holding exactly `text`, in printable ASCII only: control
 * characters and every byte of a non-ASCII character are escaped, so the line holds no newline
 * but its last and no byte that means anything but itself.
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
 * The line that makes bash run `command`: the preamble (the start marker, printed to the terminal
 * itself where no redirection of the command can hide it, after the typeahead discard when one is
 * due), then the command through `eval`, so a multi-line command is one command and a trailing
 * backslash cannot leave bash waiting. The command's standard input is the terminal; the
 * redirection on `eval` also gives bash its own input back afterwards, so not even
 * `exec </dev/tty` inside the command can make bash take its next commands from the terminal.
 */
export function commandInput(command: string, preamble: string): string {
  return `${preamble}; eval ${ansiCQuoted(command)} </dev/tty\n`;
}
