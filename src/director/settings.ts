// Settings of the director that need more than a type: ICE servers and RTMP ingest URL templates.
//
// ICE servers (director.iceServers): browser SDKs hand the director's `iceServers` straight to
// `new RTCPeerConnection({iceServers})`, which reads only the members `urls`, `username` and
// `credential` (exactly so spelled) and throws for a URL it cannot parse or a TURN server without
// credentials, failing every connect(). So the setting accepts its keys in any casing (`URLs`,
// `userName`, the legacy `url`), is answered in RTCPeerConnection's spelling with `urls` always a
// list (the hosted IceServerModel's type; a configured single URL becomes a list of one), and
// refuses at start-up, naming the entry, anything the browser would refuse.
import { z } from 'zod';

export interface IceServer {
  /** Always a list, as in the hosted director's IceServerModel (docs/compatibility.md, Director). */
  urls: string[];
  username?: string;
  credential?: string;
}

/** Lower-cased key -> the member RTCPeerConnection reads. `url` is the long-deprecated singular. */
const MEMBERS: Record<string, keyof IceServer> = { urls: 'urls', url: 'urls', username: 'username', credential: 'credential' };

const HOST = /^(?:[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.?|\[[0-9A-Fa-f:.]+\])$/;

/** Why a browser would refuse `url` as an ICE server URL (RFC 7064 / 7065 as Chromium parses them), or null. */
export function iceUrlProblem(url: string): string | null {
  const m = /^([A-Za-z]+):(.*)$/s.exec(url);
  const scheme = m?.[1].toLowerCase();
  if (!m || !['stun', 'stuns', 'turn', 'turns'].includes(scheme!)) return 'must start with stun:, stuns:, turn: or turns:';
  let rest = m[2];
  const q = rest.indexOf('?');
  if (q >= 0) {
    const query = rest.slice(q + 1);
    rest = rest.slice(0, q);
    if (scheme === 'stun' || scheme === 'stuns') return 'a stun: URL takes no ?query';
    if (!/^transport=(udp|tcp)$/i.test(query)) return 'the only query a turn: URL takes is ?transport=udp or ?transport=tcp';
  }
  if (rest.includes('@')) return 'user@host is not accepted: give username and credential as their own members';
  const hp = /^(.*?)(?::([0-9]*))?$/s.exec(rest)!;
  const host = rest.startsWith('[') ? rest.slice(0, rest.indexOf(']') + 1) : hp[1];
  const portText = rest.startsWith('[') ? rest.slice(host.length) : hp[2] === undefined ? '' : `:${hp[2]}`;
  if (host === '' || !HOST.test(host)) return 'expected <scheme>:<host>[:<port>] with a host name or address, no // or path';
  if (portText !== '') {
    const port = /^:([0-9]{1,5})$/.exec(portText)?.[1];
    if (port === undefined || Number(port) < 1 || Number(port) > 65535) return 'the port must be 1..65535';
  }
  return null;
}

const isTurn = (url: string) => /^turns?:/i.test(url);

/**
 * One entry of director.iceServers: keys matched case-insensitively, every URL checked as a browser
 * would, TURN entries with a non-empty username and credential. The output has RTCPeerConnection's
 * member names and nothing else, and `urls` as a list.
 */
export const iceServerSchema = z.unknown().transform((raw, ctx): IceServer => {
  const fail = (message: string, path: Array<string | number> = []) => {
    ctx.addIssue({ code: 'custom', message, path });
    return z.NEVER;
  };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return fail('expected a mapping {urls, username?, credential?}');
  const out: Partial<Record<keyof IceServer, unknown>> = {};
  const seen: Partial<Record<keyof IceServer, string>> = {};
  for (const [key, value] of Object.entries(raw)) {
    const member = MEMBERS[key.toLowerCase()];
    if (!member) return fail('unknown setting (an ICE server has urls, username and credential)', [key]);
    if (seen[member] !== undefined) return fail(`given twice (as ${seen[member]} and ${key})`, [key]);
    seen[member] = key;
    if (value !== null && value !== undefined) out[member] = value;
  }
  const urlsKey = seen.urls ?? 'urls';
  const urls = out.urls;
  const list = typeof urls === 'string' ? [urls] : urls;
  if (!Array.isArray(list) || list.length === 0 || !list.every((u): u is string => typeof u === 'string')) {
    return fail('required: a stun:/turn: URL or a non-empty list of them', [urlsKey]);
  }
  for (const [i, u] of list.entries()) {
    const problem = u.length > 2048 ? 'at most 2048 characters' : iceUrlProblem(u);
    if (problem) return fail(`${JSON.stringify(u.slice(0, 100))}: ${problem}`, typeof urls === 'string' ? [urlsKey] : [urlsKey, i]);
  }
  for (const member of ['username', 'credential'] as const) {
    const v = out[member];
    if (v !== undefined && typeof v !== 'string') return fail('expected a string', [seen[member]!]);
  }
  const username = out.username as string | undefined;
  const credential = out.credential as string | undefined;
  if (list.some(isTurn) && (!username || !credential)) {
    return fail('a turn:/turns: server needs a non-empty username and credential (browsers refuse it otherwise)', [!username ? (seen.username ?? 'username') : (seen.credential ?? 'credential')]);
  }
  const server: IceServer = { urls: [...list] };
  if (username !== undefined) server.username = username;
  if (credential !== undefined) server.credential = credential;
  return server;
});

/**
 * One entry of director.rtmpPublishUrls: an rtmp:// or rtmps:// URL template with the placeholders
 * {accountId}, {streamName}, and optionally {token} (the publish token) or {jwt} (the connection JWT);
 * without either, the director appends the publish token as ?token= (as the hosted platform's RTMP
 * URLs carry it), which is what the hooks read.
 */
export const rtmpUrlTemplate = z
  .string()
  .max(2048)
  .regex(/^rtmps?:\/\/[^/\s?#]+(?:[/?][^\s#]*)?$/i, 'expected rtmp://host[:port]/path or rtmps://… (no white space, no #fragment)')
  .refine((t) => !/\{(?!accountId\}|streamName\}|token\}|jwt\})[^}]*\}/.test(t), 'unknown placeholder: use {accountId}, {streamName}, {token} or {jwt}');
