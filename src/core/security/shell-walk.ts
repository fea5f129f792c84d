import { posix } from 'node:path';
import type { Assign, BinaryCmd, CallExpr, ForClause, IfClause, Node, Stmt, Word } from 'mvdan-sh';
import { ruleFor, runsScriptByPath, unknownCommandName } from './command-rules.js';
import {
  copyScope, mergeEffects, noEffects, type Argument, type Effects, type Engine, type Scope, type StdinFeed,
} from './command-invocation.js';
import { arithmeticEffects, testEffects, wordEffects, type StatementRunner } from './expansion-walk.js';
import type { Findings } from './findings.js';
import type { PathPolicy } from './path-scope.js';
import type { RiskLevel } from './risk-levels.js';
import { applyRedirects } from './redirections.js';
import { arithmNode, BinaryCmdOp, commandNode, loopNode, parseShell, SourceText, wordPart } from './shell-syntax.js';
import { wordValue, type WordValue } from './shell-words.js';
import { checkAssignedName } from './variable-assignments.js';
import { declarationEffects } from './declarations.js';
import { functionEffects } from './function-definitions.js';
import { cloneShellState, isActingVariable, mergeShellStates, variablesActingOn, type ShellState, type VariableUse } from './shell-state.js';
import { recordAssignment, recordVariable } from './state-changes.js';

// `bash -c "bash -c '…'"` nests; past this depth the rest is refused rather than walked.
const maxDepth = 12;
// find analyses its -exec command once per starting point, so nested strings could multiply the
// work; past this many commands a line is refused rather than walked to the end.
const maxCommands = 2000;

/** One analysis of one command line: walks the syntax tree, carrying the scope, and reports findings. */
export class LineAnalysis implements Engine, StatementRunner, EarlierDefinitions {
  readonly engine: Engine = this;
  /** Effects of the functions this line defines, returned when the line calls them. */
  readonly functions = new Map<string, Effects>();
  /** Aliases being expanded: bash does not expand an alias inside its own text. */
  private readonly expandingAliases = new Set<string>();
  private source = new SourceText('');
  private depth = 0;
  private commandsLeft = maxCommands;
  private readonly realHomes = new Map<string, string>();

  constructor(
    private readonly workspaceRoots: readonly string[],
    readonly restrictToWorkspaces: boolean,
    private readonly resolve: (absolute: string) => string,
    private readonly findings: Findings,
  ) {}

  /**
   * Judges a line run by a shell in `state` (what earlier lines left, CONTRACT §11) and returns the
   * state the line leaves behind once it has run.
   */
  analyseLine(line: string, cwd: string | null, home: string, state: ShellState): ShellState {
    if (state.unmodelled !== null) {
      this.report('high', `an earlier line changed the shell in a way that cannot be followed (${state.unmodelled}); every line is high until the terminal is replaced`);
    }
    if (state.traps.length > 0) this.report('high', `the shell runs trap code between commands: ${state.traps.join(' ')}`);
    const scope: Scope = { cwd, home, cdpath: false, defining: [], concurrent: false, state: cloneShellState(state) };
    this.runScript(line, scope, { kind: 'terminal' });
    this.promptCommand(scope);
    return scope.state;
  }

  /** PROMPT_COMMAND runs in the shell after every line: its code is part of each line's verdict. */
  private promptCommand(scope: Scope): void {
    const { state } = scope;
    const code = state.variables.PROMPT_COMMAND;
    if (code === undefined) return;
    if (code === null) {
      this.report('high', 'the shell runs PROMPT_COMMAND after the line, and its code cannot be known');
      return;
    }
    this.report('low', `the shell runs PROMPT_COMMAND after the line: ${code}`);
    this.runScript(code, scope, { kind: 'terminal' });
  }

  report(level: RiskLevel, reason: string): void {
    this.findings.add(level, reason);
  }

  pathPolicy(scope: Scope): PathPolicy {
    return { workspaceRoots: this.workspaceRoots, home: scope.home === null ? null : this.realHome(scope.home), resolve: this.resolve };
  }

