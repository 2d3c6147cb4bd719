// A pod stuck on pulling its image: the run says which image and which fix applies. Live on the
// simulated cluster (it answers an unknown image with ErrImagePull), once as itself and once behind a
// kubeconfig context named as kind names its own; then the message from pod objects alone.
import type * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { startSimCluster, type SimCluster } from '../../cluster/sim/index.ts';
import { connect } from '../../harness/kube/index.ts';
import { RunClock } from '../../harness/run/clock.ts';
import { imagePullAdvice, kindClusterName } from '../../harness/run/image-pull.ts';
import { runScenario, type ScenarioContext } from '../../harness/run/scenario.ts';
import { loadTemplate } from '../../harness/scenario/load.ts';
import type { Scenario } from '../../harness/scenario/schema.ts';

const MISSING = 'example.org/nowhere/lab-server:1';
const scenario: Scenario = {
  name: 'pull',
  mode: 'graceful',
  preStop: { kind: 'none' },
  terminationGracePeriodSeconds: 2,
  workMs: 500,
  deleteDelayMs: 200,
};

let sim: SimCluster;
let template: Record<string, any>;
beforeAll(async () => {
  sim = await startSimCluster();
  template = await loadTemplate();
});
afterAll(async () => {
  await sim.stop();
});

/** The sim's kubeconfig with its context renamed. */
function renamed(context: string): string {
  const config = parse(sim.kubeconfig);
  config.contexts[0].name = context;
  config['current-context'] = context;
  return stringify(config);
}

async function runWith(kubeconfigText: string, runId: string) {
  const cluster = await connect({ kubeconfigText });
  const context: ScenarioContext = {
    cluster,
    namespace: 'default',
    runId,
    owner: 'tester',
    harnessVersion: 'test',
    simulated: true,
    template,
    image: MISSING,
    transport: 'portforward',
    clock: new RunClock(),
    signal: new AbortController().signal,
    readyTimeoutMs: 20_000,
    onPhase: () => {},
  };
  return runScenario(context, scenario);
}

describe('a run whose pod cannot pull its image', () => {
  it('names the image and the registry fix on a cluster that is not kind', async () => {
    const o = await runWith(sim.kubeconfig, 'run-p-0001');
    expect(o.run.complete).toBe(false);
    expect(o.run.incompleteReason).toContain(`image ${MISSING} cannot be pulled (ErrImagePull)`);
    expect(o.run.incompleteReason).toContain('pass --image');
    expect(o.run.incompleteReason).not.toContain('kind load');
  });

  it('names the image and kind load on a kind context', async () => {
    const o = await runWith(renamed('kind-class'), 'run-p-0002');
    expect(o.run.complete).toBe(false);
    expect(o.run.incompleteReason).toContain(`image ${MISSING} cannot be pulled (ErrImagePull)`);
    expect(o.run.incompleteReason).toContain(`kind load docker-image ${MISSING} --name class`);
  });
});

function pod(reason: string, nodeName = 'node-1'): k8s.V1Pod {
  return {
    spec: { nodeName, containers: [{ name: 'lab', image: 'termlab/lab-server:0.1.0' }] },
    status: {
      containerStatuses: [
        {
          name: 'lab',
          image: 'termlab/lab-server:0.1.0',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { waiting: { reason } },
        },
      ],
    },
  };
}

describe('imagePullAdvice', () => {
  it('answers ImagePullBackOff as ErrImagePull, and nothing else', () => {
    expect(imagePullAdvice(pod('ImagePullBackOff'), 'prod')).toMatch(
      /^image termlab\/lab-server:0\.1\.0 cannot be pulled \(ImagePullBackOff\): this cluster's nodes pull from a registry: .*ghcr\.io\/<owner>\/termlab\/lab-server:<version>.*--image/,
    );
    expect(imagePullAdvice(pod('CrashLoopBackOff'), 'kind-termlab')).toBeNull();
    expect(imagePullAdvice(pod('ContainerCreating'), 'kind-termlab')).toBeNull();
  });

  it('knows kind by its context or its node names', () => {
    expect(imagePullAdvice(pod('ErrImagePull', 'class-worker2'), 'admin@class')).toContain(
      'kind load docker-image termlab/lab-server:0.1.0 --name class',
    );
    expect(kindClusterName('kind-termlab', null)).toBe('termlab');
    expect(kindClusterName('prod', 'termlab-control-plane')).toBe('termlab');
    expect(kindClusterName('prod', 'ip-10-0-0-1')).toBeNull();
  });
});
