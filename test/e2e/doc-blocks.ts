// The configuration blocks of a docs page section, so end-to-end tests run what the docs give, as written.
import assert from 'node:assert/strict';

/** The fenced blocks of `lang` in the section of callers.md under `heading`, up to the next heading of its level or above. */
export function sectionBlocks(md: string, heading: string, lang: string): string[] {
  const lines = md.split('\n');
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`docs/callers.md has no heading '${heading}'`);
  const level = /^#+/.exec(heading)![0].length;
  const blocks: string[] = [];
  let fence: { lang: string; body: string[] } | null = null;
  for (const line of lines.slice(start + 1)) {
    if (fence) {
      if (/^```\s*$/.test(line)) {
        if (fence.lang === lang) blocks.push(`${fence.body.join('\n')}\n`);
        fence = null;
      } else fence.body.push(line);
      continue;
    }
    const open = /^```(\S*)/.exec(line);
    if (open) fence = { lang: open[1]!, body: [] };
    else if (new RegExp(`^#{1,${level}} `).test(line)) break;
  }
  return blocks;
}

/** `text` with each placeholder replaced, every one of them required to be there (so a renamed one fails loudly). */
export function substitute(text: string, values: Array<[string | RegExp, string]>): string {
  let out = text;
  for (const [from, to] of values) {
    const found = typeof from === 'string' ? out.includes(from) : from.test(out);
    assert.ok(found, `the documented config no longer has ${String(from)}:\n${text}`);
    out = typeof from === 'string' ? out.replaceAll(from, to) : out.replace(from, to);
  }
  return out;
}
