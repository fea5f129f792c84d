import { z } from 'zod';
import { recordAudit } from '../audit/record-audit.js';
import type { Actor } from '../auth/actor.js';
import type { CommandDeps } from '../commands/command-deps.js';
import { awaitHeldCommand } from '../commands/await-held-command.js';
import type { CommandDecision } from '../commands/command-decisions.js';
import { executeCommand, type ExecuteOutcome } from '../commands/execute-command.js';
import { AppError } from '../errors/app-error.js';
import type { Logger } from '../logger.js';
import type { WorkspaceRef } from '../workspaces/active-workspace.js';
import { readGitState } from '../workspaces/git-state.js';
import { checkWorkspace } from '../workspaces/workspace-integrity.js';
import { agentTerminalFor } from './agent-terminal.js';
import { abortedToolResult, defineTool, type ChatTool } from './chat-tool.js';

export const chatModes = ['chat', 'assistant', 'agent'] as const;
export type ChatMode = (typeof chatModes)[number];

export interface ToolContext {
  deps: CommandDeps & { logger: Logger };
  actor: Actor;
  /** The caller's active workspace; every tool acts inside it, and only while it is intact. */
  workspace: WorkspaceRef;
  /**
   * Streaming paths (CONTRACT §12): a held run_command waits for its decision and its result is
   * the outcome; otherwise the result is the hold itself (`pending_confirmation`).
   */
  pauseForApproval: boolean;
}

/** What the model is told about a command that ran (at once, or once confirmed). */
function commandResult(outcome: Exclude<ExecuteOutcome, { kind: 'held' }>, terminalId: string): Record<string, unknown> {
  if (outcome.kind === 'completed') return { status: 'completed', exitCode: outcome.exitCode, output: outcome.output, terminalId };
  if (outcome.kind === 'timedOut') return { status: 'timed_out', output: outcome.output, terminalId };
  return { status: 'started', terminalId };
}

/** What the model is told once its held command is decided. */
function decisionResult(decision: CommandDecision | null, commandId: string, terminalId: string): unknown {
  if (decision === null) return abortedToolResult;
  switch (decision.kind) {
    case 'executed':
      return decision.outcome.kind === 'held' ? { error: 'The command was held again', code: 'SECURITY_VIOLATION' } : commandResult(decision.outcome, terminalId);
    case 'rejected':
      return { rejected: true, commandId };
    case 'expired':
      return { expired: true, commandId };
    case 'failed':
      return { error: decision.message, code: decision.code, commandId };
  }
}

/**
 * The workspace, once it has been checked to be still the registered one (CONTRACT
 * §11: same directory, allowed, its Git metadata untampered); otherwise the tool is refused.
 */
async function intactWorkspace(context: ToolContext): Promise<WorkspaceRef> {
  const { store, config } = context.deps;
  const check = await checkWorkspace(store, config, context.workspace);
  if (!check.ok) throw new AppError('WORKSPACE_ERROR', `The workspace cannot be used: ${check.reason}`, { details: { status: check.status } });
  return context.workspace;
}

/** A tool's failure goes back to the model as its result; the generation carries on (CONTRACT §6). */
async function settle(work: () => Promise<unknown>, context: ToolContext, name: string): Promise<unknown> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AppError) return { error: error.message, code: error.code };
    context.deps.logger.warn({ err: error, tool: name }, 'a tool failed');
    return { error: `${name} could not be run`, code: 'TOOL_EXECUTION_ERROR' };
  }
}

const relativePath = z.string().max(4096).describe('Path relative to the workspace root');
const noInput = z.object({});
const listInput = z.object({ path: relativePath.default('.') });
const readInput = z.object({ path: relativePath });
const writeInput = z.object({ path: relativePath, content: z.string().max(1_000_000) });
// Only the command is read: a risk level the model claims for its own call is ignored.
const commandInput = z.object({ command: z.string().min(1).max(100_000) });

