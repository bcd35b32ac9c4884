// A hash router (#/publish, #/check?kind=publish&id=3): the server needs no fallback route and a
// page can be bookmarked or reloaded.
import { useEffect, useState } from 'preact/hooks';

export const PAGES = [
  ['publish', 'Publish tokens'],
  ['subscribe', 'Subscribe tokens'],
  ['check', 'Check access'],
  ['decisions', 'Decisions'],
  ['jwt', 'Self-signed JWT'],
  ['webhooks', 'Webhooks'],
  ['issuers', 'Issuers'],
  ['analytics', 'Analytics'],
  ['live', 'Live streams'],
  ['secured', 'Secured streams'],
] as const;
export type Page = (typeof PAGES)[number][0];

export interface Route {
  page: Page;
  params: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const [path, q = ''] = hash.replace(/^#\/?/, '').split('?');
  const page = PAGES.find(([p]) => p === path)?.[0] ?? 'publish';
  return { page, params: new URLSearchParams(q) };
}

export function navigate(page: Page, params: Record<string, string> = {}): void {
  const q = new URLSearchParams(params).toString();
  location.hash = `#/${page}${q ? `?${q}` : ''}`;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}
