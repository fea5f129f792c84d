import type { FuncDecl, Stmt } from 'mvdan-sh';
import { copyScope, noEffects, type Effects, type Engine, type Scope, type StdinFeed } from './command-invocation.js';
import { checkDefinedName, defineFunction } from './state-changes.js';

interface FunctionWalker {
  readonly engine: Engine;
  textOf(node: Stmt): string;
  readonly functions: Map<string, Effects>;
  statements(stmts: readonly Stmt[], scope: Scope, stdin: StdinFeed): Effects;
}

/**
 * A function definition. The body is analysed now, as if called here, because the persistent
 * shell may call it from any later line. A name that shadows a command or builtin changes what
 * later lines run; a body that calls its own function in a pipeline or in the background is a
 * fork bomb (the scope's `defining` list lets the call site see that).
 */
export function functionEffects(walker: FunctionWalker, node: FuncDecl, scope: Scope): Effects {
  const { engine } = walker;
  const name = node.Name.Value;
  checkDefinedName(engine, 'function', name);
  engine.report('medium', `defines a function: ${name}`);
  // Kept for later lines of this shell, which run it as its body (CONTRACT §11).
  defineFunction(scope, name, walker.textOf(node.Body));
  const body = copyScope(scope, { defining: [...scope.defining, name], concurrent: false });
  // Walked as if fed by a pipe, so that `f() { sh; }; curl … | f` is seen for what it is.
  walker.functions.set(name, walker.statements([node.Body], body, { kind: 'pipe' }));
  return noEffects;
}
