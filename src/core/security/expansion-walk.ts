import type { Node, ParamExp, Stmt, Word } from 'mvdan-sh';
import { copyScope, mergeEffects, noEffects, type Effects, type Engine, type Scope, type StdinFeed } from './command-invocation.js';
import {
  arithmAssignOps, arithmNode, arithmeticTestOps, arithmStepOps, ProcSubstOp, testNode, unaryTestVarSet, wordPart,
} from './shell-syntax.js';
import { wordValue } from './shell-words.js';
import { checkAssignedName, runsCodeInArithmetic } from './variable-assignments.js';

/** What the expansion walk needs from the line analysis: running nested statements. */
export interface StatementRunner {
  readonly engine: Engine;
  statements(stmts: readonly Stmt[], scope: Scope, stdin: StdinFeed): Effects;
  textOf(node: Node): string;
}

/** `${x=v}` and `${x:=v}` assign to x. */
const assigningExpansionOps: ReadonlySet<number> = new Set([74, 75]);

/**
 * Walks every place inside a word where a command can hide: command and process substitution,
 * arithmetic, parameter expansion operands (`${x:-$(cmd)}`), nested double quotes. Substitutions
 * run in a subshell, so each gets a copy of the scope; they inherit the caller's stdin.
 */
export function wordEffects(runner: StatementRunner, word: Word | null, scope: Scope, stdin: StdinFeed): Effects {
  return word === null ? noEffects : partsEffects(runner, word.Parts, scope, stdin);
}

function partsEffects(runner: StatementRunner, parts: readonly Node[], scope: Scope, stdin: StdinFeed): Effects {
  const all: Effects[] = [];
  for (const node of parts) {
    const part = wordPart(node);
    switch (part.kind) {
      case 'CmdSubst':
        all.push(runner.statements(part.node.Stmts, copyScope(scope), stdin));
        break;
      case 'ProcSubst': {
        // `>(cmd)` reads what the outer command writes, as a pipeline stage would.
        const feed: StdinFeed = part.node.Op === ProcSubstOp.out ? { kind: 'pipe' } : stdin;
        all.push(runner.statements(part.node.Stmts, copyScope(scope, { concurrent: true }), feed));
        break;
      }
      case 'DblQuoted':
        all.push(partsEffects(runner, part.node.Parts, scope, stdin));
        break;
      case 'ParamExp':
        all.push(parameterEffects(runner, part.node, scope, stdin));
        break;
      case 'ArithmExp':
        all.push(arithmeticEffects(runner, part.node.X, scope, stdin));
        break;
      case 'Lit':
      case 'SglQuoted':
      case 'ExtGlob':
        break;
      case 'other':
        runner.engine.report('high', `unsupported word part: ${part.type}`);
    }
  }
  return mergeEffects(...all);
}

function parameterEffects(runner: StatementRunner, node: ParamExp, scope: Scope, stdin: StdinFeed): Effects {
  const name = node.Param?.Value;
  if (name !== undefined && node.Exp !== null && assigningExpansionOps.has(node.Exp.Op)) {
    checkAssignedName(runner.engine, scope, name);
  }
  return mergeEffects(
    wordEffects(runner, node.Exp?.Word ?? null, scope, stdin),
    wordEffects(runner, node.Repl?.Orig ?? null, scope, stdin),
    wordEffects(runner, node.Repl?.With ?? null, scope, stdin),
    arithmeticEffects(runner, node.Slice?.Offset ?? null, scope, stdin),
    arithmeticEffects(runner, node.Slice?.Length ?? null, scope, stdin),
    arithmeticEffects(runner, node.Index, scope, stdin),
  );
}

/** Arithmetic: substitutions inside it, assignments to dangerous names, text that re-evaluates as code. */
export function arithmeticEffects(runner: StatementRunner, node: Node | null, scope: Scope, stdin: StdinFeed): Effects {
  if (node === null) return noEffects;
  const arithm = arithmNode(node);
  switch (arithm.kind) {
    case 'Word':
      checkArithmeticText(runner, arithm.node, scope);
      return wordEffects(runner, arithm.node, scope, stdin);
    case 'BinaryArithm':
      if (arithmAssignOps.has(arithm.node.Op)) checkArithmeticTarget(runner, arithm.node.X, scope);
      return mergeEffects(
        arithmeticEffects(runner, arithm.node.X, scope, stdin),
        arithmeticEffects(runner, arithm.node.Y, scope, stdin),
      );
    case 'UnaryArithm':
      if (arithmStepOps.has(arithm.node.Op)) checkArithmeticTarget(runner, arithm.node.X, scope);
      return arithmeticEffects(runner, arithm.node.X, scope, stdin);
    case 'ParenArithm':
      return arithmeticEffects(runner, arithm.node.X, scope, stdin);
    case 'other':
      runner.engine.report('high', `unsupported arithmetic: ${arithm.type}`);
      return noEffects;
  }
}

function checkArithmeticTarget(runner: StatementRunner, target: Node, scope: Scope): void {
  const arithm = arithmNode(target);
  if (arithm.kind !== 'Word') return;
  const value = wordValue(arithm.node, scope);
  if (value.kind === 'literal') checkAssignedName(runner.engine, scope, value.text);
}

// bash evaluates array subscripts found in arithmetic text, and `$(…)` there runs a command that
// the parser never saw as one (`let 'a[$(id)]=1'`, `[[ -v 'a[$(id)]' ]]`).
function checkArithmeticText(runner: StatementRunner, word: Word, scope: Scope): void {
  const value = wordValue(word, scope);
  if (value.kind === 'literal' && runsCodeInArithmetic(value.text)) {
    runner.engine.report('high', `arithmetic text runs code that cannot be analysed: ${runner.textOf(word)}`);
  }
}

/** `[[ … ]]`: substitutions in its words, and the operands bash evaluates as arithmetic. */
export function testEffects(runner: StatementRunner, node: Node, scope: Scope, stdin: StdinFeed): Effects {
  const test = testNode(node);
  switch (test.kind) {
    case 'Word':
      return wordEffects(runner, test.node, scope, stdin);
    case 'UnaryTest':
      if (test.node.Op === unaryTestVarSet) checkTestOperand(runner, test.node.X, scope);
      return testEffects(runner, test.node.X, scope, stdin);
    case 'BinaryTest':
      if (arithmeticTestOps.has(test.node.Op)) {
        checkTestOperand(runner, test.node.X, scope);
        checkTestOperand(runner, test.node.Y, scope);
      }
      return mergeEffects(testEffects(runner, test.node.X, scope, stdin), testEffects(runner, test.node.Y, scope, stdin));
    case 'ParenTest':
      return testEffects(runner, test.node.X, scope, stdin);
    case 'other':
      runner.engine.report('high', `unsupported test expression: ${test.type}`);
      return noEffects;
  }
}

function checkTestOperand(runner: StatementRunner, node: Node, scope: Scope): void {
  const test = testNode(node);
  if (test.kind === 'Word') checkArithmeticText(runner, test.node, scope);
}
