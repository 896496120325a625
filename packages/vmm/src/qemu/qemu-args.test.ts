import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildQemuArgs, qemuCommand, qemuOptValue, type QemuLaunch } from './qemu-args.js';

const launch: QemuLaunch = {
  id: 'sbx1',
  machine: {
    mode: 'tcg',
    vcpus: 2,
    memoryMiB: 512,
    cpuModel: 'default',
    kernel: '/k/vmlinux',
    initrd: '/k/initrd.cpio',
    kernelDigest: `sha256:${'a'.repeat(64)}`,
    initrdDigest: null,
    cmdline: 'console=ttyS0 quiet',
    drives: [
      {
        id: 'rootfs',
        source: { kind: 'nbd', socket: '/run/nbd.sock', export: 'sbx1' },
        readOnly: false,
      },
      {
        id: 'tools',
        source: { kind: 'file', path: '/a,b/tools.erofs', format: 'raw' },
        readOnly: true,
      },
    ],
    network: { tap: 'tap0', mac: '02:00:00:00:00:02' },
    balloon: true,
  },
  memory: { path: '/run/sbx1/memory' },
  qmpSocket: '/run/sbx1/qmp.sock',
  serialSocket: '/run/sbx1/serial.sock',
  pidFile: '/run/sbx1/qemu.pid',
  start: 'paused',
  sandbox: true,
};

function after(args: string[], flag: string): string[] {
  return args.flatMap((a, i) => (a === flag ? [args[i + 1] as string] : []));
}

describe('buildQemuArgs', () => {
  it('builds a microvm with file-backed RAM, no defaults and no reboot', () => {
    const args = buildQemuArgs(launch);
    assert.deepEqual(after(args, '-M'), ['microvm,acpi=on,memory-backend=mem']);
    assert.deepEqual(after(args, '-object'), [
      'memory-backend-file,id=mem,size=512M,mem-path=/run/sbx1/memory,share=on',
    ]);
    assert.deepEqual(after(args, '-accel'), ['tcg']);
    assert.deepEqual(after(args, '-m'), ['512M']);
    assert.deepEqual(after(args, '-smp'), ['2']);
    assert.ok(['-nodefaults', '-no-reboot', '-S'].every((f) => args.includes(f)));
    assert.ok(!args.includes('-cpu'));
    assert.deepEqual(after(args, '-append'), ['console=ttyS0 quiet']);
  });

  it('attaches drives in order with their ids as serials, escaping commas', () => {
    const args = buildQemuArgs(launch);
    assert.deepEqual(after(args, '-drive'), [
      'driver=nbd,server.type=unix,server.path=/run/nbd.sock,export=sbx1,if=none,id=drive-rootfs,discard=unmap,werror=report',
      'file=/a,,b/tools.erofs,format=raw,if=none,id=drive-tools,readonly=on',
    ]);
    const devices = after(args, '-device');
    assert.deepEqual(devices, [
      'virtio-blk-device,drive=drive-rootfs,serial=rootfs',
      'virtio-blk-device,drive=drive-tools,serial=tools',
      'virtio-net-device,netdev=net0,mac=02:00:00:00:00:02',
      'virtio-rng-device',
      'virtio-balloon-device,free-page-reporting=on',
    ]);
    assert.deepEqual(after(args, '-netdev'), ['tap,id=net0,ifname=tap0,script=no,downscript=no']);
  });

  it('differs between boot and restore only in what a restore must change', () => {
    const restore = buildQemuArgs({
      ...launch,
      memory: { path: '/run/c1/memory.base' },
      start: 'incoming',
      qmpSocket: '/run/c1/qmp.sock',
      serialSocket: '/run/c1/serial.sock',
      pidFile: '/run/c1/qemu.pid',
    });
    assert.deepEqual(after(restore, '-incoming'), ['defer']);
    assert.ok(!restore.includes('-S'));
    assert.deepEqual(after(restore, '-object'), [
      'memory-backend-file,id=mem,size=512M,mem-path=/run/c1/memory.base,share=on',
    ]);
    assert.deepEqual(after(restore, '-device'), after(buildQemuArgs(launch), '-device'));
  });

  it('uses the host CPU model under KVM and no network device without a network', () => {
    const args = buildQemuArgs({
      ...launch,
      machine: { ...launch.machine, mode: 'kvm', cpuModel: 'host', network: null },
    });
    assert.deepEqual(after(args, '-cpu'), ['host']);
    assert.deepEqual(after(args, '-netdev'), []);
  });

  it('attaches an already-open tap by descriptor for a jailed QEMU', () => {
    const args = buildQemuArgs({ ...launch, tapFd: 3 });
    assert.ok(args.includes('tap,id=net0,fd=3'));
    assert.ok(!args.some((a) => a.includes('ifname=')));
  });

  it('bounds the TCG code cache only when asked, and only under TCG', () => {
    assert.deepEqual(after(buildQemuArgs({ ...launch, tcgCacheMiB: 128 }), '-accel'), [
      'tcg,tb-size=128',
    ]);
    assert.deepEqual(after(buildQemuArgs(launch), '-accel'), ['tcg']);
    const kvm = { ...launch, machine: { ...launch.machine, mode: 'kvm' as const } };
    assert.deepEqual(after(buildQemuArgs({ ...kvm, tcgCacheMiB: 128 }), '-accel'), ['kvm']);
  });

  it('runs under the seccomp filter unless told not to, and has a balloon only when asked', () => {
    assert.deepEqual(after(buildQemuArgs(launch), '-sandbox'), [
      'on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny',
    ]);
    const plain = buildQemuArgs({
      ...launch,
      sandbox: false,
      machine: { ...launch.machine, balloon: false },
    });
    assert.deepEqual(after(plain, '-sandbox'), []);
    assert.ok(!after(plain, '-device').some((d) => d.startsWith('virtio-balloon')));
  });
});

describe('qemuCommand', () => {
  it('wraps QEMU in nsenter and setpriv, each exec-ing the next', () => {
    assert.deepEqual(qemuCommand('qemu', ['-x']), ['qemu', ['-x']]);
    assert.deepEqual(qemuCommand('qemu', ['-x'], { netns: 'ns1' }), [
      'nsenter',
      ['--net=/run/netns/ns1', '--', 'qemu', '-x'],
    ]);
    assert.deepEqual(qemuCommand('qemu', [], { netns: '/proc/1/ns/net', killWithParent: true }), [
      'setpriv',
      ['--pdeathsig', 'SIGKILL', '--', 'nsenter', '--net=/proc/1/ns/net', '--', 'qemu'],
    ]);
    assert.equal(qemuOptValue('a,b,,c'), 'a,,b,,,,c');
  });

  it('drops to the QEMU user after entering the namespace, then sets the parent-death signal', () => {
    const [program, args] = qemuCommand('qemu', ['-x'], {
      netns: 'ns1',
      killWithParent: true,
      user: { uid: 900, gid: 901 },
    });
    assert.equal(program, 'nsenter');
    assert.deepEqual(args, [
      '--net=/run/netns/ns1',
      '--',
      'setpriv',
      '--reuid=900',
      '--regid=901',
      '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all',
      '--no-new-privs',
      '--pdeathsig',
      'SIGKILL',
      '--',
      'qemu',
      '-x',
    ]);
    assert.equal(qemuCommand('qemu', [], { user: { uid: 1, gid: 1 } })[0], 'setpriv');
  });
});
