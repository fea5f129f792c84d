import { createRequire } from 'node:module';
import type {
  ArithmCmd, ArithmExp, BinaryArithm, BinaryCmd, BinaryTest, Block, CallExpr, CaseClause, CmdSubst, CoprocClause,
  CStyleLoop, DblQuoted, DeclClause, ExtGlob, File, ForClause, FuncDecl, IfClause, LetClause, Lit, Node, ParamExp,
  ParenArithm, ParenTest, ParseError, Parser, ProcSubst, SglQuoted, Subshell, Syntax, TestClause, TimeClause, UnaryArithm,
  UnaryTest, WhileClause, Word, WordIter,
} from 'mvdan-sh';

// Operator numbers of mvdan-sh 0.10.1 (pinned by tests/unit/shell-syntax.test.ts, so an upgrade
// that renumbers them fails loudly instead of silently mis-reading pipes as lists).
export const BinaryCmdOp = { and: 10, or: 11, pipe: 12, pipeAll: 13 } as const;
export const RedirOp = {
  write: 54, append: 55, read: 56, readWrite: 57, dupIn: 58, dupOut: 59, clobber: 60,
  hdoc: 61, dashHdoc: 62, wordHdoc: 63, writeAll: 64, appendAll: 65,
} as const;
export const ProcSubstOp = { in: 66, out: 67 } as const;
/** `=`, `+=`, `-=`, `*=`, `/=`, `%=`, `&=`, `|=`, `^=`, `<<=`, `>>=` inside `((…))`. */
export const arithmAssignOps: ReadonlySet<number> = new Set([74, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53]);
/** `++` and `--`. */
export const arithmStepOps: ReadonlySet<number> = new Set([36, 37]);
/** `[[ -v name ]]` evaluates array subscripts in `name` as arithmetic. */
export const unaryTestVarSet = 110;
/** `-eq -ne -lt -le -gt -ge` inside `[[ ]]` evaluate both sides as arithmetic. */
export const arithmeticTestOps: ReadonlySet<number> = new Set([116, 117, 118, 119, 120, 121]);

interface ShellModule {
  syntax: Syntax;
}

let loaded: { syntax: Syntax; parser: Parser } | null = null;

// Loading the GopherJS bundle costs ~90 ms and most service starts never analyse a command, so it
// happens on first use. One parser is reused: creating one costs more than parsing a short line,
// and parsing is synchronous, so calls never interleave.
function shell(): { syntax: Syntax; parser: Parser } {
  if (loaded === null) {
    const { syntax } = createRequire(import.meta.url)('mvdan-sh') as ShellModule;
    loaded = { syntax, parser: syntax.NewParser() };
  }
  return loaded;
}

export type ParseResult = { ok: true; file: File } | { ok: false; message: string };

/** Parses a bash command line; a syntax error becomes `{ ok: false }` with the parser's message. */
export function parseShell(source: string): ParseResult {
  const loadedShell = shell();
  try {
    return { ok: true, file: loadedShell.parser.Parse(source, '') };
  } catch (error) {
    // Anything but a syntax error (a stack overflow on absurd nesting) may have left the parser
    // half-way through its state; the next line gets a fresh one.
    if (!isSyntaxError(error)) loadedShell.parser = loadedShell.syntax.NewParser();
    return { ok: false, message: parseErrorMessage(error) };
  }
}

function isSyntaxError(error: unknown): error is ParseError {
  return typeof error === 'object' && error !== null && typeof (error as { Error?: unknown }).Error === 'function';
}

function parseErrorMessage(error: unknown): string {
  if (isSyntaxError(error)) return error.Error();
  return error instanceof Error ? error.message : String(error);
}

const goTypePrefix = 'mvdan.cc/sh/v3/syntax.*';

/** The Go type name of a node ('CallExpr', 'Lit', …). */
export function nodeType(node: Node): string {
  // syntax.NodeType goes through reflection (~15-30 µs a call, the bulk of an analysis); the type
  // tag GopherJS leaves on the object says the same for a fraction of that. Without the tag (a
  // different build) the official call still answers.
  const tagged = node.$type;
  if (tagged?.startsWith(goTypePrefix) === true) return tagged.slice(goTypePrefix.length);
  return shell().syntax.NodeType(node);
}

