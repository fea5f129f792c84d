// bash's brace expansion of a word's text, for judging what the word becomes: `rm -rf {/,src}`
// removes `/`. Comma lists and sequences (`{1..3}`, `{a..c}`, with a step) nest and combine as
// bash combines them; a word that would expand to more than `limit` words is not expanded here
// (null), and its caller treats it as unknown.

const DEFAULT_LIMIT = 64;

interface Group {
  start: number;
  end: number;
  alternatives: string[];
}

/** The first brace group that expands (a top-level comma or a valid sequence), or null. */
function firstGroup(text: string): Group | null {
  for (let start = text.indexOf('{'); start >= 0; start = text.indexOf('{', start + 1)) {
    let depth = 0;
    const commas: number[] = [];
    for (let index = start; index < text.length; index += 1) {
      const character = text[index];
      if (character === '{') depth += 1;
      else if (character === '}') {
        depth -= 1;
        if (depth === 0) {
          const inner = text.slice(start + 1, index);
          if (commas.length > 0) {
            const cuts = [start, ...commas, index];
            return { start, end: index, alternatives: cuts.slice(1).map((cut, at) => text.slice((cuts[at] ?? start) + 1, cut)) };
          }
          const sequence = sequenceOf(inner);
          if (sequence !== null) return { start, end: index, alternatives: sequence };
          break;
        }
      } else if (character === ',' && depth === 1) commas.push(index);
    }
  }
  return null;
}

function sequenceOf(inner: string): string[] | null {
  const numbers = /^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$/.exec(inner);
  const letters = /^([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?$/.exec(inner);
  const match = numbers ?? letters;
  if (match === null) return null;
  const from = numbers ? Number(match[1]) : (match[1] ?? 'a').charCodeAt(0);
  const to = numbers ? Number(match[2]) : (match[2] ?? 'a').charCodeAt(0);
  const step = Math.max(1, Math.abs(Number(match[3] ?? 1)));
  const count = Math.floor(Math.abs(to - from) / step) + 1;
  if (count > DEFAULT_LIMIT) return Array.from({ length: DEFAULT_LIMIT + 1 }, () => '');
  const direction = to >= from ? 1 : -1;
  return Array.from({ length: count }, (_, index) => {
    const value = from + index * step * direction;
    return numbers ? String(value) : String.fromCharCode(value);
  });
}

/** The words `text` expands to, or null when there are more than `limit`. */
export function expandBraces(text: string, limit = DEFAULT_LIMIT): string[] | null {
  const group = firstGroup(text);
  if (group === null) return [text];
  const prefix = text.slice(0, group.start);
  const suffix = text.slice(group.end + 1);
  const words: string[] = [];
  for (const alternative of group.alternatives) {
    const expanded = expandBraces(`${prefix}${alternative}${suffix}`, limit);
    if (expanded === null) return null;
    words.push(...expanded);
    if (words.length > limit) return null;
  }
  return words;
}
