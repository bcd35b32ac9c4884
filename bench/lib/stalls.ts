// How still the machine is: an idle process on the servers' core sleeps 1 ms at a time for a few
// seconds and counts how late it wakes. On a shared VM the host takes the core away now and then;
// a server's p99 cannot be better than those pauses for a request that is in flight when one hits
// (a Redis decision waits on a round trip mid-request), so the run reports them beside its figures.
import { spawn } from 'node:child_process';
import { taskset } from './config.js';

export interface Stalls {
  seconds: number;
  /** Wake-ups measured (about 1 per ms). */
  wakeups: number;
  /** The latest wake-up, ms past its due time. */
  maxLateMs: number;
  /** Wake-ups more than 2, 5 and 10 ms late. */
  over2ms: number;
  over5ms: number;
  over10ms: number;
}

const PROBE = `
let last = process.hrtime.bigint(), max = 0, n = 0, o2 = 0, o5 = 0, o10 = 0;
const end = Date.now() + Number(process.argv[1]) * 1000;
const tick = () => {
  const now = process.hrtime.bigint();
  const late = Number(now - last) / 1e6 - 1;
  last = now; n++;
  if (late > max) max = late;
  if (late > 2) o2++;
  if (late > 5) o5++;
  if (late > 10) o10++;
  if (Date.now() < end) setTimeout(tick, 1);
  else process.stdout.write(JSON.stringify({ wakeups: n, maxLateMs: Math.round(max * 100) / 100, over2ms: o2, over5ms: o5, over10ms: o10 }));
};
setTimeout(tick, 1);
`;

/** How long the idle probe runs before and after a run's measurements. */
export const STALL_PROBE_SECONDS = 5;

/** The idle probe on the servers' core for `seconds` (nothing else of the bench runs meanwhile). */
export async function measureStalls(seconds = STALL_PROBE_SECONDS): Promise<Stalls> {
  const [cmd, ...args] = taskset([process.execPath, '-e', PROBE, String(seconds)]);
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const code = await new Promise<number | null>((r) => child.once('close', r));
  if (code !== 0) throw new Error(`stall probe exited with ${code}`);
  return { seconds, ...(JSON.parse(out) as Omit<Stalls, 'seconds'>) };
}

export const describeStalls = (s: Stalls): string =>
  `idle probe on the servers' core, ${s.seconds} s: latest wake-up ${s.maxLateMs} ms late; ${s.over2ms} wake-ups > 2 ms, ${s.over5ms} > 5 ms, ${s.over10ms} > 10 ms late (of ${s.wakeups})`;
