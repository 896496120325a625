import { runBlockDeviceSuite } from './block-device-suite.js';
import { MemoryDevice } from './memory-device.js';

runBlockDeviceSuite({
  name: 'MemoryDevice',
  create: (size) => Promise.resolve(new MemoryDevice(size)),
});
