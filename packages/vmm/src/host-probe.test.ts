import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decideKvm, findExecutable, parseCpuKhz, probeKvm } from './host-probe.js';

describe('decideKvm', () => {
  it('needs a hardware KVM module and a usable /dev/kvm', () => {
    assert.deepEqual(decideKvm({ device: true, modules: ['kvm', 'kvm_intel'] }), {
      usable: true,
      reason: 'hardware KVM (kvm_intel)',
    });
    assert.equal(decideKvm({ device: true, modules: ['kvm', 'kvm_amd'] }).usable, true);
  });

  it('recognises a PVM-only /dev/kvm as unusable', () => {
    const v = decideKvm({ device: true, modules: ['kvm', 'kvm_pvm'] });
    assert.equal(v.usable, false);
    assert.match(v.reason, /PVM-only/);
  });

  it('counts a PVM-only /dev/kvm as usable when the guest kernel is a PVM one', () => {
    const facts = { device: true as const, modules: ['kvm', 'kvm_pvm'] };
    assert.deepEqual(decideKvm(facts, { pvmGuestKernel: true }), {
      usable: true,
      reason: 'PVM KVM (kvm_pvm) with a configured PVM guest kernel',
    });
    assert.equal(
      decideKvm({ device: 'EACCES', modules: ['kvm_pvm'] }, { pvmGuestKernel: true }).usable,
      false,
    );
  });

  it('reports why /dev/kvm cannot be opened', () => {
    assert.deepEqual(decideKvm({ device: 'ENOENT', modules: ['kvm_intel'] }), {
      usable: false,
      reason: '/dev/kvm: ENOENT',
    });
    assert.match(decideKvm({ device: true, modules: ['kvm'] }).reason, /no hardware KVM module/);
  });
});

describe('probeKvm and findExecutable on a made-up filesystem', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aenv-probe-'));
    await mkdir(join(dir, 'sys/module/kvm_pvm'), { recursive: true });
    await mkdir(join(dir, 'sys/module/kvm'));
    await writeFile(join(dir, 'kvm'), '');
    await mkdir(join(dir, 'bin'));
    await writeFile(join(dir, 'bin/tool'), '#!/bin/sh\n');
    await chmod(join(dir, 'bin/tool'), 0o755);
    await writeFile(join(dir, 'bin/notexec'), '');
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('reads the device and the module list', async () => {
    const v = await probeKvm({ device: join(dir, 'kvm'), sysModule: join(dir, 'sys/module') });
    assert.equal(v.usable, false);
    assert.match(v.reason, /kvm_pvm/);
    const missing = await probeKvm({
      device: join(dir, 'nope'),
      sysModule: join(dir, 'sys/module'),
    });
    assert.equal(missing.reason, '/dev/kvm: ENOENT');
  });

  it('finds executables on PATH only when executable', async () => {
    assert.equal(await findExecutable('tool', join(dir, 'bin')), join(dir, 'bin/tool'));
    assert.equal(await findExecutable('notexec', join(dir, 'bin')), undefined);
    assert.equal(await findExecutable(join(dir, 'bin/tool'), ''), join(dir, 'bin/tool'));
  });
});

describe('parseCpuKhz', () => {
  it('takes the first cpu MHz line', () => {
    assert.equal(parseCpuKhz('processor : 0\ncpu MHz\t\t: 2596.128\ncpu MHz : 1.0\n'), 2596128);
    assert.equal(parseCpuKhz('processor : 0\n'), undefined);
  });
});
