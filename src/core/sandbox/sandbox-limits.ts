import type { Config } from '../config/load-config.js';

/** A terminal's limits (CONTRACT §11), in bytes and processes, from SANDBOX_* settings. */
export interface SandboxLimits {
  memoryBytes: number;
  processes: number;
  fileSizeBytes: number;
  /** Each of the private /tmp, /var/tmp, /dev/shm and home. */
  tmpBytes: number;
}

const MB = 1024 * 1024;

export function sandboxLimits(config: Pick<Config, 'SANDBOX_MEMORY_MB' | 'SANDBOX_PROCESSES' | 'SANDBOX_FILE_SIZE_MB' | 'SANDBOX_TMP_MB'>): SandboxLimits {
  return {
    memoryBytes: config.SANDBOX_MEMORY_MB * MB,
    processes: config.SANDBOX_PROCESSES,
    fileSizeBytes: config.SANDBOX_FILE_SIZE_MB * MB,
    tmpBytes: config.SANDBOX_TMP_MB * MB,
  };
}

/** The defaults of CONTRACT §1, for code that starts shells without a configuration (tests). */
export const defaultSandboxLimits: SandboxLimits = sandboxLimits({ SANDBOX_MEMORY_MB: 1024, SANDBOX_PROCESSES: 256, SANDBOX_FILE_SIZE_MB: 1024, SANDBOX_TMP_MB: 512 });
