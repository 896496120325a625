/**
 * Starts a real node (microVMs under the qemu driver, real network slots,
 * real guest artifacts) for the CLI's and SDK's VM suites, in a temporary
 * home, on an ephemeral port, with a network prefix and address pool of its
 * own; `close()` checks that no QEMU process, netns or sandbox directory of
 * it is left. Guest artifacts are cached in `$AENV_TEST_CACHE` (default
 * /var/tmp/aenv-test-cache), shared with the server's VM suites.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, loadNodeConfig, serveNode, type ServedNode } from '@aenv/server';
import { commandLines } from './command-lines.js';

/** A node under test. */
export interface VmNode {
  readonly node: ServedNode;
  readonly home: string;
  /** Environment pointing the CLI at this node only. */
  readonly env: Record<string, string>;
  close(): Promise<void>;
}

/**
 * Starts the node; `pool` keeps concurrent suites apart (a /24 of its own);
 * `env` adds configuration variables (e.g. an insecure local registry).
 */
export async function startVmNode(pool: string, env: Record<string, string> = {}): Promise<VmNode> {
  const home = mkdtempSync(join(tmpdir(), 'aenv-cli-vm-'));
  const prefix = `c${Math.floor(Math.random() * 1e6)}`;
  const config = loadNodeConfig(undefined, {
    PATH: process.env.PATH,
    AENV_HOME: join(home, 'node'),
    AENV_PORT: '0',
    AENV_ARTIFACTS_DIR: process.env.AENV_TEST_CACHE ?? '/var/tmp/aenv-test-cache',
    AENV_NETWORK_PREFIX: prefix,
    AENV_NETWORK_ADDRESS_POOL: pool,
    AENV_NETWORK_POOL_LOW: '1',
    AENV_NETWORK_POOL_HIGH: '2',
    AENV_NETWORK_LOCK_DIR: join(home, 'lock'),
    AENV_LOG_LEVEL: process.env.AENV_TEST_LOG_LEVEL ?? 'warn',
    ...env,
  });
  const node = await serveNode({ config, logger: createLogger(config.log.level) });
  const settings = join(home, 'cli.json');
  writeFileSync(settings, '{}');
  return {
    node,
    home,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      AENV_CLI_CONFIG: settings,
      AENV_HOME: config.home,
      AENV_API_URL: node.url,
      AENV_API_KEY: node.apiKey,
    },
    close: async () => {
      await node.close();
      const qemus = commandLines('pgrep', ['-af', 'qemu-system']).filter((l) => l.includes(home));
      assert.deepEqual(qemus, [], 'QEMU processes left behind');
      assert.deepEqual(
        commandLines('ip', ['netns', 'list']).filter((l) => l.startsWith(prefix)),
        [],
        'netns left behind',
      );
      let dirs: string[] = [];
      try {
        dirs = readdirSync(join(config.home, 'sandboxes'));
      } catch {
        dirs = [];
      }
      assert.deepEqual(dirs, [], 'sandbox directories left behind');
      rmSync(home, { recursive: true, force: true });
    },
  };
}
