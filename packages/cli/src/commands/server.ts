/**
 * `aenv server`: runs a node in the foreground — the API and proxy on
 * 127.0.0.1:8000 by default, state under `$AENV_HOME` (default
 * /var/lib/aenv) — until SIGINT/SIGTERM, then kills its sandboxes and exits.
 * The first start prepares the guest artifacts (minutes) and shows progress.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { createLogger, loadNodeConfig, serveNode } from '@aenv/server';
import { UsageError } from '../cli-error.js';
import { progressPrinter } from '../progress-printer.js';

const HELP = `Usage: aenv server [options]

Runs a node: the E2B-compatible API and sandbox proxy, and the sandboxes.

Options:
  --config FILE     JSON config file (default: $AENV_CONFIG, else $AENV_HOME/config.json if present)
  --home DIR        state directory (default: $AENV_HOME, else /var/lib/aenv)
  --host ADDR       listen address (default: 127.0.0.1)
  --port N          listen port (default: 8000)
  --log-level LVL   debug | info | warn | error (default: info)
  -h, --help        show this help

Clients: E2B_API_URL=http://HOST:PORT E2B_SANDBOX_URL=http://HOST:PORT E2B_API_KEY=<key>
`;

/** Runs `aenv server`; resolves with the exit status once the node has stopped. */
export async function serverCommand(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        config: { type: 'string' },
        home: { type: 'string' },
        host: { type: 'string' },
        port: { type: 'string' },
        'log-level': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help === true) {
    process.stdout.write(HELP);
    return 0;
  }
  const env: Record<string, string | undefined> = { ...process.env };
  if (values.home !== undefined) env.AENV_HOME = values.home;
  if (values.host !== undefined) env.AENV_HOST = values.host;
  if (values.port !== undefined) env.AENV_PORT = values.port;
  if (values['log-level'] !== undefined) env.AENV_LOG_LEVEL = values['log-level'];
  const config = loadNodeConfig(values.config, env);
  const logger = createLogger(config.log.level);
  const node = await serveNode({ config, logger, onProgress: progressPrinter(process.stderr) });
  process.stdout.write(
    `aenv node ready at ${node.url}\n` +
      `  API key: ${node.apiKeyPath}\n` +
      `  export E2B_API_URL=${node.url} E2B_SANDBOX_URL=${node.url} E2B_API_KEY=$(cat ${node.apiKeyPath})\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  process.stderr.write('aenv: stopping: killing sandboxes\n');
  await node.close();
  return 0;
}
