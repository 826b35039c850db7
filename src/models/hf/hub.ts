// A model's files from the Hugging Face Hub, by name, into the cache that huggingface_hub (Python)
// and @huggingface/hub share: `$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `~/.cache/huggingface/hub`,
// laid out as models--ORG--NAME/{blobs/ETAG, snapshots/COMMIT/FILE → ../../blobs/ETAG, refs/REV}.
// The protocol is @huggingface/hub's (model info for the commit, the tree listing, paths-info and
// resolve downloads, blobs named by their LFS sha256 or git oid, relative symlinks); around it:
// - only the files the importer reads are fetched (snapshotDownload would fetch every file of the
//   repository: each weights format, ONNX and OpenVINO exports — gigabytes for a 0.5 GB model);
// - the address in HF_ENDPOINT, HF_TOKEN (else the token file of `huggingface-cli login`),
//   HF_HUB_OFFLINE=1 (the cache only, as huggingface_hub resolves it: refs/REV → snapshots/COMMIT);
//   an unreachable Hub falls back to a cached snapshot of the revision, as huggingface_hub does;
// - progress lines for large files, and every file's size checked against the listing (a wrong one
//   is fetched again once, then refused), which @huggingface/hub does not do;
// - plain HTTP downloads (xet: false, as huggingface_hub without hf_xet), and the library's
//   console.debug line per download (on standard output) silenced;
// - one-line errors from the Hub's X-Error-Code (RepositoryNotFound, RevisionNotFound,
//   EntryNotFound, GatedRepo) and from network failures.
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ListFileEntry } from '@huggingface/hub';
import { readJson } from '../../nn/serialize.js';
import { Progress } from '../../util/progress.js';
import { writeDirAtomically } from '../../util/atomic.js';
import { HfImportOptions, importHfSnapshot, SNAPSHOT_FILES } from './convert.js';

export interface HubOptions {
  /** A branch, tag or commit (default main). */
  revision?: string;
  log?: (line: string) => void;
  /** The environment read (HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE, HF_HUB_CACHE, HF_HOME); default process.env. */
  env?: NodeJS.ProcessEnv;
}

export interface HubSnapshot {
  /** The snapshot folder: snapshots/COMMIT of the repository's cache folder. */
  dir: string;
  commit: string;
  /** ORG/NAME@REVISION, for messages. */
  label: string;
}

/** Files at least this large are downloaded with a progress line. */
const LARGE_FILE = 8 << 20;
const COMMIT = /^[0-9a-f]{40}$/;

/** An answer of the Hub that is not a success, with its X-Error-Code. */
class HubHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | null,
    readonly url: string,
    readonly detail: string,
  ) {
    super(`HTTP ${status}${code ? ` (${code})` : ''} from ${url}${detail ? `: ${detail}` : ''}`);
  }
}

interface HubSettings {
  endpoint: string;
  token: string | undefined;
  offline: boolean;
  cacheDir: string;
}

/** The Hub's settings from the environment, named as huggingface_hub names them. */
export function hubSettings(env: NodeJS.ProcessEnv = process.env): HubSettings {
  const hfHome = env.HF_HOME ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'huggingface');
  const tokenFile = env.HF_TOKEN_PATH ?? join(hfHome, 'token');
  const token = env.HF_TOKEN || (existsSync(tokenFile) ? readFileSync(tokenFile, 'utf8').trim() : '');
  if (token && !token.startsWith('hf_')) throw new Error(`${env.HF_TOKEN ? 'HF_TOKEN' : tokenFile}: a Hugging Face access token starts with hf_`);
  return {
    endpoint: (env.HF_ENDPOINT || 'https://huggingface.co').replace(/\/+$/, ''),
    token: token || undefined,
    offline: /^(1|on|yes|true)$/i.test(env.HF_HUB_OFFLINE ?? ''),
    cacheDir: env.HF_HUB_CACHE ?? env.HUGGINGFACE_HUB_CACHE ?? join(hfHome, 'hub'),
  };
}

