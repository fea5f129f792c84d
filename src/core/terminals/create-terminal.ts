import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute } from 'node:path';
import { recordAudit } from '../audit/record-audit.js';
import type { Actor } from '../auth/actor.js';
import type { CommandDeps } from '../commands/command-deps.js';
import { workspaceRoots } from '../commands/workspace-roots.js';
import { AppError } from '../errors/app-error.js';
import { newId } from '../ids.js';
import { isPathInside } from '../paths/path-inside.js';
import { serviceFiles } from '../sandbox/service-files.js';
import { findActiveWorkspace } from '../workspaces/active-workspace.js';
import { shellLaunch } from './shell-launch.js';
import { ShellSession } from './shell-session.js';
import { TerminalSession } from './terminal-session.js';

export interface CreateTerminalInput {
  workingDirectory?: string;
  /** Variable names already checked against the dangerous-name list by the input schema. */
  environment?: Record<string, string>;
}

function workspaceError(message: string): AppError {
  return new AppError('WORKSPACE_ERROR', message);
}

/** An existing, enterable directory's real path, or a WORKSPACE_ERROR saying what is wrong. */
function usableDirectory(path: string, label: string): string {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    throw workspaceError(`${label} does not exist: ${path}`);
  }
  if (!statSync(real).isDirectory()) throw workspaceError(`${label} is not a directory: ${path}`);
  try {
    accessSync(real, constants.R_OK | constants.X_OK);
  } catch {
    throw workspaceError(`${label} cannot be entered: ${path}`);
  }
  return real;
}

/** CONTRACT §4: the requested directory inside a workspace, else the user's active workspace. */
async function startDirectory(deps: CommandDeps, userId: string, requested: string | undefined, roots: string[]): Promise<string> {
  if (requested !== undefined) {
    if (!isAbsolute(requested)) throw workspaceError('workingDirectory must be an absolute path');
    const directory = usableDirectory(requested, 'workingDirectory');
    if (deps.config.WORKSPACE_RESTRICTION_ENABLED && !roots.some((root) => isPathInside(directory, root))) {
      throw new AppError('SECURITY_VIOLATION', 'workingDirectory is outside every registered workspace');
    }
    return directory;
  }
  const active = await findActiveWorkspace(deps.store, userId);
  if (!active) {
    throw workspaceError('No workspace is registered: add one with POST /api/workspaces/add, or give workingDirectory');
  }
  return usableDirectory(active.path, `The active workspace's folder`);
}

/** Starts a terminal for the actor: one persistent sandboxed shell (CONTRACT §4). */
export async function createTerminal(deps: CommandDeps, actor: Actor, input: CreateTerminalInput): Promise<TerminalSession> {
  if (deps.sandbox.mode === 'unavailable') {
    throw new AppError('SECURITY_VIOLATION', `System commands are refused without a sandbox: ${deps.sandbox.problem ?? ''}`, {
      details: { sandbox: 'unavailable' },
    });
  }
  const releaseSlot = deps.terminals.claimSlot(actor.user.id, deps.config.MAX_TERMINALS_PER_USER);
  try {
    const roots = await workspaceRoots(deps.store);
    const directory = await startDirectory(deps, actor.user.id, input.workingDirectory, roots);
    const environment = input.environment ?? {};
    const home = environment.HOME ?? homedir();
    // With restriction off, the terminal's own folder is writable even outside the workspaces.
    const writable = deps.config.WORKSPACE_RESTRICTION_ENABLED ? roots : [...roots, directory];
    const launch = shellLaunch({ sandbox: deps.sandbox, workingDirectory: directory, writable, hidden: serviceFiles(deps.config), home, environment });
    let shell: ShellSession;
    try {
      shell = await ShellSession.start(launch);
    } catch (error) {
      throw new AppError('TOOL_EXECUTION_ERROR', 'The terminal could not be started', { cause: error });
    }
    const session = new TerminalSession({ id: newId(), ownerId: actor.user.id, initialDirectory: directory, home, shell });
    try {
      await recordAudit(deps.store, {
        type: 'terminal',
        userId: actor.user.id,
        ip: actor.ip,
        details: { action: 'created', terminalId: session.id, workingDirectory: directory, environment: Object.keys(environment) },
      });
    } catch (error) {
      session.kill();
      throw error;
    }
    deps.terminals.add(session);
    return session;
  } finally {
    releaseSlot();
  }
}