/** What syntax.NodeType itself says, for tests that check the fast path against it. */
export function officialNodeType(node: Node): string {
  return shell().syntax.NodeType(node);
}

type Tagged<M> = { [K in keyof M]: { kind: K; node: M[K] } }[keyof M];
type Other = { kind: 'other'; node: Node; type: string };

interface CommandNodes {
  CallExpr: CallExpr; BinaryCmd: BinaryCmd; Subshell: Subshell; Block: Block; IfClause: IfClause;
  WhileClause: WhileClause; ForClause: ForClause; CaseClause: CaseClause; FuncDecl: FuncDecl; ArithmCmd: ArithmCmd;
  TestClause: TestClause; DeclClause: DeclClause; LetClause: LetClause; TimeClause: TimeClause; CoprocClause: CoprocClause;
}
interface WordPartNodes {
  Lit: Lit; SglQuoted: SglQuoted; DblQuoted: DblQuoted; ParamExp: ParamExp; CmdSubst: CmdSubst; ArithmExp: ArithmExp;
  ProcSubst: ProcSubst; ExtGlob: ExtGlob;
}
interface ArithmNodes { Word: Word; BinaryArithm: BinaryArithm; UnaryArithm: UnaryArithm; ParenArithm: ParenArithm }
interface TestNodes { Word: Word; BinaryTest: BinaryTest; UnaryTest: UnaryTest; ParenTest: ParenTest }
interface LoopNodes { WordIter: WordIter; CStyleLoop: CStyleLoop }

export type CommandNode = Tagged<CommandNodes> | Other;
export type WordPart = Tagged<WordPartNodes> | Other;
export type ArithmNode = Tagged<ArithmNodes> | Other;
export type TestNode = Tagged<TestNodes> | Other;
export type LoopNode = Tagged<LoopNodes> | Other;

const commandKinds = new Set<keyof CommandNodes>([
  'CallExpr', 'BinaryCmd', 'Subshell', 'Block', 'IfClause', 'WhileClause', 'ForClause', 'CaseClause', 'FuncDecl',
  'ArithmCmd', 'TestClause', 'DeclClause', 'LetClause', 'TimeClause', 'CoprocClause',
]);
const wordPartKinds = new Set<keyof WordPartNodes>(['Lit', 'SglQuoted', 'DblQuoted', 'ParamExp', 'CmdSubst', 'ArithmExp', 'ProcSubst', 'ExtGlob']);
const arithmKinds = new Set<keyof ArithmNodes>(['Word', 'BinaryArithm', 'UnaryArithm', 'ParenArithm']);
const testKinds = new Set<keyof TestNodes>(['Word', 'BinaryTest', 'UnaryTest', 'ParenTest']);
const loopKinds = new Set<keyof LoopNodes>(['WordIter', 'CStyleLoop']);

// The one place where a run-time type name vouches for a static type.
function tag<M>(node: Node, kinds: ReadonlySet<keyof M & string>): Tagged<M> | Other {
  const type = nodeType(node);
  return kinds.has(type as keyof M & string) ? ({ kind: type, node } as Tagged<M>) : { kind: 'other', node, type };
}

export const commandNode = (node: Node): CommandNode => tag<CommandNodes>(node, commandKinds);
export const wordPart = (node: Node): WordPart => tag<WordPartNodes>(node, wordPartKinds);
export const arithmNode = (node: Node): ArithmNode => tag<ArithmNodes>(node, arithmKinds);
export const testNode = (node: Node): TestNode => tag<TestNodes>(node, testKinds);
export const loopNode = (node: Node): LoopNode => tag<LoopNodes>(node, loopKinds);

/** Cuts the source text of a node out of the line it was parsed from (offsets are UTF-8 bytes). */
export class SourceText {
  private readonly bytes: Buffer | null;

  constructor(private readonly source: string) {
    // eslint-disable-next-line no-control-regex -- ASCII test: byte offsets equal string offsets
    this.bytes = /^[\x00-\x7f]*$/.test(source) ? null : Buffer.from(source, 'utf8');
  }

  of(node: Node): string {
    return this.slice(node.Pos().Offset(), node.End().Offset());
  }

  /** The text between two byte offsets of the line. */
  slice(start: number, end: number): string {
    return this.bytes === null ? this.source.slice(start, end) : this.bytes.subarray(start, end).toString('utf8');
  }
}
