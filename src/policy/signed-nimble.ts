// Nimble Streamer / WMSPanel WMSAuth `wmsAuthSign`, verified and issued as Softvelum's samples
// compute it (docs/callers.md#nimble-wmsauth): base64 of
// `server_time=<T>&hash_value=<H>&validminutes=<N>[&strm_len=<L>][&id=<id>][&checkip=true]`, where H is
// base64(MD5(ip + id + key + T + N + signed_stream)), each part present as the variant uses it: the
// address without an id, or with `checkip=true`; the id when given; the first L characters of the
// stream path (`live/stream`) with strm_len. T is UTC wall-clock text, hashed as received.
import { createHash } from 'node:crypto';
import { type ExplainedField, MAX_CREDENTIAL, type SignedRequest, type SignedResult, decodeLoose, rawParams, refuse, sameText, single, timeProblem, when } from './signed-common.js';

export interface NimbleSettings {
  /** The WMSAuth rule's password. */
  key: string;
  /** The rule's time tolerance (seconds): the allowed clock difference, which also lengthens validity. */
  toleranceSeconds: number;
  /** The longest validminutes accepted. */
  maxValidMinutes: number;
}

export const NIMBLE_PARAM = 'wmsAuthSign';

/** `server_time` as Softvelum's samples write it: `11/14/2023 10:13:20 PM`, padded or not. Unix seconds, or undefined. */
export function parseServerTime(t: string): number | undefined {
  const m = /^(\d{1,2})\/(\d{1,2})\/(\d{4}) (\d{1,2}):(\d{2}):(\d{2}) (AM|PM)$/.exec(t);
  if (!m) return undefined;
  const [mo, d, y, h, mi, se] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h < 1 || h > 12 || mi > 59 || se > 59) return undefined;
  const hour = (h % 12) + (m[7] === 'PM' ? 12 : 0);
  const ms = Date.UTC(y, mo - 1, d, hour, mi, se);
  const back = new Date(ms);
  return back.getUTCDate() === d ? ms / 1000 : undefined;
}

