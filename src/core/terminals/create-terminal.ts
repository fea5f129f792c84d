import { shellStateFor } from '../security/shell-state.js';
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { recordAudit } from '../audit/record-audit.js';
import type { Actor } from '../auth/actor.js';
import type { CommandDeps } from '../commands/command-deps.js';
import { intactWorkspaces } from '../commands/workspace-roots.js';
import { AppError } from '../errors/app-error.js';
import { newId } from '../ids.js';
import { isPathInside } from '../paths/path-inside.js';
import { PinError, PinnedBinds, writerBinds } from '../sandbox/pinned-binds.js';
import { sandboxLimits } from '../sandbox/sandbox-limits.js';
import { serviceFiles } from '../sandbox/service-files.js';
import { findActiveWorkspace } from '../workspaces/active-workspace.js';
import type { WorkspaceRecord } from '../workspaces/workspace-integrity.js';
import { isSystemPath } from '../workspaces/workspace-path.js';
import { registrationProblem, servicePaths } from '../workspaces/workspace-rules.js';
import { shellLaunch } from './shell-launch.js';
import { ShellSession } from './shell-session.js';
import { TerminalConfinement } from './terminal-confinement.js';
import { TerminalSession } from './terminal-session.js';

export interface CreateTerminalInput {
  workingDirectory?: string;
  /** Variable names already checked against the dangerous-name list by the input schema. */
  environment?: Record<string, string>;
}

function workspaceError(message: string): AppError {
  return new AppError('WORKSPACE_ERROR', message);
}

function outsideWorkspaces(): AppError {
  return new AppError('SECURITY_VIOLATION', 'workingDirectory is outside every registered workspace');
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
    const restricted = deps.config.WORKSPACE_RESTRICTION_ENABLED;
    const outside = (path: string) => restricted && !roots.some((root) => isPathInside(path, root));
    // Judged as written before the disk is asked, so the answer never tells whether a folder
    // outside the workspaces exists; judged again once resolved, for links that lead out.
    if (outside(resolve(requested))) throw outsideWorkspaces();
    const directory = usableDirectory(requested, 'workingDirectory');
    if (outside(directory)) throw outsideWorkspaces();
    return directory;
  }
  const active = await findActiveWorkspace(deps.store, userId);
  if (!active) {
    throw workspaceError('No workspace is registered: add one with POST /api/workspaces/add, or give workingDirectory');
  }
  // Not intact any more (replaced, or no longer allowed): nothing runs in it (CONTRACT §11).
  if (!roots.includes(active.path)) throw workspaceError(`The active workspace cannot be used: ${active.path} is missing or is not the registered directory`);
  return usableDirectory(active.path, `The active workspace's folder`);
}

/**
 * Whether a folder outside the workspaces may be made writable (WORKSPACE_RESTRICTION_ENABLED=false):
 * only one that could be registered as a workspace, so never the system, the service's own folders
 * or what lies in them, home's hidden folders, nor a folder that holds any of those.
 */
async function safeToOpen(directory: string, config: CommandDeps['config']): Promise<boolean> {
  if (await isSystemPath(directory)) return false;
  return registrationProblem(directory, servicePaths(config)) === null;
}

/**
 * The workspaces a terminal binds, pinned by descriptor (pinned-binds.ts): a workspace that cannot
 * be pinned (replaced since the check) is left out, unless the terminal starts in it.
 */
function pinWorkspaces(workspaces: readonly WorkspaceRecord[], ownFolder: string | null, directory: string): PinnedBinds {
  const pins = new PinnedBinds();
  try {
    for (const workspace of workspaces) {
      const identity = workspace.device !== null && workspace.inode !== null ? { device: workspace.device, inode: workspace.inode } : null;
      try {
        pins.addWorkspace(workspace.path, identity, { writable: true, protectGit: true });
      } catch (error) {
        if (!(error instanceof PinError) || isPathInside(directory, workspace.path)) throw workspaceError(`The workspace cannot be used: ${String(error)}`);
      }
    }
    if (ownFolder !== null) pins.addWorkspace(ownFolder, null, { writable: true, protectGit: true });
    return pins;
  } catch (error) {
    pins.close();
    throw error instanceof PinError ? workspaceError(error.message) : error;
  }
}

