// xling serve --config: the JSON file of tuning knobs (body limit, timeouts, connection cap).
// The documented example (configs/serve.json) holds the defaults; bad files are refused naming the
// file and the key, before the model loads and with nothing served; a good file's values are the
// server's (GET /info's limits, a body over its limit answered 413); the knobs are no longer flags.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadServeConfig, parseServeConfig } from '../../src/serve/config.js';
import { resolveSettings, SERVE_DEFAULTS, ServeOptions } from '../../src/serve/server.js';
import { cli, cliAsync, root } from '../fixtures/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'xling-serve-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

describe('xling serve --config', () => {
  it('configs/serve.json holds the defaults', () => {
    const c = loadServeConfig(join(root, 'configs/serve.json'));
    assert.deepEqual(c, {
      bodyLimit: SERVE_DEFAULTS.bodyLimit,
      requestTimeoutMs: SERVE_DEFAULTS.requestTimeoutMs,
      headersTimeoutMs: SERVE_DEFAULTS.headersTimeoutMs,
      keepAliveTimeoutMs: SERVE_DEFAULTS.keepAliveTimeoutMs,
      maxConnections: 1024,
    });
    const dummy = {} as ServeOptions;
    assert.deepEqual(resolveSettings({ ...dummy, ...c }), resolveSettings(dummy), 'the same settings as none at all');
  });

  it('takes any subset of the keys; seconds become milliseconds; the headers timeout is at most the request timeout', () => {
    assert.deepEqual(parseServeConfig({}, 'f.json'), {});
    assert.deepEqual(parseServeConfig({ requestTimeout: 2.5, keepAliveTimeout: 0.25 }, 'f.json'), { requestTimeoutMs: 2500, keepAliveTimeoutMs: 250 });
    const s = resolveSettings({ ...({} as ServeOptions), ...parseServeConfig({ requestTimeout: 2, headersTimeout: 9 }, 'f.json') });
    assert.equal(s.requestTimeoutMs, 2000);
    assert.equal(s.headersTimeoutMs, 2000);
  });

  it('refuses bad values naming the file and the key', () => {
    const refused: [unknown, RegExp][] = [
      [[1, 2], /f\.json: a serve configuration must be a JSON object$/],
      [null, /f\.json: a serve configuration must be a JSON object$/],
      [{ requestTimeout: 0 }, /f\.json: 'requestTimeout' must be a number > 0, got 0$/],
      [{ headersTimeout: '10' }, /f\.json: 'headersTimeout' must be a number > 0, got "10"$/],
      [{ maxBodyBytes: 100 }, /f\.json: 'maxBodyBytes' must be an integer >= 1024, got 100$/],
      [{ maxConnections: 1.5 }, /f\.json: 'maxConnections' must be an integer >= 1, got 1.5$/],
      [{ port: 8080 }, /f\.json: unknown setting 'port' \(known: maxBodyBytes, requestTimeout, headersTimeout, keepAliveTimeout, maxConnections\)$/],
      [JSON.parse('{"__proto__": 1}'), /f\.json: unknown setting '__proto__'/],
      [{ constructor: 1 }, /f\.json: unknown setting 'constructor'/],
    ];
    for (const [user, want] of refused) assert.throws(() => parseServeConfig(user, 'f.json'), want, JSON.stringify(user));
  });

  it('the CLI refuses a bad file (exit 1, the file and key named) before serving; the knobs are not flags', () => {
    const bad = file('bad.json', '{ "requestTimeout": 30, "keepAliveTimeout": -1 }');
    let r = cli(['serve', '--port', '0', '--config', bad]);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /bad\.json: 'keepAliveTimeout' must be a number > 0, got -1/);
    assert.doesNotMatch(r.stderr, /listening/);
    assert.equal(r.stdout, '');
    r = cli(['serve', '--port', '0', '--config', file('broken.json', '{ "requestTimeout": ')]);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /broken\.json: invalid JSON/);
    r = cli(['serve', '--port', '0', '--config', join(dir, 'missing.json')]);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /--config/);
    for (const flag of ['--request-timeout', '--headers-timeout', '--keep-alive-timeout', '--max-connections', '--max-body-bytes']) {
      r = cli(['serve', '--port', '0', flag, '5']);
      assert.equal(r.status, 2, `${flag}: ${r.stderr}`);
    }
  });

  it("a good file sets the server's limits (GET /info, 413 past the body limit); SIGTERM still exits 0", async () => {
    const good = file('serve.json', JSON.stringify({ maxBodyBytes: 4096, requestTimeout: 7, headersTimeout: 3, keepAliveTimeout: 2, maxConnections: 50 }));
    const p = cliAsync(['serve', '--port', '0', '--config', good]);
    let err = '';
    const code = new Promise<number | null>((resolve) => p.on('exit', resolve));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        p.stderr.on('data', (d: Buffer) => {
          err += d.toString();
          const m = /listening on (http:\/\/\S+)/.exec(err);
          if (m) resolve(m[1]!);
        });
        p.on('exit', (c) => reject(new Error(`serve exited ${c}: ${err}`)));
      });
      const info = (await (await fetch(url + '/info')).json()) as { xling: { limits: Record<string, unknown> } };
      const l = info.xling.limits;
      assert.deepEqual([l.body_bytes, l.request_timeout_s, l.headers_timeout_s, l.keep_alive_timeout_s, l.max_connections], [4096, 7, 3, 2, 50]);
      const post = (inputs: string[]) =>
        fetch(url + '/embed', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ inputs }) });
      assert.equal((await post(['a small body'])).status, 200);
      const big = await post(['x'.repeat(5000)]);
      assert.equal(big.status, 413);
      assert.match(((await big.json()) as { error: string }).error, /body limit is 4096 bytes/);
    } finally {
      p.kill('SIGTERM');
    }
    assert.equal(await code, 0, err);
  });
});
