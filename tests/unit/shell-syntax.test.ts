import { describe, expect, it } from 'vitest';
import {
  arithmAssignOps, arithmeticTestOps, arithmNode, arithmStepOps, BinaryCmdOp, commandNode, nodeType, officialNodeType, parseShell,
  ProcSubstOp, RedirOp, testNode, unaryTestVarSet, wordPart,
} from '../../src/core/security/shell-syntax.js';
import type { File, Node, Stmt } from 'mvdan-sh';

// mvdan-sh exposes operators as bare numbers; these pin the ones the analyser depends on, so an
// upgrade that renumbers them fails here instead of silently reading pipes as lists.
describe('mvdan-sh operator numbers', () => {
  function parsed(source: string): File {
    const result = parseShell(source);
    if (!result.ok) throw new Error(result.message);
    return result.file;
  }
  function firstStmt(source: string): Stmt {
    const [stmt] = parsed(source).Stmts;
    if (stmt === undefined) throw new Error(`no statement in ${source}`);
    return stmt;
  }
  function commandOf(source: string): Node {
    const { Cmd } = firstStmt(source);
    if (Cmd === null) throw new Error(`no command in ${source}`);
    return Cmd;
  }
  function binaryOp(source: string): number {
    const command = commandNode(commandOf(source));
    if (command.kind !== 'BinaryCmd') throw new Error(`${source} is a ${command.kind}`);
    return command.node.Op;
  }

  it('pins list and pipe operators', () => {
    expect([binaryOp('a && b'), binaryOp('a || b'), binaryOp('a | b'), binaryOp('a |& b')])
      .toEqual([BinaryCmdOp.and, BinaryCmdOp.or, BinaryCmdOp.pipe, BinaryCmdOp.pipeAll]);
    expect(BinaryCmdOp).toEqual({ and: 10, or: 11, pipe: 12, pipeAll: 13 });
  });

  it('pins redirection operators', () => {
    const stmt = firstStmt('x > a >> b < c <> d <&3 >&2 >| e <<< f &> g &>> h');
    expect(stmt.Redirs.map((redirect) => redirect.Op)).toEqual([
      RedirOp.write, RedirOp.append, RedirOp.read, RedirOp.readWrite, RedirOp.dupIn, RedirOp.dupOut, RedirOp.clobber,
      RedirOp.wordHdoc, RedirOp.writeAll, RedirOp.appendAll,
    ]);
    const docs = parsed('cat <<A\nx\nA\ncat <<-B\n\tx\n\tB').Stmts.map((s) => s.Redirs[0]?.Op);
    expect(docs).toEqual([RedirOp.hdoc, RedirOp.dashHdoc]);
    expect(Object.values(RedirOp)).toEqual([54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65]);
  });

  it('pins process substitution operators', () => {
    const call = commandNode(commandOf('diff <(a) >(b)'));
    if (call.kind !== 'CallExpr') throw new Error(call.kind);
    const ops = call.node.Args.slice(1).map((word) => {
      const [first] = word.Parts;
      const part = first === undefined ? null : wordPart(first);
      return part?.kind === 'ProcSubst' ? part.node.Op : null;
    });
    expect(ops).toEqual([ProcSubstOp.in, ProcSubstOp.out]);
    expect(ProcSubstOp).toEqual({ in: 66, out: 67 });
  });

  it('pins arithmetic assignment and test operators', () => {
    const arithmOp = (source: string): number => {
      const command = commandNode(commandOf(source));
      if (command.kind !== 'ArithmCmd' || command.node.X === null) throw new Error(source);
      const expression = arithmNode(command.node.X);
      if (expression.kind !== 'BinaryArithm' && expression.kind !== 'UnaryArithm') throw new Error(source);
      return expression.node.Op;
    };
    const assigning = ['=', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '<<=', '>>='].map((op) => arithmOp(`((x${op}1))`));
    expect(new Set(assigning)).toEqual(arithmAssignOps);
    expect(new Set([arithmOp('((x++))'), arithmOp('((--x))')])).toEqual(arithmStepOps);
    expect(arithmAssignOps.has(arithmOp('((x+1))'))).toBe(false);

    const testOp = (source: string): number => {
      const command = commandNode(commandOf(source));
      if (command.kind !== 'TestClause') throw new Error(source);
      const test = testNode(command.node.X);
      if (test.kind !== 'UnaryTest' && test.kind !== 'BinaryTest') throw new Error(source);
      return test.node.Op;
    };
    expect(testOp('[[ -v x ]]')).toBe(unaryTestVarSet);
    expect(new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge'].map((op) => testOp(`[[ a ${op} b ]]`)))).toEqual(arithmeticTestOps);
  });

  it('reads node types from the GopherJS tag exactly as syntax.NodeType reports them', () => {
    const commands: [string, string][] = [
      ['a b', 'CallExpr'], ['a | b', 'BinaryCmd'], ['(a)', 'Subshell'], ['{ a; }', 'Block'], ['if a; then b; fi', 'IfClause'],
      ['while a; do b; done', 'WhileClause'], ['for i in a; do b; done', 'ForClause'], ['case a in b) c;; esac', 'CaseClause'],
      ['f() { a; }', 'FuncDecl'], ['((a))', 'ArithmCmd'], ['[[ a ]]', 'TestClause'], ['export a=1', 'DeclClause'],
      ['let a=1', 'LetClause'], ['time a', 'TimeClause'], ['coproc a', 'CoprocClause'],
    ];
    for (const [source, type] of commands) {
      const command = commandOf(source);
      expect([nodeType(command), officialNodeType(command)]).toEqual([type, type]);
    }
    const call = commandNode(commandOf(`echo a 'b' "c" $d $(e) $((1)) <(f) @(g)`));
    if (call.kind !== 'CallExpr') throw new Error(call.kind);
    const parts = call.node.Args.slice(1).map((word) => word.Parts[0]).filter((part): part is Node => part !== undefined);
    expect(parts.map(nodeType)).toEqual(['Lit', 'SglQuoted', 'DblQuoted', 'ParamExp', 'CmdSubst', 'ArithmExp', 'ProcSubst', 'ExtGlob']);
    expect(parts.map(officialNodeType)).toEqual(parts.map(nodeType));
  });

  it('reports parse errors with the parser message', () => {
    const result = parseShell('echo "abc');
    expect(result).toEqual({ ok: false, message: '1:6: reached EOF without closing quote "' });
  });
});
