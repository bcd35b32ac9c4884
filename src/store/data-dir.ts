// The data directory's permissions (docs/operations.md#the-data-directory). It holds the embedded
// store, whose records carry token values, and the first start's API secret: what Streamgate
// creates there is for its own user alone, a directory 0700 and every file 0600. A directory
// Streamgate created holds CREATED_MARKER, and is narrowed back to 0700 at each start should it have
// been widened since; a directory it found (a Docker or Kubernetes volume, a path the operator made)
// keeps its mode, and dataDirWarning says so at start and in /readyz when users other than its
// owner and group can enter it.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
/** The file that says Streamgate created the directory it sits in. */
export const CREATED_MARKER = '.streamgate-created';

const MARKER_TEXT = `Streamgate created this directory and keeps it mode 0700 (docs/operations.md, "The data directory").
Delete this file and Streamgate leaves the directory's mode as it finds it.
`;

/** The mode bits (rwx for owner, group, others) of a path. */
const modeOf = (p: string): number => statSync(p).mode & 0o777;

/**
 * Makes `dir` when it is missing: mode 0700 (and so are parents it has to make), with the marker
 * that says Streamgate made it. An existing directory with the marker is narrowed to 0700 if its mode
 * grants more; any other existing directory is left as it is.
 */
export function ensurePrivateDir(dir: string): void {
  const abs = path.resolve(dir);
  // the first directory made, or undefined when `abs` was there (another process may have made it just now)
  const made = makeDirs(abs);
  const marker = path.join(abs, CREATED_MARKER);
  if (made !== undefined) {
    chmodSync(abs, PRIVATE_DIR_MODE); // exact whatever the umask
    writeFileSync(marker, MARKER_TEXT, { mode: PRIVATE_FILE_MODE });
    return;
  }
  if (existsSync(marker) && (modeOf(abs) & 0o077) !== 0) chmodSync(abs, PRIVATE_DIR_MODE);
}

/**
 * `mkdir -p` with mode 0700, one level at a time: returns the first directory made, or undefined
 * when `abs` was there. Node's own recursive mkdir retries for ever where a parent exists and a
 * directory cannot be made in it with ENOENT (under /proc, say); here that is an error naming the
 * directory and the setting that chose it.
 */
function makeDirs(abs: string): string | undefined {
  const missing: string[] = [];
  for (let p = abs; !existsSync(p); p = path.dirname(p)) {
    missing.unshift(p);
    if (path.dirname(p) === p) break;
  }
  let first: string | undefined;
  for (const p of missing) {
    try {
      mkdirSync(p, { mode: PRIVATE_DIR_MODE });
      first ??= p;
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      if (err.code === 'EEXIST' && statSync(p).isDirectory()) continue; // made by another process just now
      throw new Error(`cannot create the data directory ${abs} (dataDir / STREAMGATE_DATA_DIR): ${err.code ?? err.message} making ${p}`);
    }
  }
  return first;
}

/**
 * Creates `file` empty with mode 0600 when it does not exist; an existing file keeps its mode. The
 * SQLite file is made here before SQLite opens it: SQLite would create it 0644, and its -wal and
 * -shm files take the database file's mode.
 */
export function ensurePrivateFile(file: string): void {
  try {
    closeSync(openSync(file, 'wx', PRIVATE_FILE_MODE));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
}

/** The warning when users other than the directory's owner and group can enter, list or write it; undefined otherwise (or when it does not exist). */
export function dataDirWarning(dir: string): string | undefined {
  let mode: number;
  try {
    mode = modeOf(path.resolve(dir));
  } catch {
    return undefined;
  }
  if ((mode & 0o007) === 0) return undefined;
  const octal = mode.toString(8).padStart(4, '0');
  return `dataDir: the data directory is open to other users (mode ${octal}): they can read the store's token values and the first start's API secret wherever those files' modes allow; chmod 700 it (Streamgate narrows only a data directory it created itself)`;
}
