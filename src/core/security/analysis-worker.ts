import { parentPort } from 'node:worker_threads';
import { judgeLine, type JudgementRequest } from './line-judgement.js';

// The risk analysis's own thread (command-judge.ts): a long or hostile command line takes its
// time here, never on the event loop that answers everyone else.

export interface JudgementMessage {
  id: number;
  request: JudgementRequest;
}

parentPort?.on('message', (message: JudgementMessage) => {
  parentPort?.postMessage({ id: message.id, judgement: judgeLine(message.request) });
});
// The parser initialises on its first line: done here, so no line's time budget pays for it.
judgeLine({ command: 'true', context: { cwd: null, home: '/', workspaceRoots: [], restrictToWorkspaces: true } });
parentPort?.postMessage({ ready: true });
