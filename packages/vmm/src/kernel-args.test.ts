import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BASE_KERNEL_ARGS, buildKernelCmdline, guestKernelArgs, tscArgs } from './kernel-args.js';

describe('buildKernelCmdline', () => {
  it('adds the TSC frequency under TCG only', () => {
    const tcg = buildKernelCmdline({ mode: 'tcg', cpuKhz: 2596128 });
    assert.equal(
      tcg,
      [...BASE_KERNEL_ARGS, 'tsc_early_khz=2596128', 'tsc=reliable', 'no_timer_check'].join(' '),
    );
    assert.equal(buildKernelCmdline({ mode: 'kvm', cpuKhz: 2596128 }), BASE_KERNEL_ARGS.join(' '));
    assert.equal(buildKernelCmdline({ mode: 'tcg' }), BASE_KERNEL_ARGS.join(' '));
  });

  it('renders guest parameters then extras, in order', () => {
    const line = buildKernelCmdline({
      mode: 'kvm',
      guest: {
        hostname: 'sbx-1',
        address: '169.254.0.21/30',
        gateway: '169.254.0.22',
        dns: ['1.1.1.1', '8.8.8.8'],
      },
      extra: ['loglevel=3'],
    });
    assert.ok(
      line.endsWith(
        'aenv.hostname=sbx-1 aenv.ip=169.254.0.21/30 aenv.gw=169.254.0.22 aenv.dns=1.1.1.1,8.8.8.8 loglevel=3',
      ),
      line,
    );
  });

  it('rejects malformed values with INVALID_ARGUMENT naming the field', () => {
    const bad: [object, RegExp][] = [
      [{ hostname: 'bad_name' }, /guest\.hostname/],
      [{ hostname: '-x' }, /guest\.hostname/],
      [{ address: '10.0.0.2' }, /guest\.address/],
      [{ address: '10.0.0.2/33' }, /guest\.address/],
      [{ address: '10.0.0.300/24' }, /guest\.address/],
      [{ gateway: 'gw' }, /guest\.gateway/],
      [{ dns: ['1.1.1.1', 'x y'] }, /guest\.dns/],
    ];
    for (const [guest, re] of bad) {
      assert.throws(
        () => guestKernelArgs(guest),
        (e: Error & { code?: string }) => e.code === 'INVALID_ARGUMENT' && re.test(e.message),
      );
    }
    assert.throws(() => buildKernelCmdline({ mode: 'kvm', extra: ['a b'] }), /without whitespace/);
    assert.throws(() => buildKernelCmdline({ mode: 'kvm', extra: [''] }), /non-empty/);
    assert.throws(
      () => buildKernelCmdline({ mode: 'kvm', extra: ['x'.repeat(2100)] }),
      /the kernel accepts 2047/,
    );
    assert.throws(() => tscArgs(0), /positive integer/);
  });
});
