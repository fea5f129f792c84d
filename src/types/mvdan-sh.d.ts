/**
 * The part of mvdan-sh 0.10.1 (the GopherJS build of mvdan/sh's `syntax` package) that the risk
 * analyser reads. GopherJS exposes Go struct fields as getters, so `Object.keys()` is empty on
 * every node; the fields below were checked one by one against the installed build.
 *
 * The concrete type of a node is only known at run time through `syntax.NodeType(node)`, which
 * returns the Go type name; `src/core/security/shell-syntax.ts` turns that into tagged unions.
 */
declare module 'mvdan-sh' {
  export interface Pos {
    /** Byte offset (UTF-8) into the parsed source. */
    Offset(): number;
    Line(): number;
    Col(): number;
  }

  export interface Node {
    Pos(): Pos;
    End(): Pos;
    /**
     * GopherJS tags each externalised pointer with its Go type, e.g.
     * 'mvdan.cc/sh/v3/syntax.*CallExpr' (an implementation detail, hence optional).
     */
    readonly $type?: string;
  }

  export interface File extends Node {
    readonly Stmts: readonly Stmt[];
  }

  export interface Stmt extends Node {
    /** A CallExpr, BinaryCmd, Subshell, Block, IfClause, … or null for a statement of redirections only. */
    readonly Cmd: Node | null;
    readonly Redirs: readonly Redirect[];
    readonly Negated: boolean;
    readonly Background: boolean;
    readonly Coprocess: boolean;
  }

  export interface Lit extends Node {
    /** The raw text: backslash escapes are still in it. */
    readonly Value: string;
  }

  export interface Word extends Node {
    /** Lit, SglQuoted, DblQuoted, ParamExp, CmdSubst, ArithmExp, ProcSubst, ExtGlob. */
    readonly Parts: readonly Node[];
  }

  export interface SglQuoted extends Node {
    readonly Value: string;
    /** `$'…'` (ANSI-C quoting) rather than `'…'`. */
    readonly Dollar: boolean;
  }

  export interface DblQuoted extends Node {
    readonly Parts: readonly Node[];
    /** `$"…"` (locale translation) rather than `"…"`. */
    readonly Dollar: boolean;
  }

  export interface Expansion {
    readonly Op: number;
    readonly Word: Word | null;
  }

  export interface Replace {
    readonly All: boolean;
    readonly Orig: Word | null;
    readonly With: Word | null;
  }

  export interface Slice {
    /** Arithmetic expressions: Word, BinaryArithm, UnaryArithm or ParenArithm. */
    readonly Offset: Node | null;
    readonly Length: Node | null;
  }

  export interface ParamExp extends Node {
    readonly Param: Lit | null;
    /** `${!prefix*}` / `${!prefix@}`: names with the prefix (a non-zero token). */
    readonly Names: number;
    /** `$x` rather than `${x}`. */
    readonly Short: boolean;
    /** `${!x}` */
    readonly Excl: boolean;
    /** `${#x}` */
    readonly Length: boolean;
    /** An arithmetic expression. */
    readonly Index: Node | null;
    readonly Exp: Expansion | null;
    readonly Repl: Replace | null;
    readonly Slice: Slice | null;
  }

  export interface CmdSubst extends Node {
    readonly Stmts: readonly Stmt[];
    readonly Backquotes: boolean;
  }

  export interface ProcSubst extends Node {
    /** 66 for `<(`, 67 for `>(`. */
    readonly Op: number;
    readonly Stmts: readonly Stmt[];
  }

  export interface ArithmExp extends Node {
    readonly X: Node | null;
  }

  export interface ExtGlob extends Node {
    readonly Op: number;
    readonly Pattern: Lit;
  }

  export interface Assign extends Node {
    /** null for the flags of a declaration (`export -x`), which come as naked values. */
    readonly Name: Lit | null;
    readonly Value: Word | null;
    readonly Index: Node | null;
    readonly Array: ArrayExpr | null;
    readonly Naked: boolean;
    readonly Append: boolean;
  }

