// The names of the registered callers, as data with no imports: what configuration can name
// (hooks.allowFrom) without the configuration layer importing the callers. registry.ts builds its
// list in this order, and test/hooks/registry.test.ts checks the two agree.
export const CALLER_NAMES = ['authorize', 'auth-request', 'mediamtx', 'srs', 'nginx-rtmp', 'ome', 'events', 'usage'] as const;

export type CallerName = (typeof CALLER_NAMES)[number];
