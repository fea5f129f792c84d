import { canonicalOllamaName } from './model-name.js';
import type { DownloadProgress } from './model-entry.js';

/** A download as the model lists show it. */
export interface ModelDownloadState {
  /** The name as the caller asked for it. */
  modelName: string;
  status: 'downloading' | 'failed';
  progress: DownloadProgress;
  /** Ollama's last status line: "pulling manifest", "pulling 6a0746a1ec1a", "verifying sha256 digest"… */
  phase: string;
  startedAt: string;
  /** Why it failed (status `failed` only). */
  error?: string;
}

/** What subscribers (the `/ws` `model_download` push) hear. */
export interface ModelDownloadEvent {
  modelName: string;
  status: 'downloading' | 'available' | 'failed';
  progress: DownloadProgress;
  error?: string;
}

export type ModelDownloadListener = (event: ModelDownloadEvent) => void;

/** One line of Ollama's pull stream (the `ollama` client's ProgressResponse, loosely). */
export interface PullProgressLine {
  status?: string;
  digest?: string;
  completed?: number;
  total?: number;
}

/** The handle a download task reports through; the first of succeed/fail settles it. */
export interface ActiveDownload {
  readonly modelName: string;
  /** Aborted when the service stops. */
  readonly signal: AbortSignal;
  report(line: PullProgressLine): void;
  succeed(): void;
  fail(message: string): void;
}

interface Running {
  state: ModelDownloadState;
  layers: Map<string, DownloadProgress>;
  controller: AbortController;
  lastEmittedAt: number;
  done: Promise<void>;
}

export interface ModelDownloadsOptions {
  /** How long a failed download stays listed with its error. */
  failureRetentionMs?: number;
  /** Progress events are sent at most this often per model; status changes always go out. */
  progressIntervalMs?: number;
  now?: () => number;
}

/**
 * The Ollama pulls of this instance: at most one per model at a time, their progress for the
 * model lists, and an event hook for live pushes. In memory only: a pull lives in this process,
 * and a restarted Ollama or service simply starts over.
 */
export class ModelDownloads {
  readonly #running = new Map<string, Running>();
  readonly #failed = new Map<string, { state: ModelDownloadState; at: number }>();
  readonly #listeners = new Set<ModelDownloadListener>();
  readonly #failureRetentionMs: number;
  readonly #progressIntervalMs: number;
  readonly #now: () => number;
  #stopped = false;

  constructor(options: ModelDownloadsOptions = {}) {
    this.#failureRetentionMs = options.failureRetentionMs ?? 10 * 60_000;
    this.#progressIntervalMs = options.progressIntervalMs ?? 250;
    this.#now = options.now ?? Date.now;
  }

  /** Subscribes to download events; returns the unsubscribe function. */
  onProgress(listener: ModelDownloadListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  isDownloading(modelName: string): boolean {
    return this.#running.has(canonicalOllamaName(modelName));
  }

  /** The download of a model, running or recently failed. */
  get(modelName: string): ModelDownloadState | undefined {
    const key = canonicalOllamaName(modelName);
    const running = this.#running.get(key);
    if (running) return snapshot(running.state);
    const failed = this.#failed.get(key);
    return failed && this.#now() - failed.at < this.#failureRetentionMs ? snapshot(failed.state) : undefined;
  }

  /** Running downloads, then recently failed ones. */
  list(): ModelDownloadState[] {
    const now = this.#now();
    for (const [key, failed] of this.#failed) {
      if (now - failed.at >= this.#failureRetentionMs) this.#failed.delete(key);
    }
    return [...[...this.#running.values()].map((running) => running.state), ...[...this.#failed.values()].map((failed) => failed.state)].map(
      snapshot,
    );
  }

  /**
   * Starts `task` as the download of `modelName` unless one is already running (false). The task
   * settles the download through its handle; one that ends without doing so counts as failed.
   */
  start(modelName: string, task: (download: ActiveDownload) => Promise<void>): boolean {
    const key = canonicalOllamaName(modelName);
    if (this.#stopped || this.#running.has(key)) return false;
    this.#failed.delete(key);
    const controller = new AbortController();
    const running: Running = {
      state: {
        modelName,
        status: 'downloading',
        progress: { completed: 0, total: 0 },
        phase: 'starting',
        startedAt: new Date(this.#now()).toISOString(),
      },
      layers: new Map(),
      controller,
      lastEmittedAt: 0,
      done: Promise.resolve(),
    };
    this.#running.set(key, running);
    let settled = false;
    const settle = (outcome: { ok: true } | { ok: false; message: string }) => {
      if (settled) return;
      settled = true;
      this.#running.delete(key);
      if (outcome.ok) {
        this.#emit({ modelName, status: 'available', progress: { ...running.state.progress } });
        return;
      }
      const state: ModelDownloadState = { ...running.state, status: 'failed', error: outcome.message };
      this.#failed.set(key, { state, at: this.#now() });
      this.#emit({ modelName, status: 'failed', progress: { ...state.progress }, error: outcome.message });
    };
    const download: ActiveDownload = {
      modelName,
      signal: controller.signal,
      report: (line) => {
        if (!settled) this.#report(running, line);
      },
      succeed: () => {
        settle({ ok: true });
      },
      fail: (message) => {
        settle({ ok: false, message });
      },
    };
    this.#emit({ modelName, status: 'downloading', progress: { completed: 0, total: 0 } });
    running.done = task(download).then(
      () => {
        settle({ ok: false, message: 'download ended without an outcome' });
      },
      (error: unknown) => {
        settle({ ok: false, message: error instanceof Error ? error.message : String(error) });
      },
    );
    return true;
  }

  /** Aborts every running download and waits for their tasks to end (service shutdown). */
  async stop(): Promise<void> {
    this.#stopped = true;
    const running = [...this.#running.values()];
    for (const download of running) download.controller.abort(new Error('service stopping'));
    await Promise.all(running.map((download) => download.done));
  }

  #report(running: Running, line: PullProgressLine): void {
    if (line.status) running.state.phase = line.status;
    // Ollama reports each layer (digest) separately; the model's progress is their sum.
    if (line.digest && typeof line.total === 'number' && line.total > 0) {
      running.layers.set(line.digest, { completed: Math.min(line.completed ?? 0, line.total), total: line.total });
      let completed = 0;
      let total = 0;
      for (const layer of running.layers.values()) {
        completed += layer.completed;
        total += layer.total;
      }
      running.state.progress = { completed, total };
    }
    const now = this.#now();
    if (now - running.lastEmittedAt >= this.#progressIntervalMs) {
      running.lastEmittedAt = now;
      this.#emit({ modelName: running.state.modelName, status: 'downloading', progress: { ...running.state.progress } });
    }
  }

  #emit(event: ModelDownloadEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // A subscriber's failure (a closed socket) must not break the download or other subscribers.
      }
    }
  }
}

function snapshot(state: ModelDownloadState): ModelDownloadState {
  return { ...state, progress: { ...state.progress } };
}
