// docs/api.md's route list, written from the route table (src/http/surfaces.ts) by
// `npm run docs:routes` (scripts/docs-routes.ts); a test fails when the page is out of date.
import type { Endpoint } from './surfaces.js';

export const ROUTE_LIST_BEGIN = '<!-- route-list: written by `npm run docs:routes` from the route table (src/http/surfaces.ts); do not edit by hand -->';
export const ROUTE_LIST_END = '<!-- /route-list -->';

const cell = (s: string) => s.replace(/\|/g, '\\|');

/** The list as a Markdown table: surface, method and path (`{name}` for a path parameter), auth, summary. */
export function routeListMarkdown(table: readonly Endpoint[]): string {
  const rows = ['| surface | route | auth | what |', '|---|---|---|---|'];
  for (const e of table) {
    const path = e.path.replace(/:([A-Za-z]+)/g, '{$1}');
    const route = `${e.method.toUpperCase()} ${path}${e.below ? '[/…]' : ''}`;
    rows.push(`| ${e.surface} | \`${route}\` | \`${e.auth}\` | ${cell(e.summary)} |`);
  }
  return rows.join('\n');
}

/** `doc` with the text between the markers replaced by the list; throws when the markers are missing. */
export function withRouteList(doc: string, table: readonly Endpoint[]): string {
  const begin = doc.indexOf(ROUTE_LIST_BEGIN);
  const end = doc.indexOf(ROUTE_LIST_END);
  if (begin < 0 || end < begin) throw new Error(`the page has no route list markers (${ROUTE_LIST_BEGIN} … ${ROUTE_LIST_END})`);
  return `${doc.slice(0, begin + ROUTE_LIST_BEGIN.length)}\n${routeListMarkdown(table)}\n${doc.slice(end)}`;
}
