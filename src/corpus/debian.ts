// Debian binary packages as translation sources: a package is fetched by name with
// `apt-get download` (Debian's own client and archive; nothing is installed) into a cache folder,
// or read from a .deb file the user has, and unpacked with `dpkg-deb -x`. Both tools are run
// without a shell, with the package name checked against Debian's package-name syntax.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** Debian policy 5.6.1: lower case letters, digits, + - . ; at least two characters, starting alphanumeric. */
export function isDebianPackageName(name: string): boolean {
  return /^[a-z0-9][a-z0-9+.-]+$/.test(name);
}

export function isDebFile(path: string): boolean {
  return /\.deb$/.test(path) && existsSync(path);
}

export function defaultDebCache(): string {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'xling', 'debian');
}

function run(cmd: string, args: string[], cwd: string, what: string): void {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.error) throw new Error(`${what}: cannot run ${cmd} (${(r.error as NodeJS.ErrnoException).code === 'ENOENT' ? `${cmd} is not installed: xling corpus --debian needs Debian's apt and dpkg` : r.error.message})`);
  if (r.status !== 0) throw new Error(`${what}: ${cmd} failed: ${(r.stderr || r.stdout).trim().split('\n').filter((l) => !/^W: Download is performed unsandboxed/.test(l)).slice(-3).join(' / ')}`);
}

/** The downloaded .deb of a package in the cache, fetching it with apt-get download when absent. */
export function fetchDebianPackage(name: string, cacheDir = defaultDebCache()): string {
  if (!isDebianPackageName(name)) throw new Error(`--debian: '${name}' is not a Debian package name`);
  mkdirSync(cacheDir, { recursive: true });
  const find = (): string | undefined => readdirSync(cacheDir).find((f) => f.startsWith(`${name}_`) && f.endsWith('.deb'));
  let f = find();
  if (!f) { run('apt-get', ['download', name], cacheDir, `package ${name}`); f = find(); }
  if (!f) throw new Error(`package ${name}: apt-get download wrote no .deb`);
  return resolve(cacheDir, f);
}

/** The unpacked tree of a .deb (or of a package fetched by name), under workDir. */
export function debianPackageTree(debOrName: string, workDir: string, cacheDir?: string, byName = false): string {
  const deb = byName ? fetchDebianPackage(debOrName, cacheDir) : resolve(debOrName);
  const name = deb.replace(/^.*\//, '').replace(/\.deb$/, '');
  const dir = join(workDir, name);
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true });
    run('dpkg-deb', ['-x', deb, dir], workDir, deb);
  }
  return dir;
}
