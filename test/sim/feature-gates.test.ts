// --feature-gates as the kubelet and the API server parse it, with each minor's gates (cluster/sim/feature-gates.ts),
// and the API server's rule for lifecycle.stopSignal (cluster/sim/pod-util.ts).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/errors.ts';
import { FeatureGates, parseFeatureGates } from '../../cluster/sim/feature-gates.ts';
import { dropContainerStopSignals } from '../../cluster/sim/pod-util.ts';
import { SIM_MINORS } from '../../cluster/sim/versions.ts';
import { runCli } from '../support/cli.ts';

describe('--feature-gates', () => {
  it.each([...SIM_MINORS.keys()])('%s: ContainerStopSignals is alpha and off unless set', (minor) => {
    expect(new FeatureGates(minor).enabled('ContainerStopSignals')).toBe(false);
    expect(parseFeatureGates('ContainerStopSignals=true', minor).enabled('ContainerStopSignals')).toBe(true);
    expect(new FeatureGates(minor).why('ContainerStopSignals')).toBe(`alpha in ${minor}, off by default`);
  });

  it("takes the kubelet's syntax: comma-separated Name=bool, Go's bools, spaces and empty items", () => {
    const gates = parseFeatureGates(' ContainerStopSignals = T ,,', '1.38');
    expect(gates.enabled('ContainerStopSignals')).toBe(true);
    expect(gates.describe()).toBe('ContainerStopSignals=true');
    expect(parseFeatureGates('ContainerStopSignals=0', '1.37').enabled('ContainerStopSignals')).toBe(false);
  });

  it.each([
    ['ContainerStopSignals', '1.37', '--feature-gates: missing bool value for ContainerStopSignals'],
    [
      'ContainerStopSignals=yes',
      '1.37',
      '--feature-gates: invalid value of ContainerStopSignals=yes, err: strconv.ParseBool: parsing "yes": invalid syntax',
    ],
    [
      'ContainerStopSignal=true',
      '1.38',
      "--feature-gates: unrecognized feature gate: ContainerStopSignal (the simulated cluster's 1.38 knows ContainerStopSignals, PLEGOnDemandRelist)",
    ],
    // Removed in 1.37: naming it is an error there, as in the real one.
    ['SidecarContainers=true', '1.37', 'unrecognized feature gate: SidecarContainers'],
    [
      'PLEGOnDemandRelist=false',
      '1.37',
      '--feature-gates: cannot set feature gate PLEGOnDemandRelist to false, feature is locked to true',
    ],
    [
      'SidecarContainers=false',
      '1.36',
      'cannot set feature gate SidecarContainers to false, feature is locked to true',
    ],
    ['PLEGOnDemandRelist=true', '1.35', 'unrecognized feature gate: PLEGOnDemandRelist'],
  ])('refuses %s on %s as the real one does', (text, minor, message) => {
    expect(() => parseFeatureGates(text, minor)).toThrow(message);
  });

  it('lets a beta gate be turned off where it is not locked (PLEGOnDemandRelist in 1.36), and a locked one be set to its value', () => {
    expect(parseFeatureGates('PLEGOnDemandRelist=false', '1.36').enabled('PLEGOnDemandRelist')).toBe(false);
    expect(parseFeatureGates('PLEGOnDemandRelist=true', '1.38').enabled('PLEGOnDemandRelist')).toBe(true);
  });

  it('termlab sim refuses an unknown gate before it starts: exit 2, naming the flag and the gates it knows', async () => {
    const r = await runCli(['sim', '--kube-version', '1.38', '--feature-gates', 'Nope=true']);
    expect(r.code).toBe(EXIT.badInput);
    expect(r.stderr).toContain(
      "--feature-gates: unrecognized feature gate: Nope (the simulated cluster's 1.38 knows ContainerStopSignals, PLEGOnDemandRelist)",
    );
    expect(r.stdout).not.toContain('listening');
  });

  it('termlab run --sim hands the flag to the built-in cluster, whose refusal ends the run before any pod: exit 2', async () => {
    const out = mkdtempSync(join(tmpdir(), 'termlab-gates-out-'));
    const r = await runCli(
      ['run', '--sim', '--only', 'no-prestop', '--out', out, '--feature-gates', 'PLEGOnDemandRelist=false'],
      { TERMLAB_STATE_DIR: mkdtempSync(join(tmpdir(), 'termlab-gates-state-')) },
    );
    expect(r.code).toBe(EXIT.badInput);
    expect(r.stderr).toContain(
      '--feature-gates: cannot set feature gate PLEGOnDemandRelist to false, feature is locked to true',
    );
  });

  it('termlab run takes --feature-gates only with --sim', async () => {
    const r = await runCli(['run', '--feature-gates', 'ContainerStopSignals=true']);
    expect(r.code).toBe(EXIT.badInput);
    expect(r.stderr).toContain('--feature-gates: only with --sim');
  });
});

describe("the API server's rule for lifecycle.stopSignal (dropContainerStopSignals)", () => {
  const spec = () => ({
    containers: [
      { name: 'a', image: 'i', lifecycle: { stopSignal: 'SIGQUIT' } },
      { name: 'b', image: 'i', lifecycle: { stopSignal: 'SIGQUIT', preStop: { sleep: { seconds: 1 } } } },
    ],
  });

  it('with the gate off drops it, and a lifecycle left empty with it', () => {
    const s = spec();
    expect(dropContainerStopSignals(s, undefined, new FeatureGates('1.38'))).toEqual(['a', 'b']);
    expect(s.containers[0]).toEqual({ name: 'a', image: 'i' });
    expect(s.containers[1]!.lifecycle).toEqual({ preStop: { sleep: { seconds: 1 } } });
  });

  it('keeps it on an update whose old object used it, gate off or not', () => {
    const s = spec();
    expect(dropContainerStopSignals(s, spec(), new FeatureGates('1.37'))).toEqual([]);
    expect(s.containers[0]!.lifecycle).toEqual({ stopSignal: 'SIGQUIT' });
  });

  it('keeps it with the gate on', () => {
    const s = spec();
    expect(dropContainerStopSignals(s, undefined, parseFeatureGates('ContainerStopSignals=true', '1.37'))).toEqual([]);
    expect(s).toEqual(spec());
  });
});
