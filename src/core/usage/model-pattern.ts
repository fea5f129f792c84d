/**
 * An allow pattern of CONTRACT §13 (`*` matches any run of characters, also none; letters match
 * either case), matched without a regular expression: `*` compiled to `.*` backtracks, and a few
 * of them against a long model name the caller chose held the event loop for minutes. This walk
 * keeps only the last `*` to fall back to, so it takes at most pattern × name steps.
 */
export function compileModelPattern(pattern: string): (name: string) => boolean {
  const lowered = pattern.toLowerCase();
  return (name) => wildcardMatches(lowered, name.toLowerCase());
}

function wildcardMatches(pattern: string, name: string): boolean {
  let p = 0;
  let n = 0;
  // Where the last `*` was, and how much of the name it has swallowed so far.
  let star = -1;
  let resume = 0;
  while (n < name.length) {
    if (p < pattern.length && pattern[p] !== '*' && pattern[p] === name[n]) {
      p++;
      n++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      resume = n;
    } else if (star !== -1) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}
