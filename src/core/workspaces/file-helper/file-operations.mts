import { constants, type Dirent, type Stats } from 'node:fs';
import { lstat, mkdir, open, readdir, readlink, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { StringDecoder } from 'node:string_decoder';

// The model's file tools (list_files, read_file, write_file), as the file helper runs them inside
// its sandbox (helper-main.mts). This module imports nothing but Node.js: it runs in a mount
// namespace that holds only the read-only system and one workspace, where the service's code
// and packages are not to be found.
//
// The checks below (a path resolved to where it really leads, `..` and links refused when they
// lead out, O_NOFOLLOW on the final open) give clear answers to honest mistakes. They are not
// the boundary: a directory swapped for a link between a check and an open can still win a race,
// and what it then reaches is only what the helper's namespace holds (CONTRACT §11).

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

export type FileErrorCode = 'WORKSPACE_ERROR' | 'SECURITY_VIOLATION' | 'INVALID_REQUEST';

/** A refusal or failure the model is told about (the service turns it into an AppError). */
export class FileToolError extends Error {
  override name = 'FileToolError';
  constructor(
    readonly code: FileErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export const DEFAULT_MAX_ENTRIES = 1000;
export const DEFAULT_MAX_READ_BYTES = 256 * 1024;

const errnoOf = (error: unknown) => (error as NodeJS.ErrnoException).code;
const outside = (path: string) => new FileToolError('SECURITY_VIOLATION', `Path is outside the workspace: ${path}`);

function isPathInside(path: string, root: string): boolean {
  if (path === root) return true;
  return path.startsWith(root.endsWith(sep) ? root : root + sep);
}

export function entryType(entry: Dirent | Stats): EntryType {
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isFile()) return 'file';
  if (entry.isDirectory()) return 'directory';
  return 'other';
}

/** File-system failures as the model's problem; anything unexpected is rethrown as it is. */
function fileError(error: unknown, path: string): unknown {
  if (error instanceof FileToolError) return error;
  switch (errnoOf(error)) {
    case 'ENOENT':
      return new FileToolError('WORKSPACE_ERROR', `No such file or directory: ${path}`);
    case 'ENOTDIR':
    case 'EEXIST':
      return new FileToolError('WORKSPACE_ERROR', `Not a directory: ${path}`);
    case 'EISDIR':
      return new FileToolError('WORKSPACE_ERROR', `Is a directory: ${path}`);
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return new FileToolError('WORKSPACE_ERROR', `Permission denied: ${path}`);
    case 'ENXIO':
      return new FileToolError('WORKSPACE_ERROR', `Not a regular file: ${path}`);
    case 'EFBIG':
    case 'ENOSPC':
      return new FileToolError('WORKSPACE_ERROR', `No room to write: ${path}`);
    case 'ELOOP':
      // O_NOFOLLOW met a link where the check saw none: it was swapped in meanwhile.
      return new FileToolError('SECURITY_VIOLATION', `Refusing to follow a symbolic link: ${path}`);
    default:
      return error;
  }
}

interface ConfinedPath {
  root: string;
  /** Where the path really leads: the real path of its longest existing prefix plus the rest. */
  target: string;
  /** `target` relative to the root ("." for the root itself), for replies. */
  relative: string;
}

/**
 * The real path of the longest existing prefix of an absolute, normalised path, plus the
 * components below it that do not exist yet. A component that exists but cannot be resolved is a
 * dangling symbolic link: where it points decides between "outside" and "not found".
 */
async function resolveExistingPrefix(path: string, root: string): Promise<string> {
  const missing: string[] = [];
  for (let current = path; ; current = dirname(current)) {
    try {
      return join(await realpath(current), ...missing);
    } catch (error) {
      const code = errnoOf(error);
      if (code === 'ELOOP') throw new FileToolError('WORKSPACE_ERROR', `Too many symbolic links: ${path}`);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
      const link = await readlink(current).catch(() => null);
      if (link !== null) {
        if (!isPathInside(resolve(dirname(current), link), root)) throw outside(path);
        throw new FileToolError('WORKSPACE_ERROR', `Path runs through a broken symbolic link: ${path}`);
      }
      // The file-system root always resolves, so this loop ends there at the latest.
      missing.unshift(basename(current));
    }
  }
}

/**
 * Resolves a path given relative to the workspace root (or absolute, inside it) to where it
 * really leads, and refuses anything outside the root: `..` past it, an absolute path elsewhere,
 * a link anywhere in the path that points out. Callers act on `target`, never on the spelling.
 */
export async function resolveInsideWorkspace(workspaceRoot: string, path: string): Promise<ConfinedPath> {
  if (path.includes('\0')) throw new FileToolError('INVALID_REQUEST', 'Path must not contain NUL characters');
  let root: string;
  try {
    root = await realpath(workspaceRoot);
  } catch {
    throw new FileToolError('WORKSPACE_ERROR', `Workspace directory is missing: ${workspaceRoot}`);
  }
  const spelled = isAbsolute(path) ? resolve(path) : resolve(root, path);
  const target = await resolveExistingPrefix(spelled, root);
  if (!isPathInside(target, root)) throw outside(path);
  return { root, target, relative: relative(root, target) || '.' };
}

/** Sorted entries of a directory of the workspace, at most `maxEntries` of them. */
export async function listFiles(root: string, relativePath = '.', options: { maxEntries?: number } = {}): Promise<DirectoryListing> {
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
export async function readFile(root: string, relativePath: string, options: { maxBytes?: number } = {}): Promise<FileContent> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_READ_BYTES;
  try {
    const place = await resolveInsideWorkspace(root, relativePath);
    const handle = await open(place.target, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw new FileToolError('WORKSPACE_ERROR', `Not a regular file: ${relativePath}`);
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
export async function writeFile(root: string, relativePath: string, content: string): Promise<WrittenFile> {
  try {
    const place = await resolveInsideWorkspace(root, relativePath);
    if (place.target === place.root) throw new FileToolError('WORKSPACE_ERROR', 'Cannot write to the workspace directory itself');
    // A repository's config and hooks name programs Git runs by itself: not for a tool to write.
    if (place.relative.split(sep).includes('.git')) {
      throw new FileToolError('SECURITY_VIOLATION', `Writing inside a repository's .git is refused: ${relativePath}`);
    }
    const parent = dirname(place.target);
    await mkdir(parent, { recursive: true });
    // mkdir follows links: a directory swapped for a link meanwhile shows up as a different real path.
    if ((await realpath(parent)) !== parent) throw outside(relativePath);
    const before = await lstat(place.target).catch(() => null);
    if (before && !before.isFile()) throw new FileToolError('WORKSPACE_ERROR', `Not a regular file: ${relativePath}`);
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;
    const handle = await open(place.target, flags, 0o666);
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw new FileToolError('WORKSPACE_ERROR', `Not a regular file: ${relativePath}`);
      if (info.nlink > 1) throw new FileToolError('SECURITY_VIOLATION', `Refusing to write a file with several hard links: ${relativePath}`);
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
