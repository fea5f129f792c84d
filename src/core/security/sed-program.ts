/** What a sed script does beyond editing the stream, as far as a scan of it can tell. */
export interface SedProgramEffects {
  /** `e` command or the `e` flag of `s`: runs shell commands. */
  runs: boolean;
  /** Files named by `w`/`W` and the `w` flag of `s`. */
  writes: string[];
  /** Files named by `r`/`R`. */
  reads: string[];
  /** The scan met something it does not understand; the script must be treated as unsafe. */
  unknown: boolean;
}

const simpleCommands = new Set(['=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F', '{', '}']);
const numberedCommands = new Set(['l', 'q', 'Q', 'L']);
const labelCommands = new Set([':', 'b', 't', 'T', 'v']);

/**
 * Scans a GNU sed script command by command. It does not need to understand regular expressions,
 * only where they end, so that an `e` or `w` can never hide inside what looks like a pattern.
 */
export function scanSedProgram(script: string): SedProgramEffects {
  const effects: SedProgramEffects = { runs: false, writes: [], reads: [], unknown: false };
  let at = 0;
  const peek = (): string => script.charAt(at);
  const restOfLine = (): string => {
    const end = script.indexOf('\n', at);
    const text = script.slice(at, end < 0 ? script.length : end);
    at = end < 0 ? script.length : end + 1;
    return text.trim();
  };
  // Skips a delimited part (regex or replacement); false when it never ends.
  const skipDelimited = (delimiter: string): boolean => {
    for (; at < script.length; at += 1) {
      const char = peek();
      if (char === '\\') at += 1;
      else if (char === delimiter) {
        at += 1;
        return true;
      }
    }
    return false;
  };
  const skipAddress = (): boolean => {
    const char = peek();
    if (/[0-9]/.test(char)) {
      at += /^\d+(~\d+)?/.exec(script.slice(at))?.[0].length ?? 0;
    } else if (char === '$') {
      at += 1;
    } else if (char === '/' || char === '\\') {
      const delimiter = char === '/' ? '/' : script.charAt(at + 1);
      at += char === '/' ? 1 : 2;
      if (!skipDelimited(delimiter)) return false;
      at += /^[IM]*/.exec(script.slice(at))?.[0].length ?? 0;
    } else if (char === '+' || char === '~') {
      at += /^[+~]\d+/.exec(script.slice(at))?.[0].length ?? 0;
    }
    return true;
  };

  while (at < script.length) {
    const char = peek();
    if (/[\s;]/.test(char)) {
      at += 1;
      continue;
    }
    if (char === '#') {
      restOfLine();
      continue;
    }
    if (!skipAddress()) return { ...effects, unknown: true };
    if (peek() === ',') {
      at += 1;
      if (!skipAddress()) return { ...effects, unknown: true };
    }
    while (/[\s!]/.test(peek()) && at < script.length) at += 1;
    const command = peek();
    at += 1;
    if (simpleCommands.has(command)) continue;
    if (numberedCommands.has(command) || labelCommands.has(command)) {
      at += /^[^;\n}]*/.exec(script.slice(at))?.[0].length ?? 0;
    } else if (command === 'a' || command === 'i' || command === 'c') {
      while (at < script.length) {
        const line = restOfLine();
        if (!line.endsWith('\\')) break;
      }
    } else if (command === 'r' || command === 'R') {
      effects.reads.push(restOfLine());
    } else if (command === 'w' || command === 'W') {
      effects.writes.push(restOfLine());
    } else if (command === 'e') {
      effects.runs = true;
      restOfLine();
    } else if (command === 's' || command === 'y') {
      const delimiter = peek();
      at += 1;
      if (delimiter === '' || delimiter === '\n' || delimiter === '\\' || !skipDelimited(delimiter) || !skipDelimited(delimiter)) {
        return { ...effects, unknown: true };
      }
      if (command === 's') scanSubstituteFlags();
    } else {
      return { ...effects, unknown: true };
    }
  }
  return effects;

  function scanSubstituteFlags(): void {
    for (;;) {
      const flag = peek();
      if (flag === 'e') effects.runs = true;
      if (flag === 'w') {
        at += 1;
        effects.writes.push(restOfLine());
        return;
      }
      if (!/[gpiImMe0-9]/.test(flag) || at >= script.length) return;
      at += 1;
    }
  }
}
