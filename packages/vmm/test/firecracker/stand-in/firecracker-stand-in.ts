/**
 * A STAND-IN for the `firecracker` binary (test code): a node process that
 * plays the VMM end to end for the firecracker driver's contract test on
 * hosts without Firecracker or hardware KVM. It takes Firecracker's
 * command line (`--api-sock`, `--id`, and the arguments the jailer adds;
 * anything else is refused as Firecracker would), serves the API on the
 * socket validated against the published spec, enforces Firecracker's
 * state rules, and plays a tiny guest on stdout (its serial console). It
 * runs no guest code.
 *
 * Environment: `AENV_FC_STANDIN_ROOT` (set by the jailer stand-in: paths
 * are inside this chroot directory), `AENV_FC_STANDIN_LOG` (append every
 * request as a JSON line), `AENV_FC_SPEC` (spec path). Signals: SIGTERM
 * ends it like Firecracker (default action); SIGUSR2 makes the guest power
 * off (the process exits 0, as Firecracker does when the guest reboots).
 *
 * @module
 */
import { appendFileSync, rmSync } from 'node:fs';
import { FcModel } from './fc-model.js';
import { PathView } from './fc-io.js';
import { serveApi } from './fc-api-server.js';
import { flushMetrics } from './fc-runtime-handlers.js';
import { SpecValidator } from './spec-validator.js';

const KNOWN = new Set([
  '--api-sock',
  '--id',
  '--start-time-us',
  '--start-time-cpu-us',
  '--parent-cpu-time-us',
]);

function parseArgs(argv: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = (argv[i] as string).split(/=(.*)/s, 2) as [string, string | undefined];
    if (!KNOWN.has(flag)) {
      process.stderr.write(`error: Found argument '${flag}' which wasn't expected\n`);
      process.exit(1);
    }
    const value = inline ?? argv[++i];
    if (value === undefined) {
      process.stderr.write(`error: argument ${flag} needs a value\n`);
      process.exit(1);
    }
    out.set(flag, value);
  }
  return out;
}

function main(): void {
  const spec = new SpecValidator(process.env.AENV_FC_SPEC);
  if (process.argv.includes('--version')) {
    process.stdout.write(`Firecracker v${spec.version}\n`);
    return;
  }
  const args = parseArgs(process.argv.slice(2));
  const paths = new PathView(process.env.AENV_FC_STANDIN_ROOT ?? null);
  const socket = paths.host(args.get('--api-sock') ?? '/run/firecracker.socket');
  const logFile = process.env.AENV_FC_STANDIN_LOG;
  const exit = (code: number): void => void setTimeout(() => process.exit(code), 20);
  const model: FcModel = new FcModel({
    id: args.get('--id') ?? 'anonymous-instance',
    version: spec.version,
    paths,
    console: (text) => {
      const serial = model.core.cfg.serial?.serial_out_path;
      if (serial === undefined) process.stdout.write(text);
      else appendFileSync(paths.host(serial), text);
    },
    exit,
  });
  rmSync(socket, { force: true });
  serveApi(socket, spec, model, (r) => {
    if (logFile !== undefined) appendFileSync(logFile, `${JSON.stringify(r)}\n`);
  });
  setInterval(() => flushMetrics(model.core), 60_000).unref();
  process.on('SIGUSR2', () => {
    model.core.env.console('aenv-stand-in: guest powered off\r\n');
    exit(0);
  });
  process.on('exit', () => rmSync(socket, { force: true }));
}

main();
