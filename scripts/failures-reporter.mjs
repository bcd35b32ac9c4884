// A node:test reporter that writes only the failed tests (file, name, error) so a long TAP log
// ends with what went wrong. scripts/run-tests.mjs runs it beside the TAP reporter.
import { inspect } from 'node:util';

export default async function* failures(source) {
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { name, file, line, details } = event.data;
    const error = details?.error;
    // a suite fails when a test inside it fails: the test itself is already reported
    if (error?.failureType === 'subtestsFailed') continue;
    const cause = error?.cause ?? error;
    const text = cause instanceof Error ? (cause.stack ?? cause.message) : inspect(cause, { depth: 4 });
    yield `not ok: ${file ?? '?'}${line ? `:${line}` : ''} ${name}\n${text
      .split('\n')
      .slice(0, 30)
      .map((l) => `    ${l}`)
      .join('\n')}\n`;
  }
}
