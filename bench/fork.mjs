#!/usr/bin/env node
// Fork vs create, on one node in one run:
//   - fork of a running sandbox into 1, 4, 16 children (time until every
//     child answers a command) vs. the same number of sequential creates
//     from the template;
//   - memory: PSS of each idle child's VMM process vs. the guest RAM size.
//
//   node bench/fork.mjs [--counts 1,4,16]
//
// Needs root and a built repo; artifacts from $AENV_ARTIFACTS_DIR
// (default /var/tmp/aenv-test-cache).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createLogger, loadNodeConfig, serveNode } from '../packages/server/dist/src/index.js';

const { values } = parseArgs({ options: { counts: { type: 'string', default: '1,4,16' } } });
const counts = values.counts.split(',').map(Number);
const work = mkdtempSync(join(tmpdir(), 'aenv-bench-fork-'));
const config = loadNodeConfig(undefined, {
  AENV_HOME: join(work, 'home'),
  AENV_PORT: '0',
  AENV_ARTIFACTS_DIR: process.env.AENV_ARTIFACTS_DIR ?? '/var/tmp/aenv-test-cache',
  AENV_NETWORK_PREFIX: 'bfork',
  AENV_NETWORK_ADDRESS_POOL: '10.254.4.0/24',
  AENV_NETWORK_POOL_HIGH: '20',
  AENV_NETWORK_LOCK_DIR: join(work, 'lock'),
  AENV_MAX_SANDBOXES: '40',
  AENV_LOG_LEVEL: 'warn',
});
const node = await serveNode({ config, logger: createLogger('warn') });
const headers = { 'x-api-key': node.apiKey, 'content-type': 'application/json' };
const api = async (method, path, body) => {
  const res = await fetch(`${node.url}${path}`, {
    method,
    headers,
    body: JSON.stringify(body ?? {}),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text === '' ? undefined : JSON.parse(text);
};
/** Runs `true` in a sandbox through envd (a Connect stream through the proxy). */
const answer = async (id) => {
  const msg = Buffer.from(JSON.stringify({ process: { cmd: '/bin/true', args: [] } }));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(msg.length, 1);
  const res = await fetch(`${node.url}/process.Process/Start`, {
    method: 'POST',
    headers: { 'e2b-sandbox-id': id, 'content-type': 'application/connect+json' },
    body: Buffer.concat([head, msg]),
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`sandbox ${id} did not answer: ${res.status}`);
};
const pssKiB = (id) => {
  const pids = execFileSync('pgrep', ['-f', `sandboxes/${id}/`], { encoding: 'utf8' })
    .trim()
    .split('\n');
  return pids.reduce((sum, pid) => {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return sum + Number(m?.[1] ?? 0);
  }, 0);
};

const rows = [];
let pss = [];
try {
  const parent = (await api('POST', '/v2/sandboxes', { templateID: 'base', timeout: 3600 }))
    .sandboxID;
  await answer(parent);
  for (const n of counts) {
    let t0 = performance.now();
    const results = await api('POST', `/sandboxes/${parent}/fork`, { count: n });
    const children = results.map((r) => {
      if (r.error) throw new Error(`fork child failed: ${r.error.message}`);
      return r.sandbox.sandboxID;
    });
    await Promise.all(children.map(answer));
    const forkMs = performance.now() - t0;
    if (n === Math.max(...counts)) {
      await new Promise((r) => setTimeout(r, 2000));
      pss = children.map(pssKiB);
    }
    for (const c of children) await api('DELETE', `/sandboxes/${c}`);
    t0 = performance.now();
    const created = [];
    for (let i = 0; i < n; i++) {
      const id = (await api('POST', '/v2/sandboxes', { templateID: 'base' })).sandboxID;
      await answer(id);
      created.push(id);
    }
    const createMs = performance.now() - t0;
    for (const c of created) await api('DELETE', `/sandboxes/${c}`);
    rows.push([n, forkMs, createMs]);
  }
  await api('DELETE', `/sandboxes/${parent}`);
} finally {
  await node.close();
  rmSync(work, { recursive: true, force: true });
}

console.log('\nfork vs sequential creates (TCG; until every sandbox answers a command)');
console.log('children   fork        creates     creates/fork');
for (const [n, f, c] of rows) {
  console.log(
    `${String(n).padEnd(10)} ${`${f.toFixed(0)} ms`.padEnd(11)} ${`${c.toFixed(0)} ms`.padEnd(11)} ${(c / f).toFixed(2)}x`,
  );
}
if (pss.length > 0) {
  const mean = pss.reduce((a, b) => a + b, 0) / pss.length / 1024;
  const ram = config.sandbox.memoryMiB;
  console.log(
    `\nidle child PSS (VMM process): mean ${mean.toFixed(1)} MiB over ${pss.length} children; guest RAM ${ram} MiB (${((mean / ram) * 100).toFixed(1)}%)`,
  );
}
