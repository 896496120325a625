// The firecracker STAND-IN checked on its own, so that the driver's
// contract test means something: it must refuse what Firecracker refuses.
// Requests that break the published spec (unknown fields, wrong types,
// missing required fields, enum and range violations, unknown paths), and
// requests in the wrong phase (runtime requests before boot, pre-boot ones
// after, a snapshot load after boot resources, a snapshot of a running VM,
// a Diff without dirty-page tracking). Also: the driver's API client names
// exactly the spec's operations, and the state table covers all of them.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FIRECRACKER_OPERATIONS, FirecrackerApiClient } from '../../src/firecracker/api-client.js';
import { OPERATION_PHASE } from './stand-in/fc-rules.js';
import { SpecValidator } from './stand-in/spec-validator.js';
import { installStandIns, type StandIns } from './fixtures/stand-ins.js';

const rejects = (re: RegExp) => (e: Error & { code?: string }) =>
  e.code === 'VMM_API_ERROR' && re.test(e.message);

/** A raw request, for what the client would never send. */
function raw(
  socketPath: string,
  method: string,
  path: string,
  body?: string,
): Promise<[number, string]> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method, path, agent: false }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve([res.statusCode ?? 0, text]));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe(
  'the firecracker stand-in enforces the spec and the state rules',
  { timeout: 60_000 },
  () => {
    let work = '';
    let fc: StandIns;
    const procs: ChildProcess[] = [];

    async function vmm(
      name: string,
    ): Promise<{ api: FirecrackerApiClient; proc: ChildProcess; exited: Promise<number | null> }> {
      const sock = join(work, `${name}.sock`);
      const proc = spawn(fc.firecracker, ['--api-sock', sock, '--id', name], { stdio: 'ignore' });
      procs.push(proc);
      const exited = new Promise<number | null>((r) => proc.once('exit', (c) => r(c)));
      return { api: await FirecrackerApiClient.connect(sock, { timeoutMs: 10_000 }), proc, exited };
    }

    before(async () => {
      work = await mkdtemp(join(tmpdir(), 'aenv-fcr-'));
      fc = await installStandIns(work);
      await writeFile(join(work, 'vmlinux'), 'kernel');
    });

    after(async () => {
      for (const p of procs) p.kill('SIGKILL');
      await rm(work, { recursive: true, force: true });
    });

    it('the client names exactly the operations of the spec, the rules cover them all', () => {
      const spec = new SpecValidator();
      const fromSpec = spec
        .operations()
        .map(([id, m, p]) => `${id} ${m} ${p}`)
        .sort();
      const fromClient = Object.entries(FIRECRACKER_OPERATIONS)
        .map(([id, [m, p]]) => `${id} ${m} ${p}`)
        .sort();
      assert.deepEqual(fromClient, fromSpec);
      for (const [id] of spec.operations()) {
        assert.equal(
          typeof (FirecrackerApiClient.prototype as unknown as Record<string, unknown>)[id],
          'function',
          id,
        );
        if (id !== 'createSyncAction') assert.ok(id in OPERATION_PHASE, `phase of ${id}`);
      }
      assert.equal(spec.version, '1.16.1');
    });

    it('validates bodies against the schema, $refs included', () => {
      const spec = new SpecValidator();
      const drive = spec.match('PUT', '/drives/rootfs');
      assert.equal(drive?.operationId, 'putGuestDriveByID');
      assert.deepEqual(drive?.pathParams, { drive_id: 'rootfs' });
      const schema = drive?.bodySchema ?? {};
      assert.deepEqual(
        spec.validate(schema, {
          drive_id: 'r',
          is_root_device: false,
          path_on_host: '/x',
          is_read_only: true,
        }),
        [],
      );
      assert.deepEqual(
        spec.validate(schema, {
          drive_id: 'r',
          is_root_device: false,
          rate_limiter: { bandwidth: { refill_time: 1 } },
        }),
        ['body.rate_limiter.bandwidth: missing required field size'],
      );
      assert.deepEqual(spec.validate(schema, { drive_id: 'r', is_root_device: 'no' }), [
        'body.is_root_device: expected boolean, got string',
      ]);
      assert.match(
        spec.validate(schema, { drive_id: 'r', is_root_device: false, cache_type: 'Fast' })[0] ??
          '',
        /not one of "Unsafe", "Writeback"/,
      );
      assert.deepEqual(
        spec.validate(schema, { drive_id: 'r', is_root_device: false, readonly: true }),
        ['body: unknown field readonly'],
      );
      const mmds = spec.match('PUT', '/mmds')?.bodySchema ?? {};
      assert.deepEqual(spec.validate(mmds, { anything: { goes: [1] } }), []);
      const machine = spec.match('PUT', '/machine-config')?.bodySchema ?? {};
      assert.deepEqual(spec.validate(machine, { vcpu_count: 33, mem_size_mib: 1.5 }), [
        'body.vcpu_count: 33 is above 32',
        'body.mem_size_mib: 1.5 is not an integer',
      ]);
      assert.equal(spec.match('DELETE', '/drives/x'), undefined);
    });

    it('answers spec violations with 400 and a fault message, as Firecracker does', async () => {
      const { api } = await vmm('spec');
      await assert.rejects(
        api.putMachineConfiguration({ vcpu_count: 2, mem_size_mib: 128, turbo: true } as never),
        rejects(/400 .*unknown field turbo/),
      );
      await assert.rejects(
        api.putMachineConfiguration({ vcpu_count: '2', mem_size_mib: 128 } as never),
        rejects(/vcpu_count: expected integer, got string/),
      );
      await assert.rejects(
        api.putGuestDriveByID({ drive_id: 'r' } as never),
        rejects(/missing required field is_root_device/),
      );
      await assert.rejects(
        api.patchVm('Frozen' as never),
        rejects(/not one of "Paused", "Resumed"/),
      );
      const [status, text] = await raw(api.socketPath, 'GET', '/no/such/path');
      assert.equal(status, 400);
      assert.match(
        text,
        /"fault_message":"Invalid request method and\/or path: GET \/no\/such\/path\."/,
      );
      assert.equal((await raw(api.socketPath, 'PUT', '/machine-config', '{bad json'))[0], 400);
      await assert.rejects(
        api
          .putGuestDriveByID({
            drive_id: 'other',
            is_root_device: false,
            path_on_host: join(work, 'vmlinux'),
            is_read_only: true,
          })
          .then(() =>
            api.call('putGuestDriveByID', {
              path: { drive_id: 'x' },
              body: {
                drive_id: 'y',
                is_root_device: false,
                path_on_host: '/x',
                is_read_only: true,
              },
            }),
          ),
        rejects(/does not match the id from the body/),
      );
    });

    it('refuses requests in the wrong phase and a load after boot resources', async () => {
      const { api } = await vmm('phase');
      await assert.rejects(
        api.patchVm('Paused'),
        rejects(/not supported before starting the microVM/),
      );
      await assert.rejects(api.createSyncAction('FlushMetrics'), rejects(/before starting/));
      await assert.rejects(
        api.createSnapshot({ snapshot_path: '/s', mem_file_path: '/m' }),
        rejects(/before starting/),
      );
      await assert.rejects(
        api.createSyncAction('InstanceStart'),
        rejects(/without kernel configuration/),
      );
      await api.putMachineConfiguration({ vcpu_count: 1, mem_size_mib: 64 });
      await assert.rejects(
        api.loadSnapshot({
          snapshot_path: '/s',
          mem_backend: { backend_type: 'File', backend_path: '/m' },
        }),
        rejects(/not allowed after configuring boot-specific resources/),
      );
      await assert.rejects(
        api.putGuestBootSource({ kernel_image_path: join(work, 'missing') }),
        rejects(/kernel file cannot be opened/),
      );
      await api.putGuestBootSource({ kernel_image_path: join(work, 'vmlinux') });
      await api.createSyncAction('InstanceStart');
      assert.equal((await api.describeInstance()).state, 'Running');
      await assert.rejects(
        api.putGuestBootSource({ kernel_image_path: join(work, 'vmlinux') }),
        rejects(/not supported after starting the microVM/),
      );
      await assert.rejects(api.createSyncAction('InstanceStart'), rejects(/after starting/));
      await assert.rejects(
        api.createSnapshot({ snapshot_path: join(work, 's'), mem_file_path: join(work, 'm') }),
        rejects(/must be paused/),
      );
      await api.patchVm('Paused');
      await assert.rejects(
        api.createSnapshot({
          snapshot_path: join(work, 's'),
          mem_file_path: join(work, 'm'),
          snapshot_type: 'Diff',
        }),
        rejects(/dirty page tracking disabled/),
      );
      await api.createSnapshot({ snapshot_path: join(work, 's'), mem_file_path: join(work, 'm') });
      await assert.rejects(
        api.loadSnapshot({
          snapshot_path: join(work, 's'),
          mem_backend: { backend_type: 'File', backend_path: join(work, 'm') },
        }),
        rejects(/after starting/),
      );
      await assert.rejects(api.describeBalloonStats(), rejects(/Balloon device not configured/));
    });

    it('ends the process when a snapshot load fails, as Firecracker does', async () => {
      const { api, exited } = await vmm('load');
      await assert.rejects(
        api.loadSnapshot({ snapshot_path: join(work, 'nothing'), mem_file_path: join(work, 'm') }),
        rejects(/Failed to restore from snapshot/),
      );
      assert.equal(await exited, 1);
    });
  },
);
