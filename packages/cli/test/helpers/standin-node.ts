/**
 * A real node (API, proxy, orchestrator, SQLite store) whose machines are
 * {@link EnvdStandInLauncher} stand-ins, in a temporary home, on an
 * ephemeral loopback port, with a `base` template. Starts in about a
 * second; `close()` kills every sandbox and removes the home.
 *
 * @module
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  loadNodeConfig,
  openNodeState,
  silentLogger,
  startNode,
  type NodeState,
  type RunningNode,
} from '@aenv/server';
import { EnvdStandInLauncher } from './envd-standin-launcher.js';

/** A node under test. */
export interface StandInNode {
  readonly node: RunningNode;
  readonly home: string;
  /** Environment that points the CLI and SDK at this node (and nowhere else). */
  readonly env: Record<string, string>;
  close(): Promise<void>;
}

function seedBaseTemplate(state: NodeState): void {
  const { id, dir } = state.snapshots.allocate();
  mkdirSync(dir, { recursive: true });
  const createdAt = new Date().toISOString();
  state.snapshots.add({
    id,
    kind: 'template',
    templateId: 'base',
    dir,
    image: { virtualSize: 2 ** 31, layers: [`sha256:${'b'.repeat(64)}`] },
    vcpus: 1,
    memoryMiB: 256,
    diskSizeMiB: 1024,
    envdVersion: '0.5.7',
    createdAt,
  });
  state.templates.put({
    id: 'base',
    alias: 'base',
    snapshotId: id,
    vcpus: 1,
    memoryMiB: 256,
    diskSizeMiB: 1024,
    buildKey: 'standin',
    createdAt,
  });
}

/** Starts a stand-in node. */
export async function startStandInNode(): Promise<StandInNode> {
  const home = mkdtempSync(join(tmpdir(), 'aenv-cli-'));
  const config = loadNodeConfig(undefined, { AENV_HOME: join(home, 'node'), AENV_PORT: '0' });
  const state = openNodeState(config.home);
  seedBaseTemplate(state);
  const node = await startNode({
    config,
    launcher: new EnvdStandInLauncher(home, config.home),
    state,
    envdVersion: '0.5.7',
    logger: silentLogger,
  });
  const settings = join(home, 'cli.json');
  writeFileSync(settings, '{}');
  return {
    node,
    home,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      AENV_CLI_CONFIG: settings,
      AENV_HOME: join(home, 'nonexistent-node-home'),
      AENV_API_URL: node.url,
      AENV_API_KEY: node.apiKey,
    },
    close: async () => {
      await node.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}
