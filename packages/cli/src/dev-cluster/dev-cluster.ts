/**
 * A cluster on one machine for development and tests (`aenv dev cluster
 * up`): Redis, optionally an S3-compatible server (s3rver), `nodes` node
 * daemons each in its own network namespace as a separate host, the
 * gateway and the scheduler — no containers. Everything lives under one
 * directory (`dev-cluster.json` records what runs), and `down` stops and
 * removes all of it.
 *
 * Nodes share the guest artifacts directory (so their snapshots are
 * compatible) and a blob store: a shared directory (`store: 'fs'`) or the
 * S3 server on the host's bridge address (`store: 's3'`). They reach Redis
 * through its unix socket. Node 1 starts first and builds the `base`
 * template the others then take from the cluster.
 *
 * @module
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClusterState, connectRedis } from '@aenv/control-plane';
import { newApiKey } from '@aenv/shared';
import { running, startDetached, stopProcess, waitFor } from './dev-processes.js';
import {
  createNetwork,
  hostAddress,
  nodeAddress,
  nodeNetns,
  removeNetwork,
  type DevNetwork,
} from './host-network.js';

/** The `aenv` entry point of this checkout (nodes, gateway and scheduler run it). */
const CLI_MAIN = fileURLToPath(new URL('../main.js', import.meta.url));
const S3_RUNNER = fileURLToPath(new URL('./s3-runner.js', import.meta.url));
const RECORD = 'dev-cluster.json';
/** The node API port inside every node's namespace. */
export const NODE_PORT = 8000;
/** The bucket of the dev cluster's S3 server. */
export const S3_BUCKET = 'aenv';

/** How to lay the cluster out. */
export interface DevClusterOptions {
  readonly dir: string;
  readonly nodes: number;
  readonly store: 'fs' | 's3';
  /** Prefix of interface, namespace and slot names (≤ 5 characters). */
  readonly prefix: string;
  /** First two octets of the bridge's /24. */
  readonly subnet: string;
  readonly gatewayHost: string;
  readonly gatewayPort: number;
  readonly s3Port: number;
  /** Shared guest artifact cache (kernel, tools, base image). */
  readonly artifactsDir: string;
  /** Extra environment of every node (`AENV_MAX_SANDBOXES`, ...). */
  readonly nodeEnv?: Readonly<Record<string, string>>;
  readonly logLevel?: string;
  /** Keep processes in our process group (tests), instead of detached. */
  readonly attached?: boolean;
}

interface Pids {
  redis?: number;
  s3?: number;
  gateway?: number;
  scheduler?: number;
  nodes: (number | undefined)[];
}

interface Recorded {
  readonly options: DevClusterOptions;
  readonly apiKey: string;
  readonly pids: Pids;
}

/** A dev cluster, running or being set up. */
export class DevCluster {
  readonly options: DevClusterOptions;
  readonly apiKey: string;
  readonly #pids: Pids;
  #state: ClusterState | undefined;

  private constructor(r: Recorded) {
    this.options = r.options;
    this.apiKey = r.apiKey;
    this.#pids = r.pids;
  }

  /** Sets the whole cluster up; on failure, tears down what it started. */
  static async up(
    options: DevClusterOptions,
    onStep: (msg: string) => void = () => undefined,
  ): Promise<DevCluster> {
    if (existsSync(join(options.dir, RECORD))) {
      throw new Error(
        `a dev cluster is recorded in ${options.dir}; run 'aenv dev cluster down' first`,
      );
    }
    mkdirSync(options.dir, { recursive: true, mode: 0o700 });
    const c = new DevCluster({ options, apiKey: newApiKey(), pids: { nodes: [] } });
    c.#save();
    try {
      onStep(`network: bridge ${options.prefix}br, ${options.nodes} namespaces`);
      await createNetwork(c.network);
      await c.#startServices(onStep);
      for (let i = 1; i <= options.nodes; i++) {
        onStep(
          `node ${i}: starting (the first start builds guest artifacts and the base template)`,
        );
        await c.startNode(i);
      }
      onStep('gateway and scheduler');
      await c.startScheduler();
      await c.startGateway();
      return c;
    } catch (err) {
      await c.down().catch(() => undefined);
      throw err;
    }
  }

  /** The cluster recorded in `dir`. */
  static load(dir: string): DevCluster {
    if (!existsSync(join(dir, RECORD))) throw new Error(`no dev cluster is recorded in ${dir}`);
    return new DevCluster(JSON.parse(readFileSync(join(dir, RECORD), 'utf8')) as Recorded);
  }

  /** The network layout. */
  get network(): DevNetwork {
    return { prefix: this.options.prefix, subnet: this.options.subnet, nodes: this.options.nodes };
  }

