// deploy/kubernetes: the manifests parse, and carry what a cluster needs —
// privileged node daemons with /dev/kvm and their state on the host, probes
// on every long-running container, and environment wired to variables the
// node and control-plane configurations actually read (a typo would be
// silently ignored by the loader otherwise).
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-return --
   YAML documents are untyped JSON; the assertions below are the type checks. */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { controlPlaneConfigSchema } from '@aenv/control-plane';
import { nodeConfigSchema } from '@aenv/server';
import { describeConfig } from '@aenv/shared';
import { parseAllDocuments } from 'yaml';

type Obj = Record<string, any>;
const DIR = new URL('../../../../deploy/kubernetes/', import.meta.url);

function documents(): Obj[] {
  return readdirSync(DIR)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) =>
      parseAllDocuments(readFileSync(new URL(f, DIR), 'utf8')).map((d) => {
        assert.deepEqual(d.errors, [], `${f} parses`);
        return d.toJS() as Obj;
      }),
    );
}

const docs = documents();
const byKind = (kind: string, name: string): Obj => {
  const d = docs.find((x) => x.kind === kind && x.metadata?.name === name);
  assert.ok(d !== undefined, `${kind}/${name} exists`);
  return d;
};
const envNames = (schema: Parameters<typeof describeConfig>[0]) =>
  new Set(describeConfig(schema).flatMap((f) => (f.env === undefined ? [] : [f.env])));
const NODE_ENV = envNames(nodeConfigSchema);
const CONTROL_ENV = envNames(controlPlaneConfigSchema);

function container(workload: Obj): Obj {
  return workload.spec.template.spec.containers[0];
}

function assertEnvKnown(c: Obj, known: Set<string>, what: string): void {
  for (const e of c.env ?? []) {
    if (!String(e.name).startsWith('AENV_')) continue;
    assert.ok(known.has(e.name), `${what}: ${e.name} is a variable its configuration reads`);
  }
}

describe('deploy/kubernetes', () => {
  it('lists every manifest in the kustomization', () => {
    const k = docs.find((d) => d.kind === 'Kustomization');
    const files = readdirSync(DIR).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
    assert.deepEqual([...(k?.resources ?? [])].sort(), files.sort());
  });

  it('runs privileged node daemons with /dev/kvm, host state, probes and cluster wiring', () => {
    const ds = byKind('DaemonSet', 'aenv-node');
    const pod = ds.spec.template.spec;
    const c = container(ds);
    assert.equal(c.securityContext.privileged, true);
    assert.equal(pod.hostNetwork, true, 'slots are namespaces and veths of the host');
    const volumes = new Map<string, Obj>(pod.volumes.map((v: Obj) => [v.name, v]));
    const mountOf = (path: string) => c.volumeMounts.find((m: Obj) => m.mountPath === path);
    assert.equal(volumes.get(mountOf('/dev/kvm').name)?.hostPath.path, '/dev/kvm');
    assert.equal(volumes.get(mountOf('/var/lib/aenv').name)?.hostPath.path, '/var/lib/aenv');
    for (const p of ['readinessProbe', 'livenessProbe', 'startupProbe']) {
      assert.equal(c[p].httpGet.path, '/health', p);
    }
    const env = new Map<string, Obj>(c.env.map((e: Obj) => [e.name, e]));
    assert.equal(env.get('AENV_HOME')?.value, '/var/lib/aenv');
    assert.equal(env.get('AENV_CLUSTER_NODE_ID')?.valueFrom.fieldRef.fieldPath, 'spec.nodeName');
    assert.match(env.get('AENV_CLUSTER_ADVERTISE_URL')?.value, /\$\(POD_IP\):8000$/);
    assert.equal(env.get('AENV_CLUSTER_API_KEY')?.valueFrom.secretKeyRef.name, 'aenv-keys');
    assert.equal(env.get('AENV_LAYER_GC')?.value, 'false', 'nodes share the blob store');
    assert.ok(c.envFrom.some((e: Obj) => e.configMapRef?.name === 'aenv-cluster'));
    assertEnvKnown(c, NODE_ENV, 'node');
  });

  it('configures an external S3 store and a Redis the services reach', () => {
    const cm = byKind('ConfigMap', 'aenv-cluster').data as Record<string, string>;
    assert.equal(cm.AENV_STORAGE_BLOB_STORE, 's3');
    assert.ok(cm.AENV_STORAGE_S3_BUCKET && cm.AENV_STORAGE_S3_ENDPOINT);
    for (const k of Object.keys(cm)) {
      assert.ok(
        NODE_ENV.has(k) || CONTROL_ENV.has(k),
        `${k} is read by a node or the control plane`,
      );
    }
    const redis = byKind('Service', 'aenv-redis');
    assert.equal(
      new URL(cm.AENV_CLUSTER_REDIS_URL as string).hostname,
      `${redis.metadata.name}.aenv.svc`,
    );
    assert.equal(
      new URL(cm.AENV_CLUSTER_REDIS_URL as string).port,
      String(redis.spec.ports[0].port),
    );
    const sts = byKind('StatefulSet', 'aenv-redis');
    assert.ok(container(sts).args.includes('--appendonly'), 'bindings survive a Redis restart');
  });

  it('runs gateways and the scheduler as Deployments with probes and keys', () => {
    const gw = byKind('Deployment', 'aenv-gateway');
    assert.ok(gw.spec.replicas >= 2, 'several gateway replicas');
    const svc = byKind('Service', 'aenv-gateway');
    assert.equal(svc.spec.ports[0].targetPort, container(gw).ports[0].name);
    const sched = byKind('Deployment', 'aenv-scheduler');
    for (const [d, what] of [
      [gw, 'gateway'],
      [sched, 'scheduler'],
    ] as const) {
      const c = container(d);
      assert.equal(c.readinessProbe.httpGet.path, '/health', what);
      assert.equal(c.livenessProbe.httpGet.path, '/health', what);
      const key = c.env.find((e: Obj) => e.name === 'AENV_CLUSTER_API_KEY');
      assert.equal(key?.valueFrom.secretKeyRef.key, 'node-api-key', what);
      assertEnvKnown(c, CONTROL_ENV, what);
    }
    assert.deepEqual(container(gw).command, ['aenv', 'gateway']);
    assert.deepEqual(container(sched).command, ['aenv', 'scheduler']);
  });
});
