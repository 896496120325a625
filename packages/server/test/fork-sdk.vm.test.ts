// Snapshots and fork with real microVMs and the real e2b SDK: a sandbox
// holds state in a process's memory (a Python server with a variable) and
// in files; 16 children see both, each changes its own without touching the
// parent or siblings; grandchildren work; children's RNGs differ; a snapshot
// outlives its sandbox and seeds 4 new ones.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createBlobStore } from '@aenv/storage';
import { Sandbox } from 'e2b';
import { startTestNode, type TestNode } from './node-harness.js';

let t: TestNode;
before(async () => {
  t = await startTestNode({ AENV_MAX_SANDBOXES: '40', AENV_LAYER_GC_PROTECT_SECONDS: '0' });
});
after(async () => {
  await t?.close();
});

const SERVER = `nohup python3 -c '
import http.server
state = {"v": "unset"}
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(state["v"].encode())
    def do_POST(self):
        state["v"] = self.rfile.read(int(self.headers["content-length"])).decode()
        self.send_response(204); self.end_headers()
http.server.HTTPServer(("127.0.0.1", 7000), H).serve_forever()
' >/dev/null 2>&1 &`;

const getVar = async (s: Sandbox) => (await s.commands.run('curl -s localhost:7000')).stdout;
const setVar = (s: Sandbox, v: string) =>
  s.commands.run(`curl -s -X POST -d '${v}' localhost:7000`);

function sandboxes(results: (Sandbox | Error)[]): Sandbox[] {
  for (const r of results) if (r instanceof Error) throw r;
  return results as Sandbox[];
}

describe('fork and snapshots with the e2b SDK (real microVMs)', { timeout: 900_000 }, () => {
  it('forks 16 children that inherit memory and files, to any depth', async () => {
    const parent = await Sandbox.create('base', { ...t.sdk, timeoutMs: 600_000 });
    const all: Sandbox[] = [parent];
    try {
      await parent.files.write('/home/user/shared.txt', 'from the parent');
      await parent.commands.run(SERVER);
      for (let i = 0; i < 50 && (await getVar(parent).catch(() => '')) !== 'unset'; i++) {
        await new Promise((r) => setTimeout(r, 200));
      }
      await setVar(parent, '42');
      const children = sandboxes(await parent.fork({ count: 16 }));
      all.push(...children);
      assert.equal(children.length, 16);
      await Promise.all(
        children.map(async (c, i) => {
          assert.equal(await getVar(c), '42', `child ${i} sees the parent's variable`);
          assert.equal(await c.files.read('/home/user/shared.txt'), 'from the parent');
          await setVar(c, `child-${i}`);
          await c.files.write('/home/user/shared.txt', `child ${i}`);
        }),
      );
      assert.equal(await getVar(parent), '42', 'the parent is untouched');
      assert.equal(await parent.files.read('/home/user/shared.txt'), 'from the parent');
      for (const [i, c] of children.entries()) assert.equal(await getVar(c), `child-${i}`);
      const rng = await Promise.all(
        children
          .slice(0, 4)
          .map(async (c) => (await c.commands.run('head -c 16 /dev/urandom | od -An -tx1')).stdout),
      );
      assert.equal(new Set(rng).size, 4, 'children do not share RNG output');
      const grand = sandboxes(await (children[3] as Sandbox).fork({ count: 2 }));
      all.push(...grand);
      for (const g of grand) {
        assert.equal(await getVar(g), 'child-3');
        assert.equal(await g.files.read('/home/user/shared.txt'), 'child 3');
      }
    } finally {
      await Promise.all(all.map((s) => s.kill().catch(() => false)));
    }
  });

  it('keeps a snapshot after its sandbox is gone and creates 4 sandboxes from it', async () => {
    const source = await Sandbox.create('base', { ...t.sdk });
    await source.files.write('/home/user/at-snapshot.txt', 'captured');
    await source.commands.run(SERVER);
    for (let i = 0; i < 50 && (await getVar(source).catch(() => '')) !== 'unset'; i++) {
      await new Promise((r) => setTimeout(r, 200));
    }
    await setVar(source, 'in-memory');
    const { snapshotId } = await Sandbox.createSnapshot(source.sandboxId, { ...t.sdk });
    await source.kill();
    const copies = await Promise.all(
      [1, 2, 3, 4].map(() => Sandbox.create(snapshotId, { ...t.sdk })),
    );
    try {
      for (const c of copies) {
        assert.equal(await c.files.read('/home/user/at-snapshot.txt'), 'captured');
        assert.equal(await getVar(c), 'in-memory');
      }
      const listed = await Sandbox.listSnapshots({ ...t.sdk }).nextItems();
      assert.ok(listed.some((s) => s.snapshotId === snapshotId));
    } finally {
      await Promise.all(copies.map((c) => c.kill()));
    }
    assert.equal(await Sandbox.deleteSnapshot(snapshotId, { ...t.sdk }), true);
  });

  it('collects the layers nothing references any more, and only those', async () => {
    const gc = t.node.gc as NonNullable<typeof t.node.gc>;
    await gc.collect();
    const referenced = t.node.state.snapshots.layers();
    const store = createBlobStore(t.node.storage.settings.store);
    const stored = new Set<string>();
    for await (const blob of store.list('layers/sha256/')) {
      stored.add(`sha256:${blob.key.slice('layers/sha256/'.length)}`);
    }
    for (const d of referenced) assert.ok(stored.has(d), `referenced layer ${d} was deleted`);
    for (const d of stored) assert.ok(referenced.has(d), `layer ${d} is unreferenced but kept`);
    assert.ok(stored.size >= 2, 'the base template keeps its layers');
  });
});
