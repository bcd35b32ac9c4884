// Runs Streamgate as a real process (what `npm start` runs) and waits for its "listening" line.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface RunningServer {
  proc: ChildProcess;
  port: number;
  base: string;
  logs: string[];
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
}

/** Only what the test passes, plus PATH/HOME: the developer's own STREAMGATE_* never leak in. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...extra };
}

export function startServer(env: Record<string, string>, args: string[] = []): Promise<RunningServer> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: cleanEnv({ PORT: '0', HOST: '127.0.0.1', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const exited = new Promise<number | string>((resolve) => proc.on('exit', (code, sig) => resolve(code ?? sig ?? -1)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${logs.join('\n')}`)), 20000);
    proc.stderr!.on('data', (b: Buffer) => logs.push(b.toString()));
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      logs.push(line);
      try {
        const j = JSON.parse(line) as { msg?: string; port?: number };
        if (j.msg === 'listening' && j.port) {
          clearTimeout(timer);
          resolve({ proc, port: j.port, base: `http://127.0.0.1:${j.port}`, logs, exited });
        }
      } catch {
        /* not JSON */
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}) before listening:\n${logs.join('\n')}`));
    });
  });
}

/**
 * Runs node with `args` in `cwd` (the repository unless given) to its exit. `killAfterMs`: a process
 * still running then is killed (exit code -1), for a run that should end by itself but may not.
 */
export async function runNode(args: string[], env: Record<string, string>, cwd = ROOT, killAfterMs?: number): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, args, { cwd, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  proc.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const timer = killAfterMs === undefined ? undefined : setTimeout(() => proc.kill('SIGKILL'), killAfterMs);
  const code = await new Promise<number>((resolve) => proc.on('exit', (c) => resolve(c ?? -1)));
  clearTimeout(timer);
  return { code, stdout, stderr };
}
