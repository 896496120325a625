/**
 * Starts a real node (microVM launcher, real network slots, real guest
 * artifacts) for VM suites, in a temporary home, on an ephemeral port,
 * with a network prefix and address pool of its own; and checks afterwards
 * that nothing it created is left on the host.
 *
 * Guest artifacts are cached across runs in `$AENV_TEST_CACHE` (default
 * /var/tmp/aenv-test-cache): the first run builds them (minutes).
 *
 * @module
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, loadNodeConfig, serveNode, type ServedNode } from '../src/index.js';

/** The artifact cache shared by VM suites. */
export const TEST_CACHE = process.env.AENV_TEST_CACHE ?? '/var/tmp/aenv-test-cache';

/** A node under test. */
export interface TestNode {
  readonly node: ServedNode;
  readonly home: string;
  readonly prefix: string;
  /** E2B SDK connection options pointing at this node. */
  readonly sdk: { apiKey: string; apiUrl: string; sandboxUrl: string };
  close(): Promise<void>;
}

/** Starts a node for a test; `env` adds or overrides configuration variables. */
export async function startTestNode(env: Record<string, string> = {}): Promise<TestNode> {
  const home = mkdtempSync(join(tmpdir(), 'aenv-node-'));
  const prefix = `t${Math.floor(Math.random() * 1e6)}`;
  const config = loadNodeConfig(undefined, {
    PATH: process.env.PATH,
    AENV_HOME: home,
    AENV_PORT: '0',
    AENV_ARTIFACTS_DIR: TEST_CACHE,
    AENV_NETWORK_PREFIX: prefix,
    AENV_NETWORK_ADDRESS_POOL: '10.251.0.0/24',
    AENV_NETWORK_POOL_LOW: '1',
    AENV_NETWORK_POOL_HIGH: '2',
    AENV_NETWORK_LOCK_DIR: join(home, 'lock'),
    AENV_LOG_LEVEL: process.env.AENV_TEST_LOG_LEVEL ?? 'warn',
    ...env,
  });
  const node = await serveNode({ config, logger: createLogger(config.log.level) });
  return {
    node,
    home,
    prefix,
    sdk: { apiKey: node.apiKey, apiUrl: node.url, sandboxUrl: node.url },
    close: async () => {
      await node.close();
      assertNothingLeft(home, prefix);
      rmSync(home, { recursive: true, force: true });
    },
  };
}

function lines(cmd: string, args: string[]): string[] {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l !== '');
  } catch {
    return [];
  }
}

/**
 * Fails if a QEMU process, netns, link, nft table, sandbox dir (with its
 * disk's upper) or NBD socket of this node remains.
 */
export function assertNothingLeft(home: string, prefix: string): void {
  const qemus = lines('pgrep', ['-af', 'qemu-system']).filter((l) => l.includes(home));
  assert.deepEqual(qemus, [], 'QEMU processes left behind');
  const netns = lines('ip', ['netns', 'list']).filter((l) => l.startsWith(prefix));
  assert.deepEqual(netns, [], 'network namespaces left behind');
  const links = lines('ip', ['-o', 'link', 'show']).filter((l) => l.includes(` ${prefix}`));
  assert.deepEqual(links, [], 'interfaces left behind');
  const tables = lines('nft', ['list', 'tables']).filter((l) => l.includes(prefix));
  assert.deepEqual(tables, [], 'nft tables left behind');
  let dirs: string[] = [];
  try {
    dirs = readdirSync(join(home, 'sandboxes'));
  } catch {
    dirs = [];
  }
  assert.deepEqual(dirs, [], 'sandbox directories (uppers, sockets) left behind');
  let sockets: string[] = [];
  try {
    sockets = readdirSync(join(home, 'nbd'));
  } catch {
    sockets = [];
  }
  assert.deepEqual(sockets, [], 'NBD export sockets left behind');
}