/** The repository's folder in the cache (huggingface_hub's repo_folder_name). */
export function repoCacheFolder(cacheDir: string, name: string): string {
  return join(cacheDir, ['models', ...name.split('/')].join('--'));
}

/** A cached snapshot of a revision (a commit, or a ref recorded in refs/), or null. */
export function cachedSnapshot(storage: string, revision: string): { dir: string; commit: string } | null {
  const ref = join(storage, 'refs', revision);
  const commit = COMMIT.test(revision) ? revision : existsSync(ref) ? readFileSync(ref, 'utf8').trim() : null;
  if (!commit) return null;
  const dir = join(storage, 'snapshots', commit);
  return existsSync(dir) ? { dir, commit } : null;
}

/** The Hub could not be reached (no answer at all). */
class NetworkError extends Error {}

/** The file being downloaded, and the last failure (kept: the library passes some on as bare messages). */
interface FetchState {
  file: string;
  failure: HubHttpError | NetworkError | null;
}

/** fetch for @huggingface/hub: failed answers become HubHttpError (kept for the message), large bodies show progress. */
function hubFetch(state: FetchState): typeof fetch {
  return async (input, init) => {
    let res: Response;
    try {
      res = await fetch(input, init);
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      state.failure = new NetworkError(cause?.code ?? cause?.message ?? (e as Error).message);
      throw state.failure;
    }
    if (!res.ok) {
      const body = await res.text().catch(() => '');
      let detail = body.trim().split('\n')[0]!.slice(0, 200);
      try {
        const j = JSON.parse(body) as { error?: unknown };
        if (typeof j.error === 'string') detail = j.error;
      } catch {
        /* not JSON */
      }
      state.failure = new HubHttpError(res.status, res.headers.get('x-error-code'), res.url || String(input), detail);
      throw state.failure;
    }
    // a file's bytes (not the API's answers), large enough to be worth a progress line
    const total = Number(res.headers.get('content-length'));
    if (res.status !== 200 || !res.body || !(total >= LARGE_FILE) || res.url.includes('/api/')) return res;
    const prog = new Progress({ label: `download ${state.file}`, unit: 'bytes', total });
    const counted = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, c) {
          prog.tick(chunk.byteLength);
          c.enqueue(chunk);
        },
        flush() {
          prog.done();
        },
      }),
    );
    const out = new Response(counted, { status: res.status, statusText: res.statusText, headers: res.headers });
    Object.defineProperty(out, 'url', { value: res.url });
    return out;
  };
}

/** One line for what failed, from the Hub's error code or the network error. */
function hubFailure(e: unknown, state: FetchState, label: string, endpoint: string): Error {
  // the library passes a failed download's error on as its bare message: the failure kept is that one
  const f = e instanceof HubHttpError || e instanceof NetworkError ? e : e instanceof Error ? null : state.failure;
  const file = state.file ? `${state.file}: ` : '';
  if (f instanceof NetworkError) return new Error(`${label}: cannot reach ${endpoint} (${f.message}); HF_HUB_OFFLINE=1 uses the cache only`);
  if (!f) return new Error(`${label}: ${file}${e instanceof Error ? e.message : String(e)}`);
  switch (f.code) {
    case 'RepositoryNotFound':
      return new Error(`${label}: no such repository at ${endpoint} (a private or gated one needs HF_TOKEN)`);
    case 'RevisionNotFound':
      return new Error(`${label}: no such revision at ${endpoint}`);
    case 'EntryNotFound':
      return new Error(`${label}: ${file}no such file in the repository`);
    case 'GatedRepo':
      return new Error(`${label}: a gated repository: accept its conditions on the Hub and set HF_TOKEN to a token of that account`);
  }
  if (f.status === 401 || f.status === 403) return new Error(`${label}: access refused (${f.message}); set HF_TOKEN to a token that may read it`);
  return new Error(`${label}: ${file}${f.message}`);
}

