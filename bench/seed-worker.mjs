// The entry of a seeding worker (seed.ts, seedRedisInWorkers): a worker thread does not inherit the
// TypeScript loader the benchmark runs under, so it registers tsx's before loading seed-worker.ts.
import { register } from 'tsx/esm/api';

register();
await import('./seed-worker.ts');
