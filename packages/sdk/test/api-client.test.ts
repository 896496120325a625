// The control-plane client against a stand-in node on loopback: request
// shapes, paging, error answers, deadlines, progress streams.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, describe, it } from 'node:test';
import {
  AenvClient,
  AuthenticationError,
  InvalidStateError,
  NotSupportedError,
  ResourceExhaustedError,
  SandboxNotFoundError,
  TimeoutError,
  type ProgressEvent,
} from '../src/index.js';
import { startLoopback, type LoopbackServer, type Received } from './loopback-server.js';

const servers: LoopbackServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

function json(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  res
    .writeHead(status, { 'content-type': 'application/json', ...headers })
    .end(JSON.stringify(body));
}

const SANDBOX = {
  sandboxID: 'abc',
  templateID: 'base',
  clientID: '',
  envdVersion: '0.5.7',
  envdAccessToken: 'tok',
  trafficAccessToken: null,
  domain: null,
};

function listed(id: string): Record<string, unknown> {
  return {
    sandboxID: id,
    templateID: 'base',
    clientID: '',
    startedAt: '2026-01-01T00:00:00.000Z',
    endAt: '2026-01-01T00:05:00.000Z',
    cpuCount: 2,
    memoryMB: 512,
    diskSizeMB: 2048,
    metadata: { a: 'b' },
    state: 'running',
    envdVersion: '0.5.7',
  };
}

async function node(handler: (req: Received, res: ServerResponse) => void): Promise<AenvClient> {
  const s = await startLoopback(handler);
  servers.push(s);
  return new AenvClient({ apiUrl: s.url, apiKey: 'e2b_11', env: {} });
}

