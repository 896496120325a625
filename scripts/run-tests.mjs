#!/usr/bin/env node
// Runs the compiled test files of every package with Node's built-in test
// runner (so the summary lines are the standard ones).
//
//   node scripts/run-tests.mjs              unit tests (src/**/*.test.ts) and
//                                           slower suites (test/**/*.test.ts)
//   node scripts/run-tests.mjs --vm         only VM suites (*.vm.test.ts)
//   node scripts/run-tests.mjs [--vm] PATH  only files under PATH (a package
//                                           folder or a source file)
//
// Tests are written in TypeScript next to the code and run from `dist/`
// after `npm run build`; a compiled test whose source was deleted is ignored.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const root = resolve(new URL('..', import.meta.url).pathname);
const args = process.argv.slice(2);
const vm = args.includes('--vm');
const filters = args.filter((a) => !a.startsWith('--')).map((a) => resolve(a));

function* walk(dir) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}

const files = [];
for (const pkg of readdirSync(join(root, 'packages'))) {
  const pkgDir = join(root, 'packages', pkg);
  for (const sub of ['src', 'test']) {
    for (const source of walk(join(pkgDir, sub))) {
      if (!source.endsWith('.test.ts')) continue;
      if (source.endsWith('.vm.test.ts') !== vm) continue;
      if (filters.length > 0 && !filters.some((f) => source.startsWith(f))) continue;
      const compiled = join(pkgDir, 'dist', relative(pkgDir, source)).replace(/\.ts$/, '.js');
      if (!existsSync(compiled)) {
        console.error(`not compiled: ${relative(root, source)} (run npm run build)`);
        process.exit(1);
      }
      files.push(compiled);
    }
  }
}

if (files.length === 0) {
  console.log(`no ${vm ? 'VM ' : ''}test files found`);
  process.exit(filters.length > 0 ? 1 : 0);
}

const concurrency = process.env.AENV_TEST_CONCURRENCY ?? (vm ? '1' : '2');
const result = spawnSync(
  process.execPath,
  ['--enable-source-maps', '--test', `--test-concurrency=${concurrency}`, ...files],
  { stdio: 'inherit', cwd: root },
);
process.exit(result.status ?? 1);