  get redisUrl(): string {
    return `unix://${join(this.options.dir, 'redis', 'redis.sock')}`;
  }

  get gatewayUrl(): string {
    return `http://${this.options.gatewayHost}:${this.options.gatewayPort}`;
  }

  /** Node `i`'s id (1-based). */
  nodeId(i: number): string {
    return `node-${i}`;
  }

  /** Node `i`'s API URL (reachable from the host). */
  nodeUrl(i: number): string {
    return `http://${nodeAddress(this.network, i)}:${NODE_PORT}`;
  }

  /** Node `i`'s state directory. */
  nodeHome(i: number): string {
    return join(this.options.dir, `node${i}`);
  }

  /** Network slot prefix of node `i`. */
  slotPrefix(i: number): string {
    return `${this.options.prefix}${i}`;
  }

  /** What SDKs need: `E2B_*` and `AENV_*` pointing at the gateway. */
  clientEnv(): Record<string, string> {
    return {
      E2B_API_URL: this.gatewayUrl,
      E2B_SANDBOX_URL: this.gatewayUrl,
      E2B_API_KEY: this.apiKey,
      AENV_API_URL: this.gatewayUrl,
      AENV_API_KEY: this.apiKey,
    };
  }

  /** Starts node `i` and waits until it heartbeats. */
  async startNode(i: number, timeoutMs = 20 * 60_000): Promise<void> {
    const home = this.nodeHome(i);
    mkdirSync(home, { recursive: true, mode: 0o700 });
    const since = Date.now() - 1000;
    const pid = startDetached(
      'ip',
      ['netns', 'exec', nodeNetns(this.network, i), process.execPath, CLI_MAIN, 'server'],
      {
        env: this.#nodeEnv(i),
        log: join(this.options.dir, `node${i}.log`),
        attached: this.options.attached,
      },
    );
    this.#pids.nodes[i - 1] = pid;
    this.#save();
    const id = this.nodeId(i);
    await waitFor(
      `node ${i} to join (log: ${join(this.options.dir, `node${i}.log`)})`,
      async () => {
        if (!running(pid))
          throw new Error(`node ${i} exited; see ${join(this.options.dir, `node${i}.log`)}`);
        const n = await (await this.#cluster()).node(id);
        return n?.alive === true && Date.parse(n.report.startedAt) >= since;
      },
      timeoutMs,
    ).catch((err: unknown) => {
      if (!running(pid))
        throw new Error(`node ${i} exited; see ${join(this.options.dir, `node${i}.log`)}`);
      throw err;
    });
  }

  /** Stops node `i` (`SIGKILL`: as if its host died; `SIGTERM`: a clean shutdown). */
  async stopNode(i: number, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const pid = this.#pids.nodes[i - 1];
    if (pid !== undefined) await stopProcess(pid, signal, 120_000);
    this.#pids.nodes[i - 1] = undefined;
    this.#save();
  }

  /** Starts the gateway and waits for `/health`. */
  async startGateway(): Promise<void> {
    this.#pids.gateway = startDetached(process.execPath, [CLI_MAIN, 'gateway'], {
      env: this.#controlEnv(),
      log: join(this.options.dir, 'gateway.log'),
      attached: this.options.attached,
    });
    this.#save();
    await waitFor('the gateway', async () => (await fetch(`${this.gatewayUrl}/health`)).ok, 30_000);
  }

  async stopGateway(): Promise<void> {
    if (this.#pids.gateway !== undefined) await stopProcess(this.#pids.gateway);
    this.#pids.gateway = undefined;
    this.#save();
  }

  /** Starts the scheduler loop. */
  async startScheduler(): Promise<void> {
    this.#pids.scheduler = startDetached(process.execPath, [CLI_MAIN, 'scheduler'], {
      env: this.#controlEnv(),
      log: join(this.options.dir, 'scheduler.log'),
      attached: this.options.attached,
    });
    this.#save();
    await Promise.resolve();
  }

  async stopScheduler(): Promise<void> {
    if (this.#pids.scheduler !== undefined) await stopProcess(this.#pids.scheduler);
    this.#pids.scheduler = undefined;
    this.#save();
  }

  /** Stops everything and removes the network and (unless `keep`) the directory. */
  async down(o: { keep?: boolean } = {}): Promise<void> {
    await this.stopGateway();
    await this.stopScheduler();
    await Promise.all(this.#pids.nodes.map((_, i) => this.stopNode(i + 1)));
    for (const pid of [this.#pids.s3, this.#pids.redis])
      if (pid !== undefined) await stopProcess(pid);
    this.#pids.s3 = undefined;
    this.#pids.redis = undefined;
    this.#state?.redis.disconnect();
    this.#state = undefined;
    const slots = Array.from({ length: this.options.nodes }, (_, i) => this.slotPrefix(i + 1));
    await removeNetwork(this.network, slots);
    if (o.keep === true) this.#save();
    else rmSync(this.options.dir, { recursive: true, force: true });
  }

  /** Closes this handle's Redis connection (the cluster keeps running). */
  detach(): void {
    this.#state?.redis.disconnect();
    this.#state = undefined;
  }

  async #startServices(onStep: (msg: string) => void): Promise<void> {
    const redisDir = join(this.options.dir, 'redis');
    mkdirSync(redisDir, { recursive: true, mode: 0o700 });
    onStep('redis');
    this.#pids.redis = startDetached(
      'redis-server',
      [
        '--port',
        '0',
        '--unixsocket',
        join(redisDir, 'redis.sock'),
        '--unixsocketperm',
        '700',
        '--dir',
        redisDir,
      ],
      {
        env: process.env,
        log: join(this.options.dir, 'redis.log'),
        attached: this.options.attached,
      },
    );
    this.#save();
    await waitFor(
      'redis',
      async () => (await this.#cluster()).redis.ping().then(() => true),
      15_000,
    );
    if (this.options.store !== 's3') return;
    onStep(`s3rver on ${hostAddress(this.network)}:${this.options.s3Port}`);
    const s3Dir = join(this.options.dir, 's3');
    mkdirSync(s3Dir, { recursive: true });
    this.#pids.s3 = startDetached(
      process.execPath,
      [S3_RUNNER, s3Dir, hostAddress(this.network), String(this.options.s3Port), S3_BUCKET],
      { env: process.env, log: join(this.options.dir, 's3.log'), attached: this.options.attached },
    );
    this.#save();
    const url = `http://${hostAddress(this.network)}:${this.options.s3Port}/`;
    await waitFor('s3rver', async () => (await fetch(url)).status < 500, 30_000);
  }

  async #cluster(): Promise<ClusterState> {
    this.#state ??= new ClusterState(await connectRedis(this.redisUrl, 'dev-cluster'));
    return this.#state;
  }

  #nodeEnv(i: number): Record<string, string | undefined> {
    const o = this.options;
    const store =
      o.store === 's3'
        ? {
            AENV_STORAGE_BLOB_STORE: 's3',
            AENV_STORAGE_S3_BUCKET: S3_BUCKET,
            AENV_STORAGE_S3_ENDPOINT: `http://${hostAddress(this.network)}:${o.s3Port}`,
            AENV_STORAGE_S3_ADDRESSING: 'path',
            AENV_STORAGE_S3_ACCESS_KEY_ID: 'S3RVER',
            AENV_STORAGE_S3_SECRET_ACCESS_KEY: 'S3RVER',
          }
        : { AENV_STORAGE_FS_ROOT: join(o.dir, 'shared-blobs') };
    return {
      PATH: process.env.PATH,
      AENV_HOME: this.nodeHome(i),
      AENV_HOST: nodeAddress(this.network, i),
      AENV_PORT: String(NODE_PORT),
      AENV_ARTIFACTS_DIR: o.artifactsDir,
      AENV_NETWORK_PREFIX: this.slotPrefix(i),
      AENV_NETWORK_ADDRESS_POOL: `10.249.${i}.0/24`,
      AENV_NETWORK_LOCK_DIR: join(this.nodeHome(i), 'lock'),
      AENV_LAYER_GC: 'false',
      AENV_LOG_LEVEL: o.logLevel ?? 'info',
      AENV_CLUSTER_REDIS_URL: this.redisUrl,
      AENV_CLUSTER_NODE_ID: this.nodeId(i),
      AENV_CLUSTER_ADVERTISE_URL: this.nodeUrl(i),
      AENV_CLUSTER_API_KEY: this.apiKey,
      ...store,
      ...o.nodeEnv,
    };
  }

  #controlEnv(): Record<string, string | undefined> {
    return {
      PATH: process.env.PATH,
      AENV_CLUSTER_REDIS_URL: this.redisUrl,
      AENV_CLUSTER_API_KEY: this.apiKey,
      AENV_GATEWAY_API_KEYS: this.apiKey,
      AENV_GATEWAY_HOST: this.options.gatewayHost,
      AENV_GATEWAY_PORT: String(this.options.gatewayPort),
      AENV_SCHEDULER_INTERVAL_SECONDS: '2',
      AENV_LOG_LEVEL: this.options.logLevel ?? 'info',
    };
  }

  #save(): void {
    const r: Recorded = { options: this.options, apiKey: this.apiKey, pids: this.#pids };
    writeFileSync(join(this.options.dir, RECORD), `${JSON.stringify(r, null, 2)}\n`, {
      mode: 0o600,
    });
  }
}
