#!/usr/bin/env node
// Builds the envd bundle directory (ENVD_BUNDLE_DIR = packages/envd/bundle):
//   envd.mjs                 one ESM file: envd and its JS dependencies
//   envd.mjs.LEGAL.txt       licence comments of the bundled code
//   build/Release/pty.node   node-pty's native addon, where its loader looks
//                            (relative to envd.mjs)
//   envd-exec                the static run-as-user helper (native/envd-exec.c)
//   envd-entropy             the static RNG reseed helper (native/envd-entropy.c)
// The result runs with only the node binary, from any working directory.
// Run by `npm run bundle -w packages/envd` (the root `npm run build` does).
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(pkg, 'bundle');
const require = createRequire(join(pkg, 'package.json'));

rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'build', 'Release'), { recursive: true });

// Bundled CommonJS code (node-pty, busboy) calls require() and reads
// __dirname; ESM has neither, so the banner defines them for the bundle file.
const banner = [
  "import { createRequire as __envdCreateRequire } from 'node:module';",
  "import { fileURLToPath as __envdFileURLToPath } from 'node:url';",
  "import { dirname as __envdDirname } from 'node:path';",
  'const require = __envdCreateRequire(import.meta.url);',
  'const __filename = __envdFileURLToPath(import.meta.url);',
  'const __dirname = __envdDirname(__filename);',
].join('\n');

await build({
  entryPoints: [join(pkg, 'src', 'main.ts')],
  outfile: join(out, 'envd.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  minify: true,
  legalComments: 'external',
  banner: { js: banner },
  logLevel: 'warning',
});

copyFileSync(
  join(dirname(require.resolve('node-pty/package.json')), 'build', 'Release', 'pty.node'),
  join(out, 'build', 'Release', 'pty.node'),
);

const cc = process.env.CC ?? 'cc';
for (const helper of ['envd-exec', 'envd-entropy']) {
  execFileSync(
    cc,
    ['-O2', '-static', '-s', '-Wall', '-o', join(out, helper), join(pkg, 'native', `${helper}.c`)],
    { stdio: 'inherit' },
  );
}
console.log(`envd bundle: ${out}`);
