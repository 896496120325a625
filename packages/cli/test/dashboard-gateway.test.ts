// The web dashboard served by the cluster gateway (the same @aenv/ui handler
// a node mounts) in Debian's Chromium: a client key logs in, the nodes page
// lists every node of a stand-in cluster (real nodes, real gateway, real
// redis-server; machines are the real envd as host processes) and drains one
// from the page; a sandbox created through the gateway shows live.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { redisServerAvailable } from '@aenv/control-plane/testing';
import { browserUnavailable, startBrowser, type TestBrowser } from './helpers/browser.js';
import {
  checkNoDataWithoutSession,
  checkWrongKey,
  logIn,
  nodeApi,
  seeSandboxAppear,
  type FlowNode,
} from './helpers/dashboard-flow.js';
import { standInUnavailable } from './helpers/envd-standin-launcher.js';
import { startStandInCluster, type StandInCluster } from './helpers/standin-cluster.js';

const skip =
  standInUnavailable() ??
  browserUnavailable() ??
  (redisServerAvailable() ? undefined : 'redis-server is not installed (apt install redis-server)');
if (skip !== undefined) console.log(`# skipped: ${skip}`);
let c: StandInCluster | undefined;
let b: TestBrowser | undefined;
let n: FlowNode;

before(async () => {
  if (skip !== undefined) return;
  c = await startStandInCluster(2);
  n = { url: c.gateway.url, apiKey: c.key };
  b = await startBrowser('dashboard-gateway');
});

after(async () => {
  await b?.close();
  await c?.close();
});

describe('dashboard through the gateway (stand-in cluster)', { skip, timeout: 180_000 }, () => {
  it('shows the login page, no data, and refuses a wrong key', async () => {
    await checkNoDataWithoutSession(b!, n);
    await checkWrongKey(b!, n);
  });
  it('logs in with a client key and shows a sandbox created through the gateway', async () => {
    await logIn(b!, n);
    const id = await seeSandboxAppear(b!, n, 'base');
    assert.equal((await nodeApi(n, 'DELETE', `/sandboxes/${id}`)).status, 204);
  });
  it('lists every node and drains one from the page', async () => {
    const page = b!.page;
    await page.getByTestId('nav-nodes').click();
    await page.getByTestId('node-drain').nth(1).waitFor();
    assert.equal(await page.getByTestId('node-drain').count(), 2);
    await page.getByTestId('node-drain').nth(1).click();
    await page.getByTestId('confirm').click();
    await page.getByText('undrain').waitFor();
    const nodes = await nodeApi<{ nodeID: string; status: string }[]>(n, 'GET', '/nodes');
    assert.deepEqual(nodes.body.map((x) => x.status).sort(), ['draining', 'ready']);
    await b!.shot('gateway-nodes');
  });
});
