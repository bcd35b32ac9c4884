// A node:test reporter that writes one JSON line per test file as it completes: the file, how long
// it took from its process start to its end (ms) and whether it passed. scripts/run-tests.mjs runs
// it beside the TAP reporter and prints the table of slow files after the summary.
export default async function* durations(source) {
  for await (const event of source) {
    if (event.type !== 'test:complete') continue;
    const { name, file, nesting, details } = event.data;
    // the file-level entry: the runner names it after the file itself
    if (nesting !== 0 || !file || name !== file) continue;
    yield `${JSON.stringify({ file, ms: Math.round(details?.duration_ms ?? 0), passed: details?.passed !== false })}\n`;
  }
}
