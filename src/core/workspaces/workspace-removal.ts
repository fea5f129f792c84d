import { recordAudit } from '../audit/record-audit.js';
import type { Actor } from '../auth/actor.js';
import type { Cluster } from '../cluster/cluster.js';
import type { Store } from '../db/store.js';
import type { Logger } from '../logger.js';
import type { TerminalManager } from '../terminals/terminal-manager.js';
import type { WorkspaceFiles } from './workspace-files.js';

// A removed workspace is no longer the service's to hand out (CONTRACT §11): terminals whose
// sandbox made it writable are ended (a new one would not get it), and its file helper goes.
// Terminals live on the instance that started them, so the other instances are told too.

const CHANNEL = 'workspace-removed';

export interface RemovalDeps {
  store: Store;
  terminals: TerminalManager;
  files: WorkspaceFiles;
  logger: Logger;
  cluster?: Cluster;
}

interface RemovalMessage {
  from: string;
  path: string;
}

/** Ends, on this instance, what could still write the removed workspace; audited per terminal. */
async function releaseHere(deps: RemovalDeps, path: string, ip: string): Promise<void> {
  await deps.files.forget(path);
  for (const terminal of deps.terminals.endWritersOf(path, 'workspace_removed')) {
    await recordAudit(deps.store, {
      type: 'terminal',
      userId: terminal.ownerId,
      ip,
      details: { action: 'ended', terminalId: terminal.id, reason: 'workspace_removed', workspace: path },
    }).catch((error: unknown) => {
      deps.logger.warn({ err: error, terminalId: terminal.id }, 'audit of a terminal ended with its workspace failed');
    });
  }
}

export async function releaseRemovedWorkspace(deps: RemovalDeps, actor: Actor, path: string): Promise<void> {
  await releaseHere(deps, path, actor.ip);
  const cluster = deps.cluster;
  if (cluster) {
    const message: RemovalMessage = { from: cluster.instanceId, path };
    await cluster.bus.publish(CHANNEL, message).catch((error: unknown) => {
      deps.logger.warn({ err: error, path }, 'other instances could not be told of a removed workspace');
    });
  }
}

/** Listens for removals made on other instances. */
export async function followWorkspaceRemovals(deps: RemovalDeps & { cluster: Cluster }): Promise<void> {
  await deps.cluster.bus.subscribe(CHANNEL, (message) => {
    const { from, path } = message as RemovalMessage;
    if (from !== deps.cluster.instanceId && typeof path === 'string') void releaseHere(deps, path, '');
  });
}