/** Unix seconds as the PHP samples write them (`gmdate("n/j/Y g:i:s A")`). */
export function serverTime(unix: number): string {
  const t = new Date(unix * 1000);
  const h = t.getUTCHours();
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${t.getUTCMonth() + 1}/${t.getUTCDate()}/${t.getUTCFullYear()} ${h % 12 === 0 ? 12 : h % 12}:${pad(t.getUTCMinutes())}:${pad(t.getUTCSeconds())} ${h < 12 ? 'AM' : 'PM'}`;
}

const md5 = (s: string) => createHash('md5').update(s).digest('base64');

/** The presented signature's raw value, undefined when absent. A `+` read as a space by form decoding is restored. */
export function findNimble(req: SignedRequest): string | { problem: string } | undefined {
  const v = single(rawParams(req.query), NIMBLE_PARAM);
  return typeof v === 'string' ? decodeLoose(v).replace(/ /g, '+') : v;
}

export function verifyNimble(sign: string, req: SignedRequest, s: NimbleSettings, now: number): SignedResult {
  const fields: ExplainedField[] = [];
  if (sign.length > MAX_CREDENTIAL) return refuse(`${NIMBLE_PARAM} is longer than ${MAX_CREDENTIAL} characters`);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(sign)) return refuse(`${NIMBLE_PARAM} is not standard base64`);
  const text = Buffer.from(sign, 'base64').toString('latin1');
  const parts = new Map<string, string>();
  for (const part of text.split('&')) {
    const eq = part.indexOf('=');
    const name = eq < 0 ? part : part.slice(0, eq);
    if (!['server_time', 'hash_value', 'validminutes', 'strm_len', 'id', 'checkip'].includes(name)) return refuse(`the signature holds "${name.slice(0, 32)}", not a WMSAuth field`);
    if (parts.has(name)) return refuse(`the signature holds ${name} more than once`);
    parts.set(name, eq < 0 ? '' : part.slice(eq + 1));
    fields.push({ name, value: parts.get(name)! });
  }
  const T = parts.get('server_time');
  const H = parts.get('hash_value');
  const N = parts.get('validminutes');
  if (T === undefined || H === undefined || N === undefined) return refuse('the signature needs server_time, hash_value and validminutes', fields);
  const issued = parseServerTime(T);
  if (issued === undefined) return refuse('server_time is not M/D/YYYY h:mm:ss AM|PM (UTC)', fields);
  if (!/^\d{1,6}$/.test(N) || Number(N) < 1) return refuse('validminutes is not a positive whole number', fields);
  if (Number(N) > s.maxValidMinutes) return refuse(`validminutes ${N} is more than this issuer's ${s.maxValidMinutes}`, fields);
  const id = parts.get('id');
  // The hashed text is a plain concatenation (address, then id): an id that begins with an address
  // could carry an address-bound signature's address with the binding dropped. Refused.
  if (id !== undefined && /^(?:\d{1,3}\.){3}\d{1,3}|^[0-9a-fA-F]{0,4}:[0-9a-fA-F:.]*:/.test(id)) return refuse('id begins with an address: it could stand for an address binding', fields);
  const checkip = parts.get('checkip');
  if (checkip !== undefined && checkip !== 'true') return refuse('checkip is not true', fields);
  const strmLen = parts.get('strm_len');
  if (strmLen !== undefined && !/^\d{1,4}$/.test(strmLen)) return refuse('strm_len is not a length', fields);
  const path = decodeLoose(req.path).replace(/^\/+/, '');
  const signedStream = strmLen !== undefined ? path.slice(0, Number(strmLen)) : '';
  if (strmLen !== undefined && signedStream.length !== Number(strmLen)) return refuse(`strm_len ${strmLen} is longer than the path ${path}`, fields);
  const bindsIp = id === undefined || checkip === 'true';
  if (bindsIp && req.clientIp === undefined) return refuse('the signature binds the client address, and it is unknown', fields);
  const input = `${bindsIp ? req.clientIp : ''}${id ?? ''}${s.key}${T}${N}${signedStream}`;
  const ok = sameText(md5(input), H);
  const shown = `${bindsIp ? req.clientIp : ''}${id ?? ''}<key>${T}${N}${signedStream}`;
  fields.push({ name: 'hash', value: 'MD5 of the concatenation', check: ok ? 'matches' : 'does not match', ok });
  if (!ok) return refuse(`hash_value does not match: the key, server_time, validminutes${bindsIp ? ', the client address' : ''}${id !== undefined ? ', the id' : ''}${strmLen !== undefined ? ' or the signed stream' : ''} differs`, fields, shown);
  const exp = issued + Number(N) * 60;
  fields.push({ name: 'issued', value: when(issued) });
  const time = timeProblem(now, s.toleranceSeconds, exp, issued, fields);
  if (time) return refuse(time.problem, fields, shown, time.expired);
  return { ok: true, grant: { format: 'nimble-wmsauth', exp, nbf: issued, ...(id !== undefined ? { id } : {}), scope: strmLen !== undefined ? `stream ${signedStream}` : 'any stream' }, fields, signed: shown };
}

/** Issues a `wmsAuthSign` value. `stream`: the path prefix to bind (`live/stream`); `ip` bound without an id, or with one when given. */
export function signNimble(g: { issued: number; validMinutes: number; ip?: string; id?: string; stream?: string }, key: string): string {
  if (g.id === undefined && g.ip === undefined) throw new Error('a WMSAuth signature without an id binds the client address: give one or the other');
  const T = serverTime(g.issued);
  const checkip = g.id !== undefined && g.ip !== undefined;
  const input = `${g.ip ?? ''}${g.id ?? ''}${key}${T}${g.validMinutes}${g.stream ?? ''}`;
  let text = `server_time=${T}&hash_value=${md5(input)}&validminutes=${g.validMinutes}`;
  if (g.stream !== undefined) text += `&strm_len=${g.stream.length}`;
  if (g.id !== undefined) text += `&id=${g.id}`;
  if (checkip) text += '&checkip=true';
  return Buffer.from(text, 'latin1').toString('base64');
}
