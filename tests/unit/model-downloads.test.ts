import { describe, expect, it } from 'vitest';
import { ModelDownloads, type ActiveDownload, type ModelDownloadEvent } from '../../src/core/models/model-downloads.js';

/** A task the test settles by hand. */
function controlledTask() {
  let handle: ActiveDownload | undefined;
  let finish: () => void = () => undefined;
  const task = (download: ActiveDownload) => {
    handle = download;
    return new Promise<void>((resolve) => {
      finish = resolve;
    });
  };
  return {
    task,
    get handle(): ActiveDownload {
      if (!handle) throw new Error('task not started');
      return handle;
    },
    finish: () => {
      finish();
    },
  };
}

describe('ModelDownloads', () => {
  it('runs one download per model (a bare name is its latest tag) and sums layer progress', () => {
    const downloads = new ModelDownloads({ progressIntervalMs: 0 });
    const events: ModelDownloadEvent[] = [];
    downloads.onProgress((event) => events.push(event));
    const pull = controlledTask();
    expect(downloads.start('llama3.2', pull.task)).toBe(true);
    expect(downloads.start('llama3.2:latest', controlledTask().task)).toBe(false);
    expect(downloads.isDownloading('llama3.2:latest')).toBe(true);

    pull.handle.report({ status: 'pulling manifest' });
    pull.handle.report({ status: 'pulling a', digest: 'sha256:a', total: 100, completed: 50 });
    pull.handle.report({ status: 'pulling b', digest: 'sha256:b', total: 300, completed: 30 });
    pull.handle.report({ status: 'pulling a', digest: 'sha256:a', total: 100, completed: 100 });
    expect(downloads.get('llama3.2')).toMatchObject({ status: 'downloading', phase: 'pulling a', progress: { completed: 130, total: 400 } });

    pull.handle.succeed();
    expect(downloads.get('llama3.2')).toBeUndefined();
    expect(downloads.list()).toEqual([]);
    expect(events.at(-1)).toEqual({ modelName: 'llama3.2', status: 'available', progress: { completed: 130, total: 400 } });
    expect(events[0]).toEqual({ modelName: 'llama3.2', status: 'downloading', progress: { completed: 0, total: 0 } });
  });

  it('keeps a failure visible for a while, then forgets it; a new start clears it', () => {
    let now = 1_000_000;
    const downloads = new ModelDownloads({ failureRetentionMs: 60_000, now: () => now });
    const pull = controlledTask();
    downloads.start('missing:1b', pull.task);
    pull.handle.fail('pull model manifest: file does not exist');
    expect(downloads.get('missing:1b')).toMatchObject({ status: 'failed', error: 'pull model manifest: file does not exist' });
    expect(downloads.isDownloading('missing:1b')).toBe(false);
    now += 60_000;
    expect(downloads.list()).toEqual([]);

    const retry = controlledTask();
    expect(downloads.start('missing:1b', retry.task)).toBe(true);
    expect(downloads.get('missing:1b')?.status).toBe('downloading');
  });

  it('a task that ends without settling, or throws, counts as failed', async () => {
    const downloads = new ModelDownloads();
    const silent = controlledTask();
    downloads.start('a', silent.task);
    silent.finish();
    downloads.start('b', () => Promise.reject(new Error('boom')));
    await new Promise((resolve) => setImmediate(resolve));
    expect(downloads.get('a')).toMatchObject({ status: 'failed', error: 'download ended without an outcome' });
    expect(downloads.get('b')).toMatchObject({ status: 'failed', error: 'boom' });
  });

  it('throttles progress events but always sends status changes; a failing listener harms nobody', () => {
    let now = 0;
    const downloads = new ModelDownloads({ progressIntervalMs: 250, now: () => now });
    const events: ModelDownloadEvent[] = [];
    downloads.onProgress(() => {
      throw new Error('closed socket');
    });
    const unsubscribe = downloads.onProgress((event) => events.push(event));
    const pull = controlledTask();
    downloads.start('m', pull.task);
    now = 1000;
    for (let completed = 1; completed <= 10; completed++) pull.handle.report({ digest: 'd', total: 10, completed });
    now = 1300;
    pull.handle.report({ digest: 'd', total: 10, completed: 10 });
    pull.handle.fail('disk full');
    expect(events.map((event) => [event.status, event.progress.completed])).toEqual([
      ['downloading', 0],
      ['downloading', 1],
      ['downloading', 10],
      ['failed', 10],
    ]);
    unsubscribe();
    downloads.start('n', controlledTask().task);
    expect(events).toHaveLength(4);
  });

  it('stop() aborts running downloads, waits for them and refuses new ones', async () => {
    const downloads = new ModelDownloads();
    let aborted = false;
    downloads.start(
      'm',
      (download) =>
        new Promise<void>((resolve) => {
          download.signal.addEventListener('abort', () => {
            aborted = true;
            download.fail('stopped');
            resolve();
          });
        }),
    );
    await downloads.stop();
    expect(aborted).toBe(true);
    expect(downloads.start('n', controlledTask().task)).toBe(false);
  });
});
