/**
 * `aenv dev cluster up|down`: a whole cluster on this machine for
 * development, without containers — Redis, an S3-compatible server
 * (`--store s3`, else a shared directory), node daemons each in a network
 * namespace of its own, the gateway and the scheduler
 * (`dev-cluster/dev-cluster.ts`). `up` prints the variables that point the
 * e2b SDK at the gateway; `down` stops and removes everything.
 *
 * @module
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { UsageError } from '../cli-error.js';
import { DevCluster } from '../dev-cluster/dev-cluster.js';

const DEFAULT_DIR = '/var/tmp/aenv-dev-cluster';

const HELP = `Usage: aenv dev cluster up [options]
       aenv dev cluster down [--dir DIR] [--keep]

Runs a cluster on this machine (needs root: namespaces, bridge, VMs).

Options of up:
  --dir DIR          state, logs and shared storage (default: ${DEFAULT_DIR})
  --nodes N          node daemons, each in its own network namespace (default: 3)
  --store fs|s3      shared blob store: a directory, or s3rver on the bridge (default: fs)
  --port N           gateway port on 127.0.0.1 (default: 8080)
  --subnet A.B       the bridge's network A.B.0.0/24 (default: 10.242)
  --artifacts DIR    guest artifact cache shared by the nodes (default: DIR/artifacts)
  --log-level LVL    debug | info | warn | error (default: info)
Options of down:
  --keep             keep the directory (logs, node state)
`;

/** Runs `aenv dev ...`. */
export async function devCommand(argv: string[]): Promise<number> {
  const [group, verb, ...rest] = argv;
  if (group === undefined || group === '-h' || group === '--help' || verb === '--help') {
    process.stdout.write(HELP);
    return group === undefined ? 2 : 0;
  }
  if (group !== 'cluster') throw new UsageError(`unknown dev command '${group}'`);
  if (verb === 'up') return up(rest);
  if (verb === 'down') return down(rest);
  throw new UsageError(`unknown command 'dev cluster ${verb ?? ''}' (up or down)`);
}

function values(argv: string[], up: boolean): Record<string, string | boolean | undefined> {
  try {
    return parseArgs({
      args: argv,
      options: {
        dir: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        ...(up
          ? {
              nodes: { type: 'string' },
              store: { type: 'string' },
              port: { type: 'string' },
              subnet: { type: 'string' },
              artifacts: { type: 'string' },
              'log-level': { type: 'string' },
            }
          : { keep: { type: 'boolean' } }),
      },
      strict: true,
    }).values as Record<string, string | boolean | undefined>;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function str(v: string | boolean | undefined, fallback: string): string {
  return typeof v === 'string' ? v : fallback;
}

async function up(argv: string[]): Promise<number> {
  const v = values(argv, true);
  if (v.help === true) return (process.stdout.write(HELP), 0);
  const dir = str(v.dir, DEFAULT_DIR);
  const store = str(v.store, 'fs');
  if (store !== 'fs' && store !== 's3') throw new UsageError("--store: expected 'fs' or 's3'");
  const nodes = Number(str(v.nodes, '3'));
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > 16) throw new UsageError('--nodes: 1 to 16');
  const cluster = await DevCluster.up(
    {
      dir,
      nodes,
      store,
      prefix: 'adc',
      subnet: str(v.subnet, '10.242'),
      gatewayHost: '127.0.0.1',
      gatewayPort: Number(str(v.port, '8080')),
      s3Port: 9000,
      artifactsDir: str(v.artifacts, join(dir, 'artifacts')),
      logLevel: str(v['log-level'], 'info'),
    },
    (msg) => process.stderr.write(`aenv dev cluster: ${msg}\n`),
  );
  cluster.detach();
  const env = cluster.clientEnv();
  process.stdout.write(
    `aenv dev cluster up: ${nodes} nodes behind ${cluster.gatewayUrl} (logs in ${dir})\n` +
      `  export ${Object.entries(env)
        .map(([k, val]) => `${k}=${val}`)
        .join(' ')}\n`,
  );
  return 0;
}

async function down(argv: string[]): Promise<number> {
  const v = values(argv, false);
  if (v.help === true) return (process.stdout.write(HELP), 0);
  const dir = str(v.dir, DEFAULT_DIR);
  const cluster = DevCluster.load(dir);
  await cluster.down({ keep: v.keep === true });
  process.stdout.write(`aenv dev cluster down: stopped and removed (${dir})\n`);
  return 0;
}
