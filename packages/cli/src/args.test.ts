import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expectOperands, keyValues, listOption, parseCommandArgs, stringOption } from './args.js';
import { UsageError } from './cli-error.js';
import type { CommandSpec } from './command-spec.js';

const spec: CommandSpec = {
  name: 'exec',
  summary: 's',
  usage: 'u',
  rest: true,
  examples: [],
  options: [
    { name: 'env', short: 'e', type: 'string', multiple: true, help: '' },
    { name: 'mode', type: 'string', choices: ['a', 'b'], help: '' },
    { name: 'interactive', short: 'i', type: 'boolean', help: '' },
  ],
};

describe('argument parsing', () => {
  it('keeps the words after -- untouched, options included', () => {
    const args = parseCommandArgs(spec, ['-i', '-e', 'A=1', 'ID', '--', 'ls', '-la', '--env']);
    assert.deepEqual(args.positionals, ['ID']);
    assert.deepEqual(args.rest, ['ls', '-la', '--env']);
    assert.equal(args.values.interactive, true);
    assert.deepEqual(listOption(args, 'env'), ['A=1']);
  });

  it('adds the connection and help options and rejects unknown ones', () => {
    const args = parseCommandArgs(spec, ['--url', 'http://x', '--key', 'k', '-h']);
    assert.equal(stringOption(args, 'url'), 'http://x');
    assert.equal(args.values.help, true);
    assert.throws(() => parseCommandArgs(spec, ['--nope']), UsageError);
    assert.throws(() => parseCommandArgs({ ...spec, remote: false }, ['--url', 'x']), UsageError);
  });

  it('checks choices', () => {
    assert.equal(stringOption(parseCommandArgs(spec, ['--mode', 'a']), 'mode'), 'a');
    assert.throws(() => parseCommandArgs(spec, ['--mode', 'c']), /--mode must be one of a, b/);
  });

  it('reads K=V lists and operand counts', () => {
    assert.deepEqual(keyValues(['A=1', 'B=x=y', 'C='], 'env'), { A: '1', B: 'x=y', C: '' });
    assert.throws(() => keyValues(['=v'], 'env'), /--env expects KEY=VALUE/);
    const two = parseCommandArgs(spec, ['a', 'b']);
    assert.deepEqual(expectOperands(two, ['X', 'Y']), ['a', 'b']);
    assert.throws(() => expectOperands(two, ['X']), /unexpected 'b'/);
    assert.throws(() => expectOperands(two, ['X', 'Y', 'Z']), /expected X Y Z/);
    assert.deepEqual(expectOperands(two, ['ID'], true), ['a', 'b']);
  });
});
