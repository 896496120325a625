// The web dashboard in Debian's Chromium (playwright-core, headless) against
// a real node whose machines are stand-ins running the real envd on this
// host (helpers/envd-standin-launcher.ts): the acceptance flow of issue 15
// in seconds. The microVM version is dashboard.vm.test.ts.
import { after, before, describe, it } from 'node:test';
import { browserUnavailable, startBrowser, type TestBrowser } from './helpers/browser.js';
import {
  checkNoDataWithoutSession,
  checkWrongKey,
  forkFromUi,
  killFromUi,
  logIn,
  otherPagesAndLogout,
  seeSandboxAppear,
  terminalEchoHi,
  type FlowNode,
} from './helpers/dashboard-flow.js';
import { standInUnavailable } from './helpers/envd-standin-launcher.js';
import { startStandInNode, type StandInNode } from './helpers/standin-node.js';

const skip = standInUnavailable() ?? browserUnavailable();
if (skip !== undefined) console.log(`# skipped: ${skip}`);
let t: StandInNode | undefined;
let b: TestBrowser | undefined;
let n: FlowNode;

before(async () => {
  if (skip !== undefined) return;
  t = await startStandInNode();
  n = { url: t.node.url, apiKey: t.node.apiKey };
  b = await startBrowser('dashboard-standin');
});

after(async () => {
  await b?.close();
  await t?.close();
});

describe('dashboard in Chromium (stand-in machines, real envd)', { skip, timeout: 180_000 }, () => {
  let id = '';
  let child = '';
  it('shows the login page and no data without a session', async () => {
    await checkNoDataWithoutSession(b!, n);
  });
  it('refuses a wrong key', async () => {
    await checkWrongKey(b!, n);
  });
  it('logs in with the key into an HttpOnly SameSite=Strict session', async () => {
    await logIn(b!, n);
  });
  it('shows a sandbox created through the API live', async () => {
    id = await seeSandboxAppear(b!, n, 'base');
  });
  it('runs echo hi in the sandbox terminal', async () => {
    await terminalEchoHi(b!, id);
  });
  it('forks from the page and shows the child in the lineage tree', async () => {
    child = await forkFromUi(b!, id);
  });
  it('kills the child and the parent from their pages', async () => {
    await killFromUi(b!, n, child);
    await killFromUi(b!, n, id);
  });
  it('shows templates, nodes and the overview; logout returns to the login page', async () => {
    await otherPagesAndLogout(b!, n);
  });
});
