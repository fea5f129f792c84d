import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';

// Which known program a file is, whatever it is called: a copy of bash named `vim` is still bash
// (CONTRACT §11, typed input goes to "a shell as the kernel sees it"). ELF files carry a build id
// that copying, renaming or appending bytes keeps; the system's shells and interpreters are
// indexed by theirs once, and any executable is looked up by its own. A binary patched to carry
// another build id is not recognised: the sandbox, not this, is the boundary.

const PT_NOTE = 4;
const NT_GNU_BUILD_ID = 3;
const SYSTEM_FOLDERS = ['/usr/bin', '/bin', '/usr/local/bin'];

function readAt(fd: number, length: number, position: number): Buffer {
  const buffer = Buffer.alloc(length);
  const read = readSync(fd, buffer, 0, length, position);
  return buffer.subarray(0, read);
}

/** The GNU build id of a 64-bit little-endian ELF file, as hex, or null. */
export function buildIdOf(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    const header = readAt(fd, 64, 0);
    if (header.length < 64 || header.readUInt32BE(0) !== 0x7f454c46 || header[4] !== 2 || header[5] !== 1) return null;
    const phoff = Number(header.readBigUInt64LE(32));
    const phentsize = header.readUInt16LE(54);
    const phnum = Math.min(header.readUInt16LE(56), 64);
    const table = readAt(fd, phentsize * phnum, phoff);
    for (let index = 0; index < phnum; index += 1) {
      const entry = table.subarray(index * phentsize, (index + 1) * phentsize);
      if (entry.length < 48 || entry.readUInt32LE(0) !== PT_NOTE) continue;
      const notes = readAt(fd, Math.min(Number(entry.readBigUInt64LE(32)), 4096), Number(entry.readBigUInt64LE(8)));
      for (let at = 0; at + 12 <= notes.length;) {
        const nameSize = notes.readUInt32LE(at);
        const descSize = notes.readUInt32LE(at + 4);
        const type = notes.readUInt32LE(at + 8);
        const nameStart = at + 12;
        const descStart = nameStart + Math.ceil(nameSize / 4) * 4;
        if (type === NT_GNU_BUILD_ID && notes.toString('latin1', nameStart, nameStart + 3) === 'GNU') {
          return notes.subarray(descStart, descStart + descSize).toString('hex');
        }
        at = descStart + Math.ceil(descSize / 4) * 4;
      }
    }
    return null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Per name filter: the index is built once for each (the service uses one). */
const indexes = new WeakMap<(name: string) => boolean, Map<string, string>>();

/**
 * The build ids of the system's programs whose names `wanted` accepts, by build id → name.
 * Read once, lazily (a few dozen files).
 */
function knownPrograms(wanted: (name: string) => boolean): Map<string, string> {
  const built = indexes.get(wanted);
  if (built !== undefined) return built;
  const found = new Map<string, string>();
  for (const folder of SYSTEM_FOLDERS) {
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!wanted(name)) continue;
      const id = buildIdOf(join(folder, name));
      if (id !== null && !found.has(id)) found.set(id, name);
    }
  }
  indexes.set(wanted, found);
  return found;
}

/** The name of the known shell or interpreter the file at `path` is a copy of, or null. */
export function knownProgramOf(path: string, wanted: (name: string) => boolean): string | null {
  const id = buildIdOf(path);
  return id === null ? null : (knownPrograms(wanted).get(id) ?? null);
}