  private realHome(home: string): string {
    let real = this.realHomes.get(home);
    if (real === undefined) {
      real = this.resolve(home);
      this.realHomes.set(home, real);
    }
    return real;
  }

  textOf(node: Node): string {
    return this.source.of(node);
  }

  runScript(text: string, scope: Scope, stdin: StdinFeed): Effects {
    if (this.depth >= maxDepth) {
      this.report('high', 'code nested too deeply to analyse');
      return noEffects;
    }
    const parsed = parseShell(text);
    if (!parsed.ok) {
      this.report('high', `does not parse: ${parsed.message}`);
      return noEffects;
    }
    const saved = this.source;
    this.source = new SourceText(text);
    this.depth += 1;
    try {
      return this.statements(parsed.file.Stmts, scope, stdin);
    } finally {
      this.depth -= 1;
      this.source = saved;
    }
  }

  statements(stmts: readonly Stmt[], scope: Scope, stdin: StdinFeed): Effects {
    return mergeEffects(...stmts.map((stmt) => this.stmt(stmt, scope, stdin)));
  }

  private stmt(stmt: Stmt, scope: Scope, stdin: StdinFeed): Effects {
    // A background job or coprocess is a subshell: its `cd` does not reach the next statement.
    const own = stmt.Background || stmt.Coprocess ? copyScope(scope, { concurrent: true }) : scope;
    const redirected = applyRedirects(this, stmt.Redirs, own, stdin);
    const effects = stmt.Cmd === null ? noEffects : this.command(stmt.Cmd, own, redirected.stdin);
    return mergeEffects(redirected.effects, effects);
  }

  private command(node: Node, scope: Scope, stdin: StdinFeed): Effects {
    const command = commandNode(node);
    switch (command.kind) {
      case 'CallExpr':
        return this.call(command.node, scope, stdin);
      case 'BinaryCmd':
        if (command.node.Op === BinaryCmdOp.pipe || command.node.Op === BinaryCmdOp.pipeAll) return this.pipeline(command.node, scope, stdin);
        return this.andOr(command.node, scope, stdin);
      case 'Subshell':
        return this.statements(command.node.Stmts, copyScope(scope), stdin);
      case 'Block':
        return this.statements(command.node.Stmts, scope, stdin);
      case 'IfClause':
        return this.ifClause(command.node, scope, stdin);
      case 'WhileClause': {
        const { Cond, Do } = command.node;
        return mergeEffects(this.statements(Cond, scope, stdin), this.branches(scope, [(s) => this.loopBody(s, (t) => mergeEffects(this.statements(Do, t, stdin), this.statements(Cond, t, stdin)))], true));
      }
      case 'ForClause':
        return this.forClause(command.node, scope, stdin);
      case 'CaseClause': {
        const { Word: subject, Items } = command.node;
        const runs = Items.map((item) => (s: Scope) =>
          mergeEffects(...item.Patterns.map((pattern) => wordEffects(this, pattern, s, stdin)), this.statements(item.Stmts, s, stdin)));
        return mergeEffects(wordEffects(this, subject, scope, stdin), this.branches(scope, runs, true));
      }
      case 'FuncDecl':
        return functionEffects(this, command.node, scope);
      case 'ArithmCmd':
        this.report('low', 'arithmetic');
        return arithmeticEffects(this, command.node.X, scope, stdin);
      case 'LetClause':
        this.report('low', 'arithmetic');
        return mergeEffects(...command.node.Exprs.map((expr) => arithmeticEffects(this, expr, scope, stdin)));
      case 'TestClause':
        this.report('low', 'read-only inspection');
        return testEffects(this, command.node.X, scope, stdin);
      case 'DeclClause':
        return declarationEffects(this, command.node, scope, stdin);
      case 'TimeClause':
        if (command.node.Stmt === null) {
          this.report('medium', 'not a known read-only command: time');
          return noEffects;
        }
        return this.stmt(command.node.Stmt, scope, stdin);
      case 'CoprocClause':
        this.report('medium', 'starts a coprocess');
        return this.stmt(command.node.Stmt, copyScope(scope, { concurrent: true }), stdin);
      case 'other':
        this.report('high', `unsupported shell construct: ${command.type}`);
        return noEffects;
    }
  }

