// The private Firecracker API client on its failure paths, against small
// unix-socket HTTP servers that misbehave in ways the stand-in does not
// (never answering, answering a non-Firecracker fault body, vanishing).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FirecrackerApiClient } from '../../src/firecracker/api-client.js';

const code =
  (c: string, re?: RegExp) => (e: Error & { code?: string; fields?: Record<string, unknown> }) =>
    e.code === c && (re === undefined || re.test(e.message));

describe('FirecrackerApiClient failure paths', () => {
  let dir = '';
  const servers: Server[] = [];
  const serve = async (
    name: string,
    handler: Parameters<typeof createServer>[1],
  ): Promise<string> => {
    const path = join(dir, name);
    const server = createServer(handler);
    servers.push(server);
    await new Promise<void>((r) => server.listen(path, r));
    return path;
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aenv-fcapi-'));
  });
  after(async () => {
    for (const s of servers) s.closeAllConnections();
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    await rm(dir, { recursive: true, force: true });
  });

  it('sends JSON with the path parameters encoded and returns the answer', async () => {
    const seen: string[] = [];
    const path = await serve('echo.sock', (req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push(`${req.method} ${req.url} ${req.headers['content-type']} ${body}`);
        if (req.method === 'GET')
          res
            .writeHead(200, { 'Content-Type': 'application/json' })
            .end('{"firecracker_version":"1.16.1"}');
        else res.writeHead(204).end();
      });
    });
    const api = new FirecrackerApiClient(path);
    assert.deepEqual(await api.getFirecrackerVersion(), { firecracker_version: '1.16.1' });
    await api.putGuestDriveByID({
      drive_id: 'a b',
      is_root_device: false,
      path_on_host: '/x',
      is_read_only: true,
    });
    assert.equal(
      seen[1],
      'PUT /drives/a%20b application/json {"drive_id":"a b","is_root_device":false,"path_on_host":"/x","is_read_only":true}',
    );
  });

  it('turns a fault into VMM_API_ERROR with the message, method, path and status', async () => {
    const path = await serve('fault.sock', (req, res) => {
      if (req.url === '/vm')
        res.writeHead(400).end('{"fault_message":"The microVM is not running."}');
      else res.writeHead(500).end('plain text failure');
    });
    const api = new FirecrackerApiClient(path);
    await assert.rejects(
      api.patchVm('Paused'),
      (e: Error & { code?: string; fields?: Record<string, unknown> }) =>
        e.code === 'VMM_API_ERROR' &&
        /PATCH \/vm: 400 The microVM is not running\./.test(e.message) &&
        e.fields?.status === 400,
    );
    await assert.rejects(api.describeInstance(), code('VMM_API_ERROR', /500 plain text failure/));
  });

  it('times out a request that gets no answer', async () => {
    const path = await serve('hang.sock', () => undefined);
    const api = new FirecrackerApiClient(path, 100);
    await assert.rejects(api.describeInstance(), code('VMM_TIMEOUT', /no answer in 100 ms/));
  });

  it('reports an absent socket, and connect() gives up with the reason or a timeout', async () => {
    const api = new FirecrackerApiClient(join(dir, 'none.sock'));
    await assert.rejects(api.describeInstance(), code('VMM_API_ERROR', /ENOENT/));
    await assert.rejects(
      FirecrackerApiClient.connect(join(dir, 'none.sock'), { abortIf: () => 'exited (status 1)' }),
      code('VMM_START_FAILED', /exited \(status 1\)/),
    );
    await assert.rejects(
      FirecrackerApiClient.connect(join(dir, 'none.sock'), { timeoutMs: 50 }),
      code('VMM_TIMEOUT'),
    );
  });
});
