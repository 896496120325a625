import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { baseTemplateKey, type BaseTemplateInputs } from './base-template.js';

const inputs: BaseTemplateInputs = {
  image: { virtualSize: 2 ** 31, layers: [`sha256:${'1'.repeat(64)}`] },
  vcpus: 2,
  memoryMiB: 512,
  diskSizeMiB: 2048,
  envdVersion: '0.5.7',
  identity: { kernel: 'sha256:k', tools: 'sha256:t', driver: 'qemu', mode: 'tcg' },
};

describe('baseTemplateKey', () => {
  it('depends on the disk, not on how the image spec was obtained', () => {
    const looked = { ...inputs, image: { ...inputs.image, blockSize: 4096 } };
    assert.equal(baseTemplateKey(looked), baseTemplateKey(inputs), 'a restart must not rebuild');
  });

  it('changes with every input that makes a snapshot incompatible', () => {
    const key = baseTemplateKey(inputs);
    const variants: BaseTemplateInputs[] = [
      { ...inputs, image: { ...inputs.image, layers: [`sha256:${'2'.repeat(64)}`] } },
      { ...inputs, memoryMiB: 1024 },
      { ...inputs, vcpus: 1 },
      { ...inputs, envdVersion: '0.5.8' },
      { ...inputs, identity: { ...inputs.identity, tools: 'sha256:other' } },
      { ...inputs, identity: { ...inputs.identity, mode: 'kvm' } },
    ];
    for (const v of variants) assert.notEqual(baseTemplateKey(v), key);
  });
});
