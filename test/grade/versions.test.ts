// The model's per-minor table: an entry for every minor the simulator or the real node runs, and a
// clear account of what it does with a minor it does not know.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_KUBE_VERSION } from '../../dev/node/layout.ts';
import { SIM_MINORS } from '../../cluster/sim/versions.ts';
import { NEWEST_MINOR, predict, RULES_BY_MINOR, rulesFor } from '../../harness/grade/theory.ts';
import type { Scenario } from '../../harness/scenario/schema.ts';

const minorOf = (version: string) => /^v?(\d+\.\d+)/.exec(version)![1]!;
/** Every minor the real node has been recorded on (reports/fidelity/v1.N/). */
const recordedNodeMinors = readdirSync('reports/fidelity', { withFileTypes: true })
  .filter((d) => d.isDirectory() && /^v1\.\d+$/.test(d.name))
  .map((d) => d.name.slice(1));

describe('the model knows each minor it grades', () => {
  it.each([...SIM_MINORS.keys()])('the simulator emulates %s: the model has rules for it', (minor) => {
    expect(RULES_BY_MINOR.has(minor)).toBe(true);
  });

  it.each([minorOf(DEFAULT_KUBE_VERSION), ...recordedNodeMinors])(
    'the real node runs %s: the model has rules for it',
    (minor) => {
      expect(RULES_BY_MINOR.has(minor)).toBe(true);
    },
  );

  it('reads the minor from the server version, simulated or not', () => {
    expect(rulesFor('v1.35.4-termlab-sim')).toMatchObject({ minor: '1.35', note: null });
    expect(rulesFor('v1.36.1+k3s1')).toMatchObject({ minor: '1.36', note: null });
    expect(rulesFor('v1.37.2')).toMatchObject({ minor: '1.37', note: null });
    expect(rulesFor('v1.38.0-beta.0')).toMatchObject({ minor: '1.38', note: null });
  });

  it('1.38.0-beta.0 keeps the kill path and leaves ContainerStopSignals alpha and off, as every minor before', () => {
    const { source, ...rules138 } = RULES_BY_MINOR.get('1.38')!;
    const { source: _137, ...rules137 } = RULES_BY_MINOR.get('1.37')!;
    expect(source).toBe('k8s.io/kubernetes v1.38.0-beta.0');
    expect(rules138).toEqual(rules137);
    for (const rules of RULES_BY_MINOR.values())
      expect(rules.containerStopSignals).toEqual({ enabled: false, stage: 'alpha' });
  });

  it('grades a newer minor with the newest rules and says so', () => {
    const versioned = rulesFor('v1.99.0');
    expect(versioned.minor).toBe(NEWEST_MINOR);
    expect(versioned.rules).toBe(RULES_BY_MINOR.get(NEWEST_MINOR));
    expect(versioned.note).toMatch(/1\.99 is newer than the model knows .*graded with the 1\.\d+ rules/);
  });

  it('says so when the server version names no minor', () => {
    expect(rulesFor(null).note).toMatch(/names no Kubernetes 1\.x minor/);
  });

  it('predicts with the rules it is given', () => {
    const scenario: Scenario = {
      name: 's',
      mode: 'graceful',
      preStop: { kind: 'none' },
      terminationGracePeriodSeconds: 0,
      workMs: 10_000,
      deleteDelayMs: 1_000,
    };
    const rules = { ...RULES_BY_MINOR.get('1.37')!, minimumGracePeriodSeconds: 3 };
    expect(predict(scenario, null, rules).killAt).toBe(3);
    expect(predict(scenario).killAt).toBe(2);
  });
});