describe('control-plane client', () => {
  it('creates with E2B fields and the key, and the handle points at the node', async () => {
    let seen: Received | undefined;
    const client = await node((req, res) => {
      seen = req;
      json(res, 201, SANDBOX);
    });
    const sbx = await client.sandboxes.create('base', {
      timeoutMs: 1500,
      metadata: { owner: 'me' },
      envs: { A: '1' },
      onTimeout: 'kill',
      allowOut: ['10.0.0.0/8'],
    });
    assert.equal(seen?.method, 'POST');
    assert.equal(seen?.url, '/v2/sandboxes');
    assert.equal(seen?.headers['x-api-key'], 'e2b_11');
    assert.deepEqual(JSON.parse(seen?.body.toString() ?? ''), {
      templateID: 'base',
      timeout: 2,
      metadata: { owner: 'me' },
      envVars: { A: '1' },
      autoPause: false,
      network: { allowOut: ['10.0.0.0/8'], denyOut: [] },
      secure: true,
    });
    assert.equal(sbx.sandboxId, 'abc');
    assert.equal(sbx.envdVersion, '0.5.7');
    const host = new URL(client.config.apiUrl).host;
    assert.equal(sbx.getHost(3000), `3000-abc.${host}`);
  });

  it('lists every page, with the filters encoded as E2B does', async () => {
    const urls: string[] = [];
    const client = await node((req, res) => {
      urls.push(req.url);
      const page2 = req.url.includes('nextToken=t2');
      json(res, 200, page2 ? [listed('b')] : [listed('a')], page2 ? {} : { 'x-next-token': 't2' });
    });
    const all = await client.sandboxes.list({
      state: ['running', 'paused'],
      metadata: { 'k y': 'v&w' },
    });
    assert.deepEqual(
      all.map((s) => s.sandboxId),
      ['a', 'b'],
    );
    assert.equal(all[0]?.startedAt.toISOString(), '2026-01-01T00:00:00.000Z');
    const q = new URL(urls[0] ?? '', 'http://x').searchParams;
    assert.equal(q.get('state'), 'running,paused');
    assert.equal(q.get('metadata'), 'k%20y=v%26w');
  });

  it('maps errors: kill of an unknown sandbox is false, others are typed', async () => {
    const client = await node((req, res) => {
      if (req.method === 'DELETE')
        json(res, 404, { code: 404, message: 'nope', error_code: 'SBX_NOT_FOUND' });
      else if (req.url.endsWith('/pause'))
        json(res, 409, {
          code: 409,
          message: 'sandbox abc is paused',
          error_code: 'SBX_INVALID_STATE',
        });
      else if (req.url.endsWith('/snapshots'))
        json(res, 404, {
          code: 404,
          message: 'no route POST /sandboxes/abc/snapshots',
          error_code: 'API_ROUTE_NOT_FOUND',
        });
      else if (req.url.startsWith('/sandboxes/abc'))
        json(res, 404, {
          code: 404,
          message: 'sandbox abc not found',
          error_code: 'SBX_NOT_FOUND',
        });
      else json(res, 429, { code: 429, message: 'too many', error_code: 'SBX_CAPACITY' });
    });
    assert.equal(await client.sandboxes.kill('abc'), false);
    await assert.rejects(client.sandboxes.pause('abc'), InvalidStateError);
    await assert.rejects(client.sandboxes.get('abc'), SandboxNotFoundError);
    await assert.rejects(client.sandboxes.snapshot('abc'), (err: unknown) => {
      return err instanceof NotSupportedError && /does not support snapshots yet/.test(err.message);
    });
    await assert.rejects(client.sandboxes.create(), (err: unknown) => {
      return err instanceof ResourceExhaustedError && err.code === 'SBX_CAPACITY';
    });
  });

  it('refuses to call without a key, and reports a wrong one', async () => {
    const keyless = new AenvClient({ apiUrl: 'http://127.0.0.1:9', env: {} });
    await assert.rejects(keyless.sandboxes.list(), (err: unknown) => {
      return err instanceof AuthenticationError && err.code === 'SDK_NO_API_KEY';
    });
    const client = await node((_req, res) =>
      json(res, 401, { code: 401, message: 'invalid API key', error_code: 'API_UNAUTHENTICATED' }),
    );
    await assert.rejects(client.sandboxes.list(), AuthenticationError);
  });

  it('gives up at the request deadline', async () => {
    const client = await node(() => undefined); // never answers
    const started = Date.now();
    await assert.rejects(client.sandboxes.list({ requestTimeoutMs: 200 }), (err: unknown) => {
      return (
        err instanceof TimeoutError &&
        /GET \/v2\/sandboxes timed out after 200 ms/.test(err.message)
      );
    });
    assert.ok(Date.now() - started < 5000);
  });

  it('reads fork results: children as handles, failures as typed errors', async () => {
    const client = await node((_req, res) =>
      json(res, 201, [
        { sandbox: { ...SANDBOX, sandboxID: 'c1' } },
        { error: { code: 429, message: 'full', error_code: 'SBX_CAPACITY' } },
      ]),
    );
    const results = await client.sandboxes.fork('abc', 2);
    assert.equal(results[0]?.sandbox?.sandboxId, 'c1');
    assert.ok(results[1]?.error instanceof ResourceExhaustedError);
  });

  it('reads console logs as text with the lines query', async () => {
    let url = '';
    const client = await node((req, res) => {
      url = req.url;
      res
        .writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
        .end('[    0.000000] Linux version\n');
    });
    assert.equal(
      await client.sandboxes.logs('abc', { lines: 5 }),
      '[    0.000000] Linux version\n',
    );
    assert.equal(url, '/sandboxes/abc/logs?lines=5');
  });

  it('reports progress of a long operation and returns its result', async () => {
    const client = await node((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write('{"type":"progress","stage":"layer 1","bytes":5,"totalBytes":10}\n{"type":"prog');
      setTimeout(
        () =>
          res.end(
            'ress","stage":"layer 1","status":"done"}\n{"type":"result","template":{"templateID":"t1","aliases":["py"]}}\n',
          ),
        20,
      );
    });
    const events: ProgressEvent[] = [];
    const t = await client.templates.pull('python:3.12', {
      name: 'py',
      onProgress: (e) => events.push(e),
    });
    assert.equal(t.templateId, 't1');
    assert.deepEqual(t.aliases, ['py']);
    assert.deepEqual(
      events.map((e) => [e.stage, e.bytes, e.status]),
      [
        ['layer 1', 5, undefined],
        ['layer 1', undefined, 'done'],
      ],
    );
  });

  it('sends what pulls and builds ask for: JSON, or a context archive with its query', async () => {
    const result = '{"type":"result","template":{"templateID":"t2","names":["web"]}}\n';
    let seen: Received | undefined;
    const client = await node((req, res) => {
      seen = req;
      res.writeHead(200, { 'content-type': 'application/x-ndjson' }).end(result);
    });
    await client.templates.pull('alpine:3', {
      name: 'web',
      startCmd: 'httpd',
      readyCmd: 'true',
      cpuCount: 1,
      memoryMB: 256,
    });
    assert.equal(seen?.url, '/templates/pull');
    assert.deepEqual(JSON.parse(seen?.body.toString() ?? ''), {
      image: 'alpine:3',
      startCmd: 'httpd',
      readyCmd: 'true',
      name: 'web',
      cpuCount: 1,
      memoryMB: 256,
    });
    const archive = new Uint8Array([1, 2, 3]);
    const t = await client.templates.buildContext(archive, {
      name: 'web',
      dockerfile: 'docker/Dockerfile',
    });
    assert.deepEqual(t.aliases, ['web']);
    assert.equal(seen?.url, '/templates/build?dockerfile=docker%2FDockerfile&name=web');
    assert.equal(seen?.headers['content-type'], 'application/x-tar');
    assert.deepEqual([...(seen?.body ?? [])], [1, 2, 3]);
  });

  it('throws the error line of a long operation', async () => {
    const client = await node((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.end(
        '{"type":"progress","stage":"x"}\n{"type":"error","error":{"code":404,"message":"no image","error_code":"TEMPLATE_NOT_FOUND"}}\n',
      );
    });
    await assert.rejects(client.templates.build('FROM x'), (err: unknown) =>
      /no image/.test((err as Error).message),
    );
  });
});
