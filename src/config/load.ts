// Loads the configuration: config/default.yaml <- optional file <- environment variables,
// then validates it. An invalid setting throws ConfigError naming its path and the problem.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import YAML from 'yaml';
import { configSchema, type Config } from './schema.js';

export class ConfigError extends Error {}

export const DEFAULT_CONFIG_FILE = fileURLToPath(new URL('../../config/default.yaml', import.meta.url));

type Tree = { [k: string]: unknown };
const isTree = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v);

function readYaml(file: string): Tree {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read config file ${file}: ${(e as Error).message}`);
  }
  const doc = YAML.parse(text) ?? {};
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

export function applyEnv(tree: Tree, defaults: Tree, env: NodeJS.ProcessEnv): Tree {
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
  }
  return out;
}

export interface LoadOptions {
  file?: string;
  env?: NodeJS.ProcessEnv;
  /** Settings given in code (tests), applied last. */
  overrides?: Tree;
}

export function validateConfig(tree: unknown): Config {
  const parsed = configSchema.safeParse(tree);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const where = i.path.map(String).join('.') || '(top level)';
      if (i.code === 'unrecognized_keys') return i.keys.map((k) => `${[...i.path, k].join('.')}: unknown setting`).join('; ');
      return `${where}: ${i.message}`;
    });
    throw new ConfigError(`invalid configuration: ${lines.join('; ')}`);
  }
  return parsed.data;
}

export function loadConfig(opts: LoadOptions = {}): Config {
  const env = opts.env ?? process.env;
  const defaults = readYaml(DEFAULT_CONFIG_FILE);
  let tree = defaults;
  const file = opts.file ?? env.STREAMGATE_CONFIG;
  if (file) tree = merge(tree, readYaml(path.resolve(file)));
  tree = applyEnv(tree, defaults, env);
  if (opts.overrides) tree = merge(tree, opts.overrides);
  return validateConfig(tree);
}
