// Protobuf request bodies (application/vnd.kubernetes.protobuf) become the JSON Go gives the same
// object: checked against bodies kubectl sent to the sim, against Kubernetes' own Go serializer
// (protobuf-oracle.json, written by test/sim/protobuf-oracle), and through the sim's API server.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { decodeProtobufBody, PROTOBUF_MEDIA_TYPE } from '../../cluster/sim/protobuf-body.ts';
import { generate, JSON_ONLY_GROUPS, K8S_MODULE_VERSION, TYPES_FILE } from '../../cluster/sim/protobuf-generate.ts';
import { RESOURCES } from '../../cluster/sim/resources.ts';
import { ApiError } from '../../cluster/sim/status.ts';
import { simCA, simToken } from '../support/sim.ts';

const ORACLE: { name: string; protobuf: string; json: Record<string, unknown> }[] = JSON.parse(
  readFileSync(new URL('./protobuf-oracle.json', import.meta.url), 'utf8'),
);
const oracle = (name: string) => ORACLE.find((s) => s.name === name)!;

// Captured from kubectl v1.32.4 against the sim (a proxy saved each request body).
const KUBECTL = {
  // kubectl create deployment web --image=termlab/lab-server:0.1.0 --replicas=3
  deployment:
    'azhzAAoVCgdhcHBzL3YxEgpEZXBsb3ltZW50EsQBCh8KA3dlYhIAGgAiACoAMgA4AEIAWgoKA2FwcBIDd2ViEpIBCAMSDAoKCgNhcHASA3dlYhp4ChwKABIAGgAiACoAMgA4AEIAWgoKA2FwcBIDd2ViElgSOgoKbGFiLXNlcnZlchIYdGVybWxhYi9sYWItc2VydmVyOjAuMS4wKgBCAGoAcgCAAQCIAQCQAQCiAQAaADIAQgBKAFIAWABgAGgAggEAigEAmgEAwgEAIgIKACgAOAAaDAgAEAAYACAAKAA4ABoAIgA=',
  // kubectl create deployment web2 --image=termlab/lab-server:0.1.0 --port 8080 --replicas=0
  deploymentNoReplicas:
    'azhzAAoVCgdhcHBzL3YxEgpEZXBsb3ltZW50EtYBCiEKBHdlYjISABoAIgAqADIAOABCAFoLCgNhcHASBHdlYjISogEIABINCgsKA2FwcBIEd2ViMhqGAQodCgASABoAIgAqADIAOABCAFoLCgNhcHASBHdlYjISZRJHCgpsYWItc2VydmVyEhh0ZXJtbGFiL2xhYi1zZXJ2ZXI6MC4xLjAqADILCgAQABiQPyIAKgBCAGoAcgCAAQCIAQCQAQCiAQAaADIAQgBKAFIAWABgAGgAggEAigEAmgEAwgEAIgIKACgAOAAaDAgAEAAYACAAKAA4ABoAIgA=',
  // kubectl create service clusterip svc2 --tcp=80:8080
  service:
    'azhzAAoNCgJ2MRIHU2VydmljZRJsCiEKBHN2YzISABoAIgAqADIAOABCAFoLCgNhcHASBHN2YzISQwobCgc4MC04MDgwEgNUQ1AYUCIHCAAQkD8aACgAEgsKA2FwcBIEc3ZjMhoAIglDbHVzdGVySVA6AEIAUgBaAGAAaAAaAgoAGgAiAA==',
  // kubectl create namespace ns1
  namespace: 'azhzAAoPCgJ2MRIJTmFtZXNwYWNlEhsKEwoDbnMxEgAaACIAKgAyADgAQgASABoCCgAaACIA',
  // kubectl create configmap cm1 --from-literal=a=b (served since the witness keeps its records in ConfigMaps)
  configMap: 'azhzAAoPCgJ2MRIJQ29uZmlnTWFwEh0KEwoDY20xEgAaACIAKgAyADgAQgASBgoBYRIBYhoAIgA=',
};
const body = (base64: string) => Buffer.from(base64, 'base64');

