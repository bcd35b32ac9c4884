// Account versions held in memory while a subscription proves them current, so a decision on a
// cached token needs no Redis round trip (docs/decision-path.md#watched-account-versions).
//
// Every script that moves an account version publishes the new value on the version key's own
// name. One connection per instance pattern-subscribes to those names and pings every fifth of
// maxLagMs. A version this instance knows is current while:
// - it was read (or heard) while the subscription was confirmed and has not dropped since: any
//   later move is published after the subscription began, so it reaches this connection;
// - the latest answered ping was sent at most maxLagMs ago: Redis answers a ping after every
//   message published before it, so nothing older than that can still be on its way.
// A dropped connection forgets everything; until it is subscribed again (and while pings go
// unanswered) `current` says undefined and decisions read the version from Redis, as without a watch.
import type { RedisClient } from './connect.js';
import { keys } from './keys.js';

export interface VersionWatchOptions {
  /** The ioredis keyPrefix: the channels are prefixed version keys. */
  keyPrefix: string;
  /** How stale a known version may be at most: the age of the send time of the latest answered ping. */
  maxLagMs: number;
  /** A monotonic clock in ms (performance.now by default). */
  clock?: () => number;
}

/** Versions remembered at most (all are forgotten when full). */
const KNOWN_MAX = 100_000;

/** Escapes the glob characters of a PSUBSCRIBE pattern. */
export const globLiteral = (s: string): string => s.replace(/[*?[\]\\]/g, (c) => `\\${c}`);

export class VersionWatch {
  private readonly known = new Map<string, number>();
  /** Moves on whenever what is known may have missed a message: reads begun before are not kept. */
  private epoch = 0;
  /** Moves on when the connection drops: answers to commands sent on an earlier one prove nothing. */
  private connection = 0;
  /** Subscribed (and confirmed) on the current connection. */
  private subscribed = false;
  /** Send time of the latest answered ping (or of the confirmed subscription). */
  private confirmedAt = Number.NEGATIVE_INFINITY;
  private pingSentAt: number | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly clock: () => number;
  private readonly pattern: string;
  private closed = false;

  constructor(
    private readonly sub: RedisClient,
    private readonly opts: VersionWatchOptions,
  ) {
    this.clock = opts.clock ?? (() => performance.now());
    this.pattern = globLiteral(opts.keyPrefix) + keys.versionGlob;
    sub.on('pmessage', (_pattern: string, channel: string, message: string) => this.heard(channel, message));
    sub.on('ready', () => this.subscribe());
    // A dropped connection always closes; an error alone leaves it, and what it delivers, as it was.
    for (const event of ['close', 'end', 'reconnecting'] as const) sub.on(event, () => this.lost());
    sub.on('error', () => {});
    this.timer = setInterval(() => this.heartbeat(), Math.max(10, Math.floor(opts.maxLagMs / 5)));
    this.timer.unref();
    // Not awaited: until it is subscribed, decisions read versions from Redis.
    sub.connect().catch(() => {});
  }

  /** The account's version when the watch vouches for it, else undefined (read it from Redis). */
  current(accountId: string): number | undefined {
    if (!this.subscribed || this.clock() - this.confirmedAt > this.opts.maxLagMs) return undefined;
    return this.known.get(accountId);
  }

  /** Call before sending a version read: its answer may be kept only if this is still the epoch after. */
  begin(): number {
    return this.subscribed ? this.epoch : -1;
  }

  /** Keeps a version read begun at `epoch` (from begin()), unless something may have been missed since. */
  remember(accountId: string, ver: number, epoch: number): void {
    if (epoch !== this.epoch || !this.subscribed) return;
    this.raise(accountId, ver);
  }

  /**
   * Forgets every known version, and every read in flight: after a write of this instance is
   * acknowledged, its own decisions must not wait for the write's message to see it.
   */
  forget(): void {
    this.known.clear();
    this.epoch++;
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    this.lost();
    this.sub.disconnect();
  }

  private heard(channel: string, message: string): void {
    const accountId = this.subscribed ? keys.accountOfVersion(channel.slice(this.opts.keyPrefix.length)) : undefined;
    const ver = Number(message);
    if (accountId !== undefined && Number.isSafeInteger(ver)) this.raise(accountId, ver);
  }

  /** Versions only move up: a read that answers after a newer message keeps the message's. */
  private raise(accountId: string, ver: number): void {
    const had = this.known.get(accountId);
    if (had !== undefined && had >= ver) return;
    if (had === undefined && this.known.size >= KNOWN_MAX) this.forget();
    this.known.set(accountId, ver);
  }

  private subscribe(): void {
    if (this.closed) return;
    const sentAt = this.clock();
    const connection = this.connection;
    this.sub.psubscribe(this.pattern).then(
      () => {
        if (connection !== this.connection || this.closed) return;
        this.subscribed = true;
        this.confirmedAt = sentAt;
      },
      () => {},
    );
  }

  private lost(): void {
    this.connection++;
    this.subscribed = false;
    this.pingSentAt = undefined;
    this.forget();
  }

  private heartbeat(): void {
    if (!this.subscribed || this.pingSentAt !== undefined) return;
    const sentAt = this.clock();
    const connection = this.connection;
    this.pingSentAt = sentAt;
    this.sub.ping().then(
      () => {
        if (this.pingSentAt === sentAt) this.pingSentAt = undefined;
        if (connection === this.connection && this.subscribed) this.confirmedAt = Math.max(this.confirmedAt, sentAt);
      },
      () => {
        if (this.pingSentAt === sentAt) this.pingSentAt = undefined;
      },
    );
  }
}
