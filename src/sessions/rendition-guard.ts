// Whether a viewer credential granted for one stream may open a rendition of it
// (sessions.http.renditionSeparators; docs/callers.md#http-viewer-sessions): `<granted><sep><suffix>`
// is the granted stream's rendition only while no token that does not secure `<granted>` secures
// that name. Otherwise it is another stream that merely shares the prefix (`cam1_secret`, published
// with its own publish token), and the request is decided in full.
//
// "Secures" is the decision's own rule (securesViewing in src/domain/tokens.ts): a publish token
// with subscribeRequiresAuth whose streams (exact or regex) match the name. An account with
// secureViewer secures every name itself, `<granted>` included, so that alone never blocks a rendition.
// A secured stream kept after its token was deleted (docs/api.md#secured-streams) secures its name
// as a token of its own would. The account's securing tokens and kept streams are read once per
// account version and the answers remembered for it.
import { securesViewing } from '../domain/tokens.js';
import { compileStreams } from '../policy/rules.js';
import type { TokenLookup } from '../enforce/lookup.js';
import type { Store } from '../store/store.js';

/** Answers an account version remembers before starting over. */
const ANSWERS_MAX = 1024;

/** Accounts remembered before starting over. */
const ACCOUNTS_MAX = 10_000;

interface Entry {
  ver: number;
  /** Each securing token's (or kept stream's) matcher. */
  securing: Array<(name: string) => boolean>;
  answers: Map<string, boolean>;
}

export class RenditionGuard {
  private readonly accounts = new Map<string, Entry>();
  private readonly loads = new Map<string, Promise<Entry>>();

  constructor(
    private readonly store: Store,
    private readonly lookup: Pick<TokenLookup, 'timed' | 'rulesOf'>,
  ) {}

  /**
   * Whether `rendition` (a name `<granted><sep><suffix>`) may be opened by a credential for
   * `granted`: synchronous when the store's memory vouches for the account version and its answer
   * is known; else after one version read. With the store away, the last answer read stands, and
   * an account never read is answered false (the request is then decided in full).
   */
  covers(accountId: string, granted: string, rendition: string): boolean | Promise<boolean> {
    const e = this.accounts.get(accountId);
    const known = this.store.accountVersionKnown?.(accountId);
    if (known !== undefined) return e !== undefined && e.ver === known ? this.answer(e, granted, rendition) : this.loaded(accountId, known, granted, rendition);
    return this.lookup.timed(this.store.accountVersion(accountId)).then(
      (ver) => (e !== undefined && e.ver === ver ? this.answer(e, granted, rendition) : this.loaded(accountId, ver, granted, rendition)),
      () => (e !== undefined ? this.answer(e, granted, rendition) : false),
    );
  }

  private loaded(accountId: string, ver: number, granted: string, rendition: string): Promise<boolean> {
    return this.load(accountId, ver).then(
      (e) => this.answer(e, granted, rendition),
      () => false,
    );
  }

  /** The account changed here (a token written through this instance): its answers are worked out again. */
  forget(accountId: string): void {
    this.accounts.delete(accountId);
  }

  private answer(e: Entry, granted: string, rendition: string): boolean {
    const key = `${granted}\n${rendition}`;
    let yes = e.answers.get(key);
    if (yes === undefined) {
      yes = !e.securing.some((secures) => secures(rendition) && !secures(granted));
      if (e.answers.size >= ANSWERS_MAX) e.answers.clear();
      e.answers.set(key, yes);
    }
    return yes;
  }

  /** The account's securing tokens and kept streams, read after version `ver` was (never older than it). */
  private load(accountId: string, ver: number): Promise<Entry> {
    const key = `${accountId}\u0000${ver}`;
    let p = this.loads.get(key);
    if (p === undefined) {
      p = (async () => {
        const [ruled, kept] = await Promise.all([
          this.lookup.timed(this.store.viewerRuleTokens(accountId)),
          this.lookup.timed(this.store.securedStreams(accountId)),
        ]);
        const securing = ruled.filter(securesViewing).map((t) => this.lookup.rulesOf(t).streams);
        // a kept entry secures only when its token did (one that kept country lists alone does not)
        for (const s of kept) if (s.subscribeRequiresAuth) securing.push(compileStreams([s]));
        const e: Entry = { ver, securing, answers: new Map() };
        if (this.accounts.size >= ACCOUNTS_MAX) this.accounts.clear();
        this.accounts.set(accountId, e);
        return e;
      })();
      this.loads.set(key, p);
      void p.finally(() => this.loads.delete(key)).catch(() => {});
    }
    return p;
  }
}
