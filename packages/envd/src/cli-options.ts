/**
 * The `envd` command line: parses arguments into {@link EnvdOptions}.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { AenvError } from '@aenv/shared';
import { ENVD_DEFAULT_PORT, type EnvdOptions } from './start-envd.js';

/** The `--help` text. */
export const USAGE = `usage: envd [options]

  --port N            TCP port (default ${ENVD_DEFAULT_PORT}; 0 = any free port)
  --host ADDR         address to listen on (default 0.0.0.0)
  --root DIR          file APIs and process cwds must stay under DIR (default /);
                      a guard for running on a host, not a sandbox
  --passwd FILE       account database (default /etc/passwd)
  --group FILE        group database (default /etc/group)
  --user NAME         default user (default: 'user' if it exists, else root)
  --workdir DIR       default working directory (default: the user's home)
  --set-clock         let POST /init set the system clock (in a sandbox)
  --exec-helper PATH  run-as-user helper (default: envd-exec next to envd)
  --quiet             no logs
  --version           print the envd version
  --help              this text
`;

/** What the command line asks for. */
export type CliRequest =
  { readonly kind: 'run'; readonly options: EnvdOptions } | { readonly kind: 'help' | 'version' };

/**
 * Parses `argv` (without node and the script).
 * @throws {AenvError} `INVALID_ARGUMENT` for unknown or malformed options.
 */
export function parseCli(argv: readonly string[]): CliRequest {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        root: { type: 'string' },
        passwd: { type: 'string' },
        group: { type: 'string' },
        user: { type: 'string' },
        workdir: { type: 'string' },
        'set-clock': { type: 'boolean' },
        'exec-helper': { type: 'string' },
        quiet: { type: 'boolean' },
        version: { type: 'boolean' },
        help: { type: 'boolean' },
      },
      strict: true,
    }));
  } catch (err) {
    throw new AenvError('INVALID_ARGUMENT', (err as Error).message, { cause: err });
  }
  if (values.help === true) return { kind: 'help' };
  if (values.version === true) return { kind: 'version' };
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536)) {
    throw new AenvError('INVALID_ARGUMENT', `--port: '${values.port}' is not a port number`);
  }
  return {
    kind: 'run',
    options: {
      port,
      host: values.host,
      root: values.root,
      passwdFile: values.passwd,
      groupFile: values.group,
      defaultUser: values.user,
      defaultWorkdir: values.workdir,
      setClock: values['set-clock'] === true,
      execHelper: values['exec-helper'],
      ...(values.quiet === true ? { logger: null } : {}),
    },
  };
}
