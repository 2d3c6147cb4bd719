// `termlab sim`: the simulated cluster in the foreground until Ctrl-C.
import { resolve } from 'node:path';
import type { CommandIO } from '../../lib/command.ts';
import { TermlabError, unwritable } from '../../lib/errors.ts';
import { proxySyncDelayMs } from '../../lib/proxy-delay.ts';
import { startSimCluster, writeKubeconfigFile } from './cluster.ts';

/**
 * The values the CLI parsed from `termlab sim`'s flags (harness/cli/commands/sim.ts, which shows them in its
 * help): written here by their names, so the simulator knows nothing of the harness.
 */
export interface SimValues {
  port?: string;
  'kubeconfig-out'?: string;
  'proxy-sync-delay-ms'?: string;
  'kube-version'?: string;
  'feature-gates'?: string;
  /** Install the edge (manifests/edge/traefik.yaml) and wait for it Ready. */
  edge?: boolean;
}

const DEFAULT_KUBECONFIG = '.termlab/sim/kubeconfig';

/** The kubectl lines that work against the simulated cluster, for a student to paste. */
function kubectlHints(kubeconfig: string): string {
  return [
    `  export KUBECONFIG=${kubeconfig}`,
    '  kubectl run poke --image=termlab/lab-server:0.1.0 --restart=Never --port=8080',
    '  kubectl get pods -w',
    "  kubectl port-forward pod/poke 18080:8080     # then: curl 'localhost:18080/work?ms=5000'",
    '  kubectl exec poke -- ls',
    '  kubectl exec -it poke -- sh',
    '  kubectl logs -f poke',
    '  kubectl delete pod poke --grace-period=5',
    "  kubectl get deploy,rs,svc,endpointslices      # a rollout scenario's Deployment and Service (curl 127.0.0.1:<nodePort>)",
  ].join('\n');
}

// The command as the CLI shows and parses it (its flags and their help) is harness/cli/commands/sim.ts.
export const simCommand = {
  async run(values: SimValues, _positionals: string[], io: CommandIO): Promise<number> {
    const port = values.port === undefined ? 0 : Number(values.port);
    if (!/^\d+$/.test(values.port ?? '0') || port > 65535)
      throw new TermlabError('USAGE', `--port: expected a whole number 0-65535, got ${JSON.stringify(values.port)}`, {
        flag: '--port',
      });
    const syncDelayMs = proxySyncDelayMs(values['proxy-sync-delay-ms']);
    // The minor to emulate (versions.ts; 1.37 by default): its /version, event messages and PLEG timing.
    // --feature-gates: the API server's and the kubelet's, in one (feature-gates.ts).
    const sim = await startSimCluster({
      port,
      proxy: { syncDelayMs },
      kubeVersion: values['kube-version'],
      featureGates: values['feature-gates'],
      edge: values.edge === true,
    });
    const out = resolve(values['kubeconfig-out'] ?? DEFAULT_KUBECONFIG);
    try {
      // Our own folder is tightened to 0700; a folder the user named is left as it is.
      await writeKubeconfigFile(out, sim.kubeconfig, values['kubeconfig-out'] === undefined);
    } catch (error) {
      await sim.stop();
      throw unwritable('OUTPUT_UNWRITABLE', 'the kubeconfig', out, error);
    }
    io.out(
      `simulated cluster (Kubernetes ${sim.kubeVersion}${sim.featureGates.describe() ? `, --feature-gates ${sim.featureGates.describe()}` : ''}) listening on ${sim.server}; it admits only the token in its kubeconfig\n` +
        `kubeconfig: ${out} (context ${sim.context}, readable by you only)\n${kubectlHints(out)}\n` +
        (sim.edge
          ? `the edge (Traefik v3.7.13, simulated): Gateway ${sim.edge.namespace}/edge, IngressClass traefik, on 127.0.0.1:${sim.edge.nodePort}\n` +
            "  curl -H 'Host: web.example' 127.0.0.1:" +
            `${sim.edge.nodePort}/   # once an HTTPRoute or Ingress routes web.example\n`
          : '') +
        'Ctrl-C to stop.\n',
    );
    await new Promise<void>((done) => {
      if (io.signal.aborted) done();
      io.signal.addEventListener('abort', () => done(), { once: true });
    });
    await sim.stop();
    io.out('simulated cluster stopped\n');
    return 0;
  },
};
