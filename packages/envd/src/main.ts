/**
 * The `envd` executable (the bundle's entry point): parses the command line,
 * starts envd, and stops it on SIGTERM/SIGINT.
 *
 * @module
 */
import { parseCli, USAGE } from './cli-options.js';
import { startEnvd } from './start-envd.js';
import { ENVD_VERSION } from './version.js';

async function main(): Promise<void> {
  const request = parseCli(process.argv.slice(2));
  if (request.kind === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  if (request.kind !== 'run') {
    process.stdout.write(`${ENVD_VERSION}\n`);
    return;
  }
  const envd = await startEnvd(request.options);
  const stop = (): void => {
    void envd.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`envd: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
