// A private redis-server on a free loopback port (Debian's package, installed by scripts/setup.sh),
// for tests, benchmarks and single-machine runs of the queue: its data lives in the given
// directory, with the append-only file on, so a restart keeps the queue.
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface LocalRedis {
  url: string;
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts redis-server (port 0: a free one) and resolves once it accepts connections. */
export async function startLocalRedis(dir: string, port = 0): Promise<LocalRedis> {
  if (spawnSync('redis-server', ['--version']).error)
    throw new Error("redis-server is not installed: run scripts/setup.sh (it installs Debian's redis-server)");
  mkdirSync(dir, { recursive: true });
  const p = port || (await freePort());
  const proc = spawn(
    'redis-server',
    ['--port', String(p), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    const on = (b: Buffer) => {
      seen += b.toString();
      if (/Ready to accept connections/.test(seen)) {
        proc.stdout!.off('data', on);
        resolve();
      }
    };
    proc.stdout!.on('data', on);
    proc.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${seen.slice(-1000)}`)));
  });
  return {
    url: `redis://127.0.0.1:${p}`,
    port: p,
    process: proc,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
      }),
  };
}