/** The ApiError a body gets: its code and message. */
function refusal(bytes: Buffer): { code: number; message: string } {
  try {
    decodeProtobufBody(bytes);
  } catch (error) {
    if (error instanceof ApiError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected the body to be refused');
}

const types = JSON.parse(readFileSync(TYPES_FILE, 'utf8'));
const root = protobuf.Root.fromJSON(types.protobuf);
const Unknown = root.lookupType('k8s.io.apimachinery.pkg.runtime.Unknown');
const envelope = (fields: Record<string, unknown>) =>
  Buffer.concat([Buffer.from('k8s\0', 'latin1'), Buffer.from(Unknown.encode(Unknown.create(fields)).finish())]);
const rawOf = (bytes: Buffer) => (Unknown.decode(bytes.subarray(4)) as unknown as { raw: Uint8Array }).raw;

describe('protobuf request bodies: decoding', () => {
  it('gives a kubectl create deployment body the JSON kubectl would have sent', () => {
    expect(decodeProtobufBody(body(KUBECTL.deployment))).toEqual({
      kind: 'Deployment',
      apiVersion: 'apps/v1',
      metadata: { name: 'web', labels: { app: 'web' } },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'lab-server', image: 'termlab/lab-server:0.1.0', resources: {} }] },
        },
        strategy: {},
      },
      status: {},
    });
    // A pointer sent as zero stays (replicas: 0); the zero plain scalars Go always sends do not.
    const none = decodeProtobufBody(body(KUBECTL.deploymentNoReplicas)) as any;
    expect(none.spec.replicas).toBe(0);
    expect(none.spec.template.spec.containers[0]).toEqual({
      name: 'lab-server',
      image: 'termlab/lab-server:0.1.0',
      ports: [{ containerPort: 8080 }],
      resources: {},
    });
    expect(none.spec).not.toHaveProperty('minReadySeconds');
    expect(none.spec).not.toHaveProperty('paused');
  });

  it('decodes kubectl create service and namespace bodies', () => {
    expect(decodeProtobufBody(body(KUBECTL.service))).toEqual({
      kind: 'Service',
      apiVersion: 'v1',
      metadata: { name: 'svc2', labels: { app: 'svc2' } },
      spec: {
        ports: [{ name: '80-8080', protocol: 'TCP', port: 80, targetPort: 8080 }],
        selector: { app: 'svc2' },
        type: 'ClusterIP',
      },
      status: { loadBalancer: {} },
    });
    expect(decodeProtobufBody(body(KUBECTL.namespace))).toEqual({
      kind: 'Namespace',
      apiVersion: 'v1',
      metadata: { name: 'ns1' },
      spec: {},
      status: {},
    });
  });

  it.each(ORACLE.map((s) => [s.name, s] as const))(
    '%s: the same JSON, key for key and in order, as Go writes for the object',
    (_name, sample) => {
      const decoded = decodeProtobufBody(body(sample.protobuf));
      expect(decoded).toEqual(sample.json);
      expect(JSON.stringify(decoded)).toBe(JSON.stringify(sample.json));
    },
  );

  it('keeps what the oracle Deployment exercises: quantities, int-or-string, inline handlers, times, managed fields', () => {
    const d = decodeProtobufBody(body(oracle('Deployment').protobuf)) as any;
    const container = d.spec.template.spec.containers[0];
    expect(container.resources).toEqual({ limits: { cpu: '500m', memory: '64Mi' }, requests: { cpu: '100m' } });
    expect(container.readinessProbe).toEqual({ httpGet: { path: '/readyz', port: 'http' }, periodSeconds: 1 });
    expect(container.livenessProbe).toEqual({ tcpSocket: { port: 8080 }, terminationGracePeriodSeconds: 0 });
    expect(container.lifecycle).toEqual({ preStop: { sleep: { seconds: 5 } } });
    expect(d.spec.template.spec.terminationGracePeriodSeconds).toBe(0);
    expect(d.spec.template.spec.automountServiceAccountToken).toBe(false);
    expect(d.spec.template.spec.volumes).toEqual([{ name: 'scratch', emptyDir: { sizeLimit: '1Gi' } }]);
    expect(d.spec.strategy.rollingUpdate).toEqual({ maxSurge: '25%', maxUnavailable: 0 });
    expect(d.metadata.creationTimestamp).toBe('2026-12-01T17:20:50Z');
    expect(d.metadata.managedFields[0].fieldsV1).toEqual({ 'f:spec': { 'f:replicas': {} } });
    expect(d.spec.template.metadata).not.toHaveProperty('creationTimestamp');
    expect((decodeProtobufBody(body(oracle('Event').protobuf)) as any).eventTime).toBe('2026-12-01T17:20:50.123456Z');
  });

  it('refuses a body that is not one, naming the kind or the field, as the API server does', () => {
    expect(refusal(body(KUBECTL.deployment).subarray(4))).toEqual({
      code: 400,
      message: expect.stringMatching(
        /^the object provided is unrecognized: provided data does not appear to be a protobuf message, expected prefix \[107 56 115 0\] \(0a150a07617070732f7631/,
      ),
    });
    // A kind the sim does not serve (kubectl create secret), in kubectl's envelope.
    expect(
      refusal(envelope({ typeMeta: { apiVersion: 'v1', kind: 'Secret' }, raw: rawOf(body(KUBECTL.configMap)) })),
    ).toEqual({
      code: 400,
      message: expect.stringMatching(
        /^no kind "Secret" is registered for version "v1" in the simulated cluster's protobuf types \(it decodes v1 Pod, .*apps\/v1 Deployment/,
      ),
    });
    expect(decodeProtobufBody(body(KUBECTL.configMap))).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm1' },
      data: { a: 'b' },
    });
    const deployment = rawOf(body(KUBECTL.deployment));
    expect(
      refusal(envelope({ typeMeta: { apiVersion: 'apps/v1', kind: 'Deployment' }, raw: deployment.subarray(0, 50) })),
    ).toEqual({
      code: 400,
      message: expect.stringMatching(
        /^Deployment in version "apps\/v1" cannot be handled as a Deployment: proto: index out of range/,
      ),
    });
    // metadata.name (field 1 of ObjectMeta, a string) sent as a varint.
    expect(
      refusal(
        envelope({
          typeMeta: { apiVersion: 'apps/v1', kind: 'Deployment' },
          raw: Buffer.from([0x0a, 0x02, 0x08, 0x01]),
        }),
      ),
    ).toEqual({
      code: 400,
      message:
        'Deployment in version "apps/v1" cannot be handled as a Deployment: proto: Deployment.metadata.name: wrong wire type 0',
    });
    // A container's name (a string) sent as a varint, deep in the template.
    const id = (message: string, field: string) => root.lookupType(message).fields[field]!.id;
    const nest = (fieldId: number, inner: Uint8Array) =>
      protobuf.Writer.create()
        .uint32((fieldId << 3) | 2)
        .bytes(inner)
        .finish();
    const container = Buffer.from([(id('k8s.io.api.core.v1.Container', 'name') << 3) | 0, 0x01]);
    const raw = nest(
      id('k8s.io.api.apps.v1.Deployment', 'spec'),
      nest(
        id('k8s.io.api.apps.v1.DeploymentSpec', 'template'),
        nest(
          id('k8s.io.api.core.v1.PodTemplateSpec', 'spec'),
          nest(id('k8s.io.api.core.v1.PodSpec', 'containers'), container),
        ),
      ),
    );
    expect(refusal(envelope({ typeMeta: { apiVersion: 'apps/v1', kind: 'Deployment' }, raw }))).toEqual({
      code: 400,
      message:
        'Deployment in version "apps/v1" cannot be handled as a Deployment: proto: Deployment.spec.template.spec.containers[0].name: wrong wire type 0',
    });
    expect(refusal(envelope({ raw: deployment }))).toEqual({
      code: 400,
      message:
        'the object provided is unrecognized: the runtime.Unknown envelope names no apiVersion and kind (typeMeta)',
    });
    expect(refusal(Buffer.from('k8s\0\xff\xff\xff\xff\xff', 'latin1'))).toEqual({
      code: 400,
      message: expect.stringMatching(
        /^the object provided is unrecognized: the runtime.Unknown envelope does not decode: proto: /,
      ),
    });
  });

  it('covers every kind the sim serves, but custom resources (the Gateway API: JSON only, as on a real API server)', () => {
    for (const r of Object.values(RESOURCES).filter((r) => !JSON_ONLY_GROUPS.has(r.group)))
      expect(types.kinds).toHaveProperty([`${r.group ? `${r.group}/` : ''}${r.version} ${r.kind}`]);
  });

  const modcache = (() => {
    try {
      return process.env.GOMODCACHE || execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim();
    } catch {
      return '';
    }
  })();
  it.skipIf(!existsSync(join(modcache, 'k8s.io', `api@${K8S_MODULE_VERSION}`)))(
    'protobuf-types.json is what generate:protobuf writes from the Go module cache',
    () => {
      expect(generate(modcache)).toBe(readFileSync(TYPES_FILE, 'utf8'));
    },
  );
});