type HubLib = typeof import('@huggingface/hub');

interface Session {
  lib: HubLib;
  name: string;
  commit: string;
  settings: HubSettings;
  state: FetchState;
  fetch: typeof fetch;
  log: (line: string) => void;
}

/** The repository's files at the commit (the tree listing, recursive). */
async function listing(s: Session): Promise<Map<string, number>> {
  const files = new Map<string, number>();
  const entries = s.lib.listFiles({
    repo: { type: 'model', name: s.name },
    recursive: true,
    revision: s.commit,
    hubUrl: s.settings.endpoint,
    accessToken: s.settings.token,
    fetch: s.fetch,
  });
  for await (const e of entries as AsyncIterable<ListFileEntry>) if (e.type === 'file') files.set(e.path, e.lfs?.size ?? e.size);
  return files;
}

/** Downloads one file into the cache (reused when there), its size checked against the listing; the snapshot path. */
async function fetchFile(s: Session, path: string, size: number): Promise<string> {
  s.state.file = path;
  const params = {
    repo: { type: 'model' as const, name: s.name },
    path,
    revision: s.commit,
    cacheDir: s.settings.cacheDir,
    hubUrl: s.settings.endpoint,
    accessToken: s.settings.token,
    fetch: s.fetch,
    xet: false,
  };
  for (let attempt = 0; ; attempt++) {
    const pointer = await s.lib.downloadFileToCacheDir(params);
    const got = statSync(pointer).size;
    if (got === size) return pointer;
    // a short or damaged file: removed from the cache, fetched once more
    const blob = realpathSync(pointer);
    rmSync(pointer, { force: true });
    rmSync(blob, { force: true });
    if (attempt > 0) throw new Error(`${got} bytes received, the Hub lists ${size}`);
    s.log(`${path}: ${got} bytes, the Hub lists ${size}: fetching it again`);
  }
}

/** The weights file of a folder of the snapshot ('' or 'DIR/'): safetensors, else PyTorch's, else the shard index (refused by the importer). */
function weightsOf(prefix: string, files: Map<string, number>): string[] {
  for (const f of ['model.safetensors', 'pytorch_model.bin', 'model.safetensors.index.json', 'pytorch_model.bin.index.json'])
    if (files.has(prefix + f)) return [prefix + f];
  return [];
}

/** Fetches what the importer reads: the root files it knows, then each sentence-transformers module's config and weights. */
async function fetchModelFiles(s: Session, files: Map<string, number>, snapshot: string): Promise<void> {
  // what every import needs is checked before anything is fetched
  if (!files.has('config.json')) throw new Error('no config.json in the repository (not a transformers model)');
  if (!files.has('tokenizer.json'))
    throw new Error("no tokenizer.json in the repository (the fast tokenizer's file, which transformers' AutoTokenizer.save_pretrained writes)");
  if (!weightsOf('', files).length) throw new Error('no model.safetensors or pytorch_model.bin in the repository');
  const get = async (paths: string[]) => {
    for (const p of paths) {
      const size = files.get(p)!;
      if (size >= LARGE_FILE) s.log(`${p}: ${(size / 1e6).toFixed(1)} MB`);
      await fetchFile(s, p, size);
    }
  };
  await get([...SNAPSHOT_FILES.filter((f) => files.has(f)), ...weightsOf('', files)]);
  if (!files.has('modules.json')) return;
  const modules = readJson<unknown>(join(snapshot, 'modules.json'));
  const dirs = Array.isArray(modules) ? modules.map((m: { path?: unknown }) => m?.path).filter((p): p is string => typeof p === 'string' && p !== '') : [];
  for (const d of dirs) await get([`${d}/config.json`].filter((f) => files.has(f)).concat(weightsOf(`${d}/`, files)));
}

