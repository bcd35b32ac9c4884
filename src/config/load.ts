// Loads the configuration: config/default.yaml <- optional file <- environment variables,
// then validates it. An invalid setting throws ConfigError naming its path, where its value came
// from (the file or the environment variable) and the problem; a file that cannot be read or parsed
// throws ConfigError naming the file (and the line and column). The server exits 2 on a
// ConfigError (docs/operations.md#start-up-errors-and-exit-codes).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import YAML, { LineCounter, YAMLError } from 'yaml';
import { configSchema, type Config } from './schema.js';

/** The configuration is wrong by itself (found without contacting anything): exit code 2. */
export class ConfigError extends Error {}

export const DEFAULT_CONFIG_FILE = fileURLToPath(new URL('../../config/default.yaml', import.meta.url));

type Tree = { [k: string]: unknown };
const isTree = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Why a file could not be read, in words, with the system's code. */
export function readFailure(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  const words: Record<string, string> = {
    ENOENT: 'no such file',
    EACCES: 'permission denied',
    EPERM: 'permission denied',
    EISDIR: 'it is a directory',
    ENOTDIR: 'a part of the path is not a directory',
    ELOOP: 'too many symbolic links',
  };
  return code && words[code] ? `${words[code]} (${code})` : (e as Error).message;
}

const oneLine = (s: string) => s.replace(/\s*\n\s*/g, ' ').trim();

