import type { DirectoryListing, FileContent, FileErrorCode, WrittenFile } from './file-operations.mjs';

// What the service and a workspace's file helper say to each other: one JSON object per line,
// requests on the helper's standard input, replies (with the request's id) on its output.

export type HelperCall =
  | { op: 'list'; path: string; maxEntries: number }
  | { op: 'read'; path: string; maxBytes: number }
  | { op: 'write'; path: string; content: string };

export type HelperRequest = HelperCall & { id: number };

export type HelperResult = DirectoryListing | FileContent | WrittenFile;

export type HelperReply = { id: number; ok: true; result: HelperResult } | { id: number; ok: false; code: FileErrorCode | 'INTERNAL'; message: string };
