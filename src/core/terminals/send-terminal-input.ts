import { recordAudit } from '../audit/record-audit.js';
import type { Actor } from '../auth/actor.js';
import { redactCommand } from '../commands/command-redaction.js';
import type { CommandDeps } from '../commands/command-deps.js';
import { AppError } from '../errors/app-error.js';
import type { InputTarget, TerminalSession } from './terminal-session.js';
import { judgeTypedLine, type HeldLine } from './typed-line-judgement.js';

// Keystrokes for a terminal (CONTRACT §8's `input`, §11's "Typed input"). They never reach the
// service's own shell, which reads commands only from the service (command-pipe.ts); they reach
// whatever runs in the foreground, as the kernel reports it:
// - a nested shell or an interpreter: taken a line at a time and each line judged as an execute
//   is (run, held for confirmation, refused) before the reader sees it;
// - any other program: passed through at once.
// Either way each line is audited: in full while the terminal echoes, as its length while it
// does not (a password prompt).

export interface InputOutcome {
  /** Lines held for confirmation; what followed them in the same input was dropped. */
  held: HeldLine[];
}

export async function sendTerminalInput(deps: CommandDeps, actor: Actor, terminalId: string, data: string): Promise<InputOutcome> {
  const terminal = deps.terminals.require(actor.user.id, terminalId);
  if (terminal.status === 'exited') throw AppError.invalid('The terminal has exited', { reason: 'exited' });
  const target = terminal.inputTarget();
  const reader = terminal.foregroundReader();
  if (reader.kind === 'program') {
    const lines = terminal.typedRecord(target.run).take(data);
    // Whether the terminal shows the line is read before it is sent: once the program has it,
    // it may turn echo back on (a password prompt does, right after reading).
    const echoes = lines.length > 0 ? await terminal.echoes() : null;
    terminal.sendInput(data, target);
    if (lines.length > 0) await auditPassedLines(deps, actor, terminal, target, reader.program, lines, echoes);
    return { held: [] };
  }
  // Ctrl-C and Ctrl-D alone always pass: they are how a stuck reader is left.
  const controlOnly = data.replaceAll('\u0003', '').replaceAll('\u0004', '') === '';
  const echoes = controlOnly ? true : await terminal.echoes();
  if (echoes !== true) {
    throw AppError.invalid(
      `${reader.program} reads this terminal with echo off: a line typed into it could not be judged without recording it, so only Ctrl-C and Ctrl-D are taken`,
      { reason: 'echo_off' },
    );
  }
  const owner = reader.kind === 'shell' ? reader.key : `${reader.program}:${String(target.run)}`;
  const lines = terminal.typedLines(owner, deps.config.MAX_COMMAND_LENGTH);
  const held: HeldLine[] = [];
  for (const event of lines.take(data)) {
    if (event.kind === 'interrupt') {
      terminal.sendInput('\u0003', target);
      continue;
    }
    if (event.kind === 'eof') {
      terminal.sendInput('\u0004', target);
      continue;
    }
    const outcome = await judgeTypedLine(deps, actor, terminal, target, reader, event.text);
    if (outcome !== null) {
      // What was typed after a held line is not the reader's to see before that line is decided.
      held.push(outcome);
      lines.clear();
      break;
    }
  }
  return { held };
}

/** Lines typed into a program that is neither a shell nor an interpreter: passed, and recorded. */
async function auditPassedLines(
  deps: CommandDeps,
  actor: Actor,
  terminal: TerminalSession,
  target: InputTarget,
  program: string | null,
  lines: readonly string[],
  echoes: boolean | null,
): Promise<void> {
  for (const line of lines) {
    await recordAudit(deps.store, {
      type: 'terminal',
      userId: actor.user.id,
      ip: actor.ip,
      details: {
        action: 'input',
        terminalId: terminal.id,
        command: redactCommand(target.command),
        program,
        reader: 'program',
        // Only what the terminal showed is recorded: a password typed with echo off never is.
        line: echoes === true ? redactCommand(line) : { echo: false, length: line.length },
      },
    });
  }
}
