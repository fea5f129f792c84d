import type { Redirect, Word } from 'mvdan-sh';
import { mergeEffects, noEffects, type Argument, type Effects, type Scope, type StdinFeed } from './command-invocation.js';
import { wordEffects, type StatementRunner } from './expansion-walk.js';
import { checkRead, checkWrite } from './path-access.js';
import { RedirOp } from './shell-syntax.js';
import { hereDocText } from './shell-words.js';

interface RedirectWalker extends StatementRunner {
  argument(word: Word, scope: Scope, remote: boolean): Argument;
}

const writeOps: ReadonlySet<number> = new Set([
  RedirOp.write, RedirOp.append, RedirOp.clobber, RedirOp.writeAll, RedirOp.appendAll, RedirOp.readWrite,
]);

/**
 * A statement's redirections, in order: targets of output redirections are writes (even
 * /dev/null makes a command medium), `< file` is a read, descriptor duplication is neither. The
 * last one aimed at fd 0 decides where the command's stdin comes from.
 */
export function applyRedirects(walker: RedirectWalker, redirs: readonly Redirect[], scope: Scope, stdin: StdinFeed): { stdin: StdinFeed; effects: Effects } {
  let feed = stdin;
  const effects: Effects[] = [];
  for (const redirect of redirs) {
    const found = mergeEffects(wordEffects(walker, redirect.Word, scope, stdin), wordEffects(walker, redirect.Hdoc, scope, stdin));
    effects.push(found);
    const fd = redirect.N?.Value ?? null;
    const toStdin = fd === null || fd === '0';
    // Bash keeps its own descriptors from 10 up (a terminal's command input among them): a
    // command that closes or replaces one (`10<&-`, `{fd}<&-` with fd=10) can point the shell at
    // input nobody analyses.
    if (fd !== null && !(/^\d+$/.test(fd) && Number(fd) < 10)) {
      walker.engine.report('high', `changes a descriptor the shell may use itself: ${walker.textOf(redirect)}`);
    }
    const target = redirect.Word === null ? null : walker.argument(redirect.Word, scope, found.network);
    if (target === null) continue;
    const site = { engine: walker.engine, scope };
    if (writeOps.has(redirect.Op)) {
      const written = checkWrite(site, target);
      const network = written.kind === 'path' && written.located.zone === 'network';
      if (network) effects.push({ ...noEffects, network });
      if (redirect.Op === RedirOp.readWrite && toStdin) feed = { kind: 'file', argument: target, remote: network };
    } else if (redirect.Op === RedirOp.dupIn || redirect.Op === RedirOp.dupOut) {
      // `2>&1`, `>&-`, `<&3` duplicate descriptors; only `>& file` writes a file.
      if (target.value.kind === 'literal' && /^(\d+-?|-)$/.test(target.value.text)) {
        // 0–2 are the command's own; a higher one was inherited (the shell's input, say).
        if (Number.parseInt(target.value.text, 10) >= 3) walker.engine.report('high', `uses an inherited descriptor: ${walker.textOf(redirect)}`);
        continue;
      }
      if (redirect.Op === RedirOp.dupOut) checkWrite(site, target);
      else checkRead(site, target);
    } else if (redirect.Op === RedirOp.read) {
      const read = checkRead(site, target);
      const network = read.kind === 'path' && read.located.zone === 'network';
      if (network) effects.push({ ...noEffects, network });
      if (toStdin) feed = { kind: 'file', argument: target, remote: network };
    } else if (redirect.Op === RedirOp.hdoc || redirect.Op === RedirOp.dashHdoc) {
      const text = hereDocText(redirect);
      if (toStdin) feed = text === null ? { kind: 'dynamic', remote: found.network } : { kind: 'script', text };
    } else if (redirect.Op === RedirOp.wordHdoc) {
      const { value } = target;
      if (toStdin) feed = value.kind === 'literal' ? { kind: 'script', text: `${value.text}\n` } : { kind: 'dynamic', remote: found.network };
    } else {
      walker.engine.report('high', `unsupported redirection: ${walker.textOf(redirect)}`);
    }
  }
  return { stdin: feed, effects: mergeEffects(...effects) };
}
