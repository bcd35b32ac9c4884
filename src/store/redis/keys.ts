// Every Redis key Streamgate uses, in one place. Keys an atomic script touches together share the
// account's hash tag {a:<id>} so that they live in one Cluster slot. The configured keyPrefix is
// added by ioredis to every key (scripts' KEYS included).
import type { TokenKind } from '../../domain/tokens.js';

const TAG_HEAD = '{a:';
/** Token ids to a record bucket (keys.tokenRecord); also how many ids an account takes from the sequence at once. */
export const TOKEN_BUCKET = 64;
/** Where a token value hint's field ends in the hash's hex digits (keys.tokenValue). */
export const TOKEN_VALUE_FIELD_END = 28;
const VERSION_TAIL = '}:ver';
const tag = (accountId: string): string => `${TAG_HEAD}${accountId}}`;
const sessionCount = (callerAction: string) => `ssc:${callerAction}`;
const gaugeMember = (accountId: string, id: string) => `${accountId}\n${id}`;

export const keys = {
  accountList: 'accounts',
  bootstrap: 'bootstrap',
  tokenSeq: 'seq:token',
  issuerSeq: 'seq:issuer',
  account: (accountId: string) => `${tag(accountId)}:account`,
  /**
   * The claim of an account name, by its key (accountNameKey): which accounts hold it and which one
   * is taking it (lua/includes/account-name.lua; docs/architecture.md#account-names).
   */
  accountName: (nameKey: string) => `aname:${nameKey}`,
  /** Hint: secret hash → account id (verified against the account's secretHash on read). */
  secret: (secretHash: string) => `secret:${secretHash}`,
  /**
   * The token record "<rev>:<CBOR>" (token-record.ts encodeToken): a field of a bucket hash of the
   * account's, TOKEN_BUCKET ids to a bucket (ids 1-64, 65-128, ...; the field is the id's place in
   * it, from 0) so a token costs a
   * hash entry rather than a key of its own. An account takes its ids in runs of TOKEN_BUCKET
   * (tokenIdRun), so its buckets fill up even when many accounts create tokens at once.
   */
  tokenRecord: (accountId: string, id: number): [key: string, field: string] => [`${tag(accountId)}:tr:${Math.floor((id - 1) / TOKEN_BUCKET)}`, String((id - 1) % TOKEN_BUCKET)],
  /** The ids the account has taken from the sequence and not given out yet, a list (tokens.ts nextId). */
  tokenIdRun: (accountId: string) => `${tag(accountId)}:tids`,
  /** The record key of earlier builds, one string per token (the upgrade moves each into its bucket). */
  legacyToken: (accountId: string, id: number) => `${tag(accountId)}:t:${id}`,
  /** Every legacy record key, as a glob (the upgrade's SCAN pattern, after the escaped prefix; bound and use keys match too and are skipped). */
  legacyTokenGlob: `${tag('*')}:t:*`,
  bound: (accountId: string, id: number) => `${tag(accountId)}:t:${id}:bound`,
  byName: (accountId: string, kind: TokenKind) => `${tag(accountId)}:tokens:${kind}:byName`,
  byAdded: (accountId: string, kind: TokenKind) => `${tag(accountId)}:tokens:${kind}:byAdded`,
  /**
   * Hint: token value hash → "<account>:<id>" (verified against the record on read). Kept in
   * bucket hashes of ~15 entries at 1M tokens (the first 4 hex digits name the bucket): small
   * hashes are stored as listpacks, about half the memory of one key per token. The field is the
   * next 12 bytes of the hash, as bytes: 112 bits of the hash in all, so two of 10 million tokens
   * share one with a chance of about 10⁻²⁰ (then the later one's hint wins and the other is not
   * found: refused, never the wrong token, as the record is compared on read).
   */
  tokenValue: (tokenHash: string): [key: string, field: Buffer] => [`tv:${tokenHash.slice(0, 4)}`, Buffer.from(tokenHash.slice(4, TOKEN_VALUE_FIELD_END), 'hex')],
  /** Every bucket of token value hints, as a glob (the upgrade's SCAN pattern, after the escaped prefix). */
  tokenValueGlob: 'tv:*',
  /** A credential issuer: a string "<rev>:<json>", the JSON the record without its rev (issuers.ts). */
  issuer: (accountId: string, id: number) => `${tag(accountId)}:is:${id}`,
  /** The account's issuers: a zset of ids, each scored by itself (id order). */
  issuers: (accountId: string) => `${tag(accountId)}:issuers`,
  /**
   * The claims of an `iss` by its key (issuerIndexKey), deployment-wide: which issuers hold which of
   * its key ids, and which writes are taking some (lua/includes/issuer-claims.lua;
   * docs/architecture.md#issuer-claims). The candidates of a JWT with that `iss`, verified against
   * their records on read.
   */
  issuerClaims: (issKey: string) => `iss:${issKey}`,
  live: (accountId: string) => `${tag(accountId)}:live`,
  /** The account version; every script that moves it publishes the new value on this same name (version-watch.ts). */
  version: (accountId: string) => `${tag(accountId)}:ver`,
  /** Every account's version key, as a glob (the watch's PSUBSCRIBE pattern, after the escaped prefix). */
  versionGlob: `${tag('*')}:ver`,
  /** The account of a version key (prefix removed), else undefined. */
  accountOfVersion: (key: string): string | undefined =>
    key.startsWith(TAG_HEAD) && key.endsWith(VERSION_TAIL) ? key.slice(TAG_HEAD.length, -VERSION_TAIL.length) : undefined,
  securing: (accountId: string) => `${tag(accountId)}:securing`,
  /** The account's secured streams kept after their tokens: "e:<name>" / "r:<pattern>" → one JSON entry per line, a line per deleted token (docs/api.md#secured-streams). */
  secured: (accountId: string) => `${tag(accountId)}:secured`,
  /** The field of a secured-stream entry in that hash. */
  securedField: (streamName: string, isRegex: boolean) => `${isRegex ? 'r' : 'e'}:${streamName}`,
  /** Hint: token id → account id (verified against the record on read), 100 ids per bucket hash. */
  tokenId: (id: number): [key: string, field: string] => [`tid:${Math.floor(id / 100)}`, String(id % 100)],
  meta: (key: string) => `meta:${key}`,
  /**
   * Hint: caller's id for a connection → {a, id, t, s} (account, registry id, token, stream); verified by reading the record.
   * None for an HTTP viewer once records are rows: its lookups name the account (docs/operations.md#what-a-viewer-session-costs-on-redis).
   */
  session: (caller: string, sessionId: string) => `sess:${caller}:${sessionId}`,
  /** The session registry (docs/api.md#running-sessions): a record, and the live indexes (zsets: id → expiry ms). */
  sessionRecord: (accountId: string, id: string) => `${tag(accountId)}:ss:${id}`,
  sessionsLive: (accountId: string) => `${tag(accountId)}:ssi`,
  sessionsOfToken: (accountId: string, tokenId: number | undefined) => `${tag(accountId)}:ssi:t:${tokenId ?? 0}`,
  sessionsOfStream: (accountId: string, streamName: string) => `${tag(accountId)}:ssi:s:${streamName}`,
  publishersOfStream: (accountId: string, streamName: string) => `${tag(accountId)}:ssi:p:${streamName}`,
  /**
   * The caller's id for a connection → registry id, in the account's slot (the admit script replaces a re-registered connection).
   * None for a session registered under its caller id (registryIdIsCallerId in domain/store-rules.ts).
   */
  sessionPointer: (accountId: string, caller: string, sessionId: string) => `${tag(accountId)}:sp:${caller}:${sessionId}`,
  tokenUses: (accountId: string, tokenId: number | undefined) => `${tag(accountId)}:t:${tokenId ?? 0}:uses`,
  /** Live sessions of every account by caller and action (the metrics' gauge): "<account>\n<id>" → expiry ms; and the set of those keys' names. */
  sessionCount,
  /** The gauge's count key of a caller and action. */
  sessionCountOf: (caller: string, action: string) => sessionCount(`${caller}:${action}`),
  /** A registry record's entry in the sessions gauge: the count key of its caller and action, and its member. */
  sessionGauge: (r: { caller: string; action: string; accountId: string; id: string }): [key: string, member: string] => [
    sessionCount(`${r.caller}:${r.action}`),
    gaugeMember(r.accountId, r.id),
  ],
  /** A registry record's member in the sessions gauge. */
  sessionGaugeMember: (accountId: string, id: string) => gaugeMember(accountId, id),
  sessionCountNames: 'ssc',
  /** Expiry cuts to carry out: "<account>\n<token id>" → when (ms). */
  expiryCuts: 'expcuts',
  webhookSeq: 'seq:webhook',
  recordingSeq: 'seq:recording',
  webhook: (accountId: string, id: number) => `${tag(accountId)}:wh:${id}`,
  webhooks: (accountId: string) => `${tag(accountId)}:webhooks`,
  deliveries: (accountId: string, id: number) => `${tag(accountId)}:wh:${id}:deliveries`,
  recording: (accountId: string, id: number) => `${tag(accountId)}:rec:${id}`,
  recordings: (accountId: string) => `${tag(accountId)}:recordings`,
  /**
   * a day (YYYY-MM-DD) or hour (YYYY-MM-DDTHH) of usage: tracked buckets by tracking id, untracked
   * by token id (0: none; days only)
   */
  usage: (accountId: string, trackingId: string | undefined, tokenId: number | undefined, day: string) =>
    trackingId !== undefined ? `${tag(accountId)}:u:t:${trackingId}:${day}` : `${tag(accountId)}:u:k:${tokenId ?? 0}:${day}`,
  /**
   * a day or hour of usage by stream, whatever the tracking id: "<stream>\0o" / "<stream>\0i" →
   * bytes, and the account's total under usageTotalFields
   */
  usageStreams: (accountId: string, day: string) => `${tag(accountId)}:u:s:${day}`,
  /** The account total's fields in a usageStreams hash (no stream has the empty name). */
  usageTotalFields: ['\u0000o', '\u0000i'] as const,
  /** the tracking ids with usage on a stream in a day (its hours included), a set */
  usageStreamTracking: (accountId: string, day: string, streamName: string) => `${tag(accountId)}:u:st:${day}:${streamName}`,
  /** Every account's usage keys, as a glob (the upgrade's SCAN pattern, after the escaped prefix). */
  usageGlob: `${tag('*')}:u:*`,
  usageReport: (accountId: string, reportId: string) => `${tag(accountId)}:ur:${reportId}`,
  /** open recordings: "<stream>\0<path>" → id */
  openRecordings: (accountId: string) => `${tag(accountId)}:recopen`,
  /** A mark (store.ts swapMark): "<expires ms>:<value>", expiring by PX too. */
  mark: (accountId: string, name: string) => `${tag(accountId)}:mk:${name}`,
  /** A credential's uses for token-sharing signals (store/sharing.ts): address → the use's JSON. */
  sharingUses: (accountId: string, credential: string) => `${tag(accountId)}:sh:${credential}`,
  /** ...and address → the time of its last use, a zset: the window and the cap read it. */
  sharingTimes: (accountId: string, credential: string) => `${tag(accountId)}:shz:${credential}`,
  /** The decision history (docs/api.md#decision-history): a stream capped by MAXLEN, one field `d`, the entry's JSON without its address. */
  history: (accountId: string) => `${tag(accountId)}:hd`,
  /** The history's client addresses by decision id, a hash per time bucket that expires with its addresses (history.addressSeconds). */
  historyAddresses: (accountId: string, bucket: number) => `${tag(accountId)}:hda:${bucket}`,
  /** When the account's history was last erased (epoch ms): entries made before it are not written. */
  historyErased: (accountId: string) => `${tag(accountId)}:hdx`,
  /** The accounts that have a history (retention walks them). */
  historyAccounts: 'hdaccounts',
  /** An account's audit entries (docs/api.md#audit-log): a zset of the entries' JSON, scored by seq. */
  auditLog: (accountId: string) => `${tag(accountId)}:audit`,
  /** An account's audit head: a hash {seq, mac} of its last entry, and {anchorSeq, anchorMac, anchorText, anchorPrev} of the last one pruned (the entry whole, and the MAC before it). */
  auditHead: (accountId: string) => `${tag(accountId)}:audithead`,
  /** Hint: the accounts that have an audit chain (retention and head logging walk them; verified against their heads). */
  auditAccounts: 'auditaccounts',
};

/**
 * Members of the list indexes sort as strings: an id is written in base 36, zero-padded to 11
 * digits (every id below 2^53 fits, and 0-9 sort before a-z, so numeric order is kept) — 5 bytes
 * fewer than 16 decimal digits, which takes each by-added entry one allocation class down.
 */
export const idMember = (id: number): string => id.toString(36).padStart(ID_MEMBER_DIGITS, '0');
export const nameMember = (sortName: string, id: number): string => `${sortName}\u0000${idMember(id)}`;
/** The id of a member; one of earlier builds (16 decimal digits) too. */
export function idFromMember(m: string): number {
  const id = m.slice(m.lastIndexOf('\u0000') + 1);
  return id.length === LEGACY_ID_MEMBER_DIGITS ? Number(id) : Number.parseInt(id, 36);
}
export const ID_MEMBER_DIGITS = 11;
/** The width of an id member of earlier builds (decimal). */
export const LEGACY_ID_MEMBER_DIGITS = 16;
