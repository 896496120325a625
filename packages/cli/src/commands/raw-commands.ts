/**
 * The commands that parse their own arguments and run in this process
 * rather than against a node: `aenv server` and `aenv debug ...`.
 *
 * @module
 */
import type { CommandSpec } from '../command-spec.js';
import { debugCommand } from './debug.js';
import { serverCommand } from './server.js';

/** `aenv server`. */
export const serverSpec: CommandSpec = {
  name: 'server',
  group: 'node',
  summary: 'Run a node: the API on 127.0.0.1:8000 and its sandboxes.',
  usage: 'server [options]',
  remote: false,
  options: [
    { name: 'config', type: 'string', value: 'FILE', help: 'JSON config file' },
    { name: 'home', type: 'string', value: 'DIR', help: 'state directory (default /var/lib/aenv)' },
    { name: 'host', type: 'string', value: 'ADDR', help: 'listen address' },
    { name: 'port', type: 'string', value: 'N', help: 'listen port' },
    {
      name: 'log-level',
      type: 'string',
      value: 'LEVEL',
      choices: ['debug', 'info', 'warn', 'error'],
      help: 'log level',
    },
  ],
  examples: ['aenv server', 'aenv server --home /srv/aenv --host 0.0.0.0 --port 8000'],
  raw: (argv) => serverCommand([...argv]),
};

/** `aenv debug`. */
export const debugSpec: CommandSpec = {
  name: 'debug',
  group: 'other',
  summary: "Look inside a node's state (aenv debug layer inspect DIGEST).",
  usage: 'debug RESOURCE VERB [options]',
  remote: false,
  options: [],
  examples: ['aenv debug layer inspect sha256:0123…'],
  raw: (argv) => debugCommand([...argv]),
};
