// The web dashboard in Debian's Chromium (playwright-core, headless) against
// a node with real microVMs (QEMU): the acceptance flow of issue 15 — no
// data without a session, wrong key refused, login, a sandbox appearing
// live, its terminal (`echo hi` → `hi`) through envd's PTY in the guest, a
// fork from the page in the lineage tree, kill. Screenshots of each page
// are kept as artifacts (the path is printed).
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
import { startVmNode, type VmNode } from './helpers/vm-node.js';

const skip = browserUnavailable();
if (skip !== undefined) console.log(`# skipped: ${skip}`);
let t: VmNode | undefined;
let b: TestBrowser | undefined;
let n: FlowNode;

before(async () => {
  if (skip !== undefined) return;
  t = await startVmNode('10.247.0.0/24');
  n = { url: t.node.url, apiKey: t.node.apiKey };
  b = await startBrowser('dashboard-vm');
});

after(async () => {
  await b?.close();
  await t?.close();
});

describe('dashboard in Chromium (real microVMs)', { skip, timeout: 600_000 }, () => {
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
  it('shows a microVM sandbox created through the API live', async () => {
    id = await seeSandboxAppear(b!, n, 'base');
  });
  it('runs echo hi in the microVM through the terminal', async () => {
    await terminalEchoHi(b!, id);
  });
  it('forks the microVM from the page and shows the child in the lineage tree', async () => {
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
