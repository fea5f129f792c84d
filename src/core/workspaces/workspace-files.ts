import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { AppError } from '../errors/app-error.js';
import type { Logger } from '../logger.js';
import { misplacedMounts } from '../sandbox/mount-check.js';
import type { SandboxState } from '../sandbox/sandbox-state.js';
import { prepareWorkspaceProcess, type WorkspaceIdentity } from '../sandbox/workspace-process.js';
import { findDescendant } from '../terminals/process-tree.js';
import type { DirectoryListing, FileContent, WrittenFile } from './file-helper/file-operations.mjs';
import type { HelperCall } from './file-helper/helper-protocol.mjs';
import { helperProgram } from './file-helper/helper-script.js';

export type { DirectoryListing, EntryType, FileContent, FileEntry, WrittenFile } from './file-helper/file-operations.mjs';

// The model's file tools, run by one long-lived helper process per workspace (CONTRACT §11).
// Each helper lives in a bubblewrap sandbox whose mount namespace holds the read-only system and
// that one workspace: whatever a symbolic link, a `..` or a directory swapped mid-call makes of a
// path, the helper has nothing else to reach (not another workspace, not the service's files,
// not /etc/shadow). The service process itself never opens a workspace path. Starting bubblewrap
// for each call would cost 10–15 ms; a helper answers in well under one.

export const DEFAULT_MAX_ENTRIES = 1000;
export const DEFAULT_MAX_READ_BYTES = 256 * 1024;

/** A call the helper has not answered by then ends the helper (a hung disk, a hostile FIFO). */
const CALL_TIMEOUT_MS = 15_000;
/** A helper nobody has used for this long is ended; the next call starts a new one. */
const IDLE_TIMEOUT_MS = 10 * 60 * 1000;
/** Helpers alive at once; past it the least recently used ends. */
const MAX_HELPERS = 16;
/** The helper's V8 heap: enough for a 1 MB write and a large listing, not for a runaway. */
const HELPER_HEAP_MB = 128;
/** Its cgroup: the heap above and Node's own needs, and a few processes (Node's threads are not counted in v1 pids? they are: a thread is a task). */
const HELPER_LIMITS = { memoryBytes: 384 * 1024 * 1024, processes: 32 };
/** How long a helper may take to start. */
const START_TIMEOUT_MS = 10_000;
/** A reply line longer than this is no reply of the helper's: it is ended. */
const MAX_REPLY_CHARS = 16 * 1024 * 1024;

// The helper is a separate process, and one whose workspace a command may have filled with
// anything: its replies are checked like any other input.
const entrySchema = z.object({ name: z.string(), type: z.enum(['file', 'directory', 'symlink', 'other']), size: z.number().optional() });
const replySchema = z.discriminatedUnion('ok', [
  z.object({ id: z.number(), ok: z.literal(true), result: z.unknown() }),
  z.object({ id: z.number(), ok: z.literal(false), code: z.string(), message: z.string().max(10_000) }),
]);
const listingSchema = z.object({ path: z.string(), entries: z.array(entrySchema), truncated: z.boolean() });
const contentSchema = z.object({ path: z.string(), size: z.number(), content: z.string(), truncated: z.boolean() });
const writtenSchema = z.object({ path: z.string(), size: z.number(), created: z.boolean() });

interface Pending {
  resolve: (result: unknown) => void;
  reject: (error: AppError) => void;
  timer: NodeJS.Timeout;
}

const helperFailed = (message: string) => new AppError('TOOL_EXECUTION_ERROR', message);

function refusal(code: string, message: string): AppError {
  if (code === 'WORKSPACE_ERROR' || code === 'SECURITY_VIOLATION' || code === 'INVALID_REQUEST') return new AppError(code, message);
  return helperFailed(`The file operation failed: ${message}`);
}