  /**
   * Every stage runs in its own subshell with a copy of the scope. A stage that runs its standard
   * input as code is fed by the stages before it: remote code if one of them fetched from the
   * network, otherwise code nobody can see.
   */
  private pipeline(node: BinaryCmd, scope: Scope, stdin: StdinFeed): Effects {
    const stages: Stmt[] = [];
    collectStages(node, stages);
    const results = stages.map((stage, index) =>
      this.stmt(stage, copyScope(scope, { concurrent: true }), index === 0 ? stdin : { kind: 'pipe' }));
    results.forEach((result, index) => {
      if (index === 0 || !result.stdinCode) return;
      const upstream = mergeEffects(...results.slice(0, index));
      if (upstream.network) this.report('critical', 'remote code piped into a shell');
      else this.report('high', 'runs code from a pipe that cannot be analysed');
      if (upstream.decoder) this.report('high', 'decodes data into an interpreter');
    });
    return mergeEffects(...results);
  }

  /**
   * `a && b`, `a || b`: b may not run. Its paths are still judged as if it did (the cwd as well),
   * but what it does to the shell's state may not have happened: an `unset` or `unalias` there
   * must not make later lines look safer than they are.
   */
  private andOr(node: BinaryCmd, scope: Scope, stdin: StdinFeed): Effects {
    const first = this.stmt(node.X, scope, stdin);
    const before = cloneShellState(scope.state);
    const second = this.stmt(node.Y, scope, stdin);
    scope.state = mergeShellStates([before, scope.state]);
    return mergeEffects(first, second);
  }

  private ifClause(node: IfClause, scope: Scope, stdin: StdinFeed): Effects {
    const condition = this.statements(node.Cond, scope, stdin);
    const runs = [(s: Scope) => this.statements(node.Then, s, stdin)];
    const otherwise = node.Else;
    if (otherwise !== null) {
      runs.push((s: Scope) => (otherwise.Cond.length === 0 ? this.statements(otherwise.Then, s, stdin) : this.ifClause(otherwise, s, stdin)));
    }
    return mergeEffects(condition, this.branches(scope, runs, otherwise === null));
  }

  private forClause(node: ForClause, scope: Scope, stdin: StdinFeed): Effects {
    const loop = loopNode(node.Loop);
    let header = noEffects;
    if (loop.kind === 'WordIter') {
      const name = loop.node.Name.Value;
      checkAssignedName(this, scope, name);
      header = mergeEffects(...loop.node.Items.map((item) => wordEffects(this, item, scope, stdin)));
      // `for i in 1 2 3` and `for i in {1..9}` give i only integers; anything else, an unknown value.
      const integers = loop.node.Items.length > 0 && loop.node.Items.every((item) => isIntegerListWord(wordValue(item, scope)));
      recordVariable(this, scope, name, integers ? '0' : null);
    } else if (loop.kind === 'CStyleLoop') {
      const { Init, Cond, Post } = loop.node;
      header = mergeEffects(...[Init, Cond, Post].map((part) => arithmeticEffects(this, part, scope, stdin)));
    } else {
      this.report('high', `unsupported loop: ${loop.type}`);
    }
    return mergeEffects(header, this.branches(scope, [(s) => this.loopBody(s, (t) => this.statements(node.Do, t, stdin))], true));
  }

  /**
   * A loop's body runs again with what its last pass left: walked twice, the second time from
   * what the first pass and the entry have in common, so that `echo $((i)); i=$x` is seen to
   * evaluate x on the next pass. What a pass can change in the state depends only on the text
   * it assigns, so a third pass would see nothing new.
   */
  private loopBody(scope: Scope, run: (pass: Scope) => Effects): Effects {
    const entry = scope.state;
    const first = run(scope);
    scope.state = mergeShellStates([entry, scope.state]);
    return mergeEffects(first, run(scope));
  }

