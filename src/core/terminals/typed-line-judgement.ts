import { recordAudit } from '../audit/record-audit.js';
import type { Actor } from '../auth/actor.js';
import { holdCommand } from '../commands/hold-command.js';
import { redactCommand } from '../commands/command-redaction.js';
import type { CommandDeps } from '../commands/command-deps.js';
import { workspaceRoots } from '../commands/workspace-roots.js';
import { AppError } from '../errors/app-error.js';
import type { RiskVerdict } from '../security/risk-analysis.js';
import type { ShellState } from '../security/shell-state.js';
import { readerDirectory, type ForegroundReader } from './foreground-reader.js';
import type { InputTarget, TerminalSession } from './terminal-session.js';

// One line typed into a nested shell or an interpreter, judged as an execute would be (CONTRACT
// §11): critical is refused, high is held for confirmation (COMMAND_CONFIRMATION_REQUIRED), the
// rest is sent with its Enter. A nested shell's line is judged in that shell's folder and state;
// a line for any other interpreter is code nobody here can read, so it is high.

export interface HeldLine {
  commandId: string;
  command: string;
  risk: RiskVerdict['level'];
  reasons: string[];
}

export type LineReader = Exclude<ForegroundReader, { kind: 'program' }>;

export async function judgeTypedLine(
  deps: CommandDeps,
  actor: Actor,
  terminal: TerminalSession,
  target: InputTarget,
  reader: LineReader,
  line: string,
): Promise<HeldLine | null> {
  if (line.trim() === '') {
    terminal.sendInput('\r', target);
    return null;
  }
  const { verdict, stateAfter, workingDirectory } = await judgeFor(deps, terminal, reader, line);
  const audit = (outcome: string, extra: Record<string, unknown> = {}) =>
    recordAudit(deps.store, {
      type: 'terminal',
      userId: actor.user.id,
      ip: actor.ip,
      risk: verdict.level,
      details: {
        action: 'input',
        terminalId: terminal.id,
        command: redactCommand(target.command),
        program: reader.program,
        reader: reader.kind,
        line: redactCommand(line),
        workingDirectory,
        reasons: verdict.reasons,
        outcome,
        ...extra,
      },
    });
  if (verdict.level === 'critical') {
    deps.metrics?.commandDecided(verdict.level, 'refused');
    await audit('refused');
    throw new AppError('SECURITY_VIOLATION', `Typed line refused: ${verdict.reasons.join('; ')}`, {
      details: { risk: verdict.level, reasons: verdict.reasons },
    });
  }
  if (verdict.level === 'high' && deps.config.COMMAND_CONFIRMATION_REQUIRED) {
    const pending = await holdCommand(deps, actor, terminal, line, verdict, workingDirectory);
    terminal.holdInput(pending.id, { line, reader: readerKey(reader, target.run), run: target.run });
    await audit('held', { commandId: pending.id });
    deps.events?.publish(actor.user.id, {
      kind: 'pending_command',
      commandId: pending.id,
      terminalId: terminal.id,
      command: redactCommand(line),
      risk: verdict.level,
      reasons: verdict.reasons,
    });
    return { commandId: pending.id, command: redactCommand(line), risk: verdict.level, reasons: verdict.reasons };
  }
  deps.metrics?.commandDecided(verdict.level, 'executed');
  await audit('sent');
  terminal.sendInput(`${line}\r`, target);
  if (reader.kind === 'shell') terminal.typedLineSent(reader.key, stateAfter);
  return null;
}

/** Names the reader a held line was typed into; it runs on confirmation only into the same one. */
export function readerKey(reader: LineReader, run: number): string {
  return reader.kind === 'shell' ? `shell:${reader.key}` : `interpreter:${reader.program}:${String(run)}`;
}

/** `!` followed by what bash's history expansion reads as an event, or a leading `^old^new`. */
const HISTORY_EXPANSION = /![^\s=(]|^\s*\^/;

export async function judgeFor(
  deps: Pick<CommandDeps, 'store' | 'config' | 'judge'>,
  terminal: TerminalSession,
  reader: LineReader,
  line: string,
): Promise<{ verdict: RiskVerdict; stateAfter: ShellState | null; workingDirectory: string | null }> {
  if (reader.kind === 'interpreter') {
    return {
      verdict: { level: 'high', reasons: [`typed into ${reader.program}, which runs it as code that is not analysed`] },
      stateAfter: null,
      workingDirectory: null,
    };
  }
  const workingDirectory = readerDirectory(reader);
  // An interactive shell's history expansion (`!!`, `!ls:s/ls/rm/`, `^ls^rm`) rewrites the line
  // after it is judged: what runs would not be what was judged.
  if (HISTORY_EXPANSION.test(line)) {
    return {
      verdict: { level: 'high', reasons: [`history expansion would change the line after it is judged: ${line}`] },
      stateAfter: null,
      workingDirectory,
    };
  }
  const { verdict, state } = await deps.judge.judge({
    command: line,
    context: {
      cwd: workingDirectory,
      home: terminal.home,
      workspaceRoots: await workspaceRoots(deps.store, deps.config),
      restrictToWorkspaces: deps.config.WORKSPACE_RESTRICTION_ENABLED,
      state: terminal.nestedState(reader.key),
    },
  });
  return { verdict, stateAfter: state ?? null, workingDirectory };
}