describe('protobuf request bodies: through the API server', () => {
  let sim: SimCluster;
  let trustSim: Agent;
  beforeAll(async () => {
    sim = await startSimCluster();
    trustSim = new Agent({ connect: { ca: simCA(sim) } });
  });
  afterAll(async () => {
    await Promise.all([sim?.stop(), trustSim?.close()]);
  });

  const post = async (path: string, bytes: Buffer, contentType = PROTOBUF_MEDIA_TYPE) => {
    const res = await fetch(`${sim.server}${path}`, {
      method: 'POST',
      body: bytes,
      dispatcher: trustSim,
      headers: {
        authorization: `Bearer ${simToken(sim)}`,
        'content-type': contentType,
        accept: `${PROTOBUF_MEDIA_TYPE}, application/json`,
      },
    });
    return { status: res.status, type: res.headers.get('content-type'), json: (await res.json()) as any };
  };

  it("creates a Deployment from Go's protobuf body, with the zeros that were sent kept", async () => {
    const created = await post('/apis/apps/v1/namespaces/default/deployments', body(oracle('Deployment').protobuf));
    expect(created.status).toBe(201);
    expect(created.type).toBe('application/json');
    expect(created.json.spec.replicas).toBe(0);
    expect(created.json.spec.template.spec.terminationGracePeriodSeconds).toBe(0);
    expect(created.json.spec.template.spec.containers[0].lifecycle).toEqual({ preStop: { sleep: { seconds: 5 } } });
    expect(created.json.spec.strategy.rollingUpdate).toEqual({ maxSurge: '25%', maxUnavailable: 0 });
    // The sim's own defaults still apply to what was left out.
    expect(created.json.spec.revisionHistoryLimit).toBe(10);
  });

  it('answers a bad body with a 400 Status and another encoding with a 415 one', async () => {
    const bad = await post('/apis/apps/v1/namespaces/default/deployments', body(KUBECTL.deployment).subarray(4));
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'BadRequest',
      code: 400,
      message: expect.stringContaining('does not appear to be a protobuf message'),
    });
    const cbor = await post('/apis/apps/v1/namespaces/default/deployments', Buffer.from([0xa0]), 'application/cbor');
    expect(cbor.status).toBe(415);
    expect(cbor.json).toMatchObject({
      kind: 'Status',
      reason: 'UnsupportedMediaType',
      code: 415,
      message: `the body of the request was in an unknown format - accepted media types include: application/json, ${PROTOBUF_MEDIA_TYPE}`,
    });
  });
});
