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
import { BinaryCmdOp, commandNode, loopNode, parseShell, SourceText } from './shell-syntax.js';
import { wordValue } from './shell-words.js';
import { checkAssignedName } from './variable-assignments.js';
import { declarationEffects } from './declarations.js';
import { functionEffects } from './function-definitions.js';

// `bash -c "bash -c '…'"` nests; past this depth the rest is refused rather than walked.
const maxDepth = 12;
// find analyses its -exec command once per starting point, so nested strings could multiply the
// work; past this many commands a line is refused rather than walked to the end.
const maxCommands = 2000;

/** One analysis of one command line: walks the syntax tree, carrying the scope, and reports findings. */
export class LineAnalysis implements Engine, StatementRunner {
  readonly engine: Engine = this;
  /** Effects of the functions this line defines, returned when the line calls them. */
  readonly functions = new Map<string, Effects>();
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

  analyseLine(line: string, cwd: string | null, home: string): void {
    this.runScript(line, { cwd, home, cdpath: false, defining: [], concurrent: false }, { kind: 'terminal' });
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
        return mergeEffects(this.stmt(command.node.X, scope, stdin), this.stmt(command.node.Y, scope, stdin));
      case 'Subshell':
        return this.statements(command.node.Stmts, copyScope(scope), stdin);
      case 'Block':
        return this.statements(command.node.Stmts, scope, stdin);
      case 'IfClause':
        return this.ifClause(command.node, scope, stdin);
      case 'WhileClause': {
        const { Cond, Do } = command.node;
        return mergeEffects(this.statements(Cond, scope, stdin), this.branches(scope, [(s) => this.statements(Do, s, stdin)], true));
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
      checkAssignedName(this, scope, loop.node.Name.Value);
      header = mergeEffects(...loop.node.Items.map((item) => wordEffects(this, item, scope, stdin)));
    } else if (loop.kind === 'CStyleLoop') {
      const { Init, Cond, Post } = loop.node;
      header = mergeEffects(...[Init, Cond, Post].map((part) => arithmeticEffects(this, part, scope, stdin)));
    } else {
      this.report('high', `unsupported loop: ${loop.type}`);
    }
    return mergeEffects(header, this.branches(scope, [(s) => this.statements(node.Do, s, stdin)], true));
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
    }
    return mergeEffects(...outcomes.map(({ effects }) => effects));
  }

  /** A simple command: its assignments, its words (and what they hide), then the command itself. */
  private call(node: CallExpr, scope: Scope, stdin: StdinFeed): Effects {
    const effects: Effects[] = node.Assigns.map((assign) => this.assignment(assign, scope, stdin));
    if (node.Args.length === 0) {
      const names = node.Assigns.map((assign) => assign.Name?.Value ?? '?').join(' ');
      this.report('medium', `sets a shell variable: ${names}`);
      return mergeEffects(...effects);
    }
    const args = node.Args.map((word) => {
      const found = wordEffects(this, word, scope, stdin);
      effects.push(found);
      return this.argument(word, scope, found.network);
    });
    effects.push(this.runCommand(args, scope, stdin, false));
    return mergeEffects(...effects);
  }

  assignment(assign: Assign, scope: Scope, stdin: StdinFeed): Effects {
    const effects = [
      wordEffects(this, assign.Value, scope, stdin),
      arithmeticEffects(this, assign.Index, scope, stdin),
      ...(assign.Array?.Elems ?? []).flatMap((elem) => [
        wordEffects(this, elem.Value, scope, stdin),
        arithmeticEffects(this, elem.Index, scope, stdin),
      ]),
    ];
    const name = assign.Name?.Value;
    if (name !== undefined) checkAssignedName(this, scope, name, assign.Value === null ? undefined : wordValue(assign.Value, scope));
    return mergeEffects(...effects);
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
      name = posix.basename(name);
    }
    if (scope.defining.includes(name)) {
      if (scope.concurrent) this.report('critical', `fork bomb: ${name}`);
      else this.report('high', `function calls itself: ${name}`);
    }
    const effects = ruleFor(name)({ name, args: rest, scope, stdin, trailingOperands, engine: this }) ?? noEffects;
    return mergeEffects(effects, this.functions.get(name) ?? noEffects);
  }
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
