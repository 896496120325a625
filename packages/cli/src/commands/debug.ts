/**
 * `aenv debug`: tools that look inside a node's state, built on the same
 * packages the daemon runs. Dispatches `aenv debug <resource> <verb>`.
 *
 * @module
 */
import { UsageError } from '../cli-error.js';
import { layerInspectCommand } from './debug-layer-inspect.js';

const HELP = `Usage: aenv debug <resource> <verb> [options]

Commands:
  layer inspect <digest>   A layer's header, index summary and first extents.

Run 'aenv debug <resource> <verb> --help' for a command's options.
`;

/** Runs `aenv debug ...`; resolves with the exit status. */
export async function debugCommand(argv: string[]): Promise<number> {
  const [resource, verb, ...rest] = argv;
  if (resource === undefined || resource === '-h' || resource === '--help') {
    process.stdout.write(HELP);
    return resource === undefined ? 2 : 0;
  }
  const command = `${resource} ${verb ?? ''}`.trim();
  switch (command) {
    case 'layer inspect':
      return layerInspectCommand(rest);
    default:
      throw new UsageError(`unknown debug command '${command}'`);
  }
}