function readOnlyTools(context: ToolContext, fileTools: boolean): ChatTool[] {
  const { deps, workspace } = context;
  const tools = [
    defineTool('git_status', 'Branch, status (clean/dirty), changed-file counts and ahead/behind of the workspace', noInput, () =>
      settle(() => readGitState(deps.store, deps.config, workspace), context, 'git_status'),
    ),
  ];
  if (!fileTools) return tools;
  tools.push(
    defineTool('list_files', 'List the entries of a directory of the workspace', listInput, ({ path }) =>
      settle(async () => deps.files.list(await intactWorkspace(context), path, { maxEntries: 500 }), context, 'list_files'),
    ),
    defineTool('read_file', 'Read a text file of the workspace (at most 256 KB)', readInput, ({ path }) =>
      settle(async () => deps.files.read(await intactWorkspace(context), path), context, 'read_file'),
    ),
  );
  return tools;
}

function writingTools(context: ToolContext, fileTools: boolean, systemCommands: boolean): ChatTool[] {
  const { deps, actor } = context;
  const tools: ChatTool[] = [];
  if (fileTools) {
    tools.push(
      defineTool('write_file', 'Write a text file of the workspace, creating missing directories', writeInput, ({ path, content }) =>
        settle(
          async () => {
            const workspace = await intactWorkspace(context);
            const written = await deps.files.write(workspace, path, content);
            await recordAudit(deps.store, {
              type: 'workspace',
              userId: actor.user.id,
              ip: actor.ip,
              details: { action: 'file_written', by: 'agent', path: written.path, workspace: workspace.path },
            });
            return written;
          },
          context,
          'write_file',
        ),
      ),
    );
  }
  if (systemCommands) {
    tools.push(
      defineTool(
        'run_command',
        'Run a shell command in the workspace terminal. High-risk commands wait for the user to confirm them; critical ones are refused.',
        commandInput,
        ({ command }, signal, callId) =>
          settle(
            async () => {
              if (signal.aborted) return abortedToolResult;
              const terminal = await agentTerminalFor(deps, actor, (await intactWorkspace(context)).path);
              // Stopping the answer stops its command too: not sent if it has not been yet
              // (executeCommand), Ctrl-C if it runs.
              const interrupt = () => {
                terminal.interrupt();
              };
              signal.addEventListener('abort', interrupt, { once: true });
              const outcome = await executeCommand(deps, actor, terminal, command, { waitForCompletion: true, signal, toolCallId: callId }).finally(() => {
                signal.removeEventListener('abort', interrupt);
              });
              if (outcome.kind !== 'held') return commandResult(outcome, terminal.id);
              const held = { status: 'pending_confirmation', commandId: outcome.commandId, risk: outcome.risk.level, reasons: outcome.risk.reasons };
              // Nowhere to wait (no decision registry, as in a tool run outside the service): the hold is the result.
              if (!context.pauseForApproval || !deps.decisions) return held;
              // Streaming: the generation pauses here, its stream open, until the command is decided.
              const decision = await awaitHeldCommand(deps, { commandId: outcome.commandId, expiresAt: outcome.expiresAt, actor }, signal);
              return decisionResult(decision, outcome.commandId, terminal.id);
            },
            context,
            'run_command',
          ),
      ),
    );
  }
  return tools;
}

/**
 * The tools of a mode (CONTRACT §7): `chat` none; `assistant` list_files, read_file, git_status;
 * `agent` also write_file and run_command. ENABLE_FILE_OPERATIONS=false removes the file tools,
 * ENABLE_SYSTEM_COMMANDS=false removes run_command; with no active workspace nothing is offered.
 */
export function toolsForMode(mode: ChatMode, context: ToolContext | null): ChatTool[] {
  if (mode === 'chat' || context === null) return [];
  const { config } = context.deps;
  return [
    ...readOnlyTools(context, config.ENABLE_FILE_OPERATIONS),
    ...(mode === 'agent' ? writingTools(context, config.ENABLE_FILE_OPERATIONS, config.ENABLE_SYSTEM_COMMANDS) : []),
  ];
}
