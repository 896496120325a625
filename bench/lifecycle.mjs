#!/usr/bin/env node
// Lifecycle latency through the node API, each next to what the VMM alone
// spent (from the vmm package's diagnostics events), on one node in one run:
//   - create from the base template (a snapshot restore) vs. a cold boot of
//     the same image (a disk-only pause resumes by booting) — the ratio;
//   - pause and resume of an idle sandbox and of one that dirtied 64 MiB.
//
//   node bench/lifecycle.mjs [--runs 10]
//
// Needs root (network slots) and a built repo. Artifacts come from
// $AENV_ARTIFACTS_DIR (default /var/tmp/aenv-test-cache).
import { subscribe } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createLogger, loadNodeConfig, serveNode } from '../packages/server/dist/src/index.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '10' } } });
const runs = Number(values.runs);

const vmmMs = { restore: [], snapshot: [], boot: [] };
for (const op of Object.keys(vmmMs)) {
  subscribe(`aenv:vmm:${op}`, (e) => {
    if (e['error.code'] === undefined) vmmMs[op].push(e.duration_ms);
  });
}

const pct = (xs, p) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

const work = mkdtempSync(join(tmpdir(), 'aenv-bench-life-'));
const config = loadNodeConfig(undefined, {
  AENV_HOME: join(work, 'home'),
  AENV_PORT: '0',
  AENV_ARTIFACTS_DIR: process.env.AENV_ARTIFACTS_DIR ?? '/var/tmp/aenv-test-cache',
  AENV_NETWORK_PREFIX: 'blife',
  AENV_NETWORK_ADDRESS_POOL: '10.254.0.0/24',
  AENV_NETWORK_LOCK_DIR: join(work, 'lock'),
  AENV_LOG_LEVEL: 'warn',
});
const node = await serveNode({ config, logger: createLogger('warn') });
const headers = { 'x-api-key': node.apiKey, 'content-type': 'application/json' };
const api = async (method, path, body) => {
  const t0 = performance.now();
  const res = await fetch(`${node.url}${path}`, {
    method,
    headers,
    body: JSON.stringify(body ?? {}),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return { ms: performance.now() - t0, json: text === '' ? undefined : JSON.parse(text) };
};
const exec = (id, cmd) =>
  fetch(`${node.url}/process.Process/Start`, {
    method: 'POST',
    headers: { 'e2b-sandbox-id': id, 'content-type': 'application/connect+json' },
    body: (() => {
      const msg = Buffer.from(JSON.stringify({ process: { cmd: '/bin/bash', args: ['-c', cmd] } }));
      const head = Buffer.alloc(5);
      head.writeUInt32BE(msg.length, 1);
      return Buffer.concat([head, msg]);
    })(),
  }).then((r) => r.arrayBuffer());

const rows = [];
function row(name, ours, bare) {
  rows.push([name, pct(ours, 50), pct(ours, 99), pct(bare, 50), pct(bare, 99)]);
}
const take = (op) => vmmMs[op].splice(0);

try {
  // create (restore) vs cold boot (a disk-only paused sandbox resumes by booting)
  take('restore');
  const creates = [];
  const ids = [];
  for (let i = 0; i < runs; i++) {
    const r = await api('POST', '/v2/sandboxes', { templateID: 'base', timeout: 600 });
    creates.push(r.ms);
    ids.push(r.json.sandboxID);
  }
  row('create from template (restore)', creates, take('restore'));
  const boots = [];
  for (const id of ids.slice(0, Math.min(runs, 5))) {
    await api('POST', `/sandboxes/${id}/pause`, { memory: false });
    take('boot');
    boots.push((await api('POST', `/sandboxes/${id}/resume`, { timeout: 600 })).ms);
  }
  row('cold boot of the same image (API)', boots, take('boot'));
  for (const id of ids) await api('DELETE', `/sandboxes/${id}`);

  // pause / resume, idle and after dirtying 64 MiB
  for (const [label, dirty] of [
    ['idle', 0],
    ['64 MiB dirtied', 64],
  ]) {
    const { json } = await api('POST', '/v2/sandboxes', { templateID: 'base', timeout: 3600 });
    const pauses = [];
    const resumes = [];
    take('snapshot');
    take('restore');
    for (let i = 0; i < runs; i++) {
      if (dirty > 0)
        await exec(
          json.sandboxID,
          `dd if=/dev/urandom of=/dev/shm/d bs=1M count=${dirty} 2>/dev/null`,
        );
      pauses.push((await api('POST', `/sandboxes/${json.sandboxID}/pause`)).ms);
      resumes.push(
        (await api('POST', `/sandboxes/${json.sandboxID}/connect`, { timeout: 3600 })).ms,
      );
    }
    row(`pause, ${label}`, pauses, take('snapshot'));
    row(`resume, ${label}`, resumes, take('restore'));
    await api('DELETE', `/sandboxes/${json.sandboxID}`);
  }
} finally {
  await node.close();
  rmSync(work, { recursive: true, force: true });
}

const f = (x) => (Number.isNaN(x) ? '-' : `${x.toFixed(0)} ms`);
console.log(
  `\nlifecycle latency, ${runs} runs, TCG (API p50/p99 | VMM alone p50/p99 | API/VMM at p50)`,
);
for (const [name, a50, a99, b50, b99] of rows) {
  const ratio = Number.isNaN(b50) ? '-' : `${(a50 / b50).toFixed(1)}x`;
  console.log(
    `${name.padEnd(36)} ${f(a50).padStart(8)} ${f(a99).padStart(8)} | ${f(b50).padStart(8)} ${f(b99).padStart(8)} | ${ratio}`,
  );
}
const createP50 = rows[0][1];
const bootP50 = rows[1][1];
console.log(`\ncold boot / create-from-template at p50: ${(bootP50 / createP50).toFixed(1)}x`);
