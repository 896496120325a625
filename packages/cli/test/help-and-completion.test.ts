// Every command's --help (usage, every option, examples), the overview, and
// the completion scripts loaded into a real bash.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { COMMANDS, bashCompletion, zshCompletion } from '../src/index.js';
import { optionsOf } from '../src/command-spec.js';
import { runAenv } from './helpers/run-aenv.js';

const dir = mkdtempSync(join(tmpdir(), 'aenv-completion-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const env = { PATH: process.env.PATH ?? '', HOME: dir, AENV_CLI_CONFIG: join(dir, 'cli.json') };

describe('help', () => {
  it('every command has a summary, examples, and help listing every option', async () => {
    for (const spec of COMMANDS) {
      assert.ok(spec.examples.length > 0, `${spec.name} has examples`);
      assert.ok(
        spec.examples.some((e) => e.startsWith('aenv ') || e.includes('aenv ')),
        `${spec.name} examples run aenv`,
      );
      if (spec.raw !== undefined) continue;
      const help = await runAenv([...spec.name.split(' '), '--help'], env);
      assert.equal(help.code, 0, spec.name);
      assert.ok(help.stdout.startsWith(`Usage: aenv ${spec.usage}\n`), spec.name);
      for (const o of optionsOf(spec))
        assert.ok(help.stdout.includes(`--${o.name}`), `${spec.name} --${o.name}`);
      assert.match(help.stdout, /\nExamples:\n {2}/);
    }
  });

  it('the overview lists every command; families and versions answer too', async () => {
    const overview = await runAenv(['--help'], env);
    assert.equal(overview.code, 0);
    for (const spec of COMMANDS) assert.ok(overview.stdout.includes(`  ${spec.name} `), spec.name);
    assert.equal((await runAenv([], env)).code, 2);
    const family = await runAenv(['template', '--help'], env);
    assert.equal(family.code, 0);
    assert.match(family.stdout, /\n {2}ls +List templates\.\n {2}rm +Remove templates\.\n/);
    assert.match((await runAenv(['--version'], env)).stdout, /^aenv \d+\.\d+\.\d+\n$/);
    const typo = await runAenv(['snapshot', 'lst'], env);
    assert.equal(typo.code, 2);
  });
});

describe('completion', () => {
  function complete(script: string, line: string, shell = 'bash'): string[] {
    const file = join(dir, `aenv.${shell}`);
    writeFileSync(file, script);
    const words = line.split(' ');
    const probe =
      `source ${file}\n` +
      `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}\n` +
      `_aenv; printf '%s\\n' "\${COMPREPLY[@]}"`;
    // `aenv` in the probe's PATH answers the id lookups with a fixed list.
    const bin = join(dir, 'bin');
    execFileSync('mkdir', ['-p', bin]);
    writeFileSync(join(bin, 'aenv'), '#!/bin/sh\necho sbx1111; echo sbx2222\n', { mode: 0o755 });
    const out = execFileSync(shell, ['-c', probe], {
      encoding: 'utf8',
      env: { ...env, PATH: `${bin}:${env.PATH}` },
    });
    return out.split('\n').filter((l) => l !== '');
  }

  it('bash completes commands, families (two and three words), options, choices and ids', () => {
    const script = bashCompletion(COMMANDS);
    assert.deepEqual(complete(script, 'aenv sn'), ['snapshot']);
    assert.deepEqual(complete(script, 'aenv snapshot '), ['create', 'ls', 'rm']);
    assert.ok(complete(script, 'aenv exec --').includes('--interactive'));
    assert.ok(complete(script, 'aenv snapshot ls --').includes('--sandbox'));
    assert.deepEqual(complete(script, 'aenv ls --state '), ['running', 'paused']);
    assert.deepEqual(complete(script, 'aenv connect sbx1'), ['sbx1111']);
    assert.deepEqual(complete(script, 'aenv admin '), ['tenant', 'key']);
    assert.deepEqual(complete(script, 'aenv admin tenant '), ['create', 'ls', 'show', 'set', 'rm']);
    assert.ok(complete(script, 'aenv admin tenant set x --').includes('--max-vcpus'));
    assert.deepEqual(complete(script, 'aenv admin key create --role '), ['member', 'admin']);
  });

  it('the command prints both scripts, and zsh loads it', async () => {
    const bash = await runAenv(['completion', 'bash'], env);
    assert.equal(bash.stdout, bashCompletion(COMMANDS));
    const zsh = await runAenv(['completion', 'zsh'], env);
    assert.equal(zsh.stdout, zshCompletion(COMMANDS));
    assert.equal((await runAenv(['completion', 'fish'], env)).code, 2);
    let hasZsh = true;
    try {
      execFileSync('zsh', ['--version']);
    } catch {
      hasZsh = false;
    }
    if (!hasZsh) {
      console.log('# zsh is not installed: the zsh script was checked with bash syntax only');
      execFileSync('bash', ['-n', '-c', zsh.stdout.split('\n').slice(3).join('\n')]);
    }
  });
});
