import { Worker } from 'node:worker_threads';
import type { JudgementMessage } from './analysis-worker.js';
import type { Judgement, JudgementRequest } from './line-judgement.js';

// Bounded analysis (CONTRACT §11): command lines are judged on a thread of their own, so a long
// or hostile line never stalls the requests of others, and a judgement that takes too long is
// abandoned (the thread is ended and a fresh one takes the next line) and answered `high`.

/** Longer than any line of MAX_COMMAND_LENGTH should take; past it the line is not worth waiting for. */
const JUDGEMENT_TIMEOUT_MS = 5000;

interface Waiting {
  request: JudgementRequest;
  resolve: (judgement: Judgement) => void;
}

/** Run from TypeScript (tests, `npm run dev`), the worker loads its sources through tsx's loader. */
const fromSource = import.meta.url.endsWith('.ts');
const SOURCE_BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
import('tsx/esm/api').then(({ register }) => { register(); return import(workerData.entry); });
`;

function startWorker(): Worker {
  if (!fromSource) return new Worker(new URL('./analysis-worker.js', import.meta.url));
  return new Worker(SOURCE_BOOTSTRAP, { eval: true, workerData: { entry: new URL('./analysis-worker.ts', import.meta.url).href } });
}

const tooLong = (timeoutMs: number): Judgement => ({
  verdict: { level: 'high', reasons: [`cannot be analysed: the analysis took longer than ${timeoutMs / 1000} s`] },
});

const failed = (message: string): Judgement => ({ verdict: { level: 'high', reasons: [`cannot be analysed: ${message}`] } });

/** One analysis thread, judging one line at a time, in order. */
export class CommandJudge {
  private worker: Worker | null = null;
  /** The thread has loaded: a line's time budget starts when it is handed over, not while loading. */
  private workerReady = false;
  private readonly queue: Waiting[] = [];
  private current: { id: number; waiting: Waiting; timer: NodeJS.Timeout } | null = null;
  private nextId = 1;
  private closed = false;
  private readonly timeoutMs: number;

  constructor(options: { timeoutMs?: number } = {}) {
    this.timeoutMs = options.timeoutMs ?? JUDGEMENT_TIMEOUT_MS;
  }

  judge(request: JudgementRequest): Promise<Judgement> {
    if (this.closed) return Promise.resolve(failed('the service is stopping'));
    return new Promise((resolve) => {
      this.queue.push({ request, resolve });
      this.pump();
    });
  }

  /** Ends the thread; lines still waiting are answered `high`. */
  async close(): Promise<void> {
    this.closed = true;
    for (const waiting of this.queue.splice(0)) waiting.resolve(failed('the service is stopping'));
    this.finish(failed('the service is stopping'));
    await this.worker?.terminate();
    this.worker = null;
  }

  private pump(): void {
    if (this.current !== null || this.closed || this.queue.length === 0) return;
    const worker = this.ensureWorker();
    if (!this.workerReady) return;
    const waiting = this.queue.shift();
    if (!waiting) return;
    const id = this.nextId++;
    const timer = setTimeout(() => {
      // A thread stuck on one line is ended; the next line gets a fresh one.
      this.dropWorker();
      this.finish(tooLong(this.timeoutMs));
    }, this.timeoutMs);
    this.current = { id, waiting, timer };
    const message: JudgementMessage = { id, request: waiting.request };
    worker.postMessage(message);
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker();
    worker.unref();
    this.workerReady = false;
    worker.on('message', (message: { id: number; judgement: Judgement } | { ready: true }) => {
      if ('ready' in message) {
        if (this.worker !== worker) return;
        this.workerReady = true;
        this.pump();
      } else if (this.current?.id === message.id) this.finish(message.judgement);
    });
    worker.on('error', (error) => {
      if (this.worker !== worker) return;
      this.dropWorker();
      this.finish(failed(error.message));
    });
    worker.on('exit', () => {
      // Only the thread in use matters: one ended on purpose has been replaced already.
      if (this.worker !== worker) return;
      this.worker = null;
      if (this.current !== null) this.finish(failed('the analysis thread ended'));
      else this.failWaiting('the analysis thread could not start');
    });
    this.worker = worker;
    return worker;
  }

  private finish(judgement: Judgement): void {
    const current = this.current;
    if (current === null) return;
    this.current = null;
    clearTimeout(current.timer);
    current.waiting.resolve(judgement);
    this.pump();
  }

  /** A thread that dies before it is ready would leave every line waiting: they are answered high. */
  private failWaiting(message: string): void {
    for (const waiting of this.queue.splice(0)) waiting.resolve(failed(message));
  }

  /** Forgets the thread in use and ends it; the next line starts a fresh one. */
  private dropWorker(): void {
    const worker = this.worker;
    this.worker = null;
    void worker?.terminate();
  }
}
