import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { commandLine, quoteWord } from './shell-quote.js';

describe('command lines for bash -c', () => {
  it('come back as the same words through a real bash', () => {
    const words = [
      'printf',
      '%s\\n',
      'plain',
      'two words',
      "it's",
      '$HOME',
      '`x`',
      '"q"',
      '*',
      '',
      'a\nb',
    ];
    const out = execFileSync('bash', ['-c', commandLine(words)], { encoding: 'utf8' });
    assert.deepEqual(out.split('\n').slice(0, -1), [...words.slice(2, -1), 'a', 'b']);
  });

  it('pass a single word as is, so it may use shell syntax', () => {
    assert.equal(commandLine(['echo $HOME | wc -c']), 'echo $HOME | wc -c');
    assert.equal(quoteWord('safe-word_1.txt'), 'safe-word_1.txt');
  });
});