/** `givenBy`: what named the file (--config, STREAMGATE_CONFIG), for a file that cannot be read. */
function readYaml(file: string, givenBy?: string): Tree {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read config file ${file}${givenBy ? ` (${givenBy})` : ''}: ${readFailure(e)}`);
  }
  const lines = new LineCounter();
  let doc: unknown;
  try {
    // Plain messages: the library's pretty form quotes the source, which may hold a secret.
    doc = YAML.parse(text, { lineCounter: lines, prettyErrors: false }) ?? {};
  } catch (e) {
    if (e instanceof YAMLError) {
      const { line, col } = lines.linePos(e.pos[0]);
      const why = e.code === 'MULTIPLE_DOCS' ? 'a second document (---); a config file holds one' : oneLine(e.message);
      throw new ConfigError(`config file ${file}: invalid YAML at line ${line}, column ${col}: ${why}`);
    }
    throw new ConfigError(`config file ${file}: invalid YAML: ${oneLine((e as Error).message)}`);
  }
  if (!isTree(doc)) throw new ConfigError(`config file ${file}: expected a mapping at the top level`);
  return doc;
}

/** Deep merge: mappings merge key by key, anything else (lists included) replaces. */
export function merge(base: Tree, over: Tree): Tree {
  const out: Tree = { ...base };
  for (const [k, v] of Object.entries(over)) {
    out[k] = isTree(v) && isTree(base[k]) ? merge(base[k] as Tree, v) : v;
  }
  return out;
}

/** Environment names that do not follow STREAMGATE_<SECTION>_<KEY>. */
const ENV_ALIASES: Record<string, string[]> = {
  PORT: ['server', 'port'],
  HOST: ['server', 'host'],
  REDIS_URL: ['redis', 'url'],
  STREAMGATE_DATA_DIR: ['dataDir'],
  STREAMGATE_ADMIN_KEY: ['adminKey'],
  STREAMGATE_HOOK_SECRET: ['hooks', 'secret'],
  STREAMGATE_LOG_LEVEL: ['log', 'level'],
};

/**
 * The settings an environment variable can set: every leaf, and every map whose default is empty
 * (such as hooks.allowFrom), which the variable gives whole as a JSON object.
 */
function leaves(tree: Tree, prefix: string[] = []): Array<{ path: string[]; value: unknown }> {
  return Object.entries(tree).flatMap(([k, v]) =>
    isTree(v) && Object.keys(v).length > 0 ? leaves(v, [...prefix, k]) : [{ path: [...prefix, k], value: v }],
  );
}

/** Turns an environment string into the type of the default it replaces. */
function coerce(raw: string, like: unknown, name: string): unknown {
  if (Array.isArray(like)) {
    const trimmed = raw.trim();
    if (trimmed.startsWith('[')) {
      try {
        return JSON.parse(trimmed);
      } catch {
        throw new ConfigError(`${name}: not a valid JSON list`);
      }
    }
    return trimmed === '' ? [] : trimmed.split(',').map((s) => s.trim()).filter((s) => s !== '');
  }
  if (isTree(like)) {
    try {
      const v: unknown = JSON.parse(raw);
      if (isTree(v)) return v;
    } catch {
      // named below
    }
    throw new ConfigError(`${name}: not a valid JSON object`);
  }
  if (typeof like === 'number') {
    const n = Number(raw);
    return raw.trim() === '' || Number.isNaN(n) ? raw : n; // the schema reports a non-number
  }
  if (typeof like === 'boolean') {
    if (/^(true|1|yes|on)$/i.test(raw)) return true;
    if (/^(false|0|no|off)$/i.test(raw)) return false;
    return raw;
  }
  return raw;
}

function setPath(tree: Tree, p: string[], value: unknown): void {
  let node = tree;
  for (const k of p.slice(0, -1)) {
    if (!isTree(node[k])) node[k] = {};
    node = node[k] as Tree;
  }
  node[p[p.length - 1]] = value;
}

function getPath(tree: Tree, p: string[]): unknown {
  let node: unknown = tree;
  for (const k of p) node = isTree(node) ? node[k] : undefined;
  return node;
}

/** Whether `tree` holds a value at `p` (keys of mappings, indexes of lists). */
function hasPath(tree: unknown, p: ReadonlyArray<PropertyKey>): boolean {
  let node = tree;
  for (const k of p) {
    if (Array.isArray(node) && typeof k === 'number' && k < node.length) node = node[k];
    else if (isTree(node) && Object.hasOwn(node, String(k))) node = node[String(k)];
    else return false;
  }
  return true;
}

/**
 * `setBy`, when given, receives each setting an environment variable sets (its path, dot-joined)
 * and the variable's name, so an invalid value can be traced to it.
 */
export function applyEnv(tree: Tree, defaults: Tree, env: NodeJS.ProcessEnv, setBy?: Map<string, string>): Tree {
  const out = structuredClone(tree);
  const byEnvName = new Map<string, string[]>();
  for (const { path: p } of leaves(defaults)) byEnvName.set(`STREAMGATE_${p.join('_')}`.toUpperCase(), p);
  for (const [name, raw] of Object.entries(env)) {
    if (raw === undefined) continue;
    const upper = name.toUpperCase();
    const ours = upper.startsWith('STREAMGATE_');
    const p = ENV_ALIASES[name] ?? (ours ? byEnvName.get(upper) : undefined);
    if (!p) {
      if (ours && upper !== 'STREAMGATE_CONFIG') {
        throw new ConfigError(`${name}: no such setting`);
      }
      continue;
    }
    setPath(out, p, coerce(raw, getPath(defaults, p), name));
    setBy?.set(p.join('.'), name);
  }
  return out;
}

export interface LoadOptions {
  file?: string;
  env?: NodeJS.ProcessEnv;
  /** Settings given in code (tests), applied last. */
  overrides?: Tree;
}

/** Where the value at a setting's path came from (a file, an environment variable), if anywhere named. */
export type SourceOf = (p: ReadonlyArray<PropertyKey>) => string | undefined;

export function validateConfig(tree: unknown, sourceOf: SourceOf = () => undefined): Config {
  const parsed = configSchema.safeParse(tree);
  if (!parsed.success) {
    const named = (p: ReadonlyArray<PropertyKey>) => {
      const from = sourceOf(p);
      return `${p.map(String).join('.') || '(top level)'}${from ? ` (from ${from})` : ''}`;
    };
    const lines = parsed.error.issues.map((i) => {
      if (i.code === 'unrecognized_keys') return i.keys.map((k) => `${named([...i.path, k])}: unknown setting`).join('; ');
      return `${named(i.path)}: ${i.message}`;
    });
    throw new ConfigError(`invalid configuration: ${lines.join('; ')}`);
  }
  return parsed.data;
}

export function loadConfig(opts: LoadOptions = {}): Config {
  const env = opts.env ?? process.env;
  const defaults = readYaml(DEFAULT_CONFIG_FILE);
  let tree = defaults;
  const given = opts.file ?? env.STREAMGATE_CONFIG;
  const file = given ? path.resolve(given) : undefined;
  const fromFile = file ? readYaml(file, opts.file ? '--config' : 'STREAMGATE_CONFIG') : {};
  tree = merge(tree, fromFile);
  const setBy = new Map<string, string>();
  tree = applyEnv(tree, defaults, env, setBy);
  if (opts.overrides) tree = merge(tree, opts.overrides);
  // The last layer that set a value names it: settings given in code name nothing.
  const sourceOf: SourceOf = (p) => {
    if (opts.overrides && hasPath(opts.overrides, p)) return undefined;
    for (let n = p.length; n > 0; n--) {
      const name = setBy.get(p.slice(0, n).map(String).join('.'));
      if (name) return name;
    }
    return file && hasPath(fromFile, p) ? file : undefined;
  };
  return validateConfig(tree, sourceOf);
}
