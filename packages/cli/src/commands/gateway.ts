/**
 * `aenv gateway` and `aenv scheduler`: the control plane of a cluster, in
 * the foreground until SIGINT/SIGTERM. The gateway serves the node API in
 * front of every node (port 8080 by default); the scheduler keeps the
 * cluster state in line with the nodes' reports. Configuration: a JSON
 * file (`--config`) and `AENV_*` variables (docs/cluster.md).
 *
 * @module
 */
import { parseArgs } from 'node:util';
import {
  createLogger,
  loadControlPlaneConfig,
  runGateway,
  runScheduler,
} from '@aenv/control-plane';
import { UsageError } from '../cli-error.js';

const GATEWAY_HELP = `Usage: aenv gateway [options]

Runs a cluster gateway: the E2B-compatible node API in front of every node.

Options:
  --config FILE     JSON config file (default: $AENV_CONTROL_PLANE_CONFIG)
  --host ADDR       listen address (default: 127.0.0.1)
  --port N          listen port (default: 8080)
  --redis URL       the cluster's Redis (default: $AENV_CLUSTER_REDIS_URL)
  --log-level LVL   debug | info | warn | error (default: info)
  -h, --help        show this help

Needs the nodes' key ($AENV_CLUSTER_API_KEY) and client keys ($AENV_GATEWAY_API_KEYS).
Clients: E2B_API_URL=http://HOST:PORT E2B_SANDBOX_URL=http://HOST:PORT E2B_API_KEY=<client key>
`;

const SCHEDULER_HELP = `Usage: aenv scheduler [options]

Runs the cluster scheduler loop: binds sandboxes made directly on nodes,
drops bindings of sandboxes gone, releases copies of moved ones, and
notices lost nodes. One instance works at a time; more stand by.

Options:
  --config FILE     JSON config file (default: $AENV_CONTROL_PLANE_CONFIG)
  --redis URL       the cluster's Redis (default: $AENV_CLUSTER_REDIS_URL)
  --log-level LVL   debug | info | warn | error (default: info)
  -h, --help        show this help
`;

function parse(argv: string[], withListen: boolean) {
  try {
    return parseArgs({
      args: argv,
      options: {
        config: { type: 'string' },
        redis: { type: 'string' },
        'log-level': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        ...(withListen ? { host: { type: 'string' }, port: { type: 'string' } } : {}),
      },
      strict: true,
    }).values as Record<string, string | boolean | undefined>;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function configOf(values: Record<string, string | boolean | undefined>) {
  const env: Record<string, string | undefined> = { ...process.env };
  const set = (flag: string, name: string): void => {
    const v = values[flag];
    if (typeof v === 'string') env[name] = v;
  };
  set('host', 'AENV_GATEWAY_HOST');
  set('port', 'AENV_GATEWAY_PORT');
  set('redis', 'AENV_CLUSTER_REDIS_URL');
  set('log-level', 'AENV_LOG_LEVEL');
  const config = loadControlPlaneConfig(
    typeof values.config === 'string' ? values.config : undefined,
    env,
  );
  return { config, logger: createLogger(config.log.level) };
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/** Runs `aenv gateway`; resolves with the exit status once it has stopped. */
export async function gatewayCommand(argv: string[]): Promise<number> {
  const values = parse(argv, true);
  if (values.help === true) {
    process.stdout.write(GATEWAY_HELP);
    return 0;
  }
  const { config, logger } = configOf(values);
  const gateway = await runGateway(config, logger);
  process.stdout.write(`aenv gateway ready at ${gateway.url}\n`);
  await untilSignal();
  await gateway.close();
  return 0;
}

/** Runs `aenv scheduler`; resolves with the exit status once it has stopped. */
export async function schedulerCommand(argv: string[]): Promise<number> {
  const values = parse(argv, false);
  if (values.help === true) {
    process.stdout.write(SCHEDULER_HELP);
    return 0;
  }
  const { config, logger } = configOf(values);
  const scheduler = await runScheduler(config, logger);
  process.stdout.write('aenv scheduler running\n');
  await untilSignal();
  await scheduler.close();
  return 0;
}
