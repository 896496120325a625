#!/usr/bin/env node
// Regenerates src/gen from proto/ (`npm run gen -w packages/envd`): runs
// `buf generate` (protoc-gen-es), then makes the output fit the repository
// rules: a module doc comment first, no blanket eslint-disable (the lint
// config reports unused directives), Prettier formatting.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(pkg, '..', '..', 'node_modules', '.bin', name);
execFileSync(bin('buf'), ['generate'], { cwd: pkg, stdio: 'inherit' });

function* files(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else if (p.endsWith('.ts')) yield p;
  }
}

for (const file of files(join(pkg, 'src', 'gen'))) {
  const proto = relative(join(pkg, 'src', 'gen'), file).replace(/_pb\.ts$/, '.proto');
  const body = readFileSync(file, 'utf8').replace(/^\/\* eslint-disable \*\/\n/m, '');
  const doc = `/**\n * Generated from \`proto/${proto}\` by protoc-gen-es (\`npm run gen\`); do not edit.\n *\n * @module\n */\n`;
  writeFileSync(file, doc + body);
}
execFileSync(bin('prettier'), ['--write', 'src/gen'], { cwd: pkg, stdio: 'inherit' });