  export interface ArrayExpr extends Node {
    readonly Elems: readonly ArrayElem[];
  }

  export interface ArrayElem extends Node {
    readonly Index: Node | null;
    readonly Value: Word | null;
  }

  export interface Redirect extends Node {
    readonly Op: number;
    /** The file descriptor written before the operator (`2>`), or null. */
    readonly N: Lit | null;
    readonly Word: Word | null;
    /** The body of a here-document. */
    readonly Hdoc: Word | null;
  }

  export interface CallExpr extends Node {
    readonly Assigns: readonly Assign[];
    readonly Args: readonly Word[];
  }

  export interface BinaryCmd extends Node {
    /** 10 `&&`, 11 `||`, 12 `|`, 13 `|&`. */
    readonly Op: number;
    readonly X: Stmt;
    readonly Y: Stmt;
  }

  export interface Subshell extends Node {
    readonly Stmts: readonly Stmt[];
  }

  export interface Block extends Node {
    readonly Stmts: readonly Stmt[];
  }

  export interface IfClause extends Node {
    readonly Cond: readonly Stmt[];
    readonly Then: readonly Stmt[];
    /** The `elif`/`else` branch; an `else` is an IfClause with an empty Cond. */
    readonly Else: IfClause | null;
  }

  export interface WhileClause extends Node {
    readonly Until: boolean;
    readonly Cond: readonly Stmt[];
    readonly Do: readonly Stmt[];
  }

  export interface ForClause extends Node {
    readonly Select: boolean;
    /** A WordIter or a CStyleLoop. */
    readonly Loop: Node;
    readonly Do: readonly Stmt[];
  }

  export interface WordIter extends Node {
    readonly Name: Lit;
    readonly Items: readonly Word[];
  }

  export interface CStyleLoop extends Node {
    readonly Init: Node | null;
    readonly Cond: Node | null;
    readonly Post: Node | null;
  }

  export interface CaseClause extends Node {
    readonly Word: Word;
    readonly Items: readonly CaseItem[];
  }

  export interface CaseItem extends Node {
    readonly Patterns: readonly Word[];
    readonly Stmts: readonly Stmt[];
  }

  export interface FuncDecl extends Node {
    readonly Name: Lit;
    readonly Body: Stmt;
  }

  export interface ArithmCmd extends Node {
    readonly X: Node | null;
  }

  export interface BinaryArithm extends Node {
    readonly Op: number;
    readonly X: Node;
    readonly Y: Node;
  }

  export interface UnaryArithm extends Node {
    readonly Op: number;
    readonly X: Node;
  }

  export interface ParenArithm extends Node {
    readonly X: Node;
  }

  export interface TestClause extends Node {
    readonly X: Node;
  }

  export interface BinaryTest extends Node {
    readonly Op: number;
    readonly X: Node;
    readonly Y: Node;
  }

  export interface UnaryTest extends Node {
    readonly Op: number;
    readonly X: Node;
  }

  export interface ParenTest extends Node {
    readonly X: Node;
  }

  export interface DeclClause extends Node {
    /** export, declare, local, readonly, typeset or nameref. */
    readonly Variant: Lit;
    readonly Args: readonly Assign[];
  }

  export interface LetClause extends Node {
    readonly Exprs: readonly Node[];
  }

  export interface TimeClause extends Node {
    readonly PosixFormat: boolean;
    readonly Stmt: Stmt | null;
  }

  export interface CoprocClause extends Node {
    readonly Name: Word | null;
    readonly Stmt: Stmt;
  }

  /** What `Parse` throws on a syntax error. */
  export interface ParseError {
    Error(): string;
  }

  export interface Parser {
    Parse(source: string, name: string): File;
  }

  export interface Syntax {
    NewParser(...options: unknown[]): Parser;
    NodeType(node: Node): string;
  }

  export const syntax: Syntax;
}
