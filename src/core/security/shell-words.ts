import type { DblQuoted, Lit, ParamExp, Redirect, Word } from 'mvdan-sh';
import { wordPart } from './shell-syntax.js';

/**
 * What a word stands for once the shell has expanded it, as far as that is knowable without
 * running anything:
 * - `literal`: the text after tilde expansion and quote removal. `glob` is the index of the first
 *   unquoted pattern character (`*`, `?`, `[…]`, an extended glob or a brace expansion), -1 if none;
 *   `brace` says a brace expansion (`{a,b}`, `{1..3}`) is present, which mvdan-sh leaves in the text.
 * - `process`: exactly one process substitution, `<(…)` or `>(…)`, which expands to a /dev/fd path.
 * - `dynamic`: anything else (parameters, command substitution, `$'…'`, `~user`, …).
 */
export type WordValue =
  | { kind: 'literal'; text: string; glob: number; brace: boolean }
  | { kind: 'process' }
  | { kind: 'dynamic' };

/** The few expansions that are known statically: `~`, `$HOME`, `${HOME}`, `$PWD`, `${PWD}`, `~+`. */
export interface KnownExpansions {
  /** null when the line assigned HOME itself, so `~` no longer means context.home. */
  home: string | null;
  cwd: string | null;
}

const dynamic: WordValue = { kind: 'dynamic' };
const QUOTED = '\u0000';

/** Accumulates expanded text plus a mask in which quoted characters are blanked out. */
class Expanded {
  text = '';
  mask = '';
  extGlobAt = -1;

  add(chars: string, quoted: boolean): void {
    this.text += chars;
    this.mask += quoted ? QUOTED.repeat(chars.length) : chars;
  }
}

export function wordValue(word: Word, known: KnownExpansions): WordValue {
  const parts = word.Parts;
  if (parts.length === 1 && parts[0] !== undefined && wordPart(parts[0]).kind === 'ProcSubst') return { kind: 'process' };
  const out = new Expanded();
  for (const [index, node] of parts.entries()) {
    const part = wordPart(node);
    switch (part.kind) {
      case 'Lit': {
        const value = index === 0 ? expandTilde(part.node, known, out) : part.node.Value;
        if (value === null) return dynamic;
        addUnquotedLiteral(value, out);
        break;
      }
      case 'SglQuoted':
        // $'…' could be decoded, but an attacker picks escapes we might decode differently from bash.
        if (part.node.Dollar) return dynamic;
        out.add(part.node.Value, true);
        break;
      case 'DblQuoted':
        if (!addDoubleQuoted(part.node, known, out)) return dynamic;
        break;
      case 'ParamExp': {
        const value = knownParameter(part.node, known);
        if (value === null) return dynamic;
        out.add(value, true);
        break;
      }
      case 'ExtGlob':
        if (out.extGlobAt < 0) out.extGlobAt = out.text.length;
        out.add(`(${part.node.Pattern.Value})`, false);
        break;
      case 'CmdSubst':
      case 'ArithmExp':
      case 'ProcSubst':
      case 'other':
        return dynamic;
    }
  }
  return finish(out);
}

function finish(out: Expanded): WordValue {
  const brace = /\{[^{}]*(,|\.\.)[^{}]*\}/.exec(out.mask);
  const candidates = [globIndex(out.mask), brace ? brace.index : -1, out.extGlobAt].filter((index) => index >= 0);
  return { kind: 'literal', text: out.text, glob: candidates.length > 0 ? Math.min(...candidates) : -1, brace: brace !== null };
}

function globIndex(mask: string): number {
  for (let index = 0; index < mask.length; index += 1) {
    const char = mask[index];
    if (char === '*' || char === '?') return index;
    // A lone `[` is literal in bash (it is how the `[` command is spelt); only `[…]` matches.
    if (char === '[' && mask.indexOf(']', index + 1) > index) return index;
  }
  return -1;
}

/** Tilde expansion of the word's leading unquoted text; returns the rest of the Lit, or null if unknown. */
function expandTilde(lit: Lit, known: KnownExpansions, out: Expanded): string | null {
  const value = lit.Value;
  if (!value.startsWith('~')) return value;
  const slash = value.indexOf('/');
  const prefix = slash < 0 ? value : value.slice(0, slash);
  const replacement = prefix === '~' ? known.home : prefix === '~+' ? known.cwd : null;
  if (replacement === null) return null;
  out.add(replacement, true);
  return slash < 0 ? '' : value.slice(slash);
}

function addUnquotedLiteral(raw: string, out: Expanded): void {
  for (let index = 0; index < raw.length; index += 1) {
    const char = raw.charAt(index);
    if (char === '\\' && index + 1 < raw.length) {
      index += 1;
      out.add(raw.charAt(index), true);
    } else {
      out.add(char, false);
    }
  }
}

function addDoubleQuoted(node: DblQuoted, known: KnownExpansions, out: Expanded): boolean {
  if (node.Dollar) return false;
  for (const inner of node.Parts) {
    const part = wordPart(inner);
    if (part.kind === 'Lit') {
      out.add(unescapeDoubleQuoted(part.node.Value), true);
    } else if (part.kind === 'ParamExp') {
      const value = knownParameter(part.node, known);
      if (value === null) return false;
      out.add(value, true);
    } else {
      return false;
    }
  }
  return true;
}

/** Inside double quotes a backslash only escapes `$`, backquote, `"`, `\` and newline. */
export function unescapeDoubleQuoted(raw: string): string {
  return raw.replace(/\\([$`"\\\n])/g, (_match, char: string) => (char === '\n' ? '' : char));
}

function knownParameter(node: ParamExp, known: KnownExpansions): string | null {
  if (node.Excl || node.Length || node.Index !== null || node.Exp !== null || node.Repl !== null || node.Slice !== null) return null;
  const name = node.Param?.Value;
  if (name === 'HOME') return known.home;
  if (name === 'PWD') return known.cwd;
  return null;
}

/** The plain text of a word, or null when it is not a literal free of patterns. */
export function plainText(value: WordValue): string | null {
  return value.kind === 'literal' && value.glob < 0 ? value.text : null;
}

/** A literal value made from text that is known exactly (a cut-off option value, a synthetic operand). */
export function literalValue(text: string, glob = -1): WordValue {
  return { kind: 'literal', text, glob, brace: false };
}

/**
 * The text a here-document feeds to its command, or null when it has expansions in it. With a
 * quoted delimiter (`<<'EOF'`) the body is taken verbatim; otherwise `\$`, `` \` `` and `\\` are
 * unescaped (mvdan-sh has already removed line continuations).
 */
export function hereDocText(redirect: Redirect): string | null {
  const body = redirect.Hdoc;
  if (body === null) return '';
  const quotedDelimiter = redirect.Word?.Parts.some((part) => {
    const tagged = wordPart(part);
    return tagged.kind !== 'Lit' || tagged.node.Value.includes('\\');
  }) ?? false;
  let text = '';
  for (const node of body.Parts) {
    const part = wordPart(node);
    if (part.kind !== 'Lit') return null;
    text += quotedDelimiter ? part.node.Value : part.node.Value.replace(/\\([$`\\])/g, '$1');
  }
  return text;
}