/** The Hub's commit of the revision, recorded under refs/ when the revision is a name. */
async function resolveCommit(s: Omit<Session, 'commit'>, revision: string, storage: string): Promise<string> {
  const info = await s.lib.modelInfo({
    name: s.name,
    revision,
    additionalFields: ['sha'],
    hubUrl: s.settings.endpoint,
    accessToken: s.settings.token,
    fetch: s.fetch,
  });
  const commit = (info as { sha?: unknown }).sha;
  if (typeof commit !== 'string' || !COMMIT.test(commit)) throw new Error(`the Hub's answer names no commit for revision ${revision}`);
  if (revision !== commit) {
    const ref = join(storage, 'refs', revision);
    mkdirSync(dirname(ref), { recursive: true });
    writeFileSync(ref, commit);
  }
  return commit;
}

/**
 * The snapshot of a Hub model (ORG/NAME) at a revision, in the shared cache: its files fetched
 * (those already cached are reused, by whichever tool cached them), or, with HF_HUB_OFFLINE=1 or
 * when the Hub cannot be reached, the cached snapshot of the revision. Errors are one line.
 */
export async function fetchHfSnapshot(name: string, o: HubOptions = {}): Promise<HubSnapshot> {
  if (!/^[\w.-]+(\/[\w.-]+)?$/.test(name) || name.includes('..')) throw new Error(`${name}: not a Hugging Face model name (ORG/NAME)`);
  const revision = o.revision ?? 'main';
  const label = `${name}${o.revision ? `@${o.revision}` : ''}`;
  const log = o.log ?? (() => {});
  const settings = hubSettings(o.env);
  const storage = repoCacheFolder(settings.cacheDir, name);
  const cached = () => cachedSnapshot(storage, revision);
  if (settings.offline) {
    const c = cached();
    if (!c) throw new Error(`${label}: not in the cache ${settings.cacheDir} (HF_HUB_OFFLINE=1: nothing is downloaded)`);
    log(`${label}: the cached snapshot ${c.commit} (HF_HUB_OFFLINE=1)`);
    return { ...c, label };
  }
  const state: FetchState = { file: '', failure: null };
  const lib = await import('@huggingface/hub');
  const base = { lib, name, settings, state, fetch: hubFetch(state), log };
  const debug = console.debug;
  console.debug = () => {}; // @huggingface/hub prints "Downloading X to Y" on standard output
  try {
    const commit = await resolveCommit(base, revision, storage);
    const s: Session = { ...base, commit };
    const dir = join(storage, 'snapshots', commit);
    await fetchModelFiles(s, await listing(s), dir);
    log(`${label}: snapshot ${commit} in ${settings.cacheDir}`);
    return { dir, commit, label };
  } catch (e) {
    const c = state.failure instanceof NetworkError ? cached() : null;
    if (c) {
      log(`${label}: cannot reach ${settings.endpoint} (${state.failure!.message}): the cached snapshot ${c.commit}`);
      return { ...c, label };
    }
    throw hubFailure(e, state, label, settings.endpoint);
  } finally {
    console.debug = debug;
  }
}

/**
 * xling import hf: a Hub model by name (fetched into the shared cache, see fetchHfSnapshot) or a
 * local snapshot folder → the xling model directory `out`, written whole or not at all.
 */
export async function importHf(
  src: { name?: string; from?: string; revision?: string },
  out: string,
  o: HfImportOptions & { env?: NodeJS.ProcessEnv } = {},
): Promise<ReturnType<typeof importHfSnapshot>> {
  if (!src.name === !src.from) throw new Error('give a Hub model name or a snapshot folder, one of them');
  const hub = src.name ? await fetchHfSnapshot(src.name, { revision: src.revision, log: o.log, env: o.env }) : null;
  const from = hub ? hub.dir : src.from!;
  return writeDirAtomically(out, (tmp) => importHfSnapshot(from, tmp, { ...o, ...(hub ? { label: hub.label, source: src.name } : {}) }));
}