  /**
   * Runs alternative paths on copies of the scope. Afterwards the cwd (and home) is what all paths
   * agree on, or unknown: after `if …; then cd /; fi` nobody can say where the shell is.
   */
  private branches(scope: Scope, runs: readonly ((branch: Scope) => Effects)[], mayRunNone: boolean): Effects {
    const outcomes = runs.map((run) => {
      const branch = copyScope(scope);
      return { branch, effects: run(branch) };
    });
    const finals = [...(mayRunNone ? [scope] : []), ...outcomes.map(({ branch }) => branch)];
    const [first] = finals;
    if (first !== undefined) {
      const agreed = (pick: (s: Scope) => string | null) => (finals.every((s) => pick(s) === pick(first)) ? pick(first) : null);
      const cwd = agreed((s) => s.cwd);
      const home = agreed((s) => s.home);
      scope.cdpath = finals.some((s) => s.cdpath);
      scope.cwd = cwd;
      scope.home = home;
      // Whatever any branch may have defined or set is there afterwards.
      scope.state = mergeShellStates(finals.map((s) => s.state));
    }
    return mergeEffects(...outcomes.map(({ effects }) => effects));
  }

  /** A simple command: its assignments, its words (and what they hide), then the command itself. */
  private call(node: CallExpr, scope: Scope, stdin: StdinFeed): Effects {
    // Each read of a GopherJS slice field converts the whole slice anew: read once, passed on.
    const words = node.Args;
    const assigns = node.Assigns;
    const aliased = this.expandAlias(node, words, scope, stdin);
    if (aliased !== null) return aliased;
    const effects: Effects[] = assigns.map((assign) => this.assignment(assign, scope, stdin));
    if (words.length === 0) {
      const names = assigns.map((assign) => assign.Name?.Value ?? '?').join(' ');
      this.report('medium', `sets a shell variable: ${names}`);
      // Without a command, the assignments stay in the shell for the lines after this one.
      for (const assign of assigns) recordAssignment(this, this, scope, assign);
      return mergeEffects(...effects);
    }
    const environment = this.commandEnvironment(assigns, words, scope);
    const args = words.map((word) => {
      const found = wordEffects(this, word, scope, stdin);
      effects.push(found);
      return this.argument(word, scope, found.network);
    });
    effects.push(withEnvironment(scope, environment, () => this.runCommand(args, scope, stdin, false)));
    return mergeEffects(...effects);
  }

  /**
   * The variables a command's own assignments put in its environment that the state keeps
   * (`GIT_PAGER=… git log`): the command is judged through them as through the terminal's. With
   * `set -k`, a NAME=value word anywhere on the line is one of them too.
   */
  private commandEnvironment(assigns: readonly Assign[], words: readonly Word[], scope: Scope): Record<string, string | null> {
    const environment: Record<string, string | null> = {};
    for (const assign of assigns) {
      const name = assign.Name?.Value;
      if (name === undefined || assign.Index !== null || assign.Array !== null || !isActingVariable(name)) continue;
      const value = assign.Value === null ? { kind: 'literal' as const, text: '' } : wordValue(assign.Value, scope);
      environment[name] = value.kind === 'literal' ? value.text : null;
    }
    if (scope.state.keywordAssignments) {
      for (const word of words.slice(1)) {
        const value = wordValue(word, scope);
        const match = value.kind === 'literal' ? /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(value.text) : null;
        if (match?.[1] === undefined) continue;
        checkAssignedName(this, scope, match[1]);
        if (isActingVariable(match[1])) environment[match[1]] = match[2] ?? '';
      }
    }
    return environment;
  }

  assignment(assign: Assign, scope: Scope, stdin: StdinFeed): Effects {
    // A subscript of an associative array is a string, not arithmetic.
    const associative = isAssociative(assign.Name?.Value, scope);
    const effects = [
      wordEffects(this, assign.Value, scope, stdin),
      associative ? wordEffects(this, assign.Index === null ? null : asWord(assign.Index), scope, stdin) : arithmeticEffects(this, assign.Index, scope, stdin),
      ...(assign.Array?.Elems ?? []).flatMap((elem) => [
        wordEffects(this, elem.Value, scope, stdin),
        associative ? noEffects : arithmeticEffects(this, elem.Index, scope, stdin),
      ]),
    ];
    const name = assign.Name?.Value;
    if (name !== undefined) checkAssignedName(this, scope, name, assign.Value === null ? undefined : wordValue(assign.Value, scope));
    return mergeEffects(...effects);
  }