/** One workspace's helper process. */
class FileHelper {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private ended = false;
  private markReady: (() => void) | null = null;
  private readonly ready: Promise<void>;
  lastUsed = Date.now();

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly onEnd: () => void,
    private readonly release: () => Promise<void>,
    logger: Logger | undefined,
  ) {
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4096);
    });
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(helperFailed('The file helper did not start in time'));
        this.end('The file helper did not start in time');
      }, START_TIMEOUT_MS);
      this.markReady = () => {
        clearTimeout(timer);
        resolve();
      };
      child.once('exit', () => {
        clearTimeout(timer);
        reject(helperFailed('The file helper could not be started'));
      });
    });
    this.ready.catch(() => undefined);
    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    lines.on('line', (line) => {
      this.receive(line);
    });
    child.on('error', () => {
      this.end('The file helper could not be started');
    });
    child.on('exit', (code, signal) => {
      if (!this.ended && (code !== 0 || signal !== null)) logger?.warn({ code, signal, stderr }, 'a workspace file helper ended');
      this.end('The file helper ended');
    });
    child.stdin.on('error', () => undefined);
  }

  /**
   * Starts the helper for one workspace and resolves once it runs with its sandbox checked: the
   * workspace is bound by descriptor (pinned-binds.ts), and the mounts are checked from the host
   * before the first request (mount-check.ts).
   */
  static async start(workspace: WorkspaceIdentity, sandbox: SandboxState, onEnd: () => void, logger: Logger | undefined): Promise<FileHelper> {
    const program = await helperProgram();
    const inside = '/run/assistant-helper';
    const node = [process.execPath, `--max-old-space-size=${HELPER_HEAP_MB}`, '--no-warnings'];
    const env = { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' };
    if (sandbox.mode !== 'bwrap') {
      // SANDBOX=none: the operator chose to run commands unconfined; the helper is a plain process.
      const child = spawn(node[0] ?? 'node', [...node.slice(1), `${program.folder}/${program.entry}`, workspace.path], { env, cwd: workspace.path, stdio: 'pipe' });
      const helper = new FileHelper(child, onEnd, () => Promise.resolve(), logger);
      await helper.ready;
      return helper;
    }
    const prepared = prepareWorkspaceProcess(
      { sandbox, workspace, writable: true, limits: HELPER_LIMITS, kind: 'helper', runtime: [{ source: program.folder, target: inside }] },
      [...node, `${inside}/${program.entry}`, workspace.path],
    );
    const [file = '/bin/bash', ...args] = prepared.argv;
    const child = spawn(file, args, { env, stdio: 'pipe' });
    const helper = new FileHelper(child, onEnd, () => prepared.release(), logger);
    try {
      await helper.ready;
      const inner = child.pid === undefined ? null : findDescendant(child.pid, 'node', 6);
      const problem = inner === null ? 'the helper process could not be found' : misplacedMounts(inner, prepared.pins.expectedMounts());
      if (problem !== null) throw helperFailed(`The file helper's sandbox did not come up as intended (the workspace changed while it started?): ${problem}`);
      return helper;
    } catch (error) {
      helper.end('The file helper could not be started');
      throw error;
    } finally {
      prepared.pins.close();
    }
  }

  call(request: HelperCall): Promise<unknown> {
    if (this.ended) return Promise.reject(helperFailed('The file helper ended'));
    const id = this.nextId++;
    this.lastUsed = Date.now();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.end('The file operation took too long and was stopped');
      }, CALL_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer });
      this.child.stdin.write(`${JSON.stringify({ ...request, id })}\n`);
    });
  }

  /** Resolves once the helper's cgroup is gone, after end(). */
  releasing: Promise<void> = Promise.resolve();

  end(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.child.kill('SIGKILL');
    this.releasing = this.release();
    for (const { reject, timer } of this.pending.values()) {
      clearTimeout(timer);
      reject(helperFailed(reason));
    }
    this.pending.clear();
    this.onEnd();
  }

  private receive(line: string): void {
    if (this.markReady !== null) {
      // Nothing else may come first: a helper that says anything but ready is no helper of ours.
      const ready = this.markReady;
      this.markReady = null;
      if (line === JSON.stringify({ ready: true })) ready();
      else this.end('The file helper answered nonsense');
      return;
    }
    if (line.length > MAX_REPLY_CHARS) {
      this.end('The file helper answered nonsense');
      return;
    }
    let parsed: z.infer<typeof replySchema>;
    try {
      parsed = replySchema.parse(JSON.parse(line));
    } catch {
      this.end('The file helper answered nonsense');
      return;
    }
    const waiting = this.pending.get(parsed.id);
    if (!waiting) return;
    this.pending.delete(parsed.id);
    clearTimeout(waiting.timer);
    if (parsed.ok) waiting.resolve(parsed.result);
    else waiting.reject(refusal(parsed.code, parsed.message));
  }
}

