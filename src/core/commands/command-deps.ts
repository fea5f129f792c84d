import type { Config } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import type { UserEvents } from '../events/user-events.js';
import type { CommandDecisions } from './command-decisions.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import type { SandboxState } from '../sandbox/sandbox-state.js';
import type { EgressPolicy } from '../sandbox/egress-policy.js';
import type { CommandJudge } from '../security/command-judge.js';
import type { TerminalManager } from '../terminals/terminal-manager.js';
import type { WorkspaceFiles } from '../workspaces/workspace-files.js';

/** What the terminal and command functions need; the service's AppDeps provides it. */
export interface CommandDeps {
  store: Store;
  config: Config;
  terminals: TerminalManager;
  sandbox: SandboxState;
  /** The model's file tools, run by each workspace's confined helper. */
  files: WorkspaceFiles;
  /** The risk analysis, on a thread of its own. */
  judge: CommandJudge;
  /** What commands may reach through their terminal's egress proxy (SANDBOX_NETWORK=proxy). */
  egressPolicy?: EgressPolicy;
  /** Live pushes to the user's sockets (a held command); absent where nobody listens. */
  events?: UserEvents;
  /** Where paused agents wait for the decision on their held commands; absent where none wait. */
  decisions?: CommandDecisions;
  /** Counts each verdict and each terminal started; absent where nothing is measured. */
  metrics?: ServiceMetrics;
}