  /**
   * An alias is judged as its text (CONTRACT §11): bash replaces an unquoted command word that
   * names one before it parses the rest, so the line is judged again with the text in its place.
   */
  private expandAlias(node: CallExpr, words: readonly Word[], scope: Scope, stdin: StdinFeed): Effects | null {
    const [first] = words;
    const part = first?.Parts.length === 1 ? first.Parts[0] : undefined;
    if (first === undefined || part === undefined || wordPart(part).kind !== 'Lit') return null;
    const name = this.textOf(first);
    const text = scope.state.aliases[name];
    if (text === undefined || this.expandingAliases.has(name)) return null;
    if (text === null) {
      this.report('high', `runs an alias whose text cannot be known: ${name}`);
      return noEffects;
    }
    this.report('low', `runs an alias: ${name}`);
    // bash also expands the next word when an alias ends in a blank: that is not followed here.
    if (/\s$/.test(text)) this.report('high', `alias ending in a blank expands the next word too: ${name}`);
    const before = this.source.slice(node.Pos().Offset(), first.Pos().Offset());
    const after = this.source.slice(first.End().Offset(), node.End().Offset());
    const expanded = `${before}${text}${after}`;
    this.expandingAliases.add(name);
    try {
      return this.runScript(expanded, scope, stdin);
    } finally {
      this.expandingAliases.delete(name);
    }
  }

  argument(word: Word, scope: Scope, remote: boolean): Argument {
    // The spelling is only needed for reasons, and cutting it out costs more than the rest of the
    // word's analysis, so it is taken from this line's source on first use.
    const source = this.source;
    let text: string | null = null;
    return {
      get text() {
        text ??= source.of(word);
        return text;
      },
      value: wordValue(word, scope),
      remote,
    };
  }

  /**
   * A name earlier lines gave a meaning (CONTRACT §11): a function they defined is judged as its
   * body, run in this shell; a name bash remembers a path for runs that path.
   */
  fromEarlierLines(name: string, first: Argument, rest: readonly Argument[], scope: Scope, stdin: StdinFeed): Effects | null {
    const body = scope.state.functions[name];
    if (body === null) {
      this.report('high', `runs a function whose body cannot be known: ${name}`);
      return noEffects;
    }
    if (body !== undefined && !this.functions.has(name) && !scope.defining.includes(name)) {
      this.report('low', `runs a function defined earlier: ${name}`);
      return this.runScript(body, copyScope(scope, { defining: [...scope.defining, name], state: scope.state }), stdin);
    }
    const path = scope.state.hashed[name];
    if (path === null) {
      this.report('high', `runs a path the shell remembers for ${name}, which cannot be known`);
      return noEffects;
    }
    if (path !== undefined) {
      this.report('low', `runs what the shell remembers for ${name}: ${path}`);
      return this.runCommand([{ text: path, value: { kind: 'literal', text: path, glob: -1, brace: false }, remote: first.remote }, ...rest], scope, stdin, false);
    }
    return null;
  }

  runCommand(args: readonly Argument[], scope: Scope, stdin: StdinFeed, trailingOperands: boolean): Effects {
    const [first, ...rest] = args;
    if (first === undefined) return noEffects;
    this.commandsLeft -= 1;
    if (this.commandsLeft < 0) {
      this.report('high', 'too many commands to analyse');
      return noEffects;
    }
    const { value } = first;
    if (value.kind !== 'literal' || value.glob >= 0 || value.text === '') {
      unknownCommandName(this, first, rest, scope);
      return noEffects;
    }
    let name = value.text;
    if (name.includes('/')) {
      if (!name.startsWith('/')) {
        runsScriptByPath(this, first, rest, scope);
        return noEffects;
      }
      if (!systemBinaries.has(posix.dirname(posix.normalize(name)))) this.report('medium', `runs a program by its path: ${first.text}`);
      name = posix.basename(name) || name;
    }
    if (scope.defining.includes(name)) {
      if (scope.concurrent) this.report('critical', `fork bomb: ${name}`);
      else this.report('high', `function calls itself: ${name}`);
    }
    const earlier = this.fromEarlierLines(name, first, rest, scope, stdin);
    if (earlier !== null) return earlier;
    for (const use of variablesActingOn(scope.state, name)) this.variableUse(use, name, scope);
    const effects = ruleFor(name)({ name, args: rest, scope, stdin, trailingOperands, engine: this }) ?? noEffects;
    return mergeEffects(effects, this.functions.get(name) ?? noEffects);
  }

