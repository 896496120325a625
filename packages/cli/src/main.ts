#!/usr/bin/env node
/**
 * The `aenv` command's entry point: runs the command line with this
 * process's streams and exits with its status.
 *
 * @module
 */
import { runCli } from './cli.js';

const io = {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  cwd: process.cwd(),
  onResize: (listener: () => void): (() => void) => {
    process.stdout.on('resize', listener);
    return () => void process.stdout.off('resize', listener);
  },
};

runCli(process.argv.slice(2), io).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(
      `aenv: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exitCode = 1;
  },
);
