// SRT stream ids in the standard access-control syntax (Haivision SRT, access control): a caller-set
// string of at most 512 characters, `#!::` then comma-separated key=value pairs. Read strictly: an
// id two parsers could read differently (a value holding ',' or '=', a repeated key) names no
// stream here (docs/callers.md#srt-stream-ids).
import { wellFormed } from './matchers.js';

/** The longest stream id an SRT caller can set. */
export const SRT_STREAM_ID_MAX = 512;
/** The longest value of any key but the credential's (which only the id's own limit bounds). */
export const SRT_VALUE_MAX = 256;
/** The longest key. */
export const SRT_KEY_MAX = 64;
/** The custom key carrying a Streamgate credential unless hooks.srt.tokenKey names another. */
export const SRT_DEFAULT_TOKEN_KEY = 'sg_token';

const PREFIX = '#!::';
const NESTED_PREFIX = '#!:{';
/** Keys are names: letters, digits, '_' and '-' (custom keys are prefixed, e.g. user_ or companyname_). */
const KEY = /^[A-Za-z0-9_-]+$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f]/;

/** The single-letter keys the syntax defines; every other single letter is reserved too, and refused. */
const STANDARD_KEYS = new Set(['u', 'r', 'h', 's', 't', 'm']);

/**
 * `m`: `request` (the default: the caller receives, a subscribe) or `publish` (the caller sends).
 * `bidirectional` is refused: one admission decides one action, and a connection that both sends
 * and receives would need a publish and a subscribe decision at once. The non-standard `play` some
 * parsers take for `request` is refused too, so an id admitted here is read alike everywhere.
 */
export type SrtMode = 'request' | 'publish';

export interface SrtStreamId {
  /** `r`: the resource name, the stream (`<account>/<stream>` with hooks.accountInPath). */
  resource: string;
  mode: SrtMode;
  /** `u`, `h`, `s` as given; nothing is decided on them. */
  user?: string;
  host?: string;
  session?: string;
  /** `t`: only `stream` is admitted. */
  type: 'stream';
  /** The credential: the value of the token key, when the id carries it. */
  token?: string;
  /** Every other custom (multi-letter) key, the token key left out (a Map: a key may be `__proto__`). */
  custom: ReadonlyMap<string, string>;
}

export type SrtParse = { ok: true; id: SrtStreamId } | { ok: false; problem: string };

const refuse = (problem: string): SrtParse => ({ ok: false, problem });

/** Whether `s` is written in the standard syntax (it starts `#!::`); anything else is not this syntax. */
export function isStandardSrtStreamId(s: string): boolean {
  return s.startsWith(PREFIX);
}

/**
 * Why `key` cannot carry the credential, or null. It must be a custom key: a name of 2 to 64
 * letters, digits, '_' or '-' (single letters are the syntax's).
 */
export function srtTokenKeyProblem(key: string): string | null {
  if (!KEY.test(key) || key.length > SRT_KEY_MAX) return `a key of letters, digits, _ and - (at most ${SRT_KEY_MAX})`;
  if (key.length === 1) return 'single-letter keys are reserved by the SRT access-control syntax; use a custom key such as sg_token';
  return null;
}

/**
 * Parses a stream id in the standard syntax; the credential is the value of `tokenKey`. A refusal's
 * text names the problem by position or key, never by a value (a value may be a credential).
 */
export function parseSrtStreamId(raw: string, tokenKey: string = SRT_DEFAULT_TOKEN_KEY): SrtParse {
  if (raw.length > SRT_STREAM_ID_MAX) return refuse(`over ${SRT_STREAM_ID_MAX} characters (${raw.length}), the longest stream id SRT carries`);
  if (raw.startsWith(NESTED_PREFIX)) return refuse('the nested form #!:{…} is not supported; write #!::key=value,… pairs');
  if (!raw.startsWith(PREFIX)) return refuse('not the standard syntax: a stream id starts with #!::');
  if (!wellFormed(raw)) return refuse('not valid Unicode text (lone surrogate)');
  if (CONTROL.test(raw)) return refuse('a control character');
  const body = raw.slice(PREFIX.length);
  if (body === '') return refuse('no key=value pairs after #!::');
  const values = new Map<string, string>();
  const pairs = body.split(',');
  for (let i = 0; i < pairs.length; i++) {
    const pair = pairs[i];
    const n = i + 1;
    if (pair === '') return refuse(`pair ${n} is empty (two commas, or a comma at an end)`);
    const eq = pair.indexOf('=');
    // The syntax has no escaping: a value holding ',' shows as a pair without '='.
    if (eq < 0) return refuse(`pair ${n} has no '=' (a value cannot hold a comma: the syntax has no escaping)`);
    if (pair.indexOf('=', eq + 1) >= 0) return refuse(`pair ${n} has more than one '=' (a value cannot hold '=': the syntax has no escaping)`);
    const key = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    if (key === '') return refuse(`pair ${n} has an empty key`);
    if (key.length > SRT_KEY_MAX) return refuse(`pair ${n} has a key over ${SRT_KEY_MAX} characters`);
    if (!KEY.test(key)) return refuse(`pair ${n} has a key that is not letters, digits, _ and -`);
    if (key.length === 1 && !STANDARD_KEYS.has(key)) return refuse(`unknown key ${key}: single-letter keys are reserved by the SRT access-control syntax (u, r, h, s, t, m)`);
    if (values.has(key)) return refuse(`key ${key} is given twice`);
    if (value === '') return refuse(`key ${key} has an empty value`);
    if (key !== tokenKey && value.length > SRT_VALUE_MAX) return refuse(`the value of ${key} is over ${SRT_VALUE_MAX} characters`);
    values.set(key, value);
  }
  const resource = values.get('r');
  if (resource === undefined) return refuse('r (the resource: the stream) is required');
  const type = values.get('t') ?? 'stream';
  if (type !== 'stream') return refuse('t is not stream: only t=stream (the default) names a stream (file and auth are not admitted)');
  const m = values.get('m') ?? 'request';
  if (m === 'bidirectional') return refuse('m=bidirectional is not admitted: ask for m=request (receive) or m=publish (send)');
  if (m === 'play') return refuse('m=play is not standard: write m=request (receive)');
  if (m !== 'request' && m !== 'publish') return refuse('m is not a mode: m=request (receive, the default) or m=publish (send)');
  const custom = new Map<string, string>();
  for (const [k, v] of values) if (k.length > 1 && k !== tokenKey) custom.set(k, v);
  return {
    ok: true,
    id: {
      resource,
      mode: m,
      user: values.get('u'),
      host: values.get('h'),
      session: values.get('s'),
      type: 'stream',
      token: values.get(tokenKey),
      custom,
    },
  };
}

/** The action a mode asks for: `publish` sends, `request` receives. */
export function srtModeAction(mode: SrtMode): 'publish' | 'subscribe' {
  return mode === 'publish' ? 'publish' : 'subscribe';
}
