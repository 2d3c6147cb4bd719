// The lab pod (manifests/lab-pod.yaml) as a Deployment's template for the node's measurements: restartable,
// a 30 s grace, and a preStop sleep so a deleted pod keeps serving while the proxies catch up.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { TermlabError } from '../../lib/errors.ts';
import { REPO } from './layout.ts';

export function labTemplate(labels: Record<string, string>, preStopMs: number): k8s.V1PodTemplateSpec {
  const pod = parseYaml(readFileSync(join(REPO, 'manifests', 'lab-pod.yaml'), 'utf8')) as k8s.V1Pod;
  const spec = pod.spec as k8s.V1PodSpec;
  spec.restartPolicy = 'Always';
  spec.terminationGracePeriodSeconds = 30;
  const [lab] = spec.containers;
  if (!lab) throw new TermlabError('LAB_INVALID', 'manifests/lab-pod.yaml: spec.containers is empty');
  lab.image = 'docker.io/termlab/lab-server:0.1.0';
  lab.lifecycle = { preStop: { exec: { command: ['/usr/local/bin/lab-hook', 'sleep', String(preStopMs)] } } };
  return { metadata: { labels }, spec };
}
