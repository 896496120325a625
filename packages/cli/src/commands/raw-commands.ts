/**
 * The commands that parse their own arguments and run in this process
 * rather than against a node: `aenv server`, `aenv gateway`,
 * `aenv scheduler`, `aenv dev cluster ...` and `aenv debug ...`.
 *
 * @module
 */
import type { CommandSpec } from '../command-spec.js';
import { debugCommand } from './debug.js';
import { devCommand } from './dev-cluster.js';
import { gatewayCommand, schedulerCommand } from './gateway.js';
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

/** `aenv gateway`. */
export const gatewaySpec: CommandSpec = {
  name: 'gateway',
  group: 'node',
  summary: 'Run a cluster gateway: the node API in front of every node.',
  usage: 'gateway [options]',
  remote: false,
  options: [
    { name: 'config', type: 'string', value: 'FILE', help: 'JSON config file' },
    { name: 'host', type: 'string', value: 'ADDR', help: 'listen address' },
    { name: 'port', type: 'string', value: 'N', help: 'listen port (default 8080)' },
    { name: 'redis', type: 'string', value: 'URL', help: "the cluster's Redis" },
    {
      name: 'log-level',
      type: 'string',
      value: 'LEVEL',
      choices: ['debug', 'info', 'warn', 'error'],
      help: 'log level',
    },
  ],
  examples: [
    'AENV_CLUSTER_API_KEY=$NODE_KEY AENV_GATEWAY_API_KEYS=$CLIENT_KEY aenv gateway --redis redis://10.0.0.5:6379 --host 0.0.0.0',
  ],
  raw: (argv) => gatewayCommand([...argv]),
};

/** `aenv scheduler`. */
export const schedulerSpec: CommandSpec = {
  name: 'scheduler',
  group: 'node',
  summary: 'Run the cluster scheduler loop (bindings, lost nodes).',
  usage: 'scheduler [options]',
  remote: false,
  options: [
    { name: 'config', type: 'string', value: 'FILE', help: 'JSON config file' },
    { name: 'redis', type: 'string', value: 'URL', help: "the cluster's Redis" },
    {
      name: 'log-level',
      type: 'string',
      value: 'LEVEL',
      choices: ['debug', 'info', 'warn', 'error'],
      help: 'log level',
    },
  ],
  examples: ['AENV_CLUSTER_API_KEY=$NODE_KEY aenv scheduler --redis redis://10.0.0.5:6379'],
  raw: (argv) => schedulerCommand([...argv]),
};

/** `aenv dev`. */
export const devSpec: CommandSpec = {
  name: 'dev',
  group: 'other',
  summary: 'A cluster on this machine for development (aenv dev cluster up|down).',
  usage: 'dev cluster up|down [options]',
  remote: false,
  options: [],
  examples: ['aenv dev cluster up --nodes 3', 'aenv dev cluster down'],
  raw: (argv) => devCommand([...argv]),
};
