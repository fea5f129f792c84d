/** What an awk program does beyond reading its input and printing, as far as a scan can tell. */
export interface AwkProgramEffects {
  /** `system()`, a pipe to or from a command (`print | "cmd"`, `"cmd" | getline`), gawk's `|&`. */
  runs: boolean;
  /** Literal files written by `print > "file"` / `>>`. */
  writes: string[];
  /** Literal files read by `getline < "file"`. */
  reads: string[];
  /** A redirection to or from a computed name, `@load`/`@include`, /inet/ files, or text the scan cannot follow. */
  unknown: boolean;
  network: boolean;
}

type Token = { kind: 'string'; text: string } | { kind: 'word'; text: string } | { kind: 'op'; text: string };

// After one of these a `/` starts a regular expression; after an operand it divides.
const regexAfter = /^(|[(,{};!~&|=?:<>+\-*%^\n]|print|printf|return|in)$/;

function label(token: Token | undefined): string {
  if (token === undefined) return '';
  return token.kind === 'string' ? '"' : token.text;
}

function tokenize(program: string): Token[] | null {
  const tokens: Token[] = [];
  let at = 0;
  while (at < program.length) {
    const char = program.charAt(at);
    if (char === '#') {
      const end = program.indexOf('\n', at);
      at = end < 0 ? program.length : end;
    } else if (char === '\\' && program.charAt(at + 1) === '\n') {
      at += 2;
    } else if (char === ' ' || char === '\t' || char === '\r') {
      at += 1;
    } else if (char === '"' || (char === '/' && regexAfter.test(label(tokens.at(-1))))) {
      let text = '';
      at += 1;
      while (at < program.length && program.charAt(at) !== char) {
        if (program.charAt(at) === '\\') {
          text += program.charAt(at + 1);
          at += 2;
        } else {
          text += program.charAt(at);
          at += 1;
        }
      }
      if (at >= program.length) return null;
      at += 1;
      tokens.push(char === '"' ? { kind: 'string', text } : { kind: 'op', text: '/regex/' });
    } else if (/[A-Za-z_@]/.test(char)) {
      const word = /^@?[A-Za-z_][A-Za-z0-9_]*/.exec(program.slice(at))?.[0] ?? char;
      tokens.push({ kind: 'word', text: word });
      at += word.length;
    } else {
      const op = /^(\|\||\|&|>>|&&|[<>!=]=|\n|.)/s.exec(program.slice(at))?.[0] ?? char;
      tokens.push({ kind: 'op', text: op });
      at += op.length;
    }
  }
  return tokens;
}

/**
 * Scans an awk program (POSIX awk, gawk, mawk). A `>` inside an unparenthesised print statement is
 * always a redirection in awk, and `<` after getline always reads a file, so both can be found
 * without a full parser; anything the scan cannot follow counts as unknown.
 */
export function scanAwkProgram(program: string): AwkProgramEffects {
  const effects: AwkProgramEffects = { runs: false, writes: [], reads: [], unknown: false, network: false };
  const tokens = tokenize(program);
  if (tokens === null) return { ...effects, unknown: true };
  let inPrint = false;
  let depth = 0;
  tokens.forEach((token, index) => {
    const next = tokens[index + 1];
    if (token.kind === 'string' && token.text.startsWith('/inet')) effects.network = true;
    if (token.kind === 'word') {
      if (token.text === 'system' && next?.text === '(') effects.runs = true;
      if (token.text.startsWith('@')) effects.unknown = true;
      if (token.text === 'print' || token.text === 'printf') {
        inPrint = true;
        depth = 0;
      }
      if (token.text === 'getline') readTarget(index);
      return;
    }
    if (token.kind !== 'op') return;
    if (token.text === '|' || token.text === '|&') effects.runs = true;
    if (token.text === '(') depth += 1;
    if (token.text === ')') depth -= 1;
    if ([';', '\n', '}', '{'].includes(token.text)) inPrint = false;
    if (inPrint && depth <= 0 && (token.text === '>' || token.text === '>>')) {
      if (next?.kind === 'string') effects.writes.push(next.text);
      else effects.unknown = true;
      inPrint = false;
    }
  });
  return effects;

  function readTarget(index: number): void {
    let at = index + 1;
    if (tokens?.[at]?.kind === 'word') at += 1;
    if (tokens?.[at]?.text !== '<') return;
    const target = tokens[at + 1];
    if (target?.kind === 'string') effects.reads.push(target.text);
    else effects.unknown = true;
  }
}
