// `GET /sandboxes/{id}/logs` and `GET /openapi.json` on a node with a
// STAND-IN launcher (see standin-launcher.ts): the stand-in machine writes
// no console, so the test writes the log where the microVM launcher has the
// VMM write it (`$AENV_HOME/sandboxes/<id>/serial.log`).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningNode } from '../src/index.js';
import { StandInLauncher, startStandInNode } from './standin-launcher.js';

const home = mkdtempSync(join(tmpdir(), 'aenv-logs-'));
let node: RunningNode;

before(async () => {
  node = await startStandInNode(home, new StandInLauncher());
});

after(async () => {
  await node.close();
  rmSync(home, { recursive: true, force: true });
});

async function get(path: string, key: string | undefined = node.apiKey) {
  const res = await fetch(`${node.url}${path}`, {
    headers: key === undefined ? {} : { 'x-api-key': key },
  });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

describe('console logs route', () => {
  it('answers the tail of the console as text', async () => {
    const created = await fetch(`${node.url}/v2/sandboxes`, {
      method: 'POST',
      headers: { 'x-api-key': node.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ templateID: 'base' }),
    });
    const id = ((await created.json()) as { sandboxID: string }).sandboxID;
    const empty = await get(`/sandboxes/${id}/logs`);
    assert.equal(empty.status, 200);
    assert.equal(empty.text, '', 'no console written yet');
    const dir = join(home, 'sandboxes', id);
    mkdirSync(dir, { recursive: true });
    const lines = Array.from({ length: 300 }, (_, i) => `line ${i}`);
    writeFileSync(join(dir, 'serial.log'), `${lines.join('\n')}\n`);
    const tail = await get(`/sandboxes/${id}/logs?lines=3`);
    assert.equal(tail.status, 200);
    assert.match(tail.type ?? '', /^text\/plain/);
    assert.equal(tail.text, 'line 297\nline 298\nline 299\n');
    const byDefault = await get(`/sandboxes/${id}/logs`);
    assert.equal(byDefault.text.split('\n').length - 1, 200);
    const bad = await get(`/sandboxes/${id}/logs?lines=0`);
    assert.equal(bad.status, 400);
    assert.match(JSON.parse(bad.text).message, /'lines'/);
    assert.equal((await get(`/sandboxes/${id}/logs`, 'e2b_00')).status, 401);
  });

  it('answers 404 for an unknown sandbox, without touching the filesystem', async () => {
    const res = await get('/sandboxes/..%2F..%2Fetc/logs');
    assert.equal(res.status, 404);
    assert.equal(JSON.parse(res.text).error_code, 'SBX_NOT_FOUND');
  });
});

describe('OpenAPI route', () => {
  it('serves the document without an API key', async () => {
    const res = await get('/openapi.json', undefined);
    assert.equal(res.status, 200);
    const doc = JSON.parse(res.text) as { openapi: string; paths: Record<string, unknown> };
    assert.equal(doc.openapi, '3.1.0');
    assert.ok('/sandboxes/{id}/logs' in doc.paths);
  });
});
