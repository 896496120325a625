import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseLdd } from './node-runtime.js';

describe('parseLdd', () => {
  it('collects resolved libraries and the loader, ignoring the vDSO', () => {
    const out = `\tlinux-vdso.so.1 (0x00007ffd)
\tlibdl.so.2 => /lib/x86_64-linux-gnu/libdl.so.2 (0x00007f3c)
\tlibstdc++.so.6 => /lib/x86_64-linux-gnu/libstdc++.so.6 (0x00007f3c)
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f3c)
\t/lib64/ld-linux-x86-64.so.2 (0x00007f3c)
`;
    assert.deepEqual(parseLdd(out), {
      libs: [
        { name: 'libdl.so.2', path: '/lib/x86_64-linux-gnu/libdl.so.2' },
        { name: 'libstdc++.so.6', path: '/lib/x86_64-linux-gnu/libstdc++.so.6' },
        { name: 'libc.so.6', path: '/lib/x86_64-linux-gnu/libc.so.6' },
      ],
      loader: '/lib64/ld-linux-x86-64.so.2',
    });
  });

  it('fails on a missing library or a static binary', () => {
    assert.throws(
      () => parseLdd('\tlibfoo.so.1 => not found\n\t/lib64/ld-linux-x86-64.so.2 (0x1)\n'),
      /not found/,
    );
    assert.throws(() => parseLdd('\tstatically linked\n'), /no dynamic loader/);
  });
});
