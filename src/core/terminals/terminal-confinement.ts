import { join } from 'node:path';
import { recordAudit } from '../audit/record-audit.js';
import type { Actor } from '../auth/actor.js';
import type { CommandDeps } from '../commands/command-deps.js';
import type { Logger } from '../logger.js';
import { SandboxCgroup } from '../sandbox/cgroup-limits.js';
import { EgressProxy } from '../sandbox/egress-proxy.js';
import { removeRuntimeFolder, runtimeFolder } from '../sandbox/runtime-folder.js';
import { sandboxLimits } from '../sandbox/sandbox-limits.js';
import { RefusalAudit } from './refusal-audit.js';

/**
 * What one terminal holds besides its shell (CONTRACT §11): its cgroup, which bounds the memory
 * and processes of everything it runs, and its own egress proxy, so each refusal is audited with
 * the terminal's user. Released once, when the terminal ends or fails to start.
 */
/** A terminal held at its process limit this many seconds in a row is ended: a fork bomb never lets go. */
const PROCESS_LIMIT_SECONDS = 5;

export class TerminalConfinement {
  private released: Promise<void> | null = null;
  private watchdog: NodeJS.Timeout | null = null;

  private constructor(
    readonly cgroup: SandboxCgroup | null,
    private readonly proxy: EgressProxy | null,
    /** The folder the proxy socket lives in, bound into the sandbox; null without a proxy. */
    readonly proxyFolder: string | null,
    private readonly refusals: RefusalAudit | null = null,
  ) {}

  static async prepare(deps: CommandDeps & { logger?: Logger }, actor: Actor, terminalId: string): Promise<TerminalConfinement> {
    const { sandbox } = deps;
    const limits = sandboxLimits(deps.config);
    const cgroup = sandbox.mode !== 'unavailable' && sandbox.cgroups ? SandboxCgroup.create(sandbox.cgroups, terminalId, limits) : null;
    if (sandbox.mode !== 'bwrap' || sandbox.network !== 'proxy' || !deps.egressPolicy) return new TerminalConfinement(cgroup, null, null);
    // In the service's private runtime root (runtime-folder.ts), never a workspace.
    const folder = runtimeFolder('net');
    const audit = new RefusalAudit((entry) => {
      recordAudit(deps.store, {
        type: 'command',
        userId: actor.user.id,
        ip: actor.ip,
        details: { action: 'egress_refused', terminalId, ...entry },
      }).catch((error: unknown) => {
        deps.logger?.warn({ err: error, terminalId }, 'audit of a refused destination failed');
      });
    });
    try {
      const proxy = await EgressProxy.start({
        socketPath: join(folder, 'proxy.sock'),
        policy: deps.egressPolicy,
        onRefused: ({ destination, reason }) => {
          audit.refused(destination, reason);
        },
      });
      return new TerminalConfinement(cgroup, proxy, folder, audit);
    } catch (error) {
      void cgroup?.remove();
      removeRuntimeFolder(folder);
      throw error;
    }
  }

  /**
   * Calls `exhausted` once the terminal has sat at its process limit for a few seconds: the
   * processes of a fork bomb keep retrying their forks forever, so the terminal is ended for them.
   */
  watchProcesses(exhausted: () => void): void {
    const cgroup = this.cgroup;
    if (cgroup === null || this.released !== null) return;
    let seconds = 0;
    this.watchdog = setInterval(() => {
      seconds = cgroup.atProcessLimit() ? seconds + 1 : 0;
      if (seconds < PROCESS_LIMIT_SECONDS) return;
      if (this.watchdog) clearInterval(this.watchdog);
      exhausted();
    }, 1000);
    this.watchdog.unref();
  }

  /**
   * Ends every process the terminal started (wherever it moved), its proxy and its cgroup; resolves
   * once they are gone (the service's stop waits for it, so nothing is left behind).
   */
  release(): Promise<void> {
    this.released ??= (async () => {
      if (this.watchdog) clearInterval(this.watchdog);
      this.refusals?.flush();
      this.cgroup?.killAll();
      const folder = this.proxyFolder;
      await Promise.all([
        this.cgroup?.remove(),
        this.proxy?.close().finally(() => {
          if (folder !== null) removeRuntimeFolder(folder);
        }),
      ]);
    })();
    return this.released;
  }
}
