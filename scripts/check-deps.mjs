#!/usr/bin/env node
// Enforces the package dependency rules of docs/ARCHITECTURE.md and the
// runtime-dependency allow-list of docs/dependencies.md:
// - a package imports only the @aenv packages its row allows;
// - every @aenv import in source is declared in package.json;
// - every third-party runtime dependency is listed, with a reason, in
//   docs/dependencies.md, and every listed one is still used.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const root = resolve(new URL('..', import.meta.url).pathname);

/** Which @aenv packages each package may import (DESIGN.md §2). */
const ALLOWED = {
  shared: [],
  storage: ['shared'],
  vmm: ['shared'],
  network: ['shared'],
  envd: ['shared'],
  guest: ['shared', 'envd'],
  server: ['shared', 'storage', 'vmm', 'network', 'envd', 'guest', 'ui'],
  'control-plane': ['shared', 'sdk', 'ui'],
  // The dashboard: mounted by server and control-plane, so it imports neither.
  ui: ['shared'],
  sdk: [],
  cli: ['shared', 'sdk', 'server', 'storage', 'control-plane'],
  testkit: [
    'shared',
    'storage',
    'vmm',
    'network',
    'envd',
    'guest',
    'server',
    'control-plane',
    'sdk',
    'cli',
    'ui',
  ],
};

const problems = [];

function* sources(dir) {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* sources(p);
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts')) yield p;
  }
}

function allowList() {
  const rows = new Map();
  const text = readFileSync(join(root, 'docs/dependencies.md'), 'utf8');
  for (const line of text.split('\n')) {
    const m = /^\|\s*`([^`]+)`\s*\|\s*`([^`]+)`\s*\|\s*(.+?)\s*\|\s*$/.exec(line);
    if (m) rows.set(`${m[1]} ${m[2]}`, m[3]);
  }
  return rows;
}

const listed = allowList();
const used = new Set();

for (const pkg of readdirSync(join(root, 'packages'))) {
  const dir = join(root, 'packages', pkg);
  if (!existsSync(join(dir, 'package.json'))) continue;
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const allowed = ALLOWED[pkg];
  if (!allowed) {
    problems.push(`packages/${pkg}: not a package of DESIGN.md §2; add it to the table first`);
    continue;
  }
  const declared = { ...manifest.dependencies, ...manifest.devDependencies };
  for (const dep of Object.keys(manifest.dependencies ?? {})) {
    if (dep.startsWith('@aenv/')) continue;
    used.add(`${pkg} ${dep}`);
    if (!listed.has(`${pkg} ${dep}`)) {
      problems.push(`packages/${pkg}: runtime dependency ${dep} is not in docs/dependencies.md`);
    }
  }
  for (const sub of ['src', 'test']) {
    for (const file of sources(join(dir, sub))) checkImports(file, pkg, allowed, declared);
  }
}

function checkImports(file, pkg, allowed, declared) {
  const text = readFileSync(file, 'utf8');
  const where = relative(root, file);
  for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)['"]@aenv\/([a-z-]+)/g)) {
    const target = m[1];
    if (target === pkg) problems.push(`${where}: imports its own package by name`);
    else if (!allowed.includes(target))
      problems.push(`${where}: ${pkg} may not import @aenv/${target}`);
    else if (!declared[`@aenv/${target}`])
      problems.push(`${where}: @aenv/${target} is not in package.json`);
  }
}

for (const key of listed.keys()) {
  if (!used.has(key))
    problems.push(
      `docs/dependencies.md lists ${key.replace(' ', ': ')}, which is not a runtime dependency`,
    );
}

if (problems.length > 0) {
  for (const p of problems) console.error(`check-deps: ${p}`);
  process.exit(1);
}
console.log(`check-deps: ${used.size} runtime dependencies allowed, package rules hold`);
