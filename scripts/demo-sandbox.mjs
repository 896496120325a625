#!/usr/bin/env node
// The main job's client half: with the unmodified e2b SDK, create a sandbox
// on a running node, run a command in it, print the output, kill it.
//   E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY must point at the node.
import { Sandbox } from 'e2b';

const command = process.argv[2] ?? 'uname -a; python3 --version';
const t0 = performance.now();
const sbx = await Sandbox.create('base');
const created = performance.now();
console.log(`sandbox ${sbx.sandboxId} created in ${((created - t0) / 1000).toFixed(2)} s`);
try {
  const result = await sbx.commands.run(command);
  console.log(`$ ${command}`);
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  console.log(`(exit ${result.exitCode}, ${((performance.now() - created) / 1000).toFixed(2)} s)`);
} finally {
  await sbx.kill();
  console.log(`sandbox ${sbx.sandboxId} killed`);
}
