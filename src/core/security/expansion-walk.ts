import type { Node, ParamExp, Stmt, Word } from 'mvdan-sh';
import { copyScope, mergeEffects, noEffects, type Effects, type Engine, type Scope, type StdinFeed } from './command-invocation.js';
import {
  arithmAssignOps, arithmNode, arithmeticTestOps, arithmStepOps, ProcSubstOp, testNode, unaryTestVarSet, wordPart,
} from './shell-syntax.js';
import { literalValue, wordValue } from './shell-words.js';
import { recordNamedValue } from './state-changes.js';
import { checkAssignedName, runsCodeInArithmetic } from './variable-assignments.js';

/** What the expansion walk needs from the line analysis: running nested statements. */
export interface StatementRunner {
  readonly engine: Engine;
  statements(stmts: readonly Stmt[], scope: Scope, stdin: StdinFeed): Effects;
  textOf(node: Node): string;
}

/** `${x=v}` and `${x:=v}` assign to x. */
const assigningExpansionOps: ReadonlySet<number> = new Set([74, 75]);
/** `${x@op}`: with op `P`, the value is expanded as a prompt string, which runs `$(…)` in it. */
const otherParamOps = 84;

const LITERAL_NUMBER = /^\s*-?(0[xX][0-9a-fA-F]+|[0-9]+(#[0-9A-Za-z@_]+)?)\s*$/;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

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
        // `>(cmd)` reads what the outer command writes, as a pipeline stage would: a shell there
        // runs whatever that command prints, which nobody can see here.
        const output = part.node.Op === ProcSubstOp.out;
        const inner = runner.statements(part.node.Stmts, copyScope(scope, { concurrent: true }), output ? { kind: 'pipe' } : stdin);
        if (output && inner.stdinCode) runner.engine.report('high', 'runs code from a pipe that cannot be analysed');
        all.push(output ? { ...inner, stdinCode: false } : inner);
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
    // The default it may assign stays in the shell; to a `declare -i` name it is arithmetic.
    const value = node.Exp.Word === null ? literalValue('') : wordValue(node.Exp.Word, scope);
    recordNamedValue(runner.engine, scope, name, value.kind === 'literal' ? value.text : null);
  }
  // CONTRACT §11: `${!x}` looks up the variable x names, and a name with a subscript evaluates it
  // as arithmetic; `${x@P}` expands x's value as a prompt, running any `$(…)` in it.
  // `${arr[@]}` / `${arr[*]}` are every element, and `${!arr[@]}` every key: no arithmetic there.
  const allElements = node.Index !== null && /^[@*]$/.test(runner.textOf(node.Index));
  if (node.Excl && node.Names === 0 && !allElements) runner.engine.report('high', `indirect expansion evaluates a value as code: ${runner.textOf(node)}`);
  if (node.Exp?.Op === otherParamOps && /P/.test(runner.textOf(node.Exp.Word ?? node))) {
    runner.engine.report('high', `prompt expansion runs code in a value: ${runner.textOf(node)}`);
  }
  if (allElements || (node.Index !== null && name !== undefined && isAssociativeName(name, scope))) {
    return mergeEffects(
      wordEffects(runner, node.Exp?.Word ?? null, scope, stdin),
      wordEffects(runner, node.Repl?.Orig ?? null, scope, stdin),
      wordEffects(runner, node.Repl?.With ?? null, scope, stdin),
      arithmeticEffects(runner, node.Slice?.Offset ?? null, scope, stdin),
      arithmeticEffects(runner, node.Slice?.Length ?? null, scope, stdin),
      wordEffects(runner, asIndexWord(node.Index), scope, stdin),
    );
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
      if (arithmAssignOps.has(arithm.node.Op)) {
        checkArithmeticTarget(runner, arithm.node.X, scope);
        // The right side is judged as an operand; the target then holds an integer.
        const effects = arithmeticEffects(runner, arithm.node.Y, scope, stdin);
        knowInteger(runner, arithm.node.X, scope);
        return effects;
      }
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

/** After an arithmetic assignment its target holds an integer, whatever it held before. */
function knowInteger(runner: StatementRunner, target: Node, scope: Scope): void {
  const arithm = arithmNode(target);
  if (arithm.kind !== 'Word') return;
  const value = wordValue(arithm.node, scope);
  if (value.kind !== 'literal' || !VARIABLE_NAME.test(value.text)) return;
  if (!scope.state.integers.includes(value.text)) scope.state.integers.push(value.text);
}

/**
 * An operand of arithmetic (CONTRACT §11, "Expansions that evaluate code"): bash evaluates a
 * variable's value as arithmetic in turn, where `a[$(cmd)]` runs cmd. Only a literal number, or a
 * name this shell is known to hold a literal integer in, is safe; anything else is high.
 */
function checkArithmeticText(runner: StatementRunner, word: Word, scope: Scope): void {
  if (isIntegerExpansion(word, scope)) return;
  const value = wordValue(word, scope);
  const text = runner.textOf(word);
  if (value.kind !== 'literal') {
    runner.engine.report('high', `arithmetic evaluates a value that cannot be known: ${text}`);
    return;
  }
  if (LITERAL_NUMBER.test(value.text)) return;
  if (VARIABLE_NAME.test(value.text)) {
    if (!scope.state.integers.includes(value.text)) runner.engine.report('high', `arithmetic evaluates the value of ${value.text} as code`);
    return;
  }
  if (runsCodeInArithmetic(value.text)) runner.engine.report('high', `arithmetic text runs code that cannot be analysed: ${text}`);
  else runner.engine.report('high', `arithmetic evaluates a value that cannot be known: ${text}`);
}

/** `$#`, `$?`, `$$`, `$!`: always an integer, whatever earlier lines did. */
const INTEGER_PARAMETERS: ReadonlySet<string> = new Set(['#', '?', '$', '!']);

/**
 * `$n`, `${n}` of a name known to hold an integer, a special parameter that always does, or a
 * length `${#x}`: the expansion is a number before arithmetic sees it.
 */
function isIntegerExpansion(word: Word, scope: Scope): boolean {
  const [only] = word.Parts;
  if (only === undefined || word.Parts.length !== 1) return false;
  const part = wordPart(only);
  if (part.kind !== 'ParamExp') return false;
  const { Param, Excl, Length, Index, Exp, Repl, Slice } = part.node;
  const name = Param?.Value;
  if (name === undefined || Excl || Index !== null || Exp !== null || Repl !== null || Slice !== null) return false;
  return Length || INTEGER_PARAMETERS.has(name) || scope.state.integers.includes(name);
}

/** `[[ … ]]`: substitutions in its words, and the operands bash evaluates as arithmetic. */
export function testEffects(runner: StatementRunner, node: Node, scope: Scope, stdin: StdinFeed): Effects {
  const test = testNode(node);
  switch (test.kind) {
    case 'Word':
      return wordEffects(runner, test.node, scope, stdin);
    case 'UnaryTest':
      if (test.node.Op === unaryTestVarSet) checkSetTestOperand(runner, test.node.X, scope);
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

/**
 * `[[ -v name ]]` reads no value, but `[[ -v a[sub] ]]` evaluates sub as arithmetic, where a name
 * that is not a known integer, or `$(…)`, runs code.
 */
function checkSetTestOperand(runner: StatementRunner, node: Node, scope: Scope): void {
  const test = testNode(node);
  if (test.kind !== 'Word') return;
  const value = wordValue(test.node, scope);
  checkNamedVariable(runner.engine, scope, value.kind === 'literal' ? value.text : null, runner.textOf(test.node));
}

/**
 * A variable named as an operand (`[[ -v a[i] ]]`, `test -v`, `unset`, `declare -p`): bash
 * evaluates an indexed array's subscript there as arithmetic, where `$(…)`, or a name holding
 * `a[$(…)]`, runs a command (CONTRACT §11). `name` is null when it cannot be known.
 */
export function checkNamedVariable(engine: Engine, scope: Scope, name: string | null, spelling: string): void {
  if (name === null) {
    engine.report('high', `names a variable that cannot be known: ${spelling}`);
    return;
  }
  const subscript = /^[A-Za-z_][A-Za-z0-9_]*\[(.*)\]$/s.exec(name)?.[1];
  if (subscript === undefined || LITERAL_NUMBER.test(subscript) || subscript === '@' || subscript === '*') return;
  const base = name.slice(0, name.indexOf('['));
  if (isAssociativeName(base, scope) && !/[$`]/.test(subscript)) return;
  if (VARIABLE_NAME.test(subscript) && scope.state.integers.includes(subscript)) return;
  engine.report('high', `arithmetic evaluates a subscript as code: ${name}`);
}

/** Arrays whose subscripts are strings: bash's own, and those this shell declared with `declare -A`. */
function isAssociativeName(name: string, scope: Scope): boolean {
  return name === 'BASH_ALIASES' || name === 'BASH_CMDS' || scope.state.associative.includes(name);
}

function asIndexWord(node: Node): Word | null {
  const arithm = arithmNode(node);
  return arithm.kind === 'Word' ? arithm.node : null;
}
