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
  if (r.error)
    throw new Error(
      `${what}: cannot run ${cmd} (${(r.error as NodeJS.ErrnoException).code === 'ENOENT' ? `${cmd} is not installed: xling corpus --debian needs Debian's apt and dpkg` : r.error.message})`,
    );
  if (r.status !== 0)
    throw new Error(
      `${what}: ${cmd} failed: ${(r.stderr || r.stdout)
        .trim()
        .split('\n')
        .filter((l) => !/^W: Download is performed unsandboxed/.test(l))
        .slice(-3)
        .join(' / ')}`,
    );
}

/** The downloaded .deb of a package in the cache, fetching it with apt-get download when absent. */
export function fetchDebianPackage(name: string, cacheDir = defaultDebCache()): string {
  if (!isDebianPackageName(name)) throw new Error(`--debian: '${name}' is not a Debian package name`);
  mkdirSync(cacheDir, { recursive: true });
  const find = (): string | undefined => readdirSync(cacheDir).find((f) => f.startsWith(`${name}_`) && f.endsWith('.deb'));
  let f = find();
  if (!f) {
    run('apt-get', ['download', name], cacheDir, `package ${name}`);
    f = find();
  }
  if (!f) throw new Error(`package ${name}: apt-get download wrote no .deb`);
  return resolve(cacheDir, f);
}

/**
 * The unpacked tree of a .deb (or of a package fetched by name), under workDir/TREE (TREE: the
 * package's file name, or the given tree name: packages unpacked into one tree, as dpkg installs
 * them into one system, so that documentation split into one package per language is one set).
 */
export function debianPackageTree(debOrName: string, workDir: string, cacheDir?: string, byName = false, tree?: string): string {
  const deb = byName ? fetchDebianPackage(debOrName, cacheDir) : resolve(debOrName);
  const name = deb.replace(/^.*\//, '').replace(/\.deb$/, '');
  const dir = join(workDir, tree ?? name);
  const done = join(workDir, `${name}.unpacked`);
  if (!existsSync(done)) {
    mkdirSync(dir, { recursive: true });
    run('dpkg-deb', ['-x', deb, dir], workDir, deb);
    mkdirSync(done);
  }
  return dir;
}

/**
 * The packages of one list that belong together: names that differ only by a language, `-common`,
 * `-l10n` or `-l10n-LANG` suffix (debian-reference-common, debian-reference-de, …;
 * libreoffice-help-en-us, libreoffice-help-de; chromium-common, chromium-l10n) share the stem that
 * names their tree and their provenance, and so does a package with the packages that add to it
 * (firefox-esr with firefox-esr-l10n-kab, …).
 */
export function packageGroups(names: string[]): Map<string, string> {
  const stem = (n: string): string => n.replace(/-(common|l10n(-[a-z]{2,3}(-[a-z]{2,4})?)?|[a-z]{2,3}(-[a-z]{2,4})?)$/, '');
  const count = new Map<string, number>();
  for (const n of names) count.set(stem(n), (count.get(stem(n)) ?? 0) + 1);
  const listed = new Set(names);
  // a listed package that others extend names their group
  const extended = new Set(names.map(stem).filter((s) => listed.has(s)));
  const group = (n: string): string => {
    if (extended.has(n)) return n;
    return listed.has(stem(n)) || (count.get(stem(n)) ?? 0) > 1 ? stem(n) : n;
  };
  return new Map(names.map((n) => [n, group(n)]));
}
