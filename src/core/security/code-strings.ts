import { copyScope, noEffects, type Argument, type Effects, type Invocation } from './command-invocation.js';
import { checkRead } from './path-access.js';
import { plainText } from './shell-words.js';

const readsCode: Effects = { network: false, stdinCode: true, decoder: false };

/**
 * Shell code handed over as one word (`bash -c`, `su -c`, `trap`, an alias body): a literal is
 * parsed and analysed like a line of its own; anything else cannot be seen, and is critical when
 * it is filled from the network (`sh -c "$(curl …)"`).
 */
export function runCodeArgument(invocation: Invocation, code: Argument, label: string, shareScope = false): Effects {
  const text = plainText(code.value);
  if (text === null) {
    reportHiddenCode(invocation, code.remote, label);
    return noEffects;
  }
  return invocation.engine.runScript(text, shareScope ? invocation.scope : copyScope(invocation.scope), invocation.stdin);
}

export const interactiveReason = (label: string) => `starts an interactive interpreter: ${label} (each line typed into it is judged as it is sent)`;

export function reportHiddenCode(invocation: Pick<Invocation, 'engine'>, remote: boolean, label: string): void {
  if (remote) invocation.engine.report('critical', `runs remote code: ${label}`);
  else invocation.engine.report('high', `runs code that cannot be analysed: ${label}`);
}

/**
 * A shell or interpreter that takes its program from standard input. From a pipe, the pipeline
 * decides (it knows what feeds it); a literal here-document is analysed when the reader is a
 * shell; a terminal means an interactive session: what is typed into it later (the terminal
 * socket's `input`) is never analysed, so it is high and confirmed first.
 */
export function runStdinProgram(invocation: Invocation, label: string, isShell: boolean): Effects | undefined {
  const { engine, stdin } = invocation;
  switch (stdin.kind) {
    case 'terminal':
      engine.report('high', interactiveReason(label));
      return undefined;
    case 'pipe':
      return readsCode;
    case 'script':
      if (isShell) return engine.runScript(stdin.text, copyScope(invocation.scope), { kind: 'terminal' });
      engine.report('high', `runs inline interpreter code: ${label} <<`);
      return undefined;
    case 'dynamic':
      reportHiddenCode(invocation, stdin.remote, `${label} <<`);
      return undefined;
    case 'file':
      if (stdin.remote) reportHiddenCode(invocation, true, `${label} <`);
      else if (readsTerminal(stdin.argument.text)) engine.report('high', interactiveReason(label));
      else engine.report('medium', `runs a script: ${stdin.argument.text}`);
      return undefined;
  }
}

/** `bash script.sh`, `python3 tool.py`, `source f`: a script file, or `<(…)` whose code is unseen. */
export function runScriptOperand(invocation: Invocation, script: Argument, label: string): Effects | undefined {
  if (script.value.kind === 'process') {
    reportHiddenCode(invocation, script.remote, `${label} <(…)`);
    return undefined;
  }
  if (readsTerminal(script.text)) {
    // `curl … | source /dev/stdin`: the code is what the pipe carries, judged where the pipe is.
    if (invocation.stdin.kind === 'pipe' && /^\/(dev\/stdin|dev\/fd\/0|proc\/[^/]+\/fd\/0)$/.test(script.text)) return readsCode;
    invocation.engine.report('high', interactiveReason(label));
    return undefined;
  }
  invocation.engine.report('medium', `runs a script: ${script.text}`);
  checkRead(invocation, script);
  return undefined;
}

/**
 * `source /dev/tty`, `bash /dev/stdin`, `. /proc/self/fd/0`: code read from the terminal, or from
 * a descriptor that may be it, is typed later and never analysed, as in an interactive session.
 */
function readsTerminal(path: string): boolean {
  return /^\/dev\/(tty\w*|stdin|console|pts\/.*|fd\/.*)$/.test(path) || /^\/proc\/[^/]+\/fd\//.test(path);
}