/** Starts a terminal for the actor: one persistent sandboxed shell (CONTRACT §4). */
export async function createTerminal(deps: CommandDeps, actor: Actor, input: CreateTerminalInput): Promise<TerminalSession> {
  if (deps.sandbox.mode === 'unavailable') {
    throw new AppError('SECURITY_VIOLATION', `System commands are refused without a sandbox: ${deps.sandbox.problem ?? ''}`, {
      details: { sandbox: 'unavailable' },
    });
  }
  const releaseSlot = deps.terminals.claimSlot(actor.user.id);
  try {
    const workspaces = await intactWorkspaces(deps.store, deps.config);
    const roots = workspaces.map((workspace) => workspace.path);
    const directory = await startDirectory(deps, actor.user.id, input.workingDirectory, roots);
    const environment = input.environment ?? {};
    const home = environment.HOME ?? homedir();
    const { directory: hiddenDirectory, file: hiddenFile } = serviceFiles(deps.config);
    // With restriction off, the terminal's own folder is writable even outside the workspaces
    // (CONTRACT §1), unless that would open the system or the service itself to commands; then
    // the shell starts in an empty folder of that name, seeing nothing of the host's.
    const outsideRoots = !roots.some((root) => isPathInside(directory, root));
    // A folder around a workspace, writable, would cover that workspace's read-only .git entries
    // (CONTRACT §11): it could not be registered either (workspaces do not nest).
    const held = outsideRoots ? roots.find((root) => isPathInside(root, directory)) : undefined;
    if (held !== undefined) throw workspaceError(`${directory} holds the workspace ${held}: start the terminal in the workspace or inside it`);
    const ownFolder = !deps.config.WORKSPACE_RESTRICTION_ENABLED && outsideRoots && (await safeToOpen(directory, deps.config));
    const writable = ownFolder ? [...roots, directory] : roots;
    const emptyFolders = outsideRoots && !ownFolder ? [directory] : [];
    const hidden = [hiddenFile, ...(hiddenDirectory === undefined ? [] : [hiddenDirectory])];
    const id = newId();
    const pins = pinWorkspaces(workspaces, ownFolder ? directory : null, directory);
    // Counted as a sandbox that can write these folders from now (before anything is awaited), so
    // that a terminal starting meanwhile binds nothing this one could swap (WriterBinds).
    const forgetWriter = writerBinds.register(writable, pins.binds.map((bind) => bind.target));
    let confinement: TerminalConfinement;
    try {
      confinement = await TerminalConfinement.prepare(deps, actor, id);
    } catch (error) {
      pins.close();
      forgetWriter();
      throw error;
    }
    let shell: ShellSession;
    try {
      const launch = shellLaunch({
        sandbox: deps.sandbox,
        workingDirectory: directory,
        pins,
        emptyFolders,
        hidden,
        home,
        environment,
        limits: sandboxLimits(deps.config),
        cgroup: confinement.cgroup,
        proxyFolder: confinement.proxyFolder,
      });
      shell = await ShellSession.start(launch);
    } catch (error) {
      // Whatever failed, the descriptors go now (closing twice is harmless): a start that fails
      // again and again must not use up the service's descriptors.
      pins.close();
      void confinement.release().then(forgetWriter);
      throw new AppError('TOOL_EXECUTION_ERROR', 'The terminal could not be started', { cause: error });
    }
    // Forgotten once nothing of it runs any more: its cgroup is gone, so no process is left.
    const ended = () => {
      void confinement.release().then(forgetWriter, forgetWriter);
    };
    shell.onExit(ended);
    if (shell.exited) ended();
    const session = new TerminalSession({
      id, ownerId: actor.user.id, initialDirectory: directory, home, shell, writable, confinement, shellState: shellStateFor(environment),
    });
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
    confinement.watchProcesses(() => {
      session.end('process_limit');
      void recordAudit(deps.store, {
        type: 'terminal',
        userId: actor.user.id,
        ip: actor.ip,
        details: { action: 'ended', terminalId: session.id, reason: 'process_limit', limit: deps.config.SANDBOX_PROCESSES },
      }).catch(() => undefined);
    });
    deps.metrics?.terminalCreated();
    return session;
  } finally {
    releaseSlot();
  }
}