/** The helpers of this service, one per workspace root, started on first use. */
export class WorkspaceFiles {
  private readonly helpers = new Map<string, Promise<FileHelper>>();
  private readonly sweep: NodeJS.Timeout;

  constructor(
    private readonly sandbox: SandboxState,
    private readonly logger?: Logger,
  ) {
    this.sweep = setInterval(() => {
      this.endIdle();
    }, 60_000);
    this.sweep.unref();
  }

  async list(workspace: WorkspaceIdentity, path = '.', options: { maxEntries?: number } = {}): Promise<DirectoryListing> {
    const result = await this.call(workspace, { op: 'list', path, maxEntries: options.maxEntries ?? DEFAULT_MAX_ENTRIES });
    return checked(listingSchema, result);
  }

  async read(workspace: WorkspaceIdentity, path: string, options: { maxBytes?: number } = {}): Promise<FileContent> {
    const result = await this.call(workspace, { op: 'read', path, maxBytes: options.maxBytes ?? DEFAULT_MAX_READ_BYTES });
    return checked(contentSchema, result);
  }

  async write(workspace: WorkspaceIdentity, path: string, content: string): Promise<WrittenFile> {
    return checked(writtenSchema, await this.call(workspace, { op: 'write', path, content }));
  }

  /** Ends the helper of a workspace that is no longer registered (or no longer used). */
  forget(root: string): Promise<void> {
    const helper = this.helpers.get(root);
    this.helpers.delete(root);
    if (!helper) return Promise.resolve();
    return helper.then(
      (running) => {
        running.end('The workspace was removed');
        return running.releasing;
      },
      () => undefined,
    );
  }

  /** Ends every helper; resolves once they and their cgroups are gone. */
  async close(): Promise<void> {
    clearInterval(this.sweep);
    await Promise.all([...this.helpers.keys()].map((root) => this.forget(root)));
  }

  private async call(workspace: WorkspaceIdentity, request: HelperCall): Promise<unknown> {
    if (this.sandbox.mode === 'unavailable') {
      throw new AppError('TOOL_EXECUTION_ERROR', `File tools need the sandbox, which does not work here: ${this.sandbox.problem ?? ''}`);
    }
    const helper = await this.helperFor(workspace);
    return helper.call(request);
  }

  private helperFor(workspace: WorkspaceIdentity): Promise<FileHelper> {
    const root = workspace.path;
    let helper = this.helpers.get(root);
    if (helper) {
      // Kept in order of use, so the one evicted for room is the least recently used.
      this.helpers.delete(root);
      this.helpers.set(root, helper);
    } else {
      this.makeRoom();
      const started = FileHelper.start(
        workspace,
        this.sandbox,
        () => {
          if (this.helpers.get(root) === started) this.helpers.delete(root);
        },
        this.logger,
      );
      helper = started;
      this.helpers.set(root, started);
      started.catch(() => {
        if (this.helpers.get(root) === started) this.helpers.delete(root);
      });
    }
    return helper;
  }

  private makeRoom(): void {
    if (this.helpers.size < MAX_HELPERS) return;
    const oldest = this.helpers.keys().next();
    if (!oldest.done) void this.forget(oldest.value);
  }

  private endIdle(): void {
    const now = Date.now();
    for (const [root, helper] of this.helpers) {
      void helper.then((running) => {
        if (now - running.lastUsed > IDLE_TIMEOUT_MS && this.helpers.get(root) === helper) void this.forget(root);
      }, () => undefined);
    }
  }
}

function checked<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw helperFailed('The file helper answered nonsense');
  return parsed.data;
}