  /**
   * A variable in the environment that changes what `program` does (CONTRACT §11): a pager or
   * editor it will run is judged as that command line, when its text is known; anything else
   * set, or a command not known, is high.
   */
  private variableUse(use: VariableUse, program: string, scope: Scope): void {
    if (use.kind === 'changes') {
      this.report('high', `the environment's ${use.name} changes what ${program} runs`);
      return;
    }
    if (use.value === null) {
      this.report('high', `${program} may run the environment's ${use.name}, which cannot be known`);
      return;
    }
    this.report('low', `${program} may run the environment's ${use.name}: ${use.value}`);
    this.runScript(use.value, copyScope(scope), { kind: 'pipe' });
  }
}

/** Command names a `hash -p` or BASH_CMDS points elsewhere, or functions earlier lines defined. */
interface EarlierDefinitions {
  fromEarlierLines(name: string, first: Argument, rest: readonly Argument[], scope: Scope, stdin: StdinFeed): Effects | null;
}

const systemBinaries: ReadonlySet<string> = new Set(['/bin', '/sbin', '/usr/bin', '/usr/sbin', '/usr/local/bin', '/usr/local/sbin']);

function collectStages(node: BinaryCmd, out: Stmt[]): void {
  for (const side of [node.X, node.Y]) {
    const inner = side.Cmd === null ? null : commandNode(side.Cmd);
    const nested = inner !== null && inner.kind === 'BinaryCmd' && (inner.node.Op === BinaryCmdOp.pipe || inner.node.Op === BinaryCmdOp.pipeAll);
    if (nested && side.Redirs.length === 0 && !side.Background && !side.Negated) collectStages(inner.node, out);
    else out.push(side);
  }
}

/**
 * Runs a command with some variables the state keeps set for it alone, then puts back what the
 * terminal had, unless the command itself changed them.
 */
function withEnvironment(scope: Scope, environment: Record<string, string | null>, run: () => Effects): Effects {
  const names = Object.keys(environment);
  if (names.length === 0) return run();
  const before = { ...scope.state.variables };
  Object.assign(scope.state.variables, environment);
  try {
    return run();
  } finally {
    for (const name of names) {
      if (scope.state.variables[name] !== environment[name]) continue;
      if (name in before) scope.state.variables[name] = before[name] ?? null;
      else Reflect.deleteProperty(scope.state.variables, name);
    }
  }
}

/** A loop word that expands only to integers: a literal integer or a brace range of them. */
function isIntegerListWord(value: WordValue): boolean {
  if (value.kind !== 'literal') return false;
  if (value.brace) return /^\{-?[0-9]+\.\.-?[0-9]+(\.\.-?[0-9]+)?\}$/.test(value.text);
  return value.glob < 0 && /^-?[0-9]+$/.test(value.text);
}

/** Arrays whose subscripts are strings: bash's own, and those this shell declared with `declare -A`. */
const BUILTIN_ASSOCIATIVE: ReadonlySet<string> = new Set(['BASH_ALIASES', 'BASH_CMDS']);

function isAssociative(name: string | undefined, scope: Scope): boolean {
  return name !== undefined && (BUILTIN_ASSOCIATIVE.has(name) || scope.state.associative.includes(name));
}

/** An index node that is a plain word (an associative subscript), or null. */
function asWord(node: Node): Word | null {
  const arithm = arithmNode(node);
  return arithm.kind === 'Word' ? arithm.node : null;
}
