import { createInterface } from 'node:readline';
import { FileToolError, listFiles, readFile, writeFile } from './file-operations.mjs';
import type { HelperReply, HelperRequest, HelperResult } from './helper-protocol.mjs';

// A workspace's file helper (CONTRACT §11): started by the service under bubblewrap in a mount
// namespace that holds the read-only system and this one workspace (its first argument), it
// runs the model's file tools on the service's behalf, so that the service process never opens
// a workspace path itself. Requests are answered concurrently, each with its own id.

const root = process.argv[2] ?? '';

function run(request: HelperRequest): Promise<HelperResult> {
  switch (request.op) {
    case 'list':
      return listFiles(root, request.path, { maxEntries: request.maxEntries });
    case 'read':
      return readFile(root, request.path, { maxBytes: request.maxBytes });
    case 'write':
      return writeFile(root, request.path, request.content);
  }
}

function reply(message: HelperReply): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

async function answer(line: string): Promise<void> {
  let request: HelperRequest;
  try {
    request = JSON.parse(line) as HelperRequest;
  } catch {
    return;
  }
  try {
    reply({ id: request.id, ok: true, result: await run(request) });
  } catch (error) {
    if (error instanceof FileToolError) reply({ id: request.id, ok: false, code: error.code, message: error.message });
    else reply({ id: request.id, ok: false, code: 'INTERNAL', message: error instanceof Error ? error.message : String(error) });
  }
}

// The first line says the helper runs: its sandbox is mounted, and the service may check it.
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
createInterface({ input: process.stdin }).on('line', (line) => {
  void answer(line);
});
// The service closing our input is the end.
process.stdin.on('end', () => {
  process.exit(0);
});
