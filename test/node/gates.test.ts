// cluster:up --feature-gates: parsed strictly, and given to every component the same way.
import { describe, expect, it } from 'vitest';
import { kubeletConfig } from '../../dev/node/configs.ts';
import { describeGates, featureGatesArgs, parseFeatureGates } from '../../dev/node/gates.ts';

describe('the node feature gates (--feature-gates)', () => {
  it('reads Name=bool pairs', () => {
    expect(parseFeatureGates('ContainerStopSignals=true')).toEqual({ ContainerStopSignals: true });
    expect(parseFeatureGates('ContainerStopSignals=true, PodReadyToStartContainersCondition=false')).toEqual({
      ContainerStopSignals: true,
      PodReadyToStartContainersCondition: false,
    });
    expect(parseFeatureGates(undefined)).toEqual({});
    expect(parseFeatureGates('')).toEqual({});
  });

  it.each([
    'ContainerStopSignals',
    'ContainerStopSignals=yes',
    'containerStopSignals=true',
    '=true',
    'A=true,,B=false',
  ])('refuses %s, naming the flag and the pair', (given) => {
    expect(() => parseFeatureGates(given)).toThrow(expect.objectContaining({ code: 'USAGE' }));
    expect(() => parseFeatureGates(given)).toThrow(/--feature-gates: expected Name=true or Name=false/);
  });

  it('refuses a gate given twice', () => {
    expect(() => parseFeatureGates('A=true,A=false')).toThrow(/--feature-gates: A is given twice/);
  });

  it('gives the control plane one flag, and nothing when no gate is set', () => {
    expect(featureGatesArgs({ ContainerStopSignals: true, B: false })).toEqual([
      '--feature-gates=ContainerStopSignals=true,B=false',
    ]);
    expect(featureGatesArgs({})).toEqual([]);
    expect(describeGates({})).toBe('none');
    expect(describeGates({ ContainerStopSignals: true })).toBe('ContainerStopSignals=true');
  });

  it("puts them in the kubelet's configuration file, and no featureGates key without any", () => {
    expect(kubeletConfig(true, { ContainerStopSignals: true }).featureGates).toEqual({ ContainerStopSignals: true });
    expect(kubeletConfig(true)).not.toHaveProperty('featureGates');
    expect(kubeletConfig(true).failCgroupV1).toBe(false);
    expect(kubeletConfig(false)).not.toHaveProperty('failCgroupV1');
  });
});
