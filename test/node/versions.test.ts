// The node's --kube flag: releases and pre-release tags (a minor's beta is served weeks before its .0),
// refused when malformed before anything is built.
import { describe, expect, it } from 'vitest';
import { DEFAULT_KUBE_VERSION } from '../../dev/node/layout.ts';
import { minorOf, requestedVersion, stagingVersion } from '../../dev/node/versions.ts';

describe('the node release flag (--kube, TERMLAB_NODE_KUBE)', () => {
  it('takes a release, with or without the v', () => {
    expect(requestedVersion('v1.36.3', {})).toBe('v1.36.3');
    expect(requestedVersion('1.35.4', {})).toBe('v1.35.4');
    expect(requestedVersion(undefined, {})).toBe(DEFAULT_KUBE_VERSION);
    expect(requestedVersion(undefined, { TERMLAB_NODE_KUBE: 'v1.36.3' })).toBe('v1.36.3');
  });

  it('takes pre-release tags as Kubernetes cuts them', () => {
    expect(requestedVersion('v1.38.0-beta.0', {})).toBe('v1.38.0-beta.0');
    expect(requestedVersion('1.38.0-alpha.2', {})).toBe('v1.38.0-alpha.2');
    expect(requestedVersion(undefined, { TERMLAB_NODE_KUBE: 'v1.38.0-rc.1' })).toBe('v1.38.0-rc.1');
  });

  it.each(['v1.38', 'v1.38.0-beta', 'v1.38.0-preview.1', 'v1.38.0+dirty', 'latest', 'v2.0.0'])(
    'refuses %s, naming the flag',
    (given) => {
      expect(() => requestedVersion(given, {})).toThrow(expect.objectContaining({ code: 'USAGE' }));
      expect(() => requestedVersion(given, {})).toThrow(/--kube: expected a release such as v1\.37\.2/);
    },
  );

  it('names the environment variable when the bad value came from it', () => {
    expect(() => requestedVersion(undefined, { TERMLAB_NODE_KUBE: 'v1.38.0-beta' })).toThrow(
      /--kube \(TERMLAB_NODE_KUBE\)/,
    );
  });

  it('reads the minor and the staging tag of a pre-release', () => {
    expect(minorOf('v1.38.0-beta.0')).toBe('1.38');
    expect(stagingVersion('v1.38.0-beta.0')).toBe('v0.38.0-beta.0');
    expect(stagingVersion('v1.37.2')).toBe('v0.37.2');
  });
});
