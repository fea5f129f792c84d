import { constants, type Dirent, type Stats } from 'node:fs';
import { lstat, mkdir, open, readdir, realpath } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { AppError } from '../errors/app-error.js';
import { resolveInsideWorkspace } from './confined-path.js';

// The file helpers the chat engine's tools use (list_files, read_file, write_file). Every path is
// confined to the workspace root by resolveInsideWorkspace; the final open uses O_NOFOLLOW, so a
// symbolic link swapped in after the check is refused instead of followed.

export type EntryType = 'file' | 'directory' | 'symlink' | 'other';

export interface FileEntry {
  name: string;
  type: EntryType;
  /** Bytes, for regular files. */
  size?: number;
}

export interface DirectoryListing {
  path: string;
  entries: FileEntry[];
  truncated: boolean;
}

export interface FileContent {
  path: string;
  size: number;
  content: string;
  truncated: boolean;
}

export interface WrittenFile {
  path: string;
  size: number;
  created: boolean;
}

export const DEFAULT_MAX_ENTRIES = 1000;
export const DEFAULT_MAX_READ_BYTES = 256 * 1024;

export function entryType(entry: Dirent | Stats): EntryType {
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isFile()) return 'file';
  if (entry.isDirectory()) return 'directory';
  return 'other';
}

/** File-system failures as the client's problem; anything unexpected stays an internal error. */
function fileError(error: unknown, path: string): unknown {
  if (error instanceof AppError) return error;
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ENOENT':
      return new AppError('WORKSPACE_ERROR', `No such file or directory: ${path}`);
    case 'ENOTDIR':
    case 'EEXIST':
      return new AppError('WORKSPACE_ERROR', `Not a directory: ${path}`);
    case 'EISDIR':
      return new AppError('WORKSPACE_ERROR', `Is a directory: ${path}`);
    case 'EACCES':
    case 'EPERM':
      return new AppError('WORKSPACE_ERROR', `Permission denied: ${path}`);
    case 'ENXIO':
      return new AppError('WORKSPACE_ERROR', `Not a regular file: ${path}`);
    case 'ELOOP':
      // O_NOFOLLOW met a link where the check saw none: it was swapped in meanwhile.
      return new AppError('SECURITY_VIOLATION', `Refusing to follow a symbolic link: ${path}`);
    default:
      return error;
  }
}

/** Sorted entries of a directory of the workspace, at most `maxEntries` of them. */
export async function listWorkspaceFiles(
  root: string,
  relativePath = '.',
  options: { maxEntries?: number } = {},
): Promise<DirectoryListing> {
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  try {
    const place = await resolveInsideWorkspace(root, relativePath);
    const all = await readdir(place.target, { withFileTypes: true });
    all.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const shown = all.slice(0, maxEntries);
    const entries = await Promise.all(
      shown.map(async (entry): Promise<FileEntry> => {
        const type = entryType(entry);
        if (type !== 'file') return { name: entry.name, type };
        const size = await lstat(join(place.target, entry.name)).then((info) => info.size, () => undefined);
        return size === undefined ? { name: entry.name, type } : { name: entry.name, type, size };
      }),
    );
    return { path: place.relative, entries, truncated: all.length > shown.length };
  } catch (error) {
    throw fileError(error, relativePath);
  }
}

/**
 * A regular file's text, at most `maxBytes` of it (`truncated` says when there was more; a
 * character cut by the limit is dropped, not garbled). O_NONBLOCK keeps a FIFO from hanging the
 * open; fstat on the opened descriptor then refuses anything but a regular file.
 */
export async function readWorkspaceFile(
  root: string,
  relativePath: string,
  options: { maxBytes?: number } = {},
): Promise<FileContent> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_READ_BYTES;
  try {
    const place = await resolveInsideWorkspace(root, relativePath);
    const handle = await open(place.target, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw new AppError('WORKSPACE_ERROR', `Not a regular file: ${relativePath}`);
      const buffer = Buffer.alloc(Math.min(info.size, maxBytes));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      const content = new StringDecoder('utf8').write(buffer.subarray(0, bytesRead));
      return { path: place.relative, size: info.size, content, truncated: info.size > bytesRead };
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw fileError(error, relativePath);
  }
}

/**
 * Writes text to a file of the workspace, making missing parent directories inside it. Only a
 * regular file with a single link is overwritten: a hard link would carry the write to a file
 * elsewhere, and a device or FIFO is no file to write. The checks run on the opened descriptor,
 * and the file is truncated only after they pass.
 */
export async function writeWorkspaceFile(root: string, relativePath: string, content: string): Promise<WrittenFile> {
  try {
    const place = await resolveInsideWorkspace(root, relativePath);
    if (place.target === place.root) throw new AppError('WORKSPACE_ERROR', 'Cannot write to the workspace directory itself');
    // A repository's config and hooks name programs Git runs by itself: not for a tool to write.
    if (place.relative.split(sep).includes('.git')) {
      throw new AppError('SECURITY_VIOLATION', `Writing inside a repository's .git is refused: ${relativePath}`);
    }
    const parent = dirname(place.target);
    await mkdir(parent, { recursive: true });
    // mkdir follows links: a directory swapped for a link meanwhile shows up as a different real path.
    if ((await realpath(parent)) !== parent) throw new AppError('SECURITY_VIOLATION', `Path is outside the workspace: ${relativePath}`);
    const before = await lstat(place.target).catch(() => null);
    if (before && !before.isFile()) throw new AppError('WORKSPACE_ERROR', `Not a regular file: ${relativePath}`);
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;
    const handle = await open(place.target, flags, 0o666);
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw new AppError('WORKSPACE_ERROR', `Not a regular file: ${relativePath}`);
      if (info.nlink > 1) throw new AppError('SECURITY_VIOLATION', `Refusing to write a file with several hard links: ${relativePath}`);
      await handle.truncate(0);
      const data = Buffer.from(content, 'utf8');
      await handle.writeFile(data);
      return { path: place.relative, size: data.length, created: before === null };
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw fileError(error, relativePath);
  }
}
